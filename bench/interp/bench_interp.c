/* SPDX-License-Identifier: MIT */
/*
 * bench_interp.c - xbpf-bench-interp: ns per packet of xbpf's interpreter
 * (and JIT, when the host has one) against the kernel (BPF_PROG_TEST_RUN
 * with repeat) on the seeds' two LB programs and the harness's packets,
 * printed as ratios measured in the same run.
 *
 * usage: xbpf-bench-interp [--seeds-dir DIR] [--workdir DIR] [--repeat N] [--rounds R]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed.h"

#ifndef XLB_SEEDS_DIR
#define XLB_SEEDS_DIR "../shared/seeds"
#endif
#ifndef XLB_SEED_SCRIPT
#define XLB_SEED_SCRIPT "testbed/build-seed-progs.py"
#endif

enum { COL_KERNEL, COL_INTERP, COL_JIT, COL_CNT };

/* Best (lowest) mean over `rounds` runs of `repeat` packets each: least disturbed by neighbours. */
static double measure(struct testbed_engine *e, const struct seed_lb_packet *pkt, int repeat, int rounds,
		      uint32_t *ret_retval)
{
	uint8_t out[SEED_PKT_MAX + 64];
	double best = -1;
	int r;

	for (r = 0; r < rounds; r++) {
		XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = pkt->data,
			  .data_size_in = pkt->len, .data_out = out, .data_size_out = sizeof(out),
			  .repeat = repeat);

		if (testbed_engine__test_run(e, &opts))
			return -1;
		*ret_retval = opts.retval;
		if (best < 0 || opts.duration < best)
			best = opts.duration;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "seeds-dir", required_argument, NULL, 'd' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'n' },
		{},
	};
	const char *seeds_dir = XLB_SEEDS_DIR, *workdir = "/tmp/xbpf-bench-interp";
	int repeat = 100000, rounds = 5, c, status;
	size_t i, p;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd': seeds_dir = optarg; break;
		case 'w': workdir = optarg; break;
		case 'r': repeat = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: xbpf-bench-interp [--seeds-dir DIR] [--workdir DIR] "
					"[--repeat N] [--rounds R]\n");
			return 2;
		}
	}
	if (repeat < 1 || rounds < 1)
		return 2;
	if (!testbed_kernel_available()) {
		printf("SKIP: no kernel engine in this build (the reference)\n");
		return 77;
	}
	status = seed_lb_build(XLB_SEED_SCRIPT, seeds_dir, workdir);
	if (status == 77) {
		printf("SKIP: seeds absent at %s\n", seeds_dir);
		return 77;
	}
	if (status)
		return 1;

	printf("xbpf-bench-interp: ns/packet, best of %d rounds x %d packets; ratio = engine / kernel\n",
	       rounds, repeat);
	printf("%-20s %-8s %10s %10s %10s %12s %10s\n", "program", "packet", "kernel", "interp",
	       "jit", "interp/kern", "jit/kern");
	for (i = 0; i < seed_lb_prog_cnt; i++) {
		const struct seed_lb_prog *sp = &seed_lb_progs[i];
		struct testbed_engine *eng[COL_CNT] = { 0 };
		struct testbed_prog_src src = { 0 };
		const struct seed_lb_packet *pkts;
		char path[4096];
		int col, err;

		snprintf(path, sizeof(path), "%s/%s.o", workdir, sp->name);
		src.path = path;
		src.prog_name = sp->prog;
		for (col = 0; col < COL_CNT; col++) {
			static const enum testbed_engine_kind kinds[] = { TESTBED_ENGINE_KERNEL,
								       TESTBED_ENGINE_INTERP,
								       TESTBED_ENGINE_JIT };
			struct testbed_engine_opts o = { 0 };

			err = testbed_engine__open(kinds[col], &src, &o, &eng[col]);
			if (err == -EACCES || err == -EINVAL) {
				/* Benchmark the engine even if our verifier still refuses it. */
				o.skip_verify = true;
				if (!testbed_engine__open(kinds[col], &src, &o, &eng[col]))
					printf("(%s: %s unverified: our verifier rejects it)\n",
					       sp->name, testbed_engine_kind_name(kinds[col]));
			} else if (err) {
				printf("(%s: %s engine unavailable: %s)\n", sp->name,
				       testbed_engine_kind_name(kinds[col]), strerror(-err));
			}
			if (col == COL_JIT && eng[col] &&
			    xbpf_vm__engine(testbed_engine__vm(eng[col])) != XBPF_ENGINE_JIT)
				eng[col] = testbed_engine__close(eng[col]); /* fell back: no JIT */
			if (eng[col] && seed_lb_setup(eng[col]))
				printf("(%s: %s map setup failed)\n", sp->name,
				       testbed_engine_kind_name(kinds[col]));
		}
		seed_lb_packets(&pkts);
		for (p = 0; p < 2; p++) {
			double ns[COL_CNT];
			uint32_t rv[COL_CNT] = { 0 };
			char cells[COL_CNT][16], ratio[2][16];

			for (col = 0; col < COL_CNT; col++) {
				ns[col] = eng[col] ? measure(eng[col], &pkts[p], repeat, rounds, &rv[col]) : -1;
				if (ns[col] < 0)
					snprintf(cells[col], sizeof(cells[col]), "-");
				else
					snprintf(cells[col], sizeof(cells[col]), "%.0f", ns[col]);
			}
			for (col = COL_INTERP; col <= COL_JIT; col++) {
				if (ns[col] >= 0 && ns[COL_KERNEL] > 0)
					snprintf(ratio[col - 1], sizeof(ratio[0]), "%.2fx",
						 ns[col] / ns[COL_KERNEL]);
				else
					snprintf(ratio[col - 1], sizeof(ratio[0]), "-");
				if (ns[col] >= 0 && ns[COL_KERNEL] >= 0 && rv[col] != rv[COL_KERNEL])
					printf("(warning: %s retval %u differs from kernel %u)\n",
					       col == COL_JIT ? "jit" : "interp",
					       rv[col], rv[COL_KERNEL]);
			}
			printf("%-20s %-8s %10s %10s %10s %12s %10s\n", sp->name, p ? "pkt_v6" : "pkt_v4",
			       cells[COL_KERNEL], cells[COL_INTERP], cells[COL_JIT], ratio[0], ratio[1]);
		}
		for (col = 0; col < COL_CNT; col++)
			testbed_engine__close(eng[col]);
	}
	return 0;
}
