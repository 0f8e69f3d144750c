/*
 * limits.c - per-browser memory and CPU limits, and the watchdog that
 * keeps them.
 *
 * Design: one watchdog thread per process, started with the first limited
 * browser. Every SAMPLE_MS it walks /proc once, adds up each watched
 * browser's process group: PSS (smaps_rollup) when it has a memory limit,
 * CPU time (stat) when it has a CPU limit, the latter kept in a ring of
 * samples so the CPU share is averaged over a window. A browser over a
 * limit gets a verdict ("the browser used 612 MiB, over this session's
 * limit of 512 MiB") and SIGKILL to its whole process group; its worker
 * sees the connection close and turns the session FAILED with the verdict
 * as its reason (sess_check_alive). Where cgroup v2 is usable the browser
 * also gets its own cgroup: memory.max a quarter above the limit (a
 * backstop between two samples: the watchdog, which names the limit,
 * acts first) and cpu.max at the limit (the kernel throttles; a browser
 * held at its ceiling for a whole window is then over it).
 *
 * Threads: the watchdog thread and the sessions' workers share the list
 * of entries under wd.lock. A worker creates its session's entry, and
 * detaches it (pgid 0) as soon as it reaped the browser's leader, so a
 * reused pid is never signalled; it frees the entry on close.
 */
#include "sessions/sessions-private.h"

#include "common/log.h"
#include "common/util.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLE_MS 250
#define CPU_RING 128
#define MIB (1024.0 * 1024.0)

struct cpu_sample {
	int64_t at_ms;
	uint64_t ticks;
};

struct sess_watch {
	char id[SESS_ID_LEN];
	pid_t pgid; /* {wd.lock} 0 once detached */
	struct sess_limits lim;
	char cgroup[1200];                /* its cgroup dir, or "" */
	struct cpu_sample ring[CPU_RING]; /* {wd.lock} */
	size_t ring_len;                  /* {wd.lock} */
	size_t ring_head;                 /* {wd.lock} next slot */
	uint64_t sample_pss;              /* {wd.lock} sums of the current sample */
	uint64_t sample_ticks;            /* {wd.lock} */
	char verdict[256];                /* {wd.lock} set once, when closed over a limit */
	struct sess_watch *next;          /* {wd.lock} */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int started;
	struct sess_watch *head; /* {lock} */
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* /proc walk callback: adds pid to the entry watching its group. */
static int add_process_locked(void *user, pid_t pid)
{
	struct sess_proc_stat st;
	struct sess_watch *w;

	(void)user;
	if (sess_proc_stat(pid, &st) < 0 || st.state == 'Z')
		return 0;
	for (w = wd.head; w; w = w->next) {
		if (!w->pgid || st.pgid != w->pgid)
			continue;
		w->sample_ticks += st.cpu_ticks;
		if (w->lim.memory_bytes)
			w->sample_pss += sess_proc_pss_bytes(pid);
		break;
	}
	return 0;
}

/* The CPU share (percent of one core) over the window, or -1 while the
 * samples do not yet span it. */
static double cpu_percent_locked(struct sess_watch *w, int64_t now)
{
	int window = w->lim.cpu_window_ms > 0 ? w->lim.cpu_window_ms : 5000;
	const struct cpu_sample *newest, *oldest = NULL;
	size_t i;
	long hz = sysconf(_SC_CLK_TCK);

	if (w->ring_len < 2)
		return -1;
	newest = &w->ring[(w->ring_head + CPU_RING - 1) % CPU_RING];
	/* the newest sample at least `window` older than now */
	for (i = 2; i <= w->ring_len; i++) {
		const struct cpu_sample *c = &w->ring[(w->ring_head + CPU_RING - i) % CPU_RING];

		if (now - c->at_ms >= window) {
			oldest = c;
			break;
		}
	}
	if (!oldest || newest->at_ms <= oldest->at_ms || newest->ticks < oldest->ticks)
		return -1;
	return 100.0 * (double)(newest->ticks - oldest->ticks) / (double)(hz > 0 ? hz : 100) /
	       ((double)(newest->at_ms - oldest->at_ms) / 1000.0);
}

/* Closes w's browser for the reason in w->verdict. */
static void close_over_limit_locked(struct sess_watch *w)
{
	GB_LOGW("sessions", "session %s: %s", w->id, w->verdict);
	kill(-w->pgid, SIGKILL);
	w->pgid = 0;
}

static void judge_locked(struct sess_watch *w, int64_t now)
{
	double cpu;
	unsigned ooms;

	if (!w->pgid || w->verdict[0])
		return;
	w->ring[w->ring_head] = (struct cpu_sample){ .at_ms = now, .ticks = w->sample_ticks };
	w->ring_head = (w->ring_head + 1) % CPU_RING;
	if (w->ring_len < CPU_RING)
		w->ring_len++;
	if (w->lim.memory_bytes && w->sample_pss > w->lim.memory_bytes) {
		snprintf(w->verdict, sizeof(w->verdict),
		         "the browser used %.0f MiB, over this session's limit of %.0f MiB; it was "
		         "closed",
		         (double)w->sample_pss / MIB, (double)w->lim.memory_bytes / MIB);
		goto close;
	}
	ooms = sess_cgroup_oom_kills(w->cgroup);
	if (w->lim.memory_bytes && ooms) {
		snprintf(w->verdict, sizeof(w->verdict),
		         "the browser reached this session's memory limit of %.0f MiB (the kernel "
		         "ended %u of its processes); it was closed",
		         (double)w->lim.memory_bytes / MIB, ooms);
		goto close;
	}
	cpu = w->lim.cpu_percent ? cpu_percent_locked(w, now) : -1;
	/* under cpu.max the kernel holds it at the limit: at 95% of it for a
	 * whole window, it is spinning against the ceiling */
	if (cpu >= 0 && cpu >= (w->cgroup[0] ? 0.95 : 1.0) * w->lim.cpu_percent) {
		snprintf(
		    w->verdict, sizeof(w->verdict),
		    "the browser used %.0f%% of a CPU core for %d s, over this session's limit "
		    "of %u%%; it was closed",
		    cpu, (w->lim.cpu_window_ms > 0 ? w->lim.cpu_window_ms : 5000) / 1000,
		    w->lim.cpu_percent);
		goto close;
	}
	return;
close:
	close_over_limit_locked(w);
}

static void *watchdog_main(void *arg)
{
	struct sess_watch *w;
	struct timespec until;

	(void)arg;
	pthread_mutex_lock(&wd.lock);
	for (;;) {
		int64_t now;

		while (!wd.head)
			pthread_cond_wait(&wd.cond, &wd.lock);
		for (w = wd.head; w; w = w->next)
			w->sample_pss = w->sample_ticks = 0;
		sess_proc_foreach(add_process_locked, NULL);
		now = gb_now_ms();
		for (w = wd.head; w; w = w->next)
			judge_locked(w, now);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += SAMPLE_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&wd.cond, &wd.lock, &until);
	}
	return NULL;
}

