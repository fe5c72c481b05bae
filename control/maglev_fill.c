// SPDX-License-Identifier: MIT
/*
 * The Maglev fill's phases (maglev.c's top comment has the overview and
 * the measurements): the claim generator, the plain walk, the AVX2 walk in
 * batches, the endgame.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maglev_impl.h"

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

/* Free slots at which the fill switches to the endgame (maglev.c's top comment has why these). */
#define MAGLEV_ENDGAME 256
#define MAGLEV_ENDGAME_AVX2 384
/* The AVX2 snapshot's next stage needs this many walks still going (fewer walk on in the commit). */
#define MAGLEV_STAGE_MIN 4
/* Probes of a real's candidates per batch of small rounds at most (the commit walks on after). */
#define MAGLEV_COLLECT 2048

/*
 * The next claimer's turn.  Round robin with credit by weight: at each
 * visit a real earns its weight and claims a slot when its credit reaches
 * max_weight (at most once per round, as weight <= max_weight).  Computed
 * XLB_MAGLEV_CLAIMS claims ahead with a conditional move per visit (with
 * AVX2, 8 visits a step): with mixed weights whether a real claims at its
 * visit is a coin flip for the branch predictor.
 */
static void claims_refill(struct maglev_fill *f)
{
	const uint64_t max = f->max_weight;
	const uint32_t *weight = f->weight;
	uint64_t *credit = f->credit;
	const size_t n = f->n;
	uint32_t cnt = 0;
	size_t i = f->next;

	if (f->simd) {
		uint32_t next = (uint32_t)f->next;

		f->claim_cnt = xlb__maglev_claims_avx2(credit, weight, (uint32_t)n, &next, max, f->claims, XLB_MAGLEV_CLAIMS);
		f->claim_pos = 0;
		f->next = next;
		return;
	}
	while (cnt < XLB_MAGLEV_CLAIMS) {
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

static inline uint32_t next_claimer(struct maglev_fill *f)
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
static void fill_walk_round_robin(struct maglev_fill *f, uint32_t stop)
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
static void fill_walk(struct maglev_fill *f, uint32_t stop)
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

/* Small rounds: each real's candidates for all its claims of a batch (fill_sequences). */
struct seqs {
	struct seq {
		uint32_t t, want, base, cnt, skip, end;
	} seq[XLB_MAGLEV_BATCH];
	uint32_t sidx[XLB_MAGLEV_BATCH], jdx[XLB_MAGLEV_BATCH]; /* a claim's sequence, its claims before it there */
	uint32_t cand[XLB_MAGLEV_BATCH]; /* its candidate if its real skipped none; past the last: none (UINT32_MAX) */
	uint32_t pool[8 * XLB_MAGLEV_BATCH + 16];
	uint32_t scratch[MAGLEV_COLLECT + 8 + MAGLEV_COLLECT / 8 + 1];
};

/* Up to cnt next claims into b->turn, ending before a real that already has one in the batch. */
static uint32_t batch_claims(struct maglev_fill *f, struct batch *b, uint32_t cnt)
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
 * taken).  Long walks (near the end) 8 candidates per gather, short ones
 * plainly: the gathers' latency cost more there.
 */
static __attribute__((noinline)) uint32_t walk_on(const struct maglev_fill *f, uint32_t from, uint32_t step)
{
	uint32_t word;

	if (f->long_walks)
		return xlb__maglev_walk_avx2(f->taken, from, step, f->size);
	return walk_to_free(f->taken, from, step, f->size, &word);
}

/* Commit the claims of turns t0.. to their candidates in order (the snapshot wrote their next slots in slot[]). */
static void commit_round_robin(struct maglev_fill *f, const uint32_t *cand, uint32_t t0, uint32_t cnt)
{
	uint32_t *restrict taken = f->taken, *restrict ring = f->ring;
	const uint32_t *restrict index = f->index + t0;

	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t s = cand[k], w = taken[s >> 5];

		if (w & slot_bit(s)) {
			s = walk_on(f, f->slot[t0 + k], f->skip[t0 + k]);
			f->slot[t0 + k] = add_mod(s, f->skip[t0 + k], f->size);
			w = taken[s >> 5];
		}
		taken[s >> 5] = w | slot_bit(s);
		ring[s] = index[k];
	}
	f->filled += cnt;
}

