/* SPDX-License-Identifier: MIT */
/*
 * store_sqlite.h - private to the SQLite store's files: store.c (open,
 * transactions, the state, settings, the ops table) and store_tables.c
 * (health verdicts, meta values, info).
 */
#ifndef XLB_STORE_SQLITE_H
#define XLB_STORE_SQLITE_H

#include <sqlite3.h>

#include "store_impl.h"

struct sqlite_store {
	struct xlb_store base;
	sqlite3 *db;
	bool in_txn;
};

static inline struct sqlite_store *sqlite_of(struct xlb_store *s)
{
	return (struct sqlite_store *)s;
}

/* store_tables.c */
/* SQLite's last error as -errno (ENOSPC, EBUSY, else EIO) with its message. */
int xlb_sqlite_err(struct sqlite_store *s, struct xlb_err *err, const char *what);
int xlb_sqlite_save_health(struct xlb_store *s, uint32_t real_id, const struct xlb_ip *addr,
			   int up, struct xlb_err *err);
int xlb_sqlite_load_health(struct xlb_store *s,
			   void (*fn)(void *ctx, uint32_t real_id, const struct xlb_ip *addr, int up),
			   void *ctx, struct xlb_err *err);
void xlb_sqlite_info(struct xlb_store *s, struct xlb_store_info *ret);

#endif /* XLB_STORE_SQLITE_H */
