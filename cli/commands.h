/*
 * commands.h - subcommands that live in their own file (cli/cmd_*.c).
 */
#ifndef GB_CLI_COMMANDS_H
#define GB_CLI_COMMANDS_H

/* `glassbox serve`: the settings main.c parsed; strings borrowed. */
struct cli_serve_args {
	const char *data_dir;    /* created already */
	const char *chromium;    /* NULL: default */
	const char *config_path; /* --config only; NULL: the embedded local defaults */
	int headed;
};

/* Runs the service until SIGTERM/SIGINT; returns the exit status. */
int cli_cmd_serve(const struct cli_serve_args *a);

#endif
