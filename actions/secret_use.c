/*
 * secret_use.c - typing a tenant's secret (browser_type with `secret`)
 * and keeping it out of everything the agent and the record see.
 *
 * DESIGN
 * - The agent names a secret; the value is opened from the tenant's
 *   sealed store (secrets/) on the worker thread, only for the call.
 * - Right before Input.insertText, one function runs in an isolated world
 *   of the target's frame (page scripts cannot fake what it reads): the
 *   target must be the element that has the keyboard focus (through
 *   shadow roots) of a document that has focus, the frame's origin must
 *   be on the secret's hosts, and the field of a kind the secret allows.
 *   A page that moves focus, navigates its frame or swaps the field
 *   between the actionability check and the typing is refused, with the
 *   reason and never the value.
 * - Every value typed in this agent session is remembered (worker thread
 *   only, wiped when the session ends) so that finish() can replace it in
 *   the result, the ledger and the audit record with "[secret NAME]",
 *   raw and in its URL- and JSON-encoded forms: whatever the page echoes
 *   back (an evaluate, a URL with the value in its query, a console
 *   message) is scrubbed. The fields that received a secret are masked in
 *   later snapshots.
 */
#include "actions/actions-private.h"

#include "cdp/cdp.h"
#include "common/log.h"
#include "secrets/secrets.h"
#include "sessions/sessions.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACT_MAX_TYPED_SECRETS 64
#define ACT_MAX_MASKED_FIELDS 256

/* One value typed in this session, with the encodings it may come back in. */
struct act_typed_secret {
	char name[SECRET_NAME_MAX + 1];
	char *forms[4]; /* raw, percent-encoded, form-encoded, JSON-escaped (NULL: same) */
	size_t lens[4];
};

/* ---- policy ---------------------------------------------------------------- */

void act_secrets_start(struct act_session *s, const struct policy_tenant *policy)
{
	const struct policy_tenant_settings *st = policy_tenant_settings(policy);

	/* page_content, checked with the rest of the policy (policy/tenant.h) */
	s->hidden_text = st && st->hidden_text_drop ? SNAP_HIDDEN_DROP : SNAP_HIDDEN_FLAG;
}

void act_secrets_stop(struct act_session *s)
{
	size_t i, k;

	for (i = 0; i < s->n_typed_secrets; i++)
		for (k = 0; k < 4; k++)
			if (s->typed_secrets[i].forms[k]) {
				sodium_memzero(s->typed_secrets[i].forms[k],
				               s->typed_secrets[i].lens[k]);
				free(s->typed_secrets[i].forms[k]);
			}
	free(s->typed_secrets);
	s->typed_secrets = NULL;
	s->n_typed_secrets = 0;
	free(s->masked_fields);
	s->masked_fields = NULL;
	s->n_masked_fields = 0;
}

/* ---- remembering what was typed ------------------------------------------- */

/* encodeURIComponent (form: spaces as '+', as forms send them) of v. */
static char *percent_encode(const unsigned char *v, size_t len, int form)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = malloc(len * 3 + 1);
	size_t i, o = 0;

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = v[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    strchr("-_.!~*'()", c)) {
			out[o++] = (char)c;
		} else if (form && c == ' ') {
			out[o++] = '+';
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}

/* The value as it appears inside a JSON string (without the quotes). */
static char *json_escaped(const unsigned char *v, size_t len)
{
	json_t *s = json_stringn((const char *)v, len);
	char *dump = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	char *out = NULL;
	size_t l;

	json_decref(s);
	if (dump && (l = strlen(dump)) >= 2) {
		out = strndup(dump + 1, l - 2);
		sodium_memzero(dump, l);
	}
	free(dump);
	return out;
}

