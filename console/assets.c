/*
 * assets.c - the console's static files, compiled in (console.h):
 * console.js, console.css and favicon.svg, embedded from console/assets/ at build time
 * (#embed is not in C11, so meson turns each file into a C string with
 * xxd -i's layout; see console/meson.build).
 */
#include "console/console.h"

#include <string.h>

#include "console/assets_js.h"
#include "console/assets_css.h"
#include "console/assets_icon.h"

/* See console.h. */
const char *console_asset(const char *name, size_t *len, const char **ctype)
{
	if (!strcmp(name, "console.js")) {
		*len = (size_t)console_js_len;
		*ctype = "text/javascript; charset=utf-8";
		return (const char *)console_js;
	}
	if (!strcmp(name, "console.css")) {
		*len = (size_t)console_css_len;
		*ctype = "text/css; charset=utf-8";
		return (const char *)console_css;
	}
	if (!strcmp(name, "favicon.svg")) {
		*len = (size_t)console_icon_len;
		*ctype = "image/svg+xml";
		return (const char *)console_icon;
	}
	return NULL;
}
