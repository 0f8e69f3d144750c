/*
 * risk.c - risk classification: the rules of a tenant's "risk" config
 * (risk.h, docs/gates.md), parsed once into an immutable struct
 * policy_risk, and the classifier that applies them to the facts of one
 * action.
 *
 * Design: a rule is a conjunction of conditions; the first rule whose
 * conditions all hold decides. Word conditions are matched on normalised
 * text (risk_text.c): each fact is turned into " word word ... " and each
 * configured word or phrase into " word word " (or " prefix" for "word*"),
 * so a whole-word match is a substring match of the two. The classifier
 * reads only struct policy_action_facts: what the agent said about the
 * element is not an input, and neither is any other text of the page.
 *
 * Threads: a parsed struct policy_risk is never written again; classify
 * keeps its scratch space on the heap of the calling thread.
 */
#include "policy/risk-private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* How long an approval stays usable, seconds: default and bounds. */
#define TTL_DEFAULT_S 300
#define TTL_MIN_S 10
#define TTL_MAX_S 86400

/* A list of configured entries. For word lists each entry is normalised
 * (" delete all " or " delet" for a prefix); for exact lists it is the
 * text lowercased, with prefix set for a trailing '*'. */
struct risk_entry {
	char *text;
	int prefix;
};

struct risk_list {
	struct risk_entry *e;
	size_t n;
	int set; /* the condition was given */
};

/* One "when". Tri-state booleans: -1 not given, else 0 or 1. */
struct risk_cond {
	unsigned kinds; /* bit per enum policy_action_kind; 0: any kind */
	struct risk_list text;
	struct risk_list role;
	struct risk_list tag;
	struct risk_list input_type;
	struct risk_list autocomplete;
	struct risk_list form_method;
	struct risk_list form_words;
	struct risk_list keys;
	struct risk_list page_host;
	int destructive_form;
	int submits_form;
	int dialog_accept;
	int cross_site;
	int download;
};

struct risk_rule {
	char name[POLICY_RISK_NAME_MAX + 1];
	enum policy_risk_verdict verdict;
	struct risk_cond when;
};

struct policy_risk {
	struct risk_rule *rules;
	size_t nrules;
	enum policy_risk_verdict evaluate;
	enum policy_risk_verdict fallback;
	int64_t ttl_ms;
};

static const char *const kind_names[POLICY_ACT_KIND_COUNT] = {
	[POLICY_ACT_OTHER] = "other",       [POLICY_ACT_CLICK] = "click",
	[POLICY_ACT_TYPE] = "type",         [POLICY_ACT_SELECT] = "select",
	[POLICY_ACT_PRESS] = "press",       [POLICY_ACT_HOVER] = "hover",
	[POLICY_ACT_DRAG] = "drag",         [POLICY_ACT_NAVIGATE] = "navigate",
	[POLICY_ACT_EVALUATE] = "evaluate", [POLICY_ACT_UPLOAD] = "upload",
	[POLICY_ACT_DIALOG] = "dialog",
};

const char *policy_action_kind_name(enum policy_action_kind kind)
{
	if ((int)kind < 0 || kind >= POLICY_ACT_KIND_COUNT)
		return "other";
	return kind_names[kind];
}

int policy_action_kind_from_name(const char *name)
{
	int i;

	if (!name)
		return -1;
	for (i = 0; i < POLICY_ACT_KIND_COUNT; i++) {
		if (!strcmp(kind_names[i], name))
			return i;
	}
	return -1;
}

const char *policy_risk_verdict_name(enum policy_risk_verdict v)
{
	switch (v) {
	case POLICY_RISK_ALLOW:
		return "allow";
	case POLICY_RISK_APPROVE:
		return "approve";
	case POLICY_RISK_FORBID:
	default:
		return "forbid";
	}
}

const char *policy_risk_defaults_json(void)
{
	return policy_risk_defaults_text;
}

int64_t policy_risk_approval_ttl_ms(const struct policy_risk *r)
{
	return r ? r->ttl_ms : (int64_t)TTL_DEFAULT_S * 1000;
}

/* ---- freeing ------------------------------------------------------------- */

