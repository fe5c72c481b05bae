/* SPDX-License-Identifier: MIT */
/*
 * store_impl.h - private to libxlbctl's stores: the interface every store
 * implements (store.c: SQLite, one host; store_etcd.c: etcd, a site) and
 * what the etcd store borrows from the SQLite one for its local cache.
 * stores.c dispatches the public xlb_store__*() calls through the ops.
 */
#ifndef XLB_STORE_IMPL_H
#define XLB_STORE_IMPL_H

#include "xlb_control.h"

struct xlb_store_ops {
	const char *kind;
	void (*close)(struct xlb_store *s);
	int (*load)(struct xlb_store *s, struct xlb_state *ret_state, struct xlb_err *err);
	int (*load_settings)(struct xlb_store *s, struct xlb_settings *ret_set, struct xlb_err *err);
	int (*save_settings)(struct xlb_store *s, const struct xlb_settings *set, struct xlb_err *err);
	/* One change: begin, save, then commit or roll back (see xlb_control.h). */
	int (*begin)(struct xlb_store *s, struct xlb_err *err);
	int (*save)(struct xlb_store *s, const struct xlb_state *st, struct xlb_err *err);
	int (*commit)(struct xlb_store *s, struct xlb_err *err);
	void (*rollback)(struct xlb_store *s);
	void (*info)(struct xlb_store *s, struct xlb_store_info *ret);
	/* Health verdicts: always this host's own (the etcd store keeps them in its cache). */
	int (*save_health)(struct xlb_store *s, uint32_t real_id, const struct xlb_ip *addr, int up,
			   struct xlb_err *err);
	int (*load_health)(struct xlb_store *s,
			   void (*fn)(void *ctx, uint32_t real_id, const struct xlb_ip *addr, int up),
			   void *ctx, struct xlb_err *err);
	/* Replicated stores only (NULL otherwise): see xlb_store__adopt(). */
	int (*adopt)(struct xlb_store *s, const struct xlb_state *st, uint64_t rev,
		     struct xlb_err *err);
	void (*seen)(struct xlb_store *s, uint64_t rev, const char *refused);
};

/* Every store starts with this. */
struct xlb_store {
	const struct xlb_store_ops *ops;
};

/* A zeroed store of `size` bytes running `ops`; NULL with errno and err set. */
void *xlb_store_alloc(size_t size, const struct xlb_store_ops *ops, struct xlb_err *err);

/* store.c: numbers in the SQLite store's meta table (-ENOENT when absent). */
int xlb_sqlite_meta_get(struct xlb_store *s, const char *key, uint64_t *ret);
int xlb_sqlite_meta_set(struct xlb_store *s, const char *key, uint64_t v, struct xlb_err *err);

#endif /* XLB_STORE_IMPL_H */
