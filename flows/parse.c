/*
 * parse.c - a flow file to a struct flow: every field type-checked (the
 * file is input from outside), variables substituted, each step turned
 * into the arguments of the tool it runs and checked against that tool's
 * parameter table (actions/) and its expect against verify/, so a flow
 * that parses cannot fail later for its shape. Errors name the file, the
 * step and the field, and say what to write instead.
 */
#include "flows/flows-private.h"

#include "common/util.h"
#include "verify/verify.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The state of one parse: where we are, for messages. */
struct parse {
	struct flow *f;
	const struct flow_vars *vars;
	json_t *defaults;     /* the flow's "vars" (borrowed) */
	json_t *secret_names; /* the flow's "secrets" (borrowed) */
	size_t step;          /* 1-based; 0: the flow's own fields */
	const char *kind;     /* the step's kind, or NULL */
	const char *field;    /* the field being read */
	char *err;
	size_t errlen;
};

/* Fails the parse with a message prefixed by file, step and field. */
static int perr(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parse *p, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->step && p->field)
		snprintf(p->err, p->errlen, "%s: step %zu (%s): field \"%s\": %s", p->f->path,
		         p->step, gb_or(p->kind, "?"), p->field, msg);
	else if (p->step)
		snprintf(p->err, p->errlen, "%s: step %zu%s%s%s: %s", p->f->path, p->step,
		         p->kind ? " (" : "", p->kind ? p->kind : "", p->kind ? ")" : "", msg);
	else if (p->field)
		snprintf(p->err, p->errlen, "%s: field \"%s\": %s", p->f->path, p->field, msg);
	else
		snprintf(p->err, p->errlen, "%s: %s", p->f->path, msg);
	return -1;
}

/* 1 when the flow lists name in "secrets". */
static int is_secret_name(const struct parse *p, const char *name)
{
	size_t i;

	for (i = 0; i < json_array_size(p->secret_names); i++)
		if (!strcmp(json_string_value(json_array_get(p->secret_names, i)), name))
			return 1;
	return 0;
}

/*
 * Substitutes ${NAME} in s into *out (malloc'd). A secret is allowed only
 * where allow_secret is set (the caller then marks the step secret
 * through *used_secret). "$${" stands for a literal "${".
 */
static int substitute(struct parse *p, const char *s, int allow_secret, int *used_secret,
                      char **out)
{
	struct gb_buf b;
	const char *q = s;
	int rc = -1;

	*out = NULL;
	gb_buf_init(&b, FLOW_MAX_FILE_BYTES);
	while (*q) {
		const char *end, *value;
		char name[128];
		size_t n;

		if (q[0] == '$' && q[1] == '$' && q[2] == '{') {
			if (gb_buf_append(&b, "${", 2) < 0)
				goto too_long;
			q += 3;
			continue;
		}
		if (q[0] != '$' || q[1] != '{') {
			n = strcspn(q + 1, "$") + 1; /* up to the next '$' */
			if (gb_buf_append(&b, q, n) < 0)
				goto too_long;
			q += n;
			continue;
		}
		end = strchr(q + 2, '}');
		n = end ? (size_t)(end - q - 2) : 0;
		if (!end || n == 0 || n >= sizeof(name) || isdigit((unsigned char)q[2]) ||
		    strspn(q + 2,
		           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
		        n) {
			perr(p,
			     "\"%.40s\" is not a variable: write ${NAME} (letters, digits, _), or "
			     "$${ "
			     "for a literal ${",
			     q);
			goto out;
		}
		memcpy(name, q + 2, n);
		name[n] = '\0';
		if (is_secret_name(p, name)) {
			if (!allow_secret) {
				perr(p,
				     "secret ${%s} may only be used in the text of a type step "
				     "(and its "
				     "expect.value): anywhere else it would appear in results and "
				     "records",
				     name);
				goto out;
			}
			*used_secret = 1;
			value = flow_vars_get(p->vars, name);
			if (value && !value[0])
				value = NULL; /* an empty secret is a missing one */
		} else {
			value = flow_vars_get(p->vars, name);
			if (!value)
				value = json_string_value(json_object_get(p->defaults, name));
		}
		if (!value) {
			perr(p,
			     "variable ${%s} is not set: export it or put it in the --vars file%s",
			     name,
			     is_secret_name(p, name) ? "" : ", or give it a default in \"vars\"");
			goto out;
		}
		if (gb_buf_append(&b, value, strlen(value)) < 0)
			goto too_long;
		q = end + 1;
	}
	*out = gb_buf_steal(&b);
	if (!*out)
		*out = strdup("");
	rc = *out ? 0 : perr(p, "out of memory");
	goto out;
too_long:
	/* every append is checked: a cut text is never taken for the whole */
	perr(p,
	     "the text is longer than %u bytes once variables are substituted (or memory ran out)",
	     FLOW_MAX_FILE_BYTES);
out:
	gb_buf_free(&b);
	return rc;
}

/* Substitutes variables in every string of j (borrowed), in place. */
static int substitute_json(struct parse *p, json_t *j, int allow_secret, int *used_secret)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_string(j)) {
		char *s = NULL;

		if (substitute(p, json_string_value(j), allow_secret, used_secret, &s) < 0)
			return -1;
		json_string_set(j, s);
		free(s);
		return 0;
	}
	json_object_foreach(j, key, v)
	{
		if (substitute_json(p, v, allow_secret, used_secret) < 0)
			return -1;
	}
	json_array_foreach(j, i, v)
	{
		if (substitute_json(p, v, allow_secret, used_secret) < 0)
			return -1;
	}
	return 0;
}

