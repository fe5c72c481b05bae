// SPDX-License-Identifier: MIT
/*
 * map_hash.c - hash, percpu_hash, lru_hash, lru_percpu_hash, hash_of_maps.
 *
 * Design, after the kernel's preallocated htab:
 * - every element comes from a pool allocated at create time and goes back
 *   to a free list on delete; memory is never unmapped while the map lives;
 * - buckets are singly linked lists whose end is a "nulls" marker encoding
 *   the bucket number.  Readers walk them with acquire loads and no lock;
 *   if an element they stand on was recycled into another bucket they end
 *   on a foreign marker and restart (hlist_nulls);
 * - writers take the bucket's spin lock; the free list has its own lock;
 * - updates of an existing key in a non-per-CPU map link a fresh element
 *   before unlinking the old one, so a reader sees the old or the new
 *   value, never a half-written one (per-CPU values are updated in place,
 *   as the kernel does);
 * - LRU maps evict with a clock sweep over the pool: lookups set a
 *   reference bit, the sweep clears it and evicts elements found unset.
 *   Like the kernel's LRU this is an approximation.
 */
#include <stdlib.h>
#include <time.h>

#include "core_impl.h"

struct htab_elem {
	_Atomic uintptr_t next; /* element pointer, or nulls marker (bit 0 set) */
	struct htab_elem *free_next;
	uint32_t hash;
	_Atomic uint8_t linked;
	_Atomic uint8_t ref;
	uint8_t pad[2];
	uint8_t key[]; /* key rounded up to 8, then the value(s) */
};

struct htab_bucket {
	_Atomic uintptr_t head;
	xbpf_spinlock_t lock;
};

struct htab {
	struct htab_bucket *buckets;
	uint32_t n_buckets; /* power of two */
	uint32_t key_stride;
	size_t elem_size;
	uint8_t *pool;
	uint32_t pool_cnt;
	_Atomic uint32_t pool_used; /* elements ever handed out; grows under free_lock */
	xbpf_spinlock_t free_lock;
	struct htab_elem *free_head;
	_Atomic int32_t count;
	_Atomic uint32_t clock_hand;
	bool lru;
	uint64_t seed;
};

#define NULLS(b) (((uintptr_t)(b) << 1) | 1)
/*
 * End of a chain: a nulls marker, or 0 for a bucket never written (so that
 * creating a big map touches no bucket memory).  Elements never hold 0.
 */
#define IS_NULLS(p) (((p) & 1) || !(p))

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return w;
}

/* 0..7 bytes into a word, zero-extended, with fixed-size loads (no memcpy call). */
static inline uint64_t load_tail(const uint8_t *p, uint32_t n)
{
	uint64_t w = 0;
	uint32_t shift = 0;

	if (n & 4) {
		uint32_t x;

		memcpy(&x, p, 4);
		w = x;
		p += 4;
		shift = 32;
	}
	if (n & 2) {
		uint16_t x;

		memcpy(&x, p, 2);
		w |= (uint64_t)x << shift;
		p += 2;
		shift += 16;
	}
	if (n & 1)
		w |= (uint64_t)*p << shift;
	return w;
}

/*
 * Multiply-fold: the 128-bit product's halves xor'ed.  One multiply mixes
 * 16 key bytes, so a 40-byte flow key costs three instead of the six
 * dependent mix64() rounds a word-at-a-time hash needs.
 */
static inline uint64_t mul_fold(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	return mix64(a ^ mix64(b));
#endif
}

#define HK0 0xa0761d6478bd642full
#define HK1 0xe7037ed1a0b428dbull
#define HK2 0x8ebc6af09c88c6e3ull
#define HK3 0x589965cc75374cc3ull

/*
 * Keyed by the map's random seed (so chains cannot be aimed at from the
 * wire), inlined so that the common key sizes become straight-line code.
 */
static inline __attribute__((always_inline)) uint32_t htab_hash(const struct htab *h, const void *key,
								uint32_t len)
{
	const uint8_t *p = key;
	uint64_t acc = h->seed ^ ((uint64_t)len * HK0);
	uint32_t n = len;

	while (n >= 16) {
		acc = mul_fold(load64(p) ^ HK1 ^ acc, load64(p + 8) ^ HK2);
		p += 16;
		n -= 16;
	}
	if (n >= 8)
		acc = mul_fold(load64(p) ^ HK1 ^ acc, load_tail(p + 8, n - 8) ^ HK2);
	else if (n)
		acc = mul_fold(load_tail(p, n) ^ HK1 ^ acc, HK2);
	return (uint32_t)mul_fold(acc ^ HK3, (acc >> 29) ^ HK0 ^ len);
}

