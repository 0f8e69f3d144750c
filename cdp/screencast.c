/*
 * screencast.c - one screencast per page, read by every consumer that
 * joined it (a session recording, the console's live view), so that one
 * consumer starting, changing or stopping the page's Page.startScreencast
 * never takes the frames of another.
 *
 * DESIGN
 * - Per page session (its CDP sessionId) one struct cdp_cast with one
 *   Page.screencastFrame listener; consumers join and leave it. The first
 *   join starts the screencast, the last leave stops it, and a join or
 *   leave that changes what the screencast must be restarts it (a stop,
 *   then a start: the browser ignores a start while one runs) with the
 *   new parameters: PNG when any consumer wants PNG (JPEG at the highest
 *   quality asked otherwise), no larger than the smallest max_width and
 *   max_height asked.
 * - Rate: the browser sends the next frame only once the last one is
 *   acknowledged, and the acknowledgement goes out no sooner than the
 *   interval of the consumer with the lowest fps (the stricter cap), so
 *   the page never makes frames faster than any consumer allows. Each
 *   consumer is also handed frames no closer than its own interval,
 *   counted in acknowledgement slots (a frame belongs to the slot of the
 *   acknowledgement that released it), so a consumer's cap holds across
 *   joins and restarts, and network jitter never drops a frame.
 * - A due acknowledgement is sent from the frame listener, and from the
 *   wait loop (service.c), whose sleep it bounds (cdp_casts_next_ms).
 * - Owning thread only, like the rest of the conn; frames reach the
 *   consumers inside whichever cdp_* call is servicing.
 */
#include "cdp/cdp-private.h"

#include "common/log.h"

#include <stdlib.h>
#include <string.h>

/* Most consumers of one page's screencast. */
#define CDP_CAST_MAX_CONSUMERS 16

struct cdp_cast_consumer {
	struct cdp_cast_consumer *next;
	int handle;
	int png;
	int quality;
	int max_width;
	int max_height;
	int interval_ms;
	int64_t last_slot_ms; /* the slot of the last frame handed over; -1: none yet */
	cdp_cast_fn fn;
	void *user;
};

struct cdp_cast {
	struct cdp_cast *next;
	struct cdp_conn *conn;
	char sid[CDP_NAME_MAX];
	int listener; /* the Page.screencastFrame listener */
	int started;  /* Page.startScreencast was sent (and no stop since) */
	struct cdp_cast_consumer *consumers;
	/* what the running screencast was started with */
	int png;
	int quality;
	int max_width;
	int max_height;
	int interval_ms; /* the stricter of the consumers' intervals */
	int64_t slot_ms; /* when the last acknowledgement went out (or the start) */
	json_t *ack_due; /* the sessionId of the frame to acknowledge, or NULL */
};

/* What a screencast is started with. */
struct cast_params {
	int png;
	int quality;
	int max_width;
	int max_height;
	int interval_ms;
};

/* What k's consumers want together into p: PNG if any wants it, the
 * highest JPEG quality, the smallest size, the longest interval. */
static void cast_wanted(const struct cdp_cast *k, struct cast_params *p)
{
	const struct cdp_cast_consumer *u;

	memset(p, 0, sizeof(*p));
	for (u = k->consumers; u; u = u->next) {
		p->png |= u->png;
		if (!u->png && u->quality > p->quality)
			p->quality = u->quality;
		if (!p->max_width || u->max_width < p->max_width)
			p->max_width = u->max_width;
		if (!p->max_height || u->max_height < p->max_height)
			p->max_height = u->max_height;
		if (u->interval_ms > p->interval_ms)
			p->interval_ms = u->interval_ms;
	}
}

/* Sends the acknowledgement of the last frame when it is due. */
static void cast_ack_if_due(struct cdp_cast *k, int64_t now)
{
	json_t *due;
	uint64_t id;

	if (!k->ack_due || now - k->slot_ms < k->interval_ms)
		return;
	due = k->ack_due;
	k->ack_due = NULL;
	k->slot_ms = now;
	if (cdp_send(k->conn, k->sid, "Page.screencastFrameAck",
	             json_pack("{s:o}", "sessionId", due), &id) == 0)
		cdp_forget(k->conn, id);
}

