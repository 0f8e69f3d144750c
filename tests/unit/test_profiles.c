/*
 * test_profiles.c - the sealed profiles (profiles/): the sealed stream
 * and its tampering cases, the archive of a user-data-dir and the
 * entries it refuses, and leases end to end on a real data dir: save and
 * reopen, blobs free of the clear text, a blob moved to another tenant
 * or an old version put back, one writer at a time (also when writers
 * race from their own connections, as replicas do), stale holds, revoke
 * and expiry, sealed versions in an object store (a directory one here;
 * the S3 one in tests/integration/replicas_profiles.test.mjs). The metadata is the store's: these run against SQLite or,
 * with GB_TEST_POSTGRES, PostgreSQL (store_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "blob/blob.h"
#include "profiles/profiles-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem_stream.h"
#include "store_fixture.h"

/* ---- helpers ---------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *read_text(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* 1 when needle occurs in the file at path. */
static int file_contains(const char *path, const char *needle)
{
	unsigned char *data;
	size_t len, i, nl = strlen(needle);
	FILE *f = fopen(path, "rb");
	int found = 0;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc(len + 1);
	assert_int_equal(fread(data, 1, len, f), len);
	fclose(f);
	for (i = 0; i + nl <= len && !found; i++)
		found = memcmp(data + i, needle, nl) == 0;
	free(data);
	return found;
}

static void copy_file(const char *from, const char *to)
{
	char cmd[8500];

	assert_true(strlen(from) < 4000 && strlen(to) < 4000);
	assert_true(snprintf(cmd, sizeof(cmd), "cp '%.4000s' '%.4000s'", from, to) > 0);
	assert_int_equal(system(cmd), 0);
}

/* Unseals m fully; returns the first error or 0, plaintext into *out. */
static int unseal_all(const unsigned char *key, const char *ad, struct mem *m, struct mem *out)
{
	struct prof_unsealer *u = NULL;
	unsigned char buf[7000];
	ssize_t r;
	int rc;

	m->pos = 0;
	rc = prof_unsealer_new(key, ad, mem_read, m, &u);
	if (rc < 0)
		return rc;
	while ((r = prof_unsealer_read(u, buf, sizeof(buf))) > 0)
		mem_write(out, buf, (size_t)r);
	prof_unsealer_free(u);
	return r < 0 ? (int)r : 0;
}

static void seal_bytes(const unsigned char *key, const char *ad, const unsigned char *plain,
                       size_t len, struct mem *out)
{
	struct prof_sealer *s = NULL;

	assert_int_equal(prof_sealer_new(key, ad, mem_write, out, &s), 0);
	/* odd write sizes cross chunk boundaries */
	for (size_t off = 0; off < len; off += 9999)
		assert_int_equal(
		    prof_sealer_write(s, plain + off, len - off < 9999 ? len - off : 9999), 0);
	assert_int_equal(prof_sealer_finish(s), 0);
}

/* ---- the sealed stream ------------------------------------------------------- */

