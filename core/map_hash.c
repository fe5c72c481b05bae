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
 * - updates of an existing key in a non-per-CPU map put a fresh element in
 *   the old one's place in the chain with one release store (the kernel's
 *   hlist_nulls_replace_rcu), so a reader sees the old or the new value,
 *   never a half-written one, and never misses the key: linking the new
 *   element at the head and then unlinking the old one would let a reader
 *   already past the head lose both (per-CPU values are updated in place,
 *   as the kernel does);
 * - LRU maps evict with a clock sweep over the pool: lookups set a
 *   reference bit, the sweep clears it and evicts elements found unset.
 *   Like the kernel's LRU this is an approximation.
 */
#include <stdlib.h>
#include <time.h>

#include "core_impl.h"

/*
 * Links are byte offsets from the map's storage (map->mem), never pointers,
 * so that processes mapping a shared map at different addresses agree on
 * them (map_shm.c).  No element sits at offset 0: the header comes first.
 */
struct htab_elem {
	_Atomic uint64_t next; /* element offset, or nulls marker (bit 0 set) */
	uint64_t free_next;    /* element offset, 0 ends the free list */
	uint32_t hash;
	_Atomic uint8_t linked;
	_Atomic uint8_t ref;
	uint8_t pad[2];
	uint8_t key[]; /* key rounded up to 8, then the value(s) */
};

struct htab_bucket {
	_Atomic uint64_t head;
	xbpf_spinlock_t lock;
	uint32_t pad;
};

/* The map's state, in its storage area (shared by every process using it). */
struct htab_shared {
	uint32_t n_buckets; /* power of two */
	uint32_t key_stride;
	uint64_t elem_size;
	uint64_t buckets_off, pool_off; /* from the storage */
	uint32_t pool_cnt;
	_Atomic uint32_t pool_used; /* elements ever handed out; grows under free_lock */
	xbpf_spinlock_t free_lock;
	uint32_t lru;
	uint64_t free_head, free_tail; /* FIFO of freed elements */
	_Atomic int32_t count;
	_Atomic uint32_t clock_hand;
	uint64_t seed;
};

/* This process's view: where the storage is, and the constants of its layout. */
struct htab {
	struct htab_shared *s;
	uint8_t *base; /* map->mem: offsets count from here */
	struct htab_bucket *buckets;
	uint8_t *pool;
	uint32_t n_buckets;
	uint32_t key_stride;
	size_t elem_size;
	uint32_t pool_cnt;
	bool lru;
	uint64_t seed;
};

static inline struct htab_elem *elem_at(const struct htab *h, uint64_t off)
{
	return (struct htab_elem *)(h->base + off);
}

static inline uint64_t elem_off(const struct htab *h, const struct htab_elem *e)
{
	return (uint64_t)((const uint8_t *)e - h->base);
}

#define NULLS(b) (((uint64_t)(b) << 1) | 1)
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

/* Layout of the area: the shared state, the buckets, the element pool. */
static void htab_geometry(const struct xbpf_map *map, struct htab_shared *g)
{
	bool lru = is_lru(map->spec.type);

	memset(g, 0, sizeof(*g));
	g->lru = lru;
	g->n_buckets = 1;
	while (g->n_buckets < map->spec.max_entries && g->n_buckets < (1u << 30))
		g->n_buckets <<= 1;
	g->key_stride = XBPF_ROUND_UP(map->spec.key_size, 8);
	g->elem_size = sizeof(struct htab_elem) + g->key_stride + (size_t)map->stride * map->cpu_vals;
	/*
	 * Spare elements let an update of an existing key swap in a new
	 * element even in a full map (the kernel's extra_elems).
	 */
	g->pool_cnt = map->spec.max_entries + (lru ? 0 : (uint32_t)map->nr_cpus + 1);
	g->buckets_off = XBPF_MAP_HDR_SIZE + XBPF_ROUND_UP(sizeof(struct htab_shared), 64);
	g->pool_off = g->buckets_off + XBPF_ROUND_UP((uint64_t)g->n_buckets * sizeof(struct htab_bucket), 64);
}

