/*
 * registry.c - what every tool shares: the one JSON Schema of their
 * structuredContent, the hints for missing arguments, and the argument
 * check every call passes before it reaches a browser.
 *
 * Design note
 * - Each tool is one descriptor (actions/tools/<name>.c, listed in
 *   actions/tools/all.c). Transports generate their schemas from the
 *   descriptors (mcp/schema.c) and call act_check_args() with them, so the
 *   schema an agent sees and the check a call meets cannot drift apart.
 * - Names and parameter names follow Playwright MCP where they overlap, so
 *   agents written for it work unchanged.
 * - Every tool that is not read-only also accepts `operation_id` (an
 *   idempotency key); exactly the tools that check `expect` accept it
 *   (tests/unit/test_registry.c walks the table).
 * - The table is constant data: no locks, callable from any thread.
 */
#include "actions/actions.h"

#include "common/fs.h"
#include "common/util.h"

#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What to pass when a required argument is missing; by parameter name.
 * Parameters not listed fall back to their description. */
static const struct {
	const char *name;
	const char *hint;
} required_hints[] = {
	{ "target", "pass a ref from browser_snapshot (e.g. \"e5\") or a CSS selector" },
	{ "url", "pass the address to open, e.g. \"https://example.com/\"" },
	{ "text", "pass the text to type (an empty string clears the field)" },
	{ "secret", "pass the name of a stored secret, e.g. \"SHOP_PASSWORD\"" },
	{ "key", "pass a key name such as \"Enter\" or \"ArrowDown\", or a character" },
	{ "values", "pass the option values to select, e.g. [\"blue\"]" },
	{ "function", "pass a function such as \"() => document.title\"" },
	{ "accept", "pass true to accept the dialog or false to dismiss it" },
	{ "action", "pass one of list, new, select, close" },
	{ "browser_session.action", "pass one of open, close, status, list, narrow" },
};

int act_def_read_only(const struct act_def *def)
{
	return def->effect == ACT_EFFECT_READ;
}

unsigned act_def_steps(const struct act_def *def)
{
	unsigned gate = def->policy.exempt ? 0 : ACT_STEP_BIT(ACT_STEP_GATE);
	unsigned always = ACT_STEP_BIT(ACT_STEP_RUN) | ACT_STEP_BIT(ACT_STEP_RECORD);

	switch (def->effect) {
	case ACT_EFFECT_READ:
		return always;
	case ACT_EFFECT_LIFECYCLE:
		return always | gate | ACT_STEP_BIT(ACT_STEP_LEDGER);
	case ACT_EFFECT_PAGE:
		return always | gate | ACT_STEP_BIT(ACT_STEP_LEDGER) |
		       ACT_STEP_BIT(ACT_STEP_OBSERVE_BEFORE) | ACT_STEP_BIT(ACT_STEP_SETTLE) |
		       ACT_STEP_BIT(ACT_STEP_OBSERVE_AFTER) | ACT_STEP_BIT(ACT_STEP_EVIDENCE);
	case ACT_EFFECT_UNSET:
	default:
		return 0;
	}
}

const char *act_step_name(enum act_step step)
{
	static const char *const names[ACT_STEP_COUNT] = {
		[ACT_STEP_GATE] = "gate",
		[ACT_STEP_LEDGER] = "ledger",
		[ACT_STEP_OBSERVE_BEFORE] = "observe-before",
		[ACT_STEP_RUN] = "run",
		[ACT_STEP_SETTLE] = "settle",
		[ACT_STEP_OBSERVE_AFTER] = "observe-after",
		[ACT_STEP_EVIDENCE] = "evidence",
		[ACT_STEP_RECORD] = "record",
	};

	return (int)step >= 0 && step < ACT_STEP_COUNT ? names[step] : "";
}

const char *act_effect_name(enum act_effect effect)
{
	switch (effect) {
	case ACT_EFFECT_READ:
		return "read";
	case ACT_EFFECT_PAGE:
		return "page";
	case ACT_EFFECT_LIFECYCLE:
		return "lifecycle";
	case ACT_EFFECT_UNSET:
	default:
		return "unset";
	}
}