/* Key equality without a libc call: whole words, then the tail. */
static inline bool key_eq(const uint8_t *a, const uint8_t *b, uint32_t len)
{
	uint64_t diff = 0;

	while (len >= 8) {
		diff |= load64(a) ^ load64(b);
		a += 8;
		b += 8;
		len -= 8;
	}
	if (len)
		diff |= load_tail(a, len) ^ load_tail(b, len);
	return !diff;
}

static struct htab_elem *pool_elem(const struct htab *h, uint32_t i)
{
	return (struct htab_elem *)(h->pool + (size_t)i * h->elem_size);
}

static uint8_t *elem_value(const struct htab *h, struct htab_elem *e)
{
	return e->key + h->key_stride;
}

static bool is_lru(enum xbpf_map_type t)
{
	return t == XBPF_MAP_LRU_HASH || t == XBPF_MAP_LRU_PERCPU_HASH;
}

static int htab_alloc(struct xbpf_map *map)
{
	struct htab *h = calloc(1, sizeof(*h));
	uint32_t extra;

	if (!h)
		return -ENOMEM;
	h->lru = is_lru(map->spec.type);
	h->n_buckets = 1;
	while (h->n_buckets < map->spec.max_entries && h->n_buckets < (1u << 30))
		h->n_buckets <<= 1;
	h->key_stride = XBPF_ROUND_UP(map->spec.key_size, 8);
	h->elem_size = sizeof(struct htab_elem) + h->key_stride + (size_t)map->stride * map->cpu_vals;
	/*
	 * Spare elements let an update of an existing key swap in a new
	 * element even in a full map (the kernel's extra_elems).
	 */
	extra = h->lru ? 0 : (uint32_t)map->nr_cpus + 1;
	h->pool_cnt = map->spec.max_entries + extra;
	h->buckets = calloc(h->n_buckets, sizeof(*h->buckets));
	h->pool = calloc(h->pool_cnt, h->elem_size);
	if (!h->buckets || !h->pool) {
		free(h->buckets);
		free(h->pool);
		free(h);
		return -ENOMEM;
	}
	/* the pool is handed out front to back (never-used memory stays untouched), then recycled */
	if (map->spec.map_flags & BPF_F_ZERO_SEED) {
		h->seed = 0;
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		h->seed = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uintptr_t)h);
	}
	map->priv = h;
	return 0;
}

static void htab_free(struct xbpf_map *map)
{
	struct htab *h = map->priv;

	free(h->buckets);
	free(h->pool);
	free(h);
}

static struct htab_elem *free_pop(struct htab *h)
{
	struct htab_elem *e;

	xbpf_spin_lock(&h->free_lock);
	e = h->free_head;
	if (e)
		h->free_head = e->free_next;
	else if (atomic_load_explicit(&h->pool_used, memory_order_relaxed) < h->pool_cnt)
		e = pool_elem(h, atomic_fetch_add_explicit(&h->pool_used, 1, memory_order_relaxed));
	xbpf_spin_unlock(&h->free_lock);
	return e;
}

static void free_push(struct htab *h, struct htab_elem *e)
{
	xbpf_spin_lock(&h->free_lock);
	e->free_next = h->free_head;
	h->free_head = e;
	xbpf_spin_unlock(&h->free_lock);
}

/* Lock-free lookup; restarts when the walk ends in another bucket. */
static struct htab_elem *htab_find(struct xbpf_map *map, const void *key, uint32_t hash)
{
	struct htab *h = map->priv;
	uint32_t b = hash & (h->n_buckets - 1);
	int tries;

	for (tries = 0; tries < 16; tries++) {
		uintptr_t p = atomic_load_explicit(&h->buckets[b].head, memory_order_acquire);

		while (!IS_NULLS(p)) {
			struct htab_elem *e = (struct htab_elem *)p;

			if (e->hash == hash && key_eq(e->key, key, map->spec.key_size))
				return e;
			p = atomic_load_explicit(&e->next, memory_order_acquire);
		}
		if (p == NULLS(b) || !p)
			return NULL;
	}
	return NULL;
}

static void *htab_lookup_raw(struct xbpf_map *map, const void *key)
{
	struct htab *h = map->priv;
	struct htab_elem *e = htab_find(map, key, htab_hash(h, key, map->spec.key_size));

	if (!e)
		return NULL;
	if (h->lru && !atomic_load_explicit(&e->ref, memory_order_relaxed))
		atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
	return elem_value(h, e);
}

