/*
 * test_proxy_server.h - a small counting upstream for the egress proxy
 * tests: HTTP/1.1 (one response per request, WebSocket-style 101 on
 * /ws, then echo) or a raw TCP echo, on its own threads, on a local
 * address. Every request or echo connection is counted, so a test can
 * assert that a refused request never reached it. Plus client helpers.
 * Included by test_proxy.c and test_proxy_netns.c only.
 */
#ifndef GB_TEST_PROXY_SERVER_H
#define GB_TEST_PROXY_SERVER_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define TS_MAX_HANDLERS 64

struct test_server {
	int lfd;
	int port;
	int echo; /* raw TCP echo instead of HTTP */
	int stop[2];
	pthread_t thread;
	atomic_int hits;
	pthread_mutex_t lock;
	char last_head[8192]; /* {lock} the last request head seen */
	pthread_t handlers[TS_MAX_HANDLERS];
	int nhandlers; /* accept thread only, then the stopper */
};

struct ts_conn {
	struct test_server *s;
	int fd;
};

/* Writes all of buf to fd; returns 0 or -1. */
static inline int ts_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static inline int ts_send_str(int fd, const char *s)
{
	return ts_send_all(fd, s, strlen(s));
}

/* Sets a receive timeout on fd. */
static inline void ts_timeout(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Echoes bytes until EOF. */
static inline void ts_echo(int fd, const char *pending, size_t plen)
{
	char buf[16384];
	ssize_t n;

	if (plen && ts_send_all(fd, pending, plen) < 0)
		return;
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (ts_send_all(fd, buf, (size_t)n) < 0)
			return;
}

/* Serves HTTP requests on one connection until it closes. */
static inline void ts_http(struct test_server *s, int fd)
{
	char buf[65536];
	size_t len = 0;

	for (;;) {
		char *end;
		size_t head_len;
		size_t body_len = 0;
		const char *cl;
		char path[1024] = "";
		char resp[2048];
		char body[1400];
		ssize_t n;
		int close_after;

		while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
			if (len == sizeof(buf))
				return;
			n = recv(fd, buf + len, sizeof(buf) - len, 0);
			if (n <= 0)
				return;
			len += (size_t)n;
		}
		head_len = (size_t)(end - buf) + 4;
		atomic_fetch_add(&s->hits, 1);
		pthread_mutex_lock(&s->lock);
		snprintf(s->last_head, sizeof(s->last_head), "%.*s", (int)head_len, buf);
		pthread_mutex_unlock(&s->lock);
		sscanf(buf, "%*s %1023s", path);
		cl = strcasestr(buf, "\r\ncontent-length:");
		if (cl && cl < end)
			body_len = strtoul(cl + 17, NULL, 10);
		while (len < head_len + body_len && len < sizeof(buf)) {
			n = recv(fd, buf + len, sizeof(buf) - len, 0);
			if (n <= 0)
				return;
			len += (size_t)n;
		}
		if (!strcmp(path, "/ws")) {
			ts_send_str(fd, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			                "Connection: Upgrade\r\n\r\n");
			ts_echo(fd, buf + head_len + body_len, len - head_len - body_len);
			return;
		}
		close_after = strcasestr(buf, "\r\nconnection: close") &&
		              strcasestr(buf, "\r\nconnection: close") < end;
		snprintf(body, sizeof(body), "hello from upstream: %s (body %zu bytes)", path,
		         body_len);
		snprintf(resp, sizeof(resp),
		         "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
		         "Content-Length: %zu\r\nConnection: %s\r\nX-Upstream: yes\r\n\r\n%s",
		         strlen(body), close_after ? "close" : "keep-alive", body);
		if (ts_send_str(fd, resp) < 0 || close_after)
			return;
		memmove(buf, buf + head_len + body_len, len - head_len - body_len);
		len -= head_len + body_len;
	}
}

static inline void *ts_conn_main(void *arg)
{
	struct ts_conn *c = arg;

	ts_timeout(c->fd, 10000);
	if (c->s->echo) {
		atomic_fetch_add(&c->s->hits, 1);
		ts_echo(c->fd, NULL, 0);
	} else {
		ts_http(c->s, c->fd);
	}
	close(c->fd);
	free(c);
	return NULL;
}

