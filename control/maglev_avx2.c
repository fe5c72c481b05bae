// SPDX-License-Identifier: MIT
/*
 * AVX2 kernels of the Maglev fill (maglev_fill.c calls them when the CPU
 * has AVX2; the rings are the portable fill's, slot for slot).  Built on
 * x86-64 only; other machines link maglev_simd_none.c (control/meson.build).
 */
#include <immintrin.h>

#include "maglev_impl.h"

#define AVX2 __attribute__((target("avx2,popcnt")))

/*
 * pack[m]: the lanes set in the 8-bit mask m, in order, a byte each (the
 * permutation that moves them to the front).  A table, not BMI2's pdep and
 * pext: those take hundreds of cycles before Zen 3.
 */
#define PACK_BIT(m, i) ((m) >> (i) & 1 ? (uint64_t)(i) << 8 * __builtin_popcount((m) & ((1u << (i)) - 1)) : 0)
#define PACK(m)                                                                                           \
	(PACK_BIT(m, 0) | PACK_BIT(m, 1) | PACK_BIT(m, 2) | PACK_BIT(m, 3) | PACK_BIT(m, 4) | PACK_BIT(m, 5) | \
	 PACK_BIT(m, 6) | PACK_BIT(m, 7))
#define PACK4(m) PACK(m), PACK((m) + 1), PACK((m) + 2), PACK((m) + 3)
#define PACK16(m) PACK4(m), PACK4((m) + 4), PACK4((m) + 8), PACK4((m) + 12)
#define PACK64(m) PACK16(m), PACK16((m) + 16), PACK16((m) + 32), PACK16((m) + 48)
static const uint64_t pack[256] = { PACK64(0u), PACK64(64u), PACK64(128u), PACK64(192u) };

AVX2 static inline __m256i pack_perm(uint32_t m)
{
	return _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)pack[m]));
}

/* (a + b) mod m of 8 lanes, a, b < m < 2^31. */
AVX2 static inline __m256i add_mod8(__m256i a, __m256i b, __m256i vm)
{
	__m256i t = _mm256_add_epi32(a, b);

	return _mm256_min_epu32(t, _mm256_sub_epi32(t, vm));
}

/*
 * t probes of 8 walks from *vs: returns each walk's first free slot, or
 * where it stopped (*vs, the next slot to probe; every slot before it is
 * taken) when all were taken; *pend: sign set in those lanes.  A walk
 * that found its free slot goes on probing (its lane would idle
 * otherwise): *hint is its next free slot, or where it stopped, where the
 * real's next claim starts (every slot in between is taken, and stays
 * taken).  Nothing but the results depends on a gather (the next one's
 * addresses would wait for it), and no store in here: a gather waits for
 * the address of every older store.
 */
AVX2 static inline __m256i probe8(const uint32_t *taken, __m256i *vs, __m256i vstep, __m256i vm, uint32_t t,
				  __m256i *pend, __m256i *hint)
{
	const __m256i c31 = _mm256_set1_epi32(31);
	__m256 res = _mm256_castsi256_ps(*vs), next = res, p1 = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), p2 = p1;
	__m256i s = *vs;

	/* sign bits: tb of the slot's bit, p1 of the lanes without a free slot yet, p2 without a second one */
	for (uint32_t i = 0; i < t; i++) {
		__m256i w = _mm256_i32gather_epi32((const int *)taken, _mm256_srli_epi32(s, 5), 4);
		__m256 tb = _mm256_castsi256_ps(_mm256_sllv_epi32(w, _mm256_andnot_si256(s, c31)));
		__m256 free2 = _mm256_andnot_ps(_mm256_or_ps(tb, p1), p2);

		res = _mm256_blendv_ps(res, _mm256_castsi256_ps(s), _mm256_andnot_ps(tb, p1));
		next = _mm256_blendv_ps(next, _mm256_castsi256_ps(s), free2);
		p2 = _mm256_andnot_ps(free2, p2);
		p1 = _mm256_and_ps(p1, tb);
		s = add_mod8(s, vstep, vm);
	}
	*vs = s;
	*pend = _mm256_castps_si256(p1);
	next = _mm256_blendv_ps(next, _mm256_castsi256_ps(s), p2);
	*hint = _mm256_castps_si256(_mm256_blendv_ps(next, _mm256_castsi256_ps(add_mod8(s, vstep, vm)), p1));
	return _mm256_castps_si256(_mm256_blendv_ps(res, _mm256_castsi256_ps(s), p1));
}

