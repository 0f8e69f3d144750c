/*
 * recordkeeper.c - keeps each call's evidence and audit record, off the
 * action's critical path.
 *
 * Design: the worker captures what must be captured at once (the
 * screenshot bytes, the target's box and click point, the snapshot text,
 * the network log), checks the PNG and names it by its sha256, and
 * queues the rest here: the annotated copy, the durable writes (fsync) of
 * every artifact and the signed, hash-chained audit record. One keeper
 * thread per agent session writes jobs in the order they were queued, so
 * the audit chain follows the calls. A reader of an artifact waits for
 * the queue to drain first (act_keeper_flush). A failure to keep evidence
 * is recorded in the audit log and reported in the next call's result;
 * tenants that require evidence check the store before acting, and their
 * calls wait for their own record (act_keeper_wait), so that the same
 * result says when it could not be kept.
 *
 * The queue has a ceiling (KEEPER_MAX_JOBS jobs, KEEPER_MAX_BYTES of
 * screenshots and text): a worker that queues faster than the disk takes
 * waits for room (back-pressure, at most KEEPER_WAIT_MS), and a job that
 * still finds none is refused with an error the call's result carries. A
 * job always fits an empty queue, whatever its size.
 *
 * Errors not yet reported (a record or a deferred screenshot that could
 * not be kept) wait in a list of their own, oldest first, until the next
 * answer takes them all (act_keeper_take_errors) or the call that waits
 * for that record takes its own (act_keeper_wait): KEEPER_MAX_ERRORS of
 * them, and a count of those beyond, each of which is logged.
 */
#include "actions/actions-private.h"

#include "common/log.h"
#include "evidence/audit.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The queue's ceiling, per agent session. */
#define KEEPER_MAX_JOBS 128
#define KEEPER_MAX_BYTES (96u * 1024u * 1024u)
#define KEEPER_WAIT_MS 30000
/* What a job costs beside its screenshots, text and JSON strings. */
#define JOB_OVERHEAD_BYTES 4096u
/* Errors kept for the next answer; more are counted (and logged). */
#define KEEPER_MAX_ERRORS 16

/* An error not yet reported to the agent. */
struct keeper_error {
	uint64_t ticket; /* the job's, 0: none (a screenshot, a refused job) */
	char message[512];
};

struct keeper_job {
	struct keeper_job *next;
	uint64_t ticket; /* its place in the queue, from 1 */
	size_t bytes;    /* what it holds, as the ceiling counts it */
	/* audit record */
	char kind[32];
	char session_id[40];
	char operation_id[72];
	json_t *body;
	int secret_text;
	/* evidence (png NULL: none) */
	unsigned char *png;
	size_t png_len;
	unsigned char *before_png;
	size_t before_len;
	unsigned purge_days; /* > 0: a retention purge, nothing else */
	char tool[40];
	char url[2048];
	json_t *arguments;
	struct evid_annotation annotation;
	char *snapshot_text;
	json_t *network_log;
	json_t *frames;    /* screencast frames, or NULL */
	json_t *artifacts; /* kept already (a download, an upload): named by the record */
};

struct act_keeper {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t drained;
	struct keeper_job *head; /* {lock} */
	struct keeper_job *tail; /* {lock} */
	pthread_cond_t room;     /* broadcast when a job leaves the queue */
	int busy;                /* {lock} a job is being written */
	int stopping;            /* {lock} */
	int paused;              /* {lock} tests: the thread takes no job */
	size_t queued_jobs;      /* {lock} jobs in head..tail */
	size_t queued_bytes;     /* {lock} their bytes */
	size_t max_jobs;         /* {lock} the ceiling */
	size_t max_bytes;        /* {lock} */
	int wait_ms;             /* {lock} longest wait for room */
	uint64_t next_ticket;    /* {lock} the last ticket handed out */
	uint64_t done_ticket;    /* {lock} the last job written */
	uint64_t failed_ticket;  /* {lock} the last job that failed, 0: none */
	struct keeper_error errors[KEEPER_MAX_ERRORS]; /* {lock} not yet reported, oldest first */
	size_t n_errors;                               /* {lock} */
	size_t dropped_errors;    /* {lock} beyond KEEPER_MAX_ERRORS since the last report */
	struct evid_store *store; /* borrowed */
	struct evid_audit *audit; /* borrowed; may be NULL */
	char tenant[65];
	char user[65];
	char token[65];         /* the credential's id, "" if none */
	char agent_session[65]; /* the agent session's id, "" if none; set before the thread */
	pid_t tid;              /* {lock} the thread's, once it runs */
	int background;         /* {lock} it runs at nice KEEPER_NICE */
};

