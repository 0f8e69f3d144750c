/*
 * test_evidence.c - the artifact store, PNG validation and base64.
 *
 * PNGs are made here with libpng, then damaged on purpose. Each test gets
 * its own data dir under $TMPDIR (or /tmp), removed afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>
#include <png.h>
#include <sodium.h>

#include "store_fixture.h"
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"
#include "evidence/files.h"

/* ---- helpers ------------------------------------------------------------ */

struct membuf {
	unsigned char *data;
	size_t len;
	size_t cap;
};

static void membuf_write(png_structp png, png_bytep bytes, size_t n)
{
	struct membuf *b = png_get_io_ptr(png);

	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + n)
			cap *= 2;
		b->data = realloc(b->data, cap);
		assert_non_null(b->data);
		b->cap = cap;
	}
	memcpy(b->data + b->len, bytes, n);
	b->len += n;
}

static void membuf_flush(png_structp png)
{
	(void)png;
}

/* Encodes a w x h image (8-bit RGB, or 1-bit grey when grey1) with a
 * gradient; interlaced with Adam7 when asked. Caller frees *out. */
static void make_png_ex(unsigned w, unsigned h, int interlace, int grey1, unsigned char **out,
                        size_t *len)
{
	struct membuf b = { 0 };
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	size_t rowbytes = grey1 ? (w + 7) / 8 : (size_t)w * 3;
	unsigned char *row = calloc(1, rowbytes);
	unsigned x;
	unsigned y;
	int pass;
	int passes;

	assert_non_null(png);
	assert_non_null(info);
	assert_non_null(row);
	if (setjmp(png_jmpbuf(png)))
		fail_msg("libpng could not encode the test image");
	png_set_write_fn(png, &b, membuf_write, membuf_flush);
	png_set_IHDR(png, info, w, h, grey1 ? 1 : 8,
	             grey1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB,
	             interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	passes = png_set_interlace_handling(png);
	for (pass = 0; pass < passes; pass++) {
		for (y = 0; y < h; y++) {
			for (x = 0; !grey1 && x < w; x++) {
				row[3 * x] = (unsigned char)(x * 255 / (w ? w : 1));
				row[3 * x + 1] = (unsigned char)(y * 255 / (h ? h : 1));
				row[3 * x + 2] = (unsigned char)((x ^ y) & 0xff);
			}
			png_write_row(png, row);
		}
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	*out = b.data;
	*len = b.len;
}

static void make_png(unsigned w, unsigned h, unsigned char **out, size_t *len)
{
	make_png_ex(w, h, 0, 0, out, len);
}

/* Offset of the first data byte of the first chunk of the given type. */
static size_t chunk_data_offset(const unsigned char *png, size_t len, const char *type)
{
	size_t off = 8;

	while (off + 8 <= len) {
		uint32_t clen = (uint32_t)png[off] << 24 | (uint32_t)png[off + 1] << 16 |
		                (uint32_t)png[off + 2] << 8 | png[off + 3];
		if (!memcmp(png + off + 4, type, 4))
			return off + 8;
		off += 12 + clen;
	}
	fail_msg("no %s chunk", type);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	chmod(path, 0700);
	return remove(path);
}

struct fixture {
	char root[256];
	char data[300];
	struct evid_store *store;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "%s/evidtest.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->data, sizeof(f->data), "%s/data", f->root);
	assert_int_equal(store_fixture_begin(f->data), 0);
	assert_int_equal(evid_store_open(f->data, &f->store), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	evid_store_close(f->store);
	store_fixture_end();
	chmod(f->root, 0700);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static struct evid_meta screenshot_meta(const char *tenant, const char *operation)
{
	struct evid_meta m = {
		.tenant = tenant,
		.kind = "screenshot",
		.mime = "image/png",
		.session_id = "s-1",
		.operation_id = operation,
		.tool = "browser_click",
		.url = "https://example.test/form",
		.arguments = NULL,
	};
	return m;
}

/* Number of entries in dir whose name starts with prefix. */
static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	for (e = readdir(d); e; e = readdir(d))
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

static json_t *load_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_t *load_json(const char *fmt, ...)
{
	char path[4096];
	json_error_t jerr;
	json_t *j;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	j = json_load_file(path, 0, &jerr);
	if (!j)
		fail_msg("cannot load %s: %s", path, jerr.text);
	return j;
}

/* ---- PNG ---------------------------------------------------------------- */

static void test_png_valid(void **state)
{
	struct evid_png_info info = { 0 };
	unsigned char *png;
	size_t len;
	char err[256] = "";

	(void)state;
	make_png(64, 48, &png, &len);
	assert_int_equal(evid_png_check(png, len, &info, err, sizeof(err)), 0);
	assert_int_equal(info.width, 64);
	assert_int_equal(info.height, 48);
	free(png);

	make_png_ex(33, 17, 1, 0, &png, &len);
	assert_int_equal(evid_png_check(png, len, &info, err, sizeof(err)), 0);
	assert_int_equal(info.width, 33);
	assert_int_equal(info.height, 17);
	free(png);
}

static void test_png_flipped_idat_byte(void **state)
{
	unsigned char *png;
	size_t len;
	size_t idat;
	char err[256] = "";

	(void)state;
	make_png(64, 48, &png, &len);
	idat = chunk_data_offset(png, len, "IDAT");
	png[idat + 10] ^= 0x55;
	assert_int_equal(evid_png_check(png, len, NULL, err, sizeof(err)), -EVID_EBADPNG);
	assert_non_null(strstr(err, "invalid PNG: "));
	assert_true(strlen(err) > strlen("invalid PNG: "));
	free(png);
}

static void test_png_truncated(void **state)
{
	unsigned char *png;
	size_t len;
	size_t idat;
	char err[256] = "";

	(void)state;
	make_png(64, 48, &png, &len);
	idat = chunk_data_offset(png, len, "IDAT");
	/* cut in the middle of the image data */
	assert_int_equal(evid_png_check(png, idat + 20, NULL, err, sizeof(err)), -EVID_EBADPNG);
	assert_non_null(strstr(err, "truncated"));
	/* cut just before the end: IEND incomplete */
	assert_int_equal(evid_png_check(png, len - 3, NULL, err, sizeof(err)), -EVID_EBADPNG);
	assert_non_null(strstr(err, "truncated"));
	/* only the signature */
	assert_int_equal(evid_png_check(png, 8, NULL, err, sizeof(err)), -EVID_EBADPNG);
	free(png);
}

static void test_png_not_a_png(void **state)
{
	static const unsigned char text[] = "<html>Not Found</html>";
	char err[256] = "";

	(void)state;
	assert_int_equal(evid_png_check(text, sizeof(text) - 1, NULL, err, sizeof(err)),
	                 -EVID_EBADPNG);
	assert_non_null(strstr(err, "not a PNG"));
	assert_int_equal(evid_png_check(NULL, 0, NULL, err, sizeof(err)), -EVID_EBADPNG);
	assert_int_equal(evid_png_check(text, 3, NULL, NULL, 0), -EVID_EBADPNG);
}

static void test_png_trailing_bytes(void **state)
{
	unsigned char *png;
	unsigned char *longer;
	size_t len;
	char err[256] = "";

	(void)state;
	make_png(8, 8, &png, &len);
	longer = malloc(len + 5);
	assert_non_null(longer);
	memcpy(longer, png, len);
	memcpy(longer + len, "EXTRA", 5);
	assert_int_equal(evid_png_check(longer, len + 5, NULL, err, sizeof(err)), -EVID_EBADPNG);
	assert_non_null(strstr(err, "5 bytes follow the IEND chunk"));
	free(longer);
	free(png);
}

static void test_png_too_large(void **state)
{
	unsigned char *png;
	size_t len;
	char err[256] = "";

	(void)state;
	make_png_ex(EVID_PNG_MAX_SIDE + 1, 1, 0, 1, &png, &len);
	assert_int_equal(evid_png_check(png, len, NULL, err, sizeof(err)), -EVID_EBADPNG);
	assert_non_null(strstr(err, "32769 x 1 pixels"));
	free(png);
}

static void test_png_bad_crc_in_ancillary_chunk(void **state)
{
	unsigned char *png;
	unsigned char *with_text;
	size_t len;
	size_t ihdr_end;
	/* a tEXt chunk "a\0b" with a wrong CRC, inserted after IHDR */
	static const unsigned char chunk[] = { 0,   0, 0,   3,    't',  'E',  'X', 't',
		                               'a', 0, 'b', 0xde, 0xad, 0xbe, 0xef };
	char err[256] = "";

	(void)state;
	make_png(8, 8, &png, &len);
	ihdr_end = 8 + 8 + 13 + 4;
	with_text = malloc(len + sizeof(chunk));
	assert_non_null(with_text);
	memcpy(with_text, png, ihdr_end);
	memcpy(with_text + ihdr_end, chunk, sizeof(chunk));
	memcpy(with_text + ihdr_end + sizeof(chunk), png + ihdr_end, len - ihdr_end);
	assert_int_equal(evid_png_check(with_text, len + sizeof(chunk), NULL, err, sizeof(err)),
	                 -EVID_EBADPNG);
	assert_non_null(strstr(err, "CRC"));
	free(with_text);
	free(png);
}

/* ---- base64 ------------------------------------------------------------- */

static void test_base64(void **state)
{
	static const unsigned char bytes[] = { 0x89, 'P', 'N', 'G', 0, 0xff, 0x10 };
	char b64[64];
	unsigned char *out = NULL;
	size_t outlen = 0;

	(void)state;
	sodium_bin2base64(b64, sizeof(b64), bytes, sizeof(bytes), sodium_base64_VARIANT_ORIGINAL);
	assert_int_equal(evid_base64_decode(b64, strlen(b64), &out, &outlen), 0);
	assert_int_equal(outlen, sizeof(bytes));
	assert_memory_equal(out, bytes, sizeof(bytes));
	free(out);

	/* length given explicitly: no NUL needed */
	assert_int_equal(evid_base64_decode("QUJDRA==garbage", 8, &out, &outlen), 0);
	assert_int_equal(outlen, 4);
	assert_memory_equal(out, "ABCD", 4);
	free(out);

	assert_int_equal(evid_base64_decode("", 0, &out, &outlen), 0);
	assert_non_null(out);
	assert_int_equal(outlen, 0);
	free(out);

	assert_int_equal(evid_base64_decode("QUJD*A==", 8, &out, &outlen), -EVID_EBADB64);
	assert_null(out);
	assert_int_equal(evid_base64_decode("QUJDRA", 6, &out, &outlen), -EVID_EBADB64);
	assert_int_equal(evid_base64_decode("QUJDRA==QUJD", 12, &out, &outlen), -EVID_EBADB64);
	assert_int_equal(evid_base64_decode("QUJD\nRA==", 9, &out, &outlen), -EVID_EBADB64);
	assert_int_equal(evid_base64_decode("QUJD-_==", 8, &out, &outlen), -EVID_EBADB64);
	assert_int_equal(evid_base64_decode(NULL, 4, &out, &outlen), -EVID_EBADB64);
	assert_int_equal(
	    evid_base64_decode("QUJD", (size_t)EVID_MAX_BASE64_BYTES + 4, &out, &outlen),
	    -EVID_EBADB64);
}

/* ---- store -------------------------------------------------------------- */

static void test_store_round_trip(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m = screenshot_meta("acme", "op-1");
	struct evid_ref ref;
	unsigned char *png;
	unsigned char *back = NULL;
	size_t len;
	size_t backlen = 0;
	char expect[65];
	char mime[32] = "";
	char err[512] = "";
	struct stat st;
	char path[4096];

	make_png(20, 10, &png, &len);
	evid_sha256_hex(png, len, expect);
	assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)), 0);
	assert_string_equal(ref.sha256, expect);
	assert_int_equal(ref.size_bytes, len);
	snprintf(path, sizeof(path), "%s/tenants/acme/artifacts/%.2s/%s", f->data, expect, expect);
	assert_string_equal(ref.path, path);

	assert_int_equal(stat(ref.path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/tenants/acme/artifacts/%.2s", f->data, expect);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/tenants/acme/artifacts/%.2s/%s.json", f->data, expect,
	         expect);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/tenants/acme/artifacts/%.2s", f->data, expect);
	assert_int_equal(count_entries(path, ".tmp."), 0);

	assert_int_equal(
	    evid_store_get(f->store, "acme", expect, &back, &backlen, mime, sizeof(mime)), 0);
	assert_int_equal(backlen, len);
	assert_memory_equal(back, png, len);
	assert_string_equal(mime, "image/png");
	free(back);

	/* another tenant does not see it */
	assert_int_equal(evid_store_get(f->store, "other", expect, &back, &backlen, NULL, 0),
	                 -EVID_ENOENT);
	assert_null(back);
	free(png);
}

static void test_store_non_png_kind(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m = screenshot_meta("acme", "op-9");
	struct evid_ref ref;
	unsigned char *back = NULL;
	size_t backlen = 0;
	char mime[8] = "";
	char err[512] = "";

	m.kind = "dom";
	m.mime = "text/html";
	assert_int_equal(evid_store_put(f->store, &m, (const unsigned char *)"<p>hi</p>", 9, &ref,
	                                err, sizeof(err)),
	                 0);
	/* mime_out is cut to its size */
	assert_int_equal(
	    evid_store_get(f->store, "acme", ref.sha256, &back, &backlen, mime, sizeof(mime)), 0);
	assert_string_equal(mime, "text/ht");
	assert_memory_equal(back, "<p>hi</p>", 9);
	free(back);
}

static void test_store_dedupes(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m1 = screenshot_meta("acme", "op-1");
	struct evid_meta m2 = screenshot_meta("acme", "op-2");
	struct evid_meta m3 = screenshot_meta("acme", "op/../../evil");
	struct evid_ref r1;
	struct evid_ref r2;
	struct evid_ref r3;
	unsigned char *png;
	size_t len;
	char dir[4096];
	char err[512] = "";
	struct stat st1;
	struct stat st2;
	json_t *rec;

	make_png(16, 16, &png, &len);
	assert_int_equal(evid_store_put(f->store, &m1, png, len, &r1, err, sizeof(err)), 0);
	assert_int_equal(stat(r1.path, &st1), 0);
	assert_int_equal(evid_store_put(f->store, &m2, png, len, &r2, err, sizeof(err)), 0);
	/* the stored file is kept, not written again */
	assert_int_equal(stat(r1.path, &st2), 0);
	assert_int_equal(st1.st_ino, st2.st_ino);
	assert_int_equal(evid_store_put(f->store, &m2, png, len, &r2, err, sizeof(err)), 0);
	assert_int_equal(evid_store_put(f->store, &m3, png, len, &r3, err, sizeof(err)), 0);
	assert_string_equal(r1.sha256, r2.sha256);
	assert_string_equal(r1.path, r2.path);
	assert_string_equal(r1.path, r3.path);

	snprintf(dir, sizeof(dir), "%s/tenants/acme/artifacts/%.2s", f->data, r1.sha256);
	/* one artifact, four records, no temp files */
	assert_int_equal(count_entries(dir, r1.sha256), 5);
	assert_int_equal(count_entries(dir, ".tmp."), 0);
	rec = load_json("%s/%s.json", dir, r1.sha256);
	assert_string_equal(json_string_value(json_object_get(rec, "operation")), "op-1");
	json_decref(rec);
	rec = load_json("%s/%s.op-2.json", dir, r1.sha256);
	assert_string_equal(json_string_value(json_object_get(rec, "operation")), "op-2");
	json_decref(rec);
	/* nothing else in the dir: the repeated op-2 got a suffixed record */
	assert_int_equal(count_entries(dir, "") - 2 /* . and .. */, 5);
	/* an unsafe operation id is not used in a file name */
	{
		char hex[65];
		const char *op = "op/../../evil";

		evid_sha256_hex((const unsigned char *)op, strlen(op), hex);
		hex[16] = '\0';
		rec = load_json("%s/%s.%s.json", dir, r1.sha256, hex);
		assert_string_equal(json_string_value(json_object_get(rec, "operation")), op);
		json_decref(rec);
	}
	free(png);
}

static void test_store_metadata_record(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m = screenshot_meta("acme", "op-7");
	struct evid_ref ref;
	unsigned char *png;
	size_t len;
	char err[512] = "";
	json_t *args = json_pack("{s:s, s:s}", "ref", "e12", "text", "[redacted]");
	json_t *rec;
	const char *time;

	m.arguments = args;
	make_png(4, 4, &png, &len);
	assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)), 0);
	rec = load_json("%s.json", ref.path);
	assert_string_equal(json_string_value(json_object_get(rec, "sha256")), ref.sha256);
	assert_string_equal(json_string_value(json_object_get(rec, "kind")), "screenshot");
	assert_string_equal(json_string_value(json_object_get(rec, "mime")), "image/png");
	assert_int_equal(json_integer_value(json_object_get(rec, "size")), len);
	assert_string_equal(json_string_value(json_object_get(rec, "tenant")), "acme");
	assert_string_equal(json_string_value(json_object_get(rec, "session")), "s-1");
	assert_string_equal(json_string_value(json_object_get(rec, "operation")), "op-7");
	assert_string_equal(json_string_value(json_object_get(rec, "tool")), "browser_click");
	assert_true(json_equal(json_object_get(rec, "arguments"), args));
	assert_string_equal(json_string_value(json_object_get(rec, "url")),
	                    "https://example.test/form");
	time = json_string_value(json_object_get(rec, "time"));
	assert_non_null(time);
	assert_int_equal(strlen(time), strlen("2026-11-29T18:20:01.123Z"));
	assert_int_equal(time[10], 'T');
	assert_int_equal(time[23], 'Z');
	assert_true(json_is_true(json_object_get(rec, "valid")));
	assert_null(json_object_get(rec, "reason"));
	json_decref(rec);

	/* optional fields absent: recorded as null */
	m = screenshot_meta("acme", NULL);
	m.session_id = NULL;
	m.tool = NULL;
	m.url = NULL;
	assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)), 0);
	json_decref(args);
	free(png);
}

