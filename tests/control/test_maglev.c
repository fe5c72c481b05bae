// SPDX-License-Identifier: MIT
/*
 * Maglev: weights honoured within 1% at 65537 slots, about 1/N of the slots
 * move when one of N reals leaves (and only a few of the others' slots),
 * a weight change moves little, the table is deterministic and does not
 * depend on the order the reals are listed in (identical desired state on
 * two hosts that added the reals in different orders: identical rings),
 * and xlb_maglev_build's fast fill (every phase, portable and AVX2) gives,
 * slot for slot, the ring of the textbook fill written out plainly below,
 * on random real sets of every ring size with equal and mixed weights.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maglev_impl.h"

#define M 65537

#include "test_check.h"

struct ids {
	uint8_t addr[64][4];
	struct xlb_maglev_real reals[64];
};

static void make_reals(struct ids *ids, size_t n, const uint32_t *weights)
{
	for (size_t i = 0; i < n; i++) {
		ids->addr[i][0] = 10;
		ids->addr[i][1] = 1;
		ids->addr[i][2] = (uint8_t)(i >> 8);
		ids->addr[i][3] = (uint8_t)(i + 1);
		ids->reals[i].id = ids->addr[i];
		ids->reals[i].id_len = 4;
		ids->reals[i].weight = weights ? weights[i] : 1;
	}
}

static void count(const uint32_t *ring, size_t n, size_t *cnt)
{
	memset(cnt, 0, n * sizeof(*cnt));
	for (uint32_t s = 0; s < M; s++) {
		CHECK(ring[s] < n, "slot %u holds %u", s, ring[s]);
		if (ring[s] < n)
			cnt[ring[s]]++;
	}
}

/* Slots whose real (by identity) differs between two tables. */
static double moved_fraction(const uint32_t *a, const struct ids *ia, const uint32_t *b,
			     const struct ids *ib)
{
	size_t moved = 0;

	for (uint32_t s = 0; s < M; s++)
		if (memcmp(ia->reals[a[s]].id, ib->reals[b[s]].id, 4))
			moved++;
	return (double)moved / M;
}

static void test_weights(void)
{
	static const uint32_t w[][6] = {
		{ 1, 1, 1, 1, 1, 1 },
		{ 1, 2, 3, 4, 5, 6 },
		{ 100, 100, 50, 25, 10, 1 },
		{ 7, 1000, 7, 1000, 500, 3 },
	};
	uint32_t *ring = malloc(M * sizeof(*ring));
	size_t cnt[6];
	struct ids ids;

	for (size_t t = 0; t < sizeof(w) / sizeof(w[0]); t++) {
		uint64_t total = 0;

		make_reals(&ids, 6, w[t]);
		CHECK(xlb_maglev_build(ids.reals, 6, ring, M) == 0, "build");
		count(ring, 6, cnt);
		for (int i = 0; i < 6; i++)
			total += w[t][i];
		for (int i = 0; i < 6; i++) {
			double want = (double)w[t][i] / (double)total;
			double got = (double)cnt[i] / M;

			/* "within 1%": absolute 1% of the ring, and 1% relative for big shares */
			CHECK(fabs(got - want) <= 0.01 && fabs(got - want) <= 0.01 * want + 2.0 / M,
			      "set %zu real %d: share %.5f want %.5f", t, i, got, want);
		}
	}
	free(ring);
}

static void test_removal(void)
{
	static const size_t ns[] = { 3, 5, 10, 20, 50 };
	uint32_t *a = malloc(M * sizeof(*a)), *b = malloc(M * sizeof(*b));
	struct ids ia, ib;

	for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
		size_t n = ns[t], gone = n / 2;
		double f;

		make_reals(&ia, n, NULL);
		CHECK(xlb_maglev_build(ia.reals, n, a, M) == 0, "build");
		/* Same reals without `gone`, in a different order (order must not matter much). */
		make_reals(&ib, n, NULL);
		memmove(&ib.reals[gone], &ib.reals[gone + 1], (n - gone - 1) * sizeof(ib.reals[0]));
		CHECK(xlb_maglev_build(ib.reals, n - 1, b, M) == 0, "build");
		f = moved_fraction(a, &ia, b, &ib);
		/* The leaving real's 1/N must move; Maglev's bound on the rest is loose but small. */
		CHECK(f >= 1.0 / n - 0.005 && f <= 1.0 / n * 1.6 + 0.01,
		      "N=%zu: %.4f of slots moved, 1/N=%.4f", n, f, 1.0 / n);
		printf("remove 1 of %zu: moved %.4f (1/N %.4f)\n", n, f, 1.0 / n);

		/* Adding it back restores the original table exactly (determinism). */
		CHECK(xlb_maglev_build(ia.reals, n, b, M) == 0, "build");
		CHECK(!memcmp(a, b, M * sizeof(*a)), "N=%zu: rebuild differs", n);
	}
	free(a);
	free(b);
}

