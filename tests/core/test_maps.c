// SPDX-License-Identifier: MIT
/*
 * test_maps.c - map semantics per type, against the bpf(2) rules and naive
 * references.  `test_maps shared` runs every case again over shared storage
 * (xbpf_map__open_shared) for the types that can be shared.
 */
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "xbpf.h"
#include "testutil.h"

/* Shared mode: the directory the maps' files are created in. */
static const char *shm_dir;

static struct xbpf_map *mk(enum xbpf_map_type type, uint32_t ks, uint32_t vs, uint32_t max,
			   uint32_t flags, int nr_cpus)
{
	struct xbpf_map_spec spec = { .type = type, .key_size = ks, .value_size = vs,
				      .max_entries = max, .map_flags = flags };

	snprintf(spec.name, sizeof(spec.name), "%s", xbpf_map_type_name(type));
	if (shm_dir) {
		static unsigned int seq;
		struct xbpf_map *map;
		char path[512];

		snprintf(path, sizeof(path), "%s/%s.%u", shm_dir, spec.name, seq++);
		map = xbpf_map__open_shared(path, &spec, nr_cpus);
		/* the mapping stays valid without its name */
		if (map) {
			CHECK(xbpf_map__is_shared(map) && !xbpf_map__reattached(map));
			unlink(path);
		}
		return map;
	}
	return xbpf_map__create(&spec, nr_cpus);
}

static void test_spec_validation(void)
{
	struct xbpf_map_spec inner = { .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 4,
				       .max_entries = 1 };
	struct xbpf_map_spec outer = { .type = XBPF_MAP_ARRAY_OF_MAPS, .key_size = 4, .value_size = 4,
				       .max_entries = 4 };

	CHECK(!mk(XBPF_MAP_ARRAY, 4, 0, 1, 0, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_ARRAY, 8, 4, 1, 0, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_ARRAY, 4, 4, 0, 0, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_HASH, 0, 4, 1, 0, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_HASH, 513, 4, 1, 0, 1) && errno == E2BIG);
	/* key_size * max_entries overflowing 64 bits and absurd totals */
	CHECK(!mk(XBPF_MAP_HASH, 512, 0xffffffffu, 0xffffffffu, 0, 1) && errno == E2BIG);
	CHECK(!mk(XBPF_MAP_ARRAY, 4, 1u << 20, 1u << 20, 0, 1) && errno == E2BIG);
	CHECK(!mk(XBPF_MAP_PERCPU_ARRAY, 4, 40000, 1, 0, 2) && errno == E2BIG);
	CHECK(!mk(XBPF_MAP_LPM_TRIE, 8, 4, 16, 0, 1) && errno == EINVAL); /* needs NO_PREALLOC */
	CHECK(!mk(XBPF_MAP_LPM_TRIE, 4, 4, 16, 1, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_RINGBUF, 0, 0, 4096 + 1, 0, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_RINGBUF, 4, 0, 4096, 0, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_DEVMAP, 4, 6, 4, 0, 1) && errno == EINVAL);
	CHECK(!mk(XBPF_MAP_HASH, 4, 4, 4, 0x80000000u, 1) && errno == EINVAL);
	CHECK(!xbpf_map__create(&outer, 1) && errno == EINVAL); /* no inner spec */
	CHECK(!xbpf_map__create(&inner, -1) && errno == EINVAL);
	CHECK(!xbpf_map__create(NULL, 1) && errno == EINVAL);

	enum xbpf_map_type t;
	CHECK(!xbpf_map_type_from_name("lru_percpu_hash", &t) && t == XBPF_MAP_LRU_PERCPU_HASH);
	CHECK(xbpf_map_type_from_name("nope", &t) == -EINVAL);
}