static void test_store_tampered_artifact(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m = screenshot_meta("acme", "op-1");
	struct evid_ref ref;
	unsigned char *png;
	unsigned char *back = NULL;
	size_t len;
	size_t backlen = 0;
	char err[512] = "";
	FILE *fp;

	make_png(16, 16, &png, &len);
	assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)), 0);
	fp = fopen(ref.path, "r+b");
	assert_non_null(fp);
	fseek(fp, 40, SEEK_SET);
	fputc(png[40] ^ 1, fp);
	fclose(fp);

	assert_int_equal(evid_store_get(f->store, "acme", ref.sha256, &back, &backlen, NULL, 0),
	                 -EVID_EIO);
	assert_null(back);
	assert_int_equal(evid_store_read(f->store, "acme", ref.sha256, &back, &backlen, NULL, 0,
	                                 err, sizeof(err)),
	                 -EVID_EIO);
	assert_non_null(strstr(err, "was altered"));
	assert_non_null(strstr(err, ref.path));

	/* a truncated artifact is refused too */
	assert_int_equal(truncate(ref.path, 10), 0);
	assert_int_equal(evid_store_get(f->store, "acme", ref.sha256, &back, &backlen, NULL, 0),
	                 -EVID_EIO);

	/* storing the good bytes again repairs it */
	assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)), 0);
	assert_int_equal(evid_store_get(f->store, "acme", ref.sha256, &back, &backlen, NULL, 0), 0);
	assert_memory_equal(back, png, len);
	free(back);
	free(png);
}

