/*
 * schema.c - what tools/list shows: each tool of the table in
 * actions/registry.c as an MCP Tool object, with an inputSchema generated
 * from its parameters and the shared outputSchema.
 *
 * Generated, never written by hand, so the schema a client validates
 * against and act_check_args() agree. Pure; no state.
 */
#include "mcp/mcp-private.h"

#include <math.h>
#include <string.h>

#include "actions/actions.h"

/* A bound as JSON: an integer when it has no fraction. */
static json_t *bound(double v)
{
	if (floor(v) == v && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* The enum list of p as a JSON array (new reference). */
static json_t *enum_array(const char *const *values)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; values[i]; i++)
		json_array_append_new(a, json_string(values[i]));
	return a;
}

static json_t *param_schema(const struct act_param *p);

/* The object schema of a parameter table (new reference): properties,
 * required (left out when empty: older JSON Schema drafts want it
 * non-empty), no other members. */
static json_t *object_schema(const struct act_param *params, size_t n)
{
	json_t *schema = json_object();
	json_t *props = json_object();
	json_t *required = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_object_set_new(props, params[i].name, param_schema(&params[i]));
		if (params[i].required)
			json_array_append_new(required, json_string(params[i].name));
	}
	json_object_set_new(schema, "type", json_string("object"));
	json_object_set_new(schema, "properties", props);
	if (json_array_size(required))
		json_object_set_new(schema, "required", required);
	else
		json_decref(required);
	json_object_set_new(schema, "additionalProperties", json_false());
	return schema;
}

/* The schema of one parameter (new reference). */
static json_t *param_schema(const struct act_param *p)
{
	json_t *s = json_object();
	json_t *items;

	switch (p->type) {
	case ACT_T_STRING:
		json_object_set_new(s, "type", json_string("string"));
		if (p->enum_values)
			json_object_set_new(s, "enum", enum_array(p->enum_values));
		break;
	case ACT_T_BOOLEAN:
		json_object_set_new(s, "type", json_string("boolean"));
		break;
	case ACT_T_NUMBER:
		json_object_set_new(s, "type", json_string("number"));
		break;
	case ACT_T_INTEGER:
		json_object_set_new(s, "type", json_string("integer"));
		break;
	case ACT_T_OBJECT:
		json_object_set_new(s, "type", json_string("object"));
		break;
	case ACT_T_STRING_ARRAY:
		json_object_set_new(s, "type", json_string("array"));
		items = json_object();
		json_object_set_new(items, "type", json_string("string"));
		if (p->enum_values)
			json_object_set_new(items, "enum", enum_array(p->enum_values));
		json_object_set_new(s, "items", items);
		break;
	case ACT_T_OBJECT_ARRAY:
		json_object_set_new(s, "type", json_string("array"));
		json_object_set_new(s, "items", object_schema(p->items, p->n_items));
		if (p->min_items)
			json_object_set_new(s, "minItems", json_integer((json_int_t)p->min_items));
		if (p->max_items)
			json_object_set_new(s, "maxItems", json_integer((json_int_t)p->max_items));
		break;
	}
	if (p->nullable) {
		/* null clears the setting: the type admits it, and so does the enum */
		json_t *type = json_object_get(s, "type");

		json_object_set_new(s, "type", json_pack("[Os]", type, "null"));
		if (json_object_get(s, "enum"))
			json_array_append_new(json_object_get(s, "enum"), json_null());
	}
	if (p->has_range && (p->type == ACT_T_NUMBER || p->type == ACT_T_INTEGER)) {
		json_object_set_new(s, "minimum", bound(p->minimum));
		json_object_set_new(s, "maximum", bound(p->maximum));
	}
	if (p->description)
		json_object_set_new(s, "description", json_string(p->description));
	return s;
}

/* See mcp-private.h. */
json_t *mcp_schema_input(const struct act_def *def)
{
	return object_schema(def->params, def->n_params);
}

/* Tool.title, structuredContent and outputSchema arrived in 2025-06-18;
 * versions are dates, so they compare as strings. */
static int has_structured_output(const char *version)
{
	return strcmp(version, "2025-06-18") >= 0;
}

/* See mcp-private.h. The hints: readOnlyHint from the table; everything
 * else may change the page, and the page is the open web, so
 * destructiveHint and openWorldHint; nothing is idempotent (a click twice
 * is two clicks: retry with operation_id instead). */
json_t *mcp_schema_tool(const struct act_def *def, const char *version, json_t *output_schema)
{
	json_t *tool = json_object();
	json_t *ann = json_object();

	json_object_set_new(tool, "name", json_string(def->name));
	if (has_structured_output(version))
		json_object_set_new(tool, "title", json_string(def->title));
	json_object_set_new(tool, "description", json_string(def->description));
	json_object_set_new(tool, "inputSchema", mcp_schema_input(def));
	if (output_schema && has_structured_output(version))
		json_object_set(tool, "outputSchema", output_schema);
	json_object_set_new(ann, "title", json_string(def->title));
	json_object_set_new(ann, "readOnlyHint", json_boolean(act_def_read_only(def)));
	json_object_set_new(ann, "destructiveHint", json_boolean(!act_def_read_only(def)));
	json_object_set_new(ann, "idempotentHint", json_false());
	json_object_set_new(ann, "openWorldHint", json_true());
	json_object_set_new(tool, "annotations", ann);
	return tool;
}

/* See mcp-private.h. One page: no nextCursor. The tools share one
 * output schema, built once. */
json_t *mcp_schema_tools_list(const char *version, unsigned caps, int output_schema)
{
	json_t *tools = json_array();
	json_t *schema = output_schema ? act_output_schema() : NULL;
	size_t i;

	for (i = 0; i < act_tool_count(); i++)
		if (act_caps_allows(caps, act_tool_at(i)->caps))
			json_array_append_new(tools,
			                      mcp_schema_tool(act_tool_at(i), version, schema));
	json_decref(schema);
	return json_pack("{s:o}", "tools", tools);
}
