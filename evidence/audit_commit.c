/*
 * audit_commit.c - group commit of one tenant's audit log: the day file
 * records are appended to, and the one fdatasync() that makes a batch of
 * them durable.
 *
 * DESIGN
 * What it owns: the day file kept open for its syncs (c->fd; each record
 * is written through the file opened again, so one that can no longer be
 * written refuses it) and what is known of it: the newest record written
 * to it and the newest one known durable.
 *
 * Threads: none of its own. Every function is called with the log's
 * mutex held (the caller's; passed in where a wait releases it). A writer
 * appends its record under the mutex (evid_commit_write_locked), then
 * waits for it (evid_commit_wait_locked). The first waiter that finds no
 * sync running becomes the leader: it takes the newest record written,
 * releases the mutex, fdatasyncs the file and writes the chain head
 * naming that record (c->head_fn), takes the mutex again, marks the batch
 * durable and wakes the others. Every record written before the leader
 * took the newest is in its batch (its bytes were in the file before the
 * sync began); those written while it syncs wait for the next one. So
 * records written concurrently share one sync, and each writer still
 * returns only once its own record is durable.
 *
 * Invariants:
 *   - synced_seq <= written_seq; a record with seq <= synced_seq is on
 *     disk: an fdatasync that began after its write() returned succeeded;
 *   - no writer is told its record is kept before that: a failed sync cuts
 *     the file back to synced_size (every record not yet durable goes,
 *     whoever wrote it) and bumps gen;
 *   - each waiting writer learns its record's fate from the sync that
 *     settled it (c->waiters), not from the state it finds on waking: a
 *     later batch may have been cut, or the seqs reused, before it runs
 *     again. A batch that succeeds tells every waiter it covers, one that
 *     fails every waiter left (none of theirs is durable);
 *   - the fd and its file change only when nothing is waiting to be
 *     synced and no sync runs (evid_commit_drain_locked first).
 */
#include "evidence/evidence-private.h"
#include "evidence/evidence.h"

#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The sync a batch gets: fdatasync, or a test's. */
static int (*sync_fn)(int fd) = fdatasync;

#ifdef GB_UNITTEST_BUILD
void evid_commit_set_sync(int (*fn)(int fd))
{
	sync_fn = fn ? fn : fdatasync;
}
#endif

void evid_commit_init(struct evid_commit *c, evid_commit_head_fn head_fn, void *head_user)
{
	memset(c, 0, sizeof(*c));
	pthread_cond_init(&c->cond, NULL);
	c->fd = -1;
	c->head_fn = head_fn;
	c->head_user = head_user;
}

void evid_commit_destroy(struct evid_commit *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	pthread_cond_destroy(&c->cond);
}

int evid_commit_idle_locked(const struct evid_commit *c)
{
	return !c->syncing && !c->draining && c->written_seq == c->synced_seq;
}

/* Tells each waiter not yet told whose record is seq upto or older
 * (every one, with all) its outcome. */
static void settle_waiters(struct evid_commit *c, uint64_t upto, int all, int outcome)
{
	struct evid_commit_waiter *w;

	for (w = c->waiters; w; w = w->next)
		if (!w->outcome && (all || w->seq <= upto))
			w->outcome = outcome;
}

/* Syncs every record written so far; with unlock, the mutex is released
 * around the sync and the head. Marks them durable, or cuts them off and
 * bumps gen; tells their waiters which. Wakes every waiter. Returns 0 or
 * -EVID_EIO with err. */
static int sync_batch_locked(struct evid_commit *c, pthread_mutex_t *lock, int unlock, char *err,
                             size_t errlen)
{
	uint64_t upto = c->written_seq;
	off_t size = c->written_size;
	char hash[65];
	int fd = c->fd;
	int failed;
	int errnum = 0;
	int rc = 0;

	memcpy(hash, c->written_hash, sizeof(hash));
	c->syncing = 1;
	if (unlock)
		pthread_mutex_unlock(lock);
	failed = sync_fn(fd) != 0;
	if (failed)
		errnum = errno;
	else if (c->head_fn)
		c->head_fn(c->head_user, upto, hash);
	if (unlock)
		pthread_mutex_lock(lock);
	c->syncing = 0;
	if (!failed) {
		if (upto > c->synced_seq) {
			c->synced_seq = upto;
			c->synced_size = size;
		}
		settle_waiters(c, upto, 0, 1);
	} else {
		gb_set_io_error(c->cut_reason, sizeof(c->cut_reason), "sync the audit log", c->path,
		                errnum ? errnum : EIO);
		if (ftruncate(fd, c->synced_size) != 0)
			GB_LOGE("evidence", "could not cut unsynced records off %s", c->path);
		GB_LOGW("evidence", "records %llu to %llu of %s were cut off: %s",
		        (unsigned long long)c->synced_seq + 1, (unsigned long long)c->written_seq,
		        c->path, c->cut_reason);
		c->written_seq = c->synced_seq;
		c->written_size = c->synced_size;
		c->gen++;
		c->cut = 1;
		settle_waiters(c, 0, 1, -1);
		gb_set_error(err, errlen, "%s", c->cut_reason);
		rc = -EVID_EIO;
	}
	pthread_cond_broadcast(&c->cond);
	return rc;
}