static void job_free(struct keeper_job *j)
{
	json_decref(j->body);
	json_decref(j->arguments);
	json_decref(j->network_log);
	json_decref(j->frames);
	json_decref(j->artifacts);
	free(j->png);
	free(j->before_png);
	free(j->snapshot_text);
	free(j);
}

/* Bytes of the strings in j and a little per value: what a queued copy
 * of it holds, roughly. */
static size_t json_bytes(json_t *j)
{
	const char *key;
	json_t *v;
	size_t i;
	size_t n = 16;

	if (json_is_string(j))
		return n + json_string_length(j);
	if (json_is_object(j)) {
		json_object_foreach(j, key, v) n += strlen(key) + json_bytes(v);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) n += json_bytes(v);
	}
	return n;
}

/* What job j counts for against the ceiling. */
static size_t job_bytes(const struct keeper_job *j)
{
	return JOB_OVERHEAD_BYTES + j->png_len + j->before_len +
	       (j->snapshot_text ? strlen(j->snapshot_text) : 0) + json_bytes(j->body) +
	       json_bytes(j->arguments) + json_bytes(j->network_log) + json_bytes(j->frames);
}

/* Adds an error (job ticket, 0: none) to the list for the next answer;
 * beyond the list's bound it is counted and logged. Lock held. */
static void note_error_locked(struct act_keeper *k, uint64_t ticket, const char *message)
{
	struct keeper_error *e;

	if (k->n_errors >= KEEPER_MAX_ERRORS) {
		k->dropped_errors++;
		GB_LOGW("actions", "an evidence error beyond the %d kept for the next answer: %s",
		        KEEPER_MAX_ERRORS, message);
		return;
	}
	e = &k->errors[k->n_errors++];
	e->ticket = ticket;
	snprintf(e->message, sizeof(e->message), "%s", message);
}

/* Writes one job: the evidence first, then the audit record naming it.
 * Returns 0, or -1 when something of it could not be kept. */
static int keep_one(struct act_keeper *k, struct keeper_job *j)
{
	struct evid_audit_entry e = { 0 };
	json_t *artifacts = NULL;
	char err[512] = "";
	char aerr[512] = "";
	char msg[1200];
	int rc = 0;

	if (j->purge_days) {
		struct evid_purge_report rep;

		if (k->audit && evid_audit_purge(k->audit, k->tenant, j->purge_days, &rep, err,
		                                 sizeof(err)) < 0)
			GB_LOGW("actions", "the retention purge failed: %s", err);
		return 0;
	}
	if (j->png) {
		struct evid_meta meta = { .tenant = k->tenant,
			                  .session_id = j->session_id,
			                  .operation_id = j->operation_id,
			                  .tool = j->tool,
			                  .url = j->url,
			                  .arguments = j->arguments };
		struct evid_action_evidence ev = { .meta = &meta,
			                           .screenshot = j->png,
			                           .screenshot_len = j->png_len,
			                           .annotation = j->annotation,
			                           .snapshot_text = j->snapshot_text,
			                           .network_log = j->network_log };

		rc = evid_keep_action_evidence(k->store, &ev, &artifacts, err, sizeof(err));
		if (j->before_png) {
			struct evid_ref ref;
			char berr[512];

			meta.kind = "screenshot_before";
			meta.mime = "image/png";
			if (evid_store_put(k->store, &meta, j->before_png, j->before_len, &ref,
			                   berr, sizeof(berr)) == 0 &&
			    artifacts)
				json_array_append_new(
				    artifacts,
				    evid_artifact_json("screenshot_before", "image/png", &ref, 1));
		}
		if (j->frames && artifacts)
			act_screencast_keep(k->store, &meta, j->frames, artifacts, j->body);
	}
	if (k->audit) {
		e.tenant = k->tenant;
		e.kind = j->kind;
		e.actor.tenant = k->tenant;
		e.actor.user = k->user;
		e.actor.token = k->token[0] ? k->token : NULL;
		e.session_id = j->session_id[0] ? j->session_id : NULL;
		e.operation_id = j->operation_id[0] ? j->operation_id : NULL;
		if (k->agent_session[0] && !j->body)
			j->body = json_object();
		if (k->agent_session[0] && json_is_object(j->body) &&
		    !json_object_get(j->body, "agent_session"))
			json_object_set_new(j->body, "agent_session",
			                    json_string(k->agent_session));
		e.body = j->body;
		e.artifacts = artifacts ? artifacts : j->artifacts;
		e.secret_text = j->secret_text;
		if (evid_audit_append(k->audit, &e, NULL, aerr, sizeof(aerr)) < 0) {
			if (!err[0])
				snprintf(err, sizeof(err), "%s", aerr);
			rc = rc ? rc : -1;
		}
	}
	if (rc == -EVID_EBADPNG) {
		snprintf(msg, sizeof(msg),
		         "the screenshot of %s was not a valid PNG (%s); it was kept as invalid "
		         "evidence",
		         j->operation_id, err);
		pthread_mutex_lock(&k->lock);
		note_error_locked(k, j->ticket, msg);
		pthread_mutex_unlock(&k->lock);
	} else if (rc < 0) {
		GB_LOGW("actions", "evidence of %s could not be kept: %s", j->operation_id, err);
		snprintf(msg, sizeof(msg), "evidence of %s could not be kept: %s", j->operation_id,
		         err);
		pthread_mutex_lock(&k->lock);
		note_error_locked(k, j->ticket, msg);
		pthread_mutex_unlock(&k->lock);
	}
	json_decref(artifacts);
	return rc < 0 ? -1 : 0;
}

