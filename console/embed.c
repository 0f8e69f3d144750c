/*
 * embed.c - a build tool: writes a file's bytes as a C array, so the
 * console's static files are compiled into the binary.
 *
 *   embed NAME INPUT OUTPUT   ->  static const unsigned char NAME[]; NAME_len
 */
#include <stdio.h>

int main(int argc, char **argv)
{
	FILE *in, *out;
	unsigned long n = 0;
	int c;

	if (argc != 4) {
		fprintf(stderr, "usage: embed NAME INPUT OUTPUT\n");
		return 2;
	}
	in = fopen(argv[2], "rb");
	out = fopen(argv[3], "w");
	if (!in || !out) {
		perror("embed");
		return 1;
	}
	fprintf(out,
	        "/* generated from %s by console/embed.c */\nstatic const unsigned char %s[] = {",
	        argv[2], argv[1]);
	while ((c = fgetc(in)) != EOF)
		fprintf(out, "%s0x%02x,", n++ % 16 ? " " : "\n\t", (unsigned)c);
	fprintf(out, "\n\t0x00\n};\nstatic const unsigned long %s_len = %lu;\n", argv[1], n);
	fclose(in);
	return fclose(out) == 0 ? 0 : 1;
}