static void test_store_get_errors(void **state)
{
	struct fixture *f = *state;
	unsigned char *back = NULL;
	size_t backlen = 0;
	char err[512] = "";
	const char *absent = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

	assert_int_equal(
	    evid_store_read(f->store, "acme", absent, &back, &backlen, NULL, 0, err, sizeof(err)),
	    -EVID_ENOENT);
	assert_non_null(strstr(err, "no artifact 0123"));
	assert_int_equal(
	    evid_store_get(f->store, "acme", "../../etc/passwd", &back, &backlen, NULL, 0),
	    -EVID_EINVAL);
	assert_int_equal(
	    evid_store_get(f->store, "acme",
	                   "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
	                   &back, &backlen, NULL, 0),
	    -EVID_EINVAL);
	assert_int_equal(evid_store_get(f->store, "acme", "abc", &back, &backlen, NULL, 0),
	                 -EVID_EINVAL);
	assert_int_equal(evid_store_get(f->store, "../acme", absent, &back, &backlen, NULL, 0),
	                 -EVID_EINVAL);
}

static void test_store_rejects_bad_png(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m = screenshot_meta("acme", "op-1");
	struct evid_ref ref;
	unsigned char *png;
	size_t len;
	char err[512] = "";
	char dir[4096];

	make_png(16, 16, &png, &len);
	png[chunk_data_offset(png, len, "IDAT") + 3] ^= 0xff;
	assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)),
	                 -EVID_EBADPNG);
	assert_non_null(strstr(err, "invalid PNG"));
	/* nothing stored as an artifact */
	snprintf(dir, sizeof(dir), "%s/tenants/acme", f->data);
	assert_int_equal(access(dir, F_OK), -1);
	free(png);
}

