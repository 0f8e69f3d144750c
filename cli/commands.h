/*
 * commands.h - the subcommands that live in their own files (cli/cmd_*.c).
 * Each takes the arguments after the command's name (argv[0] is the
 * command) and the data dir main.c picked; returns the exit status.
 */
#ifndef GB_CLI_COMMANDS_H
#define GB_CLI_COMMANDS_H

/* glassbox secret set | list | delete (cmd_secret.c) */
int cli_cmd_secret(int argc, char **argv, const char *data_dir);

#endif