static void test_reweight(void)
{
	uint32_t *a = malloc(M * sizeof(*a)), *b = malloc(M * sizeof(*b));
	uint32_t w[10];
	struct ids ia, ib;
	double f;

	for (int i = 0; i < 10; i++)
		w[i] = 100;
	make_reals(&ia, 10, w);
	CHECK(xlb_maglev_build(ia.reals, 10, a, M) == 0, "build");
	w[3] = 150; /* one real +50%: its share goes 10% -> ~14.3% */
	make_reals(&ib, 10, w);
	CHECK(xlb_maglev_build(ib.reals, 10, b, M) == 0, "build");
	f = moved_fraction(a, &ia, b, &ib);
	printf("reweight 1 of 10 by +50%%: moved %.4f\n", f);
	CHECK(f >= 0.04 && f <= 0.20, "reweight moved %.4f", f);
	free(a);
	free(b);
}

static void test_edges(void)
{
	uint32_t ring[13];
	struct ids ids;

	make_reals(&ids, 3, NULL);
	CHECK(xlb_maglev_build(ids.reals, 3, ring, 12) == -EINVAL, "non-prime size accepted");
	CHECK(xlb_maglev_build(ids.reals, 3, NULL, 13) == -EINVAL, "NULL ring accepted");
	/* a prime of 2^31 slots or more is refused before the ring is touched */
	CHECK(xlb_is_prime(2147483659u) && xlb_maglev_build(ids.reals, 3, ring, 2147483659u) == -EINVAL,
	      "2^31 + 11 slots accepted");
	ids.reals[0].weight = ids.reals[1].weight = ids.reals[2].weight = 0;
	CHECK(xlb_maglev_build(ids.reals, 3, ring, 13) == 0, "all-zero weights");
	for (int s = 0; s < 13; s++)
		CHECK(ring[s] == XLB_RING_EMPTY, "slot %d not empty", s);
	CHECK(xlb_maglev_build(NULL, 0, ring, 13) == 0, "no reals");
	CHECK(xlb_is_prime(65537) && xlb_is_prime(2) && !xlb_is_prime(65536) && !xlb_is_prime(1),
	      "is_prime");
	/* More weighted reals than slots cannot fit. */
	{
		struct ids many;

		make_reals(&many, 20, NULL);
		CHECK(xlb_maglev_build(many.reals, 20, ring, 13) == -EINVAL, "20 reals in 13 slots");
	}
}

/*
 * The same 40 reals (IPv4 and IPv6 identities, weights 0..9) listed in four
 * orders: in place, reversed, rotated, and shuffled (seed printed): every
 * slot must name the same identity.
 */
static void test_order_independent(void)
{
	enum { N = 40 };
	static uint8_t addr[N][16];
	struct xlb_maglev_real base[N], listed[N];
	uint32_t *want = calloc(M, sizeof(*want)), *got = calloc(M, sizeof(*got));
	unsigned int seed = (unsigned int)time(NULL);
	size_t idx[N];

	for (size_t i = 0; i < N; i++) {
		memset(addr[i], 0, sizeof(addr[i]));
		addr[i][0] = i % 3 ? 10 : 0xfd;
		addr[i][3] = (uint8_t)(97 * i + 5);
		base[i].id = addr[i];
		base[i].id_len = i % 3 ? 4 : 16;
		base[i].weight = (uint32_t)(i * 7 % 10);
	}
	CHECK(xlb_maglev_build(base, N, want, M) == 0, "build");
	srand(seed);
	for (int order = 0; order < 4; order++) {
		for (size_t i = 0; i < N; i++)
			idx[i] = order == 0 ? i : order == 1 ? N - 1 - i : (i + 17) % N;
		for (size_t i = N - 1; order == 3 && i > 0; i--) {
			size_t j = (size_t)rand() % (i + 1), t = idx[i];

			idx[i] = idx[j];
			idx[j] = t;
		}
		for (size_t i = 0; i < N; i++)
			listed[i] = base[idx[i]];
		CHECK(xlb_maglev_build(listed, N, got, M) == 0, "build");
		for (uint32_t s = 0; s < M; s++) {
			const struct xlb_maglev_real *a = &base[want[s]], *b = &listed[got[s]];

			if (a->id_len != b->id_len || memcmp(a->id, b->id, a->id_len)) {
				CHECK(0, "order %d (shuffle seed %u): slot %u names another real", order, seed, s);
				break;
			}
		}
	}
	free(want);
	free(got);
}

/* ---- the textbook fill: the reference every walk must match ---------- */