static void list_free(struct risk_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->e[i].text);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static void cond_free(struct risk_cond *c)
{
	list_free(&c->text);
	list_free(&c->role);
	list_free(&c->tag);
	list_free(&c->input_type);
	list_free(&c->autocomplete);
	list_free(&c->form_method);
	list_free(&c->form_words);
	list_free(&c->keys);
	list_free(&c->page_host);
}

void policy_risk_free(struct policy_risk *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nrules; i++)
		cond_free(&r->rules[i].when);
	free(r->rules);
	free(r);
}

/* ---- parsing ------------------------------------------------------------- */

/* Formats the error (where: message) into err. Returns -POLICY_EINVAL. */
static int bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -POLICY_EINVAL;
}

static int parse_verdict(const json_t *v, const char *where, enum policy_risk_verdict *out,
                         char *err, size_t errlen)
{
	const char *s = json_string_value(v);

	if (s && !strcmp(s, "allow"))
		*out = POLICY_RISK_ALLOW;
	else if (s && !strcmp(s, "approve"))
		*out = POLICY_RISK_APPROVE;
	else if (s && !strcmp(s, "forbid"))
		*out = POLICY_RISK_FORBID;
	else
		return bad(err, errlen,
		           "%s: %s%.60s%s is not a decision: use \"allow\", \"approve\" "
		           "or \"forbid\"",
		           where, s ? "\"" : "", s ? s : "a non-string value", s ? "\"" : "");
	return 0;
}

/* How entries of a list are matched. */
enum list_style {
	LIST_WORDS, /* normalised words and phrases, "word*" a word prefix */
	LIST_EXACT, /* whole value, case-insensitive, "text*" a prefix */
	LIST_HOSTS, /* "host" or "*.host" */
};

/* Lowercases ASCII in place. */
static void lower(char *s)
{
	for (; *s; s++) {
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
	}
}

/* Turns one configured entry into its matching form. */
static int parse_entry(const char *s, enum list_style style, const char *where, size_t idx,
                       struct risk_entry *e, char *err, size_t errlen)
{
	size_t len = strlen(s);
	char norm[POLICY_RISK_WORD_MAX * 2 + 8];
	size_t n;

	if (len == 0 || len > POLICY_RISK_WORD_MAX)
		return bad(err, errlen, "%s[%zu]: entries must have 1 to %d bytes", where, idx,
		           POLICY_RISK_WORD_MAX);
	e->prefix = style != LIST_HOSTS && len > 1 && s[len - 1] == '*';
	if (style == LIST_WORDS) {
		n = policy_risk_normalize(s, e->prefix ? len - 1 : len, norm, sizeof(norm));
		if (n <= 1)
			return bad(err, errlen,
			           "%s[%zu]: \"%.60s\" has no letters or digits to match", where,
			           idx, s);
		if (e->prefix)
			norm[n - 1] = '\0'; /* " delet": a word that starts so */
		e->text = strdup(norm);
	} else {
		e->text = strndup(s, e->prefix ? len - 1 : len);
		if (e->text)
			lower(e->text);
		if (e->text && style == LIST_HOSTS && e->text[0] == '*' &&
		    (e->text[1] != '.' || !e->text[2])) {
			free(e->text);
			e->text = NULL;
			return bad(err, errlen,
			           "%s[%zu]: \"%.60s\" is not a host pattern: write "
			           "\"shop.test\" or \"*.shop.test\"",
			           where, idx, s);
		}
	}
	if (!e->text)
		return -POLICY_ENOMEM;
	return 0;
}

/* Parses a string or an array of strings into l. */
static int parse_list(const json_t *v, enum list_style style, const char *where,
                      struct risk_list *l, char *err, size_t errlen)
{
	size_t count = json_is_array(v) ? json_array_size(v) : 1;
	size_t i;
	int rc = 0;

