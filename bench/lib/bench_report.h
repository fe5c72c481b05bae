/* SPDX-License-Identifier: MIT */
/*
 * bench_report.h - how every xlb benchmark prints a comparison: a table row
 * (min / median / max of the measured and of its reference, and of the
 * ratio taken round by round, each round measuring both), and the same as
 * one JSON object per line for scripts/bench.sh.
 */
#ifndef XLB_BENCH_REPORT_H
#define XLB_BENCH_REPORT_H

#include <stdio.h>

/* min / median / max of a series. */
struct bench_stats {
	double min, median, max;
	int n;
};

void bench_stats_of(const double *v, int n, struct bench_stats *ret_stats);

struct bench_row {
	const char *bench;  /* benchmark name, e.g. "balancer" */
	const char *name;   /* what was measured */
	const char *ref;    /* its reference (NULL: none) */
	const char *unit;   /* "ns/pkt", "ms", "Mpps" */
	const char *engine; /* "kernel", "interp", "jit", or NULL */
	struct bench_stats value, ref_value, ratio;
	const char *error;  /* not measured: why (the row prints it) */
};

void bench_report_header(FILE *out);
/* The row on out (NULL: none) and as a JSON line on json (NULL: none). */
void bench_report_row(FILE *out, FILE *json, const struct bench_row *row);

/*
 * value, ref_value and ratio from `rounds` paired measurements (ref NULL:
 * no reference); ratio is taken round by round, v[i] / ref[i].
 */
void bench_row_fill(struct bench_row *row, const double *v, const double *ref, int rounds);

/* Open --json FILE for appending (NULL path: no JSON). */
FILE *bench_report_json_open(const char *path);

#endif /* XLB_BENCH_REPORT_H */