/* ---- the output schema -------------------------------------------------- */

/* {"type": type, "description": desc} (desc may be NULL); new reference. */
static json_t *prop(const char *type, const char *desc)
{
	json_t *p = json_object();

	json_object_set_new(p, "type", json_string(type));
	if (desc)
		json_object_set_new(p, "description", json_string(desc));
	return p;
}

/* An object schema whose properties are given as (name, type) pairs of
 * strings, NULL-terminated; type NULL means "any value". New reference. */
static json_t *object_of(const char *desc, ...)
{
	json_t *o = prop("object", desc);
	json_t *props = json_object();
	const char *name;
	const char *type;
	va_list ap;

	va_start(ap, desc);
	for (;;) {
		name = va_arg(ap, const char *);
		if (!name)
			break;
		type = va_arg(ap, const char *);
		json_object_set_new(props, name, type ? prop(type, NULL) : json_object());
	}
	va_end(ap);
	json_object_set_new(o, "properties", props);
	return o;
}

/* {"type": "array", "items": items (stolen), "description": desc}. */
static json_t *array_of(json_t *items, const char *desc)
{
	json_t *a = prop("array", desc);

	json_object_set_new(a, "items", items);
	return a;
}

/* Names schema by its content: "$id" set to urn:glassbox:tool-result:
 * and the first 16 hex digits of the SHA-256 of its canonical JSON. A
 * validating client that caches by $id (the MCP SDK's does) compiles the
 * schema every tool shares once, not once per tool, and a changed schema
 * is a new id. */
static void name_by_content(json_t *schema)
{
	unsigned char digest[crypto_hash_sha256_BYTES];
	char hex[2 * crypto_hash_sha256_BYTES + 1];
	char id[64];
	char *text = json_dumps(schema, JSON_COMPACT | JSON_SORT_KEYS);

	if (!text)
		return;
	crypto_hash_sha256(digest, (const unsigned char *)text, strlen(text));
	free(text);
	gb_hex(digest, sizeof(digest), hex);
	snprintf(id, sizeof(id), "urn:glassbox:tool-result:%.16s", hex);
	json_object_set_new(schema, "$id", json_string(id));
}

/* The JSON Schema of every tool's structuredContent, as documented in
 * docs/tools.md: all properties optional except operation_id, tool and ok.
 * Nested objects stay open (no additionalProperties) so that fields added
 * later do not break clients that validate. Named by its content ("$id").
 * Returns a new reference. */