static void test_array(void)
{
	struct xbpf_map *m = mk(XBPF_MAP_ARRAY, 4, 12, 4, 0, 1);
	uint32_t k, next, v[3] = { 1, 2, 3 }, out[3];

	CHECK(m);
	k = 3;
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_ANY), 0);
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_NOEXIST), -EEXIST);
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_EXIST), 0);
	CHECK_EQ(xbpf_map__update(m, &k, v, 7), -EINVAL);
	CHECK_EQ(xbpf_map__lookup(m, &k, out), 0);
	CHECK(!memcmp(out, v, sizeof(v)));
	k = 4;
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_ANY), -E2BIG);
	CHECK_EQ(xbpf_map__lookup(m, &k, out), -ENOENT);
	CHECK(!xbpf_map__lookup_elem(m, &k));
	CHECK_EQ(xbpf_map__delete(m, &k), -EINVAL);
	k = 0;
	CHECK_EQ(xbpf_map__delete(m, &k), -EINVAL);
	/* zero-initialised, directly writable through the program's pointer */
	uint32_t *p = xbpf_map__lookup_elem(m, &k);
	CHECK(p && p[0] == 0 && p[2] == 0);
	p[1] = 77;
	CHECK_EQ(xbpf_map__lookup(m, &k, out), 0);
	CHECK_EQ(out[1], 77);
	/* get_next_key: NULL or out-of-range -> 0, then in order, ENOENT at the end */
	CHECK_EQ(xbpf_map__get_next_key(m, NULL, &next), 0);
	CHECK_EQ(next, 0);
	k = 100;
	CHECK_EQ(xbpf_map__get_next_key(m, &k, &next), 0);
	CHECK_EQ(next, 0);
	k = 2;
	CHECK_EQ(xbpf_map__get_next_key(m, &k, &next), 0);
	CHECK_EQ(next, 3);
	k = 3;
	CHECK_EQ(xbpf_map__get_next_key(m, &k, &next), -ENOENT);
	xbpf_map__free(m);
}

static void test_percpu_array(void)
{
	struct xbpf_map *m = mk(XBPF_MAP_PERCPU_ARRAY, 4, 4, 2, 0, 4);
	uint64_t vals[4] = { 0x1111111100000010ull, 20, 30, 40 }, out[4];
	uint32_t k = 1, *p;
	int c;

	CHECK(m);
	CHECK_EQ(xbpf_map__nr_cpus(m), 4);
	/* syscall layout: one 8-byte slot per CPU, padding round-tripped as the kernel does */
	CHECK_EQ(xbpf_map__update(m, &k, vals, XBPF_ANY), 0);
	memset(out, 0xff, sizeof(out));
	CHECK_EQ(xbpf_map__lookup(m, &k, out), 0);
	CHECK_EQ(out[0], 0x1111111100000010ull);
	CHECK_EQ(out[3], 40);
	for (c = 0; c < 4; c++) {
		xbpf_set_cpu(c);
		p = xbpf_map__lookup_elem(m, &k);
		CHECK(p && *p == (uint32_t)(c + 1) * 10 + (c == 0 ? 6 : 0));
	}
	/* a program's update only touches its CPU's value */
	xbpf_set_cpu(2);
	xbpf_helper_fn upd = xbpf_helper_impl(2);
	uint32_t nv = 99;
	CHECK(upd && upd((uintptr_t)m, (uintptr_t)&k, (uintptr_t)&nv, 0, 0) == 0);
	CHECK_EQ(xbpf_map__lookup(m, &k, out), 0);
	CHECK_EQ(out[2], 99);
	CHECK_EQ(out[1], 20);
	xbpf_set_cpu(0);
	xbpf_map__free(m);
}

