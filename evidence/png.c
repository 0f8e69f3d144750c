/*
 * png.c - PNG validation: a screenshot counts as evidence only if libpng
 * decodes all of it. The bytes are read from memory (png_set_read_fn),
 * every row of every interlace pass is decoded into one reused row
 * buffer (memory stays at one row whatever the image size), and the
 * chunks after the image are read up to IEND. libpng reports errors by
 * longjmp; the setjmp lives in decode(), whose state is all reached
 * through a pointer, so nothing it changes is lost by the jump.
 *
 * A PNG whose bytes passed that decode lately is known by its sha256
 * (evid_png_check_hashed): the same bytes pass again without another
 * decode. Validity is a property of the bytes alone, so this is the same
 * check: a session's camera takes the same page again and again (the same
 * form after each visit, the same second page), and a store keeps each
 * distinct image once anyway. The ring of known hashes is process-wide,
 * guarded by known_lock; only images that decoded are ever in it.
 */
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/log.h"

#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* Largest chunk libpng may allocate for (text, ICC profile...). */
#define PNG_CHUNK_MAX_BYTES (8u * 1024u * 1024u)
/* PNGs known to decode, by sha256 (a ring: the oldest goes first). */
#define PNG_KNOWN_SLOTS 64u

struct png_known {
	char sha256[65]; /* "" when unused */
	size_t len;
	unsigned width;
	unsigned height;
};

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static struct png_known known[PNG_KNOWN_SLOTS]; /* {known_lock} */
static size_t known_next;                       /* {known_lock} the slot written next */
static unsigned long long decodes;              /* {known_lock} full decodes run */

struct png_job {
	png_structp png;
	png_infop info;
	unsigned char *row; /* one decoded row, malloc'd in decode() */
	const unsigned char *buf;
	size_t len;
	size_t off;        /* bytes handed to libpng so far */
	char reason[256];  /* set before a longjmp */
	char warning[256]; /* first libpng warning, for the debug log */
	unsigned width;
	unsigned height;
	int out_of_memory;
};

/* libpng error callback: keeps the message and jumps back to decode(). */
static void on_png_error(png_structp png, png_const_charp msg)
{
	struct png_job *job = png_get_error_ptr(png);

	if (!job->reason[0])
		snprintf(job->reason, sizeof(job->reason), "%s",
		         msg ? msg : "unknown libpng error");
	png_longjmp(png, 1);
}

/* libpng warning callback: warnings do not invalidate; the first is kept. */
static void on_png_warning(png_structp png, png_const_charp msg)
{
	struct png_job *job = png_get_error_ptr(png);

	if (!job->warning[0])
		snprintf(job->warning, sizeof(job->warning), "%s", msg ? msg : "");
}

/* libpng read callback over job->buf; running out of bytes is an error. */
static void on_png_read(png_structp png, png_bytep out, size_t n)
{
	struct png_job *job = png_get_io_ptr(png);

	if (n > job->len - job->off) {
		snprintf(job->reason, sizeof(job->reason),
		         "the data ends after %zu bytes, in the middle of a chunk (truncated)",
		         job->len);
		png_longjmp(png, 1);
	}
	memcpy(out, job->buf + job->off, n);
	job->off += n;
}

/* Decodes the whole image; 0 or -1 with job->reason set. job->png and
 * job->info exist; job->row is freed by the caller. */