static void test_seal_round_trip_and_tampering(void **state)
{
	unsigned char key[PROF_KEY_BYTES], other[PROF_KEY_BYTES];
	const char *ad = "glassbox profile|v1|acme|alice|id1|3";
	size_t len = 3 * PROF_CHUNK_BYTES + 1234;
	unsigned char *plain = malloc(len);
	struct mem sealed = { 0 }, out = { 0 }, copy = { 0 };
	size_t cuts[] = { 0, 5, 8, 31, 32, 35, 36 + 100, 0 };
	size_t i;

	(void)state;
	randombytes_buf(key, sizeof(key));
	randombytes_buf(other, sizeof(other));
	randombytes_buf(plain, len);
	seal_bytes(key, ad, plain, len, &sealed);
	assert_int_equal(unseal_all(key, ad, &sealed, &out), 0);
	assert_int_equal(out.len, len);
	assert_memory_equal(out.data, plain, len);

	/* wrong key, other additional data (another version, tenant) */
	out.len = 0;
	assert_int_equal(unseal_all(other, ad, &sealed, &out), -EBADMSG);
	out.len = 0;
	assert_int_equal(unseal_all(key, "glassbox profile|v1|acme|alice|id1|2", &sealed, &out),
	                 -EBADMSG);
	out.len = 0;
	assert_int_equal(unseal_all(key, "glassbox profile|v1|bob|alice|id1|3", &sealed, &out),
	                 -EBADMSG);

	/* a flipped byte anywhere: magic, header, a length, ciphertext, tag */
	copy.data = malloc(sealed.len + 16);
	for (i = 0; i < sealed.len; i += sealed.len / 97 + 1) {
		memcpy(copy.data, sealed.data, sealed.len);
		copy.len = sealed.len;
		copy.data[i] ^= 0x01;
		out.len = 0;
		assert_int_equal(unseal_all(key, ad, &copy, &out), -EBADMSG);
	}
	/* truncated at many points, including on a chunk boundary */
	cuts[7] = sealed.len - 1;
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		memcpy(copy.data, sealed.data, sealed.len);
		copy.len = cuts[i];
		out.len = 0;
		assert_int_equal(unseal_all(key, ad, &copy, &out), -EBADMSG);
	}
	copy.len = 32 + 4 + PROF_CHUNK_BYTES + 17; /* exactly the first chunk */
	memcpy(copy.data, sealed.data, sealed.len);
	out.len = 0;
	assert_int_equal(unseal_all(key, ad, &copy, &out), -EBADMSG);
	/* bytes after the final chunk */
	memcpy(copy.data, sealed.data, sealed.len);
	copy.data[sealed.len] = 0;
	copy.len = sealed.len + 1;
	out.len = 0;
	assert_int_equal(unseal_all(key, ad, &copy, &out), -EBADMSG);

	/* an empty stream is one final chunk */
	sealed.len = 0;
	seal_bytes(key, ad, plain, 0, &sealed);
	out.len = 0;
	assert_int_equal(unseal_all(key, ad, &sealed, &out), 0);
	assert_int_equal(out.len, 0);
	free(plain);
	free(sealed.data);
	free(out.data);
	free(copy.data);
}

/* ---- the archive -------------------------------------------------------------- */

static void test_archive_round_trip_skips_caches_and_links(void **state)
{
	char src[] = "/tmp/gb-prof-src-XXXXXX";
	char dst[] = "/tmp/gb-prof-dst-XXXXXX";
	char path[512], err[512] = "";
	struct mem tar = { 0 };
	uint64_t bytes = 0;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(src));
	assert_non_null(mkdtemp(dst));
	snprintf(path, sizeof(path), "%s/Default", src);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/Default/Local Storage", src);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/Default/Local Storage/leveldb", src);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/Default/Local Storage/leveldb/000003.log", src);
	write_file(path, "localStorage bytes");
	snprintf(path, sizeof(path), "%s/Default/Cookies", src);
	write_file(path, "cookie jar");
	snprintf(path, sizeof(path), "%s/Default/Cache", src);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/Default/Cache/data_0", src);
	write_file(path, "cached");
	snprintf(path, sizeof(path), "%s/Default/Empty", src);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/DevToolsActivePort", src);
	write_file(path, "9222\n/devtools/browser/x");
	snprintf(path, sizeof(path), "%s/evil-link", src);
	assert_int_equal(symlink("/etc/passwd", path), 0);

	assert_int_equal(prof_archive_dir(src, mem_write, &tar, &bytes, err, sizeof(err)), 0);
	assert_int_equal(bytes, strlen("localStorage bytes") + strlen("cookie jar"));
	assert_int_equal(prof_extract(mem_read, &tar, dst, 1 << 20, err, sizeof(err)), 0);

	snprintf(path, sizeof(path), "%s/Default/Local Storage/leveldb/000003.log", dst);
	assert_string_equal(read_text(path), "localStorage bytes");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/Default/Cookies", dst);
	assert_string_equal(read_text(path), "cookie jar");
	snprintf(path, sizeof(path), "%s/Default/Empty", dst);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/Default/Cache", dst);
	assert_int_equal(lstat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/DevToolsActivePort", dst);
	assert_int_equal(lstat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/evil-link", dst);
	assert_int_equal(lstat(path, &st), -1);

	/* over the ceiling */
	rm_tree(dst);
	assert_non_null(mkdtemp(strcpy(dst, "/tmp/gb-prof-dst-XXXXXX")));
	tar.pos = 0;
	assert_int_equal(prof_extract(mem_read, &tar, dst, 10, err, sizeof(err)), -EBADMSG);
	rm_tree(src);
	rm_tree(dst);
	free(tar.data);
}

/* A tar stream with one entry of the given kind and path. */
static void hostile_tar(struct mem *out, const char *path, int type, const char *link)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();

	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_in_last_block(a, 1);
	assert_int_equal(archive_write_open_memory(a, out->data, out->cap, &out->len), ARCHIVE_OK);
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, (unsigned)type);
	archive_entry_set_perm(e, 0644);
	if (link && type == AE_IFLNK)
		archive_entry_set_symlink(e, link);
	else if (link)
		archive_entry_set_hardlink(e, link);
	archive_entry_set_size(e, type == AE_IFREG && !link ? 4 : 0);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	if (type == AE_IFREG && !link)
		archive_write_data(a, "evil", 4);
	archive_write_close(a);
	archive_write_free(a);
	archive_entry_free(e);
}