/*
 * A target: a string (a CSS selector or a locator such as role=link, as
 * the tools take it) or an object with exactly one of
 * {"role": R, "name"?: N}, {"text": T}, {"css": S}. *out is the tools'
 * form (malloc'd).
 */
static int target_string(struct parse *p, json_t *t, char **out)
{
	json_t *role = json_object_get(t, "role"), *name = json_object_get(t, "name");
	json_t *text = json_object_get(t, "text"), *css = json_object_get(t, "css");
	char *quoted = NULL;
	int rc = -1;

	*out = NULL;
	if (json_is_string(t) && json_string_length(t) > 0) {
		*out = strdup(json_string_value(t));
		return *out ? 0 : perr(p, "out of memory");
	}
	if (!json_is_object(t) || (role != NULL) + (text != NULL) + (css != NULL) != 1 ||
	    json_object_size(t) != 1u + (name != NULL))
		return perr(
		    p, "a target is {\"role\": \"button\", \"name\": \"Save\"}, {\"text\": "
		       "\"Save\"} or {\"css\": \"#save\"} (exactly one of role, text, css; name "
		       "only with role), or a CSS selector string");
	if (name && (!role || !json_is_string(name)))
		return perr(p, "\"name\" goes with \"role\" and must be a string");
	if (role) {
		const char *r = json_string_value(role);

		if (!r || !r[0] || strspn(r, "abcdefghijklmnopqrstuvwxyz") != strlen(r))
			return perr(p,
			            "\"role\" must be an ARIA role in lowercase letters, such as "
			            "button, link, textbox, combobox, checkbox, heading");
		quoted = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
		if (asprintf(out, "role=%s%s%s%s", r, name ? "[name=" : "",
		             name ? gb_or(quoted, "") : "", name ? "]" : "") < 0)
			*out = NULL;
	} else if (text) {
		if (!json_is_string(text) || json_string_length(text) == 0)
			return perr(p, "\"text\" must be a non-empty string");
		quoted = json_dumps(text, JSON_ENCODE_ANY);
		if (asprintf(out, "text=%s", gb_or(quoted, "\"\"")) < 0)
			*out = NULL;
	} else {
		if (!json_is_string(css) || json_string_length(css) == 0)
			return perr(p, "\"css\" must be a non-empty CSS selector");
		if (asprintf(out, "css=%s", json_string_value(css)) < 0)
			*out = NULL;
	}
	rc = *out ? 0 : perr(p, "out of memory");
	free(quoted);
	return rc;
}

/* The step kinds: the key that names the action, and the tool it runs. */
static const struct {
	const char *kind;
	const char *tool;
	const char *const extra[5]; /* the kind's own fields besides its key */
} kinds[] = {
	{ "navigate", "browser_navigate", { NULL } },
	{ "click", "browser_click", { NULL } },
	{ "type", "browser_type", { "text", "secret", "submit", "slowly" } },
	{ "select", "browser_select_option", { "values", NULL } },
	{ "press", "browser_press_key", { NULL } },
	{ "wait", "browser_wait_for", { NULL } },
	{ "evaluate", "browser_evaluate", { "target", NULL } },
};