	l->set = 1;
	if (!json_is_string(v) && !json_is_array(v)) {
		rc = bad(err, errlen, "%s: must be a string or an array of strings", where);
		goto out;
	}
	if (count == 0 || count > POLICY_RISK_MAX_WORDS) {
		rc =
		    bad(err, errlen, "%s: must list 1 to %d entries", where, POLICY_RISK_MAX_WORDS);
		goto out;
	}
	l->e = calloc(count, sizeof(*l->e));
	if (!l->e) {
		rc = -POLICY_ENOMEM;
		goto out;
	}
	for (i = 0; i < count; i++) {
		const json_t *item = json_is_array(v) ? json_array_get(v, i) : v;

		if (!json_is_string(item)) {
			rc = bad(err, errlen, "%s[%zu]: must be a string", where, i);
			goto out;
		}
		rc = parse_entry(json_string_value(item), style, where, i, &l->e[i], err, errlen);
		if (rc < 0)
			goto out;
		l->n++;
	}
out:
	if (rc == -POLICY_ENOMEM)
		snprintf(err, errlen, "out of memory parsing %s", where);
	return rc;
}

static int parse_bool(const json_t *v, const char *where, int *out, char *err, size_t errlen)
{
	if (!json_is_boolean(v))
		return bad(err, errlen, "%s: must be true or false", where);
	*out = json_is_true(v) ? 1 : 0;
	return 0;
}

static int parse_kinds(const json_t *v, const char *where, unsigned *out, char *err, size_t errlen)
{
	size_t count = json_is_array(v) ? json_array_size(v) : 1;
	size_t i;

	if ((!json_is_string(v) && !json_is_array(v)) || count == 0)
		return bad(err, errlen, "%s: must be an action kind or a non-empty array of them",
		           where);
	for (i = 0; i < count; i++) {
		const json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
		int k = policy_action_kind_from_name(json_string_value(item));

		if (k < 0)
			return bad(
			    err, errlen,
			    "%s: %s%.40s%s is not an action kind: use one of click, "
			    "type, select, press, hover, drag, navigate, evaluate, upload, dialog, "
			    "other",
			    where, json_is_string(item) ? "\"" : "",
			    json_is_string(item) ? json_string_value(item) : "a non-string value",
			    json_is_string(item) ? "\"" : "");
		*out |= 1u << k;
	}
	return 0;
}

/* Parses one "when" object. where is "risk.rules[3].when". */
static int parse_when(const json_t *when, const char *where, struct risk_cond *c, char *err,
                      size_t errlen)
{
	const char *key;
	json_t *v;
	char at[256];
	int rc = 0;

	c->destructive_form = c->submits_form = c->dialog_accept = c->cross_site = c->download = -1;
	if (!json_is_object(when) || json_object_size(when) == 0)
		return bad(err, errlen, "%s: must be an object with at least one condition", where);
	json_object_foreach((json_t *)when, key, v)
	{
		snprintf(at, sizeof(at), "%.180s.%.40s", where, key);
		if (!strcmp(key, "kind"))
			rc = parse_kinds(v, at, &c->kinds, err, errlen);
		else if (!strcmp(key, "text_matches"))
			rc = parse_list(v, LIST_WORDS, at, &c->text, err, errlen);
		else if (!strcmp(key, "form_matches"))
			rc = parse_list(v, LIST_WORDS, at, &c->form_words, err, errlen);
		else if (!strcmp(key, "role"))
			rc = parse_list(v, LIST_EXACT, at, &c->role, err, errlen);
		else if (!strcmp(key, "tag"))
			rc = parse_list(v, LIST_EXACT, at, &c->tag, err, errlen);
		else if (!strcmp(key, "input_type"))
			rc = parse_list(v, LIST_EXACT, at, &c->input_type, err, errlen);
		else if (!strcmp(key, "autocomplete"))
			rc = parse_list(v, LIST_EXACT, at, &c->autocomplete, err, errlen);
		else if (!strcmp(key, "form_method"))
			rc = parse_list(v, LIST_EXACT, at, &c->form_method, err, errlen);
		else if (!strcmp(key, "keys"))
			rc = parse_list(v, LIST_EXACT, at, &c->keys, err, errlen);
		else if (!strcmp(key, "page_host"))
			rc = parse_list(v, LIST_HOSTS, at, &c->page_host, err, errlen);
		else if (!strcmp(key, "destructive_form"))
			rc = parse_bool(v, at, &c->destructive_form, err, errlen);
		else if (!strcmp(key, "submits_form"))
			rc = parse_bool(v, at, &c->submits_form, err, errlen);
		else if (!strcmp(key, "dialog_accept"))
			rc = parse_bool(v, at, &c->dialog_accept, err, errlen);
		else if (!strcmp(key, "cross_site"))
			rc = parse_bool(v, at, &c->cross_site, err, errlen);
		else if (!strcmp(key, "download"))
			rc = parse_bool(v, at, &c->download, err, errlen);
		else
			rc = bad(
			    err, errlen,
			    "%s: unknown condition: use kind, text_matches, role, tag, "
			    "input_type, autocomplete, form_method, form_matches, "
			    "destructive_form, "
			    "submits_form, keys, dialog_accept, cross_site, download or page_host",
			    at);
		if (rc < 0)
			break;
	}
	return rc;
}

