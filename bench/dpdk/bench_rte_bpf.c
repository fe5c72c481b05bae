// SPDX-License-Identifier: MIT
/*
 * xlb-bench-rte-bpf - the call-free program (tests/dpdk/callfree.bpf.c) on
 * xlb's JIT and interpreter next to DPDK 22.11's librte_bpf JIT and
 * interpreter: ns per run over the same frames, engines interleaved
 * round by round (A B C D, A B C D, ...), ratios taken within a round.
 * The only program both can run: librte_bpf refuses xlb's balancer (its
 * bpf-to-bpf calls, tests/dpdk/rte_bpf_compare.c).
 *
 *   xlb-bench-rte-bpf CALLFREE_OBJ [--rounds N] [--frames N] [--repeat N] [--json ROWS]
 *
 * Path check: every engine's results over a round (XOR-folded) must equal
 * the others', so each timed the same program on the same frames; else
 * the run fails and prints no figure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_bpf.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include "callfree.h"
#include "xbpf.h"
#include "xbpf_engine.h"

enum { E_XLB_JIT, E_XLB_INTERP, E_RTE_JIT, E_RTE_INTERP, E_CNT };
static const char *const engine_names[E_CNT] = { "xlb JIT", "xlb interpreter", "librte_bpf JIT",
						 "librte_bpf interpreter" };

struct engines {
	struct xbpf_vm *jit, *interp;
	struct rte_bpf *rte;
	struct rte_bpf_jit rjit;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns per run of engine e over the frames, repeat times; *fold gets the results XOR-folded. */