static const char *const common_fields[] = { "name", "expect", "retries", "retry_delay_ms", NULL };

/* 1 when s is in the NULL-terminated list. */
static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

/* An integer field in [lo, hi]; absent: *out unchanged. */
static int int_field(struct parse *p, json_t *obj, const char *key, int lo, int hi, int *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	p->field = key;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return perr(p, "must be an integer from %d to %d", lo, hi);
	*out = (int)json_integer_value(v);
	p->field = NULL;
	return 0;
}

/* Copies field key of step into args as tool_key, substituting variables. */
static int copy_field(struct parse *p, json_t *step, const char *key, json_t *args,
                      const char *tool_key, int allow_secret, int *secret)
{
	json_t *v = json_object_get(step, key);
	json_t *copy;

	if (!v)
		return 0;
	p->field = key;
	copy = json_deep_copy(v);
	if (!copy || substitute_json(p, copy, allow_secret, secret) < 0) {
		json_decref(copy);
		return copy ? -1 : perr(p, "out of memory");
	}
	json_object_set_new(args, tool_key, copy);
	p->field = NULL;
	return 0;
}

/* The action itself: the value under the kind's key, into args. */
static int action_args(struct parse *p, const char *kind, json_t *v, json_t *args)
{
	char *target = NULL;
	int secret = 0;

	p->field = kind;
	if (!strcmp(kind, "navigate") || !strcmp(kind, "press") || !strcmp(kind, "evaluate")) {
		const char *key = !strcmp(kind, "navigate") ? "url"
		                  : !strcmp(kind, "press")  ? "key"
		                                            : "function";
		json_t *copy;

		if (!json_is_string(v) || json_string_length(v) == 0)
			return perr(p, "must be a non-empty string: %s",
			            !strcmp(kind, "navigate") ? "the URL to open"
			            : !strcmp(kind, "press")
			                ? "a key such as \"Enter\" or \"a\""
			                : "a function such as \"() => document.title\"");
		copy = json_deep_copy(v);
		if (substitute_json(p, copy, 0, &secret) < 0) {
			json_decref(copy);
			return -1;
		}
		json_object_set_new(args, key, copy);
		return 0;
	}
	if (!strcmp(kind, "wait")) {
		const char *k;
		json_t *x;

		if (!json_is_object(v) || json_object_size(v) == 0)
			return perr(
			    p, "must be an object with text, textGone and/or time (seconds), such "
			       "as {\"text\": \"Thank you\"}");
		json_object_foreach(v, k, x)
		{
			json_t *copy;

			if (strcmp(k, "text") != 0 && strcmp(k, "textGone") != 0 &&
			    strcmp(k, "time") != 0)
				return perr(p, "unknown key \"%.60s\": use text, textGone or time",
				            k);
			copy = json_deep_copy(x);
			if (!copy || substitute_json(p, copy, 0, &secret) < 0) {
				json_decref(copy);
				return copy ? -1 : perr(p, "out of memory");
			}
			json_object_set_new(args, k, copy);
		}
		return 0;
	}
	/* click, type, select: the value is the target */
	{
		char *subst = NULL;
		int rc;

		if (target_string(p, v, &target) < 0)
			return -1;
		rc = substitute(p, target, 0, &secret, &subst);
		free(target);
		if (rc < 0)
			return -1;
		json_object_set_new(args, "target", json_string(subst));
		free(subst);
		return 0;
	}
}

/* One step (borrowed) into out: its tool, arguments, retries, and
 * whether it carries a secret. */
