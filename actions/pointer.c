/*
 * pointer.c - what the coordinate (vision) tools share: a point checked
 * to be inside the viewport, the element found there made the target (so
 * the gate reads its facts and the verdicts name it), and the mouse
 * position the session's mouse was left at.
 */
#include "actions/actions-private.h"

#include <stdio.h>

int act_point_check(struct act_ctx *ctx, double x, double y)
{
	json_t *m = NULL, *vp;
	double w, h;
	int rc;

	rc = act_cdp(ctx, ctx->psid, "Page.getLayoutMetrics", NULL, &m, "reading the viewport");
	if (rc < 0)
		goto out;
	vp = json_object_get(m, "cssLayoutViewport");
	w = json_number_value(json_object_get(vp, "clientWidth"));
	h = json_number_value(json_object_get(vp, "clientHeight"));
	if (x < 0 || y < 0 || x >= w || y >= h)
		rc = act_fail(ctx, "outside_viewport",
		              "(%g, %g) is outside the viewport, which is %gx%g CSS pixels: give a "
		              "point inside it (take a screenshot to see where things are)",
		              x, y, w, h);
out:
	json_decref(m);
	return rc;
}

int act_point_target(struct act_ctx *ctx, double x, double y)
{
	if (act_point_check(ctx, x, y) < 0)
		return -1;
	return act_resolve_point(ctx, x, y, 0);
}

int act_point_rearm(struct act_ctx *ctx, double x, double y, int keep)
{
	int gated = ctx->target.backend_node_id;
	char was[sizeof(ctx->target.description)];

	snprintf(was, sizeof(was), "%s", ctx->target.description);
	if (act_resolve_point(ctx, x, y, keep ? 2 : 1) < 0)
		return -1;
	if (gated && ctx->target.backend_node_id != gated)
		return act_fail(
		    ctx, "target_changed",
		    "what is at (%g, %g) changed after it was checked (it was %s, it is "
		    "%s now): nothing was done; take a screenshot and try again",
		    x, y, was, ctx->target.description);
	return 0;
}

void act_point_moved(struct act_ctx *ctx, double x, double y)
{
	if (x != ctx->as->mouse_x || y != ctx->as->mouse_y)
		ctx->as->mouse_pressed = 0;
	ctx->as->mouse_x = x;
	ctx->as->mouse_y = y;
}
