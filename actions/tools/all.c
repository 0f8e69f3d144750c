/*
 * all.c - every tool's descriptor, in the stable order of tools/list.
 * A new tool is one file in this directory and one line here.
 */
#include "actions/actions.h"

#include <string.h>

extern const struct act_def act_tool_navigate, act_tool_navigate_back, act_tool_snapshot,
    act_tool_click, act_tool_type, act_tool_press_key, act_tool_select_option, act_tool_hover,
    act_tool_evaluate, act_tool_take_screenshot, act_tool_handle_dialog, act_tool_wait_for,
    act_tool_tabs, act_tool_close, act_tool_session, act_tool_fill_form, act_tool_drag,
    act_tool_find_in_page, act_tool_resize, act_tool_emulate_media, act_tool_mouse_click_xy,
    act_tool_mouse_move_xy, act_tool_mouse_drag_xy, act_tool_mouse_down, act_tool_mouse_up,
    act_tool_mouse_wheel, act_tool_verify_element_visible, act_tool_verify_text_visible,
    act_tool_verify_list_visible, act_tool_verify_value, act_tool_generate_locator,
    act_tool_file_upload, act_tool_drop, act_tool_console_messages, act_tool_network_requests,
    act_tool_network_request, act_tool_pdf_save, act_tool_profile_export, act_tool_profile_import;
extern const struct act_def act_tool_emulate;

static const struct act_def *const tools[] = {
	&act_tool_navigate,
	&act_tool_navigate_back,
	&act_tool_snapshot,
	&act_tool_click,
	&act_tool_type,
	&act_tool_press_key,
	&act_tool_select_option,
	&act_tool_hover,
	&act_tool_evaluate,
	&act_tool_take_screenshot,
	&act_tool_handle_dialog,
	&act_tool_wait_for,
	&act_tool_tabs,
	&act_tool_close,
	&act_tool_session,
	&act_tool_fill_form,
	&act_tool_drag,
	&act_tool_find_in_page,
	&act_tool_resize,
	&act_tool_emulate_media,
	&act_tool_emulate,
	&act_tool_mouse_click_xy,
	&act_tool_mouse_move_xy,
	&act_tool_mouse_drag_xy,
	&act_tool_mouse_down,
	&act_tool_mouse_up,
	&act_tool_mouse_wheel,
	&act_tool_verify_element_visible,
	&act_tool_verify_text_visible,
	&act_tool_verify_list_visible,
	&act_tool_verify_value,
	&act_tool_generate_locator,
	&act_tool_file_upload,
	&act_tool_drop,
	&act_tool_console_messages,
	&act_tool_network_requests,
	&act_tool_network_request,
	&act_tool_pdf_save,
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

/* Number of tools in the table. */
size_t act_tool_count(void)
{
	return N_TOOLS;
}

/* The i-th tool in table order, or NULL when i is out of range. The
 * returned definition is static: borrowed forever. */
const struct act_def *act_tool_at(size_t i)
{
	return i < N_TOOLS ? tools[i] : NULL;
}

/* The tool called name (borrowed), or NULL when there is none or name is
 * NULL. */
const struct act_def *act_tool_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_TOOLS; i++)
		if (!strcmp(tools[i]->name, name))
			return tools[i];
	return NULL;
}

/* Driven by the glassbox CLI only: never listed, never found by name. */
static const struct act_def *const internal_tools[] = {
	&act_tool_profile_export,
	&act_tool_profile_import,
};

const struct act_def *act_internal_tool_at(size_t i)
{
	return i < sizeof(internal_tools) / sizeof(internal_tools[0]) ? internal_tools[i] : NULL;
}

const struct act_def *act_internal_tool_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(internal_tools) / sizeof(internal_tools[0]); i++)
		if (!strcmp(internal_tools[i]->name, name))
			return internal_tools[i];
	return NULL;
}
