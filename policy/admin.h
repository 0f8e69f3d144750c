/*
 * admin.h - the channel through which a person decides approvals, out of
 * reach of the agent and of the page: a unix socket that only root and
 * the service's own user can use, and the `glassbox approvals` command
 * that talks to it (docs/gates.md).
 *
 * The socket: DATA/run/admin.sock, mode 0600, in DATA/run (0700). Each
 * connection's peer is checked with SO_PEERCRED: uid 0 or the service's
 * effective uid, else the connection gets one error line and is closed.
 * The protocol is newline-delimited JSON, one request and one response
 * per line, several per connection; a line is at most
 * POLICY_ADMIN_LINE_MAX bytes; a connection idle for 30 s is closed.
 *
 * Requests:
 *   {"op": "ping"}
 *   {"op": "list", "tenant": T?, "all": false?, "limit": 100?}   pending only unless all
 *   {"op": "show", "id": ID}
 *   {"op": "approve", "id": ID, "by": NAME, "reason": TEXT?}
 *   {"op": "deny", "id": ID, "by": NAME, "reason": TEXT?}
 * Responses:
 *   {"ok": true, "service": "glassbox", "version": V}                      ping
 *   {"ok": true, "approvals": [approval...]}                                list
 *   {"ok": true, "approval": approval, "events": [{"seq", "time", "event",
 *    "by", "channel", "reason", "operation_id"}...]}                          show
 *   {"ok": true, "approval": approval}                                      approve, deny
 *   {"ok": false, "error": {"code": C, "message": M}}   C: bad_request, not_found,
 *                                                       conflict, forbidden, internal
 * where approval is store_approval_to_json(). A decision is recorded with
 * by (the client's word for who it is), channel "admin-socket" and the
 * peer's verified uid.
 *
 * Threads: the server runs one thread that accepts and serves connections
 * one at a time (admin traffic is a person typing); it uses the store
 * handle it was given, which must outlive it.
 */
#ifndef GB_POLICY_ADMIN_H
#define GB_POLICY_ADMIN_H

#include "policy/egress.h" /* the policy module's error codes */
#include "store/store.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct policy_admin;

/* Longest request or response line, bytes. */
#define POLICY_ADMIN_LINE_MAX (256u * 1024u)

struct policy_admin_options {
	const char *data_dir;    /* required: the socket is DATA/run/admin.sock */
	const char *socket_path; /* NULL: DATA/run/admin.sock; tests may point elsewhere */
	int idle_timeout_ms;     /* 0: 30000 */
};

/*
 * Starts the admin socket server on its own thread. st borrowed (must
 * outlive the server); o copied. Refuses to start when another live
 * process already serves the socket ("another glassbox service is
 * serving approvals on DATA/run/admin.sock: stop it, or use another data
 * dir"); a stale socket file is replaced. When this same process serves
 * the socket already (another session of `glassbox serve` or `glassbox
 * run -j N`), there is nothing to start: returns 0 with *out NULL.
 * Returns 0 with *out, or -POLICY_EINVAL / -POLICY_ESYS / -POLICY_ENOMEM
 * with err.
 */
int policy_admin_start(struct store *st, const struct policy_admin_options *o,
                       struct policy_admin **out, char *err, size_t errlen);

/* Stops the thread, closes and removes the socket. NULL is a no-op. */
void policy_admin_stop(struct policy_admin *a);

/* The socket's path. */
const char *policy_admin_socket_path(const struct policy_admin *a);

/*
 * Serves one request (shape above) against st: what the server does for
 * each line, and what the CLI does itself when no service is running.
 * channel and uid are recorded with decisions ("admin-socket" / peer uid,
 * "cli-direct" / getuid()). request borrowed. Returns a new response
 * object (never NULL unless out of memory).
 */
json_t *policy_admin_handle(struct store *st, const json_t *request, const char *channel,
                            int64_t uid);

/*
 * Client: sends request (borrowed) to the socket at path and reads one
 * response line into *response (new reference). Returns 0;
 * -POLICY_EREFUSED when nothing serves the socket (no file, or connection
 * refused: no service is running); -POLICY_ESYS for other failures
 * (permission denied, timeout, a malformed or oversized answer), with err.
 */
int policy_admin_request(const char *path, const json_t *request, int timeout_ms, json_t **response,
                         char *err, size_t errlen);

/*
 * `glassbox approvals ...`: argv[0] is "approvals", argv[1] the subcommand:
 *   list [--tenant T] [--all] [--json]     pending approvals (all states with --all)
 *   show ID [--json]                       one approval and its history
 *   approve ID [--reason TEXT] [--by NAME] approve it (once, for that action only)
 *   deny ID [--reason TEXT] [--by NAME]    deny it
 * It talks to the running service through DATA/run/admin.sock. When no
 * service is running (no socket, or nobody listening) it opens
 * DATA/glassbox.db itself and does the same (channel "cli-direct"):
 * SQLite makes each decision atomic with respect to any process that
 * later uses the approval, so this is as safe, and it lets a person
 * decide while the service restarts. Either way only root or the data
 * dir's owner can do it (the socket's peer check; the database's 0600
 * mode). --by defaults to $SUDO_USER when root ran it through sudo, else
 * the login name of the user. Prints readable text to stdout (JSON with
 * --json) and errors to stderr. Returns the exit status: 0 success, 1
 * refused (no such approval, already decided, expired), 2 usage error, 3
 * could not run.
 */
int policy_cli_approvals(int argc, char **argv, const char *data_dir);

#endif
