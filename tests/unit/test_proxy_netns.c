/*
 * test_proxy_netns.c - the egress drill in a network namespace of its
 * own: 169.254.169.254/32 and 10.0.0.1/32 are added to that namespace's
 * loopback, with a counting server on each. Names overridden to those
 * addresses, and the addresses themselves in any spelling, are refused
 * by the proxy, and the servers see zero hits; the same server is
 * reached once the policy names its private address (so the refusals
 * are the policy's doing, not the network's).
 *
 * A second drill puts the "browser" side in yet another namespace with
 * nothing but loopback (policy_netns_create(), as sessions get), the proxy
 * listening there through policy_proxy_listen_in_netns(): the proxy is its
 * only way out.
 *
 * The process enters the new namespace first thing (unshare, then a
 * user namespace if plain unshare is not permitted) and checks that it
 * did before it configures anything; where neither is permitted, every
 * test is skipped. Nothing here reaches beyond the namespace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy/egress.h"
#include "test_proxy_server.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int in_netns; /* 1 once this process is in its own namespace, configured */
static char skip_reason[256];

/* Writes text to path; returns 0 or -1. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc = -1;

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) == (ssize_t)strlen(text))
		rc = 0;
	close(fd);
	return rc;
}

/* The inode of this thread's network namespace. */
static ino_t netns_inode(void)
{
	struct stat st;

	if (stat("/proc/thread-self/ns/net", &st) < 0)
		return 0;
	return st.st_ino;
}

/* Brings lo up in the calling thread's namespace. */
static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return rc;
}

/* Runs "ip" with args (NULL-terminated); returns its exit status. */
static int run_ip(const char *const *args)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execvp("ip", (char *const *)args);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Enters a new network namespace (through a user namespace when plain
 * unshare is refused), makes sure it is a new one, brings lo up and adds
 * the drill's addresses to it. Sets skip_reason on any failure. */
static void enter_netns(void)
{
	static const char *const add_meta[] = { "ip",  "addr", "add", "169.254.169.254/32",
		                                "dev", "lo",   NULL };
	static const char *const add_ten[] = {
		"ip", "addr", "add", "10.0.0.1/32", "dev", "lo", NULL
	};
	ino_t before = netns_inode();
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWNET) < 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
			snprintf(skip_reason, sizeof(skip_reason),
			         "unshare of a network namespace is not permitted here: %s",
			         strerror(errno));
			return;
		}
		write_file("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		write_file("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		write_file("/proc/self/gid_map", map);
	}
	if (before == 0 || netns_inode() == before) {
		snprintf(skip_reason, sizeof(skip_reason),
		         "could not tell that a new network "
		         "namespace was entered: not touching the network");
		return;
	}
	if (lo_up() < 0) {
		snprintf(skip_reason, sizeof(skip_reason),
		         "cannot bring lo up in the namespace: %s", strerror(errno));
		return;
	}
	if (run_ip(add_meta) != 0 || run_ip(add_ten) != 0) {
		snprintf(skip_reason, sizeof(skip_reason),
		         "cannot add addresses to lo with ip(8) "
		         "(iproute2) in the namespace");
		return;
	}
	in_netns = 1;
}

#define SKIP_UNLESS_NETNS()                                          \
	do {                                                         \
		if (!in_netns) {                                     \
			print_message("skipped: %s\n", skip_reason); \
			skip();                                      \
		}                                                    \
	} while (0)

/* Counts refusals. */
static void count_refusal(void *user, const struct policy_refusal *r)
{
	atomic_int *n = user;

	assert_string_equal(r->layer, "proxy");
	atomic_fetch_add(n, 1);
}

/* Starts a proxy for policy_json; listen_fd > 0 to use that socket. */
static struct policy_proxy *start_proxy(const char *policy_json, struct policy_egress **p,
                                        atomic_int *refusals, int listen_fd)
{
	struct policy_proxy_options o;
	struct policy_proxy *px = NULL;
	json_t *j = json_loads(policy_json, 0, NULL);
	char err[512] = "";

	assert_non_null(j);
	if (policy_egress_parse(j, p, err, sizeof(err)) != 0)
		fail_msg("policy: %s", err);
	json_decref(j);
	memset(&o, 0, sizeof(o));
	o.session_id = "drill";
	o.on_refusal = count_refusal;
	o.user = refusals;
	o.listen_fd = listen_fd;
	if (policy_proxy_start(*p, &o, &px, err, sizeof(err)) != 0)
		fail_msg("proxy: %s", err);
	return px;
}