/* 1 when the base64 data is a PNG (its signature, 89 50 4E 47, encodes
 * as "iVBORw"), else it is taken for the JPEG asked for. */
static int data_is_png(const char *data)
{
	return strncmp(data, "iVBORw", 6) == 0;
}

/* cdp_event_fn of Page.screencastFrame: hands the frame to each consumer
 * whose interval has passed, then acknowledges it when due. */
static void on_frame(void *user, const char *session_id, const char *method, json_t *params)
{
	struct cdp_cast *k = user;
	const char *data = json_string_value(json_object_get(params, "data"));
	json_t *meta = json_object_get(params, "metadata");
	json_t *cast_id = json_object_get(params, "sessionId");
	struct cdp_cast_consumer *u;
	int64_t slot = k->slot_ms;
	int png;

	(void)session_id;
	(void)method;
	if (json_is_integer(cast_id)) {
		json_decref(k->ack_due);
		k->ack_due = json_incref(cast_id);
	}
	if (data) {
		png = data_is_png(data);
		for (u = k->consumers; u; u = u->next) {
			/* a JPEG still in flight from before a restart is not a PNG */
			if ((u->png && !png) ||
			    (u->last_slot_ms >= 0 && slot - u->last_slot_ms < u->interval_ms))
				continue;
			u->last_slot_ms = slot;
			u->fn(u->user, data, png, meta);
		}
	}
	cast_ack_if_due(k, gb_now_ms());
}

/* Starts (or restarts with what its consumers want now) k's screencast.
 * 0, or a negative error (the listener could not be added, or the send
 * failed: the conn is closed). */
static int cast_start(struct cdp_cast *k, const struct cast_params *p)
{
	json_t *params;
	uint64_t id;
	int rc;

	if (!k->listener) {
		rc = cdp_on(k->conn, k->sid, "Page.screencastFrame", on_frame, k);
		if (rc < 0)
			return rc;
		k->listener = rc;
	}
	/* the browser ignores a start while its screencast runs: stop it first */
	if (k->started && cdp_send(k->conn, k->sid, "Page.stopScreencast", NULL, &id) == 0)
		cdp_forget(k->conn, id);
	k->started = 0;
	params = json_pack("{s:s, s:i, s:i, s:i}", "format", p->png ? "png" : "jpeg", "maxWidth",
	                   p->max_width, "maxHeight", p->max_height, "everyNthFrame", 1);
	if (params && !p->png)
		json_object_set_new(params, "quality", json_integer(p->quality));
	rc = cdp_send(k->conn, k->sid, "Page.startScreencast", params, &id);
	if (rc < 0)
		return rc;
	cdp_forget(k->conn, id);
	k->started = 1;
	k->png = p->png;
	k->quality = p->quality;
	k->max_width = p->max_width;
	k->max_height = p->max_height;
	/* a new screencast: the old one's frames need no acknowledgement */
	json_decref(k->ack_due);
	k->ack_due = NULL;
	k->slot_ms = gb_now_ms();
	return 0;
}

/* Frees k (unlinked by the caller); with stop, its listener goes and the
 * browser is told to stop first (not while the conn is being closed). */
static void cast_free(struct cdp_cast *k, int stop)
{
	uint64_t id;

	if (stop && k->listener)
		cdp_off(k->conn, k->listener);
	if (stop && k->started && cdp_is_open(k->conn) &&
	    cdp_send(k->conn, k->sid, "Page.stopScreencast", NULL, &id) == 0)
		cdp_forget(k->conn, id);
	while (k->consumers) {
		struct cdp_cast_consumer *u = k->consumers;

		k->consumers = u->next;
		free(u);
	}
	json_decref(k->ack_due);
	free(k);
}

/* Brings k's running screencast in line with its consumers after a join
 * or a leave: a restart when format or size changed, or with force (a
 * join: the browser then sends a frame of the page as it is at once). */