static size_t htab_mem_size(const struct xbpf_map *map)
{
	struct htab_shared g;

	htab_geometry(map, &g);
	return g.pool_off - XBPF_MAP_HDR_SIZE + (size_t)g.pool_cnt * g.elem_size;
}

static int htab_init(struct xbpf_map *map, bool fresh)
{
	struct htab_shared *s = (struct htab_shared *)map->area, g;
	struct htab *h;

	htab_geometry(map, &g);
	if (fresh) {
		/* the pool is handed out front to back (never-used memory stays untouched), then recycled */
		*s = g;
		if (!(map->spec.map_flags & BPF_F_ZERO_SEED)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			s->seed = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
					(uintptr_t)map->mem);
		}
	} else if (s->n_buckets != g.n_buckets || s->key_stride != g.key_stride ||
		   s->elem_size != g.elem_size || s->buckets_off != g.buckets_off ||
		   s->pool_off != g.pool_off || s->pool_cnt != g.pool_cnt || s->lru != g.lru) {
		return -EPROTO; /* another process laid this area out differently */
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->s = s;
	h->base = map->mem;
	h->buckets = (struct htab_bucket *)(map->mem + g.buckets_off);
	h->pool = map->mem + g.pool_off;
	h->n_buckets = g.n_buckets;
	h->key_stride = g.key_stride;
	h->elem_size = g.elem_size;
	h->pool_cnt = g.pool_cnt;
	h->lru = g.lru;
	h->seed = s->seed;
	map->priv = h;
	return 0;
}

static void htab_free(struct xbpf_map *map)
{
	free(map->priv);
}

/*
 * Never-used elements first, then the oldest freed one: a freed element
 * waits behind every other spare before it is rewritten, so a lock-free
 * reader still holding it (in this process or another) keeps reading the
 * contents it found for as long as possible.  There is no grace period as
 * the kernel's RCU gives: a reader delayed past that many updates may read
 * a recycled element.
 */
static struct htab_elem *free_pop(struct htab *h)
{
	struct htab_shared *s = h->s;
	struct htab_elem *e = NULL;

	xbpf_spin_lock(&s->free_lock);
	if (atomic_load_explicit(&s->pool_used, memory_order_relaxed) < h->pool_cnt) {
		e = pool_elem(h, atomic_fetch_add_explicit(&s->pool_used, 1, memory_order_relaxed));
	} else if (s->free_head) {
		e = elem_at(h, s->free_head);
		s->free_head = e->free_next;
		if (!s->free_head)
			s->free_tail = 0;
	}
	xbpf_spin_unlock(&s->free_lock);
	return e;
}

static void free_push(struct htab *h, struct htab_elem *e)
{
	struct htab_shared *s = h->s;
	uint64_t off = elem_off(h, e);

	xbpf_spin_lock(&s->free_lock);
	e->free_next = 0;
	if (s->free_tail)
		elem_at(h, s->free_tail)->free_next = off;
	else
		s->free_head = off;
	s->free_tail = off;
	xbpf_spin_unlock(&s->free_lock);
}

/*
 * Lock-free lookup; restarts when the walk ends in another bucket.  Inline
 * with the key length as an argument, so that callers with a constant
 * length (the sized lookups below) get straight-line key compares.
 */
static inline __attribute__((always_inline)) struct htab_elem *
htab_find_len(struct xbpf_map *map, const void *key, uint32_t hash, uint32_t len)
{
	struct htab *h = map->priv;
	uint32_t b = hash & (h->n_buckets - 1);
	int tries;

	for (tries = 0; tries < 16; tries++) {
		uint64_t p = atomic_load_explicit(&h->buckets[b].head, memory_order_acquire);

		while (!IS_NULLS(p)) {
			struct htab_elem *e = elem_at(h, p);

			if (e->hash == hash && key_eq(e->key, key, len))
				return e;
			p = atomic_load_explicit(&e->next, memory_order_acquire);
		}
		if (p == NULLS(b) || !p)
			return NULL;
	}
	return NULL;
}

static struct htab_elem *htab_find(struct xbpf_map *map, const void *key, uint32_t hash)
{
	return htab_find_len(map, key, hash, map->spec.key_size);
}

