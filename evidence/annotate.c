/*
 * annotate.c - the annotated copy of a screenshot: the target element's
 * box outlined and the click point marked, so a reviewer sees at a
 * glance what the agent acted on.
 *
 * The PNG is decoded (and so validated) with libpng to 8-bit
 * RGBA whatever its format (palette, grey, 16-bit, interlaced), drawn on
 * with plain rectangle fills clipped to the image, and encoded again.
 * Coordinates arrive in CSS pixels and are multiplied by the scale
 * (devicePixelRatio). The colour-space facts that say how to read the
 * 8-bit values (gAMA, sRGB) are carried over; an embedded ICC profile is
 * not (Chromium's screenshots are plain sRGB). libpng reports errors by longjmp: the setjmp lives
 * in decode() and encode(), whose state is all reached through a pointer.
 */
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Coordinates beyond this (CSS px) are refused as absurd. */
#define COORD_MAX 1.0e7
#define ENCODE_LEVEL 1 /* zlib level: screenshots compress well even so */

/* An RGBA image in memory. */
struct rgba {
	unsigned width;
	unsigned height;
	unsigned char *px; /* width * height * 4 */
};

/* State shared with libpng's callbacks. */
struct png_io {
	png_structp png;
	png_infop info;
	const unsigned char *in;
	size_t in_len;
	size_t in_off;
	unsigned char *out;
	size_t out_len;
	size_t out_cap;
	png_bytep *rows;
	int has_gama;
	png_fixed_point gama;
	int has_srgb;
	int srgb_intent;
	char reason[256];
	int out_of_memory;
};

