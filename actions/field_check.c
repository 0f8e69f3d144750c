/*
 * field_check.c - setting a checkbox or a radio button to checked or not
 * the way a person does: a real click on it (after the actionability
 * checks, its landing read back), only when it is not already in the
 * state asked for; then the state re-read from the page.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"

#include <stdio.h>
#include <string.h>

/* What the control is and whether it is checked, read in the isolated
 * world: {kind: "checkbox" | "radio" | "other", checked}. An ARIA
 * checkbox, radio or switch (role, aria-checked) counts too. */
static const char checked_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " const tag = el.tagName.toLowerCase(); const type = (el.type || '').toLowerCase();"
    " if (tag === 'input' && (type === 'checkbox' || type === 'radio')) return { kind: type, "
    "checked: el.checked };"
    " const role = el.getAttribute('role') || '';"
    " if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role))"
    "  return { kind: role === 'radio' || role === 'menuitemradio' ? 'radio' : 'checkbox', "
    "checked: el.getAttribute('aria-checked') === 'true' };"
    " return { kind: 'other', checked: false }; }";

/* Reads the target's state: 0 with *kind ("checkbox", "radio", "other",
 * kindlen bytes) and *checked, or -1 with the action failed. */
static int read_checked(struct act_ctx *ctx, char *kind, size_t kindlen, int *checked)
{
	json_t *v = NULL;
	int rc = act_call_in_isolated_world(ctx, checked_js, &v, "reading whether it is checked");

	if (rc == 0) {
		snprintf(kind, kindlen, "%s",
		         gb_or(json_string_value(json_object_get(v, "kind")), ""));
		*checked = json_is_true(json_object_get(v, "checked"));
	}
	json_decref(v);
	return rc;
}

int act_field_set_checked(struct act_ctx *ctx, int want, const char *want_kind)
{
	json_t *info = NULL;
	char kind[16];
	double x, y;
	int checked;
	int rc;

	rc = read_checked(ctx, kind, sizeof(kind), &checked);
	if (rc < 0)
		goto out;
	if (strcmp(kind, want_kind) != 0) {
		rc = act_fail(ctx, "wrong_field_type", "%s is %s, not a %s: give its type as %s",
		              ctx->target.description,
		              !strcmp(kind, "other")   ? "neither a checkbox nor a radio button"
		              : !strcmp(kind, "radio") ? "a radio button"
		                                       : "a checkbox",
		              want_kind,
		              !strcmp(kind, "other") ? "textbox, combobox or slider" : kind);
		goto out;
	}
	if (checked == want) {
		json_object_set_new(ctx->out, "value", json_string(want ? "true" : "false"));
		gb_buf_appendf(&ctx->text, "\n- %s was already %s", ctx->target.description,
		               want ? "checked" : "unchecked");
		goto out;
	}
	if (!want && !strcmp(kind, "radio")) {
		rc =
		    act_fail(ctx, "value_not_set",
		             "%s is checked and a radio button cannot be unchecked by clicking it: "
		             "check another radio button of its group instead",
		             ctx->target.description);
		goto out;
	}
	rc = act_actionable(ctx, "click", &x, &y, &info);
	if (rc == 0)
		rc = act_click_at(ctx, x, y, "left", 1, 0, 0);
	if (rc < 0)
		goto out;
	/* a change handler that submits the form takes the document away: the
	 * click landed on the control (read back), its state cannot be */
	cdp_service(ctx->cdp, 0, NULL, NULL);
	if (ctx->rec.navigating || ctx->rec.navigated) {
		json_object_set_new(ctx->out, "value", json_string("not re-read"));
		gb_buf_appendf(&ctx->text,
		               "\n- clicked %s; the page navigated away, so its state was not "
		               "re-read",
		               ctx->target.description);
		goto out;
	}
	/* re-read: a page may refuse the change in its handler */
	rc = read_checked(ctx, kind, sizeof(kind), &checked);
	if (rc < 0)
		goto out;
	json_object_set_new(ctx->out, "value", json_string(checked ? "true" : "false"));
	if (checked != want) {
		json_object_set_new(ctx->out, "expected", json_string(want ? "true" : "false"));
		json_object_set_new(ctx->out, "observed", json_string(checked ? "true" : "false"));
		rc = act_fail(ctx, "value_not_set",
		              "%s was clicked but is still %s: the page put it back; check what it "
		              "allows",
		              ctx->target.description, checked ? "checked" : "unchecked");
		goto out;
	}
	gb_buf_appendf(&ctx->text, "\n- %s %s (re-read)", want ? "checked" : "unchecked",
	               ctx->target.description);
out:
	json_decref(info);
	return rc;
}