json_t *act_output_schema(void)
{
	json_t *schema = json_object();
	json_t *p = json_object();
	json_t *code;
	json_t *err;

	json_object_set_new(p, "operation_id", prop("string", "id of this operation"));
	json_object_set_new(p, "tool", prop("string", "tool name"));
	json_object_set_new(
	    p, "ok", prop("boolean", "false when the action failed or an expectation failed"));
	err = object_of("{code, message} when ok is false because the action failed", "message",
	                "string", NULL);
	code = json_object();
	json_object_set_new(code, "type", json_pack("[ss]", "string", "integer"));
	json_object_set_new(json_object_get(err, "properties"), "code", code);
	json_object_set_new(p, "error", err);
	json_object_set_new(p, "url_before", prop("string", "page URL before the action"));
	json_object_set_new(p, "url", prop("string", "page URL after the action"));
	json_object_set_new(p, "title", prop("string", "page title after the action"));
	json_object_set_new(p, "navigated",
	                    prop("boolean", "the action started a main-frame navigation"));
	json_object_set_new(p, "status",
	                    prop("integer", "main-document HTTP status when it navigated"));
	json_object_set_new(p, "responses",
	                    array_of(object_of(NULL, "url", "string", "method", "string", "status",
	                                       "integer", "type", "string", NULL),
	                             "responses seen during the action"));
	json_object_set_new(
	    p, "failed_requests",
	    array_of(object_of(NULL, "url", "string", "method", "string", "error", "string", NULL),
	             "requests that failed or were refused during the action"));
	json_object_set_new(p, "dialogs",
	                    array_of(object_of(NULL, "type", "string", "message", "string", NULL),
	                             "JavaScript dialogs that opened"));
	json_object_set_new(p, "dialog_open",
	                    object_of("a dialog still waiting for browser_handle_dialog", "type",
	                              "string", "message", "string", NULL));
	json_object_set_new(
	    p, "console_errors",
	    array_of(prop("string", NULL), "console errors and uncaught exceptions"));
	json_object_set_new(p, "dom_changed", prop("boolean", "the DOM digest changed"));
	json_object_set_new(p, "value",
	                    prop("string", "the field's value re-read after typing or selecting "
	                                   "(password fields are masked)"));
	json_object_set_new(
	    p, "result", json_pack("{s:s}", "description", "browser_evaluate: the returned value"));
	json_object_set_new(p, "tabs",
	                    array_of(object_of(NULL, "index", "integer", "url", "string", "title",
	                                       "string", "current", "boolean", NULL),
	                             "the browser's tabs"));
	json_object_set_new(p, "verdicts",
	                    array_of(object_of(NULL, "check", "string", "expected", NULL,
	                                       "observed", NULL, "ok", "boolean", NULL),
	                             "one per expect check and per built-in check"));
	json_object_set_new(p, "evidence",
	                    array_of(object_of(NULL, "kind", "string", "sha256", "string", "uri",
	                                       "string", "mime", "string", "size", "integer", NULL),
	                             "stored artifacts, readable with resources/read"));
	json_object_set_new(p, "duration_ms", prop("integer", "time spent, in milliseconds"));
	json_object_set_new(p, "profile",
	                    object_of("the profile the browser runs on (browser_session)", "name",
	                              "string", "user", "string", "version", "integer", "readonly",
	                              "boolean", NULL));
	json_object_set_new(p, "profile_closed",
	                    object_of("how the profile was closed: saved, or why not", "name",
	                              "string", "user", "string", "version", "integer", "saved",
	                              "boolean", "reason", "string", NULL));
	json_object_set_new(p, "profiles", array_of(json_object(), "the tenant's profiles"));
	json_object_set_new(
	    p, "downloads",
	    array_of(object_of(NULL, "name", "string", "size", "integer", "sha256", "string",
	                       "mime", "string", "uri", "string", "url", "string", "state",
	                       "string", "operation_id", "string", "reason", "string", NULL),
	             "downloads the page started, each kept as an artifact of the operation that "
	             "caused it (docs/files.md)"));
	json_object_set_new(
	    p, "uploads",
	    array_of(object_of(NULL, "name", "string", "size", "integer", "sha256", "string",
	                       "mime", "string", NULL),
	             "browser_file_upload, browser_drop: the files handed to the page"));
	json_object_set_new(p, "messages",
	                    array_of(object_of(NULL, "level", "string", "type", "string", "text",
	                                       "string", "url", "string", "line", "integer", NULL),
	                             "browser_console_messages: the messages, oldest first"));
	json_object_set_new(
	    p, "requests",
	    array_of(object_of(NULL, "index", "integer", "method", "string", "url", "string",
	                       "type", "string", "status", "integer", "failed", "string", NULL),
	             "browser_network_requests: the page's requests"));
	json_object_set_new(p, "request",
	                    object_of("browser_network_request: the request, credential headers "
	                              "redacted",
	                              "index", "integer", "url", "string", NULL));
	json_object_set_new(p, "pdf",
	                    object_of("browser_pdf_save: the PDF kept", "name", "string", "size",
	                              "integer", "sha256", "string", "uri", "string", NULL));
	json_object_set_new(p, "wsEndpoint",
	                    prop("string", "browser_session cdp: the session's CDP endpoint"));

	json_object_set_new(schema, "type", json_string("object"));
	json_object_set_new(schema, "properties", p);
	json_object_set_new(schema, "required", json_pack("[sss]", "operation_id", "tool", "ok"));
	name_by_content(schema);
	return schema;
}

/* ---- argument checking -------------------------------------------------- */

/* The type of v as a JSON Schema would name it. */
static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