static void test_hash(enum xbpf_map_type type)
{
	const uint32_t max = 64;
	struct xbpf_map *m = mk(type, 8, 8, max, 0, 2);
	bool percpu = type == XBPF_MAP_PERCPU_HASH;
	uint64_t k, v[2], out[2], next;
	uint32_t i, seen = 0;
	bool found[64] = { false };

	CHECK(m);
	for (i = 0; i < max; i++) {
		k = i * 7919;
		v[0] = v[1] = i;
		CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_NOEXIST), 0);
	}
	k = 12345678;
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_ANY), -E2BIG);
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_EXIST), -ENOENT);
	/* full map: updating an existing key still works */
	k = 7919;
	v[0] = v[1] = 1000;
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_EXIST), 0);
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_NOEXIST), -EEXIST);
	CHECK_EQ(xbpf_map__lookup(m, &k, out), 0);
	CHECK_EQ(out[0], 1000);
	if (percpu)
		CHECK_EQ(out[1], 1000);
	uint64_t *p = xbpf_map__lookup_elem(m, &k);
	CHECK(p && *p == 1000);
	/* iterate: every key exactly once */
	CHECK_EQ(xbpf_map__get_next_key(m, NULL, &next), 0);
	do {
		CHECK(next % 7919 == 0 && next / 7919 < max);
		if (next % 7919 == 0 && next / 7919 < max) {
			CHECK(!found[next / 7919]);
			found[next / 7919] = true;
		}
		seen++;
		k = next;
	} while (xbpf_map__get_next_key(m, &k, &next) == 0 && seen <= max);
	CHECK_EQ(seen, max);
	/* delete, then the slot is free again */
	k = 0;
	CHECK_EQ(xbpf_map__delete(m, &k), 0);
	CHECK_EQ(xbpf_map__delete(m, &k), -ENOENT);
	CHECK(!xbpf_map__lookup_elem(m, &k));
	k = 12345678;
	CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_ANY), 0);
	/* unknown key: get_next_key restarts from the first key */
	k = 99999999;
	CHECK_EQ(xbpf_map__get_next_key(m, &k, &next), 0);
	/* program-side delete and update */
	xbpf_helper_fn del = xbpf_helper_impl(3);
	k = 7919 * 2;
	CHECK(del && del((uintptr_t)m, (uintptr_t)&k, 0, 0, 0) == 0);
	CHECK(!xbpf_map__lookup_elem(m, &k));
	xbpf_map__free(m);
}

static void test_lru(enum xbpf_map_type type)
{
	const uint32_t max = 32;
	struct xbpf_map *m = mk(type, 4, 8, max, 0, 2);
	uint32_t k, hot = 1000000, i, present = 0, next;
	uint64_t v[2] = { 5, 5 }, out[2];

	CHECK(m);
	CHECK_EQ(xbpf_map__update(m, &hot, v, XBPF_ANY), 0);
	for (i = 0; i < 10 * max; i++) {
		k = i;
		CHECK(xbpf_map__lookup_elem(m, &hot) != NULL); /* keeps it warm */
		CHECK_EQ(xbpf_map__update(m, &k, v, XBPF_NOEXIST), 0);
	}
	CHECK_EQ(xbpf_map__lookup(m, &hot, out), 0);
	/* the most recent insert is still there; the map never exceeds max_entries */
	k = 10 * max - 1;
	CHECK_EQ(xbpf_map__lookup(m, &k, out), 0);
	k = 0;
	CHECK_EQ(xbpf_map__lookup(m, &k, out), -ENOENT);
	if (xbpf_map__get_next_key(m, NULL, &next) == 0) {
		do {
			present++;
			k = next;
		} while (xbpf_map__get_next_key(m, &k, &next) == 0 && present <= max + 1);
	}
	CHECK(present <= max && present >= max / 2);
	xbpf_map__free(m);
}

struct lpm_key {
	uint32_t prefixlen;
	uint8_t data[4];
};

/* Naive reference: the longest stored prefix covering addr. */
struct ref_entry {
	uint32_t prefixlen;
	uint32_t addr;
	uint32_t val;
	bool used;
};

static uint32_t mask_of(uint32_t plen)
{
	return plen ? ~0u << (32 - plen) : 0;
}

