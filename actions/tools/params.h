/*
 * params.h - the parameters many tools share (target, element, expect,
 * operation_id and approval), with one description each, so every tool
 * that takes one describes it the same way. Private to actions/tools/.
 */
#ifndef GB_ACTIONS_TOOLS_PARAMS_H
#define GB_ACTIONS_TOOLS_PARAMS_H

#include "actions/actions.h"

#define TARGET_DESC                                                                             \
	"Exact target element reference from the page snapshot, or a unique element selector: " \
	"CSS, or a locator such as role=button[name=\"Save\"] or text=\"Save\" (searched in "   \
	"the page and its frames)"
#define ELEMENT_DESC                                                                         \
	"Human-readable element description used to obtain permission to interact with the " \
	"element"
#define EXPECT_DESC                                                                               \
	"Checks to run after the action; each one yields a verdict (structuredContent.verdicts) " \
	"and any failure makes the result an error. Keys: url (exact), urlContains (substring), " \
	"title (exact), text (present on the page), textGone (absent from the page), value "      \
	"(value of the target, or of expect.target), response ({url: substring, status: "         \
	"integer}: a response seen during the action)"
#define OPERATION_ID_DESC                                                                    \
	"Your id for this operation, used as an idempotency key: a retry with the same "     \
	"operation_id returns the recorded outcome instead of acting twice. Generated when " \
	"omitted"

#define P_TARGET                                                                                  \
	{                                                                                         \
		.name = "target", .type = ACT_T_STRING, .required = 1, .description = TARGET_DESC \
	}
#define P_TARGET_OPT                                                                              \
	{                                                                                         \
		.name = "target", .type = ACT_T_STRING, .required = 0, .description = TARGET_DESC \
	}
#define P_ELEMENT                                                                    \
	{                                                                            \
		.name = "element", .type = ACT_T_STRING, .description = ELEMENT_DESC \
	}
#define P_EXPECT                                                                   \
	{                                                                          \
		.name = "expect", .type = ACT_T_OBJECT, .description = EXPECT_DESC \
	}
#define APPROVAL_DESC                                                                            \
	"The id of an approval a person granted for exactly this action (after an "              \
	"approval_required result): the action runs only if it is still the same action on the " \
	"same element, and the approval is then spent"
/* operation_id and approval go together: every tool that acts takes both */
#define P_OPERATION_ID                                                                      \
	{ .name = "operation_id", .type = ACT_T_STRING, .description = OPERATION_ID_DESC }, \
	{                                                                                   \
		.name = "approval", .type = ACT_T_STRING, .description = APPROVAL_DESC      \
	}

#define PARAMS(a) .params = (a), .n_params = sizeof(a) / sizeof((a)[0])

#endif
