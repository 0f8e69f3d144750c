/*
 * test_sessions_prefs.c - the preferences every profile gets before its
 * browser starts (sessions/prefs.c): network prediction off, in a fresh
 * profile and in one that already has preferences (kept), and a clear
 * error on a Preferences file that is not JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sessions/sessions-private.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh temp profile dir (removed by the caller with sess_remove_tree). */
static void make_profile(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/glassbox-prefs-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static json_t *read_prefs(const char *dir)
{
	char path[600];
	json_error_t jerr;

	snprintf(path, sizeof(path), "%s/Default/Preferences", dir);
	return json_load_file(path, 0, &jerr);
}

static void test_fresh_profile_gets_prediction_off(void **state)
{
	char dir[64];
	char err[256] = "";
	json_t *p;

	(void)state;
	make_profile(dir, sizeof(dir));
	assert_int_equal(sess_write_preferences(dir, err, sizeof(err)), 0);
	p = read_prefs(dir);
	assert_non_null(p);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "net"),
	                                                    "network_prediction_options")),
	                 2);
	json_decref(p);
	sess_remove_tree(dir);
}

static void test_existing_preferences_are_kept(void **state)
{
	char dir[64];
	char path[600];
	char err[256] = "";
	FILE *f;
	json_t *p;

	(void)state;
	make_profile(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/Default", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/Default/Preferences", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"intl\": {\"accept_languages\": \"fr\"}, \"net\": "
	      "{\"network_prediction_options\": 0, "
	      "\"other\": true}}",
	      f);
	fclose(f);
	assert_int_equal(sess_write_preferences(dir, err, sizeof(err)), 0);
	p = read_prefs(dir);
	assert_non_null(p);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "intl"), "accept_languages")),
	    "fr");
	assert_true(json_is_true(json_object_get(json_object_get(p, "net"), "other")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "net"),
	                                                    "network_prediction_options")),
	                 2);
	json_decref(p);
	sess_remove_tree(dir);
}

static void test_broken_preferences_are_a_clear_error(void **state)
{
	char dir[64];
	char path[600];
	char err[512] = "";
	FILE *f;

	(void)state;
	make_profile(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/Default", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/Default/Preferences", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{not json", f);
	fclose(f);
	assert_int_equal(sess_write_preferences(dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a JSON object"));
	assert_non_null(strstr(err, path));
	sess_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_profile_gets_prediction_off),
		cmocka_unit_test(test_existing_preferences_are_kept),
		cmocka_unit_test(test_broken_preferences_are_a_clear_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