static void test_lpm(void)
{
	const uint32_t max = 200;
	struct xbpf_map *m = mk(XBPF_MAP_LPM_TRIE, 8, 4, max, 1 /* NO_PREALLOC */, 1);
	struct ref_entry ref[200];
	struct lpm_key key;
	uint32_t i, n = 0, val, seed = 12345, cnt = 0;

	CHECK(m);
	memset(ref, 0, sizeof(ref));
	/* fixed cases */
	key = (struct lpm_key){ 8, { 10, 0, 0, 0 } };
	val = 1;
	CHECK_EQ(xbpf_map__update(m, &key, &val, XBPF_ANY), 0);
	key = (struct lpm_key){ 24, { 10, 1, 2, 0 } };
	val = 3;
	CHECK_EQ(xbpf_map__update(m, &key, &val, XBPF_ANY), 0);
	key = (struct lpm_key){ 16, { 10, 1, 0, 0 } };
	val = 2;
	CHECK_EQ(xbpf_map__update(m, &key, &val, XBPF_ANY), 0);
	CHECK_EQ(xbpf_map__update(m, &key, &val, XBPF_NOEXIST), -EEXIST);
	key = (struct lpm_key){ 33, { 10, 1, 0, 0 } };
	CHECK_EQ(xbpf_map__update(m, &key, &val, XBPF_ANY), -EINVAL);
	key = (struct lpm_key){ 32, { 10, 1, 2, 3 } };
	CHECK_EQ(xbpf_map__lookup(m, &key, &val), 0);
	CHECK_EQ(val, 3);
	key = (struct lpm_key){ 32, { 10, 1, 9, 3 } };
	CHECK_EQ(xbpf_map__lookup(m, &key, &val), 0);
	CHECK_EQ(val, 2);
	key = (struct lpm_key){ 32, { 11, 1, 9, 3 } };
	CHECK_EQ(xbpf_map__lookup(m, &key, &val), -ENOENT);
	key = (struct lpm_key){ 16, { 10, 1, 0, 0 } };
	CHECK_EQ(xbpf_map__delete(m, &key), 0);
	CHECK_EQ(xbpf_map__delete(m, &key), -ENOENT);
	key = (struct lpm_key){ 32, { 10, 1, 9, 3 } };
	CHECK_EQ(xbpf_map__lookup(m, &key, &val), 0);
	CHECK_EQ(val, 1);
	key = (struct lpm_key){ 8, { 10, 0, 0, 0 } };
	CHECK_EQ(xbpf_map__delete(m, &key), 0);
	key = (struct lpm_key){ 24, { 10, 1, 2, 0 } };
	CHECK_EQ(xbpf_map__delete(m, &key), 0);

	/* random prefixes in a narrow space (so they nest), against the reference */
	for (i = 0; i < 3000; i++) {
		uint32_t plen, addr, j, best_len = 0, best_val = 0;
		bool best = false;

		seed = seed * 1103515245 + 12345;
		plen = (seed >> 8) % 33;
		seed = seed * 1103515245 + 12345;
		addr = (0xc0a80000u | ((seed >> 4) & 0xffff)) & mask_of(plen);
		key.prefixlen = plen;
		key.data[0] = addr >> 24;
		key.data[1] = addr >> 16;
		key.data[2] = addr >> 8;
		key.data[3] = addr;
		for (j = 0; j < n; j++)
			if (ref[j].used && ref[j].prefixlen == plen && ref[j].addr == addr)
				break;
		if ((seed >> 20) % 3 == 0) {
			int want = j < n ? 0 : -ENOENT;

			CHECK_EQ(xbpf_map__delete(m, &key), want);
			if (j < n) {
				ref[j].used = false;
				cnt--;
			}
		} else {
			int want = (j == n && cnt == max) ? -ENOSPC : 0;

			val = i;
			CHECK_EQ(xbpf_map__update(m, &key, &val, XBPF_ANY), want);
			if (!want) {
				if (j == n) {
					for (j = 0; j < n && ref[j].used; j++)
						;
					if (j == n)
						n++;
					cnt++;
				}
				ref[j] = (struct ref_entry){ plen, addr, val, true };
			}
		}
		/* look a random address up */
		seed = seed * 1103515245 + 12345;
		addr = 0xc0a80000u | ((seed >> 4) & 0xffff);
		for (j = 0; j < n; j++) {
			if (ref[j].used && (addr & mask_of(ref[j].prefixlen)) == ref[j].addr &&
			    (!best || ref[j].prefixlen >= best_len)) {
				best = true;
				best_len = ref[j].prefixlen;
				best_val = ref[j].val;
			}
		}
		key.prefixlen = 32;
		key.data[0] = addr >> 24;
		key.data[1] = addr >> 16;
		key.data[2] = addr >> 8;
		key.data[3] = addr;
		uint32_t *pv = xbpf_map__lookup_elem(m, &key);
		CHECK_EQ(pv != NULL, best);
		if (pv && best)
			CHECK_EQ(*pv, best_val);
	}
	/* get_next_key visits every entry once */
	{
		struct lpm_key cur, next;
		uint32_t visited = 0;

		if (!xbpf_map__get_next_key(m, NULL, &next)) {
			do {
				visited++;
				cur = next;
			} while (!xbpf_map__get_next_key(m, &cur, &next) && visited <= max);
		}
		CHECK_EQ(visited, cnt);
	}
	xbpf_map__free(m);
}