/* Commit the claims of turns turn[k] to their candidates in order. */
static void commit_turns(struct maglev_fill *f, const uint32_t *cand, const uint32_t *next, const uint32_t *turn,
			 uint32_t cnt)
{
	uint32_t *restrict taken = f->taken, *restrict ring = f->ring, *restrict slot = f->slot;
	const uint32_t *restrict index = f->index;

	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t t = turn[k], s = cand[k], w = taken[s >> 5];

		if (w & slot_bit(s)) {
			s = walk_on(f, next[k], f->skip[t]);
			slot[t] = add_mod(s, f->skip[t], f->size);
			w = taken[s >> 5];
		} else {
			slot[t] = next[k];
		}
		taken[s >> 5] = w | slot_bit(s);
		ring[s] = index[t];
	}
	f->filled += cnt;
}

/* Claims in a round of turns: every real once, or the sum of the weights over the largest. */
static uint64_t claims_per_round(const struct maglev_fill *f, bool round_robin)
{
	uint64_t sum = 0;

	if (round_robin)
		return f->n;
	for (size_t k = 0; k < f->n; k++)
		sum += f->weight[k];
	return sum / f->max_weight;
}

/*
 * A walk's expected length is L = size / free slots (each slot free with
 * odds free / size): the snapshot probes 0.8 L per walk, then 0.6 L more
 * per walk still going, in up to 12 stages while 4 or more go on; under
 * L = 1.25, one probe each (the commit walks on the few left).  At most
 * free / 8 claims a batch: a claim finds its candidate taken by an earlier
 * one of its batch 1 in 16 times on average.
 */