/* A PNG is decoded whole once: the same bytes stored again pass on their
 * sha256 without another decode; bytes that failed are decoded (and
 * refused) each time; other bytes are decoded. */
static void test_store_checks_each_png_once(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m1 = screenshot_meta("acme", "op-1");
	struct evid_meta m2 = screenshot_meta("acme", "op-2");
	struct evid_png_info info = { 0 };
	struct evid_ref r1;
	struct evid_ref r2;
	unsigned char *png;
	unsigned char *bad;
	unsigned char *other;
	size_t len;
	size_t badlen;
	size_t otherlen;
	unsigned long long before;
	char err[512] = "";

	make_png(40, 30, &png, &len);
	make_png(40, 30, &bad, &badlen);
	bad[chunk_data_offset(bad, badlen, "IDAT") + 3] ^= 0xff;
	make_png(41, 30, &other, &otherlen);
	before = evid_png_decodes();
	assert_int_equal(evid_store_put(f->store, &m1, png, len, &r1, err, sizeof(err)), 0);
	assert_int_equal(evid_png_decodes(), before + 1);
	assert_int_equal(evid_store_put(f->store, &m2, png, len, &r2, err, sizeof(err)), 0);
	assert_int_equal(evid_png_decodes(), before + 1); /* known by its sha256 */
	assert_string_equal(r1.sha256, r2.sha256);
	assert_int_equal(evid_png_check_hashed(png, len, r1.sha256, &info, err, sizeof(err)), 0);
	assert_int_equal(info.width, 40);
	assert_int_equal(info.height, 30);
	assert_int_equal(evid_png_decodes(), before + 1);
	/* a PNG that failed is never known: refused, decoded, each time */
	assert_int_equal(evid_store_put(f->store, &m1, bad, badlen, &r1, err, sizeof(err)),
	                 -EVID_EBADPNG);
	assert_int_equal(evid_store_put(f->store, &m2, bad, badlen, &r2, err, sizeof(err)),
	                 -EVID_EBADPNG);
	assert_non_null(strstr(err, "invalid PNG"));
	assert_int_equal(evid_png_decodes(), before + 3);
	/* other bytes: decoded */
	assert_int_equal(evid_store_put(f->store, &m1, other, otherlen, &r1, err, sizeof(err)), 0);
	assert_int_equal(evid_png_decodes(), before + 4);
	free(png);
	free(bad);
	free(other);
}