/* A session whose calls never wait for their records (act_keeper_
 * set_background) keeps its evidence off the critical path: its PNG work
 * (checking, the annotated copy) must not take the CPU the browser needs
 * for the next action, so this thread then runs at a lower priority (nice
 * KEEPER_NICE; the thread's own, Linux). It still gets its share when the
 * CPU is busy. A session whose calls wait for their records keeps the
 * process's priority: on a busy machine a low priority would only make
 * each of those waits longer. */
#define KEEPER_NICE 10

/* Lowers the keeper thread's priority; lock held, its tid known. */
static void lower_priority_locked(struct act_keeper *k)
{
	if (setpriority(PRIO_PROCESS, (id_t)k->tid, KEEPER_NICE) != 0)
		GB_LOGD("actions", "the evidence thread keeps its priority: %s", strerror(errno));
}

void act_keeper_set_background(struct act_keeper *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	if (!k->background && k->tid)
		lower_priority_locked(k);
	k->background = 1;
	pthread_mutex_unlock(&k->lock);
}

static void *keeper_main(void *arg)
{
	struct act_keeper *k = arg;
	struct keeper_job *j;
	uint64_t ticket;
	int failed;

	pthread_mutex_lock(&k->lock);
	k->tid = gettid();
	if (k->background)
		lower_priority_locked(k);
	for (;;) {
		while ((!k->head || k->paused) && !k->stopping)
			pthread_cond_wait(&k->cond, &k->lock);
		j = k->head;
		if (!j)
			break;
		k->head = j->next;
		if (!k->head)
			k->tail = NULL;
		k->queued_jobs--;
		k->queued_bytes -= j->bytes;
		pthread_cond_broadcast(&k->room);
		k->busy = 1;
		ticket = j->ticket;
		pthread_mutex_unlock(&k->lock);
		failed = keep_one(k, j) < 0; /* why: in k->errors */
		job_free(j);
		pthread_mutex_lock(&k->lock);
		k->busy = 0;
		k->done_ticket = ticket;
		if (failed)
			k->failed_ticket = ticket;
		pthread_cond_broadcast(&k->drained);
	}
	pthread_cond_broadcast(&k->drained);
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

int act_keeper_start(struct evid_store *store, struct evid_audit *audit, const char *tenant,
                     const char *user, const char *token, const char *agent_session,
                     struct act_keeper **out)
{
	struct act_keeper *k = calloc(1, sizeof(*k));

	*out = NULL;
	if (!k)
		return -1;
	k->store = store;
	k->audit = audit;
	snprintf(k->tenant, sizeof(k->tenant), "%s", tenant);
	snprintf(k->user, sizeof(k->user), "%s", user ? user : "");
	snprintf(k->token, sizeof(k->token), "%s", token ? token : "");
	snprintf(k->agent_session, sizeof(k->agent_session), "%s",
	         agent_session ? agent_session : "");
	k->max_jobs = KEEPER_MAX_JOBS;
	k->max_bytes = KEEPER_MAX_BYTES;
	k->wait_ms = KEEPER_WAIT_MS;
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->cond, NULL);
	pthread_cond_init(&k->drained, NULL);
	pthread_cond_init(&k->room, NULL);
	if (pthread_create(&k->thread, NULL, keeper_main, k) != 0) {
		free(k);
		return -1;
	}
	*out = k;
	return 0;
}

