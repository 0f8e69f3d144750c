/*
 * test_annotate.c - the annotated screenshot: the box outline and the
 * click-point crosshair land on exactly the pixels documented in
 * evidence.h (every other pixel is untouched), scale with the device
 * pixel ratio, are clipped at the image's edges, and the result is a PNG
 * that passes evid_png_check. Inputs of other PNG formats (grey,
 * palette, 16-bit, interlaced, with alpha) are annotated the same way.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "evidence_fixture.h"

static const unsigned char box_rgb[3] = { EVID_ANNOT_BOX_RGB };
static const unsigned char point_rgb[3] = { EVID_ANNOT_POINT_RGB };
static const unsigned char white[3] = { 0xff, 0xff, 0xff };

/* The colour the drawing gives (x, y), or NULL when it leaves it alone;
 * an independent statement of the rules in evidence.h for scale s. */
static const unsigned char *expected_paint(long x, long y, const struct evid_annotation *a,
                                           double s)
{
	long t = lround(EVID_ANNOT_BOX_PX * s);
	long arm = lround(EVID_ANNOT_POINT_ARM_PX * s);
	long th = lround(EVID_ANNOT_POINT_PX * s);
	long x0 = lround(a->box_x * s), y0 = lround(a->box_y * s);
	long x1 = lround((a->box_x + a->box_width) * s),
	     y1 = lround((a->box_y + a->box_height) * s);
	long px = (long)floor(a->point_x * s), py = (long)floor(a->point_y * s);
	long half = th / 2;
	const unsigned char *c = NULL;
	int in_ring;

	t = t < 1 ? 1 : t;
	if (a->has_box) {
		in_ring = x >= x0 - t && x < x1 + t && y >= y0 - t && y < y1 + t &&
		          !(x >= x0 && x < x1 && y >= y0 && y < y1);
		if (in_ring)
			c = box_rgb;
	}
	if (a->has_hit_box) {
		long hx0 = lround(a->hit_x * s), hy0 = lround(a->hit_y * s);
		long hx1 = lround((a->hit_x + a->hit_width) * s),
		     hy1 = lround((a->hit_y + a->hit_height) * s);

		in_ring = x >= hx0 - t && x < hx1 + t && y >= hy0 - t && y < hy1 + t &&
		          !(x >= hx0 && x < hx1 && y >= hy0 && y < hy1);
		if (in_ring)
			c = point_rgb; /* what a missed click hit: the colour of the point */
	}
	if (a->has_point) {
		if ((x >= px - arm && x <= px + arm && y >= py - half && y < py - half + th) ||
		    (y >= py - arm && y <= py + arm && x >= px - half && x < px - half + th))
			c = point_rgb;
		if (x == px && y == py)
			c = white;
	}
	return c;
}

/* Annotates png and checks every pixel of the result against the rules. */
static void check_annotation(const unsigned char *png, size_t len, const struct evid_annotation *a,
                             size_t *painted)
{
	unsigned char *out = NULL;
	unsigned char *before;
	unsigned char *after;
	size_t outlen = 0;
	unsigned w0, h0, w1, h1;
	struct evid_png_info info;
	char err[512] = "";
	double s = a->scale > 0 ? a->scale : 1;
	const unsigned char *want;
	const unsigned char *p;
	const unsigned char *q;
	long x;
	long y;

	if (evid_png_annotate(png, len, a, &out, &outlen, err, sizeof(err)) != 0)
		fail_msg("annotate: %s", err);
	assert_int_equal(evid_png_check(out, outlen, &info, err, sizeof(err)), 0);
	before = fx_rgba(png, len, &w0, &h0);
	after = fx_rgba(out, outlen, &w1, &h1);
	assert_int_equal(w0, w1);
	assert_int_equal(h0, h1);
	assert_int_equal(info.width, w1);
	*painted = 0;
	for (y = 0; y < (long)h1; y++) {
		for (x = 0; x < (long)w1; x++) {
			p = after + ((size_t)y * w1 + (size_t)x) * 4;
			q = before + ((size_t)y * w0 + (size_t)x) * 4;
			want = expected_paint(x, y, a, s);
			if (want) {
				if (p[0] != want[0] || p[1] != want[1] || p[2] != want[2] ||
				    p[3] != 0xff)
					fail_msg("pixel (%ld, %ld) is %02x%02x%02x, expected "
					         "%02x%02x%02x",
					         x, y, p[0], p[1], p[2], want[0], want[1], want[2]);
				(*painted)++;
			} else if (memcmp(p, q, 4) != 0) {
				fail_msg("pixel (%ld, %ld) changed but is outside the drawing", x,
				         y);
			}
		}
	}
	free(before);
	free(after);
	free(out);
}

