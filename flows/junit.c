/*
 * junit.c - the JUnit XML report of a run, written with libxml2's tree
 * API in the structure of the Jenkins/Ant schema that CI systems read
 * (GitLab, Jenkins, GitHub actions reporters): testsuites > testsuite >
 * testcase, a <failure> (the flow's verdict) or an <error> (the flow
 * could not run), <system-out> with the steps. Screenshots are attached
 * both ways CI systems look for them: a testcase property "attachment"
 * and [[ATTACHMENT|path]] in system-out. fixtures/junit/junit.xsd is the
 * schema the unit test validates against.
 *
 * Text comes from pages and flows: bytes XML cannot carry (controls,
 * invalid UTF-8) are replaced before they reach the tree.
 */
#include "flows/flows-private.h"

#include "common/util.h"

#include <libxml/tree.h>
#include <libxml/xmlsave.h>
#include <libxml/xmlstring.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A copy of s that XML 1.0 can carry: controls other than tab, newline
 * and carriage return become spaces; invalid UTF-8 becomes '?'. */
static xmlChar *xml_safe(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), i = 0;
	unsigned char *out = malloc(n + 1);

	if (!out)
		return NULL;
	while (*p) {
		int len = (int)strlen((const char *)p);
		int c;

		if (*p < 0x80) {
			out[i++] =
			    (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') || *p == 0x7f
			        ? ' '
			        : *p;
			p++;
			continue;
		}
		c = xmlGetUTF8Char(p, &len);
		if (c < 0 || len < 2 || (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe ||
		    c == 0xffff) {
			out[i++] = '?';
			p++;
			continue;
		}
		memcpy(out + i, p, (size_t)len);
		i += (size_t)len;
		p += len;
	}
	out[i] = '\0';
	return out;
}

/* Sets attribute name to value (borrowed; made XML-safe). */
static void set_prop(xmlNodePtr node, const char *name, const char *value)
{
	xmlChar *v = xml_safe(value);

	xmlNewProp(node, BAD_CAST name, v ? v : BAD_CAST "");
	free(v);
}

/* Sets attribute name to a number formatted with fmt. */
static void set_propf(xmlNodePtr node, const char *name, const char *fmt, double value)
{
	char buf[64];

	snprintf(buf, sizeof(buf), fmt, value);
	xmlNewProp(node, BAD_CAST name, BAD_CAST buf);
}

/* Appends <name>text</name> (text borrowed, escaped by libxml2, made
 * XML-safe first); returns the new node (owned by the tree). */
static xmlNodePtr add_text_child(xmlNodePtr parent, const char *name, const char *text)
{
	xmlChar *t = xml_safe(text);
	xmlNodePtr n = xmlNewChild(parent, NULL, BAD_CAST name, NULL);

	if (n && t)
		xmlNodeAddContent(n, t);
	free(t);
	return n;
}

/* A JSON value as short text: strings as themselves, others as JSON. */
static char *value_text(json_t *v)
{
	if (!v || json_is_null(v))
		return strdup("(not observed)");
	if (json_is_string(v)) {
		char *q = json_dumps(v, JSON_ENCODE_ANY);

		return q ? q : strdup("");
	}
	return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
}

/* Appends each failed check of r as "<before>check: expected E, observed
 * O<after>" to b. */
static void append_failed_checks(struct gb_buf *b, const struct flow_result *r, const char *before,
                                 const char *after)
{
	size_t i;

	for (i = 0; i < json_array_size(r->verdicts); i++) {
		json_t *v = json_array_get(r->verdicts, i);
		char *e, *o;

		if (json_is_true(json_object_get(v, "ok")))
			continue;
		e = value_text(json_object_get(v, "expected"));
		o = value_text(json_object_get(v, "observed"));
		gb_buf_appendf(b, "%s%s: expected %s, observed %s%s", before,
		               gb_or(json_string_value(json_object_get(v, "check")), "?"),
		               gb_or(e, ""), gb_or(o, ""), after);
		free(e);
		free(o);
	}
}

/* The failure's body: the message, each failed check with its expected
 * and observed values, where the screenshot is. */
static char *failure_body(const struct flow_result *r)
{
	struct gb_buf b;
	char *out;

	gb_buf_init(&b, 1 << 20);
	gb_buf_appendf(&b, "%s\n", gb_or(r->message, "the flow failed"));
	append_failed_checks(&b, r, "check ", "\n");
	gb_buf_appendf(&b, "failed at step %zu of %zu (%s)\n", r->failed_step, r->steps_total,
	               gb_or(r->failed_tool, "no step ran"));
	if (r->screenshot)
		gb_buf_appendf(&b, "screenshot: %s\n", r->screenshot);
	out = gb_buf_steal(&b);
	gb_buf_free(&b);
	return out;
}

/* The short failure message attribute: the message and the failed
 * checks' expected vs observed, on one line. */
static char *failure_message(const struct flow_result *r)
{
	struct gb_buf b;
	char *out;

	gb_buf_init(&b, 1 << 16);
	gb_buf_appendf(&b, "%s", gb_or(r->message, "the flow failed"));
	append_failed_checks(&b, r, "; ", "");
	out = gb_buf_steal(&b);
	gb_buf_free(&b);
	return out;
}

/* 1 when the flow could not run at all (JUnit <error>), rather than
 * failing a step (<failure>). */
static int is_error(const struct flow_result *r)
{
	static const char *const codes[] = { "session_failed", "launch_failed", "browser_crashed",
		                             "internal", NULL };
	size_t i;

	for (i = 0; codes[i]; i++)
		if (r->error_code && !strcmp(r->error_code, codes[i]))
			return 1;
	return 0;
}

/* The file name without directories and extension: "checkout". */
static void base_name(const char *path, char *out, size_t outlen)
{
	const char *b = strrchr(path ? path : "", '/');
	char *dot;

	snprintf(out, outlen, "%s", b ? b + 1 : gb_or(path, "flow"));
	dot = strrchr(out, '.');
	if (dot && dot != out)
		*dot = '\0';
}

/* Appends the <testcase> of one flow's result (borrowed). */
static void add_testcase(xmlNodePtr suite, const struct flow_result *r)
{
	xmlNodePtr tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
	char classname[300], base[256];
	struct gb_buf out;
	char *text;

	base_name(r->path, base, sizeof(base));
	snprintf(classname, sizeof(classname), "flows.%s", base);
	set_prop(tc, "name", r->name);
	set_prop(tc, "classname", classname);
	set_prop(tc, "file", gb_or(r->path, ""));
	set_propf(tc, "time", "%.3f", (double)r->duration_ms / 1000.0);
	if (r->screenshot || r->trace) {
		xmlNodePtr props = xmlNewChild(tc, NULL, BAD_CAST "properties", NULL);
		xmlNodePtr p;

		if (r->screenshot) {
			p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);
			set_prop(p, "name", "attachment");
			set_prop(p, "value", r->screenshot);
		}
		if (r->trace) {
			/* the Playwright trace: npx playwright show-trace FILE */
			p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);
			set_prop(p, "name", "trace");
			set_prop(p, "value", r->trace);
			p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);
			set_prop(p, "name", "attachment");
			set_prop(p, "value", r->trace);
		}
	}
	if (!r->passed) {
		char *msg = failure_message(r);
		char *body = failure_body(r);
		xmlNodePtr f = add_text_child(tc, is_error(r) ? "error" : "failure", body);

		set_prop(f, "message", msg);
		set_prop(f, "type", gb_or(r->error_code, "failed"));
		free(msg);
		free(body);
	}
	gb_buf_init(&out, 1 << 22);
	gb_buf_appendf(&out, "%s", gb_or(r->log, ""));
	if (r->screenshot)
		gb_buf_appendf(&out, "[[ATTACHMENT|%s]]\n", r->screenshot);
	if (r->trace)
		gb_buf_appendf(&out, "[[ATTACHMENT|%s]]\n", r->trace);
	text = gb_buf_steal(&out);
	add_text_child(tc, "system-out", gb_or(text, ""));
	free(text);
	gb_buf_free(&out);
}