static void test_store_put_invalid(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m = screenshot_meta("acme", "op-3");
	struct evid_ref ref;
	static const unsigned char junk[] = "this is not a png";
	unsigned char *back = NULL;
	size_t backlen = 0;
	char expect[65];
	char path[4096];
	char err[512] = "";
	json_t *rec;
	FILE *fp;
	char kept[64] = "";

	evid_sha256_hex(junk, sizeof(junk) - 1, expect);
	assert_int_equal(evid_store_put_invalid(f->store, &m, junk, sizeof(junk) - 1,
	                                        "invalid PNG: not a PNG", &ref, err, sizeof(err)),
	                 0);
	assert_string_equal(ref.sha256, expect);
	snprintf(path, sizeof(path), "%s/tenants/acme/invalid/%.2s/%s", f->data, expect, expect);
	assert_string_equal(ref.path, path);
	fp = fopen(path, "rb");
	assert_non_null(fp);
	assert_int_equal(fread(kept, 1, sizeof(kept), fp), sizeof(junk) - 1);
	fclose(fp);
	assert_string_equal(kept, (const char *)junk);

	rec = load_json("%s.json", path);
	assert_true(json_is_false(json_object_get(rec, "valid")));
	assert_string_equal(json_string_value(json_object_get(rec, "reason")),
	                    "invalid PNG: not a PNG");
	assert_string_equal(json_string_value(json_object_get(rec, "operation")), "op-3");
	assert_null(json_object_get(rec, "truncated"));
	json_decref(rec);

	/* never served as an artifact */
	assert_int_equal(evid_store_get(f->store, "acme", expect, &back, &backlen, NULL, 0),
	                 -EVID_ENOENT);
	/* the reason may be the err buffer itself (as filled by a failed put) */
	snprintf(err, sizeof(err), "invalid PNG: IDAT: CRC error");
	assert_int_equal(evid_store_put_invalid(f->store, &m, junk, 4, err, &ref, err, sizeof(err)),
	                 0);
	rec = load_json("%s.json", ref.path);
	assert_string_equal(json_string_value(json_object_get(rec, "reason")),
	                    "invalid PNG: IDAT: CRC error");
	json_decref(rec);
	/* a reason is required */
	assert_int_equal(
	    evid_store_put_invalid(f->store, &m, junk, 3, NULL, &ref, err, sizeof(err)),
	    -EVID_EINVAL);
}