int evid_commit_drain_locked(struct evid_commit *c, pthread_mutex_t *lock, char *err, size_t errlen)
{
	int rc = 0;

	c->draining++;
	while (c->syncing)
		pthread_cond_wait(&c->cond, lock);
	c->draining--;
	if (c->written_seq > c->synced_seq)
		rc = sync_batch_locked(c, lock, 0, err, errlen);
	return rc;
}

int evid_commit_use_file_locked(struct evid_commit *c, pthread_mutex_t *lock, const char *dir,
                                const char *name, struct stat *st, char *err, size_t errlen)
{
	int fd = -1;
	int rc = 0;

	if (c->fd >= 0 && !strcmp(c->file, name))
		goto stat;
	rc = evid_commit_drain_locked(c, lock, err, errlen);
	if (rc != 0)
		goto out;
	evid_commit_close_locked(c);
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	snprintf(c->path, sizeof(c->path), "%s/%s", dir, name);
	fd = open(c->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		gb_set_io_error(err, errlen, "open the audit log", c->path, errno);
		rc = -EVID_EIO;
		goto out;
	}
	c->fd = fd;
	snprintf(c->file, sizeof(c->file), "%s", name);
stat:
	if (fstat(c->fd, st) != 0) {
		gb_set_io_error(err, errlen, "inspect the audit log", c->path, errno);
		rc = -EVID_EIO;
		goto out;
	}
	if (c->written_seq == c->synced_seq) /* nothing pending: the file is as synced */
		c->written_size = c->synced_size = st->st_size;
out:
	return rc;
}

void evid_commit_close_locked(struct evid_commit *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->file[0] = '\0';
}

int evid_commit_write_locked(struct evid_commit *c, const char *line, size_t len, uint64_t seq,
                             const char hash[65], struct stat *after, uint64_t *gen, char *err,
                             size_t errlen)
{
	struct stat st;
	size_t done = 0;
	off_t before = c->written_size;
	ssize_t n;
	int fd;
	int rc = 0;

	/* each record opens the file again, so that one that can no longer be
	 * written (a read-only remount, a changed mode) refuses it at once */
	fd = open(c->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || fstat(c->fd, after) != 0) {
		gb_set_io_error(err, errlen, "open the audit log", c->path, errno);
		rc = -EVID_EIO;
		goto out;
	}
	if (st.st_dev != after->st_dev || st.st_ino != after->st_ino) {
		gb_set_error(err, errlen,
		             "%s was replaced while it was written to: the record was not "
		             "written; try again",
		             c->path);
		c->cut = 1; /* re-read the tail and open the file again */
		rc = -EVID_EIO;
		goto out;
	}
	while (done < len) {
		n = write(fd, line + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			gb_set_io_error(err, errlen, "append to the audit log", c->path,
			                n == 0 ? EIO : errno);
			if (done && ftruncate(fd, before) != 0)
				GB_LOGE("evidence", "could not cut a partial record off %s",
				        c->path);
			rc = -EVID_EIO;
			goto out;
		}
		done += (size_t)n;
	}
	if (fstat(fd, after) != 0) {
		gb_set_io_error(err, errlen, "inspect the audit log", c->path, errno);
		if (ftruncate(fd, before) != 0)
			GB_LOGE("evidence", "could not cut a record off %s", c->path);
		rc = -EVID_EIO;
		goto out;
	}
	if (before == 0) {
		/* a new day file: its name must be durable before any record in
		 * it is acknowledged; rare enough to do at once */
		rc = gb_fs_sync_dir(c->dir, err, errlen);
		if (rc != 0) {
			if (ftruncate(fd, before) != 0)
				GB_LOGE("evidence", "could not cut a record off %s", c->path);
			rc = -EVID_EIO;
			goto out;
		}
	}
	c->written_seq = seq;
	memcpy(c->written_hash, hash, sizeof(c->written_hash));
	c->written_size = after->st_size;
	*gen = c->gen;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int evid_commit_wait_locked(struct evid_commit *c, pthread_mutex_t *lock, uint64_t gen,
                            uint64_t seq, char *err, size_t errlen)
{
	struct evid_commit_waiter me = { .seq = seq };
	struct evid_commit_waiter **p;

	if (c->gen != gen) /* cut off before it waited */
		goto cut;
	if (c->synced_seq >= seq)
		return 0;
	me.next = c->waiters;
	c->waiters = &me;
	while (!me.outcome) {
		if (c->syncing || c->draining)
			pthread_cond_wait(&c->cond, lock);
		else
			sync_batch_locked(c, lock, 1, NULL, 0); /* it tells me */
	}
	for (p = &c->waiters; *p != &me; p = &(*p)->next)
		;
	*p = me.next;
	if (me.outcome > 0)
		return 0;
cut:
	gb_set_error(err, errlen, "%s", c->cut_reason);
	return -EVID_EIO;
}
