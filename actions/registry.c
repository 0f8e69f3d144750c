/*
 * registry.c - the tool table: every browser tool's name, description,
 * parameters and hints, the one JSON Schema of their structuredContent,
 * and the argument check every call passes before it reaches a browser.
 *
 * Design note
 * - One table, in a stable order. Transports generate their schemas from
 *   it (mcp/schema.c) and call act_check_args() with it, so the schema an
 *   agent sees and the check a call meets cannot drift apart.
 * - Names and parameter names follow Playwright MCP where they overlap, so
 *   agents written for it work unchanged.
 * - Every tool that is not read-only also accepts `operation_id` (an
 *   idempotency key); every tool that changes state (and so runs settle,
 *   post-observe verification and evidence) also accepts `expect`.
 * - The table is constant data: no locks, callable from any thread.
 */
#include "actions/actions.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- parameter building blocks ------------------------------------------ */

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

static const char *const button_values[] = { "left", "right", "middle", NULL };
static const char *const modifier_values[] = { "Alt",  "Control", "ControlOrMeta",
	                                       "Meta", "Shift",   NULL };
static const char *const image_type_values[] = { "png", NULL };
static const char *const tabs_action_values[] = { "list", "new", "select", "close", NULL };

/* ---- the tools ---------------------------------------------------------- */