/* Under the bucket lock: find key and the link pointing at it. */
static struct htab_elem *bucket_find_locked(struct xbpf_map *map, struct htab_bucket *bkt,
					    const void *key, uint32_t hash,
					    _Atomic uintptr_t **ret_link)
{
	_Atomic uintptr_t *link = &bkt->head;
	uintptr_t p;

	while (!IS_NULLS(p = atomic_load_explicit(link, memory_order_relaxed))) {
		struct htab_elem *e = (struct htab_elem *)p;

		if (e->hash == hash && key_eq(e->key, key, map->spec.key_size)) {
			*ret_link = link;
			return e;
		}
		link = &e->next;
	}
	return NULL;
}

/* Unlink an element whose link (under the bucket lock) is known. */
static void unlink_elem(_Atomic uintptr_t *link, struct htab_elem *e)
{
	atomic_store_explicit(link, atomic_load_explicit(&e->next, memory_order_relaxed),
			      memory_order_release);
	atomic_store_explicit(&e->linked, 0, memory_order_relaxed);
}

/* LRU: take an element from the pool, evicting the coldest we find. */
static struct htab_elem *lru_get_elem(struct xbpf_map *map)
{
	struct htab *h = map->priv;
	struct htab_elem *e = free_pop(h);
	uint32_t i, limit = 2 * h->pool_cnt + 8;

	for (i = 0; !e && i < limit; i++) {
		uint32_t idx = atomic_fetch_add_explicit(&h->clock_hand, 1, memory_order_relaxed) %
			       h->pool_cnt;

		if (idx >= atomic_load_explicit(&h->pool_used, memory_order_relaxed))
			continue;
		struct htab_elem *cand = pool_elem(h, idx);
		struct htab_bucket *bkt;
		_Atomic uintptr_t *link;
		uintptr_t p;

		if (!atomic_load_explicit(&cand->linked, memory_order_relaxed))
			continue;
		if (atomic_exchange_explicit(&cand->ref, 0, memory_order_relaxed))
			continue; /* recently used: second chance */
		bkt = &h->buckets[cand->hash & (h->n_buckets - 1)];
		xbpf_spin_lock(&bkt->lock);
		link = &bkt->head;
		while (!IS_NULLS(p = atomic_load_explicit(link, memory_order_relaxed)) &&
		       (struct htab_elem *)p != cand)
			link = &((struct htab_elem *)p)->next;
		if (!IS_NULLS(p)) {
			unlink_elem(link, cand);
			atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
			e = cand;
		}
		xbpf_spin_unlock(&bkt->lock);
	}
	return e;
}

static void fill_elem(struct xbpf_map *map, struct htab_elem *e, const void *key, uint32_t hash,
		      const void *value, int cpu)
{
	struct htab *h = map->priv;
	uint8_t *val = elem_value(h, e);
	uint32_t c;

	e->hash = hash;
	memcpy(e->key, key, map->spec.key_size);
	atomic_store_explicit(&e->ref, 0, memory_order_relaxed);
	if (!map->percpu) {
		memcpy(val, value, map->val_size);
		return;
	}
	for (c = 0; c < map->cpu_vals; c++) {
		uint8_t *dst = val + (size_t)c * map->stride;

		if (cpu < 0) {
			memcpy(dst, (const uint8_t *)value + (size_t)c * map->stride, map->stride);
		} else {
			memset(dst, 0, map->stride);
			if ((int)c == cpu)
				memcpy(dst, value, map->val_size);
		}
	}
}

static void update_in_place(struct xbpf_map *map, struct htab_elem *e, const void *value, int cpu)
{
	struct htab *h = map->priv;
	uint8_t *val = elem_value(h, e);

	if (!map->percpu) {
		memcpy(val, value, map->val_size);
		return;
	}
	if (cpu >= 0) {
		memcpy(val + (size_t)cpu * map->stride, value, map->val_size);
		return;
	}
	memcpy(val, value, (size_t)map->cpu_vals * map->stride); /* padding too, as the kernel */
}

static void link_head(struct htab *h, struct htab_bucket *bkt, struct htab_elem *e)
{
	uintptr_t head = atomic_load_explicit(&bkt->head, memory_order_relaxed);

	atomic_store_explicit(&e->next, head ? head : NULLS(bkt - h->buckets), memory_order_relaxed);
	atomic_store_explicit(&e->linked, 1, memory_order_relaxed);
	atomic_store_explicit(&bkt->head, (uintptr_t)e, memory_order_release);
}