/* Remembers value as typed under name (for scrubbing). */
UNITTEST void act_secrets_remember(struct act_session *s, const char *name,
                                   const unsigned char *value, size_t len)
{
	struct act_typed_secret *t;
	size_t i, k;

	for (i = 0; i < s->n_typed_secrets; i++)
		if (s->typed_secrets[i].lens[0] == len &&
		    !memcmp(s->typed_secrets[i].forms[0], value, len))
			return;
	if (s->n_typed_secrets >= ACT_MAX_TYPED_SECRETS)
		return;
	t = realloc(s->typed_secrets, (s->n_typed_secrets + 1) * sizeof(*t));
	if (!t)
		return;
	s->typed_secrets = t;
	t = &s->typed_secrets[s->n_typed_secrets];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->forms[0] = strndup((const char *)value, len);
	t->forms[1] = percent_encode(value, len, 0);
	t->forms[2] = percent_encode(value, len, 1);
	t->forms[3] = json_escaped(value, len);
	for (k = 0; k < 4; k++) {
		t->lens[k] = t->forms[k] ? strlen(t->forms[k]) : 0;
		if (k && t->forms[k] && !strcmp(t->forms[k], t->forms[0])) {
			sodium_memzero(t->forms[k], t->lens[k]);
			free(t->forms[k]);
			t->forms[k] = NULL;
			t->lens[k] = 0;
		}
	}
	if (!t->forms[0])
		return;
	s->n_typed_secrets++;
}

void act_secrets_note_typed(struct act_session *s, const char *text)
{
	if (text && strlen(text) >= ACT_TYPED_PASSWORD_MIN)
		act_secrets_remember(s, "typed password", (const unsigned char *)text,
		                     strlen(text));
}

/* Remembers the field that received a secret, to mask it later. */
static void remember_field(struct act_session *s, const char *session_id, int backend_node_id,
                           const char *frame_id)
{
	struct snap_masked *m;
	size_t i;

	if (!backend_node_id)
		return;
	for (i = 0; i < s->n_masked_fields; i++)
		if (s->masked_fields[i].backend_node_id == backend_node_id &&
		    !strcmp(s->masked_fields[i].session_id, session_id))
			return;
	if (s->n_masked_fields >= ACT_MAX_MASKED_FIELDS)
		return;
	m = realloc(s->masked_fields, (s->n_masked_fields + 1) * sizeof(*m));
	if (!m)
		return;
	s->masked_fields = m;
	snprintf(m[s->n_masked_fields].session_id, sizeof(m->session_id), "%s", session_id);
	m[s->n_masked_fields].backend_node_id = backend_node_id;
	snprintf(m[s->n_masked_fields].frame_id, sizeof(m->frame_id), "%s",
	         frame_id ? frame_id : "");
	s->n_masked_fields++;
}

/* ---- scrubbing ------------------------------------------------------------ */

char *act_secrets_scrub_text(const struct act_session *s, const char *text)
{
	struct gb_buf b;
	const char *p = text;
	int changed = 0;
	size_t i, k;

	if (!text || !s->n_typed_secrets)
		return NULL;
	gb_buf_init(&b, strlen(text) * 2 + 65536);
	while (*p) {
		size_t best = 0;
		const char *name = NULL;

		for (i = 0; i < s->n_typed_secrets; i++)
			for (k = 0; k < 4; k++) {
				const struct act_typed_secret *t = &s->typed_secrets[i];

				if (t->forms[k] && t->lens[k] > best &&
				    !strncmp(p, t->forms[k], t->lens[k])) {
					best = t->lens[k];
					name = t->name;
				}
			}
		if (best) {
			gb_buf_appendf(&b, "[secret %s]", name);
			p += best;
			changed = 1;
		} else {
			gb_buf_append(&b, p, 1);
			p++;
		}
	}
	if (!changed) {
		gb_buf_free(&b);
		return NULL;
	}
	return gb_buf_steal(&b);
}

void act_secrets_scrub_json(const struct act_session *s, json_t *j)
{
	const char *key;
	json_t *v;
	size_t i;

	if (!j || !s->n_typed_secrets)
		return;
	if (json_is_string(j)) {
		char *clean = act_secrets_scrub_text(s, json_string_value(j));

		if (clean) {
			json_string_set(j, clean);
			free(clean);
		}
	} else if (json_is_object(j)) {
		json_object_foreach(j, key, v) act_secrets_scrub_json(s, v);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) act_secrets_scrub_json(s, v);
	}
}

/* Replaces b's text with itself scrubbed of the session's typed secrets. */
static void scrub_buf(const struct act_session *as, struct gb_buf *b)
{
	char *clean = b->data ? act_secrets_scrub_text(as, b->data) : NULL;
	size_t max = b->max_bytes;

	if (!clean)
		return;
	gb_buf_free(b);
	gb_buf_init(b, max);
	gb_buf_append(b, clean, strlen(clean));
	free(clean);
}