/* "a string", "an integer", ...: the type as a message names it. */
static const char *type_phrase(enum act_param_type t)
{
	switch (t) {
	case ACT_T_STRING:
		return "a string";
	case ACT_T_BOOLEAN:
		return "a boolean (true or false)";
	case ACT_T_NUMBER:
		return "a number";
	case ACT_T_INTEGER:
		return "an integer";
	case ACT_T_OBJECT:
		return "an object";
	case ACT_T_STRING_ARRAY:
		return "an array of strings";
	case ACT_T_OBJECT_ARRAY:
		return "an array of objects";
	}
	return "a value";
}

/* Joins the NULL-terminated list with ", " into buf (truncated if need be). */
static void join_values(const char *const *values, char *buf, size_t buflen)
{
	size_t used = 0;
	int n;
	size_t i;

	buf[0] = '\0';
	for (i = 0; values[i]; i++) {
		n = snprintf(buf + used, buflen - used, "%s%s", i ? ", " : "", values[i]);
		if (n < 0 || (size_t)n >= buflen - used)
			break;
		used += (size_t)n;
	}
}

/* Whether s is one of the NULL-terminated values. */
static int in_enum(const char *const *values, const char *s)
{
	size_t i;

	for (i = 0; values[i]; i++) {
		if (!strcmp(values[i], s))
			return 1;
	}
	return 0;
}

/* Whether v is an integer: a JSON integer, or a number with no fraction
 * (JSON Schema counts 2.0 as an integer). */
static int is_integral(const json_t *v)
{
	double d;

	if (json_is_integer(v))
		return 1;
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	return isfinite(d) && floor(d) == d;
}

/* What to tell a caller who left out p: a hint by name, else its
 * description. */
static const char *required_hint(const struct act_def *def, const struct act_param *p)
{
	char qualified[160];
	size_t i;

	/* "tool.param" entries first: the same name may mean another thing */
	snprintf(qualified, sizeof(qualified), "%s.%s", def->name, p->name);
	for (i = 0; i < sizeof(required_hints) / sizeof(required_hints[0]); i++) {
		if (!strcmp(required_hints[i].name, qualified))
			return required_hints[i].hint;
	}
	for (i = 0; i < sizeof(required_hints) / sizeof(required_hints[0]); i++) {
		if (!strcmp(required_hints[i].name, p->name))
			return required_hints[i].hint;
	}
	return p->description;
}

/* def's parameter called name, or NULL. */
static const struct act_param *find_param(const struct act_def *def, const char *name)
{
	size_t i;

	for (i = 0; i < def->n_params; i++) {
		if (!strcmp(def->params[i].name, name))
			return &def->params[i];
	}
	return NULL;
}

/* Checks one present value v (borrowed) against p: type, enum (also of
 * array items), range. Returns 0, or -1 with a message in err. */
static int check_value(const struct act_param *p, json_t *v, char *err, size_t errlen);

/* Checks one item (borrowed) of the object array p, item number index:
 * an object whose members are p->items (unknown names refused, required
 * ones present, each checked as a parameter named "p[index].member").
 * Returns 0, or -1 with a message in err. */
