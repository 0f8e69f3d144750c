/*
 * admin.c - the admin socket (admin.h): a unix socket server on its own
 * thread through which a person lists, approves and denies approvals,
 * the request handler it shares with the CLI's direct mode, and the
 * client side.
 *
 * Design note. Who may decide is settled by the operating system: the
 * socket is 0600 inside DATA/run (0700), and each peer's uid, read with
 * SO_PEERCRED, must be 0 or the service's. The agent reaches the service
 * only through MCP, and the page only through the browser; neither has a
 * way to this socket unless it runs as the service's user on this
 * machine (run the service as its own user when agents have a shell).
 * Connections are served one at a time on the server's thread with
 * bounded lines and an idle timeout, so a stuck client delays the next
 * by at most that timeout and cannot grow memory.
 */
#include "policy/admin.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define IDLE_TIMEOUT_DEFAULT_MS 30000
#define LIST_LIMIT_MAX 1000

struct policy_admin {
	struct store *st;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int listen_fd;
	int wake[2]; /* written once by policy_admin_stop */
	pthread_t thread;
	int thread_started;
	int idle_timeout_ms;
	uid_t service_uid;
};

/* ---- the request handler ------------------------------------------------------ */

/* A response {"ok": false, "error": {"code", "message"}}. */
static json_t *error_response(const char *code, const char *message)
{
	return json_pack("{s:b, s:{s:s, s:s}}", "ok", 0, "error", "code", code, "message", message);
}

/* Maps a store error to a response. */
static json_t *store_error_response(int rc, const char *message)
{
	if (rc == -STORE_ENOTFOUND)
		return error_response("not_found", message);
	if (rc == -STORE_ESTATE)
		return error_response("conflict", message);
	if (rc == -STORE_EINVAL)
		return error_response("bad_request", message);
	return error_response("internal", message);
}

/* 1 when every key of req is one of allowed (NULL-terminated). */
static int only_keys(const json_t *req, const char *const *allowed, char *bad, size_t badlen)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)req, key, v)
	{
		int known = 0;

		(void)v;
		for (i = 0; allowed[i]; i++) {
			if (!strcmp(key, allowed[i]))
				known = 1;
		}
		if (!known) {
			snprintf(bad, badlen, "unknown member \"%.40s\"", key);
			return 0;
		}
	}
	return 1;
}

/* Reads an optional string member: NULL when absent; -1 when present but
 * not a string of at most max bytes without control characters. */
static int opt_string(const json_t *req, const char *key, size_t max, const char **out)
{
	json_t *v = json_object_get(req, key);
	const char *s;
	size_t i;

	*out = NULL;
	if (!v)
		return 0;
	s = json_string_value(v);
	if (!s || strlen(s) > max)
		return -1;
	for (i = 0; s[i]; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F)
			return -1;
	}
	*out = s;
	return 0;
}

struct list_ctx {
	json_t *arr;
};

static int list_cb(const struct store_approval *a, void *user)
{
	struct list_ctx *c = user;

	json_array_append_new(c->arr, store_approval_to_json(a));
	return 0;
}

static int history_cb(const struct store_approval_event *ev, void *user)
{
	json_t *arr = user;
	json_t *o = json_object();
	char when[40];

	store_time_iso8601(ev->time_ms, when, sizeof(when));
	json_object_set_new(o, "seq", json_integer(ev->seq));
	json_object_set_new(o, "time", json_string(when));
	json_object_set_new(o, "event", json_string(ev->event));
	if (ev->by && ev->by[0])
		json_object_set_new(o, "by", json_string(ev->by));
	if (ev->channel && ev->channel[0])
		json_object_set_new(o, "channel", json_string(ev->channel));
	if (ev->reason && ev->reason[0])
		json_object_set_new(o, "reason", json_string(ev->reason));
	if (ev->operation_id && ev->operation_id[0])
		json_object_set_new(o, "operation_id", json_string(ev->operation_id));
	json_array_append_new(arr, o);
	return 0;
}

