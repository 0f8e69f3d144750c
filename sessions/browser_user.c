/*
 * browser_user.c - who Chromium runs as.
 *
 * Run as root, Chromium cannot use its own sandbox (--no-sandbox): a
 * renderer exploit would be root on the host. So when glassbox runs as
 * root, every browser gets a user of its own, a uid no process uses
 * (SESS_BROWSER_UID_BASE plus a random offset; it needs no passwd entry),
 * and runs with its sandbox on (user namespaces). Two sessions' browsers
 * then cannot read or trace each other either. The browser is started
 * through setpriv(1) (util-linux) and gets a home of its own,
 * SESS_BROWSER_HOME_BASE/TAG-SESSION (0700, its own; TAG names the
 * run dir, see run_dir_tag()), which holds a fresh profile too: the data
 * dir above the run dir is private to us. A profile dir given by the
 * caller (an unsealed profile) is handed over to the user instead, when
 * the user can reach it.
 *
 * Where that cannot be had (no user namespaces for an unprivileged user,
 * tried once, no setpriv, a profile dir
 * the browser user could not reach, or GLASSBOX_BROWSER_USER=root), the
 * browser runs as root without its sandbox, and sess_browser_user_check()
 * says why.
 */
#include "sessions/sessions-private.h"

#include "common/fs.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reads a small number from a /proc file; -1 when it cannot. */
static long read_proc_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Whether an unprivileged user may make a user namespace here, as
 * Chromium's sandbox does: tried once, in a child that drops to an unused
 * uid and calls unshare(CLONE_NEWUSER) (a kernel or a security module may
 * refuse it whatever the sysctls say). 0 when it may, else the errno. */
static int userns_probe_errno = -1;
static pthread_once_t userns_probe_once = PTHREAD_ONCE_INIT;

static void userns_probe(void)
{
	uid_t uid = (uid_t)(SESS_BROWSER_UID_BASE + 0xffffffu);
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		/* only async-signal-safe calls in the child of a threaded process */
		if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)
			_exit(errno & 0x7f);
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0x7f));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		userns_probe_errno = pid < 0 ? errno : ECHILD;
	else
		userns_probe_errno = WEXITSTATUS(status);
}

int sess_browser_user_check(char *why, size_t whylen)
{
	const char *env = getenv("GLASSBOX_BROWSER_USER");
	long v;

	if (geteuid() != 0) {
		snprintf(why, whylen, "Chromium runs as glassbox's own user, sandboxed");
		return 0;
	}
	if (env && !strcmp(env, "root")) {
		snprintf(why, whylen, "GLASSBOX_BROWSER_USER=root");
		return 0;
	}
	if (access(SESS_SETPRIV, X_OK) != 0) {
		snprintf(why, whylen, "%s is missing (apt-get install util-linux)", SESS_SETPRIV);
		return 0;
	}
	v = read_proc_number("/proc/sys/kernel/unprivileged_userns_clone");
	if (v == 0) {
		snprintf(why, whylen,
		         "unprivileged user namespaces are off "
		         "(sysctl kernel.unprivileged_userns_clone=1 turns them on)");
		return 0;
	}
	v = read_proc_number("/proc/sys/user/max_user_namespaces");
	if (v == 0) {
		snprintf(why, whylen,
		         "user namespaces are off (sysctl user.max_user_namespaces is 0)");
		return 0;
	}
	pthread_once(&userns_probe_once, userns_probe);
	if (userns_probe_errno != 0) {
		snprintf(why, whylen,
		         "an unprivileged user cannot make a user namespace here (%s), which "
		         "Chromium's sandbox needs",
		         strerror(userns_probe_errno));
		return 0;
	}
	snprintf(why, whylen, "each browser runs as a user of its own, sandboxed");
	return 1;
}

int sess_browser_sandboxed(char *why, size_t whylen)
{
	return geteuid() != 0 || sess_browser_user_check(why, whylen);
}

struct uid_search {
	uid_t uid;
	int used; /* set when a process runs as uid */
};

/* sess_proc_foreach callback: stops at a process that runs as the uid
 * searched for (real, effective, saved or fs uid, from /proc/PID/status). */