static inline void *ts_accept_main(void *arg)
{
	struct test_server *s = arg;

	for (;;) {
		struct pollfd p[2] = { { s->lfd, POLLIN, 0 }, { s->stop[0], POLLIN, 0 } };
		struct ts_conn *c;
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		c = calloc(1, sizeof(*c));
		c->s = s;
		c->fd = fd;
		if (s->nhandlers == TS_MAX_HANDLERS ||
		    pthread_create(&s->handlers[s->nhandlers], NULL, ts_conn_main, c) != 0) {
			close(fd);
			free(c);
			continue;
		}
		s->nhandlers++;
	}
	return NULL;
}

/* Starts a server on addr (an IPv4 or IPv6 literal), port 0 = any. */
static inline int ts_start(struct test_server *s, const char *addr, int port, int echo)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;

	memset(s, 0, sizeof(*s));
	memset(&ss, 0, sizeof(ss));
	s->echo = echo;
	pthread_mutex_init(&s->lock, NULL);
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		len = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &in->sin_addr);
		len = sizeof(*in);
	}
	s->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		return -1;
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, (struct sockaddr *)&ss, len) < 0 || listen(s->lfd, 64) < 0) {
		close(s->lfd);
		return -1;
	}
	len = sizeof(ss);
	getsockname(s->lfd, (struct sockaddr *)&ss, &len);
	s->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
	                                        : ((struct sockaddr_in6 *)&ss)->sin6_port);
	if (pipe(s->stop) < 0)
		return -1;
	return pthread_create(&s->thread, NULL, ts_accept_main, s) == 0 ? 0 : -1;
}

/* Stops the server and joins every thread (connections must be closed
 * by their clients first, or time out). */
static inline void ts_stop(struct test_server *s)
{
	int i;

	if (write(s->stop[1], "x", 1) < 0)
		return;
	pthread_join(s->thread, NULL);
	for (i = 0; i < s->nhandlers; i++)
		pthread_join(s->handlers[i], NULL);
	close(s->lfd);
	close(s->stop[0]);
	close(s->stop[1]);
	pthread_mutex_destroy(&s->lock);
}

/* ---- client side ------------------------------------------------------------- */

/* Connects to 127.0.0.1:port (blocking, 5 s receive timeout). */
static inline int tc_connect(int port)
{
	struct sockaddr_in in;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_port = htons((uint16_t)port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ts_timeout(fd, 5000);
	return fd;
}

/* Reads until EOF, timeout or a full buffer; returns the length
 * (NUL-terminated). */
static inline size_t tc_read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < cap && (n = recv(fd, buf + len, cap - 1 - len, 0)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return len;
}

/* Reads one response with a Content-Length body (or a head without one);
 * returns its length (NUL-terminated), 0 on EOF/timeout before it. */
static inline size_t tc_read_response(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	for (;;) {
		char *end = memmem(buf, len, "\r\n\r\n", 4);
		ssize_t n;

		if (end) {
			const char *cl = strcasestr(buf, "\r\ncontent-length:");
			size_t want = (size_t)(end - buf) + 4;

			buf[len] = '\0';
			if (cl && cl < end)
				want += strtoul(cl + 17, NULL, 10);
			if (len >= want) {
				buf[want] = '\0';
				return want;
			}
		}
		if (len + 1 >= cap)
			return 0;
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n <= 0)
			return 0;
		len += (size_t)n;
		buf[len] = '\0';
	}
}

/* Reads exactly len bytes; returns 0 or -1. */
static inline int tc_read_exact(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Open fds and threads of this process. */
static inline int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - (!strcmp(path, "/proc/self/fd") ? 1 : 0); /* the DIR's own fd */
}

/* The threads of this process once no thread is still exiting: the
 * count that stays the same over 100 ms (a joined thread can linger in
 * /proc/self/task for a moment after pthread_join returns), or the last
 * count after 2 s. */
static inline int threads_quiet(void)
{
	int i, same = 0, n = count_dir("/proc/self/task");

	for (i = 0; i < 200 && same < 10; i++) {
		int m;

		usleep(10 * 1000);
		m = count_dir("/proc/self/task");
		same = m == n ? same + 1 : 0;
		n = m;
	}
	return n;
}

#endif
