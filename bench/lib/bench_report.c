// SPDX-License-Identifier: MIT
/*
 * bench_report.c - see bench_report.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_report.h"

void bench_report_header(FILE *out)
{
	fprintf(out, "%-52s %-7s %26s %26s %22s\n", "measured", "unit", "min / median / max",
		"reference min/med/max", "ratio min/med/max");
}

static void cell(char *buf, size_t len, const struct bench_stats *s, const char *fmt)
{
	char a[16], b[16], c[16];

	if (!s->n) {
		snprintf(buf, len, "-");
		return;
	}
	/* small figures (ms, Mpps) keep three decimals */
	if (!strcmp(fmt, "%.1f") && s->max < 10)
		fmt = "%.3f";
	snprintf(a, sizeof(a), fmt, s->min);
	snprintf(b, sizeof(b), fmt, s->median);
	snprintf(c, sizeof(c), fmt, s->max);
	snprintf(buf, len, "%s / %s / %s", a, b, c);
}

static void json_stats(FILE *json, const char *key, const struct bench_stats *s)
{
	if (s->n)
		fprintf(json, ", \"%s\": {\"min\": %.4f, \"median\": %.4f, \"max\": %.4f, \"n\": %d}", key, s->min,
			s->median, s->max, s->n);
}

static void json_str(FILE *json, const char *key, const char *v)
{
	if (!v)
		return;
	fprintf(json, ", \"%s\": \"", key);
	for (; *v; v++)
		fprintf(json, *v == '"' || *v == '\\' ? "\\%c" : "%c", *v);
	fputc('"', json);
}

void bench_report_row(FILE *out, FILE *json, const struct bench_row *r)
{
	char v[64], rv[64], ratio[64], name[96];

	snprintf(name, sizeof(name), "%s%s%s", r->engine ? r->engine : "", r->engine ? " " : "", r->name);
	if (!out) {
		/* JSON only */
	} else if (r->error) {
		fprintf(out, "%-52s not measured: %s\n", name, r->error);
	} else {
		cell(v, sizeof(v), &r->value, "%.1f");
		cell(rv, sizeof(rv), &r->ref_value, "%.1f");
		cell(ratio, sizeof(ratio), &r->ratio, "%.3f");
		fprintf(out, "%-52s %-7s %26s %26s %22s%s%s\n", name, r->unit, v, rv, ratio, r->ref ? "  vs " : "",
			r->ref ? r->ref : "");
	}
	if (!json)
		return;
	fprintf(json, "{\"bench\": \"%s\"", r->bench);
	json_str(json, "name", r->name);
	json_str(json, "engine", r->engine);
	json_str(json, "ref", r->ref);
	json_str(json, "unit", r->unit);
	json_str(json, "error", r->error);
	json_stats(json, "value", &r->value);
	json_stats(json, "ref_value", &r->ref_value);
	json_stats(json, "ratio", &r->ratio);
	fprintf(json, "}\n");
	fflush(json);
}

FILE *bench_report_json_open(const char *path)
{
	FILE *f;

	if (!path)
		return NULL;
	f = fopen(path, "a");
	if (!f)
		perror(path);
	return f;
}

void bench_row_fill(struct bench_row *r, const double *v, const double *ref, int rounds)
{
	double ratio[rounds > 0 ? rounds : 1];

	bench_stats_of(v, rounds, &r->value);
	memset(&r->ref_value, 0, sizeof(r->ref_value));
	memset(&r->ratio, 0, sizeof(r->ratio));
	if (!ref)
		return;
	for (int i = 0; i < rounds; i++)
		ratio[i] = ref[i] > 0 ? v[i] / ref[i] : 0;
	bench_stats_of(ref, rounds, &r->ref_value);
	bench_stats_of(ratio, rounds, &r->ratio);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_stats_of(const double *v, int n, struct bench_stats *s)
{
	double sorted[n > 0 ? n : 1];

	memset(s, 0, sizeof(*s));
	if (n <= 0)
		return;
	memcpy(sorted, v, sizeof(double) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(double), cmp_double);
	s->n = n;
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}