static const struct act_param navigate_params[] = {
	{ .name = "url",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "The URL to navigate to (http or https)" },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param navigate_back_params[] = {
	P_EXPECT,
	P_OPERATION_ID,
};

static const char *const hidden_text_values[] = { "flag", "drop", NULL };
static const char *const type_one_of[] = { "text", "secret", NULL };

static const struct act_param snapshot_params[] = {
	P_TARGET_OPT,
	{ .name = "hiddenText",
	  .type = ACT_T_STRING,
	  .description = "Text on the page that a person would not see (hidden, off-screen, zero "
	                 "size, transparent): \"flag\" marks it [hidden-text], \"drop\" leaves it "
	                 "out. Default: the tenant's policy, else flag",
	  .enum_values = hidden_text_values },
	{ .name = "maxChars",
	  .type = ACT_T_INTEGER,
	  .description = "Longest snapshot text to return, in characters. Longer output is cut "
	                 "and ends with an explicit marker saying how much was left out. "
	                 "Default: the whole snapshot",
	  .minimum = 100,
	  .maximum = 10000000,
	  .has_range = 1 },
};

static const struct act_param click_params[] = {
	P_TARGET,
	P_ELEMENT,
	{ .name = "doubleClick",
	  .type = ACT_T_BOOLEAN,
	  .description = "Whether to perform a double click instead of a single click" },
	{ .name = "button",
	  .type = ACT_T_STRING,
	  .description = "Button to click, defaults to left",
	  .enum_values = button_values },
	{ .name = "modifiers",
	  .type = ACT_T_STRING_ARRAY,
	  .description = "Modifier keys to press",
	  .enum_values = modifier_values },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param type_params[] = {
	P_TARGET,
	P_ELEMENT,
	{ .name = "text",
	  .type = ACT_T_STRING,
	  .description = "Text to type into the element. Give either text or secret" },
	{ .name = "secret",
	  .type = ACT_T_STRING,
	  .description =
	      "Name of a secret of the tenant (e.g. \"SHOP_PASSWORD\") to type instead "
	      "of text: you never see its value. It is typed only if the field's frame "
	      "is on one of the secret's hosts and the field is a password, username, "
	      "email or one-time-code field (or a kind the secret allows); otherwise the "
	      "call is refused with the reason. Not with slowly" },
	{ .name = "submit",
	  .type = ACT_T_BOOLEAN,
	  .description = "Whether to submit entered text (press Enter after)" },
	{ .name = "slowly",
	  .type = ACT_T_BOOLEAN,
	  .description = "Whether to type one character at a time. Useful for triggering key "
	                 "handlers in the page. By default entire text is filled in at once." },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param press_key_params[] = {
	{ .name = "key",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Name of the key to press or a character to generate, such as "
	                 "`ArrowLeft` or `a`" },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param select_option_params[] = {
	P_TARGET,
	P_ELEMENT,
	{ .name = "values",
	  .type = ACT_T_STRING_ARRAY,
	  .required = 1,
	  .description = "Array of values to select in the dropdown. This can be a single value "
	                 "or multiple values." },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param hover_params[] = {
	P_TARGET,
	P_ELEMENT,
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param evaluate_params[] = {
	{ .name = "function",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "() => { /* code */ } or (element) => { /* code */ } when element is "
	                 "provided" },
	P_TARGET_OPT,
	P_ELEMENT,
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param screenshot_params[] = {
	P_TARGET_OPT,
	P_ELEMENT,
	{ .name = "fullPage",
	  .type = ACT_T_BOOLEAN,
	  .description = "When true, takes a screenshot of the full scrollable page, instead of "
	                 "the currently visible viewport. Cannot be used with element "
	                 "screenshots." },
	{ .name = "type",
	  .type = ACT_T_STRING,
	  .description = "Image format for the screenshot; only png is supported",
	  .enum_values = image_type_values },
};

static const struct act_param handle_dialog_params[] = {
	{ .name = "accept",
	  .type = ACT_T_BOOLEAN,
	  .required = 1,
	  .description = "Whether to accept the dialog." },
	{ .name = "promptText",
	  .type = ACT_T_STRING,
	  .description = "The text of the prompt in case of a prompt dialog." },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param wait_for_params[] = {
	{ .name = "text", .type = ACT_T_STRING, .description = "The text to wait for" },
	{ .name = "textGone",
	  .type = ACT_T_STRING,
	  .description = "The text to wait for to disappear" },
	{ .name = "time",
	  .type = ACT_T_NUMBER,
	  .description = "The time to wait in seconds, at most 30. When combined with text or "
	                 "textGone, serves as a timeout for them instead of the default action "
	                 "timeout",
	  .minimum = 0,
	  .maximum = 30,
	  .has_range = 1 },
};

static const struct act_param tabs_params[] = {
	{ .name = "action",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "Operation to perform",
	  .enum_values = tabs_action_values },
	{ .name = "index",
	  .type = ACT_T_INTEGER,
	  .description = "Tab index, used for close/select. If omitted for close, current tab is "
	                 "closed.",
	  .minimum = 0,
	  .maximum = 1000,
	  .has_range = 1 },
	P_EXPECT,
	P_OPERATION_ID,
};

static const struct act_param close_params[] = {
	P_OPERATION_ID,
};

static const char *const session_action_values[] = { "open",   "close", "status", "list",
	                                             "narrow", "cdp",   NULL };

static const struct act_param session_params[] = {
	{ .name = "action",
	  .type = ACT_T_STRING,
	  .required = 1,
	  .description = "open: start the browser on a profile; close: close the browser and seal "
	                 "the profile's state as a new version (or discard it with save: false); "
	                 "status: the open profile and how the last one was closed; list: this "
	                 "tenant's profiles; narrow: restrict where this session's browser may go "
	                 "(egress); cdp: the session's policed CDP endpoint for Playwright or "
	                 "Puppeteer (glassbox serve, tenant policy cdp: allow)",
	  .enum_values = session_action_values },
	{ .name = "egress",
	  .type = ACT_T_OBJECT,
	  .description =
	      "narrow: {\"allow\"?: [host patterns], \"deny\"?: [host patterns], "
	      "\"allow_private\"?: [addresses]}; from now on a request must pass the "
	      "tenant's policy and this too, so it can only take away (docs/egress.md)" },
	{ .name = "profile",
	  .type = ACT_T_STRING,
	  .description = "The profile's name (open): letters, digits, '.', '_', '-'" },
	{ .name = "user",
	  .type = ACT_T_STRING,
	  .description = "Whose profile (open, list); default \"default\"" },
	{ .name = "readonly",
	  .type = ACT_T_BOOLEAN,
	  .description = "open: a private copy that is never sealed back; allowed while another "
	                 "session writes the profile" },
	{ .name = "create",
	  .type = ACT_T_BOOLEAN,
	  .description = "open: create the profile, empty, when it does not exist" },
	{ .name = "save",
	  .type = ACT_T_BOOLEAN,
	  .description = "close: seal the state as a new version (default true); false discards "
	                 "what changed" },
	P_OPERATION_ID,
};

#define PARAMS(a) .params = (a), .n_params = sizeof(a) / sizeof((a)[0])

static const struct act_def tools[] = {
	{ .name = "browser_navigate",
	  .title = "Navigate to a URL",
	  .description =
	      "Navigate the current tab to a URL and wait, bounded, for the page to load. Only "
	      "http and https: file:, chrome:, devtools:, javascript: and top-level data: URLs are "
	      "refused, and the tenant's network policy applies. Reports the final URL, the "
	      "main-document HTTP status, responses and console errors, and records a screenshot "
	      "as evidence. Take a browser_snapshot afterwards to get element refs.",
	  PARAMS(navigate_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_navigate_back",
	  .title = "Go back",
	  .description =
	      "Go back to the previous page in the current tab's history and wait for it to load. "
	      "Reports the URL before and after, so you can see whether it moved, and records "
	      "evidence.",
	  PARAMS(navigate_back_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_snapshot",
	  .title = "Page snapshot",
	  .description =
	      "Capture an accessibility snapshot of the current page (or of one element's subtree "
	      "with `target`): roles, names and refs such as [ref=e5]. Pass a ref as `target` to "
	      "browser_click, browser_type and the other element tools; take a new snapshot after "
	      "the page changes, because old refs go stale. Better than a screenshot for deciding "
	      "what to do. Read-only.",
	  PARAMS(snapshot_params),
	  .read_only = 1,
	  .changes_state = 0 },
	{ .name = "browser_click",
	  .title = "Click",
	  .description =
	      "Click an element, given by a ref from browser_snapshot or a unique selector. Before "
	      "clicking it checks that the element is attached, visible, stable, enabled and "
	      "actually receives the click (not covered by another element); then it reads back "
	      "where the click really landed (a click that reached something else fails with "
	      "error.code missed, naming it); afterwards it waits, "
	      "bounded, for what the click started (navigation, requests). Reports navigation, "
	      "responses, dialogs, console errors and whether the DOM changed, and records a "
	      "screenshot as evidence. Pass `expect` to verify the outcome.",
	  PARAMS(click_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_type",
	  .title = "Type text",
	  .description =
	      "Type text into an editable element (input, textarea, contenteditable), replacing "
	      "its content. Checks that the element is visible, enabled and editable, then "
	      "re-reads "
	      "the field to verify the value (structuredContent.value; a value that did not stick "
	      "fails with error.code value_not_set; password fields are masked, "
	      "and typed text never appears in logs or evidence). Date, time, datetime-local, "
	      "month, week, range and color inputs take a value in their own format (date "
	      "YYYY-MM-DD, time HH:MM, datetime-local YYYY-MM-DDTHH:MM, month YYYY-MM, week "
	      "YYYY-Www, color #rrggbb) and are set as a user's choice sets them. `submit` presses "
	      "Enter "
	      "afterwards; `slowly` types key by key for pages that listen to key events. Pass "
	      "`secret` instead of `text` to type a stored secret (a password, a token) by name "
	      "without ever seeing it.",
	  PARAMS(type_params),
	  .read_only = 0,
	  .changes_state = 1,
	  .one_of = type_one_of },
	{ .name = "browser_press_key",
	  .title = "Press a key",
	  .description =
	      "Press a key on the keyboard in the focused element, such as `Enter`, `Escape`, "
	      "`ArrowDown` or `a`. Reports what the key started (navigation, requests, dialogs) "
	      "and "
	      "records evidence.",
	  PARAMS(press_key_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_select_option",
	  .title = "Select option",
	  .description =
	      "Select one or more options in a dropdown (<select>) by value or label, then re-read "
	      "the selection to verify it (structuredContent.value). Records evidence.",
	  PARAMS(select_option_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_hover",
	  .title = "Hover mouse",
	  .description =
	      "Move the mouse over an element (after the same actionability checks as a click), "
	      "for example to open a menu or show a tooltip. Reports whether the DOM changed and "
	      "records evidence.",
	  PARAMS(hover_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_evaluate",
	  .title = "Evaluate JavaScript",
	  .description =
	      "Evaluate a JavaScript function in the page, or on one element when `target` is "
	      "given, and return its JSON-serializable result (structuredContent.result). The "
	      "function can do anything the page can, so it is treated as state-changing: it runs "
	      "under the same policy, verification and evidence as a click.",
	  PARAMS(evaluate_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_take_screenshot",
	  .title = "Take a screenshot",
	  .description =
	      "Take a PNG screenshot of the viewport, of the full page (`fullPage`) or of one "
	      "element (`target`). The image is returned inline and stored as evidence. Use "
	      "browser_snapshot to decide what to act on; screenshots are for looking and for the "
	      "record. Read-only.",
	  PARAMS(screenshot_params),
	  .read_only = 1,
	  .changes_state = 0 },
	{ .name = "browser_handle_dialog",
	  .title = "Handle a dialog",
	  .description =
	      "Accept or dismiss the JavaScript dialog (alert, confirm, prompt, beforeunload) that "
	      "is waiting on the page; a previous result's structuredContent.dialog_open shows it. "
	      "Other tools refuse to act while a dialog is open.",
	  PARAMS(handle_dialog_params),
	  .read_only = 0,
	  .changes_state = 1 },
	{ .name = "browser_wait_for",
	  .title = "Wait for",
	  .description =
	      "Wait for text to appear or disappear on the page, or for a number of seconds to "
	      "pass; give at least one of text, textGone or time. With text or textGone, `time` is "
	      "the timeout. Reports what it observed. Read-only.",
	  PARAMS(wait_for_params),
	  .read_only = 1,
	  .changes_state = 0 },
	{ .name = "browser_tabs",
	  .title = "Manage tabs",
	  .description =
	      "List, open, select or close browser tabs. `new` opens a tab and makes it current, "
	      "`select` switches to the tab at `index`, `close` closes the tab at `index` (or the "
	      "current one). Returns the tabs after the change (structuredContent.tabs).",
	  PARAMS(tabs_params),
	  .read_only = 0,
	  .changes_state = 0 },
	{ .name = "browser_close",
	  .title = "Close browser",
	  .description =
	      "Close the browser: every tab, the Chromium process and its private profile "
	      "directory, leaving nothing behind. The next tool call starts a fresh browser.",
	  PARAMS(close_params),
	  .read_only = 0,
	  .changes_state = 0 },
	{ .name = "browser_session",
	  .title = "Browser profile",
	  .description =
	      "Run the browser on one of your tenant's saved profiles, so logins persist across "
	      "sessions. `open` starts the browser on the profile (closing a running one); `close` "
	      "closes the browser and seals the profile's state, encrypted, as a new version "
	      "(save: false discards the changes); `status` and `list` report. One session at a "
	      "time may write a profile: a second one is refused unless it asks for a read-only "
	      "copy. A browser that crashes is never sealed: the last good version stays. "
	      "`narrow` restricts where this session's browser may go, on top of the tenant's "
	      "policy. `cdp` returns a websocket URL on which a Playwright or Puppeteer client "
	      "drives this session's browser through glassbox's filters, gates and evidence.",
	  PARAMS(session_params),
	  .read_only = 0,
	  .changes_state = 0 },
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

/* What to pass when a required argument is missing; by parameter name.
 * Parameters not listed fall back to their description. */
static const struct {
	const char *name;
	const char *hint;
} required_hints[] = {
	{ "target", "pass a ref from browser_snapshot (e.g. \"e5\") or a CSS selector" },
	{ "url", "pass the address to open, e.g. \"https://example.com/\"" },
	{ "text", "pass the text to type (an empty string clears the field)" },
	{ "secret", "pass the name of a stored secret, e.g. \"SHOP_PASSWORD\"" },
	{ "key", "pass a key name such as \"Enter\" or \"ArrowDown\", or a character" },
	{ "values", "pass the option values to select, e.g. [\"blue\"]" },
	{ "function", "pass a function such as \"() => document.title\"" },
	{ "accept", "pass true to accept the dialog or false to dismiss it" },
	{ "action", "pass one of list, new, select, close" },
	{ "browser_session.action", "pass one of open, close, status, list, narrow" },
};

/* ---- lookups ------------------------------------------------------------ */

/* Number of tools in the table. */
size_t act_tool_count(void)
{
	return N_TOOLS;
}

/* The i-th tool in table order, or NULL when i is out of range. The
 * returned definition is static: borrowed forever. */
const struct act_def *act_tool_at(size_t i)
{
	if (i >= N_TOOLS)
		return NULL;
	return &tools[i];
}

/* The tool called name (borrowed), or NULL when there is none or name is
 * NULL. */
const struct act_def *act_tool_find(const char *name)
{
	const struct act_def *found = NULL;
	size_t i;

	if (!name)
		goto out;
	for (i = 0; i < N_TOOLS; i++) {
		if (!strcmp(tools[i].name, name)) {
			found = &tools[i];
			break;
		}
	}
out:
	return found;
}

/* ---- the output schema -------------------------------------------------- */

/* {"type": type, "description": desc} (desc may be NULL); new reference. */
static json_t *prop(const char *type, const char *desc)
{
	json_t *p = json_object();

	json_object_set_new(p, "type", json_string(type));
	if (desc)
		json_object_set_new(p, "description", json_string(desc));
	return p;
}

/* An object schema whose properties are given as (name, type) pairs of
 * strings, NULL-terminated; type NULL means "any value". New reference. */
static json_t *object_of(const char *desc, ...)
{
	json_t *o = prop("object", desc);
	json_t *props = json_object();
	const char *name;
	const char *type;
	va_list ap;

	va_start(ap, desc);
	for (;;) {
		name = va_arg(ap, const char *);
		if (!name)
			break;
		type = va_arg(ap, const char *);
		json_object_set_new(props, name, type ? prop(type, NULL) : json_object());
	}
	va_end(ap);
	json_object_set_new(o, "properties", props);
	return o;
}

/* {"type": "array", "items": items (stolen), "description": desc}. */
static json_t *array_of(json_t *items, const char *desc)
{
	json_t *a = prop("array", desc);

	json_object_set_new(a, "items", items);
	return a;
}

/* The JSON Schema of every tool's structuredContent, as documented in
 * docs/tools.md: all properties optional except operation_id, tool and ok.
 * Nested objects stay open (no additionalProperties) so that fields added
 * later do not break clients that validate. Returns a new reference. */
json_t *act_output_schema(void)
{
	json_t *schema = json_object();
	json_t *p = json_object();
	json_t *code;
	json_t *err;

	json_object_set_new(p, "operation_id", prop("string", "id of this operation"));
	json_object_set_new(p, "tool", prop("string", "tool name"));
	json_object_set_new(
	    p, "ok", prop("boolean", "false when the action failed or an expectation failed"));
	err = object_of("{code, message} when ok is false because the action failed", "message",
	                "string", NULL);
	code = json_object();
	json_object_set_new(code, "type", json_pack("[ss]", "string", "integer"));
	json_object_set_new(json_object_get(err, "properties"), "code", code);
	json_object_set_new(p, "error", err);
	json_object_set_new(p, "url_before", prop("string", "page URL before the action"));
	json_object_set_new(p, "url", prop("string", "page URL after the action"));
	json_object_set_new(p, "title", prop("string", "page title after the action"));
	json_object_set_new(p, "navigated",
	                    prop("boolean", "the action started a main-frame navigation"));
	json_object_set_new(p, "status",
	                    prop("integer", "main-document HTTP status when it navigated"));
	json_object_set_new(p, "responses",
	                    array_of(object_of(NULL, "url", "string", "method", "string", "status",
	                                       "integer", "type", "string", NULL),
	                             "responses seen during the action"));
	json_object_set_new(
	    p, "failed_requests",
	    array_of(object_of(NULL, "url", "string", "method", "string", "error", "string", NULL),
	             "requests that failed or were refused during the action"));
	json_object_set_new(p, "dialogs",
	                    array_of(object_of(NULL, "type", "string", "message", "string", NULL),
	                             "JavaScript dialogs that opened"));
	json_object_set_new(p, "dialog_open",
	                    object_of("a dialog still waiting for browser_handle_dialog", "type",
	                              "string", "message", "string", NULL));
	json_object_set_new(
	    p, "console_errors",
	    array_of(prop("string", NULL), "console errors and uncaught exceptions"));
	json_object_set_new(p, "dom_changed", prop("boolean", "the DOM digest changed"));
	json_object_set_new(p, "value",
	                    prop("string", "the field's value re-read after typing or selecting "
	                                   "(password fields are masked)"));
	json_object_set_new(
	    p, "result", json_pack("{s:s}", "description", "browser_evaluate: the returned value"));
	json_object_set_new(p, "tabs",
	                    array_of(object_of(NULL, "index", "integer", "url", "string", "title",
	                                       "string", "current", "boolean", NULL),
	                             "the browser's tabs"));
	json_object_set_new(p, "verdicts",
	                    array_of(object_of(NULL, "check", "string", "expected", NULL,
	                                       "observed", NULL, "ok", "boolean", NULL),
	                             "one per expect check and per built-in check"));
	json_object_set_new(p, "evidence",
	                    array_of(object_of(NULL, "kind", "string", "sha256", "string", "uri",
	                                       "string", "mime", "string", "size", "integer", NULL),
	                             "stored artifacts, readable with resources/read"));
	json_object_set_new(p, "duration_ms", prop("integer", "time spent, in milliseconds"));
	json_object_set_new(p, "profile",
	                    object_of("the profile the browser runs on (browser_session)", "name",
	                              "string", "user", "string", "version", "integer", "readonly",
	                              "boolean", NULL));
	json_object_set_new(p, "profile_closed",
	                    object_of("how the profile was closed: saved, or why not", "name",
	                              "string", "user", "string", "version", "integer", "saved",
	                              "boolean", "reason", "string", NULL));
	json_object_set_new(p, "profiles", array_of(json_object(), "the tenant's profiles"));
	json_object_set_new(p, "wsEndpoint",
	                    prop("string", "browser_session cdp: the session's CDP endpoint"));

	json_object_set_new(schema, "type", json_string("object"));
	json_object_set_new(schema, "properties", p);
	json_object_set_new(schema, "required", json_pack("[sss]", "operation_id", "tool", "ok"));
	return schema;
}

/* ---- argument checking -------------------------------------------------- */

/* snprintf into err when there is room for it; never fails. */
static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The type of v as a JSON Schema would name it. */
static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

/* "a string", "an integer", ...: the type as a message names it. */
static const char *type_phrase(enum act_param_type t)
{
	switch (t) {
	case ACT_T_STRING:
		return "a string";
	case ACT_T_BOOLEAN:
		return "a boolean (true or false)";
	case ACT_T_NUMBER:
		return "a number";
	case ACT_T_INTEGER:
		return "an integer";
	case ACT_T_OBJECT:
		return "an object";
	case ACT_T_STRING_ARRAY:
		return "an array of strings";
	}
	return "a value";
}

/* Joins the NULL-terminated list with ", " into buf (truncated if need be). */
static void join_values(const char *const *values, char *buf, size_t buflen)
{
	size_t used = 0;
	int n;
	size_t i;

	buf[0] = '\0';
	for (i = 0; values[i]; i++) {
		n = snprintf(buf + used, buflen - used, "%s%s", i ? ", " : "", values[i]);
		if (n < 0 || (size_t)n >= buflen - used)
			break;
		used += (size_t)n;
	}
}

/* Whether s is one of the NULL-terminated values. */
static int in_enum(const char *const *values, const char *s)
{
	size_t i;

	for (i = 0; values[i]; i++) {
		if (!strcmp(values[i], s))
			return 1;
	}
	return 0;
}

/* Whether v is an integer: a JSON integer, or a number with no fraction
 * (JSON Schema counts 2.0 as an integer). */
static int is_integral(const json_t *v)
{
	double d;

	if (json_is_integer(v))
		return 1;
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	return isfinite(d) && floor(d) == d;
}

/* What to tell a caller who left out p: a hint by name, else its
 * description. */
static const char *required_hint(const struct act_def *def, const struct act_param *p)
{
	char qualified[160];
	size_t i;

	/* "tool.param" entries first: the same name may mean another thing */
	snprintf(qualified, sizeof(qualified), "%s.%s", def->name, p->name);
	for (i = 0; i < sizeof(required_hints) / sizeof(required_hints[0]); i++) {
		if (!strcmp(required_hints[i].name, qualified))
			return required_hints[i].hint;
	}
	for (i = 0; i < sizeof(required_hints) / sizeof(required_hints[0]); i++) {
		if (!strcmp(required_hints[i].name, p->name))
			return required_hints[i].hint;
	}
	return p->description;
}

/* def's parameter called name, or NULL. */
static const struct act_param *find_param(const struct act_def *def, const char *name)
{
	size_t i;

	for (i = 0; i < def->n_params; i++) {
		if (!strcmp(def->params[i].name, name))
			return &def->params[i];
	}
	return NULL;
}

/* Checks one present value v (borrowed) against p: type, enum (also of
 * array items), range. Returns 0, or -1 with a message in err. */
static int check_value(const struct act_param *p, json_t *v, char *err, size_t errlen)
{
	char list[256];
	json_t *item;
	size_t i;
	double d;
	int rc = -1;

	switch (p->type) {
	case ACT_T_STRING:
		if (!json_is_string(v))
			goto wrong_type;
		if (p->enum_values && !in_enum(p->enum_values, json_string_value(v))) {
			join_values(p->enum_values, list, sizeof(list));
			set_err(err, errlen, "argument '%s' must be one of %s", p->name, list);
			goto out;
		}
		break;
	case ACT_T_BOOLEAN:
		if (!json_is_boolean(v))
			goto wrong_type;
		break;
	case ACT_T_NUMBER:
	case ACT_T_INTEGER:
		if (!json_is_number(v))
			goto wrong_type;
		if (p->type == ACT_T_INTEGER && !is_integral(v)) {
			set_err(err, errlen, "argument '%s' must be an integer (got %g)", p->name,
			        json_number_value(v));
			goto out;
		}
		d = json_number_value(v);
		if (p->has_range && (d < p->minimum || d > p->maximum)) {
			set_err(err, errlen, "argument '%s' must be between %g and %g (got %g)",
			        p->name, p->minimum, p->maximum, d);
			goto out;
		}
		break;
	case ACT_T_OBJECT:
		if (!json_is_object(v))
			goto wrong_type;
		break;
	case ACT_T_STRING_ARRAY:
		if (!json_is_array(v))
			goto wrong_type;
		json_array_foreach(v, i, item)
		{
			if (!json_is_string(item)) {
				set_err(
				    err, errlen,
				    "argument '%s' must be an array of strings: item %zu is not a "
				    "string (got %s)",
				    p->name, i, json_kind(item));
				goto out;
			}
			if (p->enum_values && !in_enum(p->enum_values, json_string_value(item))) {
				join_values(p->enum_values, list, sizeof(list));
				set_err(err, errlen, "argument '%s' item %zu must be one of %s",
				        p->name, i, list);
				goto out;
			}
		}
		break;
	}
	rc = 0;
	goto out;

wrong_type:
	set_err(err, errlen, "argument '%s' must be %s (got %s)", p->name, type_phrase(p->type),
	        json_kind(v));
out:
	return rc;
}

/* Checks args (borrowed; a JSON object, or NULL for {}) against def's
 * parameters: unknown names first, then, in table order, presence of the
 * required ones, types, enums (also of string-array items) and ranges.
 * Returns 0, or -1 with one message in err naming the argument, what is
 * wrong and what to pass instead. */
int act_check_args(const struct act_def *def, json_t *args, char *err, size_t errlen)
{
	const struct act_param *p;
	const char *key;
	char names[512];
	size_t used;
	json_t *v;
	size_t i;
	int n;
	int rc = -1;

	if (!def) {
		set_err(err, errlen, "no tool given");
		goto out;
	}
	if (args && !json_is_object(args)) {
		set_err(err, errlen, "arguments of %s must be a JSON object (got %s)", def->name,
		        json_kind(args));
		goto out;
	}
	if (args) {
		json_object_foreach(args, key, v)
		{
			if (find_param(def, key))
				continue;
			if (!def->n_params) {
				set_err(err, errlen, "unknown argument '%s': %s takes no arguments",
				        key, def->name);
				goto out;
			}
			names[0] = '\0';
			used = 0;
			for (i = 0; i < def->n_params; i++) {
				n = snprintf(names + used, sizeof(names) - used, "%s%s",
				             i ? ", " : "", def->params[i].name);
				if (n < 0 || (size_t)n >= sizeof(names) - used)
					break;
				used += (size_t)n;
			}
			set_err(err, errlen, "unknown argument '%s': %s accepts %s", key, def->name,
			        names);
			goto out;
		}
	}
	for (i = 0; i < def->n_params; i++) {
		p = &def->params[i];
		v = args ? json_object_get(args, p->name) : NULL;
		if (!v) {
			if (p->required) {
				set_err(err, errlen, "argument '%s' is required: %s", p->name,
				        required_hint(def, p));
				goto out;
			}
			continue;
		}
		if (check_value(p, v, err, errlen) < 0)
			goto out;
	}
	if (def->one_of) {
		size_t given = 0;

		names[0] = '\0';
		used = 0;
		for (i = 0; def->one_of[i]; i++) {
			if (args && json_object_get(args, def->one_of[i]))
				given++;
			n = snprintf(names + used, sizeof(names) - used, "%s'%s'",
			             i == 0               ? ""
			             : def->one_of[i + 1] ? ", "
			                                  : " or ",
			             def->one_of[i]);
			if (n > 0 && (size_t)n < sizeof(names) - used)
				used += (size_t)n;
		}
		if (given != 1) {
			set_err(err, errlen, "%s takes exactly one of %s (got %s)", def->name,
			        names, given ? "more than one" : "none");
			goto out;
		}
	}
	rc = 0;
out:
	return rc;
}