static json_t *handle_list(struct store *st, const json_t *req)
{
	static const char *const keys[] = { "op", "tenant", "all", "limit", NULL };
	struct store_approval_query q = { 0 };
	struct list_ctx c = { 0 };
	json_t *all = json_object_get(req, "all");
	json_t *limit = json_object_get(req, "limit");
	char err[512];
	json_t *resp = NULL;
	int rc;

	if (!only_keys(req, keys, err, sizeof(err)))
		return error_response("bad_request", err);
	if (opt_string(req, "tenant", STORE_TENANT_MAX, &q.tenant) < 0 ||
	    (all && !json_is_boolean(all)) ||
	    (limit && (!json_is_integer(limit) || json_integer_value(limit) < 1 ||
	               json_integer_value(limit) > LIST_LIMIT_MAX)))
		return error_response("bad_request",
		                      "list takes tenant (string), all (boolean) and "
		                      "limit (1 to 1000)");
	q.pending_only = !json_is_true(all);
	q.limit = limit ? (size_t)json_integer_value(limit) : 100;
	c.arr = json_array();
	rc = store_approval_list(st, &q, list_cb, &c, err, sizeof(err));
	if (rc < 0)
		resp = store_error_response(rc, err);
	else
		resp = json_pack("{s:b, s:O}", "ok", 1, "approvals", c.arr);
	json_decref(c.arr);
	return resp;
}

static json_t *handle_show(struct store *st, const json_t *req)
{
	static const char *const keys[] = { "op", "id", NULL };
	struct store_approval a;
	const char *id = NULL;
	json_t *events = NULL;
	json_t *resp = NULL;
	char err[512];
	int rc;

	if (!only_keys(req, keys, err, sizeof(err)))
		return error_response("bad_request", err);
	if (opt_string(req, "id", STORE_ID_MAX, &id) < 0 || !id)
		return error_response("bad_request",
		                      "show needs the approval id: {\"op\": \"show\", "
		                      "\"id\": \"apr-...\"}");
	rc = store_approval_get(st, NULL, id, &a, err, sizeof(err));
	if (rc < 0)
		return store_error_response(rc, err);
	events = json_array();
	rc = store_approval_history(st, id, history_cb, events, err, sizeof(err));
	if (rc < 0)
		resp = store_error_response(rc, err);
	else
		resp = json_pack("{s:b, s:o, s:O}", "ok", 1, "approval", store_approval_to_json(&a),
		                 "events", events);
	json_decref(events);
	return resp;
}

static json_t *handle_decide(struct store *st, const json_t *req, int approve, const char *channel,
                             int64_t uid)
{
	static const char *const keys[] = { "op", "id", "by", "reason", NULL };
	struct store_decider who = { 0 };
	struct store_approval a;
	const char *id = NULL;
	char by_uid[32];
	char err[768];
	int rc;

	if (!only_keys(req, keys, err, sizeof(err)))
		return error_response("bad_request", err);
	if (opt_string(req, "id", STORE_ID_MAX, &id) < 0 || !id)
		return error_response("bad_request", "approve and deny need the approval id");
	if (opt_string(req, "by", STORE_BY_MAX, &who.by) < 0 ||
	    opt_string(req, "reason", STORE_REASON_MAX, &who.reason) < 0)
		return error_response(
		    "bad_request",
		    "by must be a name of at most 128 bytes and "
		    "reason a text of at most 512 bytes, without control characters");
	if (!who.by || !who.by[0]) {
		snprintf(by_uid, sizeof(by_uid), "uid %lld", (long long)uid);
		who.by = by_uid;
	}
	who.channel = channel;
	who.uid = uid;
	rc = store_approval_decide(st, NULL, id, approve, &who, &a, err, sizeof(err));
	if (rc < 0)
		return store_error_response(rc, err);
	GB_LOGI("policy", "approval %s %s by %s via %s (uid %lld)", a.id,
	        approve ? "approved" : "denied", who.by, channel, (long long)uid);
	return json_pack("{s:b, s:o}", "ok", 1, "approval", store_approval_to_json(&a));
}

