/*
 * store-private.h - the insides of store/, shared by db.c, approvals.c and
 * ledger.c only. Other modules include store/store.h.
 */
#ifndef GB_STORE_PRIVATE_H
#define GB_STORE_PRIVATE_H

#include "common/unittest.h"
#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_PATH_BYTES 4096
#define STORE_INSTANCE_BYTES 33 /* 32 hex digits and the NUL */

/* A number as a string literal, for SQL text. */
#define STORE_STR_(x) #x
#define STORE_STR(x) STORE_STR_(x)

/* A clock in Unix milliseconds (tests replace it). */
typedef int64_t (*store_clock_fn)(void);

struct store {
	pthread_mutex_t lock;
	/* broadcast after every committed change an operation or approval
	 * waiter may be waiting for; waited on with lock */
	pthread_cond_t changed;
	sqlite3 *db;                         /* {st->lock} */
	char path[STORE_PATH_BYTES];         /* DATA/glassbox.db */
	char lock_dir[STORE_PATH_BYTES];     /* DATA/locks */
	char instance[STORE_INSTANCE_BYTES]; /* owner of the operations this handle begins */
	int instance_fd;                     /* holds the flock on lock_dir/<instance>.lock */
	store_clock_fn clock_ms;             /* set before sharing; never changed after */
	store_approval_hook hook;            /* set before sharing */
	void *hook_user;
	size_t recovered_unknown;
	size_t recovered_abandoned;
};

/* db.c */
int store_set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int store_db_error_locked(struct store *st, const char *doing, char *err, size_t errlen);
int store_bind_text(sqlite3_stmt *s, int i, const char *text);
void store_copy_col(sqlite3_stmt *s, int col, char *dst, size_t dstlen);
int store_exec_locked(struct store *st, const char *sql, const char *doing, char *err,
                      size_t errlen);
int store_check_text(const char *what, const char *s, size_t max, int required, char *err,
                     size_t errlen);
int store_check_id(const char *what, const char *s, char *err, size_t errlen);
int64_t store_now_ms(const struct store *st);
void store_wait_changed_locked(struct store *st, int wait_ms);
int store_recover_owner_locked(struct store *st, const char *owner, char *err, size_t errlen);
#ifdef GB_UNITTEST_BUILD
/* Replaces the clock of st (before sharing it). */
void store_set_clock(struct store *st, store_clock_fn fn);
#endif

#endif