void act_secrets_scrub_call(struct act_ctx *ctx)
{
	char *clean;

	if (!ctx->as->n_typed_secrets)
		return;
	act_secrets_scrub_json(ctx->as, ctx->out);
	act_secrets_scrub_json(ctx->as, ctx->content);
	clean = act_secrets_scrub_text(ctx->as, ctx->error);
	if (clean) {
		snprintf(ctx->error, sizeof(ctx->error), "%s", clean);
		free(clean);
	}
	scrub_buf(ctx->as, &ctx->text);
	scrub_buf(ctx->as, &ctx->code);
	scrub_buf(ctx->as, &ctx->result);
	scrub_buf(ctx->as, &ctx->events);
	clean = ctx->snapshot ? act_secrets_scrub_text(ctx->as, ctx->snapshot) : NULL;
	if (clean) {
		free(ctx->snapshot);
		ctx->snapshot = clean;
	}
}

/* ---- typing --------------------------------------------------------------- */

/*
 * Read in an isolated world of the target's frame right before typing:
 * what has the keyboard focus, where the frame is, what the field is.
 */
static const char focus_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " let a = document.activeElement;"
    " while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;"
    " const desc = (n) => { if (!n) return 'nothing'; let s = n.tagName.toLowerCase();"
    "  if (n.id) s += '#' + n.id; if (n.type) s += '[type=' + n.type + ']'; return s; };"
    " return { focused: a === el && !!el && el.isConnected, doc_focus: document.hasFocus(),"
    "  active: desc(a), origin: self.origin, tag: el ? el.tagName.toLowerCase() : '',"
    "  type: el && el.tagName === 'INPUT' ? (el.type || 'text').toLowerCase() : '',"
    "  autocomplete: el ? (el.getAttribute('autocomplete') || '') : '' }; }";

/*
 * For a field that is not a password field: right before typing, the
 * focus is checked once more and the field marked autocomplete="off", so
 * that Chromium neither keeps its value in the profile's session state
 * (form state for session restore) nor offers it for autofill.
 */
static const char unsaved_js[] =
    "function() { const el = this.nodeType === 1 ? this : this.parentElement;"
    " let a = document.activeElement;"
    " while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;"
    " if (a !== el || !document.hasFocus()) return false;"
    " el.setAttribute('autocomplete', 'off'); return true; }";

/* Checks the focused field against the secret; 0 to type, or -1 with
 * the call failed (code secret_refused) and the reason. */
static int check_destination(struct act_ctx *ctx, const struct secret_meta *m, int *password)
{
	struct secret_field field;
	json_t *info = NULL;
	const char *origin;
	char url[600];
	char why[512];
	int rc = -1;

	if (act_call_in_isolated_world(ctx, focus_js, &info, "checking where the secret goes") < 0)
		goto out;
	origin = json_string_value(json_object_get(info, "origin"));
	if (!json_is_true(json_object_get(info, "focused")) ||
	    !json_is_true(json_object_get(info, "doc_focus"))) {
		act_fail(
		    ctx, "secret_refused",
		    "secret %s was not typed: the keyboard focus is on %.100s, not on %s (the page "
		    "moved it, or the field moved or was replaced); take a new snapshot and check "
		    "the field",
		    m->name,
		    json_is_true(json_object_get(info, "doc_focus"))
		        ? gb_or(json_string_value(json_object_get(info, "active")), "nothing")
		        : "another frame or window",
		    ctx->target.description);
		goto out;
	}
	snprintf(url, sizeof(url), "%.500s/", origin ? origin : "null");
	if (!origin || !strcmp(origin, "null") || !secret_host_allowed(m, url)) {
		size_t i;
		struct gb_buf hosts;
		struct gb_buf list;
		const char *site =
		    origin && strstr(origin, "://") ? strstr(origin, "://") + 3 : NULL;
		char hint[700] = "";

		gb_buf_init(&hosts, 4096);
		gb_buf_init(&list, 4096);
		for (i = 0; i < m->n_hosts; i++) {
			gb_buf_appendf(&hosts, "%s%s", i ? ", " : "", m->hosts[i]);
			gb_buf_appendf(&list, "%s,", m->hosts[i]);
		}
		/* what would lift it, for the secret's owner (the agent cannot) */
		if (site)
			snprintf(
			    hint, sizeof(hint),
			    ". If that site should get it, its owner sets the secret again with "
			    "the site among its hosts: glassbox secret set %s --hosts %.300s%.200s",
			    m->name, list.data ? list.data : "", site);
		act_fail(
		    ctx, "secret_refused",
		    "secret %s was not typed: %s is in a frame of %.200s, and %s may only be typed "
		    "on %s%s",
		    m->name, ctx->target.description,
		    origin && strcmp(origin, "null") ? origin
		                                     : "an opaque origin (sandboxed or "
		                                       "data: frame)",
		    m->name, hosts.data ? hosts.data : "", hint);
		gb_buf_free(&hosts);
		gb_buf_free(&list);
		goto out;
	}
	field.tag = json_string_value(json_object_get(info, "tag"));
	field.type = json_string_value(json_object_get(info, "type"));
	field.autocomplete = json_string_value(json_object_get(info, "autocomplete"));
	if (!secret_field_allowed(m, &field, why, sizeof(why))) {
		act_fail(
		    ctx, "secret_refused",
		    "secret %s was not typed into %s: %s; a secret goes only into the fields its "
		    "owner allowed (glassbox secret set --fields)",
		    m->name, ctx->target.description, why);
		goto out;
	}
	*password = field.type && !strcmp(field.type, "password");
	rc = 0;
out:
	json_decref(info);
	return rc;
}

