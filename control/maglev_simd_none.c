// SPDX-License-Identifier: MIT
/*
 * The Maglev fill's SIMD kernels on machines without them (control/meson.build
 * links this file instead of maglev_avx2.c off x86-64): xlb__maglev_simd()
 * says no, so maglev_fill.c takes the portable code and never calls the
 * kernels below.
 */
#include <stdlib.h>

#include "maglev_impl.h"

bool xlb__maglev_simd(void)
{
	return false;
}

void xlb__maglev_snapshot_avx2(const uint32_t *taken, uint32_t size, const uint32_t *start, const uint32_t *step,
			       uint32_t cnt, uint32_t *cand, uint32_t *next, uint32_t t1, uint32_t t, uint32_t stages,
			       uint32_t minlist, struct xlb__maglev_lists *l)
{
	abort();
}

uint32_t xlb__maglev_claims_avx2(uint64_t *credit, const uint32_t *weight, uint32_t n, uint32_t *next,
				 uint64_t max, uint32_t *claims, uint32_t want)
{
	abort();
}

uint32_t xlb__maglev_collect_avx2(const uint32_t *taken, uint32_t s, uint32_t step, uint32_t size, uint32_t want,
				  uint32_t max_probes, uint32_t *out, uint32_t *end, uint32_t *scratch)
{
	abort();
}

uint32_t xlb__maglev_walk_avx2(const uint32_t *taken, uint32_t s, uint32_t step, uint32_t size)
{
	abort();
}

uint32_t xlb__maglev_first_avx2(const uint32_t *free_slots, uint32_t cnt, uint32_t offset, uint32_t inv,
				uint32_t winv, uint32_t m)
{
	abort();
}