static int parse_step(struct parse *p, json_t *step, struct flow_step *out)
{
	const char *key, *kind = NULL, *tool = NULL;
	const char *const *extra = NULL;
	json_t *v, *args = NULL;
	char err[512];
	size_t k;
	int secret = 0;
	int rc = -1;

	if (!json_is_object(step))
		return perr(
		    p, "must be an object such as {\"click\": {\"role\": \"button\", \"name\": "
		       "\"Save\"}}");
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		if (!json_object_get(step, kinds[k].kind))
			continue;
		if (kind)
			return perr(p, "has both \"%s\" and \"%s\": one action per step", kind,
			            kinds[k].kind);
		kind = kinds[k].kind;
		tool = kinds[k].tool;
		extra = kinds[k].extra;
	}
	if (!kind)
		return perr(p, "names no action: give one of navigate, click, type, select, press, "
		               "wait, evaluate");
	p->kind = kind;
	snprintf(out->kind, sizeof(out->kind), "%s", kind);
	json_object_foreach(step, key, v)
	{
		if (strcmp(key, kind) != 0 && !in_list(common_fields, key) &&
		    !in_list(extra, key)) {
			char own[128] = "";
			size_t e, used = 0;

			for (e = 0; extra[e] && used < sizeof(own); e++)
				used += (size_t)snprintf(own + used, sizeof(own) - used, ", %s",
				                         extra[e]);
			p->field = key;
			return perr(
			    p,
			    "is not a field of a %s step (fields: %s, name, expect, retries, "
			    "retry_delay_ms%s)",
			    kind, kind, own);
		}
	}
	if (!strcmp(kind, "wait") && json_object_get(step, "expect")) {
		p->field = "expect";
		return perr(p, "a wait step checks what it waits for: put the text in "
		               "{\"wait\": {\"text\": ...}}, or the expect on the step before");
	}
	v = json_object_get(step, "name");
	if (v) {
		p->field = "name";
		if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 200)
			return perr(p, "must be a string of 1 to 200 bytes");
		out->label = strdup(json_string_value(v));
		p->field = NULL;
	}
	if (int_field(p, step, "retries", 0, FLOW_MAX_RETRIES, &out->retries) < 0 ||
	    int_field(p, step, "retry_delay_ms", 0, FLOW_MAX_RETRY_DELAY_MS, &out->retry_delay_ms) <
	        0)
		return -1;
	out->def = act_tool_find(tool);
	args = json_object();
	if (!out->def || !args) {
		perr(p, "out of memory");
		goto out;
	}
	if (action_args(p, kind, json_object_get(step, kind), args) < 0)
		goto out;
	/* the kind's own fields */
	if (!strcmp(kind, "type")) {
		int has_text = json_object_get(step, "text") != NULL;
		int has_secret = json_object_get(step, "secret") != NULL;

		p->field = has_secret ? "secret" : "text";
		if (has_text == has_secret) {
			perr(p,
			     has_text
			         ? "a type step takes \"text\" or \"secret\", not both"
			         : "a type step needs \"text\" (the string to type) or \"secret\" "
			           "(the name of a stored secret: glassbox secret set)");
			goto out;
		}
		if ((has_text && !json_is_string(json_object_get(step, "text"))) ||
		    (has_secret && !json_is_string(json_object_get(step, "secret")))) {
			perr(p, "\"%s\" must be a string", p->field);
			goto out;
		}
		if (copy_field(p, step, "text", args, "text", 1, &secret) < 0 ||
		    copy_field(p, step, "secret", args, "secret", 0, &secret) < 0 ||
		    copy_field(p, step, "submit", args, "submit", 0, &secret) < 0 ||
		    copy_field(p, step, "slowly", args, "slowly", 0, &secret) < 0)
			goto out;
	} else if (!strcmp(kind, "select")) {
		json_t *values = json_object_get(step, "values");

		p->field = "values";
		if (json_is_string(values)) {
			json_object_set_new(args, "values", json_pack("[O]", values));
		} else if (json_is_array(values) && json_array_size(values) > 0) {
			json_object_set(args, "values", values);
		} else {
			perr(p, "a select step needs \"values\": an option's value or label, or an "
			        "array of them");
			goto out;
		}
		if (substitute_json(p, json_object_get(args, "values"), 0, &secret) < 0)
			goto out;
	} else if (!strcmp(kind, "evaluate") && json_object_get(step, "target")) {
		char *t = NULL, *s = NULL;

		p->field = "target";
		if (target_string(p, json_object_get(step, "target"), &t) < 0)
			goto out;
		rc = substitute(p, t, 0, &secret, &s);
		free(t);
		if (rc < 0)
			goto out;
		rc = -1;
		json_object_set_new(args, "target", json_string(s));
		free(s);
	}
	/* expect: the tools' own checks; a locator object may name expect.target */
	if (json_object_get(step, "expect")) {
		json_t *expect, *t;
		int value_secret = 0;

		p->field = "expect";
		if (!json_is_object(json_object_get(step, "expect"))) {
			perr(p,
			     "must be an object of checks such as {\"urlContains\": \"/thanks\", "
			     "\"text\": \"Order placed\"}");
			goto out;
		}
		expect = json_deep_copy(json_object_get(step, "expect"));
		json_object_set_new(args, "expect", expect);
		t = json_object_get(expect, "target");
		if (t && !json_is_string(t)) {
			char *ts = NULL;

			if (target_string(p, t, &ts) < 0)
				goto out;
			json_object_set_new(expect, "target", json_string(ts));
			free(ts);
		}
		json_object_foreach(expect, key, v)
		{
			/* a secret may be the expected value of the field it was typed into */
			int allow = !strcmp(kind, "type") && !strcmp(key, "value") &&
			            !json_object_get(expect, "target");

			if (substitute_json(p, v, allow, &value_secret) < 0)
				goto out;
		}
		secret |= value_secret;
		if (verify_expect_validate(expect, err, sizeof(err)) < 0) {
			perr(p, "%s", err);
			goto out;
		}
	}
	p->field = NULL;
	if (act_check_args(out->def, args, err, sizeof(err)) < 0) {
		perr(p, "%s", err);
		goto out;
	}
	out->args = args;
	out->secret = secret;
	args = NULL;
	rc = 0;