int flow_junit_write(const char *path, const char *suite_name, const struct flow_result *results,
                     size_t n, double wall_seconds, char *err, size_t errlen)
{
	xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
	xmlNodePtr root, suite, props, prop;
	size_t i, failures = 0, errors = 0;
	char tmp[4096], stamp[32], host[256] = "localhost";
	struct tm tm;
	time_t now = time(NULL);
	int rc = -1;

	if (!doc) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (results[i].passed)
			continue;
		if (is_error(&results[i]))
			errors++;
		else
			failures++;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	gethostname(host, sizeof(host) - 1);
	root = xmlNewNode(NULL, BAD_CAST "testsuites");
	xmlDocSetRootElement(doc, root);
	set_prop(root, "name", suite_name);
	set_propf(root, "tests", "%.0f", (double)n);
	set_propf(root, "failures", "%.0f", (double)failures);
	set_propf(root, "errors", "%.0f", (double)errors);
	set_propf(root, "time", "%.3f", wall_seconds);
	suite = xmlNewChild(root, NULL, BAD_CAST "testsuite", NULL);
	set_prop(suite, "name", suite_name);
	set_propf(suite, "tests", "%.0f", (double)n);
	set_propf(suite, "failures", "%.0f", (double)failures);
	set_propf(suite, "errors", "%.0f", (double)errors);
	set_propf(suite, "skipped", "%.0f", 0);
	set_propf(suite, "time", "%.3f", wall_seconds);
	set_prop(suite, "timestamp", stamp);
	set_prop(suite, "hostname", host);
	props = xmlNewChild(suite, NULL, BAD_CAST "properties", NULL);
	prop = xmlNewChild(props, NULL, BAD_CAST "property", NULL);
	set_prop(prop, "name", "glassbox.version");
	set_prop(prop, "value", GLASSBOX_VERSION);
	for (i = 0; i < n; i++)
		add_testcase(suite, &results[i]);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "the path %.200s is too long", path);
		goto out;
	}
	if (xmlSaveFormatFileEnc(tmp, doc, "UTF-8", 1) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	xmlFreeDoc(doc);
	return rc;
}
