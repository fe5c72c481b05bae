/* SPDX-License-Identifier: MIT */
/*
 * bench_path.h - time a program on the packet a benchmark names, at every
 * run, and prove with the program's own counters that it took the path the
 * benchmark names.
 *
 * The kernel: BPF_PROG_TEST_RUN with repeat through bench_pristine
 * (pristine.bpf.c), which restores the frame and tail-calls the program;
 * the same wrapper around bench_null is timed next to it and subtracted.
 * xlb's userspace engines: the same semantics, the frame restored
 * (xbpf_run_ctx__reset) before every run, and the same loop around a null
 * program on the same engine timed and subtracted.  Either way the figure is the program's own ns per packet on
 * the named packet, and the two kinds compare apples to apples.
 *
 * Runs happen on the calling thread's CPU: per-CPU state (an LRU holding
 * the established flow) is only met again if the caller stays on one CPU;
 * bench_path_pin_cpu() does that, on purpose, for the benchmarks.
 */
#ifndef XLB_BENCH_PATH_H
#define XLB_BENCH_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "bench_report.h"
#include "testbed.h"

/*
 * A counter that proves the path: the u64 at byte `off` of entry `key` of
 * array or per-CPU array map `map`, summed over CPUs, must grow by exactly
 * `per_run` at every run (0: must not move).
 */
struct bench_counter {
	const char *map;
	uint32_t key;
	uint32_t off;
	uint32_t per_run;
};

#define BENCH_COUNTERS_MAX 4

struct bench_case {
	const char *name;
	struct testbed_engine *engine;
	const uint8_t *pkt;
	uint32_t len;
	uint32_t retval; /* the action the named path ends in */
	/*
	 * 0 or XDP: through the wrapper (above).  SCHED_CLS: a program that
	 * leaves its packet as it is, timed by test_run with repeat on every
	 * engine, its counters proving that every run took the path.
	 */
	enum xbpf_prog_type type;
	struct bench_counter counters[BENCH_COUNTERS_MAX]; /* .map NULL: unused slot */
};

struct bench_path;

/* Open the kernel wrapper (pristine.bpf.o); needed for kernel-engine cases only. */
int bench_path__open(const char *pristine_obj, struct bench_path **ret_bp);
struct bench_path *bench_path__close(struct bench_path *bp);

/*
 * One timed round: `repeat` runs of c's program, each on c's packet; *ret_ns
 * the program's own ns per run.  -EPROTO when the return value or a counter
 * says another path was taken (why: what differed).  bp may be NULL for
 * userspace engines.
 */
int bench_path__time(struct bench_path *bp, const struct bench_case *c, int repeat, double *ret_ns,
		     char *why, size_t why_len);

#define BENCH_WHY_MAX 200

/*
 * Round robin: `rounds` times, every case once, in order (A B C A B C ...),
 * so that a busy neighbour disturbs all of them alike; each case runs once,
 * untimed, first (the state its path needs, e.g. the flow in the LRU).  ns[i * rounds + r]
 * is case i in round r.  A case that fails keeps its error in errs[i] and
 * the reason in whys[i], and is not run again.
 */
void bench_path__interleave(struct bench_path *bp, const struct bench_case *cases, int n, int rounds,
			    int repeat, double *ns, int *errs, char (*whys)[BENCH_WHY_MAX]);

/* Keep the calling thread on one CPU (see above); returns the CPU or -errno. */
int bench_path_pin_cpu(void);

#endif /* XLB_BENCH_PATH_H */