static void test_extract_refuses_hostile_entries(void **state)
{
	static const struct {
		const char *path;
		int type;
		const char *link;
	} cases[] = {
		{ "../escape", AE_IFREG, NULL },
		{ "a/../../escape", AE_IFREG, NULL },
		{ "/tmp/gb-absolute-escape", AE_IFREG, NULL },
		{ "link", AE_IFLNK, "/etc/passwd" },
		{ "hard", AE_IFREG, "/etc/passwd" },
		{ "fifo", AE_IFIFO, NULL },
		{ "a//b", AE_IFREG, NULL },
		{ ".", AE_IFDIR, NULL },
	};
	char dst[64], err[512];
	struct mem tar = { 0 };
	struct stat st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tar.cap = 1 << 16;
		tar.data = calloc(1, tar.cap);
		tar.len = tar.pos = 0;
		hostile_tar(&tar, cases[i].path, cases[i].type, cases[i].link);
		snprintf(dst, sizeof(dst), "/tmp/gb-prof-hostile-XXXXXX");
		assert_non_null(mkdtemp(dst));
		err[0] = '\0';
		assert_int_equal(prof_extract(mem_read, &tar, dst, 1 << 20, err, sizeof(err)),
		                 -EBADMSG);
		assert_true(err[0] != '\0');
		rm_tree(dst);
		free(tar.data);
	}
	assert_int_equal(lstat("/tmp/gb-absolute-escape", &st), -1);
	assert_true(prof_archive_path_ok("Default/Local Storage/leveldb/000003.log"));
	assert_true(prof_archive_path_ok("Default/"));
	assert_false(prof_archive_path_ok(""));
	assert_false(prof_archive_path_ok("a/./b"));
}

/* ---- leases on a data dir ------------------------------------------------------ */

struct fx {
	char dir[64];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/gb-prof-XXXXXX");
	if (!mkdtemp(f->dir) || store_fixture_begin(f->dir) < 0)
		return -1;
	unsetenv("GLASSBOX_MASTER_KEY_FILE");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	store_fixture_end();
	rm_tree(f->dir);
	unsetenv("GLASSBOX_MASTER_KEY_FILE");
	unsetenv("GLASSBOX_MASTER_KEY_OTHER_FILE");
	free(f);
	return 0;
}

static struct prof_open_opts opts(const char *tenant, const char *name, int readonly)
{
	struct prof_open_opts o = { .tenant = tenant,
		                    .user = "alice",
		                    .name = name,
		                    .readonly = readonly,
		                    .holder = "test" };
	return o;
}