static inline __attribute__((always_inline)) void *htab_lookup_len(struct xbpf_map *map, const void *key,
								   uint32_t len)
{
	struct htab *h = map->priv;
	struct htab_elem *e = htab_find_len(map, key, htab_hash(h, key, len), len);

	if (!e)
		return NULL;
	if (h->lru && !atomic_load_explicit(&e->ref, memory_order_relaxed))
		atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
	return elem_value(h, e);
}

static void *htab_lookup_raw(struct xbpf_map *map, const void *key)
{
	return htab_lookup_len(map, key, map->spec.key_size);
}

/* bpf_map_lookup_elem() of a hash family map with a key of len bytes. */
static inline __attribute__((always_inline)) uint64_t htab_lookup_prog(uint64_t map, uint64_t key,
									uint32_t len)
{
	struct xbpf_map *m = (struct xbpf_map *)(uintptr_t)map;
	uint8_t *raw = htab_lookup_len(m, (const void *)(uintptr_t)key, len);

	if (raw && m->percpu)
		raw += (size_t)__xbpf_map_cpu(m) * m->stride;
	return (uintptr_t)raw;
}

static uint64_t htab_lookup_fn(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4, uint64_t a5)
{
	(void)a3, (void)a4, (void)a5;
	return htab_lookup_prog(map, key, ((struct xbpf_map *)(uintptr_t)map)->spec.key_size);
}

/* The same for the commonest key sizes, each compiled with its size constant. */
#define SIZED_LOOKUPS(X) X(4) X(8) X(12) X(16) X(20) X(24) X(32) X(36) X(40) X(48) X(64)
#define SIZED_LOOKUP(N)                                                                            \
	static uint64_t htab_lookup_fn_##N(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4,  \
					   uint64_t a5)                                            \
	{                                                                                          \
		(void)a3, (void)a4, (void)a5;                                                      \
		return htab_lookup_prog(map, key, N);                                              \
	}
SIZED_LOOKUPS(SIZED_LOOKUP)

xbpf_helper_fn __xbpf_htab_lookup_fn(const struct xbpf_map *map)
{
	switch (map->spec.key_size) {
#define SIZED_CASE(N)                                                                              \
	case N:                                                                                    \
		return htab_lookup_fn_##N;
		SIZED_LOOKUPS(SIZED_CASE)
	}
	return htab_lookup_fn;
}

/* Under the bucket lock: find key and the link pointing at it. */
static struct htab_elem *bucket_find_locked(struct xbpf_map *map, struct htab_bucket *bkt,
					    const void *key, uint32_t hash,
					    _Atomic uint64_t **ret_link)
{
	const struct htab *h = map->priv;
	_Atomic uint64_t *link = &bkt->head;
	uint64_t p;

	while (!IS_NULLS(p = atomic_load_explicit(link, memory_order_relaxed))) {
		struct htab_elem *e = elem_at(h, p);

		if (e->hash == hash && key_eq(e->key, key, map->spec.key_size)) {
			*ret_link = link;
			return e;
		}
		link = &e->next;
	}
	return NULL;
}

/* Unlink an element whose link (under the bucket lock) is known. */
static void unlink_elem(_Atomic uint64_t *link, struct htab_elem *e)
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
		uint32_t idx = atomic_fetch_add_explicit(&h->s->clock_hand, 1, memory_order_relaxed) %
			       h->pool_cnt;

		if (idx >= atomic_load_explicit(&h->s->pool_used, memory_order_relaxed))
			continue;
		struct htab_elem *cand = pool_elem(h, idx);
		struct htab_bucket *bkt;
		_Atomic uint64_t *link;
		uint64_t p;

		if (!atomic_load_explicit(&cand->linked, memory_order_relaxed))
			continue;
		if (atomic_exchange_explicit(&cand->ref, 0, memory_order_relaxed))
			continue; /* recently used: second chance */
		bkt = &h->buckets[cand->hash & (h->n_buckets - 1)];
		xbpf_spin_lock(&bkt->lock);
		link = &bkt->head;
		while (!IS_NULLS(p = atomic_load_explicit(link, memory_order_relaxed)) &&
		       elem_at(h, p) != cand)
			link = &elem_at(h, p)->next;
		if (!IS_NULLS(p)) {
			unlink_elem(link, cand);
			atomic_fetch_sub_explicit(&h->s->count, 1, memory_order_relaxed);
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
		__xbpf_value_write(map, val, value, true);
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
		__xbpf_value_write(map, val, value, false);
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
	uint64_t head = atomic_load_explicit(&bkt->head, memory_order_relaxed);

	atomic_store_explicit(&e->next, head ? head : NULLS(bkt - h->buckets), memory_order_relaxed);
	atomic_store_explicit(&e->linked, 1, memory_order_relaxed);
	atomic_store_explicit(&bkt->head, elem_off(h, e), memory_order_release);
}

