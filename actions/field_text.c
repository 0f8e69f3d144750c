/*
 * field_text.c - text into one field the way browser_type and
 * browser_fill_form put it there: after the actionability checks, typed
 * (or, for the inputs that take a value in their own format, filled as a
 * user's choice sets them), then the value re-read from the page.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "sessions/sessions.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the field holds now, read in the isolated world (a page cannot
 * fake it with a getter): the value of a form control, the rendered text
 * of a contenteditable element. */
static const char value_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " if ('value' in el && el.tagName !== 'BUTTON' && !el.isContentEditable) return "
    "String(el.value);"
    " return el.isContentEditable ? (el.innerText || '') : (el.textContent || ''); }";

/* Fill semantics for the inputs that take no typed text (date, time,
 * colour, range, ...): the value set as a user's choice sets it, then
 * input and change, as Playwright's fill does. Returns what it holds. */
static const char fill_js[] =
    "function(v) { this.focus(); this.value = v;"
    " this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));"
    " this.dispatchEvent(new Event('change', { bubbles: true }));"
    " return String(this.value); }";

/* The value formats of the inputs that take a value in their own format:
 * D is a digit, H a hex digit, anything else itself; each type lists the
 * forms it accepts, then what the error tells the agent. */
struct input_format {
	const char *type;
	const char *forms[4];
	const char *says;
};

static const struct input_format input_formats[] = {
	{ "date", { "DDDD-DD-DD" }, "date inputs take YYYY-MM-DD, such as 2024-05-31" },
	{ "time",
	  { "DD:DD", "DD:DD:DD", "DD:DD:DD.DDD" },
	  "time inputs take HH:MM (24-hour) or HH:MM:SS, such as 14:30" },
	{ "datetime-local",
	  { "DDDD-DD-DDTDD:DD", "DDDD-DD-DDTDD:DD:DD", "DDDD-DD-DDTDD:DD:DD.DDD" },
	  "datetime-local inputs take YYYY-MM-DDTHH:MM, such as 2024-05-31T14:30" },
	{ "month", { "DDDD-DD" }, "month inputs take YYYY-MM, such as 2024-05" },
	{ "week", { "DDDD-WDD" }, "week inputs take YYYY-Www, such as 2024-W22" },
	{ "color", { "#HHHHHH" }, "color inputs take #rrggbb, such as #1a2b3c" },
};

/* 1 when v has the form (see input_format). */
static int matches_form(const char *v, const char *form)
{
	for (; *form; form++, v++) {
		if (*form == 'D'   ? !isdigit((unsigned char)*v)
		    : *form == 'H' ? !isxdigit((unsigned char)*v)
		                   : *v != *form)
			return 0;
	}
	return *v == '\0';
}

/* 1 when v is one finite decimal number, as number and range inputs take. */
static int is_number(const char *v)
{
	char *end = NULL;
	double d;

	if (!*v || isspace((unsigned char)*v))
		return 0;
	d = strtod(v, &end);
	return end && *end == '\0' && isfinite(d) && strpbrk(v, "xXpP") == NULL;
}

/*
 * For an input of type that takes a value in its own format: 0 when text
 * fits (or the type takes any text), with *fill set when it must be filled
 * rather than typed; -1 with what the input takes in says (len bytes).
 */
UNITTEST int act_input_value_check(const char *type, const char *text, int *fill, char *says,
                                   size_t len)
{
	size_t i, k;

	*fill = 0;
	if (!strcmp(type, "number") || !strcmp(type, "range")) {
		*fill = !strcmp(type, "range");
		if (!text[0] || is_number(text))
			return 0;
		snprintf(says, len, "%s inputs take a number, such as 42 or -3.5", type);
		return -1;
	}
	for (i = 0; i < sizeof(input_formats) / sizeof(input_formats[0]); i++) {
		const struct input_format *f = &input_formats[i];

		if (strcmp(type, f->type) != 0)
			continue;
		*fill = 1;
		if (!text[0])
			return 0;
		for (k = 0; k < 4 && f->forms[k]; k++)
			if (matches_form(text, f->forms[k]))
				return 0;
		snprintf(says, len, "%s", f->says);
		return -1;
	}
	return 0;
}

