/*
 * netns.c - a session's browser in its own network namespace (DESIGN.md,
 * security layer 4; the namespace itself is made by policy/netns.c).
 *
 * Two things must happen inside the namespace: starting Chromium (a child
 * inherits the network namespace of the thread that spawns it) and
 * opening the CDP connection to its DevTools port (a socket belongs to
 * the namespace of the thread that creates it, for its whole life). Both
 * run on a short-lived thread that enters the namespace with setns(),
 * which moves that thread alone, and then ends: the session's own thread
 * never changes namespace, so nothing it does afterwards can land there
 * by mistake, and no "setns back" can fail half-way. The CDP connection's
 * libwebsockets context is made on that thread and handed to the
 * session's thread when it ends (one thread at a time, as with the pool).
 */
#include "sessions/sessions-private.h"

#include "cdp/cdp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>

struct in_netns {
	int netns_fd;
	int (*fn)(void *arg);
	void *arg;
	int entered_errno; /* 0 once inside; else why setns failed */
	int rc;
};

/* Thread body: enters the namespace, runs the job, ends (its namespace
 * membership goes with it). */
static void *in_netns_main(void *p)
{
	struct in_netns *in = p;

	if (setns(in->netns_fd, CLONE_NEWNET) < 0) {
		in->entered_errno = errno;
		return NULL;
	}
	in->rc = in->fn(in->arg);
	return NULL;
}

/* Runs fn(arg) on a thread inside netns_fd (borrowed) and waits for it.
 * Returns fn's result, or -1 with *why an errno when the thread could not
 * start or enter the namespace. */
static int run_in_netns(int netns_fd, int (*fn)(void *), void *arg, int *why)
{
	struct in_netns in = { .netns_fd = netns_fd, .fn = fn, .arg = arg, .rc = -1 };
	pthread_t t;
	int rc;

	*why = 0;
	rc = pthread_create(&t, NULL, in_netns_main, &in);
	if (rc != 0) {
		*why = rc;
		return -1;
	}
	pthread_join(t, NULL);
	if (in.entered_errno) {
		*why = in.entered_errno;
		return -1;
	}
	return in.rc;
}

struct spawn_job {
	pid_t *pid;
	const char *const *args;
	char *const *envp;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
};

/* posix_spawn() from the thread inside the namespace. */
static int spawn_job_run(void *p)
{
	struct spawn_job *j = p;

	return posix_spawn(j->pid, j->args[0], j->fa, j->attr, (char *const *)j->args, j->envp);
}

int sess_spawn_in_netns(int netns_fd, pid_t *pid, const char *const *args, char *const *envp,
                        const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr)
{
	struct spawn_job j = { .pid = pid, .args = args, .envp = envp, .fa = fa, .attr = attr };
	int why;
	int rc = run_in_netns(netns_fd, spawn_job_run, &j, &why);

	return why ? why : rc;
}

struct connect_job {
	const char *url;
	const struct cdp_options *opts;
	struct cdp_conn **out;
	struct cdp_error *err;
};

/* cdp_connect() from the thread inside the namespace: its socket stays there. */
static int connect_job_run(void *p)
{
	struct connect_job *j = p;

	return cdp_connect(j->url, j->opts, j->out, j->err);
}

int sess_cdp_connect_in_netns(int netns_fd, const char *ws_url, const struct cdp_options *opts,
                              struct cdp_conn **out, struct cdp_error *err)
{
	struct connect_job j = { .url = ws_url, .opts = opts, .out = out, .err = err };
	int why;
	int rc = run_in_netns(netns_fd, connect_job_run, &j, &why);

	if (why) {
		*out = NULL;
		err->code = 0;
		snprintf(err->message, sizeof(err->message),
		         "cannot enter the browser's network namespace: %s", strerror(why));
		rc = -CDP_ECONNECT;
	}
	return rc;
}

struct socket_job {
	int port;
	int fd;
	int err;
};

/* socket() and connect() from the thread inside the namespace. */
static int socket_job_run(void *p)
{
	struct socket_job *j = p;
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)j->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	j->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (j->fd < 0) {
		j->err = errno;
		return -1;
	}
	if (connect(j->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		j->err = errno;
		close(j->fd);
		j->fd = -1;
		return -1;
	}
	return 0;
}

int sess_devtools_socket(int netns_fd, int port, int *fd_out, char *err, size_t errlen)
{
	struct socket_job j = { .port = port, .fd = -1 };
	int why = 0;
	int rc;

	*fd_out = -1;
	if (port <= 0 || port > 65535) {
		snprintf(err, errlen, "the browser's DevTools port is not known");
		return -1;
	}
	rc = netns_fd > 0 ? run_in_netns(netns_fd, socket_job_run, &j, &why) : socket_job_run(&j);
	if (why) {
		snprintf(err, errlen, "cannot enter the browser's network namespace: %s",
		         strerror(why));
		return -1;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot connect to the browser's DevTools port %d: %s", port,
		         strerror(j.err));
		return -1;
	}
	*fd_out = j.fd;
	return 0;
}
