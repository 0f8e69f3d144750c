/*
 * pagelog.h - what the pages of a session's browser did, kept across
 * calls: console messages and network requests, each in a bounded
 * buffer (the oldest go first), for browser_console_messages,
 * browser_network_requests and browser_network_request. Private to
 * actions/.
 *
 * What is kept is already scrubbed of credentials: the values of
 * Cookie, Set-Cookie, Authorization and other credential headers are
 * never stored. Values typed from secrets are scrubbed by the tools
 * before anything leaves (act_secrets_scrub_json).
 *
 * Threads: the session's worker only (CDP listeners run on it).
 */
#ifndef GB_ACTIONS_PAGELOG_H
#define GB_ACTIONS_PAGELOG_H

#include "actions/actions.h"
#include "common/unittest.h"

#include <jansson.h>
#include <regex.h>
#include <stddef.h>

struct cdp_conn;
struct sess;
struct act_pagelog;

#define ACT_PAGELOG_MAX_CONSOLE 1000
#define ACT_PAGELOG_MAX_REQUESTS 500
#define ACT_PAGELOG_MAX_BYTES (8u * 1024u * 1024u) /* what the two buffers may hold */
#define ACT_PAGELOG_MAX_POST_BYTES (64u * 1024u)   /* a request body kept as sent */

/* A new, empty log (NULL when out of memory). */
struct act_pagelog *act_pagelog_new(void);
/* Frees l (after the browser it listened to closed). NULL is a no-op. */
void act_pagelog_free(struct act_pagelog *l);

/* Starts recording the pages of a freshly launched browser s (borrowed
 * until the next attach); what was kept of the browser before is dropped
 * (its listener went with its connection when it closed). Returns 0 or
 * -1. */
int act_pagelog_attach(struct act_pagelog *l, struct sess *s);

/* 1 when the Network.requestWillBeSent params (borrowed) are the
 * browser's own fetch of the site's icon (type Other, path /favicon.ico),
 * which no page asked for: not listed as the page's request, and not
 * waited for when an action settles (recorder.c). */
int act_request_is_favicon(json_t *params);

/* (enum act_console_level and act_console_level_parse: actions.h) */

/*
 * The console messages of the page with CDP session psid at level or a
 * more severe one: since its last navigation, or (all) since the browser
 * started; oldest first, a new array of {level, type, text, url?, line?,
 * time}. *total, *errors, *warnings count that page's messages in the
 * same span whatever the level.
 */
json_t *act_pagelog_console(struct act_pagelog *l, const char *psid, enum act_console_level level,
                            int all, size_t *total, size_t *errors, size_t *warnings);

/*
 * Calls fn (entry borrowed for the call: {level, type, text, url?, line?,
 * time (ms since the epoch), sid, nav, seq}) for each console message
 * kept whose seq is above after, oldest first. Messages are numbered from
 * 1 for the life of the log (a new browser does not start again), so a
 * reader keeps its place with the number returned: the newest message's,
 * or after when there is none newer.
 */
json_int_t act_pagelog_console_each(struct act_pagelog *l, json_int_t after,
                                    void (*fn)(void *user, json_t *entry), void *user);

/* The wall time (ms since the epoch) at which navigation nav of page sid
 * (the "nav" of its entries) began; 0 when unknown or when the page has
 * navigated again since. */
double act_pagelog_nav_started_ms(struct act_pagelog *l, const char *sid, unsigned nav);

/*
 * The requests of the page psid since its last navigation, oldest first:
 * a new array of {index, method, url, type, status?, status_text?,
 * failed?}. Without with_static, successful (status < 400) requests that
 * are not fetch or XHR are left out and counted in *hidden_static. filter
 * (may be NULL): only URLs it matches (a POSIX extended regex, compiled
 * by the caller).
 */
json_t *act_pagelog_requests(struct act_pagelog *l, const char *psid, int with_static,
                             const regex_t *filter, size_t *hidden_static);

/* The request numbered index (as act_pagelog_requests lists it): a
 * borrowed object {index, request_id, session_id, method, url, type,
 * request_headers, post_data?, post_data_truncated?, has_post_data,
 * status?, status_text?, response_headers?, mime?, failed?, finished},
 * valid until the log changes; NULL when it is not (or no longer) kept. */
json_t *act_pagelog_request(struct act_pagelog *l, unsigned index);

/* The file chooser a page opened (a click on <input type=file>; the
 * browser shows none, sessions/targets.c) that no tool answered yet: 1
 * with the CDP session of its frame, the input's backend node id and
 * whether it takes several files; 0 when there is none (or its page
 * navigated since). act_pagelog_chooser_done: it was answered. */
int act_pagelog_chooser(struct act_pagelog *l, char *sid, size_t sidlen, int *backend_node_id,
                        int *multiple);
void act_pagelog_chooser_done(struct act_pagelog *l);
/* 1 while a file chooser is open (act_pagelog_chooser would give it). */
int act_pagelog_chooser_open(const struct act_pagelog *l);

/* 1 when a header of that name carries credentials (Cookie, Set-Cookie,
 * Authorization, Proxy-Authorization, X-Api-Key, ...): never kept. */
int act_header_is_credential(const char *name);

#ifdef GB_UNITTEST_BUILD
/* The listener: one CDP event of a page (unit tests and the fuzzer feed it). */
void act_pagelog_event(void *user, const char *session_id, const char *method, json_t *params);
#endif

#endif
