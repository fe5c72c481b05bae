// SPDX-License-Identifier: MIT
/*
 * AVX2 kernels of the Maglev fill (maglev.c calls them when the CPU has
 * AVX2; each gives exactly what its portable counterpart gives).
 */
#include "maglev_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

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
#endif
