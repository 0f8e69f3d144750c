/*
 * commands.h - subcommands of the glassbox binary that live in their own
 * file (cli/cmd_<name>.c). Each takes argc/argv from its subcommand's
 * name on (argv[0] = "profile", ...) and returns the process's exit code.
 */
#ifndef GB_CLI_COMMANDS_H
#define GB_CLI_COMMANDS_H

/* `glassbox run FLOW... [options]` (cmd_run.c): argv[1] is "run";
 * default_data_dir is the data dir picked from the environment. Returns
 * the exit status: 0 all flows passed, 1 a flow failed, 2 bad input. */
int cli_cmd_run(int argc, char **argv, const char *default_data_dir);
/* `glassbox profile list | show | create | delete | revoke | export | import` */
int cli_cmd_profile(int argc, char **argv, const char *default_data_dir);
/* `glassbox keys init | rotate` */
int cli_cmd_keys(int argc, char **argv, const char *default_data_dir);
/* `glassbox secret set | list | delete` (cmd_secret.c) */
int cli_cmd_secret(int argc, char **argv, const char *default_data_dir);

#endif
