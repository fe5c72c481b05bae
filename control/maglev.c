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
 * compares every build with a plain reference fill):
 *  - the order of claims does not depend on the slots, so it is computed
 *    ahead in batches, without a branch per real (credit by weight);
 *  - a real's next candidate is its last one plus skip (mod M): no
 *    division, and an 8 KiB occupancy bitmap that stays in L1 instead of
 *    the 256 KiB ring;
 *  - the walk state is a few flat arrays (candidate, skip, index by turn),
 *    not a struct per real: 1,000 reals' hot state is 8 KiB, and the walk
 *    keeps everything in registers (restrict: its stores to the ring and
 *    bitmap cannot move a real's skip).  That is the portable walk, and
 *    the AVX2 one when a round has few claims;
 *  - with AVX2 and 32 claims a round or more, claims go in batches: all
 *    of a batch's walks are probed against the bitmap as it was at its
 *    start, 8 walks per gather with no branch per claim, then committed
 *    in turn order (fill_batches).  The plain loop mispredicts its exit
 *    about once per claim from half full on, and an AVX2 gather waits for
 *    the address of every older store, so a gather per claim in the plain
 *    loop waits for the previous claim's bitmap store;
 *  - once at most `endgame` slots are free, a real's next slot is the free
 *    slot with the smallest position in its permutation, and that position
 *    is (slot - offset) * skip^-1 mod M: the few free slots are scanned
 *    once per claim instead of probing thousands of taken ones.  The
 *    inverses of all endgame claims come from one extended Euclid
 *    (Montgomery's trick), a position is Shoup's multiplication (no
 *    division), and with AVX2 eight positions are one step: 256 free
 *    slots, 1000 reals, 208k -> 54k cycles (rdtsc), so the AVX2 endgame
 *    starts at 512 free slots.
 * Each gives exactly the slot the plain walk would (every slot before the
 * real's position was taken, and stays taken).
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

/* (a + b) % m for a, b < m < 2^31: a conditional move, not a branch (a coin flip the predictor would miss). */
static inline uint32_t add_mod(uint32_t a, uint32_t b, uint32_t m)
{
	uint32_t s = a + b;

	return s >= m ? s - m : s;
}

/* a^-1 mod the prime p (extended Euclid); a in [1, p). */
static uint32_t inverse_mod(uint32_t a, uint32_t p)
{
	int64_t t = 0, new_t = 1, r = p, new_r = a;

	while (new_r) {
		int64_t q = r / new_r, tmp;

		tmp = t - q * new_t;
		t = new_t;
		new_t = tmp;
		tmp = r - q * new_r;
		r = new_r;
		new_r = tmp;
	}
	return (uint32_t)(t < 0 ? t + p : t);
}

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * Montgomery arithmetic mod the ring size m (odd, < 2^31) with R = 2^32:
 * redc(t) = t * R^-1 mod m for t < m * R, where mneg = -m^-1 mod R and
 * r2 = R^2 mod m.  The endgame's products of two variables, no division.
 */
struct mont {
	uint32_t m, mneg, r2;
};

static struct mont mont_init(uint32_t m)
{
	uint32_t x = m; /* m * m = 1 mod 8: m^-1 to 3 bits, each step doubles them */

	for (int i = 0; i < 4; i++)
		x *= 2 - m * x;
	return (struct mont){ m, -x, (uint32_t)((UINT64_MAX % m + 1) % m) };
}

static inline uint32_t redc(const struct mont *mt, uint64_t t)
{
	uint32_t u = (uint32_t)((t + (uint64_t)((uint32_t)t * mt->mneg) * mt->m) >> 32);

	return min_u32(u, u - mt->m); /* u < 2m; a min, not a branch the predictor would miss */
}

/* Occupancy bitmap: slot s is bit s % 32 of word s / 32 (on x86 one `bt` tests it). */
static inline uint32_t slot_bit(uint32_t s)
{
	return 1u << (s & 31);
}

/* Free slots below which the fill switches to the endgame (see the top); the AVX2 scan is ~9x faster. */
#define MAGLEV_ENDGAME 256
#define MAGLEV_ENDGAME_AVX2 512
/* The AVX2 snapshot's next stage needs this many walks still going (fewer walk on in the commit). */
#define MAGLEV_STAGE_MIN 4
/* Claims computed ahead at a time. */
#define CLAIM_BATCH 256

/* Walk state, one entry per weighted real, in turn order. */
struct fill {
	uint32_t *slot;	    /* the walk's next candidate: (offset + pos * skip) % size */
	uint32_t *skip;
	uint32_t *index;    /* in the caller's reals[] */
	uint32_t *weight;
	uint64_t *credit;
	uint32_t *offset;   /* endgame only */
	uint32_t *stamp;    /* the last batch with a claim of the real (AVX2 walk, weighted) */
	size_t n;
	size_t next; /* the turn the claim generator visits next */
	uint64_t max_weight;
	uint32_t *ring, *taken;
	uint32_t size, filled;
	bool simd; /* the AVX2 kernels */
	uint32_t batch_no;
	bool long_walks; /* the AVX2 commit's walks: 12 slots or more expected */
	uint32_t claim_cnt, claim_pos;
	uint32_t claims[CLAIM_BATCH + 8]; /* turns that claim next, in order */
};

/*
 * The next claimer's turn.  Round robin with credit by weight: at each
 * visit a real earns its weight and claims a slot when its credit reaches
 * max_weight (at most once per round, as weight <= max_weight).  Computed
 * CLAIM_BATCH claims ahead with a conditional move per visit: with mixed
 * weights whether a real claims at its visit is a coin flip for the
 * branch predictor.
 */
static void claims_refill(struct fill *f)
{
	const uint64_t max = f->max_weight;
	const uint32_t *weight = f->weight;
	uint64_t *credit = f->credit;
	const size_t n = f->n;
	uint32_t cnt = 0;
	size_t i = f->next;

#if defined(__x86_64__)
	if (f->simd) {
		uint32_t next = (uint32_t)f->next;

		f->claim_cnt = xlb__maglev_claims_avx2(credit, weight, (uint32_t)n, &next, max, f->claims, CLAIM_BATCH);
		f->claim_pos = 0;
		f->next = next;
		return;
	}
#endif
	while (cnt < CLAIM_BATCH) {
		uint64_t c = credit[i] + weight[i];
		uint32_t take = c >= max;

		credit[i] = take ? c - max : c;
		f->claims[cnt] = (uint32_t)i;
		cnt += take;
		i = i + 1 == n ? 0 : i + 1;
	}
	f->next = i;
	f->claim_cnt = cnt;
	f->claim_pos = 0;
}

static inline uint32_t next_claimer(struct fill *f)
{
	if (f->claim_pos == f->claim_cnt)
		claims_refill(f);
	return f->claims[f->claim_pos++];
}

/* A real's next free slot from its candidate s: the walk's inner loop; the bitmap word at the result in *word. */
static inline uint32_t walk_to_free(const uint32_t *taken, uint32_t s, uint32_t step, uint32_t size, uint32_t *word)
{
	while (((*word = taken[s >> 5]) >> (s & 31)) & 1)
		s = add_mod(s, step, size);
	return s;
}

/*
 * Phase 1 with equal weights (the common case): every visit claims, so the
 * turns are plain round robin and a claim's loads do not wait for a load
 * of its turn from the claim batch.
 */
static void fill_walk_round_robin(struct fill *f, uint32_t stop)
{
	uint32_t *restrict slot = f->slot, *restrict taken = f->taken, *restrict ring = f->ring;
	const uint32_t *restrict skip = f->skip, *restrict index = f->index;
	const uint32_t size = f->size, n = (uint32_t)f->n;
	uint32_t filled = f->filled, t = (uint32_t)f->next;

	for (; filled < stop; filled++) {
		const uint32_t step = skip[t];
		uint32_t word, s = walk_to_free(taken, slot[t], step, size, &word);

		taken[s >> 5] = word | slot_bit(s);
		ring[s] = index[t];
		slot[t] = add_mod(s, step, size);
		t = t + 1 == n ? 0 : t + 1;
	}
	f->filled = filled;
	f->next = t;
}

/* Phase 1, the plain walk, until `stop` slots are filled. */
static void fill_walk(struct fill *f, uint32_t stop)
{
	uint32_t *restrict slot = f->slot, *restrict taken = f->taken, *restrict ring = f->ring;
	const uint32_t *restrict skip = f->skip, *restrict index = f->index;
	const uint32_t size = f->size;
	uint32_t filled = f->filled;

	while (filled < stop) {
		uint32_t pos = f->claim_pos, end = f->claim_cnt;

		if (pos == end) {
			claims_refill(f);
			pos = 0;
			end = f->claim_cnt;
		}
		if (end - pos > stop - filled)
			end = pos + (stop - filled);
		/* a batch of claims without a check per claim */
		for (; pos < end; pos++) {
			const uint32_t t = f->claims[pos], step = skip[t];
			uint32_t word, s = walk_to_free(taken, slot[t], step, size, &word);

			taken[s >> 5] = word | slot_bit(s);
			ring[s] = index[t];
			slot[t] = add_mod(s, step, size);
		}
		filled += end - f->claim_pos;
		f->claim_pos = end;
	}
	f->filled = filled;
}

/*
 * Phase 1 with AVX2: batches of claims.  The snapshot kernel finds each
 * claim's candidate against the bitmap as it is at the batch's start,
 * all walks independent (8 per gather, no branch per claim); then the
 * claims are committed in turn order.  A claim whose candidate a claim
 * before it took (or whose probes gave up) walks on from there: every
 * slot before its candidate was taken at the snapshot and still is, so
 * each claim gets the slot of the plain walk.  No real claims twice in a
 * batch (its walk would start from a stale slot).
 */
struct batch {
	uint32_t turn[XLB_MAGLEV_BATCH];
	uint32_t start[XLB_MAGLEV_BATCH + 8], step[XLB_MAGLEV_BATCH + 8], cand[XLB_MAGLEV_BATCH + 8];
	uint32_t next[XLB_MAGLEV_BATCH + 8];
	struct xlb__maglev_lists lists;
};

#if defined(__x86_64__)
/* Up to cnt next claims into b->turn, ending before a real that already has one in the batch. */
static uint32_t batch_claims(struct fill *f, struct batch *b, uint32_t cnt)
{
	uint32_t *restrict stamp = f->stamp, *restrict turn = b->turn, *restrict start = b->start;
	uint32_t *restrict step = b->step;
	const uint32_t *restrict slot = f->slot, *restrict skip = f->skip, *claims = f->claims;
	uint32_t k = 0, no = ++f->batch_no;

	while (k < cnt) {
		uint32_t pos = f->claim_pos, end = min_u32(f->claim_cnt, pos + cnt - k), t;

		if (pos == end) {
			claims_refill(f);
			continue;
		}
		for (; pos < end; pos++, k++) {
			t = claims[pos];
			if (stamp[t] == no)
				break;
			stamp[t] = no;
			turn[k] = t;
			start[k] = slot[t];
			step[k] = skip[t];
		}
		f->claim_pos = pos;
		if (pos < end)
			break;
	}
	return k;
}

/*
 * A claim whose candidate is taken walks on from `from`, the snapshot's
 * next slot for its real after the candidate (every slot in between was
 * taken); its real's next candidate follows the slot found.  Long walks
 * (near the end) 8 candidates per gather, short ones plainly: the
 * gathers' latency cost more there.
 */
static __attribute__((noinline)) uint32_t commit_walk(struct fill *f, uint32_t from, uint32_t t)
{
	const uint32_t step = f->skip[t];
	uint32_t s, word;

	if (f->long_walks)
		s = xlb__maglev_walk_avx2(f->taken, from, step, f->size);
	else
		s = walk_to_free(f->taken, from, step, f->size, &word);
	f->slot[t] = add_mod(s, step, f->size);
	return s;
}

/* Commit the claims of turns t0.. to their candidates in order (the snapshot wrote their next slots in slot[]). */
static void commit_round_robin(struct fill *f, const uint32_t *cand, uint32_t t0, uint32_t cnt)
{
	uint32_t *restrict taken = f->taken, *restrict ring = f->ring;
	const uint32_t *restrict index = f->index + t0;

	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t s = cand[k], w = taken[s >> 5];

		if (w & slot_bit(s)) {
			s = commit_walk(f, f->slot[t0 + k], t0 + k);
			w = taken[s >> 5];
		}
		taken[s >> 5] = w | slot_bit(s);
		ring[s] = index[k];
	}
	f->filled += cnt;
}

/* Commit the claims of turns turn[k] to their candidates in order. */
static void commit_turns(struct fill *f, const uint32_t *cand, const uint32_t *next, const uint32_t *turn,
			 uint32_t cnt)
{
	uint32_t *restrict taken = f->taken, *restrict ring = f->ring, *restrict slot = f->slot;
	const uint32_t *restrict index = f->index;

	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t t = turn[k], s = cand[k], w = taken[s >> 5];

		if (w & slot_bit(s)) {
			s = commit_walk(f, next[k], t);
			w = taken[s >> 5];
		} else {
			slot[t] = next[k];
		}
		taken[s >> 5] = w | slot_bit(s);
		ring[s] = index[t];
	}
	f->filled += cnt;
}

static void fill_batches(struct fill *f, struct batch *b, uint32_t stop, bool round_robin)
{
	while (f->filled < stop) {
		uint32_t free = f->size - f->filled, cnt = min_u32(min_u32(XLB_MAGLEV_BATCH, free / 8), stop - f->filled);
		uint32_t l16 = (uint32_t)(((uint64_t)f->size << 4) / free), t1 = 1, t = 1, stages = 1, t0;

		/*
		 * A walk's expected length is L = l16 / 16 slots (each free with
		 * odds free / size); the snapshot probes 0.8 L per walk, then 0.6 L
		 * more per walk still going, in up to 12 stages while 4 or more go
		 * on; under 1.25 one probe each (the commit walks on the few left).
		 * At most free / 8 claims a batch: two of them want the same slot
		 * 1 in 16 times.
		 */
		f->long_walks = l16 >= 12 * 16;
		if (l16 > 20) {
			t1 = (l16 * 13 + 255) / 256;
			t = (l16 * 10 + 255) / 256;
			stages = 12;
		}
		cnt = cnt ? cnt : 1;
		if (round_robin) {
			t0 = (uint32_t)f->next;
			cnt = min_u32(cnt, (uint32_t)f->n - t0);
			f->next = t0 + cnt == f->n ? 0 : t0 + cnt;
			xlb__maglev_snapshot_avx2(f->taken, f->size, f->slot + t0, f->skip + t0, cnt, b->cand, f->slot + t0,
						  t1, t, stages, MAGLEV_STAGE_MIN, &b->lists);
			commit_round_robin(f, b->cand, t0, cnt);
		} else {
			cnt = batch_claims(f, b, cnt);
			xlb__maglev_snapshot_avx2(f->taken, f->size, b->start, b->step, cnt, b->cand, b->next, t1, t,
						  stages, MAGLEV_STAGE_MIN, &b->lists);
			commit_turns(f, b->cand, b->next, b->turn, cnt);
		}
	}
}
#endif

/*
 * inv[k] = skip^-1 mod m of the k-th claimer, for every claim of the
 * endgame, with one inversion (Montgomery's trick: the inverse of the
 * prefix products, unwound); an extended Euclid per real cost more than
 * the endgame's scan.
 */
static void endgame_inverses(const struct fill *f, const struct mont *mt, const uint32_t *turn, uint32_t *inv,
			     uint32_t cnt)
{
	uint32_t acc = 0, a;

	for (uint32_t k = 0; k < cnt; k++) {
		a = redc(mt, (uint64_t)f->skip[turn[k]] * mt->r2);
		acc = k ? redc(mt, (uint64_t)acc * a) : a;
		inv[k] = acc; /* (skip_0 ... skip_k) * R */
	}
	acc = redc(mt, (uint64_t)inverse_mod(redc(mt, acc), mt->m) * mt->r2);
	for (uint32_t k = cnt - 1; k > 0; k--) {
		a = redc(mt, (uint64_t)f->skip[turn[k]] * mt->r2);
		inv[k] = redc(mt, redc(mt, (uint64_t)acc * inv[k - 1])); /* skip_k^-1 */
		acc = redc(mt, (uint64_t)acc * a);
	}
	inv[0] = redc(mt, acc);
}

/*
 * The index of the free slot that comes first in a real's permutation:
 * least position (slot - offset) * inv mod m, by Shoup's multiplication
 * (winv = inv * 2^32 / m: the quotient from one multiply, the remainder
 * below 2m in 32-bit arithmetic, as m < 2^31).
 */
static uint32_t endgame_first(const uint32_t *free_slots, uint32_t cnt, uint32_t offset, uint32_t inv,
			      uint32_t winv, uint32_t m)
{
	uint32_t best = UINT32_MAX, best_k = 0;

	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t d = free_slots[k] - offset, q, pos;

		d = min_u32(d, d + m); /* (slot - offset) mod m */
		q = (uint32_t)((uint64_t)d * winv >> 32);
		pos = d * inv - q * m;
		pos = min_u32(pos, pos - m);
		best_k = pos < best ? k : best_k;
		best = min_u32(pos, best);
	}
	return best_k;
}