/* Opens, writes marker into Default/Cookies, saves, closes: version. */
static int64_t save_marker(const char *data_dir, const char *tenant, const char *marker)
{
	struct prof_open_opts o = opts(tenant, "work", 0);
	struct prof_lease *l = NULL;
	char path[4200], err[1024] = "";
	int64_t v = 0;

	o.create = 1;
	assert_int_equal(prof_lease_open(data_dir, &o, &l, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/Default", prof_lease_dir(l));
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/Default/Cookies", prof_lease_dir(l));
	write_file(path, marker);
	assert_int_equal(prof_lease_save(l, &v, err, sizeof(err)), 0);
	prof_lease_close(l);
	return v;
}

/* Opens tenant's "work" and returns the marker (NULL on error, err set). */
static const char *open_marker(const char *data_dir, const char *tenant, int readonly, int *rc,
                               char *err, size_t errlen)
{
	struct prof_open_opts o = opts(tenant, "work", readonly);
	struct prof_lease *l = NULL;
	char path[4200];
	const char *text = NULL;

	*rc = prof_lease_open(data_dir, &o, &l, err, errlen);
	if (*rc == 0) {
		snprintf(path, sizeof(path), "%s/Default/Cookies", prof_lease_dir(l));
		text = read_text(path);
		prof_lease_close(l);
	}
	return text;
}

static void test_lease_save_reopen_and_clear_text_never_on_disk(void **state)
{
	struct fx *f = *state;
	char blob[4200], err[1024] = "";
	struct prof_info info;
	struct stat st;
	int rc;

	assert_int_equal(save_marker(f->dir, "acme", "session=SECRET-COOKIE-4711"), 1);
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)),
	                    "session=SECRET-COOKIE-4711");
	assert_int_equal(save_marker(f->dir, "acme", "session=SECRET-COOKIE-4712"), 2);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	assert_int_equal(info.version, 2);
	assert_int_equal(info.held_pid, 0);
	prof_blob_path(f->dir, "acme", info.id, 2, blob, sizeof(blob));
	assert_int_equal(stat(blob, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_false(file_contains(blob, "SECRET-COOKIE"));
	/* the previous version is gone once the new one is committed */
	prof_blob_path(f->dir, "acme", info.id, 1, blob, sizeof(blob));
	assert_int_equal(stat(blob, &st), -1);
}

static void test_private_dir_and_orphan_of_an_uncommitted_save(void **state)
{
	struct fx *f = *state;
	struct prof_open_opts o = opts("acme", "work", 0);
	struct prof_lease *l = NULL;
	struct prof_info info;
	char path[4300], err[1024] = "", dir[4096];
	struct stat st;
	int rc;

	assert_int_equal(save_marker(f->dir, "acme", "committed"), 1);
	/* a save that crashed after publishing v2 but before committing it */
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	prof_blob_path(f->dir, "acme", info.id, 2, path, sizeof(path));
	write_file(path, "half-written junk of a save that never committed");
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)), "committed");

	assert_int_equal(prof_lease_open(f->dir, &o, &l, err, sizeof(err)), 0);
	snprintf(dir, sizeof(dir), "%s", prof_lease_dir(l));
	assert_int_equal(lstat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	if (access("/dev/shm", W_OK) == 0)
		assert_int_equal(strncmp(dir, "/dev/shm/glassbox-", 18), 0);
	snprintf(path, sizeof(path), "%s/Default/Cookies", dir);
	write_file(path, "second");
	assert_int_equal(prof_lease_save(l, NULL, err, sizeof(err)), 0);
	prof_lease_close(l);
	assert_int_equal(lstat(dir, &st), -1); /* the clear copy is gone */
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)), "second");
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	assert_int_equal(info.version, 2);
}