static int runs_as(void *user, pid_t pid)
{
	struct uid_search *q = user;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long u[4];

		if (sscanf(line, "Uid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			q->used =
			    u[0] == q->uid || u[1] == q->uid || u[2] == q->uid || u[3] == q->uid;
			break;
		}
	}
	fclose(f);
	return q->used;
}

/* 1 when some process runs as uid. */
static int uid_in_use(uid_t uid)
{
	struct uid_search q = { .uid = uid, .used = 0 };

	sess_proc_foreach(runs_as, &q);
	return q.used;
}

uid_t sess_browser_uid_pick(void)
{
	int tries;

	for (tries = 0; tries < 16; tries++) {
		uint32_t r;
		uid_t uid;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			continue;
		uid = (uid_t)(SESS_BROWSER_UID_BASE + (r & 0xffffffu));
		if (!uid_in_use(uid))
			return uid;
	}
	return (uid_t)0;
}

/* The base dir of browser homes, made 0711 (others may pass, not list)
 * and checked to be ours and not a link. */
static int home_base(char *base, size_t len, char *err, size_t errlen)
{
	struct stat st;

	snprintf(base, len, "%s", SESS_BROWSER_HOME_BASE);
	if (mkdir(base, 0711) != 0 && errno != EEXIST) {
		gb_set_io_error(err, errlen, "create", base, errno);
		return -1;
	}
	if (lstat(base, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is not a directory of ours: remove it", base);
		return -1;
	}
	if ((st.st_mode & 0777) != 0711 && chmod(base, 0711) != 0) {
		gb_set_io_error(err, errlen, "chmod", base, errno);
		return -1;
	}
	return 0;
}

/* The tag of run_dir's browser homes (run_dir/.browsers-tag, made once):
 * their names start with it, so what belongs to a data dir can be found
 * from it, even after its sessions' dirs are gone. */
static int run_dir_tag(const char *run_dir, char tag[9])
{
	char path[1100];
	char hex[9];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/.browsers-tag", run_dir);
	f = fopen(path, "r");
	if (f) {
		int ok = fscanf(f, "%8[0-9a-f]", tag) == 1 && strlen(tag) == 8;

		fclose(f);
		if (ok)
			return 0;
	}
	gb_random_hex(hex, 4);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, hex, 8) != 8 || fsync(fd) != 0) {
		close(fd);
		return -1;
	}
	close(fd);
	memcpy(tag, hex, 9);
	return 0;
}

int sess_browser_home_path(const char *run_dir, const char *session_id, char *home, size_t len)
{
	char tag[9];

	if (run_dir_tag(run_dir, tag) < 0)
		return -1;
	return snprintf(home, len, "%s/%s-%s", SESS_BROWSER_HOME_BASE, tag, session_id) >= (int)len
	           ? -1
	           : 0;
}

int sess_browser_home_make(const char *run_dir, const char *session_id, uid_t uid, char *home,
                           size_t len, char *err, size_t errlen)
{
	char base[256];

	if (home_base(base, sizeof(base), err, errlen) < 0)
		return -1;
	if (sess_browser_home_path(run_dir, session_id, home, len) < 0) {
		snprintf(err, errlen, "cannot name the browser's home (is %s writable?)", run_dir);
		return -1;
	}
	if (mkdir(home, 0700) != 0) {
		gb_set_io_error(err, errlen, "create", home, errno);
		return -1;
	}
	if (chown(home, uid, uid) != 0) {
		gb_set_io_error(err, errlen, "hand over", home, errno);
		return -1;
	}
	return 0;
}

static uid_t chown_to;

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return lchown(path, chown_to, chown_to) != 0 ? -1 : 0;
}

int sess_hand_over_tree(const char *dir, uid_t uid)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int rc;

	pthread_mutex_lock(&lock);
	chown_to = uid;
	rc = nftw(dir, chown_entry, 16, FTW_PHYS);
	pthread_mutex_unlock(&lock);
	return rc;
}

int sess_runnable_by_others(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXOTH) &&
	       sess_reachable_by_others(path);
}

int sess_reachable_by_others(const char *path)
{
	char p[4096];
	char *slash;
	struct stat st;

	snprintf(p, sizeof(p), "%s", path);
	while ((slash = strrchr(p, '/')) && slash != p) {
		*slash = '\0';
		if (stat(p, &st) != 0 || !(st.st_mode & S_IXOTH))
			return 0;
	}
	return 1;
}
