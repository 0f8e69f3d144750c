/*
 * risk_text.c - the text side of risk classification: word normalisation
 * (what "matches a word" means), hosts and registrable domains of URLs,
 * and the plain-language summary a person approves.
 *
 * Everything here is pure: no state, no locks, any thread.
 */
#include "policy/risk-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Longest quoted page text in a summary, bytes. */
#define SUMMARY_QUOTE_MAX 80
/* Longest URL in a summary, bytes. */
#define SUMMARY_URL_MAX 200

/* ---- word normalisation ---------------------------------------------------- */

/* Decodes one UTF-8 sequence at s (n bytes left). Returns its length and
 * the code point in *cp, or 0 for an invalid or truncated sequence. */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t len;
	size_t i;
	unsigned v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2;
		v = s[0] & 0x1Fu;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3;
		v = s[0] & 0x0Fu;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4;
		v = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3Fu);
	}
	if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
	    v > 0x10FFFF)
		return 0;
	*cp = v;
	return len;
}

/* Characters that render as nothing, or only reorder what follows (bidi
 * controls): dropped, so they can neither split a word nor disguise a
 * summary. */
static int is_invisible(unsigned cp)
{
	return cp == 0x00AD || cp == 0x034F || cp == 0x061C || cp == 0x180E ||
	       (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

/* C1 control characters: some terminals obey them. */
static int is_c1(unsigned cp)
{
	return cp >= 0x80 && cp <= 0x9F;
}

/* Characters that separate words although they are not ASCII. */
static int is_wide_space(unsigned cp)
{
	return cp == 0x00A0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0x00B7 ||
	       (cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x2030 && cp <= 0x205E);
}

/* Appends one byte if there is room (one byte is kept for the closing
 * space and one for the NUL). */
static void norm_put(char *out, size_t outlen, size_t *len, char c)
{
	if (*len + 2 < outlen)
		out[(*len)++] = c;
}

/* Appends a separating space unless the output already ends with one. */
static void norm_space(char *out, size_t outlen, size_t *len)
{
	if (*len > 0 && out[*len - 1] != ' ')
		norm_put(out, outlen, len, ' ');
}

size_t policy_risk_normalize(const char *in, size_t inlen, char *out, size_t outlen)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t n =
	    in ? strnlen(in, inlen < POLICY_RISK_FACT_MAX ? inlen : POLICY_RISK_FACT_MAX) : 0;
	size_t len = 0;
	size_t i = 0;

	if (outlen < 3) {
		if (outlen)
			out[0] = '\0';
		return 0;
	}
	out[len++] = ' ';
	while (i < n) {
		unsigned cp = 0;
		size_t step = utf8_decode(s + i, n - i, &cp);

		if (step == 0) { /* invalid UTF-8: a separator */
			norm_space(out, outlen, &len);
			i++;
			continue;
		}
		if (cp >= 0xFF01 && cp <= 0xFF5E) /* fullwidth ASCII */
			cp -= 0xFEE0;
		if (cp < 0x80) {
			if (cp >= 'A' && cp <= 'Z')
				norm_put(out, outlen, &len, (char)(cp - 'A' + 'a'));
			else if ((cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9'))
				norm_put(out, outlen, &len, (char)cp);
			else
				norm_space(out, outlen, &len);
		} else if (is_invisible(cp)) {
			/* dropped */
		} else if (is_wide_space(cp) || is_c1(cp)) {
			norm_space(out, outlen, &len);
		} else if (len + step + 2 < outlen) {
			memcpy(out + len, s + i, step);
			len += step;
		}
		i += step;
	}
	if (out[len - 1] != ' ')
		out[len++] = ' ';
	out[len] = '\0';
	return len;
}

/* ---- hosts and sites --------------------------------------------------------- */

int policy_risk_url_host(const char *url, char *host, size_t hostlen)
{
	const char *p;
	const char *end;
	const char *at;
	const char *colon;
	size_t n;
	size_t i;
	int ok = 0;

	if (hostlen)
		host[0] = '\0';
	if (!url || hostlen < 2)
		goto out;
	p = strstr(url, "://"); /* only the scheme separator is of interest here */
	if (!p)
		goto out;
	for (end = url; end < p; end++) {
		if (*end == '/' || *end == '?' || *end == '#') /* no scheme: a relative URL */
			goto out;
	}
	p += 3;
	end = p + strcspn(p, "/?#\\");
	at = NULL;
	for (i = 0; p + i < end; i++) {
		if (p[i] == '@')
			at = p + i;
	}
	if (at)
		p = at + 1;
	if (*p == '[') {
		colon = memchr(p, ']', (size_t)(end - p));
		if (!colon)
			goto out;
		p++;
		end = colon;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		if (colon)
			end = colon;
	}
	n = (size_t)(end - p);
	while (n > 0 && p[n - 1] == '.')
		n--;
	if (n == 0 || n >= hostlen)
		goto out;
	for (i = 0; i < n; i++) {
		char c = p[i];

		host[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	host[n] = '\0';
	ok = 1;
out:
	return ok;
}

/* Two-label public suffixes under which each label is a separate owner.
 * An approximation of the Public Suffix List: see risk.h. */
static const char *const two_level_suffixes[] = {
	"co.uk",
	"org.uk",
	"ac.uk",
	"gov.uk",
	"me.uk",
	"net.uk",
	"ltd.uk",
	"plc.uk",
	"nhs.uk",
	"sch.uk",
	"co.jp",
	"ne.jp",
	"or.jp",
	"ac.jp",
	"go.jp",
	"gr.jp",
	"com.au",
	"net.au",
	"org.au",
	"edu.au",
	"gov.au",
	"id.au",
	"co.nz",
	"org.nz",
	"net.nz",
	"govt.nz",
	"ac.nz",
	"com.br",
	"net.br",
	"org.br",
	"gov.br",
	"com.cn",
	"net.cn",
	"org.cn",
	"gov.cn",
	"edu.cn",
	"co.in",
	"net.in",
	"org.in",
	"gov.in",
	"ac.in",
	"co.za",
	"org.za",
	"gov.za",
	"com.mx",
	"org.mx",
	"gob.mx",
	"com.ar",
	"com.tr",
	"gov.tr",
	"co.kr",
	"or.kr",
	"go.kr",
	"com.sg",
	"edu.sg",
	"gov.sg",
	"com.hk",
	"org.hk",
	"com.tw",
	"org.tw",
	"co.il",
	"org.il",
	"ac.il",
	"com.my",
	"co.id",
	"or.id",
	"com.ph",
	"com.vn",
	"com.ua",
	"co.th",
	"in.th",
	"com.pl",
	"com.es",
	"com.pt",
	"co.at",
	"or.at",
	"com.sa",
	"com.eg",
	"com.ng",
	"co.ke",
	/* private suffixes: every subdomain is someone else's site */
	"github.io",
	"gitlab.io",
	"herokuapp.com",
	"vercel.app",
	"netlify.app",
	"pages.dev",
	"workers.dev",
	"web.app",
	"firebaseapp.com",
	"appspot.com",
	"blogspot.com",
	"azurewebsites.net",
	"cloudfront.net",
	"s3.amazonaws.com",
	"glitch.me",
	"fly.dev",
	"onrender.com",
	"ngrok.io",
	"ngrok-free.app",
};

/* 1 when host is an address literal (IPv4 dotted digits or IPv6). */
static int host_is_address(const char *host)
{
	size_t i;
	int digits_dots = 1;

	if (strchr(host, ':'))
		return 1;
	for (i = 0; host[i]; i++) {
		if (!((host[i] >= '0' && host[i] <= '9') || host[i] == '.'))
			digits_dots = 0;
	}
	return digits_dots;
}

void policy_registrable_domain(const char *host, char *out, size_t outlen)
{
	char h[RISK_HOST_MAX];
	size_t n;
	size_t i;
	size_t labels_wanted = 2;
	size_t seen = 0;
	const char *start;

	if (!outlen)
		return;
	out[0] = '\0';
	if (!host || !host[0])
		return;
	n = strnlen(host, sizeof(h) - 1);
	for (i = 0; i < n; i++)
		h[i] = (host[i] >= 'A' && host[i] <= 'Z') ? (char)(host[i] - 'A' + 'a') : host[i];
	while (n > 0 && h[n - 1] == '.')
		n--;
	h[n] = '\0';
	if (n == 0 || host_is_address(h)) {
		snprintf(out, outlen, "%s", h);
		return;
	}
	for (i = 0; i < sizeof(two_level_suffixes) / sizeof(two_level_suffixes[0]); i++) {
		size_t sl = strlen(two_level_suffixes[i]);

		if (n > sl && h[n - sl - 1] == '.' && !strcmp(h + n - sl, two_level_suffixes[i])) {
			labels_wanted = 3;
			break;
		}
	}
	/* walk back over labels_wanted labels */
	start = h;
	for (i = n; i > 0; i--) {
		if (h[i - 1] == '.') {
			seen++;
			if (seen == labels_wanted) {
				start = h + i;
				break;
			}
		}
	}
	snprintf(out, outlen, "%s", start);
}

int policy_is_cross_site(const char *from_url, const char *to_url)
{
	char a[RISK_HOST_MAX];
	char b[RISK_HOST_MAX];
	char sa[RISK_HOST_MAX];
	char sb[RISK_HOST_MAX];

	if (!policy_risk_url_host(from_url, a, sizeof(a)) ||
	    !policy_risk_url_host(to_url, b, sizeof(b)))
		return 0;
	policy_registrable_domain(a, sa, sizeof(sa));
	policy_registrable_domain(b, sb, sizeof(sb));
	return strcmp(sa, sb) != 0;
}

/* ---- the summary ------------------------------------------------------------- */

/* A summary under construction: appends never overflow; the text is cut. */
struct summary {
	char *buf;
	size_t cap;
	size_t len;
};

static void sum_add(struct summary *s, const char *text, size_t n)
{
	if (s->cap == 0)
		return;
	if (n > s->cap - 1 - s->len)
		n = s->cap - 1 - s->len;
	memcpy(s->buf + s->len, text, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

static void sum_str(struct summary *s, const char *text)
{
	sum_add(s, text, strlen(text));
}

static void sum_fmt(struct summary *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sum_fmt(struct summary *s, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sum_add(s, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Appends page text between quotes: whitespace and control characters
 * collapsed to one space, quotes and backslashes escaped, cut after
 * max_bytes on a character boundary with "...". */
static void sum_quoted(struct summary *s, const char *text, size_t max_bytes)
{
	const unsigned char *p = (const unsigned char *)text;
	char out[SUMMARY_QUOTE_MAX * 4 + 16]; /* escapes at most double max_bytes, plus "..." */
	size_t o = 0;
	size_t used = 0;
	int space = 0;

	if (max_bytes > SUMMARY_QUOTE_MAX * 2)
		max_bytes = SUMMARY_QUOTE_MAX * 2;

	while (*p == ' ' || (*p && *p < 0x20))
		p++;
	while (*p) {
		unsigned cp = 0;
		size_t step = utf8_decode(p, strnlen((const char *)p, 4), &cp);

		if (step == 0) {
			step = 1;
			cp = 0xFFFD;
		}
		if (cp <= 0x20 || cp == 0x7F || is_c1(cp) || is_wide_space(cp) ||
		    is_invisible(cp)) {
			space = 1;
			p += step;
			continue;
		}
		if (used + step + (space ? 1 : 0) > max_bytes) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (space && o > 0) {
			out[o++] = ' ';
			used++;
		}
		space = 0;
		if (cp == '"' || cp == '\\')
			out[o++] = '\\';
		if (cp == 0xFFFD && step == 1) {
			out[o++] = '?';
		} else {
			memcpy(out + o, p, step);
			o += step;
		}
		used += step;
		p += step;
	}
	sum_str(s, "\"");
	sum_add(s, out, o);
	sum_str(s, "\"");
}

/* Appends a URL, cut after SUMMARY_URL_MAX bytes with "...". Spaces,
 * control characters and every non-ASCII byte are shown as %XX, so the
 * URL stays one token and nothing in it can reorder or hide the text. */
static void sum_url(struct summary *s, const char *url)
{
	size_t i;

	for (i = 0; url[i] && i < SUMMARY_URL_MAX; i++) {
		unsigned char c = (unsigned char)url[i];

		if (c <= 0x20 || c >= 0x7F)
			sum_fmt(s, "%%%02X", c);
		else
			sum_add(s, url + i, 1);
	}
	if (url[i])
		sum_str(s, "...");
}

static int nonempty(const char *s)
{
	size_t i;

	if (!s)
		return 0;
	for (i = 0; s[i]; i++) {
		if ((unsigned char)s[i] > ' ')
			return 1;
	}
	return 0;
}

/* Appends a role or tag name: ASCII letters, digits, '-' and ' ' as they
 * are, anything else as '?' (these come from the page too). */
static void sum_word(struct summary *s, const char *word, size_t max_bytes)
{
	size_t i;

	for (i = 0; word[i] && i < max_bytes; i++) {
		char c = word[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == ' '))
			c = '?';
		sum_add(s, &c, 1);
	}
}

/* 1 when a and b read the same once normalised (case, punctuation and
 * spacing ignored). */
static int same_words(const char *a, const char *b)
{
	char na[RISK_NORM_MAX];
	char nb[RISK_NORM_MAX];

	policy_risk_normalize(a, POLICY_RISK_FACT_MAX, na, sizeof(na));
	policy_risk_normalize(b, POLICY_RISK_FACT_MAX, nb, sizeof(nb));
	return strcmp(na, nb) == 0;
}

/* What the target is: its role, else a word for its tag. */
static const char *target_noun(const struct policy_action_facts *f)
{
	if (f->input_type && !strcmp(f->input_type, "password"))
		return "password field";
	if (f->input_type && !strcmp(f->input_type, "file"))
		return "file input";
	if (nonempty(f->role) && strcmp(f->role, "generic") != 0 && strcmp(f->role, "none") != 0)
		return f->role;
	if (nonempty(f->tag))
		return f->tag;
	return "element";
}

/* Appends 'button "Delete account" (accessible name "Cancel")': the
 * visible text first, since that is what a person sees on the page, then
 * whatever the accessible name or aria-label says that differs. */
static void sum_target(struct summary *s, const struct policy_action_facts *f)
{
	const char *primary = NULL;

	sum_word(s, target_noun(f), 40);
	if (nonempty(f->text))
		primary = f->text;
	else if (nonempty(f->name))
		primary = f->name;
	else if (nonempty(f->aria_label))
		primary = f->aria_label;
	else if (nonempty(f->title))
		primary = f->title;
	if (primary) {
		sum_str(s, " ");
		sum_quoted(s, primary, SUMMARY_QUOTE_MAX);
	}
	if (primary && nonempty(f->name) && !same_words(f->name, primary)) {
		sum_str(s, " (accessible name ");
		sum_quoted(s, f->name, SUMMARY_QUOTE_MAX);
		sum_str(s, ")");
	}
	if (primary && nonempty(f->aria_label) && !same_words(f->aria_label, primary) &&
	    !(nonempty(f->name) && same_words(f->aria_label, f->name))) {
		sum_str(s, " (aria-label ");
		sum_quoted(s, f->aria_label, SUMMARY_QUOTE_MAX);
		sum_str(s, ")");
	}
	if (nonempty(f->autocomplete)) {
		sum_str(s, " (autocomplete ");
		sum_quoted(s, f->autocomplete, 40);
		sum_str(s, ")");
	}
}

/* Appends " on URL" and, for a child frame, " in frame URL". */
static void sum_where(struct summary *s, const struct policy_action_facts *f)
{
	if (nonempty(f->page_url)) {
		sum_str(s, " on ");
		sum_url(s, f->page_url);
	}
	if (nonempty(f->frame_url) && (!f->page_url || strcmp(f->frame_url, f->page_url) != 0)) {
		sum_str(s, " in frame ");
		sum_url(s, f->frame_url);
	}
}

/* Length of "scheme://authority" of url, or 0. */
static size_t origin_len(const char *url)
{
	const char *p = url ? strstr(url, "://") : NULL;

	if (!p)
		return 0;
	p += 3;
	return (size_t)(p - url) + strcspn(p, "/?#");
}

/* Appends ", submits POST /orders/delete": the path alone when the form
 * posts to the page's own origin, the whole URL otherwise. */
static void sum_form(struct summary *s, const struct policy_action_facts *f)
{
	size_t po = origin_len(f->page_url);
	size_t fo = origin_len(f->form_action);
	const char *method = nonempty(f->form_method) ? f->form_method : "GET";
	size_t i;

	if (!f->submits_form)
		return;
	sum_str(s, ", submits ");
	for (i = 0; method[i] && i < 16; i++) {
		char c = method[i];

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if ((c >= 'A' && c <= 'Z') || c == '-')
			sum_add(s, &c, 1);
	}
	if (!nonempty(f->form_action))
		return;
	sum_str(s, " ");
	if (po && fo && po == fo && !strncmp(f->page_url, f->form_action, po) &&
	    f->form_action[fo] == '/')
		sum_url(s, f->form_action + fo);
	else
		sum_url(s, f->form_action);
	if (nonempty(f->form_label)) {
		sum_str(s, " (form ");
		sum_quoted(s, f->form_label, SUMMARY_QUOTE_MAX);
		sum_str(s, ")");
	}
}

/* Appends " (another site: pay.example)" when to is cross-site from from. */
static void sum_cross_site(struct summary *s, const char *from, const char *to)
{
	char host[RISK_HOST_MAX];
	char site[RISK_HOST_MAX];

	if (!policy_is_cross_site(from, to) || !policy_risk_url_host(to, host, sizeof(host)))
		return;
	policy_registrable_domain(host, site, sizeof(site));
	sum_str(s, " (another site: ");
	sum_url(s, site); /* the host is the page's to choose: shown as a URL is */
	sum_str(s, ")");
}

/* Number of '\n'-separated values (select): 0 for none. */
static size_t value_count(const struct policy_action_facts *f)
{
	size_t n = 1;
	size_t i;

	if (!f->value || f->value_len == 0)
		return 0;
	for (i = 0; i < f->value_len; i++) {
		if (f->value[i] == '\n')
			n++;
	}
	return n;
}

/* Appends the key of a press: short, printable, quoted when odd. */
static void sum_key(struct summary *s, const char *key)
{
	if (!key || !key[0]) {
		sum_str(s, "a key");
		return;
	}
	if (!strcmp(key, " ")) {
		sum_str(s, "Space");
		return;
	}
	sum_quoted(s, key, 32);
}

void policy_risk_summary(const struct policy_action_facts *f, char *buf, size_t buflen)
{
	struct summary s = { buf, buflen, 0 };
	size_t n;

	if (!buflen)
		return;
	buf[0] = '\0';
	if (!f)
		return;
	switch (f->kind) {
	case POLICY_ACT_CLICK:
		sum_str(&s, "click ");
		sum_target(&s, f);
		sum_where(&s, f);
		sum_form(&s, f);
		if (nonempty(f->dest_url) && !f->submits_form) {
			sum_str(&s, ", goes to ");
			sum_url(&s, f->dest_url);
			sum_cross_site(&s, f->page_url, f->dest_url);
		}
		if (f->starts_download)
			sum_str(&s, ", starts a download");
		break;
	case POLICY_ACT_TYPE:
		sum_fmt(&s, "type %zu character%s into ", f->value_len,
		        f->value_len == 1 ? "" : "s");
		sum_target(&s, f);
		sum_where(&s, f);
		sum_form(&s, f);
		break;
	case POLICY_ACT_SELECT:
		n = value_count(f);
		sum_fmt(&s, "choose %zu option%s in ", n, n == 1 ? "" : "s");
		sum_target(&s, f);
		sum_where(&s, f);
		break;
	case POLICY_ACT_PRESS:
		sum_str(&s, "press ");
		sum_key(&s, f->key);
		if (nonempty(f->role) || nonempty(f->tag) || nonempty(f->name) ||
		    nonempty(f->text)) {
			sum_str(&s, " on ");
			sum_target(&s, f);
		}
		sum_where(&s, f);
		sum_form(&s, f);
		break;
	case POLICY_ACT_HOVER:
		sum_str(&s, "hover over ");
		sum_target(&s, f);
		sum_where(&s, f);
		break;
	case POLICY_ACT_DRAG:
		sum_str(&s, "drag ");
		sum_target(&s, f);
		sum_where(&s, f);
		break;
	case POLICY_ACT_NAVIGATE:
		if (nonempty(f->page_url) && strcmp(f->page_url, "about:blank") != 0) {
			sum_str(&s, "navigate from ");
			sum_url(&s, f->page_url);
			sum_str(&s, " to ");
		} else {
			sum_str(&s, "navigate to ");
		}
		sum_url(&s, nonempty(f->dest_url) ? f->dest_url : "(unknown)");
		sum_cross_site(&s, f->page_url, f->dest_url);
		break;
	case POLICY_ACT_EVALUATE:
		sum_fmt(&s, "run a script (%zu character%s)", f->value_len,
		        f->value_len == 1 ? "" : "s");
		sum_where(&s, f);
		break;
	case POLICY_ACT_UPLOAD:
		sum_fmt(&s, "upload %zu file%s into ", f->file_count,
		        f->file_count == 1 ? "" : "s");
		sum_target(&s, f);
		sum_where(&s, f);
		break;
	case POLICY_ACT_DIALOG:
		sum_str(&s, f->dialog_accept ? "accept the dialog " : "dismiss the dialog ");
		sum_quoted(&s, nonempty(f->text) ? f->text : "", SUMMARY_QUOTE_MAX * 2);
		sum_where(&s, f);
		break;
	case POLICY_ACT_OTHER:
	case POLICY_ACT_KIND_COUNT:
	default:
		sum_str(&s, "act on ");
		sum_target(&s, f);
		sum_where(&s, f);
		break;
	}
}
