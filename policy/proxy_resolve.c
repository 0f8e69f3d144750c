/*
 * proxy_resolve.c - name resolution off the proxy's event loop.
 *
 * The resolver is one thread per proxy, started on the first name that
 * needs DNS (names with a resolver override and address literals never
 * get here). Jobs and results are queues under r->lock; a result wakes
 * the proxy loop by writing one byte to its wake pipe. Freeing the
 * resolver waits for the lookup in progress, if any, to end.
 */
#include "policy/proxy-private.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct resolve_job {
	struct resolve_job *next;
	uint64_t conn_id;
	char host[POLICY_HOST_MAX + 1];
	struct proxy_resolved result;
};

struct proxy_resolver {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int started;              /* {lock} */
	int stopping;             /* {lock} */
	struct resolve_job *jobs; /* {lock} waiting, oldest first */
	struct resolve_job *done; /* {lock} results, any order */
	size_t njobs;             /* {lock} waiting + running + done */
	size_t max_jobs;
	int wake_fd; /* the proxy's wake pipe (write end), borrowed */
};

/* Runs getaddrinfo for job->host and fills job->result (at most
 * POLICY_MAX_HOST_ADDRS distinct addresses). */
static void resolve_one(struct resolve_job *job)
{
	struct addrinfo hints;
	struct addrinfo *res = NULL;
	struct addrinfo *ai;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	rc = getaddrinfo(job->host, NULL, &hints, &res);
	job->result.conn_id = job->conn_id;
	job->result.rc = rc;
	if (rc != 0) {
		snprintf(job->result.error, sizeof(job->result.error), "%s", gai_strerror(rc));
		goto out;
	}
	for (ai = res; ai && job->result.naddrs < POLICY_MAX_HOST_ADDRS; ai = ai->ai_next) {
		struct policy_ip ip;
		size_t i;

		if (policy_ip_from_sockaddr(ai->ai_addr, &ip) < 0)
			continue;
		for (i = 0; i < job->result.naddrs; i++)
			if (!memcmp(job->result.addrs[i].b, ip.b, 16))
				break;
		if (i == job->result.naddrs)
			job->result.addrs[job->result.naddrs++] = ip;
	}
	if (job->result.naddrs == 0) {
		job->result.rc = EAI_NODATA;
		snprintf(job->result.error, sizeof(job->result.error), "no IPv4 or IPv6 address");
	}
out:
	if (res)
		freeaddrinfo(res);
}

/* The resolver thread: takes jobs until stopping. */
static void *resolver_main(void *arg)
{
	struct proxy_resolver *r = arg;
	struct resolve_job *job;
	char one = 1;

	pthread_mutex_lock(&r->lock);
	while (!r->stopping) {
		if (!r->jobs) {
			pthread_cond_wait(&r->cond, &r->lock);
			continue;
		}
		job = r->jobs;
		r->jobs = job->next;
		pthread_mutex_unlock(&r->lock);
		resolve_one(job);
		pthread_mutex_lock(&r->lock);
		job->next = r->done;
		r->done = job;
		if (write(r->wake_fd, &one, 1) < 0) {
			/* the pipe is full: the loop is awake already */
		}
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Creates a resolver that wakes the loop through wake_fd (borrowed) and
 * holds at most max_jobs lookups. The thread starts on the first submit. */
int proxy_resolver_new(int wake_fd, size_t max_jobs, struct proxy_resolver **out)
{
	struct proxy_resolver *r = calloc(1, sizeof(*r));
	int rc = -POLICY_ENOMEM;

	*out = NULL;
	if (!r)
		goto out;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->wake_fd = wake_fd;
	r->max_jobs = max_jobs;
	*out = r;
	rc = 0;
out:
	return rc;
}

/* Queues a lookup of host (copied) for conn_id. Returns 0, or -POLICY_ESYS
 * when the queue is full or the thread cannot start. */
int proxy_resolver_submit(struct proxy_resolver *r, uint64_t conn_id, const char *host)
{
	struct resolve_job *job = NULL;
	struct resolve_job **tail;
	int rc = -POLICY_ESYS;

	pthread_mutex_lock(&r->lock);
	if (r->stopping || r->njobs >= r->max_jobs)
		goto out;
	if (!r->started) {
		if (pthread_create(&r->thread, NULL, resolver_main, r) != 0)
			goto out;
		r->started = 1;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		rc = -POLICY_ENOMEM;
		goto out;
	}
	job->conn_id = conn_id;
	snprintf(job->host, sizeof(job->host), "%s", host);
	for (tail = &r->jobs; *tail; tail = &(*tail)->next)
		;
	*tail = job;
	r->njobs++;
	pthread_cond_signal(&r->cond);
	rc = 0;
out:
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* Takes one finished lookup into out. Returns 1 when there was one, 0
 * otherwise. */
int proxy_resolver_take(struct proxy_resolver *r, struct proxy_resolved *out)
{
	struct resolve_job *job;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	job = r->done;
	if (job) {
		r->done = job->next;
		r->njobs--;
		*out = job->result;
		free(job);
		rc = 1;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* Frees a job list. */
static void free_jobs(struct resolve_job *j)
{
	while (j) {
		struct resolve_job *next = j->next;

		free(j);
		j = next;
	}
}

/* Stops the thread (after the lookup in progress) and frees r. NULL is a
 * no-op. */
void proxy_resolver_free(struct proxy_resolver *r)
{
	int started;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = 1;
	started = r->started;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (started)
		pthread_join(r->thread, NULL);
	free_jobs(r->jobs);
	free_jobs(r->done);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}
