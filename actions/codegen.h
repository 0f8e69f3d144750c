/*
 * codegen.h - the Playwright code an action ran, as Playwright MCP shows it
 * under "### Ran Playwright code" and as a QA team pastes it into a spec:
 *
 *   await page.goto('http://shop.test/');
 *   await page.getByRole('button', { name: 'Submit' }).click();
 *   await page.getByTestId('email').fill(process.env['SHOP_PASSWORD']);
 *
 * The locator is the one Playwright's generator would pick for the element:
 * its test id (attribute configurable, default data-testid), else role +
 * name when they name it alone, else its text when that names it alone,
 * else a CSS selector that finds only it. A selector the caller gave is
 * used as it is (page.locator('...')). Private to actions/.
 */
#ifndef GB_ACT_CODEGEN_H
#define GB_ACT_CODEGEN_H

#include "common/util.h"

#include <stddef.h>

/* What is known of the element an action acted on. Every field borrowed;
 * NULL (or 0) when unknown. */
/* The language the code is shown in (Playwright MCP's --codegen). Lines
 * with no counterpart in the library API (keyboard, scripts, waits) stay
 * JavaScript, as Playwright MCP writes them. */
enum act_code_lang {
	ACT_CODE_TYPESCRIPT = 0,
	ACT_CODE_PYTHON,
	ACT_CODE_JAVA,
	ACT_CODE_CSHARP,
};

/* (act_code_lang_parse, actions.h, gives these from their names.) */

struct act_code_target {
	int lang;             /* enum act_code_lang */
	const char *selector; /* the caller's CSS selector (target was not a ref) */
	const char *role;     /* ARIA role as the snapshot shows it */
	const char *name;     /* accessible name as the snapshot shows it */
	int role_unique;      /* role (+ name when set) finds only this element */
	const char *test_id;  /* value of the test-id attribute */
	const char *text;     /* its text, when getByText finds only it */
	const char *css;      /* a CSS selector that finds only it */
	const char *frame;    /* CSS selector of the iframe holding it, when in one */
	int frame_first;      /* that selector finds more than one iframe: .first() */
};

/* The page-side function (for Runtime.callFunctionOn on the element, with
 * two arguments: the test-id attribute name, and whether to look for a
 * unique text) that returns
 * {testId, text, css, frame, frameFirst} for struct act_code_target:
 * text only when exactly one element shows it, css a selector that finds
 * only the element, frame the iframe that holds it in its parent. */
extern const char act_code_probe_js[];

/* Appends s as a JavaScript single-quoted string literal, escaped as
 * Playwright's escapeWithQuotes does. Returns 0 or -1 (buffer full). */
int act_code_quote(struct gb_buf *b, const char *s);

/* Appends s as a string literal of lang (enum act_code_lang): JavaScript's
 * single-quoted one, else a double-quoted one. Returns 0 or -1. */
int act_code_string(struct gb_buf *b, int lang, const char *s);

/* Appends the locator expression for t ("page.getByRole(...)"). Returns 0,
 * or -1 when nothing identifies the element (no selector, role or CSS). */
int act_code_locator(struct gb_buf *b, const struct act_code_target *t);

/* Appends "await <locator>.<method>(<args>);\n" in JavaScript whatever
 * t->lang says; args is raw JavaScript (already quoted), "" for none.
 * Returns 0 or -1. */
int act_code_call(struct gb_buf *b, const struct act_code_target *t, const char *method,
                  const char *args);

/* What an element action passes (act_code_action). Borrowed. */
struct act_code_args {
	const char *text;        /* fill, pressSequentially, press: the text or key */
	const char *secret;      /* fill: the secret's name (the text is then not used) */
	const char *const *list; /* selectOption: the values; click: the modifiers */
	size_t n_list;
	const char *button; /* click: "right", "middle"; NULL = left */
};

/* Appends one element action in t->lang: action is "click", "dblclick",
 * "fill", "pressSequentially", "press", "selectOption" or "hover".
 * Returns 0 or -1. */
int act_code_action(struct gb_buf *b, const struct act_code_target *t, const char *action,
                    const struct act_code_args *a);

/* Appends the navigation to url in lang ("await page.goto('<url>');").
 * Returns 0 or -1. */
int act_code_goto(struct gb_buf *b, int lang, const char *url);

/* Appends the value typed in JavaScript: process.env['NAME'] for a secret
 * (never its value), else text quoted. Returns 0 or -1. */
int act_code_value(struct gb_buf *b, const char *text, const char *secret_name);

/* Appends one line as it is, with a newline. Returns 0 or -1. */
int act_code_line(struct gb_buf *b, const char *line);

#endif
