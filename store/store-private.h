/*
 * store-private.h - the insides of store/, shared by its files only.
 * Other modules include store/store.h.
 */
#ifndef GB_STORE_PRIVATE_H
#define GB_STORE_PRIVATE_H

#include "common/unittest.h"
#include "store/store.h"
#include "store/store-sql.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_PATH_BYTES 4096
#define STORE_CONNINFO_BYTES 2048
#define STORE_INSTANCE_BYTES 33 /* 32 hex digits and the NUL */
#define STORE_ERRMSG_BYTES 512

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
	const struct store_sql_backend *be;  /* set on open; never changed */
	void *conn;                          /* the backend's connection {st->lock} */
	char path[STORE_PATH_BYTES];         /* DATA/glassbox.db, or "PostgreSQL database X" */
	char conninfo[STORE_CONNINFO_BYTES]; /* PostgreSQL only; never logged: it may
	                                      * hold a password */
	char data_dir[STORE_PATH_BYTES];     /* DATA */
	char lock_dir[STORE_PATH_BYTES];     /* DATA/locks (SQLite) */
	char instance[STORE_INSTANCE_BYTES]; /* owner of the operations this handle begins */
	char replica[STORE_REPLICA_MAX + 1]; /* the replica this handle runs on */
	int instance_fd;      /* SQLite: holds the flock on lock_dir/<instance>.lock */
	int64_t instance_key; /* PostgreSQL: the advisory lock held */
	/* the backend's last failure {st->lock} */
	char last_error[STORE_ERRMSG_BYTES];
	char last_state[8];       /* PostgreSQL SQLSTATE, "" otherwise */
	int last_code;            /* SQLite result code */
	store_clock_fn clock_ms;  /* set before sharing; never changed after */
	store_approval_hook hook; /* set before sharing */
	void *hook_user;
	size_t recovered_unknown;
	size_t recovered_abandoned;
};

/* db.c */
int store_set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int store_check_text(const char *what, const char *s, size_t max, int required, char *err,
                     size_t errlen);
int store_check_id(const char *what, const char *s, char *err, size_t errlen);
int64_t store_now_ms(const struct store *st);
void store_wait_changed_locked(struct store *st, int wait_ms);
int store_recover_owner_locked(struct store *st, const char *owner, char *err, size_t errlen);
/* 1 when owner is this handle or a live one; 0 when it is gone. */
int store_owner_alive_locked(struct store *st, const char *owner);
/* 1 when s is 64 lowercase hex digits. */
int store_is_sha256_hex(const char *s);
#ifdef GB_UNITTEST_BUILD
/* Replaces the clock of st (before sharing it). */
void store_set_clock(struct store *st, store_clock_fn fn);
#endif

#endif