static void test_blob_misplaced_or_tampered_does_not_open(void **state)
{
	struct fx *f = *state;
	struct prof_info a, b;
	char from[4200], to[4300], keep[4200], err[1024] = "";
	unsigned char byte;
	int fd, rc;

	assert_int_equal(save_marker(f->dir, "acme", "v1-marker"), 1);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &a, err, sizeof(err)), 0);
	prof_blob_path(f->dir, "acme", a.id, 1, keep, sizeof(keep));
	snprintf(to, sizeof(to), "%s/aside.sealed", f->dir);
	copy_file(keep, to); /* the old version, kept aside */
	assert_int_equal(save_marker(f->dir, "acme", "v2-marker"), 2);

	/* A's blob copied into B's place (B has a profile of the same name) */
	assert_int_equal(save_marker(f->dir, "other", "b-marker"), 1);
	assert_int_equal(prof_get(f->dir, "other", "alice", "work", &b, err, sizeof(err)), 0);
	prof_blob_path(f->dir, "acme", a.id, 2, from, sizeof(from));
	prof_blob_path(f->dir, "other", b.id, 1, keep, sizeof(keep));
	copy_file(from, keep);
	assert_null(open_marker(f->dir, "other", 1, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EBADMSG);
	assert_non_null(strstr(err, "does not open"));
	assert_null(strstr(err, "b-marker"));

	/* the old version put back in place of the current one */
	copy_file(to, from);
	assert_null(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EBADMSG);
	/* its hold was released on the failure */
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &a, err, sizeof(err)), 0);
	assert_int_equal(a.held_pid, 0);

	/* a flipped byte, a truncated blob */
	save_marker(f->dir, "flip", "flip-marker");
	assert_int_equal(prof_get(f->dir, "flip", "alice", "work", &a, err, sizeof(err)), 0);
	prof_blob_path(f->dir, "flip", a.id, 1, from, sizeof(from));
	copy_file(from, to);
	fd = open(from, O_RDWR);
	assert_true(pread(fd, &byte, 1, 200) == 1);
	byte ^= 0x20;
	assert_true(pwrite(fd, &byte, 1, 200) == 1);
	close(fd);
	assert_null(open_marker(f->dir, "flip", 0, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EBADMSG);
	copy_file(to, from);
	assert_int_equal(truncate(from, 100), 0);
	assert_null(open_marker(f->dir, "flip", 0, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EBADMSG);
	/* the good copy back: it opens, still at version 1 */
	copy_file(to, from);
	assert_string_equal(open_marker(f->dir, "flip", 0, &rc, err, sizeof(err)), "flip-marker");
}

static void test_one_writer_read_only_copies_and_stale_holds(void **state)
{
	struct fx *f = *state;
	struct prof_open_opts o = opts("acme", "work", 0);
	struct prof_lease *first = NULL, *second = NULL, *ro = NULL;
	char err[1024] = "", path[4200], sql[512];
	struct prof_info info;
	pid_t child;
	int status;
	int rc = 0;
	int i;

	save_marker(f->dir, "acme", "shared");
	assert_int_equal(prof_lease_open(f->dir, &o, &first, err, sizeof(err)), 0);
	assert_int_equal(prof_lease_open(f->dir, &o, &second, err, sizeof(err)), -PROF_EBUSY);
	assert_non_null(strstr(err, "in use by test"));
	assert_non_null(strstr(err, "since"));
	assert_non_null(strstr(err, "read-only"));
	o.readonly = 1;
	assert_int_equal(prof_lease_open(f->dir, &o, &ro, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/Default/Cookies", prof_lease_dir(ro));
	assert_string_equal(read_text(path), "shared");
	assert_int_equal(prof_lease_save(ro, NULL, err, sizeof(err)), -PROF_EINVAL);
	assert_non_null(strstr(err, "read-only"));
	prof_lease_close(ro);
	/* deleting a held profile is refused */
	assert_int_equal(prof_delete(f->dir, "acme", "alice", "work", err, sizeof(err)),
	                 -PROF_EBUSY);
	prof_lease_close(first);

	/* a hold left by a process that is gone is released by the next open */
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, &status, 0);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	snprintf(sql, sizeof(sql),
	         "UPDATE prof_profiles SET held_by = 'crashed', held_pid = %d, held_since_ms = 5 "
	         "WHERE id = '%s'",
	         (int)child, info.id);
	assert_int_equal(store_fixture_exec(sql), 0);
	o.readonly = 0;
	assert_int_equal(prof_lease_open(f->dir, &o, &first, err, sizeof(err)), 0);
	prof_lease_close(first);

	/* a writer killed while it holds the profile: its store handle went
	 * with it, and so did its hold */
	child = fork();
	if (child == 0) {
		struct prof_lease *dying = NULL;

		_exit(prof_lease_open(f->dir, &o, &dying, err, sizeof(err)) == 0 ? 0 : 3);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	assert_int_equal(info.held_pid, child);
	/* PostgreSQL ends the dead writer's connection a moment after the
	 * kernel closed its socket: until then the hold is (rightly) live */
	for (i = 0; i < 100; i++) {
		rc = prof_lease_open(f->dir, &o, &first, err, sizeof(err));
		if (rc != -PROF_EBUSY)
			break;
		usleep(100 * 1000);
	}
	assert_int_equal(rc, 0);
	prof_lease_close(first);
}

/* Writers racing from connections of their own (as two replicas do). */
struct racer {
	const char *dir;
	pthread_barrier_t *start;
	int rc;
	struct prof_lease *lease;
};

static void *race_open(void *arg)
{
	struct racer *r = arg;
	struct prof_open_opts o = opts("acme", "work", 0);
	char err[1024] = "";

	pthread_barrier_wait(r->start);
	r->rc = prof_lease_open(r->dir, &o, &r->lease, err, sizeof(err));
	return NULL;
}

static void test_racing_writers_one_wins(void **state)
{
	struct fx *f = *state;
	enum { RACERS = 4 };
	struct racer racers[RACERS];
	pthread_t threads[RACERS];
	pthread_barrier_t start;
	int round;
	int i;

	save_marker(f->dir, "acme", "raced");
	for (round = 0; round < 10; round++) {
		int winners = 0;
		int busy = 0;

		pthread_barrier_init(&start, NULL, RACERS);
		for (i = 0; i < RACERS; i++) {
			racers[i] = (struct racer){ f->dir, &start, 1, NULL };
			assert_int_equal(pthread_create(&threads[i], NULL, race_open, &racers[i]),
			                 0);
		}
		for (i = 0; i < RACERS; i++) {
			pthread_join(threads[i], NULL);
			winners += racers[i].rc == 0;
			busy += racers[i].rc == -PROF_EBUSY;
		}
		pthread_barrier_destroy(&start);
		assert_int_equal(winners, 1);
		assert_int_equal(busy, RACERS - 1);
		for (i = 0; i < RACERS; i++)
			prof_lease_close(racers[i].lease);
	}
}

static void test_revoke_and_expiry(void **state)
{
	struct fx *f = *state;
	struct prof_open_opts o = opts("acme", "work", 0);
	struct prof_lease *l = NULL, *held = NULL;
	struct prof_info info;
	char err[1024] = "";
	size_t purged = 0;
	json_t *list = NULL;
	int rc;

	save_marker(f->dir, "acme", "to-revoke");
	/* revoked while a session holds it: that session cannot save */
	assert_int_equal(prof_lease_open(f->dir, &o, &held, err, sizeof(err)), 0);
	assert_int_equal(prof_revoke(f->dir, "acme", "alice", "work", err, sizeof(err)), 0);
	assert_int_equal(prof_lease_save(held, NULL, err, sizeof(err)), -PROF_EBUSY);
	prof_lease_close(held);
	assert_null(open_marker(f->dir, "acme", 1, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EREVOKED);
	assert_non_null(strstr(err, "revoked"));
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	assert_true(info.revoked);
	assert_int_equal(info.version, 1);

	/* expiry: refused once past, then purged */
	assert_int_equal(prof_create(f->dir, "acme", "alice", "brief", 1, &info, err, sizeof(err)),
	                 0);
	o.name = "brief";
	assert_int_equal(prof_lease_open(f->dir, &o, &l, err, sizeof(err)), 0);
	prof_lease_close(l);
	sleep(1);
	usleep(100 * 1000);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "brief", &info, err, sizeof(err)), 0);
	assert_int_equal(prof_lease_open(f->dir, &o, &l, err, sizeof(err)), -PROF_EEXPIRED);
	assert_non_null(strstr(err, "expired"));
	/* the refused open purged it */
	assert_int_equal(prof_get(f->dir, "acme", "alice", "brief", &info, err, sizeof(err)),
	                 -PROF_ENOTFOUND);
	assert_int_equal(prof_sweep(f->dir, &purged, err, sizeof(err)), 0);
	assert_int_equal(purged, 0);
	assert_int_equal(prof_lease_open(f->dir, &o, &l, err, sizeof(err)), -PROF_ENOTFOUND);
	assert_int_equal(prof_list(f->dir, "acme", NULL, &list, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(list), 1);
	json_decref(list);
	/* another tenant lists nothing of acme's */
	assert_int_equal(prof_list(f->dir, "other", NULL, &list, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(list), 0);
	json_decref(list);
	assert_int_equal(prof_create(f->dir, "acme", "alice", "../x", 0, NULL, err, sizeof(err)),
	                 -PROF_EINVAL);
}

/* ---- sealed versions in the object store ------------------------------------ */

/* Opens a directory object store under the fixture's dir and keeps
 * profiles in it. */
static struct blob_store *use_objects(const struct fx *f, char *root, size_t rootlen)
{
	struct blob_config c;
	struct blob_store *b = NULL;
	char err[512] = "";

	memset(&c, 0, sizeof(c));
	c.kind = BLOB_FS;
	snprintf(root, rootlen, "%s/bucket", f->dir);
	snprintf(c.dir, sizeof(c.dir), "%s", root);
	assert_int_equal(blob_open(&c, &b, err, sizeof(err)), 0);
	prof_use_object_store(b);
	return b;
}

/* A version sealed before the object store was configured opens from the
 * data dir; the next save puts it in the store, named by its digest, and
 * leaves no sealed file on the disk; the tenant key is shared there, so a
 * data dir without it (or with one of its own) opens the profile; an
 * altered or missing object does not open, and says so; a process without
 * the store says it needs one. */
static void test_object_store_holds_the_sealed_versions(void **state)
{
	struct fx *f = *state;
	struct blob_store *b;
	struct prof_info info;
	unsigned char key_a[PROF_KEY_BYTES], key_b[PROF_KEY_BYTES];
	char root[200], path[4300], keyfile[4300], err[1024] = "";
	struct stat st;
	json_t *shown;
	int rc;

	assert_int_equal(save_marker(f->dir, "acme", "before=on-disk"), 1);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	shown = prof_info_json(&info);
	assert_string_equal(json_string_value(json_object_get(shown, "sealed_in")), "data_dir");
	json_decref(shown);
	b = use_objects(f, root, sizeof(root));
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)),
	                    "before=on-disk");
	assert_int_equal(save_marker(f->dir, "acme", "session=SECRET-COOKIE-OBJ"), 2);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	assert_int_equal(info.version, 2);
	assert_int_equal(strlen(info.sealed_sha256), 64);
	shown = prof_info_json(&info);
	assert_string_equal(json_string_value(json_object_get(shown, "sealed_in")), "object_store");
	json_decref(shown);
	for (int v = 1; v <= 2; v++) {
		prof_blob_path(f->dir, "acme", info.id, v, path, sizeof(path));
		assert_int_equal(stat(path, &st), -1); /* nothing sealed on the disk */
	}
	snprintf(path, sizeof(path), "%s/tenants/acme/profiles/%s/%s", root, info.id,
	         info.sealed_sha256);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, info.size_bytes);
	assert_false(file_contains(path, "SECRET-COOKIE"));

	/* the tenant key in the store is this data dir's, wrapped by the master key */
	assert_int_equal(prof_keys_tenant_key(f->dir, "acme", key_a, err, sizeof(err)), 0);
	snprintf(keyfile, sizeof(keyfile), "%s/tenants/acme/keys/tenant.key", root);
	assert_int_equal(stat(keyfile, &st), 0);
	/* another replica's data dir: the same master key, a tenant key of its own */
	snprintf(path, sizeof(path), "%s/keys/tenants/acme.key", f->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(prof_keys_tenant_key(f->dir, "acme", key_b, err, sizeof(err)), 0);
	assert_memory_not_equal(key_a, key_b, sizeof(key_a));
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)),
	                    "session=SECRET-COOKIE-OBJ");
	assert_int_equal(prof_tenant_key(f->dir, "acme", key_b, err, sizeof(err)), 0);
	assert_memory_equal(key_a, key_b, sizeof(key_a));

	/* one byte of the object changed: refused before anything is unsealed */
	snprintf(path, sizeof(path), "%s/tenants/acme/profiles/%s/%s", root, info.id,
	         info.sealed_sha256);
	{
		FILE *fp = fopen(path, "r+b");
		int ch;

		assert_non_null(fp);
		fseek(fp, 100, SEEK_SET);
		ch = fgetc(fp);
		fseek(fp, 100, SEEK_SET);
		fputc(ch ^ 0x5a, fp);
		fclose(fp);
	}
	assert_null(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EBADMSG);
	assert_non_null(strstr(err, "was altered (its SHA-256 is not the one the metadata"));
	assert_non_null(strstr(err, info.sealed_sha256));
	/* the profile is left as it is, and not held */
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &info, err, sizeof(err)), 0);
	assert_int_equal(info.version, 2);
	assert_int_equal(info.held_pid, 0);
	/* the object gone */
	assert_int_equal(unlink(path), 0);
	assert_null(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EBADMSG);
	assert_non_null(strstr(err, "is missing from the object store"));

	/* a glassbox without the object store cannot open what is only there */
	prof_use_object_store(NULL);
	blob_close(b);
	assert_null(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)));
	assert_int_equal(rc, -PROF_EIO);
	assert_non_null(strstr(err, "this glassbox has none"));
}