static void test_ringbuf(void)
{
	struct xbpf_map *m = mk(XBPF_MAP_RINGBUF, 0, 0, 4096, 0, 1);
	xbpf_helper_fn out = xbpf_helper_impl(130);
	uint8_t rec[100], buf[200];
	int i, n, produced = 0, consumed = 0;

	CHECK(m && out);
	CHECK_EQ(xbpf_map__ringbuf_consume(m, buf, sizeof(buf)), -EAGAIN);
	/* fill until EAGAIN: 4096 / (8 + 104) = 36 records */
	for (i = 0; i < 100; i++) {
		memset(rec, i, sizeof(rec));
		if ((int64_t)out((uintptr_t)m, (uintptr_t)rec, sizeof(rec), 0, 0) != 0)
			break;
		produced++;
	}
	CHECK_EQ(produced, 4096 / (8 + 104));
	CHECK_EQ((int64_t)out((uintptr_t)m, (uintptr_t)rec, sizeof(rec), 0, 0), -EAGAIN);
	CHECK_EQ(xbpf_map__ringbuf_consume(m, buf, 10), -ENOSPC);
	/* consume half, produce more (wraps), consume everything in order */
	for (i = 0; i < 18; i++) {
		n = xbpf_map__ringbuf_consume(m, buf, sizeof(buf));
		CHECK_EQ(n, 100);
		CHECK_EQ(buf[0], consumed);
		CHECK_EQ(buf[99], consumed);
		consumed++;
	}
	for (i = 0; i < 18; i++) {
		memset(rec, produced, sizeof(rec));
		CHECK_EQ((int64_t)out((uintptr_t)m, (uintptr_t)rec, sizeof(rec), 0, 0), 0);
		produced++;
	}
	while ((n = xbpf_map__ringbuf_consume(m, buf, sizeof(buf))) > 0) {
		CHECK_EQ(buf[0], consumed);
		CHECK_EQ(buf[99], consumed);
		consumed++;
	}
	CHECK_EQ(n, -EAGAIN);
	CHECK_EQ(consumed, produced);
	CHECK_EQ((int64_t)out((uintptr_t)m, (uintptr_t)rec, 10, 4 /* bad flag */, 0), -EINVAL);
	CHECK_EQ(xbpf_map__lookup(m, NULL, buf), -ENOTSUP);
	xbpf_map__free(m);
}

/* Reserved records: the consumer waits at a busy one and skips a discarded one. */
static void test_ringbuf_reserve(void)
{
	struct xbpf_map *m = mk(XBPF_MAP_RINGBUF, 0, 0, 4096, 0, 1);
	xbpf_helper_fn reserve = xbpf_helper_impl(131);
	xbpf_helper_fn submit = xbpf_helper_impl(132);
	xbpf_helper_fn discard = xbpf_helper_impl(133);
	uint8_t *a, *b, buf[64];

	CHECK(m && reserve && submit && discard);
	CHECK(!reserve((uintptr_t)m, 8, 1 /* flags */, 0, 0));
	CHECK(!reserve((uintptr_t)m, 4096 - 8 + 1, 0, 0, 0)); /* larger than the ring */
	a = (uint8_t *)(uintptr_t)reserve((uintptr_t)m, 10, 0, 0, 0);
	b = (uint8_t *)(uintptr_t)reserve((uintptr_t)m, 3, 0, 0, 0);
	CHECK(a && b && b == a + 8 + 16);
	memset(b, 0xbb, 3);
	submit((uintptr_t)b, 0, 0, 0, 0);
	CHECK_EQ(xbpf_map__ringbuf_consume(m, buf, sizeof(buf)), -EAGAIN); /* a is still busy */
	discard((uintptr_t)a, 0, 0, 0, 0);
	CHECK_EQ(xbpf_map__ringbuf_consume(m, buf, sizeof(buf)), 3);
	CHECK(buf[0] == 0xbb && buf[2] == 0xbb);
	CHECK_EQ(xbpf_map__ringbuf_consume(m, buf, sizeof(buf)), -EAGAIN);
	xbpf_map__free(m);
}

