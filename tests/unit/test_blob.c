/*
 * test_blob.c - the blob interface on a directory: keys, put that never
 * replaces, put_replace, get with a ceiling, listings in byte order under
 * a prefix; and the object_store config: what it refuses, and that
 * credentials come from files or the environment, never the config.
 * (The S3 side runs against a real S3-API server in
 * tests/integration/objects.test.mjs.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blob/blob.h"

static char root[256];

static int make_root(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/gb-test-blob-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int remove_root(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static struct blob_store *open_fs(void)
{
	struct blob_config c;
	struct blob_store *b = NULL;
	char err[512];

	memset(&c, 0, sizeof(c));
	c.kind = BLOB_FS;
	snprintf(c.dir, sizeof(c.dir), "%s/store", root);
	assert_int_equal(blob_open(&c, &b, err, sizeof(err)), 0);
	return b;
}

static void keys(void **state)
{
	(void)state;
	assert_true(blob_key_is_valid("tenants/acme/artifacts/ab/abcd"));
	assert_true(blob_key_is_valid("a"));
	assert_false(blob_key_is_valid(""));
	assert_false(blob_key_is_valid("/abs"));
	assert_false(blob_key_is_valid("a//b"));
	assert_false(blob_key_is_valid("a/../b"));
	assert_false(blob_key_is_valid("a/./b"));
	assert_false(blob_key_is_valid("a/b/"));
	assert_false(blob_key_is_valid("a b"));
	assert_false(blob_key_is_valid("a?x=1"));
	assert_false(blob_key_is_valid("a%2fb"));
	assert_false(blob_key_is_valid(NULL));
}

static void put_get(void **state)
{
	struct blob_store *b = open_fs();
	unsigned char *data = NULL;
	size_t len = 0;
	char err[512];

	(void)state;
	assert_int_equal(blob_put(b, "t/one", "first", 5, err, sizeof(err)), 0);
	/* a second put of the same name keeps the first bytes */
	assert_int_equal(blob_put(b, "t/one", "second", 6, err, sizeof(err)), BLOB_EXISTS);
	assert_int_equal(blob_get(b, "t/one", 100, &data, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(data, "first", 5);
	free(data);
	/* put_replace does replace */
	assert_int_equal(blob_put_replace(b, "t/one", "third", 5, err, sizeof(err)), 0);
	assert_int_equal(blob_get(b, "t/one", 100, &data, &len, err, sizeof(err)), 0);
	assert_memory_equal(data, "third", 5);
	free(data);
	/* the ceiling and a missing object */
	assert_int_equal(blob_get(b, "t/one", 4, &data, &len, err, sizeof(err)), -EFBIG);
	assert_null(data);
	assert_int_equal(blob_get(b, "t/none", 100, &data, &len, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "t/none"));
	assert_int_equal(blob_put(b, "../escape", "x", 1, err, sizeof(err)), -EINVAL);
	blob_close(b);
}

struct seen {
	char keys[8][64];
	size_t n;
};

static int on_key(const char *key, size_t size, void *user)
{
	struct seen *s = user;

	(void)size;
	if (s->n < 8)
		snprintf(s->keys[s->n++], sizeof(s->keys[0]), "%s", key);
	return 0;
}

static void listing(void **state)
{
	struct blob_store *b = open_fs();
	struct seen s;
	char err[512];

	(void)state;
	assert_int_equal(blob_put(b, "x/b/2", "2", 1, err, sizeof(err)), 0);
	assert_int_equal(blob_put(b, "x/a", "1", 1, err, sizeof(err)), 0);
	assert_int_equal(blob_put(b, "x/b/1", "1", 1, err, sizeof(err)), 0);
	assert_int_equal(blob_put(b, "y/c", "1", 1, err, sizeof(err)), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(blob_list(b, "x/", on_key, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.keys[0], "x/a");
	assert_string_equal(s.keys[1], "x/b/1");
	assert_string_equal(s.keys[2], "x/b/2");
	memset(&s, 0, sizeof(s));
	assert_int_equal(blob_list(b, "x/b", on_key, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(blob_list(b, "", on_key, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 4);
	/* a delete removes one object; a second says there is none */
	assert_int_equal(blob_delete(b, "x/b/1", err, sizeof(err)), 0);
	assert_int_equal(blob_delete(b, "x/b/1", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no object x/b/1"));
	assert_int_equal(blob_delete(b, "../x", err, sizeof(err)), -EINVAL);
	memset(&s, 0, sizeof(s));
	assert_int_equal(blob_list(b, "x/b", on_key, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.keys[0], "x/b/2");
	blob_close(b);
}

/* Parses text as an object_store config; returns blob_config_parse's. */
static int parse(const char *text, struct blob_config *c, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);
	int rc;

	assert_non_null(j);
	rc = blob_config_parse(j, "object_store", c, err, errlen);
	json_decref(j);
	return rc;
}

static void config(void **state)
{
	struct blob_config c;
	char err[512], path[300], text[800];
	FILE *f;

	(void)state;
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	assert_int_equal(parse("{\"dir\": \"/var/lib/x\"}", &c, err, sizeof(err)), 0);
	assert_int_equal(c.kind, BLOB_FS);
	assert_int_equal(parse("{\"dir\": \"rel\"}", &c, err, sizeof(err)), -1);
	assert_int_equal(parse("{}", &c, err, sizeof(err)), -1);
	/* a secret in the config itself is refused, and not echoed */
	assert_int_equal(parse("{\"s3\": {\"endpoint\": \"http://127.0.0.1:1\", \"bucket\": \"b\", "
	                       "\"secret_access_key\": \"hunter2\"}}",
	                       &c, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "secret_access_key"));
	assert_null(strstr(err, "hunter2"));
	/* no credentials anywhere */
	assert_int_equal(parse("{\"s3\": {\"endpoint\": \"http://127.0.0.1:1\", \"bucket\": "
	                       "\"b\"}}",
	                       &c, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "AWS_ACCESS_KEY_ID"));
	/* from the environment */
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-env", 1);
	assert_int_equal(parse("{\"s3\": {\"endpoint\": \"http://127.0.0.1:1\", \"bucket\": \"b\", "
	                       "\"path_style\": true, \"prefix\": \"p/\"}}",
	                       &c, err, sizeof(err)),
	                 0);
	assert_string_equal(c.access_key_id, "AKID");
	assert_string_equal(c.secret_access_key, "s3cr3t-env");
	assert_string_equal(c.region, "us-east-1");
	assert_int_equal(c.path_style, 1);
	blob_config_wipe(&c);
	assert_int_equal(c.secret_access_key[0], 0);
	/* from a file, which wins over the environment; its newline is dropped */
	snprintf(path, sizeof(path), "%s/secret", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("s3cr3t-file\n", f);
	fclose(f);
	snprintf(text, sizeof(text),
	         "{\"s3\": {\"endpoint\": \"https://s3.example\", \"bucket\": \"b\", "
	         "\"secret_access_key_file\": \"%s\"}}",
	         path);
	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_string_equal(c.secret_access_key, "s3cr3t-file");
	blob_config_wipe(&c);
	/* bad values name the key */
	assert_int_equal(
	    parse("{\"s3\": {\"endpoint\": \"ftp://x\", \"bucket\": \"b\"}}", &c, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "endpoint"));
	assert_int_equal(parse("{\"s3\": {\"endpoint\": \"http://x\", \"bucket\": \"B/x\"}}", &c,
	                       err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "bucket"));
	assert_int_equal(parse("{\"s3\": {\"endpoint\": \"http://x\", \"bucket\": \"b\", "
	                       "\"prefix\": \"noslash\"}}",
	                       &c, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "prefix"));
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
}

/* An S3 store nobody listens on: a clear error naming the endpoint. */
static void s3_down(void **state)
{
	struct blob_config c;
	struct blob_store *b = NULL;
	unsigned char *data = NULL;
	size_t len = 0;
	char err[512];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.kind = BLOB_S3;
	snprintf(c.endpoint, sizeof(c.endpoint), "http://127.0.0.1:1");
	snprintf(c.bucket, sizeof(c.bucket), "b");
	snprintf(c.region, sizeof(c.region), "us-east-1");
	snprintf(c.access_key_id, sizeof(c.access_key_id), "AKID");
	snprintf(c.secret_access_key, sizeof(c.secret_access_key), "never-shown");
	c.path_style = 1;
	c.timeout_ms = 5000;
	assert_int_equal(blob_open(&c, &b, err, sizeof(err)), 0);
	assert_int_equal(blob_put(b, "k", "x", 1, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "cannot reach the object store"));
	assert_non_null(strstr(err, "127.0.0.1:1"));
	assert_null(strstr(err, "never-shown"));
	assert_int_equal(blob_get(b, "k", 10, &data, &len, err, sizeof(err)), -EIO);
	blob_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys),
		cmocka_unit_test_setup_teardown(put_get, make_root, remove_root),
		cmocka_unit_test_setup_teardown(listing, make_root, remove_root),
		cmocka_unit_test_setup_teardown(config, make_root, remove_root),
		cmocka_unit_test(s3_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
