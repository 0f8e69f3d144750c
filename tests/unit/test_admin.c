/*
 * test_admin.c - the admin socket and `glassbox approvals` (policy/admin.h):
 * the socket's permissions and peer check, the protocol, and list /
 * show / approve / deny round trips through the CLI function, with and
 * without a running service.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"
#include "policy/admin.h"
#include "store/store.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define FP_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

struct fixture {
	char dir[64];
	char sock[128];
	struct store *st;
	struct policy_admin *admin;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct policy_admin_options o = { 0 };
	char err[512] = "";

	if (store_fixture_tmpdir("admin", fx->dir, sizeof(fx->dir)) < 0)
		return -1;
	if (store_open(fx->dir, &fx->st, err, sizeof(err)) != 0)
		fail_msg("store_open: %s", err);
	o.data_dir = fx->dir;
	o.idle_timeout_ms = 2000;
	if (policy_admin_start(fx->st, &o, &fx->admin, err, sizeof(err)) != 0)
		fail_msg("policy_admin_start: %s", err);
	snprintf(fx->sock, sizeof(fx->sock), "%s/run/admin.sock", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	policy_admin_stop(fx->admin);
	store_close(fx->st);
	store_fixture_tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

static struct store_approval create(struct store *st, const char *summary)
{
	struct store_approval_request req = {
		.tenant = "acme",
		.fingerprint = FP_A,
		.summary = summary,
		.session = "s-1",
		.operation_id = "op-1",
		.tool = "browser_click",
		.rule = "destructive-click",
	};
	struct store_approval a;
	char err[512] = "";

	if (store_approval_create(st, &req, &a, err, sizeof(err)) != 0)
		fail_msg("store_approval_create: %s", err);
	return a;
}

/* Runs `glassbox approvals ARGS...` with stdout and stderr captured into
 * out (NUL-terminated). Returns the exit status. */
static int run_cli(const char *data_dir, char *out, size_t outlen, ...)
{
	char *argv[16];
	int argc = 0;
	char path[] = "/tmp/gb-admin-out-XXXXXX";
	int fd = mkstemp(path);
	int saved_out = dup(1);
	int saved_err = dup(2);
	const char *a;
	va_list ap;
	ssize_t n;
	int status;

	argv[argc++] = (char *)"approvals";
	va_start(ap, outlen);
	while ((a = va_arg(ap, const char *)) != NULL && argc < 15)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	assert_true(fd >= 0);
	fflush(stdout);
	fflush(stderr);
	dup2(fd, 1);
	dup2(fd, 2);
	status = policy_cli_approvals(argc, argv, data_dir);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return status;
}