/* Counts the files in dir (0 when it is missing). */
static int count_files(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Each save in the object store keeps the new version and the one before
 * it, and removes the older ones; deleting the profile removes them all. */
static void test_object_store_keeps_two_versions(void **state)
{
	struct fx *f = *state;
	struct blob_store *b = use_objects(f, (char[200]){ 0 }, 200);
	struct prof_info v2, v4;
	char dir[4300], path[4400], err[1024] = "";
	struct stat st;
	int rc;

	assert_int_equal(save_marker(f->dir, "acme", "v=1"), 1);
	assert_int_equal(save_marker(f->dir, "acme", "v=2"), 2);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &v2, err, sizeof(err)), 0);
	snprintf(dir, sizeof(dir), "%s/bucket/tenants/acme/profiles/%s", f->dir, v2.id);
	assert_int_equal(count_files(dir), 2);
	assert_int_equal(save_marker(f->dir, "acme", "v=3"), 3);
	assert_int_equal(save_marker(f->dir, "acme", "v=4"), 4);
	assert_int_equal(prof_get(f->dir, "acme", "alice", "work", &v4, err, sizeof(err)), 0);
	assert_int_equal(count_files(dir), 2);
	snprintf(path, sizeof(path), "%s/%s", dir, v4.sealed_sha256);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, v2.sealed_sha256);
	assert_int_equal(stat(path, &st), -1); /* two versions back: removed */
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)), "v=4");
	assert_int_equal(prof_delete(f->dir, "acme", "alice", "work", err, sizeof(err)), 0);
	assert_int_equal(count_files(dir), 0);
	prof_use_object_store(NULL);
	blob_close(b);
}