static int htab_update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags,
		       int cpu)
{
	struct htab *h = map->priv;
	uint32_t hash = htab_hash(h, key, map->spec.key_size);
	struct htab_bucket *bkt = &h->buckets[hash & (h->n_buckets - 1)];
	struct htab_elem *old, *e = NULL;
	_Atomic uintptr_t *link = NULL;
	int err = 0;

	/* LRU takes its element first: eviction locks other buckets */
	if (h->lru && !(map->percpu && flags == XBPF_EXIST)) {
		e = lru_get_elem(map);
		if (!e)
			return -ENOMEM;
	}
	xbpf_spin_lock(&bkt->lock);
	old = bucket_find_locked(map, bkt, key, hash, &link);
	if (old && flags == XBPF_NOEXIST) {
		err = -EEXIST;
		goto unlock;
	}
	if (!old && flags == XBPF_EXIST) {
		err = -ENOENT;
		goto unlock;
	}
	if (old && map->percpu) {
		update_in_place(map, old, value, cpu);
		goto unlock;
	}
	if (!old && !h->lru) {
		if (atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed) >=
		    (int32_t)map->spec.max_entries) {
			atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
			err = -E2BIG;
			goto unlock;
		}
		e = free_pop(h);
		if (!e) { /* cannot happen: pool > max_entries */
			atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
			err = -E2BIG;
			goto unlock;
		}
	} else if (old && !h->lru) {
		e = free_pop(h);
		if (!e) {
			/* every spare in flight: fall back to copying in place */
			update_in_place(map, old, value, cpu);
			goto unlock;
		}
	}
	fill_elem(map, e, key, hash, value, cpu);
	link_head(h, bkt, e);
	e = NULL;
	if (old) {
		/* link points at old, or at the new head's next if old was the head */
		if (atomic_load_explicit(link, memory_order_relaxed) != (uintptr_t)old)
			link = &((struct htab_elem *)atomic_load_explicit(&bkt->head,
									    memory_order_relaxed))
					->next;
		unlink_elem(link, old);
		xbpf_spin_unlock(&bkt->lock);
		free_push(h, old);
		return 0;
	}
	if (h->lru)
		atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
unlock:
	xbpf_spin_unlock(&bkt->lock);
	if (e)
		free_push(h, e);
	return err;
}

static int htab_delete(struct xbpf_map *map, const void *key)
{
	struct htab *h = map->priv;
	uint32_t hash = htab_hash(h, key, map->spec.key_size);
	struct htab_bucket *bkt = &h->buckets[hash & (h->n_buckets - 1)];
	_Atomic uintptr_t *link;
	struct htab_elem *e;

	xbpf_spin_lock(&bkt->lock);
	e = bucket_find_locked(map, bkt, key, hash, &link);
	if (!e) {
		xbpf_spin_unlock(&bkt->lock);
		return -ENOENT;
	}
	unlink_elem(link, e);
	atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
	xbpf_spin_unlock(&bkt->lock);
	free_push(h, e);
	return 0;
}

/* Order: bucket by bucket, chain order inside a bucket, like the kernel. */
static int htab_get_next_key(struct xbpf_map *map, const void *key, void *next_key)
{
	struct htab *h = map->priv;
	uint32_t b = 0;

	if (key) {
		uint32_t hash = htab_hash(h, key, map->spec.key_size);
		struct htab_elem *e = htab_find(map, key, hash);

		if (e) {
			uintptr_t p = atomic_load_explicit(&e->next, memory_order_acquire);

			if (!IS_NULLS(p)) {
				memcpy(next_key, ((struct htab_elem *)p)->key, map->spec.key_size);
				return 0;
			}
			b = (hash & (h->n_buckets - 1)) + 1;
		}
	}
	for (; b < h->n_buckets; b++) {
		uintptr_t p = atomic_load_explicit(&h->buckets[b].head, memory_order_acquire);

		if (!IS_NULLS(p)) {
			memcpy(next_key, ((struct htab_elem *)p)->key, map->spec.key_size);
			return 0;
		}
	}
	return -ENOENT;
}

const struct xbpf_map_ops __xbpf_htab_ops = {
	.alloc = htab_alloc,
	.free = htab_free,
	.lookup_raw = htab_lookup_raw,
	.update = htab_update,
	.delete = htab_delete,
	.get_next_key = htab_get_next_key,
};