static void fill_batches(struct maglev_fill *f, struct batch *b, uint32_t stop, bool round_robin)
{
	while (f->filled < stop) {
		uint32_t free = f->size - f->filled, cnt = min_u32(min_u32(XLB_MAGLEV_BATCH, free / 8), stop - f->filled);
		uint32_t l16 = (uint32_t)(((uint64_t)f->size << 4) / free), t1 = 1, t = 1, stages = 1, t0;

		f->long_walks = l16 >= 12 * 16;
		if (l16 > 20) {
			t1 = (l16 * 13 + 255) / 256;
			t = (l16 * 10 + 255) / 256;
			stages = 12;
		}
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

/*
 * A claim's sequence candidate was taken (by a claim before it): it takes
 * the real's next one still free, or walks on after the last one.
 */
static __attribute__((noinline)) uint32_t seq_next(const struct maglev_fill *f, const struct seqs *b, struct seq *q,
						    uint32_t p)
{
	uint32_t s;

	for (; p < q->base + q->cnt; p++, q->skip++) {
		s = b->pool[p];
		if (!(f->taken[s >> 5] & slot_bit(s)))
			return s;
	}
	s = walk_on(f, q->end, f->skip[q->t]);
	q->end = add_mod(s, f->skip[q->t], f->size);
	return s;
}

/*
 * Phase 1 with AVX2 and small rounds (a batch of claims goes round several
 * times): each real's walk finds the free slots for all its claims of the
 * batch, 8 candidates per gather; the claims then take them in turn order,
 * each its real's first one still free (a claim before it may have taken
 * some).  The candidates are in walk order with every slot between them
 * taken: each claim gets the slot of the plain walk.  A claim finds its
 * candidate by its place among its real's claims (sidx, jdx), not by a
 * count kept per real: that store and load every claim would chain the
 * claims (the load predicted to wait for an older store).
 */
static void fill_sequences(struct maglev_fill *f, struct seqs *b, uint32_t stop, bool round_robin)
{
	uint32_t *restrict taken = f->taken, *restrict ring = f->ring, *restrict slot = f->slot;
	const uint32_t *restrict skip = f->skip, *restrict index = f->index;

	while (f->filled < stop) {
		uint32_t free = f->size - f->filled, cnt = min_u32(min_u32(XLB_MAGLEV_BATCH, free / 8), stop - f->filled);
		uint32_t nseq = 0, base = 0;

		f->long_walks = (uint64_t)f->size >= 12ULL * free;
		if (round_robin) {
			uint32_t n = (uint32_t)f->n, t0 = (uint32_t)f->next;

			nseq = min_u32(n, cnt);
			for (uint32_t i = 0; i < nseq; i++)
				b->seq[i] = (struct seq){ .t = (t0 + i) % n, .want = (cnt - i + n - 1) / n };
			for (uint32_t k = 0, i = 0, j = 0; k < cnt; k++) {
				b->sidx[k] = i;
				b->jdx[k] = j;
				i = i + 1 == n ? 0 : i + 1;
				j += !i;
			}
			f->next = (t0 + cnt) % n;
		} else {
			uint32_t no = ++f->batch_no;

			for (uint32_t k = 0; k < cnt; k++) {
				uint32_t t = next_claimer(f);

				if (f->stamp[t] != no) {
					f->stamp[t] = no;
					f->local[t] = nseq;
					b->seq[nseq++] = (struct seq){ .t = t };
				}
				b->sidx[k] = f->local[t];
				b->jdx[k] = b->seq[f->local[t]].want++;
			}
		}
		for (uint32_t i = 0; i < nseq; i++) {
			struct seq *q = &b->seq[i];

			q->base = base;
			q->cnt = xlb__maglev_collect_avx2(taken, slot[q->t], skip[q->t], f->size, q->want, MAGLEV_COLLECT,
							  b->pool + base, &q->end, b->scratch);
			base += q->cnt;
		}
		for (uint32_t k = 0; k < cnt; k++) {
			const struct seq *q = &b->seq[b->sidx[k]];

			b->cand[k] = b->jdx[k] < q->cnt ? b->pool[q->base + b->jdx[k]] : UINT32_MAX;
		}
		/* once a real skipped a candidate, its claims' own ones are taken: they look further */
		for (uint32_t k = 0; k < cnt; k++) {
			uint32_t s = b->cand[k];

			if (s >= f->size || (taken[s >> 5] & slot_bit(s))) {
				struct seq *q = &b->seq[b->sidx[k]];

				s = seq_next(f, b, q, q->base + b->jdx[k] + q->skip);
			}
			taken[s >> 5] |= slot_bit(s);
			ring[s] = index[b->seq[b->sidx[k]].t];
		}
		for (uint32_t i = 0; i < nseq; i++) {
			struct seq *q = &b->seq[i];
			uint32_t used = q->want + q->skip;

			slot[q->t] = used < q->cnt ? b->pool[q->base + used] : q->end;
		}
		f->filled += cnt;
	}
}

/*
 * inv[k] = skip^-1 mod m of the k-th claimer, for every claim of the
 * endgame, with one inversion (Montgomery's trick: the inverse of the
 * prefix products, unwound); an extended Euclid per real cost more than
 * the endgame's scan.
 */
static void endgame_inverses(const struct maglev_fill *f, const struct mont *mt, const uint32_t *turn, uint32_t *inv,
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
static void fill_endgame(struct maglev_fill *f, uint32_t *buf)
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

		if (f->simd)
			j = xlb__maglev_first_avx2(free_slots, cnt - k, f->offset[turn[k]], inv[k], winv, mt.m);
		else
			j = endgame_first(free_slots, cnt - k, f->offset[turn[k]], inv[k], winv, mt.m);

		f->ring[free_slots[j]] = f->index[turn[k]];
		free_slots[j] = free_slots[cnt - k - 1];
	}
	f->filled = f->size;
}

int xlb__maglev_fill(struct maglev_fill *f, bool round_robin)
{
	uint32_t eg = min_u32(f->size, f->simd ? MAGLEV_ENDGAME_AVX2 : MAGLEV_ENDGAME), stop = f->size - eg;
	uint32_t *endgame = calloc(3 * (size_t)eg, sizeof(*endgame));
	struct batch *batch = NULL;
	struct seqs *seqs = NULL;

	if (!endgame)
		return -ENOMEM;
	/*
	 * A batch's claims are of distinct reals with 16 claims a round or
	 * more (fewer: too few walks for the lanes); whole sequences else
	 * (a real's batch of claims costs a gather and a mispredict at least).
	 */
	if (f->simd && claims_per_round(f, round_robin) >= 16) {
		batch = calloc(1, sizeof(*batch)); /* zero: padding lanes read start and step */
		if (!batch) {
			free(endgame);
			return -ENOMEM;
		}
		fill_batches(f, batch, stop, round_robin);
	} else if (f->simd) {
		seqs = malloc(sizeof(*seqs));
		if (!seqs) {
			free(endgame);
			return -ENOMEM;
		}
		fill_sequences(f, seqs, stop, round_robin);
	}
	if (round_robin)
		fill_walk_round_robin(f, stop);
	else
		fill_walk(f, stop);
	fill_endgame(f, endgame);
	free(seqs);
	free(batch);
	free(endgame);
	return 0;
}