/* Append the lanes in mask m (bits) of id, s, step to the lists at cnt; returns the new count. */
AVX2 static inline uint32_t compact8(uint32_t *lid, uint32_t *ls, uint32_t *lstep, uint32_t cnt, uint32_t m,
				     __m256i id, __m256i s, __m256i step)
{
	__m256i perm = pack_perm(m);

	_mm256_storeu_si256((__m256i *)(lid + cnt), _mm256_permutevar8x32_epi32(id, perm));
	_mm256_storeu_si256((__m256i *)(ls + cnt), _mm256_permutevar8x32_epi32(s, perm));
	_mm256_storeu_si256((__m256i *)(lstep + cnt), _mm256_permutevar8x32_epi32(step, perm));
	return cnt + (uint32_t)__builtin_popcount(m);
}

/* Lanes of the group at k that hold one of cnt entries. */
static inline uint32_t live8(uint32_t cnt, uint32_t k)
{
	return cnt - k >= 8 ? 0xff : (1u << (cnt - k)) - 1;
}

/*
 * Stage 1 probes the batch in place (cand and next directly); each later
 * stage probes the list of walks still going, then (no gather after it)
 * scatters their results and lists the ones still going.
 */
AVX2 void xlb__maglev_snapshot_avx2(const uint32_t *taken, uint32_t size, const uint32_t *start, const uint32_t *step,
				    uint32_t cnt, uint32_t *cand, uint32_t *next, uint32_t t1, uint32_t t, uint32_t stages,
				    uint32_t minlist, struct xlb__maglev_lists *l)
{
	const __m256i vm = _mm256_set1_epi32((int)size), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	uint32_t n = 0, cur = 0;

	for (uint32_t k = 0; k < cnt; k += 8) {
		__m256i s = _mm256_loadu_si256((const __m256i *)(start + k)), pend, hint;
		__m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cnt - k)), lane);

		_mm256_storeu_si256((__m256i *)(cand + k),
				    probe8(taken, &s, _mm256_loadu_si256((const __m256i *)(step + k)), vm, t1, &pend, &hint));
		_mm256_maskstore_epi32((int *)(next + k), live, hint);
		_mm256_storeu_si256((__m256i *)(l->sv + k), s);
		l->pm[k / 8] = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(pend));
	}
	for (uint32_t k = 0; stages > 1 && k < cnt; k += 8)
		n = compact8(l->id[cur], l->s[cur], l->step[cur], n, l->pm[k / 8] & live8(cnt, k),
			     _mm256_add_epi32(_mm256_set1_epi32((int)k), lane),
			     _mm256_loadu_si256((const __m256i *)(l->sv + k)), _mm256_loadu_si256((const __m256i *)(step + k)));
	for (uint32_t stage = 1; stage < stages && n >= minlist; stage++) {
		const uint32_t *lid = l->id[cur], *ls = l->s[cur], *lstep = l->step[cur], len = n;

		for (uint32_t k = 0; k < len; k += 8) {
			__m256i s = _mm256_loadu_si256((const __m256i *)(ls + k)), pend, hint;

			_mm256_storeu_si256((__m256i *)(l->rv + k),
					    probe8(taken, &s, _mm256_loadu_si256((const __m256i *)(lstep + k)), vm, t, &pend,
						   &hint));
			_mm256_storeu_si256((__m256i *)(l->hv + k), hint);
			_mm256_storeu_si256((__m256i *)(l->sv + k), s);
			l->pm[k / 8] = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(pend));
		}
		for (uint32_t k = 0; k < len; k++) {
			cand[lid[k]] = l->rv[k];
			next[lid[k]] = l->hv[k];
		}
		cur ^= 1;
		n = 0;
		for (uint32_t k = 0; stage + 1 < stages && k < len; k += 8)
			n = compact8(l->id[cur], l->s[cur], l->step[cur], n, l->pm[k / 8] & live8(len, k),
				     _mm256_loadu_si256((const __m256i *)(lid + k)),
				     _mm256_loadu_si256((const __m256i *)(l->sv + k)),
				     _mm256_loadu_si256((const __m256i *)(lstep + k)));
	}
}

