// SPDX-License-Identifier: MIT
/*
 * Weighted Maglev (Eisenbud et al., NSDI 2016, section 3.4).
 *
 * Every real owns a permutation of the ring's slots, defined by two hashes
 * of its identity: offset = h1 % M and skip = h2 % (M - 1) + 1.  Because M is
 * prime, offset + j * skip (mod M) visits every slot exactly once.  The fill
 * goes round by round; in each round a real earns credit equal to its
 * weight and claims one slot (the next still-free slot of its permutation)
 * for every `max_weight` of credit.  Equal weights reproduce the paper's
 * fill; unequal weights give each real a share of slots proportional to its
 * weight.  Since a real's preferences do not depend on the other reals,
 * adding, removing or re-weighting one real moves few slots of the others.
 *
 * The permutation is computed on the fly (no M x N table), so memory is
 * O(N) besides the ring itself.
 *
 * Identical desired state gives a byte-identical ring on every host: the
 * hashes have fixed seeds and read the identity bytes only, and the reals
 * take their turns in identity order (shorter identity first, then byte by
 * byte), never in the order the caller lists them - an insertion order
 * that differs between hosts changes nothing.
 *
 * Speed (target: 65537 slots, 1,000 reals in under half a millisecond).
 * The fill probes about M ln M slots in all, most of them at the end, when
 * a real must walk past many taken slots to find a free one.  None of the
 * following changes a single slot of the result (tests/control/test_maglev.c
 * compares every build, portable and AVX2, with a plain reference fill):
 *  - setup: both hashes of an identity in one pass, reduced by Barrett
 *    (no division); the turn order sorted on integer keys, and no merge
 *    passes when the reals come in identity order already;
 *  - the order of claims does not depend on the slots, so it is computed
 *    ahead in batches, without a branch per real (credit by weight; with
 *    AVX2 8 visits a step); equal weights are plain round robin;
 *  - a real's next candidate is its last one plus skip (mod M): no
 *    division, and an 8 KiB occupancy bitmap that stays in L1 instead of
 *    the 256 KiB ring.  The portable walk is a plain loop over flat arrays
 *    (candidate, skip, index by turn) kept in registers (restrict);
 *  - with AVX2 (maglev_fill.c, maglev_avx2.c), the walk goes in batches of
 *    claims: a batch's walks are probed against the bitmap as it is at the
 *    batch's start, 8 per gather with no branch per claim, then the claims
 *    are committed in turn order; a claim whose candidate an earlier one
 *    took walks on from there.  With 16 claims a round or more a batch's
 *    claims are of distinct reals, one walk a lane, in stages (the walks
 *    still going get more probes); a walk that found its slot goes on to
 *    the next free one, where its real's next claim starts.  With smaller
 *    rounds each real's walk finds all its free slots for the batch, 8
 *    candidates per gather.  Why: the plain loop mispredicts its exit
 *    about once per claim from half full on; a gather waits for the
 *    address of every older store (so no store in a probe loop may take
 *    its address from a gather, and a gather per claim in the plain loop
 *    waits for the previous claim); shuffles slow the gathers down (lanes
 *    refilled one by one lost to the stages);
 *  - once 256 slots are free (384 with AVX2), a real's next slot is the
 *    free slot with the smallest position in its permutation, and that
 *    position is (slot - offset) * skip^-1 mod M: the few free slots are
 *    scanned once per claim instead of probing thousands of taken ones.
 *    The inverses of all endgame claims come from one extended Euclid
 *    (Montgomery's trick), a position is Shoup's multiplication (no
 *    division), 8 per step with AVX2.
 * Each gives exactly the slot the plain walk would (every slot before the
 * real's position was taken, and stays taken).
 *
 * Measured (rdtsc at 2.45 GHz, this project's AMD EPYC Zen 3 machine, min
 * of 150 builds, 1,000 equal reals, 65537 slots), before -> after: setup
 * 107k -> 40k, walk 2.31M -> 0.92M, endgame 179k (256 free) -> 83k (384
 * free), total 2.63M -> 1.04M (1.07 -> 0.43 ms).  Per 5% of the fill the
 * AVX2 walk costs 20k-28k to half full, 32k-40k to 75%, 44k-62k to 90%,
 * 104k to 95% and 243k to 384 free (the plain loop: 25k, 85k at half
 * full, 233k to 95%, 660k to 256 free).  The portable fill is the plain
 * loop as before: 2.54M.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maglev_impl.h"

bool xlb_is_prime(uint32_t n)
{
	if (n < 2)
		return false;
	if (n % 2 == 0)
		return n == 2;
	for (uint32_t d = 3; (uint64_t)d * d <= n; d += 2)
		if (n % d == 0)
			return false;
	return true;
}

/* splitmix64's finalizer: a 64-bit avalanche. */
static inline uint64_t mix64(uint64_t h)
{
	h += 0x9e3779b97f4a7c15ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* FNV-1a over the identity with two seeds (offset and skip) in one pass, each finished by mix64. */
static void identity_hashes(const void *id, size_t len, uint64_t *h_offset, uint64_t *h_skip)
{
	const uint8_t *p = id;
	uint64_t a = 0xcbf29ce484222325ULL ^ 0x6d61676c65763031ULL, b = 0xcbf29ce484222325ULL ^ 0x736b697070657232ULL;

	for (size_t i = 0; i < len; i++) {
		a = (a ^ p[i]) * 0x100000001b3ULL;
		b = (b ^ p[i]) * 0x100000001b3ULL;
	}
	*h_offset = mix64(a);
	*h_skip = mix64(b);
}

/* x % m for x < 2^64 with mu = floor((2^64 - 1) / m) (Barrett: the quotient is short by at most one). */
static inline uint64_t mod_barrett(uint64_t x, uint64_t m, uint64_t mu)
{
	uint64_t r = x - (uint64_t)(((unsigned __int128)x * mu) >> 64) * m;

	return r >= m ? r - m : r;
}

/*
 * Turn order = identity order: shorter first, then bytes; equal identities
 * by index (stable).  Sorted on keys that hold the first 16 identity bytes
 * big-endian (an IPv4 or IPv6 address entirely), so most comparisons are
 * two integer compares, not a memcmp through a function pointer.
 */
struct turn {
	uint64_t hi, lo; /* identity bytes 0..15, big-endian, zero-padded */
	const struct xlb_maglev_real *real;
	uint32_t index;
};

static bool turn_before(const struct turn *x, const struct turn *y)
{
	size_t len = x->real->id_len;
	int c;

	if (len != y->real->id_len)
		return len < y->real->id_len;
	if (x->hi != y->hi)
		return x->hi < y->hi;
	if (x->lo != y->lo)
		return x->lo < y->lo;
	if (len > 16) {
		c = memcmp((const uint8_t *)x->real->id + 16, (const uint8_t *)y->real->id + 16, len - 16);
		if (c)
			return c < 0;
	}
	return x->index < y->index;
}

/* Up to 8 bytes as a big-endian integer, zero-padded (no byte buffer: a wide load of narrow stores stalls). */
static inline uint64_t be_bytes(const uint8_t *p, size_t len)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && i < len; i++)
		v |= (uint64_t)p[i] << (56 - 8 * i);
	return v;
}

