/*
 * cmd_keys.c - `glassbox keys init | rotate`: the master key of the
 * sealed stores (profiles/keys.h). Prints the key's id, never the key.
 */
#include "cli/commands.h"
#include "profiles/keys.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: glassbox keys COMMAND [--data-dir DIR]\n"
	    "\n"
	    "  init     create the master key (DATA/keys/master.key, 0600) if there is none\n"
	    "           and print its id; $GLASSBOX_MASTER_KEY_FILE names a key kept elsewhere\n"
	    "  rotate   replace the master key and re-wrap every tenant key with it (sealed\n"
	    "           profiles are not re-encrypted)\n");
}

int cli_cmd_keys(int argc, char **argv, const char *default_data_dir)
{
	const char *data_dir = default_data_dir;
	const char *cmd = NULL;
	char id[17];
	char err[1024] = "";
	size_t n = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--data-dir") && i + 1 < argc)
			data_dir = argv[++i];
		else if (!cmd && argv[i][0] != '-')
			cmd = argv[i];
		else {
			fprintf(stderr, "glassbox keys: unknown or incomplete argument '%s'\n\n",
			        argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!cmd || (strcmp(cmd, "init") && strcmp(cmd, "rotate"))) {
		usage(cmd ? stderr : stdout);
		return 2;
	}
	if (!strcmp(cmd, "rotate") && prof_keys_rotate(data_dir, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox keys rotate: %s\n", err);
		return 1;
	}
	if (prof_keys_init(data_dir, err, sizeof(err)) < 0 ||
	    prof_keys_master_id(data_dir, id, err, sizeof(err)) < 0) {
		fprintf(stderr, "glassbox keys %s: %s\n", cmd, err);
		return 1;
	}
	if (!strcmp(cmd, "rotate"))
		printf("master key rotated: new key %s; %zu tenant key(s) re-wrapped\n", id, n);
	else
		printf("master key %s ready (data dir %s)\n", id, data_dir);
	return 0;
}