/* act_input_value_check, failing the action with "bad_value_format"
 * before anything was changed. */
static int check_input_format(struct act_ctx *ctx, const char *type, const char *text, int *fill)
{
	char says[160];

	if (act_input_value_check(type, text, fill, says, sizeof(says)) == 0)
		return 0;
	return act_fail(ctx, "bad_value_format",
	                "%s; \"%.100s\" is not in that form: %s is unchanged", says, text,
	                ctx->target.description);
}

/* Collapses whitespace runs to one space and trims, in place. */
static void squeeze(char *s)
{
	char *r = s, *w = s;
	int space = 0;

	for (; *r; r++) {
		if (isspace((unsigned char)*r)) {
			space = w > s;
			continue;
		}
		if (space)
			*w++ = ' ';
		space = 0;
		*w++ = *r;
	}
	*w = '\0';
}

/*
 * Re-reads the target's value into out.value and compares it with what
 * was asked (typed; NULL: nothing to compare): a value that did not stick
 * fails the action with "value_not_set", expected and observed in the
 * result (for a password field, neither). Text of a contenteditable
 * element is compared with whitespace collapsed. Password values never
 * leave the page.
 */
/*
 * The canonical form of a value of an input of type, in place, for
 * comparing what was asked with what the input holds: colours in lower
 * case, and a time without a zero fraction or zero seconds, as the
 * browser writes them back ("14:30:00.000" holds "14:30").
 */
UNITTEST void act_input_value_canonical(const char *type, char *v)
{
	size_t n = strlen(v);
	char *dot;

	if (!strcmp(type, "color")) {
		for (; *v; v++)
			*v = (char)tolower((unsigned char)*v);
		return;
	}
	if (strcmp(type, "time") != 0 && strcmp(type, "datetime-local") != 0)
		return;
	dot = strrchr(v, '.');
	if (dot && strspn(dot + 1, "0") == strlen(dot + 1)) {
		*dot = '\0';
		n = (size_t)(dot - v);
	}
	if (n >= 6 && !strcmp(v + n - 3, ":00") && v[n - 6] == ':')
		v[n - 3] = '\0';
}

/* The verdict on value (value_js's answer, taken) as reread_value gives it. */
static int judge_value(struct act_ctx *ctx, json_t *value, const char *typed, int editable,
                       const char *input_type)
{
	char *want = NULL, *got = NULL;
	int same = 1;
	int rc = 0;

	if (!json_is_string(value)) {
		rc = act_fail(ctx, "value_not_set",
		              "%s could not be re-read after typing: take a snapshot and check it",
		              ctx->target.description);
		goto out;
	}
	if (typed) {
		want = strdup(typed);
		got = strdup(json_string_value(value));
		if (!want || !got) {
			rc = act_fail(ctx, "oom", "out of memory");
			goto out;
		}
		if (editable) {
			squeeze(want);
			squeeze(got);
		}
		act_input_value_canonical(input_type, want);
		act_input_value_canonical(input_type, got);
		same = !strcmp(want, got);
	}
	if (ctx->sensitive) {
		json_object_set_new(ctx->out, "value", json_string("••••"));
		if (!same) {
			rc = act_fail(
			    ctx, "value_not_set",
			    "the value of %s is not what was typed (not shown: password "
			    "field): the page changed or refused it; check the field's rules",
			    ctx->target.description);
			goto out;
		}
		gb_buf_appendf(&ctx->text, "\n- value re-read: %s",
		               typed ? "matches what was typed (hidden: password field)"
		                     : "hidden (password field)");
		goto out;
	}
	json_object_set(ctx->out, "value", value);
	if (!same) {
		json_object_set_new(ctx->out, "expected", json_string(typed));
		json_object_set(ctx->out, "observed", value);
		rc =
		    act_fail(ctx, "value_not_set",
		             "%s holds \"%.300s\", not \"%.300s\" as asked: the field did not take "
		             "the value (a format, a limit such as maxlength, min or max, or the "
		             "page's own handling); check the field and try a value it accepts",
		             ctx->target.description, json_string_value(value), typed);
		goto out;
	}
	gb_buf_appendf(&ctx->text, "\n- value re-read: \"%.300s\"", json_string_value(value));
out:
	free(want);
	free(got);
	json_decref(value);
	return rc;
}