/* Sends one request through the proxy at port and returns the response. */
static void via_proxy(int port, const char *req, char *resp, size_t cap)
{
	int fd = tc_connect(port);

	assert_true(fd >= 0);
	assert_int_equal(ts_send_str(fd, req), 0);
	tc_read_all(fd, resp, cap);
	close(fd);
}

/* Connects straight to addr:port, sends a GET, returns 1 on a 200. */
static int direct_get(const char *addr, int port)
{
	struct sockaddr_in in;
	char resp[2048];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ok;

	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, addr, &in.sin_addr);
	if (connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
		close(fd);
		return 0;
	}
	ts_timeout(fd, 5000);
	ts_send_str(fd, "GET /direct HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	tc_read_all(fd, resp, sizeof(resp));
	close(fd);
	ok = strstr(resp, " 200 ") != NULL;
	return ok;
}

static void test_overridden_names_to_metadata_and_private_are_refused(void **state)
{
	struct test_server meta;
	struct test_server ten;
	struct policy_egress *p = NULL;
	struct policy_proxy *px;
	atomic_int refusals = 0;
	char req[512];
	char resp[4096];
	const char *reqs[12];
	char bufs[12][256];
	int n = 0;
	int i;

	(void)state;
	SKIP_UNLESS_NETNS();
	assert_int_equal(ts_start(&meta, "169.254.169.254", 0, 0), 0);
	assert_int_equal(ts_start(&ten, "10.0.0.1", 0, 0), 0);
	/* the servers are there and reachable inside the namespace */
	assert_true(direct_get("169.254.169.254", meta.port));
	assert_true(direct_get("10.0.0.1", ten.port));
	atomic_store(&meta.hits, 0);
	atomic_store(&ten.hits, 0);

	px = start_proxy("{\"allow\": [\"*.test:*\", \"*:*\"],"
	                 " \"hosts\": {\"meta.test\": \"169.254.169.254\","
	                 " \"internal.test\": \"10.0.0.1\","
	                 " \"mixed.test\": [\"10.0.0.1\", \"169.254.169.254\"]}}",
	                 &p, &refusals, 0);
#define REQ(...)                                                 \
	do {                                                     \
		snprintf(bufs[n], sizeof(bufs[n]), __VA_ARGS__); \
		reqs[n] = bufs[n];                               \
		n++;                                             \
	} while (0)
	REQ("GET http://meta.test:%d/latest/meta-data/ HTTP/1.1\r\nHost: meta.test\r\n\r\n",
	    meta.port);
	REQ("CONNECT meta.test:%d HTTP/1.1\r\n\r\n", meta.port);
	REQ("GET http://169.254.169.254:%d/ HTTP/1.1\r\n\r\n", meta.port);
	REQ("GET http://0xa9fea9fe:%d/ HTTP/1.1\r\n\r\n", meta.port);
	REQ("GET http://[::ffff:169.254.169.254]:%d/ HTTP/1.1\r\n\r\n", meta.port);
	REQ("GET http://internal.test:%d/ HTTP/1.1\r\nHost: internal.test\r\n\r\n", ten.port);
	REQ("CONNECT internal.test:%d HTTP/1.1\r\n\r\n", ten.port);
	REQ("GET http://10.0.0.1:%d/ HTTP/1.1\r\n\r\n", ten.port);
	REQ("GET http://167772161:%d/ HTTP/1.1\r\n\r\n", ten.port);
	REQ("CONNECT [::ffff:a00:1]:%d HTTP/1.1\r\n\r\n", ten.port);
	REQ("GET http://mixed.test:%d/ HTTP/1.1\r\n\r\n", ten.port);
#undef REQ
	for (i = 0; i < n; i++) {
		via_proxy(policy_proxy_port(px), reqs[i], resp, sizeof(resp));
		if (!strstr(resp, "HTTP/1.1 403 Forbidden"))
			fail_msg("not refused: %s\n---\n%s", reqs[i], resp);
		if (!strstr(resp, "addr-metadata") && !strstr(resp, "addr-private"))
			fail_msg("refused by an unexpected rule: %s\n---\n%s", reqs[i], resp);
	}
	assert_int_equal(atomic_load(&refusals), n);
	assert_int_equal(atomic_load(&meta.hits), 0);
	assert_int_equal(atomic_load(&ten.hits), 0);
	policy_proxy_stop(px);
	policy_egress_free(p);

	/* control: once the policy names 10.0.0.1, the same request arrives */
	px = start_proxy("{\"allow\": [\"internal.test:*\"], \"allow_private\": [\"10.0.0.1:*\"],"
	                 " \"hosts\": {\"internal.test\": \"10.0.0.1\"}}",
	                 &p, &refusals, 0);
	snprintf(req, sizeof(req),
	         "GET http://internal.test:%d/ok HTTP/1.1\r\n"
	         "Connection: close\r\n\r\n",
	         ten.port);
	via_proxy(policy_proxy_port(px), req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_int_equal(atomic_load(&ten.hits), 1);
	assert_int_equal(atomic_load(&meta.hits), 0);
	policy_proxy_stop(px);
	policy_egress_free(p);
	ts_stop(&meta);
	ts_stop(&ten);
}

/* A namespace with nothing but loopback, made by a helper thread. */
struct browser_ns {
	int ns_fd;
};

struct ns_connect {
	int ns_fd;
	const char *addr;
	int port;
	int fd;
	int err;
};

/* Connects from inside ns_fd's namespace; the socket stays there. */
static void *connect_in_ns(void *arg)
{
	struct ns_connect *c = arg;
	struct sockaddr_in in;

	c->fd = -1;
	if (setns(c->ns_fd, CLONE_NEWNET) < 0) {
		c->err = errno;
		return NULL;
	}
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_port = htons((uint16_t)c->port);
	inet_pton(AF_INET, c->addr, &in.sin_addr);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(c->fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
		c->err = errno;
		close(c->fd);
		c->fd = -1;
	}
	return NULL;
}

static int ns_connect(int ns_fd, const char *addr, int port, int *err)
{
	struct ns_connect c = { ns_fd, addr, port, -1, 0 };
	pthread_t t;

	pthread_create(&t, NULL, connect_in_ns, &c);
	pthread_join(t, NULL);
	*err = c.err;
	if (c.fd >= 0)
		ts_timeout(c.fd, 5000);
	return c.fd;
}

static void test_browser_namespace_reaches_only_the_proxy(void **state)
{
	struct test_server ten;
	struct browser_ns b = { -1 };
	struct policy_egress *p = NULL;
	struct policy_proxy *px;
	atomic_int refusals = 0;
	char err[256] = "";
	char req[512];
	char resp[4096];
	int lfd = -1;
	int fd;
	int e = 0;

	(void)state;
	SKIP_UNLESS_NETNS();
	if (policy_netns_create(&b.ns_fd, err, sizeof(err)) < 0) {
		print_message("skipped: %s\n", err);
		skip();
	}
	{
		struct stat st;

		assert_int_equal(fstat(b.ns_fd, &st), 0);
		assert_true(st.st_ino != netns_inode()); /* another namespace; ours is untouched */
		assert_int_equal(policy_netns_available(NULL, 0), 1);
	}
	assert_int_equal(ts_start(&ten, "10.0.0.1", 0, 0), 0);
	/* from the browser's namespace, the server cannot be reached at all */
	fd = ns_connect(b.ns_fd, "10.0.0.1", ten.port, &e);
	assert_int_equal(fd, -1);

	assert_int_equal(
	    policy_proxy_listen_in_netns(b.ns_fd, "127.0.0.1", 0, &lfd, err, sizeof(err)), 0);
	px = start_proxy("{\"allow\": [\"internal.test:*\", \"meta.test:*\"],"
	                 " \"allow_private\": [\"10.0.0.1:*\"],"
	                 " \"hosts\": {\"internal.test\": \"10.0.0.1\","
	                 " \"meta.test\": \"169.254.169.254\"}}",
	                 &p, &refusals, lfd);
	/* ... but through the proxy it can, and only as the policy says */
	fd = ns_connect(b.ns_fd, "127.0.0.1", policy_proxy_port(px), &e);
	assert_true(fd >= 0);
	snprintf(req, sizeof(req),
	         "GET http://internal.test:%d/from-browser HTTP/1.1\r\n"
	         "Connection: close\r\n\r\n",
	         ten.port);
	ts_send_str(fd, req);
	tc_read_all(fd, resp, sizeof(resp));
	close(fd);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_int_equal(atomic_load(&ten.hits), 1);

	fd = ns_connect(b.ns_fd, "127.0.0.1", policy_proxy_port(px), &e);
	assert_true(fd >= 0);
	ts_send_str(fd, "GET http://meta.test/ HTTP/1.1\r\n\r\n");
	tc_read_all(fd, resp, sizeof(resp));
	close(fd);
	assert_non_null(strstr(resp, "addr-metadata"));
	assert_int_equal(atomic_load(&refusals), 1);

	/* the proxy's listening socket lives in the browser's namespace */
	fd = tc_connect(policy_proxy_port(px));
	if (fd >= 0)
		close(fd);
	assert_int_equal(fd, -1);

	policy_proxy_stop(px);
	policy_egress_free(p);
	ts_stop(&ten);
	close(b.ns_fd);
}

/* The threads of this process once they settle on want (a thread that
 * just finished its work may still be exiting): want, or what there is
 * after 2 s. */
static int threads_settled_on(int want)
{
	int i, n = count_dir("/proc/self/task");

	for (i = 0; i < 200 && n != want; i++) {
		usleep(10 * 1000);
		n = count_dir("/proc/self/task");
	}
	return n;
}

static void test_names_resolved_by_the_proxy(void **state)
{
	struct test_server lo;
	struct policy_egress *p = NULL;
	struct policy_proxy *px;
	atomic_int refusals = 0;
	char req[512];
	char resp[4096];
	int threads0;

	(void)state;
	SKIP_UNLESS_NETNS();
	/* DNS runs on the proxy's resolver thread; in this namespace no
	 * query can leave, and "localhost" comes from /etc/hosts */
	assert_int_equal(ts_start(&lo, "127.0.0.1", 0, 0), 0);
	threads0 = threads_quiet();
	px = start_proxy("{\"allow\": [\"localhost:*\", \"nowhere.invalid\"]}", &p, &refusals, 0);
	assert_int_equal(threads_settled_on(threads0 + 1), threads0 + 1);
	snprintf(req, sizeof(req), "GET http://localhost:%d/ HTTP/1.1\r\n\r\n", lo.port);
	via_proxy(policy_proxy_port(px), req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 403"));
	assert_non_null(strstr(resp, "addr-loopback"));
	assert_int_equal(threads_settled_on(threads0 + 2), threads0 + 2);
	via_proxy(policy_proxy_port(px), "GET http://nowhere.invalid/ HTTP/1.1\r\n\r\n", resp,
	          sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 502"));
	assert_non_null(strstr(resp, "cannot resolve nowhere.invalid"));
	assert_int_equal(atomic_load(&lo.hits), 0);
	policy_proxy_stop(px);
	policy_egress_free(p);
	assert_int_equal(threads_settled_on(threads0), threads0);

	/* named: the resolved address is used */
	px = start_proxy(
	    "{\"allow\": [\"localhost:*\"], \"allow_private\": [\"127.0.0.1:*\", \"[::1]:*\"]}", &p,
	    &refusals, 0);
	snprintf(req, sizeof(req),
	         "GET http://localhost:%d/named HTTP/1.1\r\nConnection: close\r\n\r\n", lo.port);
	via_proxy(policy_proxy_port(px), req, resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_int_equal(atomic_load(&lo.hits), 1);
	policy_proxy_stop(px);
	policy_egress_free(p);
	ts_stop(&lo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overridden_names_to_metadata_and_private_are_refused),
		cmocka_unit_test(test_browser_namespace_reaches_only_the_proxy),
		cmocka_unit_test(test_names_resolved_by_the_proxy),
	};

	enter_netns(); /* before any thread exists: unshare(CLONE_NEWUSER) needs that */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
