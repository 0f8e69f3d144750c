/*
 * areas.c - dirs of a session that its browser reads or writes files in
 * (downloads, files handed to a page), and nothing else may reach.
 *
 * When the browser has a user of its own (browser_user.c), an area is a
 * dir of that user's home, 0700 and its own: the browser can write
 * downloads there and read the files set on an input, and no other
 * session's browser can. Otherwise it is a dir of the session's private
 * run dir. Either way it goes when the session closes (residue.c).
 */
#include "sessions/sessions-private.h"

#include "common/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sess_area_dir(struct sess *s, const char *name, char *dir, size_t len, char *err, size_t errlen)
{
	const char *base = s->home[0] ? s->home : s->dir;

	if (!gb_fs_name_is_safe(name) || gb_pathf(dir, len, "%s/%s", base, name) < 0) {
		gb_set_error(err, errlen, "the session's %s area has no room for its path", name);
		return -1;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		gb_set_io_error(err, errlen, "create", dir, errno);
		return -1;
	}
	if (s->browser_uid && chown(dir, s->browser_uid, s->browser_uid) != 0) {
		gb_set_io_error(err, errlen, "hand over to the browser's user", dir, errno);
		return -1;
	}
	return 0;
}

int sess_area_give(struct sess *s, const char *path, char *err, size_t errlen)
{
	if (chmod(path, 0600) != 0) {
		gb_set_io_error(err, errlen, "set the mode of", path, errno);
		return -1;
	}
	if (s->browser_uid && chown(path, s->browser_uid, s->browser_uid) != 0) {
		gb_set_io_error(err, errlen, "hand over to the browser's user", path, errno);
		return -1;
	}
	return 0;
}
