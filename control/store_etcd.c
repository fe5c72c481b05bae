// SPDX-License-Identifier: MIT
/*
 * The etcd store: the desired state of a whole site in one etcd key,
 * `<prefix>state` (state_doc.c's document), which every xlbd of the site
 * reads, watches and writes.
 *
 * Transactions.  A change is all there or not at all, as with SQLite: the
 * new document is written by one etcd txn that compares the key's
 * mod_revision with the revision this host last saw.  If another host (or
 * client) wrote in between, the compare fails, nothing is written, and the
 * change is refused with -ESTALE ("retry"); the watch then brings the newer
 * state.  The key's mod_revision is the state's revision: every host
 * reports the revision it runs, and equal revisions mean equal states.
 *
 * The local cache.  A SQLite store in the state dir (store.c) keeps this
 * host's settings and the last good state with its revision.  When etcd
 * cannot be reached at start, or holds a document this host refuses, xlbd
 * starts from the cache and keeps forwarding with it; it catches up when
 * the store answers again.  While etcd is unreachable changes are refused
 * (-EHOSTUNREACH): a host cut from the site must not make up a state of
 * its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_impl.h"

struct etcd_store {
	struct xlb_store base;
	struct xlb_etcd *etcd;
	struct xlb_store *cache; /* SQLite: settings, the last good state and its revision */
	char key[320];
	char writer[64];
	uint64_t revision;	/* the state this host runs */
	uint64_t seen_revision; /* the newest revision of the key seen, refused ones too */
	uint64_t refused_revision;
	char refused_msg[240];
	bool from_cache;
	bool in_txn;
	char *pending; /* the document save() prepared for commit() */
};

static const struct xlb_store_ops etcd_ops;

static struct etcd_store *etcd_of(struct xlb_store *s)
{
	return (struct etcd_store *)s;
}

static void etcd_close(struct xlb_store *base)
{
	struct etcd_store *s = etcd_of(base);

	free(s->pending);
	xlb_etcd__free(s->etcd);
	xlb_store__close(s->cache);
	free(s);
}

/* The cache: state and revision in one SQLite transaction. */
static int cache_save(struct etcd_store *s, const struct xlb_state *st, uint64_t rev,
		      struct xlb_err *err)
{
	int r = xlb_store__begin(s->cache, err);

	r = r ?: xlb_store__save(s->cache, st, err);
	r = r ?: xlb_sqlite_meta_set(s->cache, "etcd_revision", rev, err);
	if (r) {
		xlb_store__rollback(s->cache);
		return r;
	}
	return xlb_store__commit(s->cache, err);
}

static int load_cache(struct etcd_store *s, struct xlb_state *ret, const char *why,
		      struct xlb_err *err)
{
	uint64_t rev = 0;
	int r;

	if (xlb_sqlite_meta_get(s->cache, "etcd_revision", &rev) || !rev)
		return xlb_err_set(err, -EHOSTUNREACH, "%s, and no state cached from it", why);
	r = xlb_store__load(s->cache, ret, err);
	if (r)
		return r;
	s->revision = rev;
	if (s->seen_revision < rev)
		s->seen_revision = rev;
	s->from_cache = true;
	return 0;
}

static int etcd_load(struct xlb_store *base, struct xlb_state *ret, struct xlb_err *err)
{
	struct etcd_store *s = etcd_of(base);
	struct xlb_etcd_kv *kvs = NULL;
	struct xlb_err e2;
	size_t n = 0;
	int r;

	r = xlb_etcd__get(s->etcd, s->key, false, &kvs, &n, NULL, &e2);
	if (r)
		return load_cache(s, ret, e2.msg, err);
	s->from_cache = false;
	if (!n) { /* a new site */
		xlb_state_init(ret);
		s->revision = s->seen_revision = 0;
		return 0;
	}
	s->seen_revision = kvs[0].mod_revision;
	r = xlb_state_doc_parse(kvs[0].value, kvs[0].value_len, NULL, ret, NULL, &e2);
	if (r) {
		s->refused_revision = kvs[0].mod_revision;
		snprintf(s->refused_msg, sizeof(s->refused_msg), "%s", e2.msg);
		xlb_etcd_kvs_free(kvs, n);
		return load_cache(s, ret, "the store's state is refused", err);
	}
	s->revision = kvs[0].mod_revision;
	xlb_etcd_kvs_free(kvs, n);
	cache_save(s, ret, s->revision, &e2); /* best effort: the store has it anyway */
	return 0;
}

static int etcd_load_settings(struct xlb_store *base, struct xlb_settings *ret,
			      struct xlb_err *err)
{
	return xlb_store__load_settings(etcd_of(base)->cache, ret, err);
}

static int etcd_save_settings(struct xlb_store *base, const struct xlb_settings *set,
			      struct xlb_err *err)
{
	return xlb_store__save_settings(etcd_of(base)->cache, set, err);
}

/* Health verdicts are this host's own: they stay in the local cache. */
static int etcd_save_health(struct xlb_store *base, uint32_t real_id, const struct xlb_ip *addr,
			    int up, struct xlb_err *err)
{
	return xlb_store__save_health(etcd_of(base)->cache, real_id, addr, up, err);
}

static int etcd_load_health(struct xlb_store *base,
			    void (*fn)(void *ctx, uint32_t real_id, const struct xlb_ip *addr, int up),
			    void *ctx, struct xlb_err *err)
{
	return xlb_store__load_health(etcd_of(base)->cache, fn, ctx, err);
}