AVX2 uint32_t xlb__maglev_claims_avx2(uint64_t *credit, const uint32_t *weight, uint32_t n, uint32_t *next,
				      uint64_t max, uint32_t *claims, uint32_t want)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256i vmax = _mm256_set1_epi64x((long long)max), below = _mm256_set1_epi64x((long long)max - 1);
	uint32_t i = *next, cnt = 0;

	/* credits stay below max and weights below 2^32: 64-bit signed compares work */
	while (cnt < want) {
		uint32_t len = n - i < 8 ? n - i : 8, m;
		__m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)len), lane), w, lo, hi, take_lo, take_hi;
		__m256i live_lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(live));
		__m256i live_hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(live, 1));

		/* masked loads and stores only for a round's last, short step (they are slow) */
		if (len == 8) {
			w = _mm256_loadu_si256((const __m256i *)(weight + i));
			lo = _mm256_loadu_si256((const __m256i *)(credit + i));
			hi = _mm256_loadu_si256((const __m256i *)(credit + i + 4));
		} else {
			w = _mm256_maskload_epi32((const int *)(weight + i), live);
			lo = _mm256_maskload_epi64((const long long *)(credit + i), live_lo);
			hi = _mm256_maskload_epi64((const long long *)(credit + i + 4), live_hi);
		}
		lo = _mm256_add_epi64(lo, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(w)));
		hi = _mm256_add_epi64(hi, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(w, 1)));
		take_lo = _mm256_cmpgt_epi64(lo, below);
		take_hi = _mm256_cmpgt_epi64(hi, below);
		lo = _mm256_sub_epi64(lo, _mm256_and_si256(take_lo, vmax));
		hi = _mm256_sub_epi64(hi, _mm256_and_si256(take_hi, vmax));
		if (len == 8) {
			_mm256_storeu_si256((__m256i *)(credit + i), lo);
			_mm256_storeu_si256((__m256i *)(credit + i + 4), hi);
		} else {
			_mm256_maskstore_epi64((long long *)(credit + i), live_lo, lo);
			_mm256_maskstore_epi64((long long *)(credit + i + 4), live_hi, hi);
		}
		m = ((uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(take_lo)) |
		     (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(take_hi)) << 4) & ((1u << len) - 1);
		_mm256_storeu_si256((__m256i *)(claims + cnt),
				    _mm256_permutevar8x32_epi32(_mm256_add_epi32(_mm256_set1_epi32((int)i), lane), pack_perm(m)));
		cnt += (uint32_t)__builtin_popcount(m);
		i = i + len == n ? 0 : i + len;
	}
	*next = i;
	return cnt;
}

/* s + i * step mod size, i < 8. */
AVX2 static inline __m256i walk8(uint32_t s, uint32_t step, __m256i vm)
{
	const __m256i b0 = _mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1), b1 = _mm256_setr_epi32(0, 0, -1, -1, 0, 0, -1, -1);
	const __m256i b2 = _mm256_setr_epi32(0, 0, 0, 0, -1, -1, -1, -1);
	__m256i c = _mm256_set1_epi32((int)s), s1 = _mm256_set1_epi32((int)step), s2 = add_mod8(s1, s1, vm);

	c = add_mod8(c, _mm256_and_si256(s1, b0), vm);
	c = add_mod8(c, _mm256_and_si256(s2, b1), vm);
	return add_mod8(c, _mm256_and_si256(add_mod8(s2, s2, vm), b2), vm);
}

/*
 * The probes keep their candidates and masks in scratch (fixed places):
 * storing the free ones as they come would put gather results in the
 * next gather's way (the address of every older store).
 */
AVX2 uint32_t xlb__maglev_collect_avx2(const uint32_t *taken, uint32_t s, uint32_t step, uint32_t size, uint32_t want,
				       uint32_t max_probes, uint32_t *out, uint32_t *end, uint32_t *scratch)
{
	const __m256i vm = _mm256_set1_epi32((int)size), c31 = _mm256_set1_epi32(31);
	__m256i c = walk8(s, step, vm), s8;
	uint32_t *masks = scratch + max_probes + 8, it = 0, found = 0, cnt = 0;

	s8 = _mm256_set1_epi32((int)step);
	s8 = add_mod8(s8, s8, vm);
	s8 = add_mod8(s8, s8, vm);
	s8 = add_mod8(s8, s8, vm);
	do {
		__m256i w = _mm256_i32gather_epi32((const int *)taken, _mm256_srli_epi32(c, 5), 4);
		uint32_t m = ~(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_sllv_epi32(w, _mm256_andnot_si256(c, c31)))) & 0xff;

		_mm256_storeu_si256((__m256i *)(scratch + 8 * it), c);
		masks[it++] = m;
		found += (uint32_t)__builtin_popcount(m);
		c = add_mod8(c, s8, vm);
	} while (found < want && 8 * it < max_probes);
	*end = (uint32_t)_mm256_cvtsi256_si32(c);
	for (uint32_t i = 0; i < it; i++) {
		_mm256_storeu_si256((__m256i *)(out + cnt),
				    _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(scratch + 8 * i)),
								pack_perm(masks[i])));
		cnt += (uint32_t)__builtin_popcount(masks[i]);
	}
	return cnt;
}