/* maglev.c's identity hash, written again: a change there must fail here. */
static uint64_t ref_hash(const uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	h += 0x9e3779b97f4a7c15ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static const struct xlb_maglev_real *ref_reals;

/* Identity order: shorter first, then bytes, then the caller's index. */
static int ref_cmp(const void *a, const void *b)
{
	const struct xlb_maglev_real *x = &ref_reals[*(const size_t *)a];
	const struct xlb_maglev_real *y = &ref_reals[*(const size_t *)b];
	int c;

	if (x->id_len != y->id_len)
		return x->id_len < y->id_len ? -1 : 1;
	c = memcmp(x->id, y->id, x->id_len);
	if (c)
		return c;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/*
 * Round robin in identity order; at each visit a real earns its weight and,
 * once its credit reaches the largest weight, walks its permutation
 * (offset + pos * skip) % size to the first free slot.
 */
static void reference_fill(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring,
			   uint32_t size)
{
	size_t *order = calloc(n, sizeof(*order));
	uint64_t *credit = calloc(n, sizeof(*credit)), *pos = calloc(n, sizeof(*pos)), max = 0;
	uint32_t filled = 0;

	for (uint32_t s = 0; s < size; s++)
		ring[s] = XLB_RING_EMPTY;
	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		if (reals[i].weight > max)
			max = reals[i].weight;
	}
	ref_reals = reals;
	qsort(order, n, sizeof(*order), ref_cmp);
	while (max && filled < size)
		for (size_t k = 0; k < n && filled < size; k++) {
			const struct xlb_maglev_real *r = &reals[order[k]];
			uint64_t off = ref_hash(r->id, r->id_len, 0x6d61676c65763031ULL) % size;
			uint64_t skip = ref_hash(r->id, r->id_len, 0x736b697070657232ULL) % (size - 1) + 1;
			uint32_t s;

			credit[order[k]] += r->weight;
			if (!r->weight || credit[order[k]] < max)
				continue;
			credit[order[k]] -= max;
			do
				s = (uint32_t)((off + pos[order[k]]++ * skip) % size);
			while (ring[s] != XLB_RING_EMPTY);
			ring[s] = (uint32_t)order[k];
			filled++;
		}
	free(order);
	free(credit);
	free(pos);
}

/*
 * Random real sets against the textbook fill: ring sizes from 3 to the
 * largest (batches and the endgame at every size, XLB_RING_SIZE_MAX once),
 * 1..40 reals (rounds too short for batches) or up to 2000; equal weights,
 * 1..100, 1..100000 with zeros, two weights, and weights near 2^32; IPv4
 * and IPv6 identities, and identities of 1..24 bytes.  The portable fill,
 * and the AVX2 one where the CPU has it.
 */
static void test_walks_match_reference(void)
{
	enum { N = 2000, SETS = 49 };
	static const uint32_t sizes[] = { 3, 13, 251, 521, 4099, 16411, M, 131071 };
	unsigned int seed = (unsigned int)time(NULL);
	uint32_t *want = malloc(XLB_RING_SIZE_MAX * sizeof(*want)), *got = malloc(XLB_RING_SIZE_MAX * sizeof(*got));
	static uint8_t addr[N][24];
	static struct xlb_maglev_real reals[N];

	srand(seed);
	for (int t = 0; t < SETS; t++) {
		uint32_t size = t == SETS - 1 ? XLB_RING_SIZE_MAX : sizes[t % 8];
		size_t cap = size < N ? size : N;
		size_t n = 1 + (size_t)rand() % (t / 8 % 2 && cap > 40 ? 40 : cap);
		int weights = t % 5;

		for (size_t i = 0; i < n; i++) {
			memset(addr[i], 0, sizeof(addr[i]));
			addr[i][0] = i % 4 ? 10 : 0xfd;
			addr[i][1] = (uint8_t)t;
			addr[i][2] = (uint8_t)(i >> 8);
			addr[i][3] = (uint8_t)i;
			addr[i][15] = (uint8_t)rand();
			addr[i][4 + rand() % 20] ^= (uint8_t)rand();
			reals[i].id = addr[i];
			/* IPv4 and IPv6 lengths, and every length to 24 (keys of 8 and 16 bytes, longer ones) */
			reals[i].id_len = t / 2 % 2 ? (i % 4 ? 4 : 16) : 1 + (size_t)rand() % 24;
			reals[i].weight = weights == 0 ? 1 :
					  weights == 1 ? 1 + (uint32_t)rand() % 100 :
					  weights == 2 ? (rand() % 8 == 0 ? 0 : 1 + (uint32_t)rand() % 100000) :
					  weights == 3 ? (i % 3 ? 3 : 7) : UINT32_MAX - (uint32_t)rand() % 1000;
		}
		reference_fill(reals, n, want, size);
		for (int simd = 0; simd <= xlb__maglev_simd(); simd++) {
			int ret = xlb__maglev_build(reals, n, got, size, simd);

			CHECK(ret == 0, "build (%d)", ret);
			if (!ret && memcmp(want, got, size * sizeof(*got)))
				CHECK(0, "%zu reals, %u slots, weights %d, simd %d (seed %u): not the reference ring", n,
				      size, weights, simd, seed);
		}
	}
	free(want);
	free(got);
}

int main(void)
{
	test_weights();
	test_removal();
	test_reweight();
	test_edges();
	test_order_independent();
	test_walks_match_reference();
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("maglev: all checks passed\n");
	return 0;
}