static void on_error(png_structp png, png_const_charp msg)
{
	struct png_io *io = png_get_error_ptr(png);

	if (!io->reason[0])
		snprintf(io->reason, sizeof(io->reason), "%s", msg ? msg : "libpng error");
	png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void on_read(png_structp png, png_bytep out, size_t n)
{
	struct png_io *io = png_get_io_ptr(png);

	if (n > io->in_len - io->in_off)
		png_error(png, "truncated");
	memcpy(out, io->in + io->in_off, n);
	io->in_off += n;
}

static void on_write(png_structp png, png_bytep data, size_t n)
{
	struct png_io *io = png_get_io_ptr(png);
	unsigned char *grown;
	size_t cap;

	if (n > EVID_MAX_ARTIFACT_BYTES - io->out_len)
		png_error(png, "the annotated image would be larger than an artifact may be");
	if (io->out_len + n > io->out_cap) {
		cap = io->out_cap ? io->out_cap : 65536;
		while (cap < io->out_len + n)
			cap *= 2;
		grown = realloc(io->out, cap);
		if (!grown) {
			io->out_of_memory = 1;
			png_error(png, "out of memory");
		}
		io->out = grown;
		io->out_cap = cap;
	}
	memcpy(io->out + io->out_len, data, n);
	io->out_len += n;
}

static void on_flush(png_structp png)
{
	(void)png;
}

/* Decodes io->in into img (RGBA). 0 or -1 with io->reason. */
static int decode(struct png_io *io, struct rgba *img)
{
	png_uint_32 y;
	int rc = -1; /* changed only after libpng is done */

	if (setjmp(png_jmpbuf(io->png)))
		goto out;
	png_set_read_fn(io->png, io, on_read);
	png_set_option(io->png, PNG_SKIP_sRGB_CHECK_PROFILE, PNG_OPTION_ON);
	png_read_info(io->png, io->info);
	io->has_gama = png_get_gAMA_fixed(io->png, io->info, &io->gama) != 0;
	io->has_srgb = png_get_sRGB(io->png, io->info, &io->srgb_intent) != 0;
	png_set_expand(io->png);
	png_set_strip_16(io->png);
	png_set_gray_to_rgb(io->png);
	png_set_add_alpha(io->png, 0xff, PNG_FILLER_AFTER);
	png_set_interlace_handling(io->png);
	png_read_update_info(io->png, io->info);
	img->width = png_get_image_width(io->png, io->info);
	img->height = png_get_image_height(io->png, io->info);
	if (png_get_rowbytes(io->png, io->info) != (size_t)img->width * 4)
		png_error(io->png, "unexpected row size after conversion to RGBA");
	img->px = malloc((size_t)img->width * img->height * 4);
	io->rows = malloc(sizeof(*io->rows) * img->height);
	if (!img->px || !io->rows) {
		io->out_of_memory = 1;
		png_error(io->png, "out of memory");
	}
	for (y = 0; y < img->height; y++)
		io->rows[y] = img->px + (size_t)y * img->width * 4;
	png_read_image(io->png, io->rows);
	png_read_end(io->png, NULL);
	rc = 0;
out:
	return rc;
}

/* Encodes img into io->out. 0 or -1 with io->reason. */
static int encode(struct png_io *io, const struct rgba *img)
{
	png_uint_32 y;
	int rc = -1;

	if (setjmp(png_jmpbuf(io->png)))
		goto out;
	png_set_write_fn(io->png, io, on_write, on_flush);
	png_set_compression_level(io->png, ENCODE_LEVEL);
	/* one filter, not libpng's per-row trial of all five: most of the cost */
	png_set_filter(io->png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
	png_set_IHDR(io->png, io->info, img->width, img->height, 8, PNG_COLOR_TYPE_RGBA,
	             PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	if (io->has_srgb)
		png_set_sRGB(io->png, io->info, io->srgb_intent);
	else if (io->has_gama)
		png_set_gAMA_fixed(io->png, io->info, io->gama);
	png_write_info(io->png, io->info);
	for (y = 0; y < img->height; y++)
		png_write_row(io->png, img->px + (size_t)y * img->width * 4);
	png_write_end(io->png, NULL);
	rc = 0;
out:
	return rc;
}

/* Paints [x0, x1) x [y0, y1), clipped to the image. */
static void fill(struct rgba *img, int64_t x0, int64_t y0, int64_t x1, int64_t y1,
                 const unsigned char rgb[3])
{
	int64_t x;
	int64_t y;
	unsigned char *p;

	if (x0 < 0)
		x0 = 0;
	if (y0 < 0)
		y0 = 0;
	if (x1 > (int64_t)img->width)
		x1 = img->width;
	if (y1 > (int64_t)img->height)
		y1 = img->height;
	for (y = y0; y < y1; y++) {
		for (x = x0; x < x1; x++) {
			p = img->px + ((size_t)y * img->width + (size_t)x) * 4;
			p[0] = rgb[0];
			p[1] = rgb[1];
			p[2] = rgb[2];
			p[3] = 0xff;
		}
	}
}

/* A size in image pixels at scale, at least 1. */
static int64_t scaled(double px, double scale)
{
	int64_t n = (int64_t)llround(px * scale);

	return n < 1 ? 1 : n;
}

/* Outlines the box (x, y, w, h in CSS px) outside it, in rgb. */
static void outline(struct rgba *img, double x, double y, double w, double h, double scale,
                    const unsigned char *rgb)
{
	int64_t x0 = (int64_t)llround(x * scale);
	int64_t y0 = (int64_t)llround(y * scale);
	int64_t x1 = (int64_t)llround((x + w) * scale);
	int64_t y1 = (int64_t)llround((y + h) * scale);
	int64_t t = scaled(EVID_ANNOT_BOX_PX, scale);

	fill(img, x0 - t, y0 - t, x1 + t, y0, rgb); /* top */
	fill(img, x0 - t, y1, x1 + t, y1 + t, rgb); /* bottom */
	fill(img, x0 - t, y0, x0, y1, rgb);         /* left */
	fill(img, x1, y0, x1 + t, y1, rgb);         /* right */
}

/* Outlines the target's box (crimson) and, for a missed click, what it
 * hit (azure, the colour of the point), and marks the point. */
static void draw(struct rgba *img, const struct evid_annotation *a, double scale)
{
	static const unsigned char box_rgb[3] = { EVID_ANNOT_BOX_RGB };
	static const unsigned char point_rgb[3] = { EVID_ANNOT_POINT_RGB };
	static const unsigned char white[3] = { 0xff, 0xff, 0xff };
	int64_t px, py, arm, th, half;

	if (a->has_box && a->box_width >= 0 && a->box_height >= 0)
		outline(img, a->box_x, a->box_y, a->box_width, a->box_height, scale, box_rgb);
	if (a->has_hit_box && a->hit_width >= 0 && a->hit_height >= 0)
		outline(img, a->hit_x, a->hit_y, a->hit_width, a->hit_height, scale, point_rgb);
	if (a->has_point) {
		px = (int64_t)floor(a->point_x * scale);
		py = (int64_t)floor(a->point_y * scale);
		arm = scaled(EVID_ANNOT_POINT_ARM_PX, scale);
		th = scaled(EVID_ANNOT_POINT_PX, scale);
		half = th / 2;
		fill(img, px - arm, py - half, px + arm + 1, py - half + th, point_rgb);
		fill(img, px - half, py - arm, px - half + th, py + arm + 1, point_rgb);
		fill(img, px, py, px + 1, py + 1, white);
	}
}

/* 1 when every coordinate that will be used is finite and not absurd. */
static int coords_ok(const struct evid_annotation *a)
{
	double v[11] = { a->box_x, a->box_y, a->box_width, a->box_height, a->point_x,   a->point_y,
		         a->scale, a->hit_x, a->hit_y,     a->hit_width,  a->hit_height };
	size_t i;

	for (i = 0; i < 11; i++) {
		if (i >= 7 && !a->has_hit_box)
			continue;
		if (i < 4 && !a->has_box)
			continue;
		if ((i == 4 || i == 5) && !a->has_point)
			continue;
		if (!isfinite(v[i]) || fabs(v[i]) > COORD_MAX)
			return 0;
	}
	return a->scale >= 0 && a->scale <= 16;
}

/* What a repaint draws: the annotation, or black boxes over masked fields. */
struct paint {
	const struct evid_annotation *a; /* or NULL */
	const struct evid_rect *rects;   /* masks (when a is NULL) */
	size_t n_rects;
	double scale;
};

/* Paints black over each rect (CSS px at p->scale, grown by a pixel on
 * every side so that anti-aliased edges of the text go too). */
static void paint_masks(struct rgba *img, const struct paint *p)
{
	static const unsigned char black[3] = { 0, 0, 0 };
	size_t i;

	for (i = 0; i < p->n_rects; i++) {
		const struct evid_rect *r = &p->rects[i];

		fill(img, (int64_t)floor(r->x * p->scale) - 1, (int64_t)floor(r->y * p->scale) - 1,
		     (int64_t)ceil((r->x + r->width) * p->scale) + 1,
		     (int64_t)ceil((r->y + r->height) * p->scale) + 1, black);
	}
}

/* Decodes png, paints what p says, encodes it into *out (malloc'd). */
static int repaint(const unsigned char *png, size_t len, const struct paint *p, unsigned char **out,
                   size_t *outlen, const char *doing, char *err, size_t errlen)
{
	struct png_io io;
	struct rgba img = { 0 };
	int writing = 0;
	int rc;

	memset(&io, 0, sizeof(io));
	/* decode() checks what it reads (signature, CRCs, zlib, the image's
	 * size against the artifact limit): no separate evid_png_check pass */
	if (!png || len < 8 || len > EVID_MAX_ARTIFACT_BYTES || png_sig_cmp(png, 0, 8) != 0) {
		gb_set_error(err, errlen, "cannot %s: invalid PNG: not a PNG of at most %u bytes",
		             doing, EVID_MAX_ARTIFACT_BYTES);
		rc = -EVID_EBADPNG;
		goto out;
	}
	rc = 0;
	io.in = png;
	io.in_len = len;
	io.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
	io.info = io.png ? png_create_info_struct(io.png) : NULL;
	if (!io.info || decode(&io, &img) != 0) {
		gb_set_error(err, errlen, "cannot %s: %s%s", doing,
		             io.out_of_memory || !io.info ? "" : "invalid PNG: ",
		             io.reason[0] ? io.reason : "out of memory");
		rc = io.out_of_memory || !io.info ? -EVID_ENOMEM : -EVID_EBADPNG;
		goto out;
	}
	png_destroy_read_struct(&io.png, &io.info, NULL);
	if (p->a)
		draw(&img, p->a, p->scale);
	else
		paint_masks(&img, p);
	io.reason[0] = '\0';
	writing = 1;
	io.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
	io.info = io.png ? png_create_info_struct(io.png) : NULL;
	if (!io.info || encode(&io, &img) != 0) {
		gb_set_error(err, errlen, "cannot encode the screenshot (%s): %s", doing,
		             io.reason[0] ? io.reason : "out of memory");
		rc = io.out_of_memory || !io.info ? -EVID_ENOMEM : -EVID_EINVAL;
		goto out;
	}
	*out = io.out;
	*outlen = io.out_len;
	io.out = NULL;
out:
	if (io.png && writing)
		png_destroy_write_struct(&io.png, io.info ? &io.info : NULL);
	else if (io.png)
		png_destroy_read_struct(&io.png, io.info ? &io.info : NULL, NULL);
	free(io.rows);
	free(io.out);
	free(img.px);
	return rc;
}

int evid_png_annotate(const unsigned char *png, size_t len, const struct evid_annotation *a,
                      unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
	struct paint p = { 0 };

	*out = NULL;
	*outlen = 0;
	if (!a || !coords_ok(a)) {
		gb_set_error(err, errlen,
		             "cannot annotate: a coordinate or the scale is not a "
		             "finite, sensible number");
		return -EVID_EINVAL;
	}
	p.a = a;
	p.scale = a->scale > 0 ? a->scale : 1.0;
	return repaint(png, len, &p, out, outlen, "annotate", err, errlen);
}

int evid_png_mask(const unsigned char *png, size_t len, const struct evid_rect *rects,
                  size_t n_rects, double scale, unsigned char **out, size_t *outlen, char *err,
                  size_t errlen)
{
	struct paint p = { 0 };
	size_t i;

	*out = NULL;
	*outlen = 0;
	for (i = 0; i < n_rects; i++) {
		const struct evid_rect *r = &rects[i];

		if (!isfinite(r->x) || !isfinite(r->y) || !isfinite(r->width) ||
		    !isfinite(r->height) || fabs(r->x) > COORD_MAX || fabs(r->y) > COORD_MAX ||
		    r->width < 0 || r->height < 0 || r->width > COORD_MAX ||
		    r->height > COORD_MAX) {
			gb_set_error(err, errlen,
			             "cannot mask: rectangle %zu is not a finite, sensible "
			             "box",
			             i);
			return -EVID_EINVAL;
		}
	}
	if (!isfinite(scale) || scale < 0 || scale > 16) {
		gb_set_error(err, errlen, "cannot mask: the scale is not sensible");
		return -EVID_EINVAL;
	}
	p.rects = rects;
	p.n_rects = n_rects;
	p.scale = scale > 0 ? scale : 1.0;
	return repaint(png, len, &p, out, outlen, "mask", err, errlen);
}