int sess_apply_limits(struct sess *s, const struct sess_limits *lim, char *err, size_t errlen)
{
	struct sess_watch *w;
	const char *base;
	char why[512];
	char cerr[512];

	if (!lim->memory_bytes && !lim->cpu_percent)
		return 0;
	if (s->watch || s->pgid <= 0 || s->exited) {
		snprintf(err, errlen, "the browser of session %s cannot be limited: %s", s->id,
		         s->watch ? "it already is" : "it is not running");
		return -1;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(w->id, sizeof(w->id), "%s", s->id);
	w->pgid = s->pgid;
	w->lim = *lim;
	base = sess_cgroup_base(why, sizeof(why));
	if (base[0] && sess_cgroup_enter(
	                   base, s->id, s->pgid,
	                   lim->memory_bytes ? lim->memory_bytes + lim->memory_bytes / 4 : 0,
	                   lim->cpu_percent, w->cgroup, sizeof(w->cgroup), cerr, sizeof(cerr)) < 0)
		GB_LOGW("sessions", "session %s: the watchdog alone keeps its limits: %s", s->id,
		        cerr);
	pthread_mutex_lock(&wd.lock);
	if (!wd.started) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&wd.thread, &attr, watchdog_main, NULL) == 0)
			wd.started = 1;
		pthread_attr_destroy(&attr);
	}
	if (!wd.started) {
		pthread_mutex_unlock(&wd.lock);
		sess_cgroup_remove(w->cgroup);
		free(w);
		snprintf(err, errlen, "cannot start the limits watchdog thread");
		return -1;
	}
	w->next = wd.head;
	wd.head = w;
	s->watch = w;
	pthread_cond_broadcast(&wd.cond);
	pthread_mutex_unlock(&wd.lock);
	GB_LOGI("sessions", "session %s: memory limit %llu MiB, CPU limit %u%% (%s)", s->id,
	        (unsigned long long)(lim->memory_bytes >> 20), lim->cpu_percent,
	        w->cgroup[0] ? w->cgroup : "watchdog");
	return 0;
}

void sess_watch_detach(struct sess *s)
{
	if (!s->watch)
		return;
	pthread_mutex_lock(&wd.lock);
	s->watch->pgid = 0;
	pthread_mutex_unlock(&wd.lock);
}

void sess_watch_release(struct sess *s)
{
	struct sess_watch **pp;

	if (!s->watch)
		return;
	pthread_mutex_lock(&wd.lock);
	for (pp = &wd.head; *pp; pp = &(*pp)->next) {
		if (*pp == s->watch) {
			*pp = s->watch->next;
			break;
		}
	}
	pthread_mutex_unlock(&wd.lock);
	sess_cgroup_remove(s->watch->cgroup);
	free(s->watch);
	s->watch = NULL;
}

int sess_watch_verdict(struct sess *s, char *buf, size_t len)
{
	int found = 0;

	if (!s->watch)
		return 0;
	pthread_mutex_lock(&wd.lock);
	if (s->watch->verdict[0]) {
		snprintf(buf, len, "%s", s->watch->verdict);
		found = 1;
	}
	pthread_mutex_unlock(&wd.lock);
	return found;
}

int sess_over_limit(struct sess *s)
{
	int over;

	if (!s->watch)
		return 0;
	pthread_mutex_lock(&wd.lock);
	over = s->watch->verdict[0] != '\0';
	pthread_mutex_unlock(&wd.lock);
	return over;
}

void sess_limits_describe(char *buf, size_t len)
{
	char why[512];
	const char *base = sess_cgroup_base(why, sizeof(why));

	if (base[0])
		snprintf(buf, len, "cgroup v2 (%s) and watchdog", base);
	else
		snprintf(buf, len, "watchdog (no cgroup: %s)", why);
}