static int decode(struct png_job *job)
{
	png_uint_32 w;
	png_uint_32 h;
	int depth;
	int color;
	int interlace;
	int passes;
	int pass;
	png_uint_32 y;
	size_t rowbytes;
	int rc = -1; /* not changed until libpng is done: safe across longjmp */

	if (setjmp(png_jmpbuf(job->png)))
		goto out;
	png_set_read_fn(job->png, job, on_png_read);
	png_set_crc_action(job->png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
	png_set_benign_errors(job->png, 0);
	/* A colour profile that libpng knows to be slightly wrong says
	 * nothing about the pixels; it is common outside Chromium. */
	png_set_option(job->png, PNG_SKIP_sRGB_CHECK_PROFILE, PNG_OPTION_ON);
	png_set_chunk_malloc_max(job->png, PNG_CHUNK_MAX_BYTES);
	png_read_info(job->png, job->info);
	png_get_IHDR(job->png, job->info, &w, &h, &depth, &color, &interlace, NULL, NULL);
	if (w > EVID_PNG_MAX_SIDE || h > EVID_PNG_MAX_SIDE ||
	    (unsigned long long)w * h > EVID_PNG_MAX_PIXELS) {
		snprintf(job->reason, sizeof(job->reason),
		         "the image is %u x %u pixels; the limit is %u per side and %u pixels",
		         (unsigned)w, (unsigned)h, EVID_PNG_MAX_SIDE, EVID_PNG_MAX_PIXELS);
		goto out;
	}
	job->width = (unsigned)w;
	job->height = (unsigned)h;
	passes = png_set_interlace_handling(job->png);
	png_read_update_info(job->png, job->info);
	rowbytes = png_get_rowbytes(job->png, job->info);
	job->row = malloc(rowbytes ? rowbytes : 1);
	if (!job->row) {
		snprintf(job->reason, sizeof(job->reason), "out of memory for a row of %zu bytes",
		         rowbytes);
		job->out_of_memory = 1;
		goto out;
	}
	for (pass = 0; pass < passes; pass++)
		for (y = 0; y < h; y++)
			png_read_row(job->png, job->row, NULL);
	png_read_end(job->png, NULL);
	if (job->off != job->len) {
		snprintf(job->reason, sizeof(job->reason),
		         "%zu bytes follow the IEND chunk (a PNG ends at IEND)",
		         job->len - job->off);
		goto out;
	}
	rc = 0;
out:
	return rc;
}

int evid_png_check(const unsigned char *png, size_t len, struct evid_png_info *info, char *err,
                   size_t errlen)
{
	struct png_job job;
	int decoded;
	int rc = 0;

	memset(&job, 0, sizeof(job));
	if (!png || !len) {
		gb_set_error(err, errlen, "invalid PNG: not a PNG: no data");
		rc = -EVID_EBADPNG;
		goto out;
	}
	if (len < 8 || png_sig_cmp(png, 0, 8) != 0) {
		gb_set_error(err, errlen,
		             "invalid PNG: not a PNG: %zu bytes that do not start "
		             "with the PNG signature",
		             len);
		rc = -EVID_EBADPNG;
		goto out;
	}
	if (len > EVID_MAX_ARTIFACT_BYTES) {
		gb_set_error(err, errlen, "invalid PNG: %zu bytes is more than the %u allowed", len,
		             EVID_MAX_ARTIFACT_BYTES);
		rc = -EVID_EBADPNG;
		goto out;
	}
	pthread_mutex_lock(&known_lock);
	decodes++;
	pthread_mutex_unlock(&known_lock);
	job.buf = png;
	job.len = len;
	job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, on_png_error, on_png_warning);
	if (job.png)
		job.info = png_create_info_struct(job.png);
	if (!job.png || !job.info) {
		gb_set_error(err, errlen, "cannot check the PNG: out of memory");
		rc = -EVID_ENOMEM;
		goto out;
	}
	decoded = decode(&job);
	if (decoded != 0 && job.out_of_memory) {
		gb_set_error(err, errlen, "cannot check the PNG: %s", job.reason);
		rc = -EVID_ENOMEM;
		goto out;
	}
	if (decoded != 0) {
		gb_set_error(err, errlen, "invalid PNG: %s", job.reason);
		rc = -EVID_EBADPNG;
		goto out;
	}
	if (job.warning[0])
		GB_LOGD("evidence", "PNG of %u x %u accepted with a libpng warning: %s", job.width,
		        job.height, job.warning);
	if (info) {
		info->width = job.width;
		info->height = job.height;
	}
out:
	if (job.png)
		png_destroy_read_struct(&job.png, job.info ? &job.info : NULL, NULL);
	free(job.row);
	return rc;
}

/* 1 and *info filled when sha256 (of len bytes) decoded lately. */
static int known_find(const char *sha256, size_t len, struct evid_png_info *info)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&known_lock);
	for (i = 0; i < PNG_KNOWN_SLOTS && !found; i++) {
		if (known[i].len != len || strcmp(known[i].sha256, sha256) != 0)
			continue;
		info->width = known[i].width;
		info->height = known[i].height;
		found = 1;
	}
	pthread_mutex_unlock(&known_lock);
	return found;
}

/* Remembers that the PNG with sha256 decoded, as info says. */
static void known_add(const char *sha256, size_t len, const struct evid_png_info *info)
{
	struct png_known *k;

	pthread_mutex_lock(&known_lock);
	k = &known[known_next];
	known_next = (known_next + 1) % PNG_KNOWN_SLOTS;
	snprintf(k->sha256, sizeof(k->sha256), "%s", sha256);
	k->len = len;
	k->width = info->width;
	k->height = info->height;
	pthread_mutex_unlock(&known_lock);
}

int evid_png_check_hashed(const unsigned char *png, size_t len, const char *sha256,
                          struct evid_png_info *info, char *err, size_t errlen)
{
	struct evid_png_info got = { 0 };
	int rc = 0;

	if (!evid_sha256_hex_is_valid(sha256)) {
		rc = evid_png_check(png, len, info, err, errlen);
		goto out;
	}
	if (known_find(sha256, len, &got))
		goto done;
	rc = evid_png_check(png, len, &got, err, errlen);
	if (rc != 0)
		goto out;
	known_add(sha256, len, &got);
done:
	if (info)
		*info = got;
out:
	return rc;
}

#ifdef GB_UNITTEST_BUILD
unsigned long long evid_png_decodes(void)
{
	unsigned long long n;

	pthread_mutex_lock(&known_lock);
	n = decodes;
	pthread_mutex_unlock(&known_lock);
	return n;
}
#endif