/* Checks that a rule name is short and made of [A-Za-z0-9._-]. */
static int valid_name(const char *s)
{
	size_t i;

	if (!s || !s[0] || strlen(s) > POLICY_RISK_NAME_MAX)
		return 0;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return 0;
	}
	return 1;
}

/* Parses one rule into r (zeroed by the caller). */
static int parse_rule(const json_t *rule, const char *where, struct risk_rule *r, char *err,
                      size_t errlen)
{
	const char *key;
	json_t *v;
	char at[224];
	int have_decision = 0;
	int have_when = 0;
	int rc = 0;

	if (!json_is_object(rule))
		return bad(err, errlen, "%s: must be an object {\"name\", \"decision\", \"when\"}",
		           where);
	json_object_foreach((json_t *)rule, key, v)
	{
		snprintf(at, sizeof(at), "%.160s.%.20s", where, key);
		if (!strcmp(key, "name")) {
			if (!valid_name(json_string_value(v))) {
				rc = bad(err, errlen,
				         "%s: must be 1 to %d letters, digits, '-', '_' or '.'", at,
				         POLICY_RISK_NAME_MAX);
				break;
			}
			snprintf(r->name, sizeof(r->name), "%s", json_string_value(v));
		} else if (!strcmp(key, "decision")) {
			rc = parse_verdict(v, at, &r->verdict, err, errlen);
			have_decision = 1;
		} else if (!strcmp(key, "when")) {
			rc = parse_when(v, at, &r->when, err, errlen);
			have_when = 1;
		} else if (!strcmp(key, "comment")) {
			/* free text for people */
		} else {
			rc = bad(err, errlen,
			         "%s: unknown key: a rule has name, decision, when and "
			         "comment",
			         at);
		}
		if (rc < 0)
			break;
	}
	if (rc == 0 && (!r->name[0] || !have_decision || !have_when))
		rc =
		    bad(err, errlen, "%s: a rule needs \"name\", \"decision\" and \"when\"", where);
	return rc;
}

/* Appends the rules of the array v to r. */
static int parse_rules(const json_t *v, const char *where, struct policy_risk *r, char *err,
                       size_t errlen)
{
	size_t count = json_array_size(v);
	struct risk_rule *grown;
	char at[96];
	size_t i;
	int rc = 0;

	if (!json_is_array(v))
		return bad(err, errlen, "%s: must be an array of rules", where);
	if (r->nrules + count > POLICY_RISK_MAX_RULES)
		return bad(err, errlen, "%s: at most %d rules (with the shipped ones) are allowed",
		           where, POLICY_RISK_MAX_RULES);
	if (count == 0)
		return 0;
	grown = realloc(r->rules, (r->nrules + count) * sizeof(*grown));
	if (!grown) {
		snprintf(err, errlen, "out of memory parsing %s", where);
		return -POLICY_ENOMEM;
	}
	r->rules = grown;
	for (i = 0; i < count; i++) {
		struct risk_rule *rule = &r->rules[r->nrules];

		memset(rule, 0, sizeof(*rule));
		snprintf(at, sizeof(at), "%.60s[%zu]", where, i);
		rc = parse_rule(json_array_get(v, i), at, rule, err, errlen);
		r->nrules++; /* counted even when half-parsed, so that it is freed */
		if (rc < 0)
			break;
	}
	return rc;
}

/* Applies the top-level keys of a config object (tenant's or shipped).
 * tenant: 1 for the tenant's config (rules, "defaults"), 0 for the
 * shipped one. *use_defaults receives the "defaults" setting. */
