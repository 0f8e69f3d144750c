/*
 * html.c - the console's HTML helpers (console.h): escaping, and the
 * shell every page shares. Pages carry no inline script or style (the
 * Content-Security-Policy forbids both): behaviour is console.js, looks
 * are console.css, and what the script needs is in data- attributes.
 */
#include "console/console.h"

#include <stdio.h>
#include <string.h>

/* See console.h. */
void console_html_text(struct gb_buf *b, const char *s)
{
	const char *p;

	for (p = s ? s : ""; *p; p++) {
		switch (*p) {
		case '&':
			gb_buf_append(b, "&amp;", 5);
			break;
		case '<':
			gb_buf_append(b, "&lt;", 4);
			break;
		case '>':
			gb_buf_append(b, "&gt;", 4);
			break;
		case '"':
			gb_buf_append(b, "&quot;", 6);
			break;
		case '\'':
			gb_buf_append(b, "&#39;", 5);
			break;
		default:
			gb_buf_append(b, p, 1);
		}
	}
}

/* See console.h. */
void console_url_part(struct gb_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	char esc[3];

	for (p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
			gb_buf_append(b, (const char *)p, 1);
		} else {
			esc[0] = '%';
			esc[1] = hex[*p >> 4];
			esc[2] = hex[*p & 15];
			gb_buf_append(b, esc, 3);
		}
	}
}

/* See console.h. */
void console_html_begin(struct gb_buf *b, const char *title, const struct console_login *login)
{
	gb_buf_appendf(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	                  "<meta name=\"viewport\" content=\"width=device-width\">"
	                  "<link rel=\"icon\" href=\"/console/assets/favicon.svg\">"
	                  "<link rel=\"stylesheet\" href=\"/console/assets/console.css\">"
	                  "<script src=\"/console/assets/console.js\" defer></script><title>");
	console_html_text(b, title);
	gb_buf_appendf(b, " - glassbox console</title></head>");
	if (!login) {
		gb_buf_appendf(b, "<body><main>");
		return;
	}
	gb_buf_appendf(b,
	               "<body data-csrf=\"%s\"><header><span class=\"brand\">glassbox</span>"
	               "<nav><a href=\"/console/sessions\">Sessions</a>"
	               "<a href=\"/console/approvals\">Approvals</a>"
	               "<a href=\"/console/trail\">Trail</a></nav><span class=\"who\">",
	               login->csrf);
	console_html_text(b, login->cred.name);
	gb_buf_appendf(b, " (%s, ", login->cred.approver ? "approver" : "viewer");
	console_html_text(b, login->cred.tenant[0] ? login->cred.tenant : "every tenant");
	gb_buf_appendf(b,
	               ")</span><form method=\"post\" action=\"/console/logout\">"
	               "<input type=\"hidden\" name=\"csrf\" value=\"%s\">"
	               "<button type=\"submit\">Log out</button></form></header><main>",
	               login->csrf);
}

/* See console.h. */
void console_html_end(struct gb_buf *b)
{
	gb_buf_appendf(b, "</main></body></html>\n");
}