static void test_store_bad_tenant(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"",
		"..",
		".",
		"../x",
		"a/b",
		"a..b",
		".hidden",
		"a b",
		"tenant\n",
		"t\xc3\xa9",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	};
	static const char *const good[] = {
		"acme",  "local", "a.b",
		"A_B-9", "x.",    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	};
	struct evid_meta m;
	struct evid_ref ref;
	char err[512] = "";
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = screenshot_meta(bad[i], "op");
		m.mime = "text/plain";
		err[0] = '\0';
		assert_int_equal(evid_store_put(f->store, &m, (const unsigned char *)"x", 1, &ref,
		                                err, sizeof(err)),
		                 -EVID_EINVAL);
		assert_non_null(strstr(err, "tenant name"));
		assert_false(gb_fs_name_is_safe(bad[i]));
	}
	m = screenshot_meta(NULL, "op");
	assert_int_equal(
	    evid_store_put(f->store, &m, (const unsigned char *)"x", 1, &ref, err, sizeof(err)),
	    -EVID_EINVAL);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(gb_fs_name_is_safe(good[i]));
	/* kind and mime are required */
	m = screenshot_meta("acme", "op");
	m.kind = NULL;
	assert_int_equal(
	    evid_store_put(f->store, &m, (const unsigned char *)"x", 1, &ref, err, sizeof(err)),
	    -EVID_EINVAL);
	/* nothing escaped the data dir */
	assert_int_equal(count_entries(f->root, ""), 3); /* ., .., data */
}

/* Writes are refused in dir: chmod 0500 works for a normal user, not for
 * root (CAP_DAC_OVERRIDE). Returns 1 when a probe write fails. */
static int chmod_blocks_writes(const char *dir)
{
	char probe[4200];
	int fd;

	snprintf(probe, sizeof(probe), "%s/probe", dir);
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return 1;
	close(fd);
	unlink(probe);
	return 0;
}