static void turn_key(struct turn *t, const struct xlb_maglev_real *r, uint32_t index)
{
	const uint8_t *id = r->id;

	t->hi = be_bytes(id, r->id_len);
	t->lo = r->id_len > 8 ? be_bytes(id + 8, r->id_len - 8) : 0;
	t->real = r;
	t->index = index;
}

/*
 * Bottom-up merge sort of a[0..n) (tmp: n more); returns the sorted array
 * (a or tmp).  Reals listed in identity order already (a common way to
 * list them) cost one pass.
 */
static struct turn *turns_sort(struct turn *a, struct turn *tmp, size_t n)
{
	size_t k = 1;

	while (k < n && !turn_before(&a[k], &a[k - 1]))
		k++;
	if (k >= n)
		return a;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid;

			k = lo;
			while (i < mid && j < hi)
				tmp[k++] = turn_before(&a[j], &a[i]) ? a[j++] : a[i++];
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < hi)
				tmp[k++] = a[j++];
		}
		struct turn *swap = a;

		a = tmp;
		tmp = swap;
	}
	return a;
}

/*
 * The walk state's arrays, in one allocation (fill's array pointers into
 * it); slot and skip have 8 more (zero) entries: the AVX2 walk reads them
 * 8 at a time.
 */
static void *fill_alloc(struct maglev_fill *f, size_t n)
{
	uint8_t *mem = calloc(n + 16, 7 * sizeof(uint32_t) + sizeof(uint64_t));

	if (!mem)
		return NULL;
	f->credit = (uint64_t *)mem;
	f->slot = (uint32_t *)(f->credit + n);
	f->skip = f->slot + n + 8;
	f->index = f->skip + n + 8;
	f->weight = f->index + n;
	f->offset = f->weight + n;
	f->stamp = f->offset + n;
	f->local = f->stamp + n;
	return mem;
}