static void test_map_in_map(void)
{
	struct xbpf_map_spec inner_spec = { .name = "inner", .type = XBPF_MAP_ARRAY, .key_size = 4,
					    .value_size = 8, .max_entries = 4 };
	struct xbpf_map_spec outer_spec = { .name = "outer", .type = XBPF_MAP_ARRAY_OF_MAPS,
					    .key_size = 4, .value_size = 4, .max_entries = 2,
					    .inner = &inner_spec };
	struct xbpf_map_spec houter_spec = outer_spec;
	struct xbpf_map_spec bad_spec = inner_spec;
	struct xbpf_map *outer, *houter, *inner, *bad;
	uint32_t k = 1, id = 7, out = 0;

	houter_spec.type = XBPF_MAP_HASH_OF_MAPS;
	bad_spec.max_entries = 5;
	outer = xbpf_map__create(&outer_spec, 1);
	houter = xbpf_map__create(&houter_spec, 1);
	inner = xbpf_map__create(&inner_spec, 1);
	bad = xbpf_map__create(&bad_spec, 1);
	CHECK(outer && houter && inner && bad);
	CHECK(xbpf_map__spec(outer)->inner && xbpf_map__spec(outer)->inner->max_entries == 4);
	CHECK_EQ(xbpf_map__set_inner(outer, 8, bad), -EINVAL);
	CHECK_EQ(xbpf_map__set_inner(outer, id, inner), 0);
	CHECK_EQ(xbpf_map__set_inner(houter, id, inner), 0);
	CHECK_EQ(xbpf_map__lookup(outer, &k, &out), -ENOENT);
	CHECK(!xbpf_map__lookup_elem(outer, &k));
	out = 8;
	CHECK_EQ(xbpf_map__update(outer, &k, &out, XBPF_ANY), -EBADF);
	CHECK_EQ(xbpf_map__update(outer, &k, &id, XBPF_ANY), 0);
	CHECK_EQ(xbpf_map__lookup(outer, &k, &out), 0);
	CHECK_EQ(out, id);
	CHECK(xbpf_map__lookup_elem(outer, &k) == (void *)inner);
	CHECK_EQ(xbpf_map__update(houter, &k, &id, XBPF_ANY), 0);
	CHECK(xbpf_map__lookup_elem(houter, &k) == (void *)inner);
	/* a program reaches the inner map through the pointer it got */
	uint32_t ik = 2;
	uint64_t *v = xbpf_map__lookup_elem(xbpf_map__lookup_elem(outer, &k), &ik);
	CHECK(v != NULL);
	CHECK_EQ(xbpf_map__delete(outer, &k), 0);
	CHECK_EQ(xbpf_map__delete(outer, &k), -ENOENT);
	CHECK(!xbpf_map__lookup_elem(outer, &k));
	/* programs cannot update maps of maps */
	CHECK_EQ((int64_t)xbpf_helper_impl(2)((uintptr_t)houter, (uintptr_t)&k, (uintptr_t)&inner,
						    0, 0), -EOPNOTSUPP);
	xbpf_map__free(outer);
	xbpf_map__free(houter);
	xbpf_map__free(inner);
	xbpf_map__free(bad);
}

static void test_devmap(void)
{
	struct xbpf_map *m = mk(XBPF_MAP_DEVMAP, 4, 4, 8, 0, 1);
	xbpf_helper_fn rm = xbpf_helper_impl(51);
	struct xbpf_redirect r;
	uint32_t k = 3, ifindex = 42, out;

	CHECK(m && rm);
	CHECK_EQ(xbpf_map__lookup(m, &k, &out), -ENOENT);
	/* empty slot: the low bits of flags are the action (XDP_PASS = 2) */
	CHECK_EQ(rm((uintptr_t)m, k, 2, 0, 0), 2);
	CHECK_EQ(xbpf_map__update(m, &k, &ifindex, XBPF_ANY), 0);
	CHECK_EQ(xbpf_map__update(m, &k, &ifindex, XBPF_NOEXIST), -EEXIST);
	CHECK_EQ(rm((uintptr_t)m, k, 0, 0, 0), 4 /* XDP_REDIRECT */);
	xbpf_last_redirect(&r);
	CHECK_EQ(r.ifindex, 42);
	CHECK(r.map == m);
	CHECK_EQ(xbpf_map__delete(m, &k), 0);
	CHECK_EQ(xbpf_map__delete(m, &k), -ENOENT);
	k = 8;
	CHECK_EQ(xbpf_map__update(m, &k, &ifindex, XBPF_ANY), -E2BIG);
	xbpf_map__free(m);
}

