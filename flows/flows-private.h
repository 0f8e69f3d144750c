/*
 * flows-private.h - the parsed flow and its variables. Private to flows/.
 */
#ifndef GB_FLOWS_PRIVATE_H
#define GB_FLOWS_PRIVATE_H

#include "flows/flow.h"

#include "common/unittest.h"

#include <jansson.h>

/* Ceilings on what a flow file may hold. */
#define FLOW_MAX_FILE_BYTES (1u << 20)
#define FLOW_MAX_STEPS 500u
#define FLOW_MAX_RETRIES 10
#define FLOW_MAX_RETRY_DELAY_MS 60000
#define FLOW_MAX_VARS 256u
#define FLOW_MAX_VALUE_BYTES 4096u

/* A NAME=VALUE list (vars.c). */
struct flow_vars {
	char **names;
	char **values;
	size_t n;
};

struct flow_secret {
	char *name;
	char *value;
};

struct flow_step {
	char kind[16];             /* "click" */
	char *label;               /* the step's "name", or NULL */
	const struct act_def *def; /* the tool it runs */
	json_t *args;              /* the tool's arguments, variables substituted */
	int retries;
	int retry_delay_ms;
	int secret; /* its text holds a secret */
};

struct flow {
	char *path;
	char *name;
	struct flow_step *steps;
	size_t n_steps;
	struct flow_secret *secrets;
	size_t n_secrets;
	int action_timeout_ms; /* 0: the session's default */
};

/* The value of name: the file's, else the environment's; NULL when unset.
 * Borrowed (the environment's may change with setenv). */
const char *flow_vars_get(const struct flow_vars *v, const char *name);

#ifdef GB_UNITTEST_BUILD
int flow_vars_parse_line(const char *line, char **name, char **value);
#endif

#endif
