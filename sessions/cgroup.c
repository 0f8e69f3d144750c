/*
 * cgroup.c - a cgroup v2 per limited browser, where the machine allows it.
 *
 * Layout: BASE = ROOT/glassbox, one child BASE/<session id> per limited
 * browser (a leaf: cgroup v2 lets processes live only in leaves of a
 * subtree with controllers enabled). ROOT is $GLASSBOX_CGROUP when set (a
 * cgroup delegated to glassbox, e.g. systemd's Delegate=yes), else this
 * process's own cgroup on the cgroup2 mount. Usable only when ROOT lists
 * the memory and cpu controllers and both can be enabled for BASE's
 * children: a cgroup that holds processes itself (ours, when ROOT is our
 * own cgroup and not the top) cannot enable them, and then limits are
 * kept by the watchdog alone. Found once per process.
 */
#include "sessions/sessions-private.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes text to dir/name; returns 0 or -errno. */
static int write_file(const char *dir, const char *name, const char *text)
{
	char path[1400];
	size_t len = strlen(text);
	ssize_t n;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0 || (size_t)n != len)
		rc = n < 0 ? -errno : -EIO;
	close(fd);
	return rc;
}

static int read_file(const char *dir, const char *name, char *buf, size_t len)
{
	char path[1400];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* 1 when the space-separated list has word. */
static int has_word(const char *list, const char *word)
{
	size_t wlen = strlen(word);
	const char *p = list;

	while (*p) {
		size_t n;

		p += strspn(p, " \n\t");
		n = strcspn(p, " \n\t");
		if (n == wlen && !strncmp(p, word, wlen))
			return 1;
		p += n;
	}
	return 0;
}

/*
 * Checks root (borrowed) and makes BASE = root/glassbox with memory and
 * cpu enabled for its children. Returns 0 with base filled, or -1 with
 * the reason in why.
 */
UNITTEST int sess_cgroup_prepare(const char *root, char *base, size_t baselen, char *why,
                                 size_t whylen)
{
	char list[512];
	int rc;

	if (read_file(root, "cgroup.controllers", list, sizeof(list)) < 0) {
		snprintf(why, whylen, "%.300s is not a cgroup v2 dir", root);
		return -1;
	}
	if (!has_word(list, "memory") || !has_word(list, "cpu")) {
		snprintf(why, whylen,
		         "the memory and cpu controllers are not available in %.300s "
		         "(it offers: %.100s)",
		         root, list[0] ? list : "none");
		return -1;
	}
	rc = write_file(root, "cgroup.subtree_control", "+memory +cpu");
	if (rc < 0) {
		snprintf(why, whylen,
		         "cannot enable memory and cpu under %.300s: %s (set GLASSBOX_CGROUP "
		         "to a cgroup delegated to glassbox)",
		         root, strerror(-rc));
		return -1;
	}
	snprintf(base, baselen, "%s/glassbox", root);
	if (mkdir(base, 0755) != 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %.300s: %s", base, strerror(errno));
		return -1;
	}
	rc = write_file(base, "cgroup.subtree_control", "+memory +cpu");
	if (rc < 0) {
		snprintf(why, whylen, "cannot enable memory and cpu under %.300s: %s", base,
		         strerror(-rc));
		return -1;
	}
	return 0;
}

/* The cgroup2 mount point, or NULL. */
static const char *cgroup2_mount(void)
{
	static const char *const candidates[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	char path[256];
	size_t i;

	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", candidates[i]);
		if (access(path, R_OK) == 0)
			return candidates[i];
	}
	return NULL;
}

/* This process's cgroup v2 path ("/a/b") from /proc/self/cgroup. */
static int own_cgroup(char *buf, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line + 3);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

static pthread_once_t base_once = PTHREAD_ONCE_INIT;
static char base_dir[1200];
static char base_why[512];

static void find_base(void)
{
	const char *env = getenv("GLASSBOX_CGROUP");
	const char *mount;
	char own[1024];
	char root[1100];

	if (env && env[0]) {
		snprintf(root, sizeof(root), "%.1000s", env);
	} else {
		mount = cgroup2_mount();
		if (!mount) {
			snprintf(base_why, sizeof(base_why), "no cgroup v2 mount");
			return;
		}
		if (own_cgroup(own, sizeof(own)) < 0) {
			snprintf(base_why, sizeof(base_why), "this process has no cgroup v2 path");
			return;
		}
		snprintf(root, sizeof(root), "%s%.1000s", mount, strcmp(own, "/") ? own : "");
	}
	if (sess_cgroup_prepare(root, base_dir, sizeof(base_dir), base_why, sizeof(base_why)) < 0)
		base_dir[0] = '\0';
	else
		GB_LOGI("sessions", "browser limits: a cgroup v2 per browser under %s", base_dir);
}

const char *sess_cgroup_base(char *why, size_t whylen)
{
	pthread_once(&base_once, find_base);
	if (why)
		snprintf(why, whylen, "%s", base_why);
	return base_dir;
}

struct move_ctx {
	const char *path;
	pid_t pgid;
	int moved;
	int failed;
};

static int move_one(void *user, pid_t pid)
{
	struct move_ctx *m = user;
	struct sess_proc_stat st;
	char text[32];

	if (sess_proc_stat(pid, &st) < 0 || st.pgid != m->pgid || st.state == 'Z')
		return 0;
	snprintf(text, sizeof(text), "%d", (int)pid);
	if (write_file(m->path, "cgroup.procs", text) < 0)
		m->failed++;
	else
		m->moved++;
	return 0;
}

int sess_cgroup_enter(const char *base, const char *id, pid_t pgid, uint64_t memory_max_bytes,
                      unsigned cpu_percent, char *path, size_t pathlen, char *err, size_t errlen)
{
	struct move_ctx m = { .path = path, .pgid = pgid };
	char text[64];
	int rc;

	snprintf(path, pathlen, "%s/%s", base, id);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the cgroup %.300s: %s", path, strerror(errno));
		goto fail;
	}
	if (memory_max_bytes) {
		snprintf(text, sizeof(text), "%llu", (unsigned long long)memory_max_bytes);
		rc = write_file(path, "memory.max", text);
		if (rc < 0) {
			snprintf(err, errlen, "cannot set memory.max in %.300s: %s", path,
			         strerror(-rc));
			goto fail;
		}
	}
	if (cpu_percent) {
		/* quota per 100 ms period: 50% of a core = 50000 us */
		snprintf(text, sizeof(text), "%u 100000", cpu_percent * 1000u);
		rc = write_file(path, "cpu.max", text);
		if (rc < 0) {
			snprintf(err, errlen, "cannot set cpu.max in %.300s: %s", path,
			         strerror(-rc));
			goto fail;
		}
	}
	sess_proc_foreach(move_one, &m);
	if (m.failed || !m.moved) {
		snprintf(err, errlen,
		         "cannot move the browser's processes into %.300s (%d moved, %d "
		         "failed)",
		         path, m.moved, m.failed);
		goto fail;
	}
	return 0;
fail:
	rmdir(path);
	path[0] = '\0';
	return -1;
}

unsigned sess_cgroup_oom_kills(const char *path)
{
	char text[1024];
	const char *p;
	unsigned n = 0;

	if (!path[0] || read_file(path, "memory.events", text, sizeof(text)) < 0)
		return 0;
	p = strstr(text, "oom_kill ");
	if (p && (p == text || p[-1] == '\n'))
		sscanf(p + 9, "%u", &n);
	return n;
}

void sess_cgroup_remove(const char *path)
{
	if (path && path[0] && rmdir(path) != 0 && errno != ENOENT)
		GB_LOGW("sessions", "cannot remove the cgroup %s: %s", path, strerror(errno));
}