static void test_box_and_point(void **state)
{
	struct evid_annotation a = { 0 };
	unsigned char *png;
	size_t len;
	size_t painted;

	(void)state;
	fx_png(120, 90, 1, &png, &len);
	a.has_box = 1;
	a.box_x = 20;
	a.box_y = 10;
	a.box_width = 30;
	a.box_height = 20;
	a.has_point = 1;
	a.point_x = 80.6;
	a.point_y = 60.2;
	check_annotation(png, len, &a, &painted);
	/* ring: (30 + 6) x (20 + 6) - 30 x 20; crosshair: 2 arms of 25 x 3 less
	 * their 3 x 3 overlap */
	assert_int_equal(painted, (36 * 26 - 30 * 20) + (25 * 3 * 2 - 9));
	free(png);
}

/* A missed click: the target's box, the box of what the click hit, and
 * the point, each on its own pixels. */
static void test_missed_click(void **state)
{
	struct evid_annotation a = { 0 };
	unsigned char *png;
	size_t len;
	size_t painted;

	(void)state;
	fx_png(160, 100, 1, &png, &len);
	a.has_box = 1;
	a.box_x = 10;
	a.box_y = 10;
	a.box_width = 40;
	a.box_height = 20;
	a.has_hit_box = 1;
	a.hit_x = 90;
	a.hit_y = 50;
	a.hit_width = 50;
	a.hit_height = 30;
	a.has_point = 1;
	a.point_x = 30;
	a.point_y = 20;
	check_annotation(png, len, &a, &painted);
	assert_true(painted > (46 * 26 - 40 * 20) + (56 * 36 - 50 * 30));
	free(png);
}

static void test_known_pixels(void **state)
{
	struct evid_annotation a = { 0 };
	unsigned char *png;
	unsigned char *out = NULL;
	unsigned char *px;
	size_t len;
	size_t outlen;
	unsigned w;
	unsigned h;
	char err[256];

	(void)state;
	fx_png(100, 80, 2, &png, &len);
	a.has_box = 1;
	a.box_x = 20;
	a.box_y = 10;
	a.box_width = 30;
	a.box_height = 20;
	a.has_point = 1;
	a.point_x = 70;
	a.point_y = 50;
	assert_int_equal(evid_png_annotate(png, len, &a, &out, &outlen, err, sizeof(err)), 0);
	px = fx_rgba(out, outlen, &w, &h);
#define AT(x, y) (px + ((size_t)(y)*w + (x)) * 4)
	assert_memory_equal(AT(19, 10), box_rgb, 3);     /* just left of the box */
	assert_memory_equal(AT(17, 7), box_rgb, 3);      /* outer corner */
	assert_memory_equal(AT(50, 29), box_rgb, 3);     /* just right of the box */
	assert_memory_equal(AT(35, 30), box_rgb, 3);     /* just below */
	assert_memory_not_equal(AT(20, 10), box_rgb, 3); /* the element itself is untouched */
	assert_memory_not_equal(AT(16, 10), box_rgb, 3); /* beyond the outline */
	assert_memory_equal(AT(70, 50), white, 3);       /* the click point */
	assert_memory_equal(AT(58, 50), point_rgb, 3);   /* end of the left arm */
	assert_memory_equal(AT(70, 62), point_rgb, 3);   /* end of the lower arm */
	assert_memory_not_equal(AT(57, 50), point_rgb, 3);
#undef AT
	free(px);
	free(out);
	free(png);
}

static void test_clipping(void **state)
{
	struct evid_annotation a = { 0 };
	unsigned char *png;
	size_t len;
	size_t painted;

	(void)state;
	fx_png(60, 40, 3, &png, &len);
	/* a box over the top-left corner and a point on the bottom-right pixel */
	a.has_box = 1;
	a.box_x = -10;
	a.box_y = -10;
	a.box_width = 25;
	a.box_height = 20;
	a.has_point = 1;
	a.point_x = 59;
	a.point_y = 39;
	check_annotation(png, len, &a, &painted);
	assert_true(painted > 0);

	/* wholly outside: nothing drawn, the image is the same */
	a.box_x = 500;
	a.box_y = -300;
	a.point_x = -50;
	a.point_y = 1e6;
	check_annotation(png, len, &a, &painted);
	assert_int_equal(painted, 0);

	/* a box larger than the image: its outline is outside, nothing drawn */
	a.has_point = 0;
	a.box_x = -5;
	a.box_y = -5;
	a.box_width = 100;
	a.box_height = 100;
	check_annotation(png, len, &a, &painted);
	assert_int_equal(painted, 0);
	free(png);
}

