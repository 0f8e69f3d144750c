/*
 * cli.c - `glassbox trace export`, `glassbox har export` and `glassbox
 * session export`: options and messages for people; the work is
 * trace_export_write(). Their help is in cli/help.c, the one table.
 * Exit statuses: 0 written, 2 usage error, 3 could not run.
 */
#include "trace/trace.h"

#include <stdio.h>
#include <string.h>

#define EXIT_USAGE 2
#define EXIT_CANNOT_RUN 3

/* Prints a usage error naming the command's help; returns EXIT_USAGE. */
static int usage(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "glassbox %s export: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(glassbox %s --help shows the options)\n", cmd);
	return EXIT_USAGE;
}

int trace_cli(int argc, char **argv, const char *data_dir)
{
	struct trace_export_opts o;
	const char *cmd = argv[0];
	const char *out = NULL;
	const char *as = NULL;
	char err[1024] = "";
	int i;

	memset(&o, 0, sizeof(o));
	o.data_dir = data_dir;
	o.audit = 1;
	if (argc < 2 || strcmp(argv[1], "export") != 0)
		return usage(cmd, "the subcommand is export, not '%s'", argc < 2 ? "" : argv[1]);
	for (i = 2; i < argc; i += 2) {
		const char *a = argv[i];
		const char **slot = NULL;

		if (!strcmp(a, "--session"))
			slot = &o.session;
		else if (!strcmp(a, "--flow"))
			slot = &o.flow;
		else if (!strcmp(a, "--tenant"))
			slot = &o.tenant;
		else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
			slot = &out;
		else if (!strcmp(a, "--as") && !strcmp(cmd, "session"))
			slot = &as;
		else if (!strcmp(a, "--name") && !strcmp(cmd, "session"))
			slot = &o.flow_name;
		if (!slot)
			return usage(cmd, "unknown option '%s'", a);
		if (i + 1 >= argc)
			return usage(cmd, "%s needs a value", a);
		*slot = argv[i + 1];
	}
	if (!o.session == !o.flow)
		return usage(cmd, "give exactly one of --session ID and --flow NAME%s", "");
	if (!strcmp(cmd, "trace")) {
		o.format = TRACE_FORMAT_PLAYWRIGHT_TRACE;
		if (!out)
			out = "trace.zip";
		if (!strcmp(out, "-"))
			return usage(cmd, "a trace is a zip file: give -o FILE, not '%s'", out);
	} else if (!strcmp(cmd, "har")) {
		o.format = TRACE_FORMAT_HAR;
	} else if (!as) {
		return usage(cmd, "--as flow or --as playwright is required%s", "");
	} else if (!strcmp(as, "flow")) {
		o.format = TRACE_FORMAT_FLOW;
	} else if (!strcmp(as, "playwright")) {
		o.format = TRACE_FORMAT_SPEC;
	} else {
		return usage(cmd, "--as is flow or playwright, not '%s'", as);
	}
	if (!out)
		out = "-";
	o.output_description = strcmp(out, "-") ? out : "standard output";
	if (trace_export_write(&o, out, err, sizeof(err)) != 0) {
		fprintf(stderr, "glassbox %s export: %s\n", cmd, err);
		return EXIT_CANNOT_RUN;
	}
	if (strcmp(out, "-") != 0)
		fprintf(stderr, "glassbox %s export: wrote %s\n", cmd, out);
	return 0;
}
