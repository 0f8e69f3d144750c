/*
 * commands.h - subcommands of the glassbox binary that live in their own
 * file (cli/cmd_<name>.c). Each takes argc/argv from its subcommand's
 * name on (argv[0] = "profile", ...) and returns the process's exit code.
 */
#ifndef GB_CLI_COMMANDS_H
#define GB_CLI_COMMANDS_H

/* `glassbox profile list | show | create | delete | revoke | export | import` */
int cli_cmd_profile(int argc, char **argv, const char *default_data_dir);
/* `glassbox keys init | rotate` */
int cli_cmd_keys(int argc, char **argv, const char *default_data_dir);

#endif
