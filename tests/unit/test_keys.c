/*
 * test_keys.c - the key hierarchy of the sealed stores (profiles/keys.h):
 * master key creation and permissions, tenant keys bound to their tenant,
 * tampering, rotation (also cut short), and the small seal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/fs.h"
#include "profiles/keys.h"

#include <errno.h>
#include <ftw.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

	snprintf(dir, 64, "/tmp/gb-keys-XXXXXX");
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
	unsetenv("GLASSBOX_MASTER_KEY_FILE");
	unsetenv("GLASSBOX_MASTER_KEY_OTHER_FILE");
	return 0;
}

static void path_of(const char *dir, const char *rel, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/%s", dir, rel);
}

static void test_master_created_private_and_stable(void **state)
{
	const char *dir = *state;
	char id1[17], id2[17], path[256], err[512] = "";
	struct stat st;

	assert_int_equal(prof_keys_init(dir, err, sizeof(err)), 0);
	path_of(dir, "keys/master.key", path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(prof_keys_master_id(dir, id1, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_master_id(dir, id2, err, sizeof(err)), 0);
	assert_string_equal(id1, id2);

	/* a key others can read is refused, and the error says what to do */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(prof_keys_init(dir, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "chmod 600"));
}

static void test_tenant_keys_distinct_and_stable(void **state)
{
	const char *dir = *state;
	unsigned char a1[PROF_KEY_BYTES], a2[PROF_KEY_BYTES], b[PROF_KEY_BYTES];
	char err[512] = "";

	assert_int_equal(prof_keys_tenant_key(dir, "acme", a1, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", a2, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_tenant_key(dir, "globex", b, err, sizeof(err)), 0);
	assert_memory_equal(a1, a2, PROF_KEY_BYTES);
	assert_memory_not_equal(a1, b, PROF_KEY_BYTES);
	assert_int_equal(prof_keys_tenant_key(dir, "../etc", a1, err, sizeof(err)), -EINVAL);
}

static void copy_file(const char *from, const char *to)
{
	char buf[4096];
	FILE *in = fopen(from, "rb");
	FILE *out = fopen(to, "wb");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	n = fread(buf, 1, sizeof(buf), in);
	assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
	assert_int_equal(chmod(to, 0600), 0);
}

static void test_copied_or_altered_tenant_key_refused(void **state)
{
	const char *dir = *state;
	unsigned char k[PROF_KEY_BYTES];
	char a[256], b[256], err[512] = "";
	char text[2048];
	char *sealed;
	FILE *f;
	size_t n;

	assert_int_equal(prof_keys_tenant_key(dir, "acme", k, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_tenant_key(dir, "globex", k, err, sizeof(err)), 0);
	path_of(dir, "keys/tenants/acme.key", a, sizeof(a));
	path_of(dir, "keys/tenants/globex.key", b, sizeof(b));

	/* acme's wrapped key put in globex's place does not open as globex's */
	copy_file(a, b);
	assert_int_equal(prof_keys_tenant_key(dir, "globex", k, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "another tenant"));

	/* a flipped byte in the sealed key */
	f = fopen(a, "r+b");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	sealed = strstr(text, "\"sealed\": \"");
	assert_non_null(sealed);
	sealed += 20;
	*sealed = *sealed == 'A' ? 'B' : 'A';
	rewind(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	fclose(f);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", k, err, sizeof(err)), -EBADMSG);
}

static void test_rotation_rewraps_and_keeps_tenant_keys(void **state)
{
	const char *dir = *state;
	unsigned char before[PROF_KEY_BYTES], after[PROF_KEY_BYTES];
	char id1[17], id2[17], old[256], err[512] = "";
	size_t n = 0;

	assert_int_equal(prof_keys_tenant_key(dir, "acme", before, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_master_id(dir, id1, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_rotate(dir, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(prof_keys_master_id(dir, id2, err, sizeof(err)), 0);
	assert_string_not_equal(id1, id2);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", after, err, sizeof(err)), 0);
	assert_memory_equal(before, after, PROF_KEY_BYTES);
	path_of(dir, "keys/master.key.old", old, sizeof(old));
	assert_int_not_equal(access(old, F_OK), 0);
}

static void test_rotation_cut_short_still_opens(void **state)
{
	const char *dir = *state;
	unsigned char before[PROF_KEY_BYTES], after[PROF_KEY_BYTES];
	char master[256], old[256], err[512] = "";
	FILE *f;
	size_t n = 0;

	assert_int_equal(prof_keys_tenant_key(dir, "acme", before, err, sizeof(err)), 0);
	/* a crash after the new master key was written, before any re-wrap */
	path_of(dir, "keys/master.key", master, sizeof(master));
	path_of(dir, "keys/master.key.old", old, sizeof(old));
	assert_int_equal(rename(master, old), 0);
	f = fopen(master, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	fclose(f);
	assert_int_equal(chmod(master, 0600), 0);

	assert_int_equal(prof_keys_tenant_key(dir, "acme", after, err, sizeof(err)), 0);
	assert_memory_equal(before, after, PROF_KEY_BYTES);
	/* the next rotation finishes the old one */
	assert_int_equal(prof_keys_rotate(dir, &n, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", after, err, sizeof(err)), 0);
	assert_memory_equal(before, after, PROF_KEY_BYTES);
}

static void test_master_from_env_file(void **state)
{
	const char *dir = *state;
	char path[256], err[512] = "";
	unsigned char k[PROF_KEY_BYTES];
	size_t n;
	FILE *f;

	path_of(dir, "external.key", path, sizeof(path));
	setenv("GLASSBOX_MASTER_KEY_FILE", path, 1);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", k, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "GLASSBOX_MASTER_KEY_FILE"));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100");
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", k, err, sizeof(err)), 0);
	assert_int_equal(prof_keys_rotate(dir, &n, err, sizeof(err)), -EPERM);
	/* the key never shows in an error */
	assert_null(strstr(err, "ffeedd"));
}

/* Writes a master key file of 64 hex digits (digit d repeated), 0600. */
static void write_master(const char *path, char d)
{
	char hex[65];
	FILE *f = fopen(path, "w");

	memset(hex, d, 64);
	hex[64] = '\0';
	assert_non_null(f);
	fprintf(f, "%s\n", hex);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
}

/* Replicas rotate a key kept in a Secret: the other key opens what it
 * wrapped and wraps nothing; rewrap brings every tenant key to the current
 * key, after which the other key is not needed. */
static void test_rewrap_with_the_other_key(void **state)
{
	const char *dir = *state;
	char a[256], b[256], path[300], id_b[17], err[512] = "";
	unsigned char k0[PROF_KEY_BYTES], k[PROF_KEY_BYTES];
	unsigned char *text = NULL;
	char *out = NULL;
	size_t n = 0, len = 0;

	path_of(dir, "a.key", a, sizeof(a));
	path_of(dir, "b.key", b, sizeof(b));
	write_master(a, 'a');
	write_master(b, 'b');
	setenv("GLASSBOX_MASTER_KEY_FILE", a, 1);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", k0, err, sizeof(err)), 0);
	path_of(dir, "keys/tenants/acme.key", path, sizeof(path));
	assert_int_equal(gb_fs_read_file(path, 4096, &text, &len, err, sizeof(err)), 0);
	/* b current, without a: refused, and told how to go on */
	setenv("GLASSBOX_MASTER_KEY_FILE", b, 1);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", k, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "GLASSBOX_MASTER_KEY_OTHER_FILE"));
	assert_int_equal(prof_keys_rotate(dir, &n, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "glassbox keys rewrap"));
	/* b current, a the other: opens, and the same key */
	setenv("GLASSBOX_MASTER_KEY_OTHER_FILE", a, 1);
	assert_int_equal(prof_keys_tenant_key(dir, "acme", k, err, sizeof(err)), 0);
	assert_memory_equal(k0, k, PROF_KEY_BYTES);
	/* a key file's text: re-wrapped for b, then nothing to do */
	assert_int_equal(prof_keys_rewrap_text(dir, "acme", "x", text, len, &out, err, sizeof(err)),
	                 0);
	assert_non_null(out);
	assert_int_equal(prof_keys_master_id(dir, id_b, err, sizeof(err)), 0);
	assert_non_null(strstr(out, id_b));
	free(text);
	text = (unsigned char *)out;
	out = NULL;
	assert_int_equal(prof_keys_rewrap_text(dir, "acme", "x", text, strlen((char *)text), &out,
	                                       err, sizeof(err)),
	                 0);
	assert_null(out);
	free(text);
	/* the data dir's keys re-wrapped: a is no longer needed */
	assert_int_equal(prof_keys_rewrap(dir, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	unsetenv("GLASSBOX_MASTER_KEY_OTHER_FILE");
	assert_int_equal(prof_keys_tenant_key(dir, "acme", k, err, sizeof(err)), 0);
	assert_memory_equal(k0, k, PROF_KEY_BYTES);
	/* no key ever shows in an error */
	assert_null(strstr(err, "aaaa"));
	assert_null(strstr(err, "bbbb"));
}

static void test_seal_small_binds_ad(void **state)
{
	unsigned char key[PROF_KEY_BYTES];
	unsigned char *sealed = NULL, *plain = NULL;
	size_t slen = 0, plen = 0;

	(void)state;
	randombytes_buf(key, sizeof(key));
	assert_int_equal(
	    prof_seal_small(key, "a|1", (const unsigned char *)"hunter2", 7, &sealed, &slen), 0);
	assert_int_equal(slen, 7 + PROF_SEAL_OVERHEAD_BYTES);
	assert_int_equal(prof_open_small(key, "a|2", sealed, slen, &plain, &plen), -EBADMSG);
	assert_int_equal(prof_open_small(key, "a|1", sealed, slen - 1, &plain, &plen), -EBADMSG);
	assert_int_equal(prof_open_small(key, "a|1", sealed, slen, &plain, &plen), 0);
	assert_int_equal(plen, 7);
	assert_string_equal((char *)plain, "hunter2");
	free(plain);
	free(sealed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_master_created_private_and_stable, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_tenant_keys_distinct_and_stable, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_copied_or_altered_tenant_key_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_rotation_rewraps_and_keeps_tenant_keys, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_rotation_cut_short_still_opens, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_master_from_env_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rewrap_with_the_other_key, setup, teardown),
		cmocka_unit_test(test_seal_small_binds_ad),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
