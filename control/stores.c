// SPDX-License-Identifier: MIT
/*
 * The store interface: the public xlb_store__*() calls, dispatched to the
 * store that was opened - SQLite (store.c, one host, the default) or etcd
 * (store_etcd.c, every host of a site on one replicated state).  The daemon
 * sees one transaction model for both: begin, save, commit or roll back.
 */
#include <errno.h>
#include <stdlib.h>

#include "store_impl.h"

void *xlb_store_alloc(size_t size, const struct xlb_store_ops *ops, struct xlb_err *err)
{
	struct xlb_store *s = calloc(1, size);

	if (!s) {
		xlb_err_set(err, -ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->ops = ops;
	return s;
}

struct xlb_store *xlb_store__close(struct xlb_store *s)
{
	if (s)
		s->ops->close(s);
	return NULL;
}

int xlb_store__load(struct xlb_store *s, struct xlb_state *ret_state, struct xlb_err *err)
{
	return s->ops->load(s, ret_state, err);
}

int xlb_store__load_settings(struct xlb_store *s, struct xlb_settings *ret_set,
			     struct xlb_err *err)
{
	return s->ops->load_settings(s, ret_set, err);
}

int xlb_store__save_settings(struct xlb_store *s, const struct xlb_settings *set,
			     struct xlb_err *err)
{
	return s->ops->save_settings(s, set, err);
}

int xlb_store__begin(struct xlb_store *s, struct xlb_err *err)
{
	return s->ops->begin(s, err);
}

int xlb_store__save(struct xlb_store *s, const struct xlb_state *st, struct xlb_err *err)
{
	return s->ops->save(s, st, err);
}

int xlb_store__commit(struct xlb_store *s, struct xlb_err *err)
{
	return s->ops->commit(s, err);
}

void xlb_store__rollback(struct xlb_store *s)
{
	s->ops->rollback(s);
}

int xlb_store__save_health(struct xlb_store *s, uint32_t real_id, const struct xlb_ip *addr,
			   int up, struct xlb_err *err)
{
	return s->ops->save_health(s, real_id, addr, up, err);
}

int xlb_store__load_health(struct xlb_store *s,
			   void (*fn)(void *ctx, uint32_t real_id, const struct xlb_ip *addr, int up),
			   void *ctx, struct xlb_err *err)
{
	return s->ops->load_health(s, fn, ctx, err);
}

void xlb_store__info(struct xlb_store *s, struct xlb_store_info *ret)
{
	s->ops->info(s, ret);
}

bool xlb_store__replicated(const struct xlb_store *s)
{
	return s->ops->adopt != NULL;
}

int xlb_store__adopt(struct xlb_store *s, const struct xlb_state *st, uint64_t rev,
		     struct xlb_err *err)
{
	if (!s->ops->adopt)
		return xlb_err_set(err, -EOPNOTSUPP, "the %s store is not replicated", s->ops->kind);
	return s->ops->adopt(s, st, rev, err);
}

void xlb_store__seen(struct xlb_store *s, uint64_t rev, const char *refused)
{
	if (s->ops->seen)
		s->ops->seen(s, rev, refused);
}
