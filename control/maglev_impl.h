/* SPDX-License-Identifier: MIT */
/*
 * maglev_impl.h - private to libxlbctl's Maglev tables: maglev.c (the API,
 * the reals' hashes and turn order) <- maglev_fill.c (the fill's phases)
 * <- maglev_avx2.c (their x86-64 AVX2 kernels, chosen at run time), or
 * maglev_simd_none.c elsewhere.
 */
#ifndef XLB_MAGLEV_IMPL_H
#define XLB_MAGLEV_IMPL_H

#include <stdbool.h>

#include "xlb_control.h"

/* Claims the weighted generator computes ahead at a time. */
#define XLB_MAGLEV_CLAIMS 256

/* Walk state, one entry per weighted real, in turn order. */
struct maglev_fill {
	uint32_t *slot;	    /* the walk's next candidate: (offset + pos * skip) % size */
	uint32_t *skip;
	uint32_t *index;    /* in the caller's reals[] */
	uint32_t *weight;
	uint64_t *credit;
	uint32_t *offset;   /* endgame only */
	uint32_t *stamp;    /* the last batch with a claim of the real (AVX2 walk) */
	uint32_t *local;    /* the real's sequence in that batch (AVX2 walk of small rounds) */
	size_t n;
	size_t next; /* the turn the claim generator visits next */
	uint64_t max_weight;
	uint32_t *ring, *taken;
	uint32_t size, filled;
	bool simd; /* the AVX2 kernels */
	uint32_t batch_no;
	bool long_walks; /* the AVX2 commit's walks: 12 slots or more expected */
	uint32_t claim_cnt, claim_pos;
	uint32_t claims[XLB_MAGLEV_CLAIMS + 8]; /* turns that claim next, in order */
};

/*
 * Fill f->ring: each slot gets its real's index (the walk, then the
 * endgame; maglev.c's top comment has the phases).  0 or -ENOMEM.
 */
int xlb__maglev_fill(struct maglev_fill *f, bool round_robin);

/* True when this CPU runs the AVX2 kernels (x86-64 with AVX2). */
bool xlb__maglev_simd(void);

/* xlb_maglev_build with the AVX2 kernels (simd: only where xlb__maglev_simd()) or the portable code alone: same ring. */
int xlb__maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size, bool simd);

/* Claims per batch of the AVX2 walk. */
#define XLB_MAGLEV_BATCH 256

/* The snapshot's working lists: claims still walking (claim, slot, step), probe results by group. */
struct xlb__maglev_lists {
	uint32_t id[2][XLB_MAGLEV_BATCH + 8], s[2][XLB_MAGLEV_BATCH + 8], step[2][XLB_MAGLEV_BATCH + 8];
	uint32_t sv[XLB_MAGLEV_BATCH + 8], rv[XLB_MAGLEV_BATCH + 8], hv[XLB_MAGLEV_BATCH + 8];
	uint32_t pm[XLB_MAGLEV_BATCH / 8 + 1];
};

/*
 * The AVX2 walk's snapshot of a batch of cnt <= XLB_MAGLEV_BATCH claims:
 * cand[k] = the first slot free in taken[] (as it is now, nothing is
 * claimed) from start[k] along step[k] (mod size), or a slot before which
 * every slot of that walk is taken, where the probes gave up.  Walks of 8
 * claims probe 8 slots per gather: t1 probes each, then the walks still
 * going t more each, in at most `stages` rounds while at least `minlist`
 * go on.  next[k]: where the real's walk goes on after claiming cand[k]
 * (every slot between them is taken).  start and step are read 8 at a
 * time: readable (and < size) to cnt rounded up to 8.
 */
void xlb__maglev_snapshot_avx2(const uint32_t *taken, uint32_t size, const uint32_t *start, const uint32_t *step,
			       uint32_t cnt, uint32_t *cand, uint32_t *next, uint32_t t1, uint32_t t, uint32_t stages,
			       uint32_t minlist, struct xlb__maglev_lists *l);

/*
 * The claim generator (maglev_fill.c's claims_refill) 8 visits per step: from
 * turn *next on, each visit adds the real's weight to its credit and
 * claims when the credit reaches max (credit -= max); the claimers' turns
 * go to claims[], until at least want (at most want + 7): their count.
 */
uint32_t xlb__maglev_claims_avx2(uint64_t *credit, const uint32_t *weight, uint32_t n, uint32_t *next,
				 uint64_t max, uint32_t *claims, uint32_t want);

/*
 * The free slots of a walk from s on (s included), 8 candidates per
 * gather, until at least want (or max_probes probes): into out[] (room
 * for want + 7), their count; *end: the next slot to probe (every slot
 * before it not in out[] is taken).  scratch: max_probes + 8 entries and
 * max_probes / 8 + 1 more.
 */
uint32_t xlb__maglev_collect_avx2(const uint32_t *taken, uint32_t s, uint32_t step, uint32_t size, uint32_t want,
				  uint32_t max_probes, uint32_t *out, uint32_t *end, uint32_t *scratch);

/* The first free slot of a walk from s on (s included), 8 candidates per gather: the commit's long walks. */
uint32_t xlb__maglev_walk_avx2(const uint32_t *taken, uint32_t s, uint32_t step, uint32_t size);

/*
 * The endgame's scan: the index k < cnt of the free slot that comes first
 * in a real's permutation, least (free_slots[k] - offset) * inv mod m
 * (inv = skip^-1, winv = inv * 2^32 / m; m odd, < 2^31).
 */
uint32_t xlb__maglev_first_avx2(const uint32_t *free_slots, uint32_t cnt, uint32_t offset, uint32_t inv,
				uint32_t winv, uint32_t m);
#endif /* XLB_MAGLEV_IMPL_H */