/* 1 when job j fits in the queue now. */
static int has_room_locked(const struct act_keeper *k, const struct keeper_job *j)
{
	return k->queued_jobs == 0 ||
	       (k->queued_jobs < k->max_jobs && k->queued_bytes + j->bytes <= k->max_bytes);
}

/* Queues a job, waiting (bounded) for room; takes ownership of
 * everything in it. Returns 0 with *ticket (may be NULL), or -1 with the
 * reason in err when the queue stayed full: the job is dropped. */
static int submit(struct act_keeper *k, struct keeper_job *j, uint64_t *ticket, char *err,
                  size_t errlen)
{
	struct timespec until;
	size_t jobs;
	size_t bytes;
	int rc = 0;

	j->bytes = job_bytes(j);
	clock_gettime(CLOCK_REALTIME, &until);
	pthread_mutex_lock(&k->lock);
	until.tv_sec += k->wait_ms / 1000;
	until.tv_nsec += (long)(k->wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	/* back-pressure: the worker waits while the disk catches up */
	while (!has_room_locked(k, j) && !k->stopping)
		if (pthread_cond_timedwait(&k->room, &k->lock, &until) == ETIMEDOUT)
			break;
	if (!has_room_locked(k, j)) {
		jobs = k->queued_jobs;
		bytes = k->queued_bytes;
		pthread_mutex_unlock(&k->lock);
		snprintf(err, errlen,
		         "the %s record of %s was not kept: the evidence writer is behind (%zu "
		         "records, %zu MiB waiting for the disk); check the disk of the data "
		         "dir, and wait for calls to finish before sending more",
		         j->kind, j->operation_id[0] ? j->operation_id : "the session", jobs,
		         bytes >> 20);
		GB_LOGW("actions", "%s", err);
		job_free(j);
		rc = -1;
		goto out;
	}
	j->ticket = ++k->next_ticket;
	if (ticket)
		*ticket = j->ticket;
	k->queued_jobs++;
	k->queued_bytes += j->bytes;
	if (k->tail)
		k->tail->next = j;
	else
		k->head = j;
	k->tail = j;
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->lock);
out:
	return rc;
}

void act_keeper_note_error(struct act_keeper *k, const char *why)
{
	pthread_mutex_lock(&k->lock);
	note_error_locked(k, 0, why);
	pthread_mutex_unlock(&k->lock);
}

/* Queues an audit record without evidence of its own; body and
 * artifacts (may be NULL) taken. */
static void queue_record(struct act_keeper *k, const char *kind, const char *session_id,
                         const char *operation_id, json_t *body, json_t *artifacts, int secret_text)
{
	struct keeper_job *j = k ? calloc(1, sizeof(*j)) : NULL;
	char err[512];

	if (!j) {
		json_decref(body);
		json_decref(artifacts);
		return;
	}
	snprintf(j->kind, sizeof(j->kind), "%s", kind);
	snprintf(j->session_id, sizeof(j->session_id), "%s", session_id ? session_id : "");
	snprintf(j->operation_id, sizeof(j->operation_id), "%s", operation_id ? operation_id : "");
	j->body = body;
	j->artifacts = artifacts;
	j->secret_text = secret_text;
	if (submit(k, j, NULL, err, sizeof(err)) < 0)
		act_keeper_note_error(k, err);
}

void act_keeper_record(struct act_keeper *k, const char *kind, const char *session_id,
                       const char *operation_id, json_t *body, int secret_text)
{
	queue_record(k, kind, session_id, operation_id, body, NULL, secret_text);
}

void act_keeper_record_artifacts(struct act_keeper *k, const char *kind, const char *session_id,
                                 const char *operation_id, json_t *body, json_t *artifacts)
{
	queue_record(k, kind, session_id, operation_id, body, artifacts, 0);
}

