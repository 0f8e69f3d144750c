/*
 * tools.c - the implementation behind each entry of the tool table.
 */
#include "actions/actions-private.h"

#include <string.h>

extern const struct act_tool_impl act_tool_navigate, act_tool_navigate_back, act_tool_tabs,
    act_tool_close, act_tool_click, act_tool_hover, act_tool_type, act_tool_press_key,
    act_tool_select, act_tool_snapshot, act_tool_evaluate, act_tool_screenshot,
    act_tool_handle_dialog, act_tool_wait_for, act_tool_session;

static const struct act_tool_impl *const impls[] = {
	&act_tool_navigate,      &act_tool_navigate_back, &act_tool_tabs,     &act_tool_close,
	&act_tool_click,         &act_tool_hover,         &act_tool_type,     &act_tool_press_key,
	&act_tool_select,        &act_tool_snapshot,      &act_tool_evaluate, &act_tool_screenshot,
	&act_tool_handle_dialog, &act_tool_wait_for,      &act_tool_session,
};

const struct act_tool_impl *act_impl_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++)
		if (!strcmp(impls[i]->name, name))
			return impls[i];
	return NULL;
}