json_t *policy_admin_handle(struct store *st, const json_t *request, const char *channel,
                            int64_t uid)
{
	const char *op = json_string_value(json_object_get(request, "op"));

	if (!json_is_object(request) || !op)
		return error_response("bad_request",
		                      "a request is a JSON object with \"op\": one of "
		                      "ping, list, show, approve, deny");
	if (!strcmp(op, "ping"))
		return json_pack("{s:b, s:s, s:s}", "ok", 1, "service", "glassbox", "version",
		                 GLASSBOX_VERSION);
	if (!strcmp(op, "list"))
		return handle_list(st, request);
	if (!strcmp(op, "show"))
		return handle_show(st, request);
	if (!strcmp(op, "approve"))
		return handle_decide(st, request, 1, channel, uid);
	if (!strcmp(op, "deny"))
		return handle_decide(st, request, 0, channel, uid);
	return error_response("bad_request", "unknown op: use ping, list, show, approve or deny");
}

/* ---- socket I/O ------------------------------------------------------------------- */

/* Writes all of buf to fd (non-blocking) within timeout_ms. */
static int write_all(int fd, const char *buf, size_t len, int timeout_ms)
{
	size_t off = 0;

	while (off < len) {
		struct pollfd p = { fd, POLLOUT, 0 };
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

/* Sends one response line. */
static int send_json(int fd, const json_t *resp, int timeout_ms)
{
	char *text = json_dumps(resp, JSON_COMPACT);
	int rc;

	if (!text)
		return -1;
	rc = write_all(fd, text, strlen(text), timeout_ms);
	if (rc == 0)
		rc = write_all(fd, "\n", 1, timeout_ms);
	free(text);
	return rc;
}

/* Handles one complete line; returns -1 when the connection must end.
 * forbidden: the peer may not use the socket; it is told so and the
 * connection ends (answering its request rather than hanging up on it
 * lets it read why). */
static int serve_line(struct policy_admin *a, int fd, const char *line, size_t len,
                      const struct ucred *peer, int forbidden)
{
	json_error_t jerr;
	json_t *req = NULL;
	json_t *resp;
	char msg[160];
	int rc;

	if (forbidden) {
		snprintf(msg, sizeof(msg),
		         "only root or the service's user (uid %u) may use the "
		         "admin socket",
		         (unsigned)a->service_uid);
		resp = error_response("forbidden", msg);
	} else {
		req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!req)
			resp =
			    error_response("bad_request", "the request is not JSON: send one JSON "
			                                  "object per line");
		else
			resp = policy_admin_handle(a->st, req, "admin-socket", (int64_t)peer->uid);
	}
	json_decref(req);
	if (!resp)
		return -1;
	rc = send_json(fd, resp, a->idle_timeout_ms);
	json_decref(resp);
	return forbidden ? -1 : rc;
}

/* Serves one connection until EOF, an error, the idle timeout or stop. */
static void serve_conn(struct policy_admin *a, int fd)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char *buf = NULL;
	size_t len = 0;
	json_t *resp = NULL;
	int forbidden = 0;
	int timeout_ms = a->idle_timeout_ms;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || clen != sizeof(cred)) {
		GB_LOGW("policy", "admin socket: cannot read the peer's credentials (%s): refused",
		        strerror(errno));
		goto out;
	}
	if (cred.uid != 0 && cred.uid != a->service_uid) {
		GB_LOGW("policy", "admin socket: refused a connection from uid %u (pid %d)",
		        (unsigned)cred.uid, (int)cred.pid);
		forbidden = 1;
		timeout_ms = 1000;
	}
	buf = malloc(POLICY_ADMIN_LINE_MAX + 1);
	if (!buf)
		goto out;
	for (;;) {
		struct pollfd p[2] = { { fd, POLLIN, 0 }, { a->wake[0], POLLIN, 0 } };
		char *nl;
		ssize_t n;

		nl = memchr(buf, '\n', len);
		if (nl) {
			size_t line_len = (size_t)(nl - buf);

			if ((line_len > 0 || forbidden) &&
			    serve_line(a, fd, buf, line_len, &cred, forbidden) < 0)
				goto out;
			memmove(buf, nl + 1, len - line_len - 1);
			len -= line_len + 1;
			continue;
		}
		if (len >= POLICY_ADMIN_LINE_MAX) {
			resp =
			    error_response("bad_request", "request line too long: at most 256 KiB");
			if (resp)
				send_json(fd, resp, 1000);
			goto out;
		}
		if (poll(p, 2, timeout_ms) <= 0 || p[1].revents)
			goto out;
		n = recv(fd, buf + len, POLICY_ADMIN_LINE_MAX - len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			goto out;
		len += (size_t)n;
	}
out:
	json_decref(resp);
	free(buf);
}