/*
 * Under the bucket lock: e takes old's place, link (which points at old)
 * is switched in one release store.  A reader on either side of the store
 * walks on to old's successor, so every other key of the chain stays
 * reachable, and the key itself is found, old or new.  old keeps its next
 * link until it is recycled.
 */
static void replace_elem(struct htab *h, _Atomic uint64_t *link, struct htab_elem *old, struct htab_elem *e)
{
	atomic_store_explicit(&e->next, atomic_load_explicit(&old->next, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&e->linked, 1, memory_order_relaxed);
	atomic_store_explicit(link, elem_off(h, e), memory_order_release);
	atomic_store_explicit(&old->linked, 0, memory_order_relaxed);
}

static int htab_update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags,
		       int cpu)
{
	struct htab *h = map->priv;
	uint32_t hash = htab_hash(h, key, map->spec.key_size);
	struct htab_bucket *bkt = &h->buckets[hash & (h->n_buckets - 1)];
	struct htab_elem *old, *e = NULL;
	_Atomic uint64_t *link = NULL;
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
		if (atomic_fetch_add_explicit(&h->s->count, 1, memory_order_relaxed) >=
		    (int32_t)map->spec.max_entries) {
			atomic_fetch_sub_explicit(&h->s->count, 1, memory_order_relaxed);
			err = -E2BIG;
			goto unlock;
		}
		e = free_pop(h);
		if (!e) { /* cannot happen: pool > max_entries */
			atomic_fetch_sub_explicit(&h->s->count, 1, memory_order_relaxed);
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
	if (old) {
		replace_elem(h, link, old, e);
		xbpf_spin_unlock(&bkt->lock);
		free_push(h, old);
		return 0;
	}
	link_head(h, bkt, e);
	e = NULL;
	if (h->lru)
		atomic_fetch_add_explicit(&h->s->count, 1, memory_order_relaxed);
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
	_Atomic uint64_t *link;
	struct htab_elem *e;

	xbpf_spin_lock(&bkt->lock);
	e = bucket_find_locked(map, bkt, key, hash, &link);
	if (!e) {
		xbpf_spin_unlock(&bkt->lock);
		return -ENOENT;
	}
	unlink_elem(link, e);
	atomic_fetch_sub_explicit(&h->s->count, 1, memory_order_relaxed);
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
			uint64_t p = atomic_load_explicit(&e->next, memory_order_acquire);

			if (!IS_NULLS(p)) {
				memcpy(next_key, elem_at(h, p)->key, map->spec.key_size);
				return 0;
			}
			b = (hash & (h->n_buckets - 1)) + 1;
		}
	}
	for (; b < h->n_buckets; b++) {
		uint64_t p = atomic_load_explicit(&h->buckets[b].head, memory_order_acquire);

		if (!IS_NULLS(p)) {
			memcpy(next_key, elem_at(h, p)->key, map->spec.key_size);
			return 0;
		}
	}
	return -ENOENT;
}

const struct xbpf_map_ops __xbpf_htab_ops = {
	.shareable = true,
	.mem_size = htab_mem_size,
	.init = htab_init,
	.free = htab_free,
	.lookup_raw = htab_lookup_raw,
	.update = htab_update,
	.delete = htab_delete,
	.get_next_key = htab_get_next_key,
};