static int reread_value(struct act_ctx *ctx, const char *typed, int editable,
                        const char *input_type)
{
	json_t *value = NULL;

	if (act_call_in_isolated_world(ctx, value_js, &value, "re-reading the field") < 0)
		return -1;
	return judge_value(ctx, value, typed, editable, input_type);
}

void act_field_reread_forget(struct act_ctx *ctx)
{
	if (ctx->reread_call)
		cdp_forget(ctx->cdp, ctx->reread_call);
	ctx->reread_call = 0;
	free(ctx->reread_typed);
	ctx->reread_typed = NULL;
}

/* The after_settle verdict of the read-back reread_ask asked for. */
static int reread_take(struct act_ctx *ctx)
{
	uint64_t id = ctx->reread_call;
	json_t *value = NULL;
	int rc;

	ctx->reread_call = 0;
	rc = act_isolated_take(ctx, id, &value, "re-reading the field");
	if (rc == 0)
		rc = judge_value(ctx, value, ctx->reread_typed, ctx->reread_editable,
		                 ctx->reread_type);
	act_field_reread_forget(ctx);
	return rc;
}

/* reread_value, asked for now and judged once the page settled. */
static int reread_ask(struct act_ctx *ctx, const char *typed, int editable, const char *input_type)
{
	ctx->reread_call = act_isolated_ask(ctx, value_js, "re-reading the field");
	if (!ctx->reread_call)
		return -1;
	ctx->reread_typed = typed ? strdup(typed) : NULL;
	if (typed && !ctx->reread_typed) {
		act_field_reread_forget(ctx);
		return act_fail(ctx, "oom", "out of memory");
	}
	ctx->reread_editable = editable;
	snprintf(ctx->reread_type, sizeof(ctx->reread_type), "%s", input_type);
	ctx->after_settle = reread_take;
	return 0;
}

int act_field_fill_text(struct act_ctx *ctx, const char *text, int slowly, int reread_later)
{
	json_t *info = NULL;
	double x, y;
	int fill = 0;
	int rc;

	rc = act_actionable(ctx, "type", &x, &y, &info);
	if (rc < 0)
		goto out;
	ctx->sensitive = json_is_true(json_object_get(info, "password")) || ctx->call->secret_text;
	if (ctx->sensitive)
		act_secrets_note_typed(ctx->as, text); /* scrubbed from all that leaves later */
	if (!strcmp(gb_or(json_string_value(json_object_get(info, "tag")), ""), "input") &&
	    check_input_format(ctx, gb_or(json_string_value(json_object_get(info, "type")), ""),
	                       text ? text : "", &fill) < 0) {
		rc = -1;
		goto out;
	}
	if (fill) {
		json_t *held = NULL;

		/* the browser lowers a colour's hex digits itself */
		rc = act_call_isolated_args(ctx, fill_js,
		                            json_pack("[{s:s}]", "value", text ? text : ""), &held,
		                            "filling the field");
		json_decref(held);
	} else if (text && text[0]) {
		rc = act_type_text(ctx, text, slowly);
	} else {
		rc = act_press_key(ctx, "Backspace", 0);
	}
	if (rc < 0)
		goto out;
	gb_buf_appendf(&ctx->text, "%s %s into %s", fill ? "Filled" : "Typed",
	               ctx->sensitive ? "[redacted]" : "the text", ctx->target.description);
	/* typed slowly, a newline is the Enter key, which a one-line field does not keep */
	rc = (reread_later ? reread_ask : reread_value)(
	    ctx,
	    slowly && text && strchr(text, '\n') ? NULL
	    : text                               ? text
	                                         : "",
	    json_is_true(json_object_get(info, "editable")),
	    fill ? gb_or(json_string_value(json_object_get(info, "type")), "") : "");
out:
	json_decref(info);
	return rc;
}
