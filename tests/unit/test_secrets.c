/*
 * test_secrets.c - the sealed secret store (secrets/store.c) and where a
 * secret may go (secrets/binding.c): round trip, versions, tampering, a
 * value copied to another name or tenant, widened hosts, listing without
 * values, host patterns and field kinds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "secrets/secrets.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VALUE "hunter2-Sup3r$ecret"

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	char *dir = malloc(64);

	snprintf(dir, 64, "/tmp/gb-secrets-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	unsetenv("GLASSBOX_MASTER_KEY_FILE");
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	nftw(*state, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(*state);
	return 0;
}

/* Stores VALUE as tenant's name, bound to shop.test. */
static void set_one(const char *dir, const char *tenant, const char *name)
{
	const char *hosts[] = { "shop.test", "*.shop.test" };
	char err[512] = "";

	assert_int_equal(secret_set(dir, tenant, name, hosts, 2, NULL, 0,
	                            (const unsigned char *)VALUE, strlen(VALUE), NULL, err,
	                            sizeof(err)),
	                 0);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Copies the file of from to the file of to (tenant dirs may differ). */
static void copy_file(const char *from, const char *to)
{
	char *t = read_text(from);

	write_text(to, t);
	free(t);
}

static void test_round_trip_private_file(void **state)
{
	const char *dir = *state;
	struct secret_meta m;
	unsigned char *v = NULL;
	char path[512], err[512] = "";
	struct stat st;
	char *text;
	size_t len = 0;

	set_one(dir, "acme", "SHOP_PASSWORD");
	assert_int_equal(secret_open(dir, "acme", "SHOP_PASSWORD", &m, &v, &len, err, sizeof(err)),
	                 0);
	assert_int_equal(len, strlen(VALUE));
	assert_memory_equal(v, VALUE, len);
	assert_string_equal(m.name, "SHOP_PASSWORD");
	assert_int_equal(m.version, 1);
	assert_int_equal(m.n_hosts, 2);
	assert_string_equal(m.hosts[1], "*.shop.test");
	secret_value_free(v, len);
	/* 0600, and the value is not in it in clear */
	snprintf(path, sizeof(path), "%s/tenants/acme/secrets/SHOP_PASSWORD.secret", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	text = read_text(path);
	assert_null(strstr(text, VALUE));
	assert_non_null(strstr(text, "\"shop.test\""));
	free(text);
	/* a second set is a new version */
	set_one(dir, "acme", "SHOP_PASSWORD");
	assert_int_equal(secret_open(dir, "acme", "SHOP_PASSWORD", &m, &v, &len, err, sizeof(err)),
	                 0);
	assert_int_equal(m.version, 2);
	secret_value_free(v, len);
}

static void test_tampered_value_refused(void **state)
{
	const char *dir = *state;
	struct secret_meta m;
	unsigned char *v = NULL;
	char path[512], err[512] = "";
	char *text, *p;
	size_t len = 0;

	set_one(dir, "acme", "SHOP_PASSWORD");
	snprintf(path, sizeof(path), "%s/tenants/acme/secrets/SHOP_PASSWORD.secret", dir);
	text = read_text(path);
	p = strstr(text, "\"sealed\": \"");
	assert_non_null(p);
	p += strlen("\"sealed\": \"") + 10;
	*p = *p == 'A' ? 'B' : 'A'; /* one ciphertext byte */
	write_text(path, text);
	free(text);
	assert_int_equal(secret_open(dir, "acme", "SHOP_PASSWORD", &m, &v, &len, err, sizeof(err)),
	                 -EBADMSG);
	assert_null(v);
	assert_non_null(strstr(err, "altered"));
	assert_null(strstr(err, VALUE));
}

static void test_widened_hosts_refused(void **state)
{
	const char *dir = *state;
	struct secret_meta m;
	unsigned char *v = NULL;
	char path[512], err[512] = "";
	char *text, *p;
	size_t len = 0;

	set_one(dir, "acme", "SHOP_PASSWORD");
	snprintf(path, sizeof(path), "%s/tenants/acme/secrets/SHOP_PASSWORD.secret", dir);
	text = read_text(path);
	p = strstr(text, "\"shop.test\"");
	assert_non_null(p);
	memcpy(p, "\"evil.test\"", strlen("\"evil.test\""));
	write_text(path, text);
	free(text);
	assert_int_equal(secret_open(dir, "acme", "SHOP_PASSWORD", &m, &v, &len, err, sizeof(err)),
	                 -EBADMSG);
	assert_null(v);
}

static void test_copy_to_other_name_or_tenant_refused(void **state)
{
	const char *dir = *state;
	struct secret_meta m;
	unsigned char *v = NULL;
	char from[512], to[512], err[512] = "";
	char *text, *p;
	size_t len = 0;

	set_one(dir, "acme", "SHOP_PASSWORD");
	set_one(dir, "acme", "OTHER");
	set_one(dir, "beta", "SHOP_PASSWORD");
	/* the file copied under another name: its name does not match */
	snprintf(from, sizeof(from), "%s/tenants/acme/secrets/SHOP_PASSWORD.secret", dir);
	snprintf(to, sizeof(to), "%s/tenants/acme/secrets/OTHER.secret", dir);
	copy_file(from, to);
	assert_int_equal(secret_open(dir, "acme", "OTHER", &m, &v, &len, err, sizeof(err)),
	                 -EBADMSG);
	/* ... and with its name rewritten: the sealed value is bound to the old one */
	text = read_text(to);
	p = strstr(text, "\"SHOP_PASSWORD\"");
	assert_non_null(p);
	memmove(p + strlen("\"OTHER\""), p + strlen("\"SHOP_PASSWORD\""),
	        strlen(p + strlen("\"SHOP_PASSWORD\"")) + 1);
	memcpy(p, "\"OTHER\"", strlen("\"OTHER\""));
	write_text(to, text);
	free(text);
	assert_int_equal(secret_open(dir, "acme", "OTHER", &m, &v, &len, err, sizeof(err)),
	                 -EBADMSG);
	assert_null(v);
	/* the file copied to another tenant: that tenant's key does not open it */
	snprintf(to, sizeof(to), "%s/tenants/beta/secrets/SHOP_PASSWORD.secret", dir);
	copy_file(from, to);
	assert_int_equal(secret_open(dir, "beta", "SHOP_PASSWORD", &m, &v, &len, err, sizeof(err)),
	                 -EBADMSG);
	assert_null(v);
	/* the original still opens */
	assert_int_equal(secret_open(dir, "acme", "SHOP_PASSWORD", &m, &v, &len, err, sizeof(err)),
	                 0);
	secret_value_free(v, len);
}

static void test_list_and_delete(void **state)
{
	const char *dir = *state;
	json_t *list = NULL;
	char err[512] = "";
	char *dump;

	assert_int_equal(secret_list(dir, "acme", &list, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(list), 0);
	json_decref(list);
	set_one(dir, "acme", "ZED");
	set_one(dir, "acme", "SHOP_PASSWORD");
	assert_int_equal(secret_list(dir, "acme", &list, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(list), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "name")),
	                    "SHOP_PASSWORD");
	assert_non_null(json_object_get(json_array_get(list, 0), "created"));
	dump = json_dumps(list, 0);
	assert_null(strstr(dump, VALUE));
	assert_null(strstr(dump, "sealed"));
	free(dump);
	json_decref(list);
	assert_int_equal(secret_delete(dir, "acme", "ZED", err, sizeof(err)), 0);
	assert_int_equal(secret_delete(dir, "acme", "ZED", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no secret ZED"));
	assert_int_equal(secret_list(dir, "acme", &list, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(list), 1);
	json_decref(list);
}

static void test_bad_input_refused(void **state)
{
	const char *dir = *state;
	const char *hosts[] = { "shop.test" };
	const char *any[] = { "*" };
	const char *bad_host[] = { "shop.test/login" };
	const char *bad_field[] = { "search" };
	struct secret_meta m;
	unsigned char *v = NULL;
	char err[512] = "";
	size_t len;

	assert_int_equal(secret_set(dir, "acme", "1BAD", hosts, 1, NULL, 0,
	                            (const unsigned char *)"x", 1, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_non_null(strstr(err, "not a valid secret name"));
	assert_int_equal(secret_set(dir, "../x", "A", hosts, 1, NULL, 0, (const unsigned char *)"x",
	                            1, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_int_equal(secret_set(dir, "acme", "A", NULL, 0, NULL, 0, (const unsigned char *)"x",
	                            1, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_int_equal(secret_set(dir, "acme", "A", any, 1, NULL, 0, (const unsigned char *)"x",
	                            1, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_int_equal(secret_set(dir, "acme", "A", bad_host, 1, NULL, 0,
	                            (const unsigned char *)"x", 1, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_non_null(strstr(err, "not a host pattern"));
	assert_int_equal(secret_set(dir, "acme", "A", hosts, 1, bad_field, 1,
	                            (const unsigned char *)"x", 1, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_non_null(strstr(err, "unknown"));
	assert_int_equal(secret_set(dir, "acme", "A", hosts, 1, NULL, 0,
	                            (const unsigned char *)"a\0b", 3, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_int_equal(secret_set(dir, "acme", "A", hosts, 1, NULL, 0, (const unsigned char *)"",
	                            0, NULL, err, sizeof(err)),
	                 -EINVAL);
	assert_int_equal(secret_open(dir, "acme", "MISSING", &m, &v, &len, err, sizeof(err)),
	                 -ENOENT);
	assert_non_null(strstr(err, "glassbox secret set"));
}

static void test_host_binding(void **state)
{
	struct secret_meta m;

	(void)state;
	memset(&m, 0, sizeof(m));
	snprintf(m.hosts[0], sizeof(m.hosts[0]), "shop.test");
	snprintf(m.hosts[1], sizeof(m.hosts[1]), "*.example.com");
	snprintf(m.hosts[2], sizeof(m.hosts[2]), "https://bank.test");
	m.n_hosts = 3;
	assert_true(secret_host_allowed(&m, "http://shop.test:8080/login"));
	assert_true(secret_host_allowed(&m, "https://SHOP.test./"));
	assert_true(secret_host_allowed(&m, "https://a.b.example.com/x"));
	assert_true(secret_host_allowed(&m, "https://bank.test/"));
	assert_false(secret_host_allowed(&m, "http://bank.test/"));    /* scheme bound */
	assert_false(secret_host_allowed(&m, "https://example.com/")); /* strict subdomains */
	assert_false(secret_host_allowed(&m, "http://evil.test/?shop.test"));
	assert_false(secret_host_allowed(&m, "http://shop.test.evil.test/"));
	assert_false(secret_host_allowed(&m, "http://user@evil.test/shop.test"));
	assert_false(secret_host_allowed(&m, "about:blank"));
	assert_false(secret_host_allowed(&m, "data:text/html,shop.test"));
	assert_false(secret_host_allowed(&m, NULL));
}

/* Writes text to dir/name with mode; returns the path (static buffer). */
static const char *env_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

/* Loads text as a dotenv file: the load's return, err and warning filled. */
static int env_load(const char *dir, const char *text, mode_t mode, struct secret_env **env,
                    char *warning, char *err)
{
	return secret_env_load(env_file(dir, "s.env", text, mode), env, warning, 256, err, 512);
}

/* A --secrets dotenv file: comments, quotes and export read; the values
 * open by name, unbound (any host, any field); what is wrong is refused
 * by line number and never shows the value. */
static void test_env_file(void **state)
{
	const char *dir = *state;
	struct secret_env *env = NULL;
	struct secret_meta m;
	struct secret_field field = { "input", "search", NULL };
	unsigned char *value = NULL;
	char warning[256], err[512], why[256];
	size_t len = 0;

	assert_int_equal(env_load(dir,
	                          "# comment\n\nX-PASSWORD=" VALUE "\r\nexport TOKEN = 'a b # c'\n"
	                          "QUOTED=\"q\"\n",
	                          0600, &env, warning, err),
	                 0);
	assert_string_equal(warning, "");
	assert_int_equal(secret_env_count(env), 3);
	assert_true(secret_env_has(env, "X-PASSWORD"));
	assert_false(secret_env_has(env, "x-password"));
	assert_false(secret_env_has(env, NULL));
	assert_false(secret_env_has(NULL, "X-PASSWORD"));
	assert_int_equal(secret_env_open(env, "X-PASSWORD", &m, &value, &len), 0);
	assert_int_equal(len, strlen(VALUE));
	assert_memory_equal(value, VALUE, len);
	assert_true(m.unbound);
	assert_true(secret_host_allowed(&m, "https://anywhere.test/"));
	assert_true(secret_field_allowed(&m, &field, why, sizeof(why)));
	secret_value_free(value, len);
	assert_int_equal(secret_env_open(env, "TOKEN", &m, &value, &len), 0);
	assert_string_equal((const char *)value, "a b # c");
	secret_value_free(value, len);
	assert_int_equal(secret_env_open(env, "QUOTED", &m, &value, &len), 0);
	assert_string_equal((const char *)value, "q");
	secret_value_free(value, len);
	assert_int_equal(secret_env_open(env, "MISSING", &m, &value, &len), -ENOENT);
	secret_env_free(env);

	/* refused: by line, without the value */
	assert_true(env_load(dir, "A=1\n" VALUE "\n", 0600, &env, warning, err) < 0);
	assert_null(env);
	assert_non_null(strstr(err, "line 2: it is not NAME=value"));
	assert_null(strstr(err, VALUE));
	assert_true(env_load(dir, "A=1\nA=" VALUE "\n", 0600, &env, warning, err) < 0);
	assert_non_null(strstr(err, "line 2: the name is given twice"));
	assert_true(env_load(dir, "9A=" VALUE "\n", 0600, &env, warning, err) < 0);
	assert_non_null(strstr(err, "line 1: the name must be"));
	assert_true(env_load(dir, "A=\n", 0600, &env, warning, err) < 0);
	assert_non_null(strstr(err, "line 1: the value must be"));
	assert_true(env_load(dir, "# only a comment\n", 0600, &env, warning, err) < 0);
	assert_non_null(strstr(err, "holds no NAME=value line"));
	assert_int_equal(env_load(dir, "A=" VALUE "\n", 0620, &env, warning, err), -EPERM);
	assert_non_null(strstr(err, "may be written by other users (mode 0620)"));
	/* readable by others: taken, with the warning */
	assert_int_equal(env_load(dir, "A=" VALUE "\n", 0644, &env, warning, err), 0);
	assert_non_null(strstr(warning, "may be read by other users: chmod 600 it"));
	secret_env_free(env);
	env = NULL;
	/* a symlink is not followed */
	{
		char link[600];

		snprintf(link, sizeof(link), "%s/link.env", dir);
		assert_int_equal(symlink(env_file(dir, "s.env", "A=1\n", 0600), link), 0);
		assert_true(secret_env_load(link, &env, warning, 256, err, 512) < 0);
		assert_non_null(strstr(err, "a symlink"));
	}
}

static void test_field_kinds(void **state)
{
	struct secret_meta m;
	char why[256];

	(void)state;
	memset(&m, 0, sizeof(m));
	/* the default: password, username, email, one-time-code */
	assert_true(secret_field_allowed(&m, &(struct secret_field){ "input", "password", "" }, why,
	                                 sizeof(why)));
	assert_true(secret_field_allowed(&m, &(struct secret_field){ "input", "email", NULL }, why,
	                                 sizeof(why)));
	assert_true(secret_field_allowed(
	    &m, &(struct secret_field){ "input", "text", "section-a USERNAME" }, why, sizeof(why)));
	assert_true(secret_field_allowed(
	    &m, &(struct secret_field){ "input", "text", "one-time-code" }, why, sizeof(why)));
	assert_true(secret_field_allowed(
	    &m, &(struct secret_field){ "input", "text", "current-password" }, why, sizeof(why)));
	assert_false(secret_field_allowed(&m, &(struct secret_field){ "input", "search", "" }, why,
	                                  sizeof(why)));
	assert_non_null(strstr(why, "type=search"));
	assert_non_null(strstr(why, "password"));
	assert_false(secret_field_allowed(
	    &m, &(struct secret_field){ "input", "text", "usernames" }, why, sizeof(why)));
	assert_false(secret_field_allowed(&m, &(struct secret_field){ "textarea", "", "" }, why,
	                                  sizeof(why)));
	/* a secret that names its kinds: only those */
	snprintf(m.fields[0], sizeof(m.fields[0]), "text");
	m.n_fields = 1;
	assert_true(secret_field_allowed(&m, &(struct secret_field){ "input", "search", "" }, why,
	                                 sizeof(why)));
	assert_false(secret_field_allowed(&m, &(struct secret_field){ "textarea", "", "" }, why,
	                                  sizeof(why)));
	snprintf(m.fields[0], sizeof(m.fields[0]), "password");
	assert_false(secret_field_allowed(&m, &(struct secret_field){ "input", "email", "" }, why,
	                                  sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_private_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tampered_value_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_widened_hosts_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy_to_other_name_or_tenant_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_list_and_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input_refused, setup, teardown),
		cmocka_unit_test(test_host_binding),
		cmocka_unit_test(test_field_kinds),
		cmocka_unit_test_setup_teardown(test_env_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