int xlb__maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size, bool simd)
{
	struct maglev_fill f = { .ring = ring, .size = size, .simd = simd };
	struct turn *turns = NULL, *sorted;
	uint32_t min_weight = UINT32_MAX;
	uint64_t mu_offset, mu_skip;
	void *walk = NULL;
	size_t active = 0;
	int err = 0;

	/* 2^31 slots and more (8 GiB) are refused: the fill's modular arithmetic is 32-bit */
	if (!ring || size < 3 || size >= 1u << 31 || !xlb_is_prime(size) || (n && !reals))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!reals[i].weight)
			continue;
		active++;
		if (reals[i].weight > f.max_weight)
			f.max_weight = reals[i].weight;
		if (reals[i].weight < min_weight)
			min_weight = reals[i].weight;
	}
	if (active > size || n > UINT32_MAX)
		return -EINVAL;
	if (!active) {
		for (uint32_t s = 0; s < size; s++)
			ring[s] = XLB_RING_EMPTY;
		return 0;
	}

	/* Only weighted reals take turns: the others never claim, so skipping them changes no claim. */
	walk = fill_alloc(&f, active);
	f.taken = calloc((size + 31) / 32, sizeof(*f.taken));
	turns = malloc(2 * active * sizeof(*turns));
	if (!walk || !f.taken || !turns) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, k = 0; i < n; i++)
		if (reals[i].weight)
			turn_key(&turns[k++], &reals[i], (uint32_t)i);
	sorted = turns_sort(turns, turns + active, active);
	mu_offset = UINT64_MAX / size;
	mu_skip = UINT64_MAX / (size - 1);
	for (size_t k = 0; k < active; k++) {
		const struct xlb_maglev_real *r = sorted[k].real;
		uint64_t h_offset, h_skip;

		identity_hashes(r->id, r->id_len, &h_offset, &h_skip);
		f.offset[k] = (uint32_t)mod_barrett(h_offset, size, mu_offset);
		f.skip[k] = (uint32_t)mod_barrett(h_skip, size - 1, mu_skip) + 1;
		f.slot[k] = f.offset[k];
		f.weight[k] = r->weight;
		f.index[k] = sorted[k].index;
	}
	f.n = active;
	/* Every slot gets a real, so the ring needs no clearing first. */
	err = xlb__maglev_fill(&f, min_weight == f.max_weight); /* equal weights: every visit claims */
out:
	free(turns);
	free(f.taken);
	free(walk);
	return err;
}

int xlb_maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size)
{
	return xlb__maglev_build(reals, n, ring, size, xlb__maglev_simd());
}