/* Candidates s + i * step, i < 8, then 8 * step on per gather; the loop's exit is one mispredict per walk. */
AVX2 uint32_t xlb__maglev_walk_avx2(const uint32_t *taken, uint32_t s, uint32_t step, uint32_t size)
{
	const __m256i vm = _mm256_set1_epi32((int)size), c31 = _mm256_set1_epi32(31);
	const __m256i b0 = _mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1), b1 = _mm256_setr_epi32(0, 0, -1, -1, 0, 0, -1, -1);
	const __m256i b2 = _mm256_setr_epi32(0, 0, 0, 0, -1, -1, -1, -1);
	__m256i c = _mm256_set1_epi32((int)s), s2 = add_mod8(_mm256_set1_epi32((int)step), _mm256_set1_epi32((int)step), vm);
	__m256i s4 = add_mod8(s2, s2, vm), s8 = add_mod8(s4, s4, vm);
	uint32_t free;

	c = add_mod8(c, _mm256_and_si256(_mm256_set1_epi32((int)step), b0), vm);
	c = add_mod8(c, _mm256_and_si256(s2, b1), vm);
	c = add_mod8(c, _mm256_and_si256(s4, b2), vm);
	for (;;) {
		__m256i w = _mm256_i32gather_epi32((const int *)taken, _mm256_srli_epi32(c, 5), 4);

		free = ~(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_sllv_epi32(w, _mm256_andnot_si256(c, c31)))) & 0xff;
		if (free)
			break;
		c = add_mod8(c, s8, vm);
	}
	return (uint32_t)_mm256_cvtsi256_si32(_mm256_permutevar8x32_epi32(c, _mm256_set1_epi32(__builtin_ctz(free))));
}

/* (s - offset) * inv mod m of 8 slots (Shoup, as endgame_first). */
AVX2 static inline __m256i positions(__m256i s, __m256i voff, __m256i vinv, __m256i vwinv, __m256i vm)
{
	__m256i d = _mm256_sub_epi32(s, voff), q, pos;

	d = _mm256_min_epu32(d, _mm256_add_epi32(d, vm));
	q = _mm256_blend_epi32(_mm256_srli_epi64(_mm256_mul_epu32(d, vwinv), 32),
			       _mm256_mul_epu32(_mm256_srli_epi64(d, 32), vwinv), 0xaa);
	pos = _mm256_sub_epi32(_mm256_mullo_epi32(d, vinv), _mm256_mullo_epi32(q, vm));
	return _mm256_min_epu32(pos, _mm256_sub_epi32(pos, vm));
}

/* Positions are below 2^31: signed compares order them; the last block's lanes past cnt get INT32_MAX. */
AVX2 uint32_t xlb__maglev_first_avx2(const uint32_t *free_slots, uint32_t cnt, uint32_t offset, uint32_t inv,
				     uint32_t winv, uint32_t m)
{
	const __m256i vm = _mm256_set1_epi32((int)m), voff = _mm256_set1_epi32((int)offset);
	const __m256i vinv = _mm256_set1_epi32((int)inv), vwinv = _mm256_set1_epi32((int)winv);
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), none = _mm256_set1_epi32(INT32_MAX);
	__m256i best = none, best_k = _mm256_setzero_si256(), k = lane, pos, lt, min;
	uint32_t j = 0, lanes;

	for (; j + 8 <= cnt; j += 8) {
		pos = positions(_mm256_loadu_si256((const __m256i *)(free_slots + j)), voff, vinv, vwinv, vm);
		lt = _mm256_cmpgt_epi32(best, pos);
		best = _mm256_min_epi32(best, pos);
		best_k = _mm256_blendv_epi8(best_k, k, lt);
		k = _mm256_add_epi32(k, _mm256_set1_epi32(8));
	}
	if (j < cnt) {
		__m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cnt - j)), lane);

		pos = positions(_mm256_maskload_epi32((const int *)(free_slots + j), live), voff, vinv, vwinv, vm);
		pos = _mm256_or_si256(pos, _mm256_andnot_si256(live, none));
		lt = _mm256_cmpgt_epi32(best, pos);
		best = _mm256_min_epi32(best, pos);
		best_k = _mm256_blendv_epi8(best_k, k, lt);
	}
	/* the least position in every lane, then the lane that has it (positions differ) */
	min = _mm256_min_epi32(best, _mm256_shuffle_epi32(best, _MM_SHUFFLE(2, 3, 0, 1)));
	min = _mm256_min_epi32(min, _mm256_shuffle_epi32(min, _MM_SHUFFLE(1, 0, 3, 2)));
	min = _mm256_min_epi32(min, _mm256_permute2x128_si256(min, min, 1));
	lanes = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(best, min)));
	return (uint32_t)_mm256_cvtsi256_si32(_mm256_permutevar8x32_epi32(best_k, _mm256_set1_epi32(__builtin_ctz(lanes))));
}

bool xlb__maglev_simd(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}