static void test_store_eio(void **state)
{
	struct fixture *f = *state;
	struct evid_meta m = screenshot_meta("acme", "op-1");
	struct evid_store *s = NULL;
	struct evid_ref ref;
	unsigned char *png;
	size_t len;
	char path[4096];
	char err[1024] = "";
	FILE *fp;

	make_png(8, 8, &png, &len);

	/* a data dir whose parent is a regular file cannot be created */
	snprintf(path, sizeof(path), "%s/plainfile", f->root);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/plainfile/data", f->root);
	assert_int_equal(evid_store_open_err(path, &s, err, sizeof(err)), -EVID_EIO);
	assert_null(s);
	assert_non_null(strstr(err, "plainfile"));
	assert_non_null(strstr(err, strerror(ENOTDIR)));
	assert_non_null(strstr(err, "choose another data dir"));

	/* a file in the way of the tenant's dir: put fails cleanly */
	snprintf(path, sizeof(path), "%s/tenants/blocked", f->data);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	m.tenant = "blocked";
	assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)), -EVID_EIO);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, strerror(ENOTDIR)));

	/* a read-only tenants dir, where chmod can make one */
	snprintf(path, sizeof(path), "%s/tenants", f->data);
	assert_int_equal(chmod(path, 0500), 0);
	if (chmod_blocks_writes(path)) {
		m.tenant = "readonly";
		assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)),
		                 -EVID_EIO);
		assert_non_null(strstr(err, path));
		assert_non_null(strstr(err, strerror(EACCES)));
		assert_non_null(strstr(err, "write access"));
	} else {
		/* running with CAP_DAC_OVERRIDE (root): an existing artifacts dir
		 * replaced by a file stands in for an unwritable one */
		snprintf(path, sizeof(path), "%s/tenants/ro", f->data);
		assert_int_equal(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/tenants/ro/artifacts", f->data);
		fp = fopen(path, "w");
		assert_non_null(fp);
		fclose(fp);
		m.tenant = "ro";
		assert_int_equal(evid_store_put(f->store, &m, png, len, &ref, err, sizeof(err)),
		                 -EVID_EIO);
		assert_non_null(strstr(err, path));
		assert_non_null(strstr(err, "cannot create directory"));
	}
	snprintf(path, sizeof(path), "%s/tenants", f->data);
	chmod(path, 0700);
	free(png);
}

struct racer {
	struct evid_store *store;
	const unsigned char *png;
	size_t len;
	char op[16];
	int rc;
	struct evid_ref ref;
	char err[512];
};

static void *race_put(void *arg)
{
	struct racer *r = arg;
	struct evid_meta m = screenshot_meta("acme", r->op);

	r->rc = evid_store_put(r->store, &m, r->png, r->len, &r->ref, r->err, sizeof(r->err));
	return NULL;
}

static void test_store_concurrent_same_bytes(void **state)
{
	enum { N = 8 };
	struct fixture *f = *state;
	struct racer r[N];
	pthread_t t[N];
	unsigned char *png;
	unsigned char *back = NULL;
	size_t len;
	size_t backlen = 0;
	char dir[4096];
	int i;

	make_png(200, 100, &png, &len);
	for (i = 0; i < N; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].store = f->store;
		r[i].png = png;
		r[i].len = len;
		snprintf(r[i].op, sizeof(r[i].op), "op-%d", i);
		assert_int_equal(pthread_create(&t[i], NULL, race_put, &r[i]), 0);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (i = 0; i < N; i++) {
		if (r[i].rc != 0)
			fail_msg("put %d failed: %s", i, r[i].err);
		assert_string_equal(r[i].ref.sha256, r[0].ref.sha256);
	}
	snprintf(dir, sizeof(dir), "%s/tenants/acme/artifacts/%.2s", f->data, r[0].ref.sha256);
	assert_int_equal(count_entries(dir, r[0].ref.sha256), 1 + N);
	assert_int_equal(count_entries(dir, ".tmp."), 0);
	assert_int_equal(
	    evid_store_get(f->store, "acme", r[0].ref.sha256, &back, &backlen, NULL, 0), 0);
	assert_memory_equal(back, png, len);
	free(back);
	free(png);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(evid_strerror(-EVID_EBADPNG), "invalid PNG");
	assert_string_equal(evid_strerror(EVID_ENOENT), "no such artifact");
	assert_string_equal(evid_strerror(-99), "unknown evidence error");
}

/* ---- the upload area (files.c) ------------------------------------------ */