/* Sends raw bytes on a new connection and reads one line back. */
static void raw_exchange(const char *sock, const char *send_text, size_t send_len, char *reply,
                         size_t replylen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	size_t len = 0;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(fd, send_text, send_len, MSG_NOSIGNAL), (ssize_t)send_len);
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 5000) <= 0)
			break;
		n = recv(fd, reply + len, replylen - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		reply[len] = '\0';
		if (memchr(reply, '\n', len))
			break;
	}
	reply[len] = '\0';
	close(fd);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_socket_is_private(void **state)
{
	struct fixture *fx = *state;
	struct policy_admin *second = NULL;
	struct policy_admin_options o = { .data_dir = fx->dir };
	struct stat sb;
	char run[128];
	char err[512] = "";
	int status = 0;
	pid_t pid;

	assert_string_equal(policy_admin_socket_path(fx->admin), fx->sock);
	assert_int_equal(lstat(fx->sock, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(sb.st_uid, geteuid());
	snprintf(run, sizeof(run), "%s/run", fx->dir);
	assert_int_equal(stat(run, &sb), 0);
	assert_int_equal(sb.st_mode & 0077, 0);
	/* another session of this process: the socket is served already, and
	 * that is no error */
	assert_int_equal(policy_admin_start(fx->st, &o, &second, err, sizeof(err)), 0);
	assert_null(second);
	assert_string_equal(err, "");
	/* another process: one server per data dir */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = policy_admin_start(fx->st, &o, &second, err, sizeof(err));

		_exit(rc == -POLICY_EINVAL && !second &&
		              strstr(err, "another glassbox service is serving approvals")
		          ? 0
		          : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_other_users_are_refused(void **state)
{
	struct fixture *fx = *state;
	struct policy_admin_options o = { 0 };
	struct policy_admin *open_admin = NULL;
	char pub[128];
	char sock[160];
	char err[512] = "";
	pid_t pid;
	int status = 0;

	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	/* a socket anyone could reach on the file system: the peer check alone
	 * must keep them out */
	snprintf(pub, sizeof(pub), "%s/pub", fx->dir);
	assert_int_equal(mkdir(pub, 0777), 0);
	assert_int_equal(chmod(pub, 0777), 0);
	assert_int_equal(chmod(fx->dir, 0755), 0);
	snprintf(sock, sizeof(sock), "%s/admin.sock", pub);
	o.data_dir = fx->dir;
	o.socket_path = sock;
	assert_int_equal(policy_admin_start(fx->st, &o, &open_admin, err, sizeof(err)), 0);
	assert_int_equal(chmod(sock, 0666), 0);
	create(fx->st, "click button \"Delete\"");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		json_t *req = json_pack("{s:s}", "op", "list");
		json_t *resp = NULL;
		const char *code;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(10);
		if (policy_admin_request(sock, req, 5000, &resp, err, sizeof(err)) != 0)
			_exit(11);
		code = json_string_value(json_object_get(json_object_get(resp, "error"), "code"));
		_exit(code && !strcmp(code, "forbidden") && !json_object_get(resp, "approvals")
		          ? 0
		          : 12);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	policy_admin_stop(open_admin);
}

static void test_protocol(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, "click button \"Delete\" on http://shop.test/");
	json_t *req;
	json_t *resp = NULL;
	char reply[4096];
	char err[512] = "";
	char *big;

	req = json_pack("{s:s}", "op", "ping");
	assert_int_equal(policy_admin_request(fx->sock, req, 5000, &resp, err, sizeof(err)), 0);
	assert_true(json_is_true(json_object_get(resp, "ok")));
	json_decref(req);
	json_decref(resp);

	req = json_pack("{s:s}", "op", "list");
	assert_int_equal(policy_admin_request(fx->sock, req, 5000, &resp, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(json_object_get(resp, "approvals")), 1);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(resp, "approvals"), 0), "id")),
	                    a.id);
	json_decref(req);
	json_decref(resp);

	req = json_pack("{s:s, s:s, s:s}", "op", "approve", "id", a.id, "by", "bob");
	assert_int_equal(policy_admin_request(fx->sock, req, 5000, &resp, err, sizeof(err)), 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(resp, "approval"), "state")),
	    "approved");
	json_decref(resp);
	/* twice: a conflict */
	assert_int_equal(policy_admin_request(fx->sock, req, 5000, &resp, err, sizeof(err)), 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(resp, "error"), "code")), "conflict");
	json_decref(req);
	json_decref(resp);

	/* malformed requests, several on one connection */
	raw_exchange(fx->sock, "not json\n", 9, reply, sizeof(reply));
	assert_non_null(strstr(reply, "\"bad_request\""));
	raw_exchange(fx->sock, "{\"op\": \"list\", \"evil\": 1}\n", 26, reply, sizeof(reply));
	assert_non_null(strstr(reply, "unknown member"));
	raw_exchange(fx->sock, "{\"op\": \"reboot\"}\n", 17, reply, sizeof(reply));
	assert_non_null(strstr(reply, "unknown op"));
	raw_exchange(fx->sock, "{\"op\": \"approve\", \"id\": \"x\", \"by\": \"a\\u001b[2J\"}\n",
	             49, reply, sizeof(reply));
	assert_non_null(strstr(reply, "\"bad_request\""));
	/* a line over the ceiling is refused, not buffered without end */
	big = malloc(POLICY_ADMIN_LINE_MAX + 10);
	memset(big, ' ', POLICY_ADMIN_LINE_MAX + 10);
	raw_exchange(fx->sock, big, POLICY_ADMIN_LINE_MAX + 10, reply, sizeof(reply));
	assert_non_null(strstr(reply, "too long"));
	free(big);
}