/*
 * Phase 2, the endgame: each claim takes the free slot that comes first in
 * the real's permutation.  Every slot before the real's current position
 * is taken, so this is the slot its walk would reach.  buf: 3 * free slots.
 */
static void fill_endgame(struct fill *f, uint32_t *buf)
{
	const struct mont mt = mont_init(f->size);
	uint32_t *free_slots = buf, *turn, *inv, cnt = 0;

	for (uint32_t w = 0; w < (f->size + 31) / 32; w++)
		for (uint32_t bits = ~f->taken[w]; bits; bits &= bits - 1) {
			uint32_t s = w * 32 + (uint32_t)__builtin_ctz(bits);

			if (s < f->size)
				free_slots[cnt++] = s;
		}
	if (!cnt)
		return;
	turn = free_slots + cnt;
	inv = turn + cnt;
	for (uint32_t k = 0; k < cnt; k++)
		turn[k] = next_claimer(f);
	endgame_inverses(f, &mt, turn, inv, cnt);
	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t winv = (uint32_t)(((uint64_t)inv[k] << 32) / mt.m), j;

#if defined(__x86_64__)
		if (f->simd)
			j = xlb__maglev_first_avx2(free_slots, cnt - k, f->offset[turn[k]], inv[k], winv, mt.m);
		else
#endif
			j = endgame_first(free_slots, cnt - k, f->offset[turn[k]], inv[k], winv, mt.m);

		f->ring[free_slots[j]] = f->index[turn[k]];
		free_slots[j] = free_slots[cnt - k - 1];
	}
	f->filled = f->size;
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