int act_type_secret(struct act_ctx *ctx, const char *name, int submit)
{
	static const char value_js[] = "function() { return 'value' in this ? String(this.value) "
	                               ": (this.textContent || ''); }";
	struct act_session *as = ctx->as;
	struct secret_meta m;
	unsigned char *value = NULL;
	json_t *info = NULL, *now = NULL;
	size_t len = 0;
	char err[1024];
	double x, y;
	int password = 0;
	int rc;

	ctx->sensitive = 1; /* from here on: nothing typed is echoed or recorded */
	json_object_set_new(ctx->out, "secret", json_string(name));
	memset(&m, 0, sizeof(m));
	/* a --secrets file's (in memory), else the tenant's sealed store */
	if (secret_env_has(as->env_secrets, name)) {
		rc = secret_env_open(as->env_secrets, name, &m, &value, &len);
		snprintf(err, sizeof(err), "secret %s cannot be opened: out of memory", name);
	} else {
		rc =
		    secret_open(as->data_dir, as->tenant, name, &m, &value, &len, err, sizeof(err));
	}
	if (rc < 0) {
		rc = act_fail(ctx, rc == -ENOENT ? "unknown_secret" : "secret_unavailable", "%s",
		              err);
		goto out;
	}
	rc = act_actionable(ctx, "type", &x, &y, &info);
	if (rc < 0)
		goto out;
	/* the last check, on the element that has the focus now, then the text */
	rc = check_destination(ctx, &m, &password);
	if (rc < 0) {
		act_keeper_record(as->keeper, "secret_refused",
		                  ctx->sess ? sess_id(ctx->sess) : NULL, ctx->operation_id,
		                  json_pack("{s:s, s:s, s:s}", "secret", name, "target",
		                            ctx->target.description, "reason", ctx->error),
		                  0);
		goto out;
	}
	if (!password) {
		json_t *still = NULL;

		rc = act_call_in_isolated_world(ctx, unsaved_js, &still,
		                                "checking where the secret goes");
		if (rc == 0 && !json_is_true(still))
			rc = act_fail(
			    ctx, "secret_refused",
			    "secret %s was not typed: the keyboard focus "
			    "left %s while it was checked; take a new snapshot and check the field",
			    name, ctx->target.description);
		json_decref(still);
		if (rc < 0)
			goto out;
	}
	act_ledger_running(ctx);
	act_secrets_remember(as, name, value, len);
	rc = act_type_text(ctx, (const char *)value, 0);
	if (rc < 0)
		goto out;
	if (!password) {
		const struct snap_ref *ref =
		    ctx->target.ref[0] ? act_snapshot_find(&as->refs, ctx->target.ref) : NULL;

		remember_field(as, ctx->target.session_id, ctx->target.backend_node_id,
		               ref ? ref->frame_id : NULL);
	}
	gb_buf_appendf(&ctx->text, "Typed secret %s into %s", name, ctx->target.description);
	json_object_set_new(ctx->out, "value", json_string("••••"));
	if (act_call_in_isolated_world(ctx, value_js, &now, "re-reading the field") == 0)
		gb_buf_appendf(
		    &ctx->text, "\n- value re-read: %s",
		    json_is_string(now) && strlen(json_string_value(now)) == len &&
		            !memcmp(json_string_value(now), value, len)
		        ? "matches the secret (hidden)"
		        : "differs from the secret (hidden): the page changed the field");
	if (submit) {
		rc = act_press_key(ctx, "Enter", 0);
		gb_buf_appendf(&ctx->text, "\n- submitted with Enter");
	}
out:
	if (now && json_is_string(now))
		sodium_memzero((char *)json_string_value(now), strlen(json_string_value(now)));
	json_decref(now);
	json_decref(info);
	secret_value_free(value, len);
	return rc;
}