static void test_scale(void **state)
{
	struct evid_annotation a = { 0 };
	unsigned char *png;
	size_t len;
	size_t painted;

	(void)state;
	fx_png(200, 160, 4, &png, &len);
	a.has_box = 1;
	a.box_x = 10;
	a.box_y = 10;
	a.box_width = 20;
	a.box_height = 10;
	a.has_point = 1;
	a.point_x = 60.5;
	a.point_y = 40.25;
	a.scale = 2; /* devicePixelRatio 2: image pixels are CSS px * 2 */
	check_annotation(png, len, &a, &painted);
	/* ring of 6 px around 40 x 20; arms of 49 x 6 */
	assert_int_equal(painted, (52 * 32 - 40 * 20) + (49 * 6 * 2 - 36));
	free(png);
}

/* Writes a PNG in another format with libpng's simplified API. */
static void other_format(png_uint_32 format, unsigned w, unsigned h, unsigned char **out,
                         size_t *len)
{
	png_image img;
	png_alloc_size_t size = 0;
	size_t n = (size_t)w * h * PNG_IMAGE_PIXEL_SIZE(format);
	unsigned char *px = malloc(n);
	size_t i;

	assert_non_null(px);
	for (i = 0; i < n; i++)
		px[i] = (unsigned char)(i * 37 + 11);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	img.width = w;
	img.height = h;
	img.format = format;
	assert_true(png_image_write_to_memory(&img, NULL, &size, 0, px, 0, NULL));
	*out = malloc(size);
	assert_true(png_image_write_to_memory(&img, *out, &size, 0, px, 0, NULL));
	*len = size;
	free(px);
}

static void test_other_formats(void **state)
{
	static const png_uint_32 formats[] = { PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGBA,
		                               PNG_FORMAT_BGR };
	struct evid_annotation a = { 0 };
	unsigned char *png;
	size_t len;
	size_t painted;
	size_t i;

	(void)state;
	a.has_box = 1;
	a.box_x = 4;
	a.box_y = 4;
	a.box_width = 8;
	a.box_height = 8;
	a.has_point = 1;
	a.point_x = 30;
	a.point_y = 28;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		other_format(formats[i], 50, 45, &png, &len);
		check_annotation(png, len, &a, &painted);
		assert_int_equal(painted, (14 * 14 - 64) + (25 * 3 * 2 - 9));
		free(png);
	}
}

/* libpng write callbacks into a growing buffer. */
struct membuf {
	unsigned char *data;
	size_t len;
};

static void membuf_write(png_structp png, png_bytep bytes, size_t n)
{
	struct membuf *b = png_get_io_ptr(png);

	b->data = realloc(b->data, b->len + n);
	assert_non_null(b->data);
	memcpy(b->data + b->len, bytes, n);
	b->len += n;
}

static void membuf_flush(png_structp png)
{
	(void)png;
}

/* A 16-bit RGB interlaced PNG, or a 4-bit palette one, written with the
 * low-level API (the simplified one writes neither). */