static int cast_update(struct cdp_cast *k, int force)
{
	struct cast_params p;

	cast_wanted(k, &p);
	k->interval_ms = p.interval_ms;
	if (!force && p.png == k->png && p.quality == k->quality && p.max_width == k->max_width &&
	    p.max_height == k->max_height)
		return 0;
	return cast_start(k, &p);
}

/* See cdp.h. */
int cdp_cast_join(struct cdp_conn *c, const char *page_sid, const struct cdp_cast_want *want,
                  cdp_cast_fn fn, void *user)
{
	struct cdp_cast_consumer *u = NULL;
	struct cdp_cast *k;
	int created = 0, n = 0, rc;

	/* created: k is new and not linked yet */

	if (!c || !page_sid || !page_sid[0] || strlen(page_sid) >= CDP_NAME_MAX || !want || !fn ||
	    want->fps < 1 || want->max_width < 1 || want->max_height < 1) {
		rc = -CDP_EINVAL;
		goto out;
	}
	if (c->state == CDP_STATE_CLOSED) {
		rc = -CDP_ECLOSED;
		goto out;
	}
	for (k = c->casts; k && strcmp(k->sid, page_sid) != 0; k = k->next)
		;
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k) {
			rc = -CDP_ENOMEM;
			goto out;
		}
		k->conn = c;
		snprintf(k->sid, sizeof(k->sid), "%s", page_sid);
		created = 1;
	}
	for (u = k->consumers; u; u = u->next)
		n++;
	u = n < CDP_CAST_MAX_CONSUMERS ? calloc(1, sizeof(*u)) : NULL;
	if (!u) {
		rc = -CDP_ENOMEM;
		goto out;
	}
	u->handle = ++c->next_cast_handle;
	u->png = want->png;
	u->quality = want->quality < 0 ? 0 : want->quality > 100 ? 100 : want->quality;
	u->max_width = want->max_width;
	u->max_height = want->max_height;
	u->interval_ms = 1000 / want->fps;
	u->last_slot_ms = -1;
	u->fn = fn;
	u->user = user;
	u->next = k->consumers;
	k->consumers = u;
	rc = cast_update(k, 1);
	if (rc < 0) {
		k->consumers = u->next;
		free(u);
		u = NULL;
		goto out;
	}
	if (created) {
		k->next = c->casts;
		c->casts = k;
	}
	rc = u->handle;
out:
	if (rc < 0 && created && k)
		cast_free(k, 1);
	return rc;
}

/* See cdp.h. */
void cdp_cast_leave(struct cdp_conn *c, int handle)
{
	struct cdp_cast **kp, *k;
	struct cdp_cast_consumer **up, *u;

	if (!c || handle <= 0)
		return;
	for (kp = &c->casts; *kp; kp = &(*kp)->next) {
		k = *kp;
		for (up = &k->consumers; *up && (*up)->handle != handle; up = &(*up)->next)
			;
		if (!*up)
			continue;
		u = *up;
		*up = u->next;
		free(u);
		if (!k->consumers) {
			*kp = k->next;
			cast_free(k, 1);
		} else if (cast_update(k, 0) < 0) {
			GB_LOGD("cdp", "the screencast of %s could not be restarted", k->sid);
		}
		return;
	}
}

/* See cdp-private.h. */
void cdp_casts_pump(struct cdp_conn *c)
{
	struct cdp_cast *k;
	int64_t now;

	if (!c->casts)
		return;
	now = gb_now_ms();
	for (k = c->casts; k; k = k->next)
		cast_ack_if_due(k, now);
}

/* See cdp-private.h. */
int64_t cdp_casts_next_ms(const struct cdp_conn *c, int64_t now)
{
	const struct cdp_cast *k;
	int64_t next = -1, left;

	for (k = c->casts; k; k = k->next) {
		if (!k->ack_due)
			continue;
		left = k->slot_ms + k->interval_ms - now;
		if (left < 0)
			left = 0;
		if (next < 0 || left < next)
			next = left;
	}
	return next;
}

/* See cdp-private.h. */
void cdp_casts_free_all(struct cdp_conn *c)
{
	struct cdp_cast *k;

	while (c->casts) {
		k = c->casts;
		c->casts = k->next;
		cast_free(k, 0);
	}
}
