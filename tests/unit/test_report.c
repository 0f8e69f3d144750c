/*
 * test_report.c - the HTML trail: it holds a row per record with the
 * element, URLs, verdicts, approvals, refusals, blocked requests and
 * inlined screenshots; hostile page text (a URL or element name carrying
 * markup) comes out escaped and inert; the header says whether the chain
 * verified; session and date filters; the CLI. When Chromium is
 * installed, the report is rendered headless: the DOM it builds is
 * checked, a thumbnail's full view opens without script, and screenshots
 * of both are saved in the test output ($GB_TEST_OUTPUT, else the test's
 * temp dir) for a person to look at.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "evidence_fixture.h"
#include "common/util.h"

#define TENANT "acme"
#define HOSTILE_URL "https://evil.example/?q=<script>alert(1)</script>&x=\"'"
#define HOSTILE_NAME "\"><img src=x onerror=alert(2)>Save"

static int setup(void **state)
{
	*state = fx_new();
	return 0;
}

static int teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* Number of times needle occurs in hay. */
static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	const char *p = hay;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

/* A trail with a hostile page, an approval, a refusal. */
static void build(struct fx *f)
{
	fx_build_trail(f, TENANT, "s-1", 2); /* 1 opened, 2-3 calls, 4 closed */
	fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, "s-2", NULL,
	          json_pack("{s:{s:s}}", "manifest", "chromium_version", "Chrome/156.0.8078.108"),
	          NULL); /* 5 */
	fx_append(f, TENANT, EVID_AUDIT_APPROVAL_GRANTED, "s-2", "op-7",
	          json_pack("{s:s, s:s, s:s, s:s}", "approval_id", "ap-1", "tool", "browser_click",
	                    "by", "alice@example.com", "at", "2026-03-01T10:00:00Z"),
	          NULL);                                              /* 6 */
	fx_tool_call(f, TENANT, "s-2", 7, HOSTILE_URL, HOSTILE_NAME); /* 7 */
	fx_append(f, TENANT, EVID_AUDIT_POLICY_REFUSAL, "s-2", "op-8",
	          json_pack("{s:s, s:s, s:s, s:s}", "tool", "browser_navigate", "rule",
	                    "egress.deny", "reason", "</dd><script>alert(3)</script>", "url",
	                    "http://169.254.169.254/latest/meta-data"),
	          NULL); /* 8 */
}

static char *report(struct fx *f, const char *session, const char *since, int *chain_ok)
{
	struct evid_report_opts o;
	struct evid_verify_report vrep;
	char err[1024] = "";
	char *html = NULL;
	size_t len = 0;

	memset(&o, 0, sizeof(o));
	o.tenant = session ? NULL : TENANT;
	o.session_id = session;
	o.since = since;
	o.verified = &vrep;
	if (evid_report_html(f->data, &o, &html, &len, err, sizeof(err)) != 0)
		fail_msg("report: %s", err);
	assert_int_equal(strlen(html), len);
	if (chain_ok)
		*chain_ok = vrep.ok;
	return html;
}