static int parse_top(const json_t *json, const char *where, int tenant, struct policy_risk *r,
                     int *use_defaults, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	char at[96];
	int rc = 0;

	if (!json_is_object(json))
		return bad(err, errlen, "%s: must be an object", where);
	json_object_foreach((json_t *)json, key, v)
	{
		snprintf(at, sizeof(at), "%.40s.%.24s", where, key);
		if (!strcmp(key, "rules")) {
			rc = parse_rules(v, at, r, err, errlen);
		} else if (!strcmp(key, "evaluate")) {
			rc = parse_verdict(v, at, &r->evaluate, err, errlen);
		} else if (!strcmp(key, "default")) {
			rc = parse_verdict(v, at, &r->fallback, err, errlen);
		} else if (!strcmp(key, "defaults") && tenant) {
			if (!json_is_boolean(v))
				rc = bad(err, errlen, "%s: must be true or false", at);
			else
				*use_defaults = json_is_true(v);
		} else if (!strcmp(key, "approval_ttl_seconds")) {
			json_int_t s = json_integer_value(v);

			if (!json_is_integer(v) || s < TTL_MIN_S || s > TTL_MAX_S)
				rc = bad(err, errlen,
				         "%s: must be a whole number of seconds from %d to %d", at,
				         TTL_MIN_S, TTL_MAX_S);
			else
				r->ttl_ms = (int64_t)s * 1000;
		} else {
			rc = bad(err, errlen,
			         "%s: unknown key: use rules, evaluate, default, defaults or "
			         "approval_ttl_seconds",
			         at);
		}
		if (rc < 0)
			break;
	}
	return rc;
}

int policy_risk_parse(const json_t *json, struct policy_risk **out, char *err, size_t errlen)
{
	struct policy_risk *r = NULL;
	json_t *shipped = NULL;
	json_t *shipped_rules = NULL;
	json_error_t jerr;
	int use_defaults = 1;
	int rc = 0;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		rc = -POLICY_ENOMEM;
		snprintf(err, errlen, "out of memory parsing the risk rules");
		goto out;
	}
	r->evaluate = POLICY_RISK_APPROVE;
	r->fallback = POLICY_RISK_ALLOW;
	r->ttl_ms = (int64_t)TTL_DEFAULT_S * 1000;
	shipped = json_loads(policy_risk_defaults_text, 0, &jerr);
	if (!shipped) {
		rc = bad(err, errlen,
		         "the shipped risk rules do not parse (line %d: %s): this is a "
		         "bug in glassbox",
		         jerr.line, jerr.text);
		goto out;
	}
	/* the shipped settings, then the tenant's config over them (its rules
	 * first), then the shipped rules after the tenant's */
	shipped_rules = json_incref(json_object_get(shipped, "rules"));
	json_object_del(shipped, "rules");
	rc = parse_top(shipped, "shipped", 0, r, &use_defaults, err, errlen);
	if (rc == 0 && json)
		rc = parse_top(json, "risk", 1, r, &use_defaults, err, errlen);
	if (rc == 0 && use_defaults && shipped_rules)
		rc = parse_rules(shipped_rules, "shipped.rules", r, err, errlen);
	if (rc < 0)
		goto out;
	*out = r;
	r = NULL;
out:
	json_decref(shipped_rules);
	json_decref(shipped);
	policy_risk_free(r);
	return rc;
}

/* ---- classifying ----------------------------------------------------------- */

/* The facts, normalised once per classification. */
struct risk_scratch {
	char text[RISK_NORM_MAX];
	char name[RISK_NORM_MAX];
	char aria[RISK_NORM_MAX];
	char title[RISK_NORM_MAX];
	char form_url[RISK_NORM_MAX];
	char form_label[RISK_NORM_MAX];
	char page_host[RISK_HOST_MAX];
	int cross_site;
};

/* 1 when any word entry of l occurs in the normalised text norm. */
static int words_in(const struct risk_list *l, const char *norm)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strstr(norm, l->e[i].text))
			return 1;
	}
	return 0;
}

/* 1 when value equals an entry of l (case-insensitive), or starts with a
 * prefix entry. */
