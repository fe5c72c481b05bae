// SPDX-License-Identifier: MIT
/*
 * bench_maglev - Maglev table build time for 65537 slots at 10, 100 and
 * 1000 reals (equal and mixed weights), in ms, next to the reference
 * measured in the same rounds: one pass writing the 65537-slot ring (the
 * least any build must do).  Rounds interleave every case with the
 * reference; min / median / max and the ratio per round are printed.
 *
 *   bench_maglev [--rounds R] [--json FILE]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_report.h"
#include "xlb_control.h"

#define M 65537
#define MAX_REALS 1000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double one_pass(uint32_t *ring)
{
	double t0 = now_ms();

	for (uint32_t s = 0; s < M; s++)
		((volatile uint32_t *)ring)[s] = s % 10;
	return now_ms() - t0;
}

static double build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring)
{
	double t0 = now_ms();

	if (xlb_maglev_build(reals, n, ring, M)) {
		fprintf(stderr, "build failed\n");
		exit(1);
	}
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "rounds", required_argument, NULL, 'n' },
					      { "json", required_argument, NULL, 'j' }, {} };
	enum { CASES = 6 };
	static const size_t counts[] = { 10, 100, 1000 };
	uint32_t *ring = malloc(M * sizeof(*ring));
	static uint8_t ids[MAX_REALS][4];
	static struct xlb_maglev_real reals[2][MAX_REALS];
	const char *json_path = NULL;
	int rounds = 15, c;
	FILE *json;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'n')
			rounds = atoi(optarg);
		else if (c == 'j')
			json_path = optarg;
		else
			return 2;
	}
	if (!ring || rounds < 1 || rounds > 1000)
		return 2;
	for (size_t i = 0; i < MAX_REALS; i++) {
		ids[i][0] = 10;
		ids[i][1] = (uint8_t)(i >> 16);
		ids[i][2] = (uint8_t)(i >> 8);
		ids[i][3] = (uint8_t)i;
		for (int mixed = 0; mixed < 2; mixed++)
			reals[mixed][i] = (struct xlb_maglev_real){ ids[i], 4, mixed ? (uint32_t)(1 + i % 100) : 1 };
	}
	{
		double ref[rounds], t[CASES][rounds];
		char names[CASES][48];

		memset(ring, 0, M * sizeof(*ring));
		for (int r = 0; r < rounds; r++) {
			ref[r] = one_pass(ring);
			for (int k = 0; k < CASES; k++)
				t[k][r] = build(reals[k % 2], counts[k / 2], ring);
		}
		json = bench_report_json_open(json_path);
		printf("bench_maglev: %d slots, %d interleaved rounds; reference: one pass writing the ring\n", M,
		       rounds);
		bench_report_header(stdout);
		for (int k = 0; k < CASES; k++) {
			struct bench_row row = { .bench = "maglev", .name = names[k], .unit = "ms",
						 .ref = "one pass over the ring" };

			snprintf(names[k], sizeof(names[k]), "build %zu reals, %s weights", counts[k / 2],
				 k % 2 ? "1..100" : "equal");
			bench_row_fill(&row, t[k], ref, rounds);
			bench_report_row(stdout, json, &row);
		}
		if (json)
			fclose(json);
	}
	free(ring);
	return 0;
}