static int check_item(const struct act_param *p, size_t index, json_t *item, char *err,
                      size_t errlen)
{
	struct act_param member;
	char name[160];
	char names[256];
	const char *key;
	json_t *v;
	size_t i, used;
	int n;

	if (!json_is_object(item)) {
		gb_set_error(err, errlen, "argument '%s[%zu]' must be an object (got %s)", p->name,
		             index, json_kind(item));
		return -1;
	}
	json_object_foreach(item, key, v)
	{
		for (i = 0; i < p->n_items && strcmp(p->items[i].name, key) != 0; i++)
			;
		if (i < p->n_items)
			continue;
		names[0] = '\0';
		used = 0;
		for (i = 0; i < p->n_items; i++) {
			n = snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
			             p->items[i].name);
			if (n < 0 || (size_t)n >= sizeof(names) - used)
				break;
			used += (size_t)n;
		}
		gb_set_error(err, errlen, "unknown member '%.60s' in '%s[%zu]': each item takes %s",
		             key, p->name, index, names);
		return -1;
	}
	for (i = 0; i < p->n_items; i++) {
		member = p->items[i];
		snprintf(name, sizeof(name), "%s[%zu].%s", p->name, index, member.name);
		member.name = name;
		v = json_object_get(item, p->items[i].name);
		if (!v) {
			if (member.required) {
				gb_set_error(err, errlen, "argument '%s' is required: %s", name,
				             member.description);
				return -1;
			}
			continue;
		}
		if (check_value(&member, v, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int check_value(const struct act_param *p, json_t *v, char *err, size_t errlen)
{
	char list[256];
	json_t *item;
	size_t i;
	double d;
	int rc = -1;

	if (p->nullable && json_is_null(v))
		return 0;
	switch (p->type) {
	case ACT_T_STRING:
		if (!json_is_string(v))
			goto wrong_type;
		if (p->enum_values && !in_enum(p->enum_values, json_string_value(v))) {
			join_values(p->enum_values, list, sizeof(list));
			gb_set_error(err, errlen, "argument '%s' must be one of %s", p->name, list);
			goto out;
		}
		break;
	case ACT_T_BOOLEAN:
		if (!json_is_boolean(v))
			goto wrong_type;
		break;
	case ACT_T_NUMBER:
	case ACT_T_INTEGER:
		if (!json_is_number(v))
			goto wrong_type;
		if (p->type == ACT_T_INTEGER && !is_integral(v)) {
			gb_set_error(err, errlen, "argument '%s' must be an integer (got %g)",
			             p->name, json_number_value(v));
			goto out;
		}
		d = json_number_value(v);
		if (p->has_range && (d < p->minimum || d > p->maximum)) {
			gb_set_error(err, errlen,
			             "argument '%s' must be between %g and %g (got %g)", p->name,
			             p->minimum, p->maximum, d);
			goto out;
		}
		break;
	case ACT_T_OBJECT:
		if (!json_is_object(v))
			goto wrong_type;
		break;
	case ACT_T_STRING_ARRAY:
		if (!json_is_array(v))
			goto wrong_type;
		json_array_foreach(v, i, item)
		{
			if (!json_is_string(item)) {
				gb_set_error(
				    err, errlen,
				    "argument '%s' must be an array of strings: item %zu is not a "
				    "string (got %s)",
				    p->name, i, json_kind(item));
				goto out;
			}
			if (p->enum_values && !in_enum(p->enum_values, json_string_value(item))) {
				join_values(p->enum_values, list, sizeof(list));
				gb_set_error(err, errlen,
				             "argument '%s' item %zu must be one of %s", p->name, i,
				             list);
				goto out;
			}
		}
		break;
	case ACT_T_OBJECT_ARRAY:
		if (!json_is_array(v))
			goto wrong_type;
		if (json_array_size(v) < p->min_items) {
			gb_set_error(err, errlen, "argument '%s' needs at least %zu item%s",
			             p->name, p->min_items, p->min_items == 1 ? "" : "s");
			goto out;
		}
		if (p->max_items && json_array_size(v) > p->max_items) {
			gb_set_error(err, errlen, "argument '%s' takes at most %zu items (got %zu)",
			             p->name, p->max_items, json_array_size(v));
			goto out;
		}
		json_array_foreach(v, i, item)
		{
			if (check_item(p, i, item, err, errlen) < 0)
				goto out;
		}
		break;
	}
	rc = 0;
	goto out;

wrong_type:
	gb_set_error(err, errlen, "argument '%s' must be %s (got %s)", p->name,
	             type_phrase(p->type), json_kind(v));
out:
	return rc;
}

/* The JSON Schema type name of t, as a schema validator names it. */
static const char *schema_type_name(enum act_param_type t)
{
	switch (t) {
	case ACT_T_STRING:
		return "string";
	case ACT_T_BOOLEAN:
		return "boolean";
	case ACT_T_NUMBER:
	case ACT_T_INTEGER:
		return "number";
	case ACT_T_OBJECT:
		return "object";
	default:
		return "array";
	}
}

/* See actions.h. */
int act_args_mismatch(const struct act_def *def, json_t *args, char *out, size_t outlen)
{
	const struct act_param *p;
	const char *got;
	json_t *v;
	size_t i;

	if (!def || (args && !json_is_object(args)))
		return -1;
	for (i = 0; i < def->n_params; i++) {
		p = &def->params[i];
		v = args ? json_object_get(args, p->name) : NULL;
		if (!v && !p->required)
			continue;
		if (!v) {
			got = "undefined";
		} else {
			int ok;

			switch (p->type) {
			case ACT_T_STRING:
				ok = json_is_string(v);
				break;
			case ACT_T_BOOLEAN:
				ok = json_is_boolean(v);
				break;
			case ACT_T_NUMBER:
			case ACT_T_INTEGER:
				ok = json_is_number(v);
				break;
			case ACT_T_OBJECT:
				ok = json_is_object(v);
				break;
			default:
				ok = json_is_array(v);
				break;
			}
			if (ok)
				continue;
			got = json_is_integer(v) ? "number" : json_kind(v);
		}
		snprintf(out, outlen, "Invalid input: expected %s, received %s\n  \u2192 at %s",
		         schema_type_name(p->type), got, p->name);
		return 0;
	}
	return -1;
}

/* Checks args (borrowed; a JSON object, or NULL for {}) against def's
 * parameters: unknown names first, then, in table order, presence of the
 * required ones, types, enums (also of string-array items) and ranges.
 * Returns 0, or -1 with one message in err naming the argument, what is
 * wrong and what to pass instead. */
int act_check_args(const struct act_def *def, json_t *args, char *err, size_t errlen)
{
	const struct act_param *p;
	const char *key;
	char names[512];
	size_t used;
	json_t *v;
	size_t i;
	int n;
	int rc = -1;

	if (!def) {
		gb_set_error(err, errlen, "no tool given");
		goto out;
	}
	if (args && !json_is_object(args)) {
		gb_set_error(err, errlen, "arguments of %s must be a JSON object (got %s)",
		             def->name, json_kind(args));
		goto out;
	}
	if (args) {
		json_object_foreach(args, key, v)
		{
			if (find_param(def, key))
				continue;
			if (!def->n_params) {
				gb_set_error(err, errlen,
				             "unknown argument '%s': %s takes no arguments", key,
				             def->name);
				goto out;
			}
			names[0] = '\0';
			used = 0;
			for (i = 0; i < def->n_params; i++) {
				n = snprintf(names + used, sizeof(names) - used, "%s%s",
				             i ? ", " : "", def->params[i].name);
				if (n < 0 || (size_t)n >= sizeof(names) - used)
					break;
				used += (size_t)n;
			}
			gb_set_error(err, errlen, "unknown argument '%s': %s accepts %s", key,
			             def->name, names);
			goto out;
		}
	}
	for (i = 0; i < def->n_params; i++) {
		p = &def->params[i];
		v = args ? json_object_get(args, p->name) : NULL;
		if (!v) {
			if (p->required) {
				gb_set_error(err, errlen, "argument '%s' is required: %s", p->name,
				             required_hint(def, p));
				goto out;
			}
			continue;
		}
		if (check_value(p, v, err, errlen) < 0)
			goto out;
	}
	if (def->one_of) {
		size_t given = 0;

		names[0] = '\0';
		used = 0;
		for (i = 0; def->one_of[i]; i++) {
			if (args && json_object_get(args, def->one_of[i]))
				given++;
			n = snprintf(names + used, sizeof(names) - used, "%s'%s'",
			             i == 0               ? ""
			             : def->one_of[i + 1] ? ", "
			                                  : " or ",
			             def->one_of[i]);
			if (n > 0 && (size_t)n < sizeof(names) - used)
				used += (size_t)n;
		}
		if (given != 1) {
			gb_set_error(err, errlen, "%s takes exactly one of %s (got %s)", def->name,
			             names, given ? "more than one" : "none");
			goto out;
		}
	}
	rc = 0;
out:
	return rc;
}