static void test_upload_area(void **state)
{
	struct fixture *f = *state;
	const unsigned char pdf[] = "%PDF-1.4\nan invoice\n";
	const unsigned char txt[] = "plain words\n";
	struct evid_upload u, found;
	unsigned char *data = NULL;
	char err[512];
	json_t *list;
	size_t len = 0;

	assert_int_equal(evid_upload_put(f->store, "acme", "invoice.pdf", pdf, sizeof(pdf) - 1, &u,
	                                 err, sizeof(err)),
	                 0);
	assert_string_equal(u.mime, "application/pdf");
	assert_int_equal(u.size_bytes, sizeof(pdf) - 1);
	assert_int_equal(
	    evid_upload_find(f->store, "acme", "invoice.pdf", &found, err, sizeof(err)), 0);
	assert_string_equal(found.sha256, u.sha256);
	assert_int_equal(evid_upload_read(f->store, "acme", &found, &data, &len, err, sizeof(err)),
	                 0);
	assert_int_equal(len, sizeof(pdf) - 1);
	assert_memory_equal(data, pdf, len);
	free(data);

	/* the same name again replaces it; another tenant does not see it */
	assert_int_equal(evid_upload_put(f->store, "acme", "invoice.pdf", txt, sizeof(txt) - 1, &u,
	                                 err, sizeof(err)),
	                 0);
	assert_int_equal(
	    evid_upload_find(f->store, "acme", "invoice.pdf", &found, err, sizeof(err)), 0);
	assert_string_equal(found.mime, "text/plain");
	assert_int_equal(
	    evid_upload_find(f->store, "other", "invoice.pdf", &found, err, sizeof(err)),
	    -EVID_ENOENT);
	assert_non_null(strstr(err, "glassbox files put"));
	assert_int_equal(evid_upload_put(f->store, "acme", "a.txt", txt, sizeof(txt) - 1, NULL, err,
	                                 sizeof(err)),
	                 0);
	list = evid_upload_list(f->store, "acme");
	assert_int_equal(json_array_size(list), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "name")),
	                    "a.txt");
	json_decref(list);
	assert_int_equal(evid_upload_remove(f->store, "acme", "a.txt", err, sizeof(err)), 0);
	assert_int_equal(evid_upload_remove(f->store, "acme", "a.txt", err, sizeof(err)),
	                 -EVID_ENOENT);
}

/* Names that are paths, and entries damaged on disk, are refused. */
static void test_upload_area_hostile(void **state)
{
	struct fixture *f = *state;
	const char *bad[] = { "../x", "a/b", ".hidden", "", "x\ny", "..", NULL };
	const unsigned char b[] = "x";
	struct evid_upload u;
	char err[512], path[700];
	FILE *fp;
	size_t i;

	for (i = 0; bad[i]; i++) {
		assert_int_equal(
		    evid_upload_put(f->store, "acme", bad[i], b, 1, &u, err, sizeof(err)),
		    -EVID_EINVAL);
		assert_non_null(strstr(err, "is not a file name of the upload area"));
		assert_int_equal(evid_upload_find(f->store, "acme", bad[i], &u, err, sizeof(err)),
		                 -EVID_EINVAL);
	}
	assert_int_equal(evid_upload_put(f->store, "../acme", "x.txt", b, 1, &u, err, sizeof(err)),
	                 -EVID_EINVAL);
	/* an entry that is not one, or names a hash that is not in the store */
	assert_int_equal(evid_upload_put(f->store, "acme", "x.txt", b, 1, &u, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/tenants/acme/uploads/x.txt.json", f->data);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("{\"name\": \"x.txt\", \"sha256\": \"../../keys\", \"size\": 1, \"mime\": \"a\"}",
	      fp);
	fclose(fp);
	assert_int_equal(evid_upload_find(f->store, "acme", "x.txt", &u, err, sizeof(err)),
	                 -EVID_EIO);
	assert_non_null(strstr(err, "damaged"));
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("{\"name\": \"x.txt\", \"sha256\": "
	      "\"0000000000000000000000000000000000000000000000000000000000000000\", \"size\": 1, "
	      "\"mime\": \"a\"}",
	      fp);
	fclose(fp);
	assert_int_equal(evid_upload_find(f->store, "acme", "x.txt", &u, err, sizeof(err)),
	                 -EVID_ENOENT);
	assert_non_null(strstr(err, "no longer in the store"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_png_valid),
		cmocka_unit_test(test_png_flipped_idat_byte),
		cmocka_unit_test(test_png_truncated),
		cmocka_unit_test(test_png_not_a_png),
		cmocka_unit_test(test_png_trailing_bytes),
		cmocka_unit_test(test_png_too_large),
		cmocka_unit_test(test_png_bad_crc_in_ancillary_chunk),
		cmocka_unit_test(test_base64),
		cmocka_unit_test_setup_teardown(test_store_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_non_png_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_dedupes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_metadata_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_tampered_artifact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_get_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_rejects_bad_png, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_checks_each_png_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_put_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_bad_tenant, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_eio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_concurrent_same_bytes, setup, teardown),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test_setup_teardown(test_upload_area, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upload_area_hostile, setup, teardown),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