static void test_report_contents(void **state)
{
	struct fx *f = *state;
	char rule[160];
	char *html;
	int ok = 0;

	build(f);
	html = report(f, NULL, NULL, &ok);
	assert_true(ok);
	assert_non_null(strstr(html, "<!DOCTYPE html>"));
	assert_non_null(strstr(html, "Content-Security-Policy\" content=\"default-src 'none'"));
	assert_non_null(strstr(html, "✔ The audit chain verified"));
	assert_non_null(strstr(html, "8 records (seq 1–8)"));
	/* one row per record */
	assert_int_equal(count(html, "<li class=\"ev "), 8);
	assert_int_equal(count(html, "<li class=\"ev ok\""), 3);
	assert_int_equal(count(html, "<li class=\"ev refused\""), 1);
	assert_int_equal(count(html, "<li class=\"ev approval\""), 1);
	assert_int_equal(count(html, "<li class=\"ev session\""), 3);
	/* what a reviewer looks for */
	assert_non_null(strstr(html, "browser_click"));
	assert_non_null(strstr(html, "<dt>Element</dt><dd class=\"element\">button “Save”"));
	assert_non_null(strstr(html, "https://app.example/form"));
	assert_non_null(strstr(html, "https://app.example/saved"));
	assert_non_null(strstr(html, "url_changed"));
	assert_non_null(strstr(html, "approved by alice@example.com"));
	assert_non_null(strstr(html, "egress.deny"));
	assert_non_null(strstr(html, "https://tracker.example/pixel"));
	assert_non_null(strstr(html, "host not allowed"));
	assert_non_null(strstr(html, "Chrome/156.0.8078.108"));
	assert_non_null(strstr(html, "--proxy-server=127.0.0.1:1"));
	assert_non_null(strstr(html, "Snapshot the agent acted on"));
	assert_non_null(strstr(html, "Network log"));
	assert_non_null(strstr(html, "agent@example.com"));
	/* screenshots inlined once each, opened by their thumbnails */
	assert_int_equal(count(html, "data:image/png;base64,"),
	                 6); /* 3 calls x (shot, annotated) */
	snprintf(rule, sizeof(rule), ".i%s{background-image", f->shot_sha[2]);
	assert_int_equal(count(html, rule), 1);
	assert_non_null(strstr(html, "href=\"#v2-0\""));
	assert_non_null(strstr(html, "id=\"v2-0\""));
	/* hostile text is escaped and inert */
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "</dd><script>"));
	assert_non_null(strstr(html, "q=&lt;script&gt;alert(1)&lt;/script&gt;&amp;x=&quot;&#39;"));
	assert_non_null(strstr(html, "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;Save"));
	assert_non_null(strstr(html, "&lt;/dd&gt;&lt;script&gt;alert(3)&lt;/script&gt;"));
	free(html);
}

static void test_report_says_chain_failed(void **state)
{
	struct fx *f = *state;
	char path[512];
	char *lines[FX_MAX_RECORDS] = { 0 };
	char *text;
	char *p;
	size_t len;
	size_t n;
	char *html;
	int ok = 1;

	build(f);
	fx_day_file(f, TENANT, path, sizeof(path));
	text = fx_read(path, &len);
	n = fx_lines(text, lines, FX_MAX_RECORDS);
	p = strstr(lines[2], "\"title\":\"Save\"");
	assert_non_null(p);
	p[10] = 'D'; /* record 3: "Save" -> "Dave" */
	fx_write_lines(path, lines, n);
	free(text);
	html = report(f, NULL, NULL, &ok);
	assert_false(ok);
	assert_non_null(strstr(html, "✘ The audit chain did NOT verify"));
	assert_non_null(strstr(html, "First failure: record 3"));
	assert_non_null(strstr(html, "edited"));
	free(html);
}

static void test_report_filters(void **state)
{
	struct fx *f = *state;
	struct evid_report_opts o;
	char err[1024] = "";
	char *html = NULL;
	size_t len = 0;

	build(f);
	/* a session, its tenant found from the session id alone */
	html = report(f, "s-2", NULL, NULL);
	assert_non_null(strstr(html, "Session s-2 · tenant acme"));
	assert_int_equal(count(html, "<li class=\"ev "), 4); /* records 5-8 */
	assert_null(strstr(html, "https://app.example/saved"));
	free(html);
	/* a period that starts after everything: no rows */
	html = report(f, NULL, "2999-01-01", NULL);
	assert_int_equal(count(html, "<li class=\"ev "), 1);
	assert_non_null(strstr(html, "No records in this period."));
	free(html);
	/* unknown session: a clear error */
	memset(&o, 0, sizeof(o));
	o.session_id = "s-404";
	assert_int_equal(evid_report_html(f->data, &o, &html, &len, err, sizeof(err)),
	                 -EVID_ENOENT);
	assert_null(html);
	assert_non_null(strstr(err, "s-404"));
	o.session_id = "s-404";
	o.tenant = TENANT;
	assert_int_equal(evid_report_html(f->data, &o, &html, &len, err, sizeof(err)),
	                 -EVID_ENOENT);
	assert_non_null(strstr(err, "no records of session s-404"));
}