static void *serve_thread(void *arg)
{
	struct policy_admin *a = arg;

	for (;;) {
		struct pollfd p[2] = { { a->listen_fd, POLLIN, 0 }, { a->wake[0], POLLIN, 0 } };
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			GB_LOGE("policy",
			        "admin socket: poll failed: %s; approvals can no longer be "
			        "decided through %s",
			        strerror(errno), a->path);
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		serve_conn(a, fd);
		close(fd);
	}
	return NULL;
}

/* ---- start and stop -------------------------------------------------------------- */

/* Fills a unix address for path. Returns -1 when it does not fit. */
static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -1;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* Removes a stale socket at path; refuses when a live server of another
 * process answers or the path is not a socket. *ours: 1 when this
 * process serves it already (then it stays). */
static int clear_stale(const char *path, int *ours, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	struct ucred peer;
	socklen_t peer_len = sizeof(peer);
	struct stat sb;
	int fd;
	int rc = 0;

	*ours = 0;
	if (lstat(path, &sb) != 0)
		return 0;
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket: move it aside", path);
		return -POLICY_EINVAL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || unix_addr(path, &sa) < 0) {
		snprintf(err, errlen, "cannot check %s: %s", path, strerror(errno));
		rc = -POLICY_ESYS;
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		/* the listener's credentials are those of the process that
		 * called listen(): this one, when another of its sessions did */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0 &&
		    peer.pid == getpid()) {
			*ours = 1;
			goto out;
		}
		snprintf(err, errlen,
		         "another glassbox service is serving approvals on %s: stop it, "
		         "or use another data dir",
		         path);
		rc = -POLICY_EINVAL;
		goto out;
	}
	unlink(path);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int policy_admin_start(struct store *st, const struct policy_admin_options *o,
                       struct policy_admin **out, char *err, size_t errlen)
{
	struct policy_admin *a = NULL;
	struct sockaddr_un sa;
	char run_dir[4096];
	int ours = 0;
	int rc = 0;
	int n;

