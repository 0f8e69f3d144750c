/*
 * commands.h - the subcommands that live in their own cli/cmd_<name>.c.
 */
#ifndef GB_CLI_COMMANDS_H
#define GB_CLI_COMMANDS_H

/* `glassbox run FLOW... [options]` (cmd_run.c): argv[1] is "run";
 * default_data_dir is the data dir picked from the environment. Returns
 * the exit status: 0 all flows passed, 1 a flow failed, 2 bad input. */
int cmd_run(int argc, char **argv, const char *default_data_dir);

#endif
