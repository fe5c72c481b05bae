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
 * Speed (target: 65537 slots, 1,000 reals in well under a millisecond).
 * The fill probes about M ln M slots in all, most of them at the end, when
 * a real must walk past many taken slots to find a free one.  Two things
 * make it cheap without changing a single slot of the result:
 *  - a real's next candidate is its last one plus skip (mod M): no
 *    division, and an 8 KiB occupancy bitmap that stays in L1 instead of
 *    the 256 KiB ring;
 *  - once at most `endgame` slots are free, a real's next slot is the free
 *    slot with the smallest position in its permutation, and that position
 *    is (slot - offset) * skip^-1 mod M: the few free slots are scanned
 *    once per claim instead of probing thousands of taken ones.
 * Both give exactly the slot the plain walk would (every slot before the
 * real's position was taken, and stays taken), so identical desired state
 * still gives an identical ring, whatever the speed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_control.h"

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

/* FNV-1a over the identity, finished with a 64-bit avalanche mix (splitmix64). */
static uint64_t identity_hash(const void *id, size_t len, uint64_t seed)
{
	const uint8_t *p = id;
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

struct perm {
	uint64_t credit;
	uint32_t offset, skip;
	uint32_t slot;	   /* the walk's next candidate: (offset + pos * skip) % size */
	uint32_t inv_skip; /* skip^-1 mod size, for the endgame */
};

/* Free slots below which the fill switches to the endgame (see the top). */
#define MAGLEV_ENDGAME 256

/* (a + b) % m for a, b < m < 2^31: a conditional move, not a branch (a coin flip the predictor would miss). */
static inline uint32_t add_mod(uint32_t a, uint32_t b, uint32_t m)
{
	uint32_t s = a + b;

	return s >= m ? s - m : s;
}

/* x % m for x < 2^64 with a precomputed mu = floor((2^64 - 1) / m) (Barrett). */
static inline uint64_t mod_barrett(uint64_t x, uint64_t m, uint64_t mu)
{
	uint64_t q = (uint64_t)(((unsigned __int128)x * mu) >> 64);
	uint64_t r = x - q * m;

	return r >= m ? r - m : r;
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

/*
 * Where the round-robin stands: real `i` is being served and has `credit`
 * left over from this round (the walk may hand over to the endgame in the
 * middle of a real's claims).
 */
struct fill {
	const struct xlb_maglev_real *reals;
	const size_t *order; /* turn k belongs to reals[order[k]] */
	struct perm *perm;   /* by turn */
	size_t n, i;
	uint64_t max_weight;
	uint32_t *ring;
	uint32_t size, filled;
	bool resume; /* real i's credit for this round is already counted */
};

/* The next real to claim a slot (round-robin, credit by weight); its index. */
static inline size_t next_claimer(struct fill *f)
{
	for (;;) {
		struct perm *p = &f->perm[f->i];

		if (!f->resume)
			p->credit += f->reals[f->order[f->i]].weight;
		if (p->credit >= f->max_weight) {
			p->credit -= f->max_weight;
			f->resume = true;
			return f->i;
		}
		f->resume = false;
		if (++f->i == f->n)
			f->i = 0;
	}
}

/* Phase 1, the plain walk, until `stop` slots are filled; the bitmap stays in L1. */
static void fill_walk(struct fill *f, uint64_t *taken, uint32_t stop)
{
	uint32_t size = f->size;

	while (f->filled < stop) {
		size_t i = next_claimer(f);
		struct perm *p = &f->perm[i];
		uint32_t slot = p->slot, skip = p->skip;

		while (taken[slot >> 6] >> (slot & 63) & 1)
			slot = add_mod(slot, skip, size);
		taken[slot >> 6] |= 1ull << (slot & 63);
		p->slot = add_mod(slot, skip, size);
		f->ring[slot] = (uint32_t)f->order[i];
		f->filled++;
	}
}

/*
 * Phase 2, the endgame: each claim takes the free slot that comes first in
 * the real's permutation, position (slot - offset) * skip^-1 mod size.
 * Every slot before the real's current position is taken, so this is the
 * slot its walk would reach.
 */
static void fill_endgame(struct fill *f, const uint64_t *taken, uint32_t *free_slots)
{
	uint64_t size = f->size, mu = UINT64_MAX / f->size;
	uint32_t free_cnt = 0;

	for (uint32_t s = 0; s < f->size; s++)
		if (!(taken[s >> 6] >> (s & 63) & 1))
			free_slots[free_cnt++] = s;
	for (size_t i = 0; i < f->n; i++)
		if (f->reals[f->order[i]].weight)
			f->perm[i].inv_skip = inverse_mod(f->perm[i].skip, f->size);
	while (free_cnt) {
		size_t i = next_claimer(f);
		const struct perm *p = &f->perm[i];
		uint64_t best = UINT64_MAX;
		uint32_t best_k = 0;

		for (uint32_t k = 0; k < free_cnt; k++) {
			uint64_t s = free_slots[k];
			uint64_t d = s >= p->offset ? s - p->offset : s + size - p->offset;
			uint64_t pos = mod_barrett(d * p->inv_skip, size, mu);

			if (pos < best) {
				best = pos;
				best_k = k;
			}
		}
		f->ring[free_slots[best_k]] = (uint32_t)f->order[i];
		free_slots[best_k] = free_slots[--free_cnt];
		f->filled++;
	}
}

struct turn {
	const struct xlb_maglev_real *real;
	size_t index; /* in the caller's reals[] */
};

/* Identity order: shorter first, then bytes; equal identities by index (stable). */
static int turn_cmp(const void *a, const void *b)
{
	const struct turn *x = a, *y = b;
	int c;

	if (x->real->id_len != y->real->id_len)
		return x->real->id_len < y->real->id_len ? -1 : 1;
	c = memcmp(x->real->id, y->real->id, x->real->id_len);
	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

int xlb_maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size)
{
	struct fill f = { .reals = reals, .n = n, .ring = ring, .size = size };
	uint32_t *free_slots = NULL;
	uint64_t *taken = NULL;
	size_t *order = NULL;
	struct turn *turns;
	size_t active = 0;
	int err = 0;

	if (!ring || size < 3 || !xlb_is_prime(size) || (n && !reals))
		return -EINVAL;
	for (uint32_t s = 0; s < size; s++)
		ring[s] = XLB_RING_EMPTY;
	for (size_t i = 0; i < n; i++) {
		if (!reals[i].weight)
			continue;
		active++;
		if (reals[i].weight > f.max_weight)
			f.max_weight = reals[i].weight;
	}
	if (!active)
		return 0;
	if (active > size)
		return -EINVAL;

	f.perm = calloc(n, sizeof(*f.perm));
	order = calloc(n, sizeof(*order));
	taken = calloc((size + 63) / 64, sizeof(*taken));
	free_slots = calloc(MAGLEV_ENDGAME, sizeof(*free_slots));
	if (!f.perm || !order || !taken || !free_slots) {
		err = -ENOMEM;
		goto out;
	}
	turns = calloc(n, sizeof(*turns));
	if (!turns) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		turns[i] = (struct turn){ &reals[i], i };
	qsort(turns, n, sizeof(*turns), turn_cmp);
	for (size_t k = 0; k < n; k++)
		order[k] = turns[k].index;
	free(turns);
	f.order = order;
	for (size_t k = 0; k < n; k++) {
		const struct xlb_maglev_real *r = &reals[order[k]];

		f.perm[k].offset = (uint32_t)(identity_hash(r->id, r->id_len, 0x6d61676c65763031ULL) % size);
		f.perm[k].skip = (uint32_t)(identity_hash(r->id, r->id_len, 0x736b697070657232ULL) % (size - 1) + 1);
		f.perm[k].slot = f.perm[k].offset;
	}
	fill_walk(&f, taken, size > MAGLEV_ENDGAME ? size - MAGLEV_ENDGAME : 0);
	fill_endgame(&f, taken, free_slots);
out:
	free(free_slots);
	free(taken);
	free(order);
	free(f.perm);
	return err;
}