out:
	json_decref(args);
	return rc;
}

/* The flow's own fields: name, description, vars, secrets, timeout_ms. */
static int parse_head(struct parse *p, json_t *doc)
{
	static const char *const fields[] = { "name",       "description", "vars", "secrets",
		                              "timeout_ms", "steps",       NULL };
	const char *key;
	json_t *v;
	size_t i;

	if (!json_is_object(doc))
		return perr(p, "a flow is a JSON object with \"name\" and \"steps\"");
	json_object_foreach(doc, key, v)
	{
		if (!in_list(fields, key)) {
			p->field = key;
			return perr(
			    p, "is not a flow field (fields: name, description, vars, secrets, "
			       "timeout_ms, steps)");
		}
	}
	p->field = "name";
	v = json_object_get(doc, "name");
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 100 ||
	    strspn(json_string_value(v), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                                 "0123456789 ._-") != json_string_length(v))
		return perr(p,
		            "must be 1 to 100 letters, digits, spaces, '.', '_' or '-' (it names "
		            "the JUnit test case)");
	p->f->name = strdup(json_string_value(v));
	p->field = "description";
	if (json_object_get(doc, "description") &&
	    !json_is_string(json_object_get(doc, "description")))
		return perr(p, "must be a string");
	p->field = "vars";
	p->defaults = json_object_get(doc, "vars");
	if (p->defaults && !json_is_object(p->defaults))
		return perr(p, "must be an object of default values, such as {\"BASE_URL\": "
		               "\"http://shop.test\"}");
	json_object_foreach(p->defaults, key, v)
	{
		if (!json_is_string(v) || !key[0] || isdigit((unsigned char)key[0]) ||
		    strspn(key,
		           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
		        strlen(key))
			return perr(
			    p,
			    "\"%.60s\": variables are NAME (letters, digits, _) with a string "
			    "value",
			    key);
	}
	p->field = "secrets";
	p->secret_names = json_object_get(doc, "secrets");
	if (p->secret_names && !json_is_array(p->secret_names))
		return perr(p, "must be an array of variable names, such as [\"SHOP_PASSWORD\"]");
	json_array_foreach(p->secret_names, i, v)
	{
		if (!json_is_string(v) || json_string_length(v) == 0)
			return perr(p, "entry %zu must be a variable name", i + 1);
		if (json_object_get(p->defaults, json_string_value(v)))
			return perr(p,
			            "${%s} is a secret and has a default in \"vars\": secrets come "
			            "only from the environment or the --vars file",
			            json_string_value(v));
	}
	p->f->secrets = calloc(json_array_size(p->secret_names) + 1, sizeof(*p->f->secrets));
	if (!p->f->secrets)
		return perr(p, "out of memory");
	json_array_foreach(p->secret_names, i, v)
	{
		const char *value = flow_vars_get(p->vars, json_string_value(v));

		if (!value || !value[0])
			continue; /* an error only where it is used */
		p->f->secrets[p->f->n_secrets].name = strdup(json_string_value(v));
		p->f->secrets[p->f->n_secrets++].value = strdup(value);
	}
	if (int_field(p, doc, "timeout_ms", 1000, 300000, &p->f->action_timeout_ms) < 0)
		return -1;
	p->field = "steps";
	v = json_object_get(doc, "steps");
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > FLOW_MAX_STEPS)
		return perr(p, "must be an array of 1 to %u steps", FLOW_MAX_STEPS);
	p->field = NULL;
	return 0;
}

