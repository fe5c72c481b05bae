// SPDX-License-Identifier: MIT
/*
 * The SQLite store's side tables, next to the state (store.c), and its
 * error helper (store.c calls down here, never the other way): health
 * verdicts by real (this host's probes: kept apart from the desired
 * state, which operators change), numbers in the meta table (the commit
 * count that is the store's revision; the etcd store's cached revision),
 * and what the store reports about itself.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>

#include "store_sqlite.h"

int xlb_sqlite_err(struct sqlite_store *s, struct xlb_err *err, const char *what)
{
	int code = sqlite3_errcode(s->db);

	return xlb_err_set(err, code == SQLITE_FULL ? -ENOSPC : code == SQLITE_BUSY ? -EBUSY : -EIO,
			   "store: %s: %s", what, sqlite3_errmsg(s->db));
}

int xlb_sqlite_save_health(struct xlb_store *base, uint32_t real_id, const struct xlb_ip *addr,
			   int up, struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);
	sqlite3_stmt *st;
	char a[64];
	int rc;

	if (up < 0) {
		if (sqlite3_prepare_v2(s->db, "DELETE FROM health WHERE real_id = ?1;", -1, &st,
				       NULL) != SQLITE_OK)
			return xlb_sqlite_err(s, err, "prepare");
		sqlite3_bind_int64(st, 1, real_id);
	} else {
		if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO health VALUES(?1, ?2, ?3);", -1,
				       &st, NULL) != SQLITE_OK)
			return xlb_sqlite_err(s, err, "prepare");
		sqlite3_bind_int64(st, 1, real_id);
		sqlite3_bind_text(st, 2, xlb_addr_str(addr, a, sizeof(a)), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 3, up);
	}
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : xlb_sqlite_err(s, err, "save health");
}

int xlb_sqlite_load_health(struct xlb_store *base,
			   void (*fn)(void *ctx, uint32_t real_id, const struct xlb_ip *addr, int up),
			   void *ctx, struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "SELECT real_id, address, up FROM health;", -1, &st, NULL) !=
	    SQLITE_OK)
		return xlb_sqlite_err(s, err, "prepare");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct xlb_ip a;
		const char *t = (const char *)sqlite3_column_text(st, 1);

		if (t && !xlb_addr_parse(t, &a))
			fn(ctx, (uint32_t)sqlite3_column_int64(st, 0), &a, sqlite3_column_int(st, 2));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : xlb_sqlite_err(s, err, "read health");
}

int xlb_sqlite_meta_get(struct xlb_store *base, const char *key, uint64_t *ret)
{
	struct sqlite_store *s = sqlite_of(base);
	sqlite3_stmt *st;
	int r = -ENOENT;

	if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key=?1;", -1, &st, NULL) !=
	    SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*ret = (uint64_t)sqlite3_column_int64(st, 0);
		r = 0;
	}
	sqlite3_finalize(st);
	return r;
}

int xlb_sqlite_meta_set(struct xlb_store *base, const char *key, uint64_t v, struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);
	sqlite3_stmt *st;
	int r = 0;

	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO meta VALUES(?1, ?2);", -1, &st,
			       NULL) != SQLITE_OK)
		return xlb_sqlite_err(s, err, "prepare");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)v);
	if (sqlite3_step(st) != SQLITE_DONE)
		r = xlb_sqlite_err(s, err, "update meta");
	sqlite3_finalize(st);
	return r;
}

void xlb_sqlite_info(struct xlb_store *base, struct xlb_store_info *ret)
{
	struct sqlite_store *s = sqlite_of(base);
	uint64_t rev = 0;

	xlb_sqlite_meta_get(base, "revision", &rev);
	*ret = (struct xlb_store_info){ .kind = "sqlite", .revision = rev, .seen_revision = rev,
					};
	snprintf(ret->where, sizeof(ret->where), "%s", sqlite3_db_filename(s->db, "main") ?: "");
}