/* Claims in a round of turns: every real once, or the sum of the weights over the largest. */
static uint64_t claims_per_round(const struct fill *f, bool round_robin)
{
	uint64_t sum = 0;

	if (round_robin)
		return f->n;
	for (size_t k = 0; k < f->n; k++)
		sum += f->weight[k];
	return sum / f->max_weight;
}

/*
 * The walk state's arrays, in one allocation (fill's array pointers into
 * it); slot and skip have 8 more (zero) entries: the AVX2 walk reads them
 * 8 at a time.
 */
static void *fill_alloc(struct fill *f, size_t n)
{
	uint8_t *mem = calloc(n + 2, 6 * sizeof(uint32_t) + sizeof(uint64_t) + 8);

	if (!mem)
		return NULL;
	f->credit = (uint64_t *)mem;
	f->slot = (uint32_t *)(f->credit + n);
	f->skip = f->slot + n + 8;
	f->index = f->skip + n + 8;
	f->weight = f->index + n;
	f->offset = f->weight + n;
	f->stamp = f->offset + n;
	return mem;
}

int xlb__maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size, bool simd)
{
	struct fill f = { .ring = ring, .size = size, .simd = simd };
	struct turn *turns = NULL, *sorted;
	uint32_t *endgame = NULL, min_weight = UINT32_MAX, stop, eg;
	uint64_t mu_offset, mu_skip;
	struct batch *batch = NULL;
	void *walk = NULL;
	bool round_robin;
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
	eg = min_u32(size, simd ? MAGLEV_ENDGAME_AVX2 : MAGLEV_ENDGAME);
	endgame = calloc(3 * (size_t)eg, sizeof(*endgame));
	turns = malloc(2 * active * sizeof(*turns));
	if (!walk || !f.taken || !endgame || !turns) {
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
	/* Every slot gets a real below, so the ring needs no clearing first. */
	stop = size - eg;
	round_robin = min_weight == f.max_weight; /* every visit claims (credits stay 0) */
#if defined(__x86_64__)
	/* batches need many claims per round (a real claims once per batch) */
	if (simd && claims_per_round(&f, round_robin) >= 32) {
		batch = calloc(1, sizeof(*batch));
		if (!batch) {
			err = -ENOMEM;
			goto out;
		}
		fill_batches(&f, batch, stop, round_robin);
	}
#endif
	if (round_robin)
		fill_walk_round_robin(&f, stop);
	else
		fill_walk(&f, stop);
	fill_endgame(&f, endgame);
out:
	free(batch);
	free(turns);
	free(endgame);
	free(f.taken);
	free(walk);
	return err;
}

bool xlb__maglev_simd(void)
{
#if defined(__x86_64__)
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

int xlb_maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size)
{
	return xlb__maglev_build(reals, n, ring, size, xlb__maglev_simd());
}