/*
 * Concurrency: packet threads look up and update (their own key ranges)
 * while a control thread inserts, deletes and iterates.  Afterwards the
 * contents must be exactly what the writers left.
 */
#define STRESS_KEYS 512

struct stress {
	struct xbpf_map *map;
	int id;
	volatile bool stop;
	unsigned long ops;
};

static void *stress_worker(void *arg)
{
	struct stress *s = arg;
	xbpf_helper_fn upd = xbpf_helper_impl(2), del = xbpf_helper_impl(3);
	uint32_t i = 0;

	xbpf_set_cpu(s->id);
	while (!s->stop) {
		uint64_t key = (uint64_t)s->id << 32 | (i % STRESS_KEYS), val = key * 3;
		uint64_t *p;

		upd((uintptr_t)s->map, (uintptr_t)&key, (uintptr_t)&val, XBPF_ANY, 0);
		p = xbpf_map__lookup_elem(s->map, &key);
		(void)p;
		if (i % 7 == 0)
			del((uintptr_t)s->map, (uintptr_t)&key, 0, 0, 0);
		i++;
		s->ops++;
	}
	/* leave a known final state: every key of this worker present */
	for (i = 0; i < STRESS_KEYS; i++) {
		uint64_t key = (uint64_t)s->id << 32 | i, val = key * 3;

		upd((uintptr_t)s->map, (uintptr_t)&key, (uintptr_t)&val, XBPF_ANY, 0);
	}
	return NULL;
}

static void *stress_control(void *arg)
{
	struct stress *s = arg;
	uint64_t key, next;

	while (!s->stop) {
		int n = 0;

		if (xbpf_map__get_next_key(s->map, NULL, &next))
			continue;
		do {
			key = next;
		} while (!xbpf_map__get_next_key(s->map, &key, &next) && ++n < 4 * STRESS_KEYS);
		s->ops++;
	}
	return NULL;
}

static void test_stress(enum xbpf_map_type type)
{
	struct xbpf_map *m = mk(type, 8, 8, 4 * STRESS_KEYS, 0, 2);
	struct stress w[2] = { { m, 0 }, { m, 1 } }, c = { m, 2 };
	pthread_t t[3];
	uint64_t key, val;
	int i;

	CHECK(m);
	pthread_create(&t[0], NULL, stress_worker, &w[0]);
	pthread_create(&t[1], NULL, stress_worker, &w[1]);
	pthread_create(&t[2], NULL, stress_control, &c);
	usleep(300 * 1000);
	w[0].stop = w[1].stop = c.stop = true;
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(w[0].ops > 0 && w[1].ops > 0);
	for (i = 0; i < 2 * STRESS_KEYS; i++) {
		key = (uint64_t)(i / STRESS_KEYS) << 32 | (i % STRESS_KEYS);
		if (type == XBPF_MAP_PERCPU_HASH) {
			uint64_t vals[2];

			CHECK_EQ(xbpf_map__lookup(m, &key, vals), 0);
			CHECK_EQ(vals[i / STRESS_KEYS], key * 3);
		} else {
			CHECK_EQ(xbpf_map__lookup(m, &key, &val), 0);
			CHECK_EQ(val, key * 3);
		}
	}
	xbpf_map__free(m);
}

/* LRU under eviction pressure and LPM under churn, readers running alongside. */
struct churn {
	struct xbpf_map *map;
	int id;
	volatile bool *stop;
	unsigned long ops;
};