static double time_engine(struct engines *x, int e, struct frame_rec *f, unsigned int n,
			  unsigned int repeat, uint64_t *fold)
{
	uint64_t t0, acc = 0;

	t0 = now_ns();
	for (unsigned int r = 0; r < repeat; r++) {
		for (unsigned int i = 0; i < n; i++) {
			uint64_t v;

			switch (e) {
			case E_XLB_JIT:
				v = xbpf_vm__exec(x->jit, &f[i], 0);
				break;
			case E_XLB_INTERP:
				v = xbpf_vm__exec(x->interp, &f[i], 0);
				break;
			case E_RTE_JIT:
				v = x->rjit.func(&f[i]);
				break;
			default:
				v = rte_bpf_exec(x->rte, &f[i]);
				break;
			}
			acc ^= v + i;
		}
	}
	*fold = acc;
	return (double)(now_ns() - t0) / ((double)n * repeat);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void stats_json(FILE *f, const double *v, unsigned int n)
{
	double s[n];

	memcpy(s, v, sizeof(s));
	qsort(s, n, sizeof(s[0]), cmp_double);
	fprintf(f, "{\"min\": %.4f, \"median\": %.4f, \"max\": %.4f, \"n\": %u}", s[0],
		n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2, s[n - 1], n);
}

static double median(const double *v, unsigned int n)
{
	double s[n];

	memcpy(s, v, sizeof(s));
	qsort(s, n, sizeof(s[0]), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int open_engines(const char *path, struct engines *x)
{
	struct rte_bpf_prm prm = { .prog_arg = { .type = RTE_BPF_ARG_PTR,
						 .size = sizeof(struct frame_rec) } };
	XBPF_OPTS(xbpf_vm_opts, jo, .engine = XBPF_ENGINE_JIT);
	XBPF_OPTS(xbpf_vm_opts, io, .engine = XBPF_ENGINE_INTERP);
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	struct xbpf_prog *prog = obj ? xbpf_object__next_prog(obj, NULL) : NULL;

	if (!prog)
		return -ENOENT;
	x->jit = xbpf_vm__new(prog, &jo);
	x->interp = xbpf_vm__new(prog, &io);
	x->rte = rte_bpf_elf_load(&prm, path, xbpf_prog__section(prog));
	if (!x->jit || xbpf_vm__engine(x->jit) != XBPF_ENGINE_JIT || !x->interp || !x->rte ||
	    rte_bpf_get_jit(x->rte, &x->rjit) || !x->rjit.func) {
		fprintf(stderr, "xlb-bench-rte-bpf: an engine refused %s\n", path);
		return -EINVAL;
	}
	return 0; /* obj stays open: the vms use its programs */
}

int main(int argc, char **argv)
{
	unsigned int rounds = 11, n = 4096, repeat = 50;
	const char *json = NULL;
	char prefix[64];
	char *eal[] = { argv[0], "--no-huge", "-m", "64", "--no-pci", "--no-telemetry",
			"--log-level=lib.eal:warning", prefix, NULL };
	struct engines x = { 0 };
	struct frame_rec *f;
	uint8_t b[FRAME_MAX];
	int bad = 0;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rounds"))
			rounds = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--frames"))
			n = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--repeat"))
			repeat = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--json"))
			json = argv[i + 1];
	}
	if (argc < 2 || !rounds || !n || !repeat) {
		fprintf(stderr, "usage: xlb-bench-rte-bpf CALLFREE_OBJ [--rounds N] [--frames N] [--repeat N] [--json ROWS]\n");
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=xlbrtebench%d", (int)getpid());
	if (rte_eal_init(8, eal) < 0) {
		fprintf(stderr, "xlb-bench-rte-bpf: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (open_engines(argv[1], &x))
		return 1;
	/* traffic-like frames: the valid kinds, a few mutated */
	f = calloc(n, sizeof(*f));
	srand(1 + (unsigned int)getpid());
	for (unsigned int i = 0; i < n; i++) {
		unsigned int len = frame_valid(b, (int)i);

		frame_set(&f[i], b, i % 8 ? len : frame_mutate(b, len));
	}
	{
		double ns[E_CNT][rounds], r_jit[rounds], r_interp[rounds], r_own[rounds];

		for (unsigned int r = 0; r < rounds; r++) {
			uint64_t fold[E_CNT];

			for (int e = 0; e < E_CNT; e++)
				ns[e][r] = time_engine(&x, e, f, n, repeat, &fold[e]);
			for (int e = 1; e < E_CNT; e++)
				if (fold[e] != fold[0]) {
					fprintf(stderr, "path check: %s computed other results than %s\n",
						engine_names[e], engine_names[0]);
					bad = 1;
				}
			r_jit[r] = ns[E_XLB_JIT][r] / ns[E_RTE_JIT][r];
			r_interp[r] = ns[E_XLB_INTERP][r] / ns[E_RTE_INTERP][r];
			r_own[r] = ns[E_XLB_INTERP][r] / ns[E_XLB_JIT][r];
		}
		if (bad)
			return 1;
		printf("call-free program (%u frames x %u, %u rounds), median ns per run:\n", n, repeat,
		       rounds);
		for (int e = 0; e < E_CNT; e++)
			printf("  %-24s %8.2f\n", engine_names[e], median(ns[e], rounds));
		printf("  xlb JIT / librte_bpf JIT: %.3f   xlb interp / librte_bpf interp: %.3f   xlb interp / xlb JIT: %.2f\n",
		       median(r_jit, rounds), median(r_interp, rounds), median(r_own, rounds));
		if (json) {
			FILE *o = fopen(json, "a");

			if (!o)
				return 1;
			fprintf(o, "{\"bench\": \"dpdk\", \"name\": \"call-free program, xlb JIT vs librte_bpf JIT\", \"engine\": \"jit\", \"unit\": \"ns\", \"value\": ");
			stats_json(o, ns[E_XLB_JIT], rounds);
			fprintf(o, ", \"ref\": \"librte_bpf JIT (DPDK 22.11)\", \"ref_value\": ");
			stats_json(o, ns[E_RTE_JIT], rounds);
			fprintf(o, ", \"ratio\": ");
			stats_json(o, r_jit, rounds);
			fprintf(o, "}\n{\"bench\": \"dpdk\", \"name\": \"call-free program, xlb interpreter vs librte_bpf interpreter\", \"engine\": \"interp\", \"unit\": \"ns\", \"value\": ");
			stats_json(o, ns[E_XLB_INTERP], rounds);
			fprintf(o, ", \"ref\": \"librte_bpf interpreter\", \"ref_value\": ");
			stats_json(o, ns[E_RTE_INTERP], rounds);
			fprintf(o, ", \"ratio\": ");
			stats_json(o, r_interp, rounds);
			fprintf(o, "}\n");
			fclose(o);
		}
	}
	rte_bpf_destroy(x.rte);
	xbpf_vm__free(x.jit);
	xbpf_vm__free(x.interp);
	free(f);
	rte_eal_cleanup();
	snprintf(prefix, sizeof(prefix), "/var/run/dpdk/xlbrtebench%d", (int)getpid());
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", prefix);
		return system(cmd) ? 1 : 0;
	}
}
