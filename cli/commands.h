/*
 * commands.h - subcommands of the glassbox binary that live in their own
 * file (cli/cmd_<name>.c). Each returns the process's exit code.
 */
#ifndef GB_CLI_COMMANDS_H
#define GB_CLI_COMMANDS_H

#include <jansson.h>
#include <stdio.h>

/* The help of every command (help.c). cli_help_has: 1 when command has an
 * entry. cli_help_command prints its usage, options and an example to out
 * (-1: no such command). cli_help_general lists the commands;
 * cli_help_markdown prints all of it as docs/cli.md. */
int cli_help_has(const char *command);
int cli_help_command(FILE *out, const char *command);
void cli_help_general(FILE *out);
void cli_help_markdown(FILE *out);

/* `glassbox run FLOW... [options]` (cmd_run.c): argv[1] is "run";
 * default_data_dir is the data dir picked from the environment. Returns
 * the exit status: 0 all flows passed, 1 a flow failed, 2 bad input. */
int cli_cmd_run(int argc, char **argv, const char *default_data_dir);
/* `glassbox profile list | show | create | delete | revoke | export | import`
 * and `glassbox keys init | rotate`: argv[0] is the subcommand's name. */
int cli_cmd_profile(int argc, char **argv, const char *default_data_dir);
int cli_cmd_keys(int argc, char **argv, const char *default_data_dir);
/* `glassbox secret set | list | delete` (cmd_secret.c): argv[0] is "secret". */
int cli_cmd_secret(int argc, char **argv, const char *default_data_dir);

/* `glassbox files put | list | rm` (cmd_files.c): argv[0] is "files". */
int cli_cmd_files(int argc, char **argv, const char *default_data_dir);
/* Playwright MCP's server options for `glassbox mcp` (pw_options.c). */
#include "actions/actions.h"

#include <limits.h>

struct cli_pw {
	int snapshot_mode; /* enum act_snapshot_mode, -1 unset */
	char test_id_attribute[64];
	char output_dir[PATH_MAX];
	int action_timeout_ms;
	int navigation_timeout_ms;
	int viewport_width;
	int viewport_height;
	char user_agent[512];
	char grant_permissions[512];
	char caps[256];
	int headless; /* -1 unset */
	int isolated;
	int no_code;                 /* codegen "none" */
	int snapshot_boxes;          /* --snapshot-boxes, snapshot.boxes */
	int code_lang;               /* --codegen: enum act_code_lang, -1 unset ($PW_LANG_NAME) */
	int no_structured_content;   /* --no-structured-content */
	int vision;                  /* --vision: the "vision" group, as --caps vision */
	int omit_images;             /* --image-responses omit */
	double device_scale_factor;  /* contextOptions.deviceScaleFactor; 0 unset */
	char console_level[16];      /* --console-level, console.level; "" unset */
	int chromium_sandbox_off;    /* --no-sandbox, launchOptions.chromiumSandbox false */
	char secrets_path[PATH_MAX]; /* --secrets FILE (dotenv); "" unset */
	int has_geolocation;         /* contextOptions.geolocation given: */
	double geolocation[3];       /* latitude, longitude, accuracy (m) */
};

void cli_pw_init(struct cli_pw *o);
/* argv[*i] when it is one of Playwright MCP's flags ("--name value" or
 * "--name=value"): applies it (and moves *i past its value). Returns 0,
 * 1 when it is not one of them, -1 after printing why it is refused. */
int cli_pw_flag(const char *command, int argc, char **argv, int *i, struct cli_pw *o);
/* 1 when cfg (a --config file) has Playwright MCP's top-level keys. */
int cli_pw_is_config(json_t *cfg);
/* Applies a Playwright MCP config file; 0, or -1 after printing the key
 * that is refused and why. */
int cli_pw_config(const char *path, json_t *cfg, struct cli_pw *o);
/* Copies the options set into cfg (strings borrowed from o). */
void cli_pw_fill(const struct cli_pw *o, struct act_config *cfg);
/* With Chromium's sandbox off (--no-sandbox, chromiumSandbox false), says
 * so once on stderr with the layers of glassbox's own that stay on. */
void cli_pw_say_sandbox(const struct cli_pw *o);

/* `glassbox serve`: the settings main.c parsed; strings borrowed. */
struct cli_serve_args {
	const char *data_dir;    /* created already */
	const char *chromium;    /* NULL: default */
	const char *config_path; /* --config only; NULL: the embedded local defaults */
	const char *policy_path; /* the local tenant's policy (--policy or $GLASSBOX_CONFIG) */
	int policy_from_env;     /* policy_path came from $GLASSBOX_CONFIG */
	int headed;
};

/* Runs the service until SIGTERM/SIGINT; returns the exit status. */
int cli_cmd_serve(const struct cli_serve_args *a);

/* `glassbox objects check | ls | get | put` (cmd_objects.c): argv[0] is
 * "objects". 0 done, 1 the store refused or could not be reached, 2 usage. */
int cli_cmd_objects(int argc, char **argv);
/* Points every store handle of this process at the PostgreSQL database
 * postgres_url names (borrowed; NULL: $GLASSBOX_STORE_POSTGRES, and when
 * that is unset or empty SQLite in the data dir), as replica (borrowed;
 * NULL: $GLASSBOX_REPLICA_ID, else the host name). Returns 0, or -1 with
 * the reason printed (never the URL). */
int cli_store_configure(const char *postgres_url, const char *replica);

struct blob_store;

/* Points the store and profiles at the replicas' of serve config path
 * (replicas_store.c): its store.postgres (when it has one) and its
 * object_store (*objects, closed by the caller). command names the
 * command in messages. Returns 0 or -1 with the reason printed. */
int cli_use_replicas_store(const char *command, const char *path, struct blob_store **objects);

/* `glassbox policy check FILE [--json]` (cmd_policy.c): argv[0] is "policy".
 * 0 valid, 2 not valid or not readable. */
int cli_cmd_policy(int argc, char **argv);

/* `glassbox tools [--json|--markdown]` (cmd_tools.c): argv[0] is "tools".
 * 0, or 2 on a usage error. */
int cli_cmd_tools(int argc, char **argv);

struct mcp_serve_config;
/* Prints the warnings about a tenant's policy (borrowed; NULL: none) to
 * stderr, each with prefix ("glassbox init") and source (the file). */
void cli_policy_warn(const char *prefix, const json_t *policy, const char *source);
/* Names each tenant's policy source ("tenants.<name>.policy of FILE") for
 * the refusals of its sessions, and prints each policy's warnings. */
void cli_policy_serve_prepare(struct mcp_serve_config *cfg, const char *config_path);
/* Drops what cli_policy_serve_prepare parsed (cfg may be NULL). */
void cli_policy_serve_release(struct mcp_serve_config *cfg);

#endif