static void test_cli_round_trip(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, "click button \"Delete all orders\" on "
	                                         "http://shop.test/orders, submits POST "
	                                         "/orders/delete");
	struct store_approval b = create(fx->st, "click button \"Pay\" on http://shop.test/");
	struct store_approval now;
	char out[16384];
	char err[512];

	/* list */
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "list", NULL), 0);
	assert_non_null(strstr(out, "2 approval(s) waiting for a decision"));
	assert_non_null(strstr(out, a.id));
	assert_non_null(strstr(out, "submits POST /orders/delete"));
	assert_non_null(strstr(out, "tenant acme"));
	/* approve */
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "approve", a.id, "--by", "carol",
	                         "--reason", "ticket 42", NULL),
	                 0);
	assert_non_null(strstr(out, "Approved"));
	assert_non_null(strstr(out, "once"));
	assert_int_equal(store_approval_get(fx->st, NULL, a.id, &now, err, sizeof(err)), 0);
	assert_int_equal(now.state, STORE_APPROVAL_APPROVED);
	assert_string_equal(now.decided_by, "carol");
	assert_string_equal(now.channel, "admin-socket");
	assert_string_equal(now.reason, "ticket 42");
	assert_int_equal(now.decided_uid, (int64_t)getuid());
	/* deny */
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "deny", b.id, NULL), 0);
	assert_non_null(strstr(out, "Denied"));
	assert_int_equal(store_approval_get(fx->st, NULL, b.id, &now, err, sizeof(err)), 0);
	assert_int_equal(now.state, STORE_APPROVAL_DENIED);
	assert_true(now.decided_by[0] != '\0'); /* the login name by default */
	/* show, with the history */
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "show", a.id, NULL), 0);
	assert_non_null(strstr(out, "approved"));
	assert_non_null(strstr(out, "by carol via admin-socket: ticket 42"));
	assert_non_null(strstr(out, "created"));
	assert_non_null(strstr(out, "fingerprint"));
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "show", a.id, "--json", NULL), 0);
	assert_non_null(strstr(out, "\"decided_by\": \"carol\""));
	/* list: nothing left pending; --all shows both */
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "list", NULL), 0);
	assert_non_null(strstr(out, "No approvals are waiting"));
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "list", "--all", NULL), 0);
	assert_non_null(strstr(out, "2 approval(s)"));
	/* refusals and usage */
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "approve", b.id, NULL), 1);
	assert_non_null(strstr(out, "already denied"));
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "show", "apr-0000", NULL), 1);
	assert_non_null(strstr(out, "there is no approval apr-0000"));
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "approve", NULL), 2);
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "frobnicate", NULL), 2);
}

static void test_cli_without_service(void **state)
{
	struct fixture *fx = *state;
	struct store_approval a = create(fx->st, "click button \"Publish\" on http://blog.test/");
	struct store_approval now;
	char out[8192];
	char err[512];

	policy_admin_stop(fx->admin);
	fx->admin = NULL;
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "list", NULL), 0);
	assert_non_null(strstr(out, a.id));
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "approve", a.id, "--by", "dave", NULL),
	                 0);
	assert_int_equal(store_approval_get(fx->st, NULL, a.id, &now, err, sizeof(err)), 0);
	assert_int_equal(now.state, STORE_APPROVAL_APPROVED);
	assert_string_equal(now.channel, "cli-direct");
	assert_string_equal(now.decided_by, "dave");
	/* no data dir at all */
	assert_int_equal(run_cli("/nonexistent/glassbox", out, sizeof(out), "list", NULL), 3);
	assert_non_null(strstr(out, "no glassbox data dir"));
}

static void test_cli_output_is_safe(void **state)
{
	struct fixture *fx = *state;
	char out[8192];
	size_t i;

	/* a summary that someone managed to fill with terminal escapes */
	create(fx->st, "click button \"\x1b[2J\x1b]0;owned\x07Save\" \xC2\x9B"
	               "31m\xE2\x80\xAE"
	               "x");
	assert_int_equal(run_cli(fx->dir, out, sizeof(out), "list", NULL), 0);
	for (i = 0; out[i]; i++) {
		unsigned char c = (unsigned char)out[i];

		assert_true(c >= 0x20 || c == '\n');
		assert_true(c != 0x7F);
	}
	assert_null(strstr(out, "\xC2\x9B"));
	assert_null(strstr(out, "\xE2\x80\xAE"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_socket_is_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_users_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protocol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_without_service, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_output_is_safe, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