/* The box of one masked field in viewport CSS px; 0, 1 when it is not on
 * the page any more (nothing to mask), or -1 when it is but cannot be
 * placed (its frame's box is unknown). */
static int field_box(struct act_ctx *ctx, const struct snap_masked *m, struct evid_rect *r)
{
	struct cdp_error err;
	json_t *res = NULL;
	json_t *q;
	double minx = 1e9, miny = 1e9, maxx = -1e9, maxy = -1e9;
	double fx = 0, fy = 0;
	size_t i;
	int rc = -1;

	if (cdp_call(ctx->cdp, m->session_id, "DOM.getContentQuads",
	             json_pack("{s:i}", "backendNodeId", m->backend_node_id), act_left_ms(ctx),
	             &res, &err) < 0) {
		rc = 1; /* gone with its page or frame */
		goto out;
	}
	q = json_array_get(json_object_get(res, "quads"), 0);
	if (json_array_size(q) != 8) {
		rc = 1; /* not rendered */
		goto out;
	}
	/* a field in an out-of-process frame: its quads are in the frame's
	 * own viewport; the iframe's box in the page places them */
	if (strcmp(m->session_id, ctx->psid) != 0 &&
	    (!m->frame_id[0] || act_frame_offset(ctx, m->frame_id, 1, &fx, &fy) < 0))
		goto out;
	for (i = 0; i < 8; i += 2) {
		double x = json_number_value(json_array_get(q, i));
		double y = json_number_value(json_array_get(q, i + 1));

		minx = x < minx ? x : minx;
		maxx = x > maxx ? x : maxx;
		miny = y < miny ? y : miny;
		maxy = y > maxy ? y : maxy;
	}
	r->x = minx + fx + ctx->shot_dx;
	r->y = miny + fy + ctx->shot_dy;
	r->width = maxx - minx;
	r->height = maxy - miny;
	rc = 0;
out:
	json_decref(res);
	return rc;
}

int act_secrets_mask_png(struct act_ctx *ctx, unsigned char **png, size_t *len)
{
	struct act_session *as = ctx->as;
	struct evid_rect *rects = NULL;
	unsigned char *out = NULL;
	size_t n = 0, outlen = 0, i;
	char err[512];
	int rc = 0;

	if (!as->n_masked_fields || !ctx->cdp)
		return 0;
	rects = calloc(as->n_masked_fields, sizeof(*rects));
	if (!rects)
		return -1;
	for (i = 0; i < as->n_masked_fields && rc == 0; i++) {
		int found = field_box(ctx, &as->masked_fields[i], &rects[n]);

		if (found == 0)
			n++;
		else if (found < 0)
			rc = -1;
	}
	if (rc < 0)
		GB_LOGW("actions",
		        "a screenshot shows a field that received a secret whose place is "
		        "unknown: it is not kept");
	if (rc == 0 && n) {
		rc = evid_png_mask(*png, *len, rects, n, 1, &out, &outlen, err, sizeof(err));
		if (rc == 0) {
			free(*png);
			*png = out;
			*len = outlen;
			ctx->shot_masked = 1;
		} else {
			GB_LOGW("actions",
			        "a screenshot showing a secret's field could not be masked and "
			        "is not kept: %s",
			        err);
			rc = -1;
		}
	}
	free(rects);
	return rc;
}

void act_secrets_masked_ids(const struct act_session *s, struct snap_options *opt)
{
	opt->masked = s->masked_fields;
	opt->n_masked = s->n_masked_fields;
}