static int etcd_begin(struct xlb_store *base, struct xlb_err *err)
{
	struct etcd_store *s = etcd_of(base);

	if (s->in_txn)
		return xlb_err_set(err, -EBUSY, "store: transaction already open");
	s->in_txn = true;
	return 0;
}

static int etcd_save(struct xlb_store *base, const struct xlb_state *st, struct xlb_err *err)
{
	struct etcd_store *s = etcd_of(base);

	if (!s->in_txn)
		return xlb_err_set(err, -EINVAL, "store: save outside a transaction");
	free(s->pending);
	s->pending = xlb_state_doc_dump(st, s->writer);
	if (!s->pending)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

static void etcd_rollback(struct xlb_store *base)
{
	struct etcd_store *s = etcd_of(base);

	free(s->pending);
	s->pending = NULL;
	s->in_txn = false;
}

static int etcd_commit(struct xlb_store *base, struct xlb_err *err)
{
	struct etcd_store *s = etcd_of(base);
	uint64_t rev = 0, cur = 0;
	struct xlb_state st;
	struct xlb_err e2;
	int r;

	if (!s->in_txn || !s->pending) {
		etcd_rollback(base);
		return xlb_err_set(err, -EINVAL, "store: no transaction open");
	}
	r = xlb_etcd__put_if(s->etcd, s->key, s->pending, strlen(s->pending), s->seen_revision,
			     &rev, &cur, &e2);
	if (r == -ESTALE) {
		if (cur > s->seen_revision)
			s->seen_revision = cur;
		r = xlb_err_set(err, -ESTALE,
				"the site's state changed meanwhile (revision %llu in the store, this "
				"host runs %llu): nothing changed, retry",
				(unsigned long long)cur, (unsigned long long)s->revision);
	} else if (r == -EHOSTUNREACH) {
		r = xlb_err_set(err, r, "store unreachable, change refused (this host keeps "
				"revision %llu): %s", (unsigned long long)s->revision, e2.msg);
	} else if (r) {
		r = xlb_err_set(err, r, "store: %s", e2.msg);
	}
	if (r) {
		etcd_rollback(base);
		return r;
	}
	s->revision = s->seen_revision = rev;
	s->from_cache = false;
	/* The cache follows; a failure here costs only a slower start without etcd. */
	if (!xlb_state_doc_parse(s->pending, strlen(s->pending), NULL, &st, NULL, &e2)) {
		cache_save(s, &st, rev, &e2);
		xlb_state_free(&st);
	}
	etcd_rollback(base);
	return 0;
}

static void etcd_info(struct xlb_store *base, struct xlb_store_info *ret)
{
	struct etcd_store *s = etcd_of(base);

	*ret = (struct xlb_store_info){
		.kind = "etcd",
		.revision = s->revision,
		.seen_revision = s->seen_revision,
		.refused_revision = s->refused_revision,
		.from_cache = s->from_cache,
	};
	snprintf(ret->refused_msg, sizeof(ret->refused_msg), "%s", s->refused_msg);
	snprintf(ret->where, sizeof(ret->where), "%s %s", xlb_etcd__endpoint(s->etcd), s->key);
}

static int etcd_adopt(struct xlb_store *base, const struct xlb_state *st, uint64_t rev,
		      struct xlb_err *err)
{
	struct etcd_store *s = etcd_of(base);

	s->revision = rev;
	if (s->seen_revision < rev)
		s->seen_revision = rev;
	s->from_cache = false;
	return cache_save(s, st, rev, err);
}

static void etcd_seen(struct xlb_store *base, uint64_t rev, const char *refused)
{
	struct etcd_store *s = etcd_of(base);

	if (s->seen_revision < rev)
		s->seen_revision = rev;
	if (refused) {
		s->refused_revision = rev;
		snprintf(s->refused_msg, sizeof(s->refused_msg), "%s", refused);
	}
}

static const struct xlb_store_ops etcd_ops = {
	.kind = "etcd",
	.close = etcd_close,
	.load = etcd_load,
	.load_settings = etcd_load_settings,
	.save_settings = etcd_save_settings,
	.begin = etcd_begin,
	.save = etcd_save,
	.commit = etcd_commit,
	.rollback = etcd_rollback,
	.info = etcd_info,
	.save_health = etcd_save_health,
	.load_health = etcd_load_health,
	.adopt = etcd_adopt,
	.seen = etcd_seen,
};

struct xlb_store *xlb_store__open_etcd(const struct xlb_etcd_store_opts *o, struct xlb_err *err)
{
	struct etcd_store *s;

	if (!o || o->sz < sizeof(*o) || !o->prefix || o->prefix[0] != '/' ||
	    strlen(o->prefix) > 256 || !o->cache_dir) {
		xlb_err_set(err, -EINVAL, "etcd store: bad options (the prefix must start with /)");
		errno = EINVAL;
		return NULL;
	}
	s = xlb_store_alloc(sizeof(*s), &etcd_ops, err);
	if (!s)
		return NULL;
	snprintf(s->key, sizeof(s->key), "%sstate", o->prefix);
	snprintf(s->writer, sizeof(s->writer), "%s", o->writer ? o->writer : "");
	s->etcd = xlb_etcd__new(o->endpoints, o->timeout_ms, err);
	if (s->etcd)
		s->cache = xlb_store__open(o->cache_dir, err);
	if (!s->etcd || !s->cache) {
		int e = err ? -err->code : EINVAL;

		etcd_close(&s->base);
		errno = e;
		return NULL;
	}
	return &s->base;
}
