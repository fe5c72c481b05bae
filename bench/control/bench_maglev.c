// SPDX-License-Identifier: MIT
/*
 * Maglev table build time for 65537 slots at 10, 100 and 1000 reals (equal
 * and mixed weights), as milliseconds and as a ratio against the reference
 * measured in the same run: one pass writing the 65537-slot ring (the
 * least any build must do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xlb_control.h"

#define M 65537

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double best_of(int reps, struct xlb_maglev_real *reals, size_t n, uint32_t *ring)
{
	double best = 1e18;

	for (int r = 0; r < reps; r++) {
		double t0 = now_ms();

		if (xlb_maglev_build(reals, n, ring, M)) {
			fprintf(stderr, "build failed\n");
			exit(1);
		}
		double t = now_ms() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

int main(void)
{
	static const size_t counts[] = { 10, 100, 1000 };
	uint32_t *ring = malloc(M * sizeof(*ring));
	uint8_t (*ids)[4] = malloc(1000 * sizeof(*ids));
	struct xlb_maglev_real *reals = malloc(1000 * sizeof(*reals));
	double ref = 1e18;

	for (int r = 0; r < 20; r++) {
		double t0 = now_ms();

		for (uint32_t s = 0; s < M; s++)
			((volatile uint32_t *)ring)[s] = s % 10;
		double t = now_ms() - t0;
		if (t < ref)
			ref = t;
	}
	printf("reference: one pass over a %u-slot ring: %.3f ms\n", M, ref);
	printf("%-8s %-8s %12s %12s\n", "reals", "weights", "build ms", "x reference");
	for (size_t c = 0; c < 3; c++) {
		size_t n = counts[c];

		for (int mixed = 0; mixed < 2; mixed++) {
			for (size_t i = 0; i < n; i++) {
				ids[i][0] = 10;
				ids[i][1] = (uint8_t)(i >> 16);
				ids[i][2] = (uint8_t)(i >> 8);
				ids[i][3] = (uint8_t)i;
				reals[i].id = ids[i];
				reals[i].id_len = 4;
				reals[i].weight = mixed ? (uint32_t)(1 + i % 100) : 1;
			}
			double t = best_of(n >= 1000 ? 3 : 5, reals, n, ring);
			printf("%-8zu %-8s %12.3f %12.1f\n", n, mixed ? "1..100" : "equal", t, t / ref);
		}
	}
	free(ring);
	free(ids);
	free(reals);
	return 0;
}
