/*
 * code_tools.c - the pieces of Playwright code that the testing, vision and
 * file tools show and codegen.c has no word for, as Playwright MCP writes
 * them:
 *
 *   await expect(page.getByRole('button', { name: 'Submit' })).toBeVisible();
 *   await page.mouse.click(100, 100, {
 *     button: 'right'
 *   });
 *
 * Locators are codegen.h's; this file wraps them and formats options
 * objects the way Playwright's formatObject does (keys sorted, one a line).
 */
#include "actions/actions-private.h"
#include "actions/codegen.h"

#include <stdlib.h>
#include <string.h>

int act_code_expect(struct gb_buf *b, const struct act_code_target *t, const char *locator,
                    const char *matcher)
{
	size_t mark = b->len;
	int rc = gb_buf_append(b, "await expect(", 13);

	if (rc == 0 && locator)
		rc = gb_buf_appendf(b, "%s", locator);
	else if (rc == 0)
		rc = act_code_locator(b, t);
	if (rc == 0)
		rc = gb_buf_appendf(b, ")%s%s;\n", matcher[0] == '.' ? "" : ".", matcher);
	if (rc < 0) {
		b->len = mark; /* nothing half-written */
		if (b->data)
			b->data[mark] = '\0';
	}
	return rc < 0 ? -1 : 0;
}

/* Appends one JSON value as JavaScript: a string quoted, a number as
 * JavaScript prints it, true/false. */
static int js_value(struct gb_buf *b, json_t *v)
{
	if (json_is_string(v))
		return act_code_quote(b, json_string_value(v));
	if (json_is_integer(v))
		return gb_buf_appendf(b, "%lld", (long long)json_integer_value(v));
	if (json_is_real(v))
		return gb_buf_appendf(b, "%.15g", json_real_value(v));
	return gb_buf_appendf(b, "%s", json_is_true(v) ? "true" : "false");
}

int act_code_options(struct gb_buf *b, json_t *args, const char *const *keys)
{
	int rc = 0, n = 0;
	size_t i;

	for (i = 0; keys[i] && rc == 0; i++) {
		json_t *v = json_object_get(args, keys[i]);

		if (!v || json_is_null(v))
			continue;
		rc = gb_buf_appendf(b, "%s  %s: ", n++ ? ",\n" : "{\n", keys[i]);
		if (rc == 0)
			rc = js_value(b, v);
	}
	if (rc == 0 && n)
		rc = gb_buf_appendf(b, "\n}");
	return rc < 0 ? -1 : n;
}

int act_code_number(struct gb_buf *b, json_t *v)
{
	if (!json_is_number(v))
		return gb_buf_appendf(b, "0");
	return js_value(b, v);
}
