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

/* The matcher names of an assertion in each language (enum
 * act_code_lang order), and the negation's prefix. */
static const char *const matchers[][4] = {
	[ACT_ASSERT_VISIBLE] = { "toBeVisible", "to_be_visible", "isVisible", "ToBeVisibleAsync" },
	[ACT_ASSERT_VALUE] = { "toHaveValue", "to_have_value", "hasValue", "ToHaveValueAsync" },
	[ACT_ASSERT_CHECKED] = { "toBeChecked", "to_be_checked", "isChecked", "ToBeCheckedAsync" },
	[ACT_ASSERT_NOT_CHECKED] = { "toBeChecked", "not_to_be_checked", "isChecked",
	                             "ToBeCheckedAsync" },
};
static const char *const empty_matchers[4] = { "toBeEmpty", "to_be_empty", "isEmpty",
	                                       "ToBeEmptyAsync" };
static const char *const not_prefix[4] = { ".not", "", ".not()", ".Not" };
static const char *const expect_open[4] = { "await expect(", "expect(", "assertThat(",
	                                    "await Expect(" };

int act_code_expect(struct gb_buf *b, const struct act_code_target *t, const char *locator,
                    enum act_code_assertion what, const char *value)
{
	int lang = t ? t->lang : ACT_CODE_TYPESCRIPT;
	size_t mark = b->len;
	const char *matcher;
	int rc;

	if (lang < ACT_CODE_TYPESCRIPT || lang > ACT_CODE_CSHARP)
		lang = ACT_CODE_TYPESCRIPT;
	matcher = what == ACT_ASSERT_VALUE && !(value && *value) ? empty_matchers[lang]
	                                                         : matchers[what][lang];
	rc = gb_buf_appendf(b, "%s", expect_open[lang]);
	if (rc == 0 && locator)
		rc = gb_buf_appendf(b, "%s", locator);
	else if (rc == 0)
		rc = act_code_locator(b, t);
	if (rc == 0)
		rc = gb_buf_appendf(
		    b, ")%s.%s(", what == ACT_ASSERT_NOT_CHECKED ? not_prefix[lang] : "", matcher);
	if (rc == 0 && what == ACT_ASSERT_VALUE && value && *value)
		rc = act_code_string(b, lang, value);
	if (rc == 0)
		rc = gb_buf_appendf(b, ")%s\n", lang == ACT_CODE_PYTHON ? "" : ";");
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