int flow_parse(const char *path, json_t *doc, const struct flow_vars *vars, struct flow **out,
               char *err, size_t errlen)
{
	struct flow *f = calloc(1, sizeof(*f));
	struct parse p = { .vars = vars, .err = err, .errlen = errlen };
	json_t *steps;
	size_t i;
	int rc = -1;

	*out = NULL;
	if (!f || !(f->path = strdup(path ? path : "flow"))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	p.f = f;
	if (parse_head(&p, doc) < 0)
		goto out;
	steps = json_object_get(doc, "steps");
	f->steps = calloc(json_array_size(steps), sizeof(*f->steps));
	if (!f->steps) {
		perr(&p, "out of memory");
		goto out;
	}
	for (i = 0; i < json_array_size(steps); i++) {
		p.step = i + 1;
		p.kind = NULL;
		p.field = NULL;
		f->n_steps = i + 1;
		if (parse_step(&p, json_array_get(steps, i), &f->steps[i]) < 0)
			goto out;
	}
	rc = 0;
out:
	if (rc == 0)
		*out = f;
	else
		flow_free(f);
	return rc;
}

int flow_load(const char *path, const struct flow_vars *vars, struct flow **out, char *err,
              size_t errlen)
{
	json_error_t jerr;
	struct stat st;
	json_t *doc;
	int rc;

	*out = NULL;
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "%s: cannot read the flow: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)FLOW_MAX_FILE_BYTES) {
		snprintf(err, errlen, "%s: a flow is a regular file of at most %u bytes", path,
		         FLOW_MAX_FILE_BYTES);
		return -1;
	}
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		snprintf(err, errlen, "%s: not valid JSON: %s (line %d, column %d)", path,
		         jerr.text, jerr.line, jerr.column);
		return -1;
	}
	rc = flow_parse(path, doc, vars, out, err, errlen);
	json_decref(doc);
	return rc;
}

void flow_free(struct flow *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n_steps; i++) {
		free(f->steps[i].label);
		json_decref(f->steps[i].args);
	}
	for (i = 0; i < f->n_secrets; i++) {
		free(f->secrets[i].name);
		if (f->secrets[i].value)
			memset(f->secrets[i].value, 0, strlen(f->secrets[i].value));
		free(f->secrets[i].value);
	}
	free(f->secrets);
	free(f->steps);
	free(f->name);
	free(f->path);
	free(f);
}

const char *flow_name(const struct flow *f)
{
	return f->name;
}

const char *flow_path(const struct flow *f)
{
	return f->path;
}

size_t flow_step_count(const struct flow *f)
{
	return f->n_steps;
}

const char *flow_step_tool(const struct flow *f, size_t i)
{
	return i < f->n_steps ? f->steps[i].def->name : NULL;
}

json_t *flow_step_args(const struct flow *f, size_t i)
{
	return i < f->n_steps ? f->steps[i].args : NULL;
}

char *flow_redact(const struct flow *f, const char *s)
{
	struct gb_buf b;
	const char *q = s ? s : "";
	char *out;

	gb_buf_init(&b, 1u << 24);
	while (*q) {
		size_t i, best = 0, best_len = 0;

		for (i = 0; i < f->n_secrets; i++) {
			size_t n = strlen(f->secrets[i].value);

			if (n > best_len && !strncmp(q, f->secrets[i].value, n)) {
				best = i;
				best_len = n;
			}
		}
		if (best_len) {
			gb_buf_appendf(&b, "[secret %s]", f->secrets[best].name);
			q += best_len;
		} else {
			gb_buf_append(&b, q, 1);
			q++;
		}
	}
	out = gb_buf_steal(&b);
	gb_buf_free(&b);
	return out ? out : strdup("");
}