	*out = NULL;
	if (!st || !o || !o->data_dir) {
		snprintf(err, errlen, "the admin socket needs the store and the data dir");
		rc = -POLICY_EINVAL;
		goto out;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory starting the admin socket");
		rc = -POLICY_ENOMEM;
		goto out;
	}
	a->st = st;
	a->listen_fd = -1;
	a->wake[0] = a->wake[1] = -1;
	a->service_uid = geteuid();
	a->idle_timeout_ms = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : IDLE_TIMEOUT_DEFAULT_MS;
	n = snprintf(run_dir, sizeof(run_dir), "%s/run", o->data_dir);
	if (n < 0 || (size_t)n >= sizeof(run_dir) ||
	    (mkdir(run_dir, 0700) != 0 && errno != EEXIST)) {
		snprintf(err, errlen,
		         "cannot create %.300s: %s; make the data dir writable by this "
		         "user",
		         run_dir,
		         n < 0 || (size_t)n >= sizeof(run_dir) ? "path too long" : strerror(errno));
		rc = -POLICY_ESYS;
		goto out;
	}
	if (o->socket_path)
		n = snprintf(a->path, sizeof(a->path), "%s", o->socket_path);
	else
		n = snprintf(a->path, sizeof(a->path), "%s/admin.sock", run_dir);
	if (n < 0 || (size_t)n >= sizeof(a->path)) {
		snprintf(err, errlen,
		         "the admin socket path under %.300s is longer than a unix socket "
		         "allows (%zu bytes): use a shorter data dir path",
		         run_dir, sizeof(a->path) - 1);
		rc = -POLICY_EINVAL;
		goto out;
	}
	rc = clear_stale(a->path, &ours, err, errlen);
	if (rc < 0)
		goto out;
	if (ours) {
		GB_LOGD("policy", "%s is served by another session of this process", a->path);
		goto out; /* *out stays NULL; a is freed */
	}
	a->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unix_addr(a->path, &sa);
	/* the run dir is 0700, so nobody else can reach the socket between
	 * bind and chmod */
	if (a->listen_fd < 0 || bind(a->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(a->path, 0600) != 0 || listen(a->listen_fd, 16) != 0 ||
	    pipe2(a->wake, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot serve the admin socket %s: %s", a->path,
		         strerror(errno));
		rc = -POLICY_ESYS;
		goto out;
	}
	if (pthread_create(&a->thread, NULL, serve_thread, a) != 0) {
		snprintf(err, errlen, "cannot start the admin socket's thread");
		rc = -POLICY_ESYS;
		goto out;
	}
	a->thread_started = 1;
	GB_LOGI("policy", "approvals are decided through %s (glassbox approvals ...)", a->path);
	*out = a;
	a = NULL;
out:
	policy_admin_stop(a);
	return rc;
}

void policy_admin_stop(struct policy_admin *a)
{
	if (!a)
		return;
	if (a->thread_started) {
		ssize_t n = write(a->wake[1], "x", 1);

		(void)n;
		pthread_join(a->thread, NULL);
	}
	if (a->listen_fd >= 0) {
		close(a->listen_fd);
		unlink(a->path);
	}
	if (a->wake[0] >= 0)
		close(a->wake[0]);
	if (a->wake[1] >= 0)
		close(a->wake[1]);
	free(a);
}

const char *policy_admin_socket_path(const struct policy_admin *a)
{
	return a ? a->path : "";
}

/* ---- the client ------------------------------------------------------------------ */

int policy_admin_request(const char *path, const json_t *request, int timeout_ms, json_t **response,
                         char *err, size_t errlen)
{
	struct sockaddr_un sa;
	json_error_t jerr;
	char *text = NULL;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1;
	int rc = 0;

	*response = NULL;
	if (!path || unix_addr(path, &sa) < 0) {
		snprintf(err, errlen, "the admin socket path is missing or too long");
		rc = -POLICY_EINVAL;
		goto out;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create a socket: %s", strerror(errno));
		rc = -POLICY_ESYS;
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = (errno == ENOENT || errno == ECONNREFUSED) ? -POLICY_EREFUSED : -POLICY_ESYS;
		snprintf(err, errlen, "cannot reach the glassbox service at %s: %s%s", path,
		         strerror(errno),
		         errno == EACCES ? "; run this as root or as the service's "
		                           "user"
		                         : "");
		goto out;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
		snprintf(err, errlen, "cannot configure the socket: %s", strerror(errno));
		rc = -POLICY_ESYS;
		goto out;
	}
	text = json_dumps(request, JSON_COMPACT);
	buf = malloc(POLICY_ADMIN_LINE_MAX + 1);
	if (!text || !buf) {
		snprintf(err, errlen, "out of memory");
		rc = -POLICY_ENOMEM;
		goto out;
	}
	/* a failed send is not the end: the server may have answered why it
	 * hung up (a refused peer), so read all the same */
	if (write_all(fd, text, strlen(text), timeout_ms) == 0)
		write_all(fd, "\n", 1, timeout_ms);
	while (!memchr(buf, '\n', len)) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (len >= POLICY_ADMIN_LINE_MAX) {
			snprintf(err, errlen, "the service's answer is longer than %u bytes",
			         POLICY_ADMIN_LINE_MAX);
			rc = -POLICY_ESYS;
			goto out;
		}
		if (poll(&p, 1, timeout_ms) <= 0) {
			snprintf(err, errlen,
			         "the glassbox service at %s did not answer within %d ms", path,
			         timeout_ms);
			rc = -POLICY_ESYS;
			goto out;
		}
		n = recv(fd, buf + len, POLICY_ADMIN_LINE_MAX - len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			snprintf(err, errlen,
			         "the glassbox service at %s closed the connection without "
			         "answering",
			         path);
			rc = -POLICY_ESYS;
			goto out;
		}
		len += (size_t)n;
	}
	*response = json_loadb(buf, (size_t)((char *)memchr(buf, '\n', len) - buf), 0, &jerr);
	if (!json_is_object(*response)) {
		json_decref(*response);
		*response = NULL;
		snprintf(err, errlen,
		         "the glassbox service at %s answered something that is not a "
		         "JSON object",
		         path);
		rc = -POLICY_ESYS;
	}
out:
	if (fd >= 0)
		close(fd);
	free(text);
	free(buf);
	return rc;
}