/* Writes a master key file of 64 hex digits d, 0600, at dir/name (path). */
static void master_file(const char *dir, const char *name, char d, char *path, size_t cap)
{
	char hex[65];
	FILE *fp;

	snprintf(path, cap, "%s/%s", dir, name);
	memset(hex, d, 64);
	hex[64] = '\0';
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%s\n", hex);
	fclose(fp);
	assert_int_equal(chmod(path, 0600), 0);
}

/* Replicas rotating the master key of their Secret: with the new key
 * current and the old one the other, the profile opens; rewrap re-wraps
 * the object store's tenant key once; then the old key is not needed. */
static void test_object_store_tenant_key_rewrapped(void **state)
{
	struct fx *f = *state;
	struct blob_store *b = use_objects(f, (char[200]){ 0 }, 200);
	char a_key[200], b_key[200], err[1024] = "";
	size_t n = 9;
	int rc;

	master_file(f->dir, "a.key", 'a', a_key, sizeof(a_key));
	master_file(f->dir, "b.key", 'b', b_key, sizeof(b_key));
	setenv("GLASSBOX_MASTER_KEY_FILE", a_key, 1);
	assert_int_equal(save_marker(f->dir, "acme", "v=1"), 1);
	setenv("GLASSBOX_MASTER_KEY_FILE", b_key, 1);
	assert_null(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)));
	setenv("GLASSBOX_MASTER_KEY_OTHER_FILE", a_key, 1);
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)), "v=1");
	assert_int_equal(prof_object_rewrap_tenant_keys(f->dir, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(prof_object_rewrap_tenant_keys(f->dir, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	unsetenv("GLASSBOX_MASTER_KEY_OTHER_FILE");
	assert_string_equal(open_marker(f->dir, "acme", 0, &rc, err, sizeof(err)), "v=1");
	unsetenv("GLASSBOX_MASTER_KEY_FILE");
	prof_use_object_store(NULL);
	blob_close(b);
}

/* ---- the metadata DB ------------------------------------------------------- */

struct held_lock {
	sqlite3 *db;
	int release_after_ms;
};

static void *release_lock_later(void *arg)
{
	struct held_lock *h = arg;

	usleep((useconds_t)h->release_after_ms * 1000u);
	sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
	return NULL;
}

/* Another connection (a second process opening the same new data dir)
 * is writing to the database, still in rollback mode, while this one
 * opens it: the switch to WAL, which SQLite fails at once without its
 * busy handler in that state, is retried the way the store retries it,
 * and the open succeeds once the other write is committed. */
static void test_db_open_waits_for_a_lock_held_by_another_connection(void **state)
{
	struct fx *f = *state;
	struct held_lock h = { NULL, 300 };
	struct prof_db *db = NULL;
	char path[4200];
	char err[512] = "";
	pthread_t t;

	if (store_fixture_server())
		skip(); /* SQLite's file locking */
	snprintf(path, sizeof(path), "%s/glassbox.db", f->dir);
	assert_int_equal(sqlite3_open(path, &h.db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h.db,
	                              "CREATE TABLE other (x); BEGIN IMMEDIATE; "
	                              "INSERT INTO other VALUES (1)",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	assert_int_equal(pthread_create(&t, NULL, release_lock_later, &h), 0);
	assert_int_equal(prof_db_open(f->dir, &db, err, sizeof(err)), 0);
	assert_non_null(db);
	pthread_join(t, NULL);
	prof_db_close(db);
	sqlite3_close(h.db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seal_round_trip_and_tampering),
		cmocka_unit_test(test_archive_round_trip_skips_caches_and_links),
		cmocka_unit_test(test_extract_refuses_hostile_entries),
		cmocka_unit_test_setup_teardown(test_lease_save_reopen_and_clear_text_never_on_disk,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_private_dir_and_orphan_of_an_uncommitted_save,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_blob_misplaced_or_tampered_does_not_open,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_writer_read_only_copies_and_stale_holds,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_racing_writers_one_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_object_store_keeps_two_versions, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_object_store_tenant_key_rewrapped, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_object_store_holds_the_sealed_versions, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_revoke_and_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_db_open_waits_for_a_lock_held_by_another_connection, setup, teardown),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