int act_keeper_record_action(struct act_keeper *k, const struct act_keeper_action *a,
                             uint64_t *ticket, char *err, size_t errlen)
{
	struct keeper_job *j = NULL;

	*ticket = 0;
	if (!k) {
		snprintf(err, errlen, "no evidence writer: the record of %s was not kept",
		         a->operation_id);
		goto drop;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		snprintf(err, errlen, "out of memory: the record of %s was not kept",
		         a->operation_id);
		goto drop;
	}
	snprintf(j->kind, sizeof(j->kind), "%s", EVID_AUDIT_TOOL_CALL);
	snprintf(j->session_id, sizeof(j->session_id), "%s", a->session_id ? a->session_id : "");
	snprintf(j->operation_id, sizeof(j->operation_id), "%s", a->operation_id);
	snprintf(j->tool, sizeof(j->tool), "%s", a->tool);
	snprintf(j->url, sizeof(j->url), "%s", a->url ? a->url : "");
	j->body = a->body;
	j->secret_text = a->secret_text;
	j->png = a->png;
	j->png_len = a->png_len;
	j->before_png = a->before_png;
	j->before_len = a->before_len;
	j->arguments = a->arguments;
	j->annotation = a->annotation;
	j->snapshot_text = a->snapshot_text ? strdup(a->snapshot_text) : NULL;
	j->network_log = a->network_log;
	j->frames = a->frames;
	return submit(k, j, ticket, err, errlen);
drop:
	json_decref(a->body);
	json_decref(a->arguments);
	json_decref(a->network_log);
	json_decref(a->frames);
	free(a->png);
	free(a->before_png);
	return -1;
}

int act_keeper_wait(struct act_keeper *k, uint64_t ticket, char *err, size_t errlen)
{
	int failed = 0;
	size_t i;

	if (!k || !ticket)
		return 0;
	pthread_mutex_lock(&k->lock);
	while (k->done_ticket < ticket)
		pthread_cond_wait(&k->drained, &k->lock);
	for (i = 0; i < k->n_errors && !failed; i++) {
		if (k->errors[i].ticket != ticket)
			continue;
		snprintf(err, errlen, "%s", k->errors[i].message);
		/* reported here, not again with the next call */
		memmove(&k->errors[i], &k->errors[i + 1],
		        (k->n_errors - i - 1) * sizeof(k->errors[0]));
		k->n_errors--;
		failed = 1;
	}
	if (!failed && k->failed_ticket == ticket) {
		/* its error was beyond the list's bound: counted there, and logged */
		snprintf(err, errlen,
		         "the record of this call could not be kept (the service's log says why)");
		if (k->dropped_errors)
			k->dropped_errors--;
		failed = 1;
	}
	if (failed && k->failed_ticket == ticket)
		k->failed_ticket = 0; /* said once */
	pthread_mutex_unlock(&k->lock);
	return failed;
}

#ifdef GB_UNITTEST_BUILD
void act_keeper_set_limits(struct act_keeper *k, size_t max_jobs, size_t max_bytes, int wait_ms)
{
	pthread_mutex_lock(&k->lock);
	k->max_jobs = max_jobs;
	k->max_bytes = max_bytes;
	k->wait_ms = wait_ms;
	pthread_cond_broadcast(&k->room);
	pthread_mutex_unlock(&k->lock);
}

void act_keeper_pause(struct act_keeper *k, int paused)
{
	pthread_mutex_lock(&k->lock);
	k->paused = paused;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
}
#endif

void act_keeper_purge(struct act_keeper *k, unsigned days)
{
	struct keeper_job *j = k ? calloc(1, sizeof(*j)) : NULL;

	char err[512];

	if (!j)
		return;
	j->purge_days = days;
	snprintf(j->kind, sizeof(j->kind), "%s", EVID_AUDIT_PURGE);
	if (submit(k, j, NULL, err, sizeof(err)) < 0)
		act_keeper_note_error(k, err);
}

void act_keeper_flush(struct act_keeper *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	while (k->head || k->busy)
		pthread_cond_wait(&k->drained, &k->lock);
	pthread_mutex_unlock(&k->lock);
}

size_t act_keeper_take_errors(struct act_keeper *k, json_t **errors, size_t *dropped)
{
	size_t i, n;

	*errors = NULL;
	*dropped = 0;
	if (!k)
		return 0;
	pthread_mutex_lock(&k->lock);
	n = k->n_errors;
	if (n || k->dropped_errors) {
		*errors = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(*errors, json_string(k->errors[i].message));
		*dropped = k->dropped_errors;
	}
	k->n_errors = 0;
	k->dropped_errors = 0;
	pthread_mutex_unlock(&k->lock);
	return n;
}

void act_keeper_stop(struct act_keeper *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	k->stopping = 1;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thread, NULL);
	pthread_mutex_destroy(&k->lock);
	pthread_cond_destroy(&k->cond);
	pthread_cond_destroy(&k->drained);
	pthread_cond_destroy(&k->room);
	free(k);
}
