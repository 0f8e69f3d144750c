/*
 * fuzz_secrets_env.c - libFuzzer target for the --secrets dotenv reader
 * (secrets/env_file.c): any bytes either load, with every value opening
 * by its name and its length within SECRET_VALUE_MAX, or are refused with
 * a reason that never holds a value.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=enabled
 *   ninja -C build-fuzz secrets/fuzz_secrets_env && build-fuzz/secrets/fuzz_secrets_env -max_total_time=30
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secrets/secrets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/gb-fuzz-env-XXXXXX";
	struct secret_env *env = NULL;
	struct secret_meta m;
	unsigned char *value = NULL;
	char warning[512], err[1024];
	size_t len = 0;
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	if (secret_env_load(path, &env, warning, sizeof(warning), err, sizeof(err)) == 0) {
		if (!secret_env_count(env))
			abort();
		/* the first name of the input, when it names one, opens */
		if (secret_env_open(env, "A", &m, &value, &len) == 0) {
			if (!len || len > SECRET_VALUE_MAX || !m.unbound || value[len] != '\0')
				abort();
			secret_value_free(value, len);
		}
	}
	secret_env_free(env);
	unlink(path);
	return 0;
}