static void test_html_escape(void **state)
{
	struct gb_buf b;
	const char bad[] = "a\x01<b>\xff\xc3\xa9&\xed\xa0\x80z";
	char *s;

	(void)state;
	gb_buf_init(&b, 1024);
	assert_int_equal(evid_html_escape(&b, bad, sizeof(bad) - 1), 0);
	s = gb_buf_steal(&b);
	/* control char, a stray byte and a UTF-16 surrogate become U+FFFD; é stays */
	assert_string_equal(
	    s, "a\xEF\xBF\xBD&lt;b&gt;\xEF\xBF\xBD\xc3\xa9&amp;\xEF\xBF\xBD\xEF\xBF\xBD"
	       "\xEF\xBF\xBDz");
	free(s);
}

static int run_report_cli(const char *data, const char *a1, const char *a2, const char *a3,
                          const char *a4)
{
	char *argv[8] = { (char *)"report", (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL };
	int argc = 1;

	while (argc < 5 && argv[argc])
		argc++;
	return evid_cli_report(argc, argv, data);
}

static void test_report_cli(void **state)
{
	struct fx *f = *state;
	char out[512];
	char *text;
	size_t len;

	build(f);
	snprintf(out, sizeof(out), "%s/trail.html", f->root);
	assert_int_equal(run_report_cli(f->data, "--tenant", TENANT, "-o", out), 0);
	text = fx_read(out, &len);
	assert_int_equal(strncmp(text, "<!DOCTYPE html>", 15), 0);
	free(text);
	assert_int_equal(run_report_cli(f->data, "--session", "s-1", "-o", out), 0);
	assert_int_equal(run_report_cli(f->data, "--tenant", TENANT, NULL, NULL), 2);
	assert_int_equal(run_report_cli(f->data, "--bogus", "x", "-o", out), 2);
	assert_int_equal(run_report_cli(f->data, "--session", "nope", "-o", out), 3);
}

/* ---- rendered by a real browser -------------------------------------------- */

/* The Chromium to use, or NULL. */
static const char *find_chromium(void)
{
	static const char *const candidates[] = { "/usr/bin/chromium", "/usr/bin/chromium-browser",
		                                  "/usr/bin/google-chrome", NULL };
	const char *env = getenv("CHROMIUM");
	size_t i;

	if (env && env[0] && access(env, X_OK) == 0)
		return env;
	for (i = 0; candidates[i]; i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* Runs headless Chromium on url with one mode flag ("--dump-dom" or
 * "--screenshot=FILE"); stdout goes to out. Returns the exit status. */
static int chromium(const struct fx *f, const char *bin, const char *mode, const char *url,
                    const char *out)
{
	char cmd[4096];

	snprintf(
	    cmd, sizeof(cmd),
	    "timeout 120 '%s' --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage "
	    "--no-first-run --no-default-browser-check --disable-extensions "
	    "--disable-background-networking --hide-scrollbars --user-data-dir='%s/chrome' "
	    "--window-size=1280,1400 %s '%s' > '%s' 2>'%s/chrome.log'",
	    bin, f->root, mode, url, out, f->root);
	return system(cmd);
}

/* The RGB of pixel (x, y) of a PNG file. */
static void pixel_at(const char *path, unsigned x, unsigned y, unsigned char rgb[3])
{
	size_t len;
	char *png = fx_read(path, &len);
	unsigned w;
	unsigned h;
	unsigned char *px;
	char err[256] = "";

	if (evid_png_check((unsigned char *)png, len, NULL, err, sizeof(err)) != 0)
		fail_msg("%s: %s", path, err);
	px = fx_rgba((unsigned char *)png, len, &w, &h);
	assert_true(x < w && y < h);
	memcpy(rgb, px + ((size_t)y * w + x) * 4, 3);
	free(px);
	free(png);
}

static void test_report_in_chromium(void **state)
{
	struct fx *f = *state;
	const char *bin = find_chromium();
	const char *outdir = getenv("GB_TEST_OUTPUT");
	char html_path[512];
	char url[600];
	char dom_path[512];
	char shot[512];
	char shot_lb[512];
	unsigned char rgb[3];
	char *html;
	char *dom;
	size_t len;

	if (!bin) {
		print_message("    no Chromium found (set CHROMIUM): render check skipped\n");
		skip();
	}
	if (!outdir || !outdir[0])
		outdir = f->root;
	build(f);
	html = report(f, NULL, NULL, NULL);
	snprintf(html_path, sizeof(html_path), "%s/report-trail.html", outdir);
	fx_write(html_path, html, strlen(html));
	free(html);
	snprintf(url, sizeof(url), "file://%s", html_path);
	snprintf(dom_path, sizeof(dom_path), "%s/dom.html", f->root);

	/* the DOM the browser built: rows there, nothing injected */
	if (chromium(f, bin, "--dump-dom", url, dom_path) != 0)
		fail_msg("chromium --dump-dom failed; see %s/chrome.log", f->root);
	dom = fx_read(dom_path, &len);
	assert_int_equal(count(dom, "<li class=\"ev "), 8);
	assert_non_null(strstr(dom, "The audit chain verified"));
	assert_non_null(strstr(dom, "browser_click"));
	assert_non_null(strstr(dom, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_null(strstr(dom, "<script"));
	assert_null(strstr(dom, "<img"));
	free(dom);

	/* the page as a reviewer sees it, and a thumbnail's full view */
	snprintf(shot, sizeof(shot), "--screenshot=%s/report-trail.png", outdir);
	assert_int_equal(chromium(f, bin, shot, url, "/dev/null"), 0);
	snprintf(shot, sizeof(shot), "%s/report-trail.png", outdir);
	pixel_at(shot, 4, 4, rgb); /* the page background: light */
	assert_true(rgb[0] > 200 && rgb[1] > 200 && rgb[2] > 200);
	snprintf(url, sizeof(url), "file://%s#v7-0", html_path);
	snprintf(shot_lb, sizeof(shot_lb), "--screenshot=%s/report-fullview.png", outdir);
	assert_int_equal(chromium(f, bin, shot_lb, url, "/dev/null"), 0);
	snprintf(shot_lb, sizeof(shot_lb), "%s/report-fullview.png", outdir);
	pixel_at(shot_lb, 4, 4, rgb); /* the full view's dark backdrop covers the page */
	assert_true(rgb[0] < 80 && rgb[1] < 80 && rgb[2] < 80);
	print_message("    report screenshots: %s and %s\n", shot, shot_lb);
}

/* A served session: its client and flow named when it opened, a call
 * refused by the egress policy, one held for approval, the approval asked
 * for and granted by a person. Returns the report (new string). */
static char *actor_trail_report(struct fx *f)
{
	fx_append(f, TENANT, EVID_AUDIT_SESSION_OPENED, "s-9", NULL,
	          json_pack("{s:s, s:s}", "client", "inspector-cli", "flow", "checkout"),
	          NULL); /* 1 */
	fx_append(f, TENANT, EVID_AUDIT_TOOL_CALL, "s-9", "op-1",
	          json_pack("{s:s, s:b, s:{s:s, s:s}, s:[{s:s, s:s}]}", "tool", "browser_navigate",
	                    "ok", 0, "error", "code", "url_refused", "message",
	                    "evil.test is refused", "blocked", "url", "http://evil.test/", "rule",
	                    "egress-deny"),
	          NULL); /* 2 */
	fx_append(f, TENANT, "approval_event", NULL, "op-2",
	          json_pack("{s:s, s:s, s:s, s:s, s:s}", "event", "created", "approval_id", "apr-1",
	                    "tool", "browser_click", "rule", "destructive-click", "summary",
	                    "click button \"Delete all orders\""),
	          NULL); /* 3 */
	fx_append(f, TENANT, EVID_AUDIT_TOOL_CALL, "s-9", "op-2",
	          json_pack("{s:s, s:s, s:b, s:{s:s, s:s}, s:{s:s, s:s, s:s}}", "tool",
	                    "browser_click", "client", "inspector-cli", "ok", 0, "error", "code",
	                    "approval_required", "message", "not done", "element", "description",
	                    "button \"Delete all orders\" [e21]", "ref", "e21", "frame_url",
	                    "https://shop.example/orders-frame"),
	          NULL); /* 4 */
	fx_append(f, TENANT, EVID_AUDIT_APPROVAL_GRANTED, NULL, "op-2",
	          json_pack("{s:s, s:s, s:s, s:s}", "approval_id", "apr-1", "by", "alice",
	                    "channel", "admin-socket", "tool", "browser_click"),
	          NULL); /* 5 */
	return report(f, NULL, NULL, NULL);
}

/* Every record names who acted; counters count what the trail holds. */
static void test_report_actor_and_counters(void **state)
{
	struct fx *f = *state;
	char *html = actor_trail_report(f);
	const char *bin;
	char html_path[512];
	char url[600];
	char dom_path[512];
	char *dom;
	size_t len;

	/* who: tenant, credential id, client (from the call, or the session) */
	assert_int_equal(count(html, "<dt>Actor</dt>"), 5);
	assert_non_null(strstr(html,
	                       "tenant acme · credential <span class=\"mono\">tok-ci</span> · "
	                       "client inspector-cli"));
	/* the request for an approval, which has no session, names the client of its call */
	assert_int_equal(count(html, "client inspector-cli"), 4);
	/* a decision on an approval: a person */
	assert_non_null(strstr(html, "<dd class=\"actor\">human alice <span class=\"muted\">via "
	                             "admin-socket</span> · tenant acme</dd>"));
	/* the flow, from the session's opening */
	assert_int_equal(count(html, "<dt>Flow</dt><dd class=\"flow\">checkout</dd>"), 3);
	/* what: the element as resolved, never a bare ref */
	assert_non_null(strstr(html, "button &quot;Delete all orders&quot; [e21]"));
	assert_null(strstr(html, "element ref"));
	/* where: the frame the element is in, when it is not the page's */
	assert_non_null(
	    strstr(html, "<dt>Frame</dt><dd class=\"url\">https://shop.example/orders-frame"));
	/* the request for an approval is a row of its own */
	assert_non_null(strstr(html, "approval requested"));
	/* counters: one refusal, one held action (asked for and failed: once), one decision */
	assert_non_null(strstr(html, "id=\"stat-refused\"><b>1</b>refused by policy"));
	assert_non_null(strstr(html, "id=\"stat-held\"><b>1</b>held for approval"));
	assert_non_null(strstr(html, "id=\"stat-approvals\"><b>1</b>approvals decided"));

	/* the same texts in the DOM headless Chromium builds from the file */
	bin = find_chromium();
	if (bin) {
		snprintf(html_path, sizeof(html_path), "%s/actor-trail.html", f->root);
		fx_write(html_path, html, strlen(html));
		snprintf(url, sizeof(url), "file://%s", html_path);
		snprintf(dom_path, sizeof(dom_path), "%s/actor-dom.html", f->root);
		if (chromium(f, bin, "--dump-dom", url, dom_path) != 0)
			fail_msg("chromium --dump-dom failed; see %s/chrome.log", f->root);
		dom = fx_read(dom_path, &len);
		assert_int_equal(count(dom, "<dt>Actor</dt>"), 5);
		assert_non_null(strstr(dom,
		                       "credential <span class=\"mono\">tok-ci</span> · client "
		                       "inspector-cli"));
		assert_non_null(strstr(dom, "human alice"));
		assert_non_null(strstr(dom, "<dd class=\"flow\">checkout</dd>"));
		assert_non_null(strstr(dom, "button \"Delete all orders\" [e21]"));
		assert_non_null(strstr(dom, "<b>1</b>refused by policy"));
		assert_non_null(strstr(dom, "<b>1</b>held for approval"));
		free(dom);
	}
	free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_says_chain_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_actor_and_counters, setup, teardown),
		cmocka_unit_test(test_html_escape),
		cmocka_unit_test_setup_teardown(test_report_cli, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_in_chromium, setup, teardown),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