static void write_lowlevel(int palette, unsigned w, unsigned h, unsigned char **out, size_t *len)
{
	struct membuf b = { 0 };
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	png_color colors[16];
	size_t rowbytes = palette ? (w + 1) / 2 : (size_t)w * 6;
	unsigned char *row = calloc(1, rowbytes);
	unsigned y;
	int pass;
	int passes;
	size_t i;

	assert_non_null(row);
	if (setjmp(png_jmpbuf(png)))
		fail_msg("libpng could not write the test image");
	png_set_write_fn(png, &b, membuf_write, membuf_flush);
	png_set_IHDR(png, info, w, h, palette ? 4 : 16,
	             palette ? PNG_COLOR_TYPE_PALETTE : PNG_COLOR_TYPE_RGB,
	             palette ? PNG_INTERLACE_NONE : PNG_INTERLACE_ADAM7,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	if (palette) {
		for (i = 0; i < 16; i++) {
			colors[i].red = (png_byte)(i * 16);
			colors[i].green = (png_byte)(255 - i * 16);
			colors[i].blue = 128;
		}
		png_set_PLTE(png, info, colors, 16);
	}
	png_write_info(png, info);
	passes = palette ? 1 : png_set_interlace_handling(png);
	for (pass = 0; pass < passes; pass++)
		for (y = 0; y < h; y++) {
			for (i = 0; i < rowbytes; i++)
				row[i] = (unsigned char)(y * 13 + i * 7);
			png_write_row(png, row);
		}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	*out = b.data;
	*len = b.len;
}

static void test_interlaced_16bit_and_palette(void **state)
{
	struct evid_annotation a = { 0 };
	struct evid_png_info info;
	unsigned char *png;
	unsigned char *out = NULL;
	unsigned char *px;
	size_t len;
	size_t outlen;
	unsigned w;
	unsigned h;
	char err[256] = "";
	int palette;

	(void)state;
	a.has_box = 1;
	a.box_x = 10;
	a.box_y = 10;
	a.box_width = 10;
	a.box_height = 10;
	a.has_point = 1;
	a.point_x = 30;
	a.point_y = 30;
	for (palette = 0; palette < 2; palette++) {
		write_lowlevel(palette, 47, 41, &png, &len);
		assert_int_equal(evid_png_check(png, len, NULL, err, sizeof(err)), 0);
		assert_int_equal(evid_png_annotate(png, len, &a, &out, &outlen, err, sizeof(err)),
		                 0);
		assert_int_equal(evid_png_check(out, outlen, &info, err, sizeof(err)), 0);
		assert_int_equal(info.width, 47);
		assert_int_equal(info.height, 41);
		px = fx_rgba(out, outlen, &w, &h);
		assert_memory_equal(px + ((size_t)10 * w + 9) * 4, box_rgb, 3);
		assert_memory_equal(px + ((size_t)30 * w + 30) * 4, white, 3);
		assert_memory_equal(px + ((size_t)30 * w + 18) * 4, point_rgb, 3);
		free(px);
		free(out);
		free(png);
	}
}

static void test_refuses_bad_input(void **state)
{
	struct evid_annotation a = { 0 };
	unsigned char *png;
	unsigned char *out = (unsigned char *)"x";
	size_t len;
	size_t outlen = 1;
	char err[256] = "";

	(void)state;
	fx_png(20, 20, 5, &png, &len);
	a.has_point = 1;
	a.point_x = NAN;
	assert_int_equal(evid_png_annotate(png, len, &a, &out, &outlen, err, sizeof(err)),
	                 -EVID_EINVAL);
	assert_null(out);
	a.point_x = 5;
	png[len / 2] ^= 0x55; /* a damaged image */
	assert_int_equal(evid_png_annotate(png, len, &a, &out, &outlen, err, sizeof(err)),
	                 -EVID_EBADPNG);
	assert_non_null(strstr(err, "invalid PNG"));
	assert_int_equal(evid_png_annotate((const unsigned char *)"GIF89a", 6, &a, &out, &outlen,
	                                   err, sizeof(err)),
	                 -EVID_EBADPNG);
	free(png);
}

/* evid_png_mask: black over each rect grown by one pixel (at scale),
 * every other pixel untouched; bad rects refused. */
static void test_mask(void **state)
{
	struct evid_rect rects[2] = { { 10.5, 5, 20, 10 }, { 100, 80, 50, 50 } };
	struct evid_rect bad = { NAN, 0, 1, 1 };
	unsigned char *png, *out = NULL, *before, *after;
	size_t len, outlen = 0;
	unsigned w, h;
	char err[256] = "";
	long x, y;
	size_t black = 0;

	(void)state;
	fx_png(120, 90, 1, &png, &len);
	assert_int_equal(evid_png_mask(png, len, rects, 2, 2, &out, &outlen, err, sizeof(err)), 0);
	before = fx_rgba(png, len, &w, &h);
	after = fx_rgba(out, outlen, &w, &h);
	for (y = 0; y < (long)h; y++) {
		for (x = 0; x < (long)w; x++) {
			const unsigned char *p = after + ((size_t)y * w + (size_t)x) * 4;
			/* rect 1 at scale 2: [21 - 1, 61 + 1) x [10 - 1, 30 + 1); rect 2 clipped:
			 * [199, 120) is empty in x, so nothing */
			int in = x >= 20 && x < 62 && y >= 9 && y < 31;

			if (in) {
				assert_true(p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0xff);
				black++;
			} else {
				assert_memory_equal(p, before + ((size_t)y * w + (size_t)x) * 4, 4);
			}
		}
	}
	assert_int_equal(black, 42 * 22);
	free(before);
	free(after);
	free(out);
	assert_int_equal(evid_png_mask(png, len, &bad, 1, 1, &out, &outlen, err, sizeof(err)),
	                 -EVID_EINVAL);
	assert_null(out);
	assert_non_null(strstr(err, "rectangle 0"));
	assert_int_equal(evid_png_mask((const unsigned char *)"nope", 4, rects, 1, 1, &out, &outlen,
	                               err, sizeof(err)),
	                 -EVID_EBADPNG);
	free(png);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_box_and_point),
		cmocka_unit_test(test_known_pixels),
		cmocka_unit_test(test_missed_click),
		cmocka_unit_test(test_clipping),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_other_formats),
		cmocka_unit_test(test_interlaced_16bit_and_palette),
		cmocka_unit_test(test_refuses_bad_input),
		cmocka_unit_test(test_mask),
	};

	return cmocka_run_group_tests_name("annotate", tests, NULL, NULL);
}