static void *lru_churn(void *arg)
{
	struct churn *c = arg;
	uint32_t i = (uint32_t)c->id * 7919;
	uint64_t v;

	xbpf_set_cpu(c->id);
	while (!*c->stop) {
		uint32_t key = i++ % 1024;
		uint64_t *p = xbpf_map__lookup_elem(c->map, &key);

		v = key;
		if (!p)
			xbpf_helper_impl(2)((uintptr_t)c->map, (uintptr_t)&key, (uintptr_t)&v, 0, 0);
		c->ops++;
	}
	return NULL;
}

static void *lpm_reader(void *arg)
{
	struct churn *c = arg;
	uint32_t i = 0;

	while (!*c->stop) {
		struct lpm_key key = { 32, { 10, (uint8_t)(i >> 8), (uint8_t)i, 1 } };
		uint32_t *p = xbpf_map__lookup_elem(c->map, &key);

		/* values are the prefix length of their entry: a match never claims more */
		if (p && *p > 32)
			test_failures++;
		i++;
		c->ops++;
	}
	return NULL;
}

static void test_churn(void)
{
	struct xbpf_map *lru = mk(XBPF_MAP_LRU_HASH, 4, 8, 64, 0, 2);
	struct xbpf_map *lpm = mk(XBPF_MAP_LPM_TRIE, 8, 4, 64, 1, 1);
	volatile bool stop = false;
	struct churn c[4] = { { lru, 0, &stop }, { lru, 1, &stop }, { lpm, 0, &stop }, { lpm, 1, &stop } };
	pthread_t t[4];
	uint32_t seed = 7, n, k, next;
	int i;

	CHECK(lru && lpm);
	pthread_create(&t[0], NULL, lru_churn, &c[0]);
	pthread_create(&t[1], NULL, lru_churn, &c[1]);
	pthread_create(&t[2], NULL, lpm_reader, &c[2]);
	pthread_create(&t[3], NULL, lpm_reader, &c[3]);
	/* this thread churns the trie: inserts and deletes nested prefixes */
	/* until every thread has done real work alongside (bounded) */
	for (i = 0; i < 20000 || ((c[0].ops < 10000 || c[2].ops < 10000 || c[3].ops < 10000) &&
				  i < 20000000); i++) {
		struct lpm_key key;
		uint32_t plen;

		seed = seed * 1103515245 + 12345;
		plen = 8 + (seed >> 16) % 25;
		key.prefixlen = plen;
		key.data[0] = 10;
		key.data[1] = (uint8_t)(seed >> 8);
		key.data[2] = (uint8_t)(seed >> 4);
		key.data[3] = 0;
		if (seed & 0x100)
			xbpf_map__update(lpm, &key, &plen, XBPF_ANY);
		else
			xbpf_map__delete(lpm, &key);
	}
	stop = true;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(c[0].ops >= 10000 && c[2].ops >= 10000);
	/* LRU never holds more than max_entries, and what it holds is intact */
	n = 0;
	if (!xbpf_map__get_next_key(lru, NULL, &next)) {
		do {
			uint64_t v;

			CHECK_EQ(xbpf_map__lookup(lru, &next, &v), 0);
			CHECK_EQ(v, next);
			k = next;
			n++;
		} while (!xbpf_map__get_next_key(lru, &k, &next) && n <= 64);
	}
	CHECK(n > 0 && n <= 64);
	xbpf_map__free(lru);
	xbpf_map__free(lpm);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/xbpf-test-maps.XXXXXX";

	if (argc > 1 && !strcmp(argv[1], "shared")) {
		shm_dir = mkdtemp(dir);
		CHECK(shm_dir != NULL);
	}
	test_spec_validation();
	test_array();
	test_percpu_array();
	test_hash(XBPF_MAP_HASH);
	test_hash(XBPF_MAP_PERCPU_HASH);
	test_lru(XBPF_MAP_LRU_HASH);
	test_lru(XBPF_MAP_LRU_PERCPU_HASH);
	test_lpm();
	test_ringbuf();
	test_ringbuf_reserve();
	test_map_in_map();
	test_devmap();
	test_stress(XBPF_MAP_HASH);
	test_stress(XBPF_MAP_PERCPU_HASH);
	test_stress(XBPF_MAP_LRU_HASH);
	test_churn();
	if (shm_dir)
		CHECK(rmdir(shm_dir) == 0); /* every map file was unlinked */
	TEST_DONE();
}