static int exact_in(const struct risk_list *l, const char *value)
{
	size_t i;

	if (!value)
		return 0;
	for (i = 0; i < l->n; i++) {
		size_t n = strlen(l->e[i].text);

		if (l->e[i].prefix ? !strncasecmp(value, l->e[i].text, n)
		                   : !strcasecmp(value, l->e[i].text))
			return 1;
	}
	return 0;
}

/* 1 when a whitespace-separated token of value is in l. */
static int token_in(const struct risk_list *l, const char *value)
{
	char tok[POLICY_RISK_WORD_MAX + 1];
	size_t i = 0;
	size_t n;

	if (!value)
		return 0;
	while (value[i] && i < POLICY_RISK_FACT_MAX) {
		i += strspn(value + i, " \t\r\n\f");
		n = strcspn(value + i, " \t\r\n\f");
		if (n > 0 && n < sizeof(tok)) {
			memcpy(tok, value + i, n);
			tok[n] = '\0';
			if (exact_in(l, tok))
				return 1;
		}
		i += n;
	}
	return 0;
}

/* 1 when host matches an entry of l ("shop.test", "*.shop.test"). */
static int host_in(const struct risk_list *l, const char *host)
{
	size_t hl = strlen(host);
	size_t i;

	if (!hl)
		return 0;
	for (i = 0; i < l->n; i++) {
		const char *pat = l->e[i].text;

		if (pat[0] == '*' && pat[1] == '\0')
			return 1;
		if (pat[0] == '*') {
			size_t pl = strlen(pat + 1); /* ".shop.test" */

			if (hl > pl && !strcmp(host + hl - pl, pat + 1))
				return 1;
		} else if (!strcmp(host, pat)) {
			return 1;
		}
	}
	return 0;
}

/* 1 when a tri-state condition holds for the fact value. */
static int flag_holds(int cond, int fact)
{
	return cond < 0 || (cond ? 1 : 0) == (fact ? 1 : 0);
}

static int destructive_form(const struct policy_action_facts *f)
{
	return f->is_destructive_form || (f->form_method && !strcasecmp(f->form_method, "DELETE"));
}

/* 1 when every condition of c holds for f. */
static int cond_holds(const struct risk_cond *c, const struct policy_action_facts *f,
                      const struct risk_scratch *s)
{
	if (c->kinds && !(c->kinds & (1u << f->kind)))
		return 0;
	if (c->text.set && !words_in(&c->text, s->text) && !words_in(&c->text, s->name) &&
	    !words_in(&c->text, s->aria) && !words_in(&c->text, s->title))
		return 0;
	if (c->form_words.set && !words_in(&c->form_words, s->form_url) &&
	    !words_in(&c->form_words, s->form_label))
		return 0;
	if (c->role.set && !exact_in(&c->role, f->role))
		return 0;
	if (c->tag.set && !exact_in(&c->tag, f->tag))
		return 0;
	if (c->input_type.set && !exact_in(&c->input_type, f->input_type))
		return 0;
	if (c->autocomplete.set && !token_in(&c->autocomplete, f->autocomplete))
		return 0;
	if (c->form_method.set && !exact_in(&c->form_method, f->form_method))
		return 0;
	if (c->keys.set && (f->kind != POLICY_ACT_PRESS || !exact_in(&c->keys, f->key)))
		return 0;
	if (c->page_host.set && !host_in(&c->page_host, s->page_host))
		return 0;
	if (c->dialog_accept >= 0 &&
	    (f->kind != POLICY_ACT_DIALOG || !flag_holds(c->dialog_accept, f->dialog_accept)))
		return 0;
	return flag_holds(c->destructive_form, destructive_form(f)) &&
	       flag_holds(c->submits_form, f->submits_form) &&
	       flag_holds(c->cross_site, s->cross_site) &&
	       flag_holds(c->download, f->starts_download);
}

/* Normalises the path and query of a form's action URL (not its host:
 * "delete.example.com/search" is not a destructive form). */
static void normalize_url_path(const char *url, char *out, size_t outlen)
{
	const char *p = url ? strstr(url, "://") : NULL;

	if (p)
		p = p + 3 + strcspn(p + 3, "/?#");
	else
		p = url;
	policy_risk_normalize(p, POLICY_RISK_FACT_MAX, out, outlen);
}

