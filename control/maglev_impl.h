/* SPDX-License-Identifier: MIT */
/*
 * maglev_impl.h - private to libxlbctl's Maglev fill: maglev.c (the fill,
 * portable) <- maglev_avx2.c (x86-64 AVX2 kernels, chosen at run time).
 */
#ifndef XLB_MAGLEV_IMPL_H
#define XLB_MAGLEV_IMPL_H

#include <stdbool.h>

#include "xlb_control.h"

/* True when this CPU runs the AVX2 kernels (x86-64 with AVX2). */
bool xlb__maglev_simd(void);

/* xlb_maglev_build with the AVX2 kernels (simd: only where xlb__maglev_simd()) or the portable code alone: same ring. */
int xlb__maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size, bool simd);

#if defined(__x86_64__)
/*
 * The endgame's scan: the index k < cnt of the free slot that comes first
 * in a real's permutation, least (free_slots[k] - offset) * inv mod m
 * (inv = skip^-1, winv = inv * 2^32 / m; m odd, < 2^31).
 */
uint32_t xlb__maglev_first_avx2(const uint32_t *free_slots, uint32_t cnt, uint32_t offset, uint32_t inv,
				uint32_t winv, uint32_t m);
#endif

#endif /* XLB_MAGLEV_IMPL_H */
