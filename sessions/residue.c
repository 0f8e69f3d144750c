/*
 * residue.c - what closed sessions left behind, for a "residual
 * processes after close" gauge that must stay at zero.
 *
 * sess_close() ends the browser's process group and removes its private
 * dir, then notes here anything still there: a live process of the group
 * or the dir. sess_residual_count() re-checks each note and forgets those
 * that have gone since, so the gauge says what is left now. Thread-safe
 * (one mutex); at most MAX_NOTES notes are kept.
 */
#include "sessions/sessions-private.h"

#include "common/log.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_NOTES 64

struct residue_note {
	pid_t pgid;
	char dir[1024];
};

static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct residue_note notes[MAX_NOTES]; /* {notes_lock} */
static size_t n_notes;                       /* {notes_lock} */

struct count_ctx {
	pid_t pgid;
	size_t n;
};

static int count_member(void *user, pid_t pid)
{
	struct count_ctx *c = user;
	struct sess_proc_stat st;

	if (sess_proc_stat(pid, &st) == 0 && st.pgid == c->pgid && st.state != 'Z')
		c->n++;
	return 0;
}

/* Processes of group pgid plus 1 if dir still exists. */
static size_t left_behind(pid_t pgid, const char *dir)
{
	struct count_ctx c = { .pgid = pgid };
	struct stat st;

	if (pgid > 0 && (kill(-pgid, 0) == 0 || errno == EPERM))
		sess_proc_foreach(count_member, &c);
	return c.n + (dir[0] && stat(dir, &st) == 0 ? 1 : 0);
}

void sess_note_residue(pid_t pgid, const char *dir)
{
	size_t n = left_behind(pgid, dir ? dir : "");

	if (!n)
		return;
	GB_LOGE("sessions", "a closed session left %zu process(es) or dir behind (group %d, %s)", n,
	        (int)pgid, dir ? dir : "");
	pthread_mutex_lock(&notes_lock);
	if (n_notes < MAX_NOTES) {
		notes[n_notes].pgid = pgid;
		snprintf(notes[n_notes].dir, sizeof(notes[n_notes].dir), "%s", dir ? dir : "");
		n_notes++;
	}
	pthread_mutex_unlock(&notes_lock);
}

size_t sess_residual_count(void)
{
	size_t total = 0, i = 0;

	pthread_mutex_lock(&notes_lock);
	while (i < n_notes) {
		size_t n = left_behind(notes[i].pgid, notes[i].dir);

		if (!n) {
			notes[i] = notes[--n_notes];
			continue;
		}
		total += n;
		i++;
	}
	pthread_mutex_unlock(&notes_lock);
	return total;
}

int sess_residue_noted(pid_t pgid)
{
	size_t i;
	int noted = 0;

	pthread_mutex_lock(&notes_lock);
	for (i = 0; i < n_notes && !noted; i++)
		noted = pgid > 0 && notes[i].pgid == pgid;
	pthread_mutex_unlock(&notes_lock);
	return noted;
}