/* Fills in the scratch space from f. */
static void prepare(const struct policy_action_facts *f, struct risk_scratch *s)
{
	policy_risk_normalize(f->text, POLICY_RISK_FACT_MAX, s->text, sizeof(s->text));
	policy_risk_normalize(f->name, POLICY_RISK_FACT_MAX, s->name, sizeof(s->name));
	policy_risk_normalize(f->aria_label, POLICY_RISK_FACT_MAX, s->aria, sizeof(s->aria));
	policy_risk_normalize(f->title, POLICY_RISK_FACT_MAX, s->title, sizeof(s->title));
	normalize_url_path(f->form_action, s->form_url, sizeof(s->form_url));
	policy_risk_normalize(f->form_label, POLICY_RISK_FACT_MAX, s->form_label,
	                      sizeof(s->form_label));
	policy_risk_url_host(f->page_url, s->page_host, sizeof(s->page_host));
	s->cross_site = f->dest_url && policy_is_cross_site(f->page_url, f->dest_url);
}

/* Writes the agent's message for a decision that is not "allow": for a
 * forbidden action, also the line of the tenant's policy that would allow
 * it (for the operator; the agent cannot change the policy). */
static void write_message(struct policy_risk_decision *d, const struct policy_action_facts *f)
{
	char fix[300] = "";

	if (d->verdict == POLICY_RISK_FORBID && !strcmp(d->rule, "evaluate"))
		snprintf(fix, sizeof(fix),
		         " (the operator can allow scripts with \"risk\": {\"evaluate\": "
		         "\"allow\"} in the tenant's policy)");
	else if (d->verdict == POLICY_RISK_FORBID)
		snprintf(
		    fix, sizeof(fix),
		    " (the operator can allow it with a rule of the tenant's policy that comes "
		    "first: \"risk\": {\"rules\": [{\"name\": \"allow-%s\", \"decision\": "
		    "\"allow\", \"when\": {\"kind\": \"%s\", ...}}]})",
		    policy_action_kind_name(f->kind), policy_action_kind_name(f->kind));
	if (d->verdict == POLICY_RISK_APPROVE)
		snprintf(d->message, sizeof(d->message),
		         "this action needs a person's approval (rule %s): %s", d->rule,
		         d->summary);
	else if (d->verdict == POLICY_RISK_FORBID)
		snprintf(
		    d->message, sizeof(d->message),
		    "this action is forbidden by the tenant's policy (rule %s): %s. It cannot be "
		    "approved; do not retry it, choose another way or ask the operator%s",
		    d->rule, d->summary, fix);
	else
		d->message[0] = '\0';
}

int policy_risk_classify(const struct policy_risk *r, const struct policy_action_facts *facts,
                         struct policy_risk_decision *d)
{
	struct risk_scratch *s = NULL;
	size_t i;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	d->verdict = POLICY_RISK_FORBID;
	snprintf(d->rule, sizeof(d->rule), "invalid");
	if (!r || !facts || (int)facts->kind < 0 || facts->kind >= POLICY_ACT_KIND_COUNT) {
		snprintf(d->message, sizeof(d->message),
		         "the action could not be classified (no rules "
		         "or no facts): this is a bug in glassbox");
		rc = -POLICY_EINVAL;
		goto out;
	}
	policy_risk_summary(facts, d->summary, sizeof(d->summary));
	if (facts->kind == POLICY_ACT_EVALUATE) {
		d->verdict = r->evaluate;
		snprintf(d->rule, sizeof(d->rule), "evaluate");
		goto decided;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		snprintf(d->message, sizeof(d->message),
		         "out of memory classifying the action: try "
		         "again");
		rc = -POLICY_ENOMEM;
		goto out;
	}
	prepare(facts, s);
	d->verdict = r->fallback;
	snprintf(d->rule, sizeof(d->rule), "default");
	for (i = 0; i < r->nrules; i++) {
		if (cond_holds(&r->rules[i].when, facts, s)) {
			d->verdict = r->rules[i].verdict;
			snprintf(d->rule, sizeof(d->rule), "%s", r->rules[i].name);
			break;
		}
	}
decided:
	write_message(d, facts);
out:
	free(s);
	return rc;
}
