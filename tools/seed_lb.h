/* SPDX-License-Identifier: MIT */
/*
 * seed_lb.h - the seeds' L4 LB fixture: the two programs of seed patches 004
 * (test_l4lb_noinline, tc) and 005 (test_xdp_noinline, XDP), built at run
 * time by tests/seeds/build-seed-progs.py, and the setup their 2017
 * test_progs.c harness gave them (VIP, ring, real, test packets, expected
 * results, stats).  Shared by the seeds tests (tests/seeds, tests/jit), the
 * benchmarks and xlb-demo.
 */
#ifndef XBPF_TOOLS_SEED_LB_H
#define XBPF_TOOLS_SEED_LB_H

#include <stdint.h>

#include "tool_engine.h"

/* The harness's constants. */
#define SEED_MAGIC_VAL 0x1234
#define SEED_MAGIC_BYTES 123
#define SEED_NUM_ITER 100000
#define SEED_VIP_NUM 5

struct seed_lb_prog {
	const char *name;     /* object base name: test_l4lb_noinline */
	const char *prog;     /* program name in the object */
	enum xbpf_prog_type type;
	uint32_t expect_retval; /* the harness's expected action */
	const char *(*action_name)(uint32_t retval);
};

extern const struct seed_lb_prog seed_lb_progs[];
extern const size_t seed_lb_prog_cnt;

#define SEED_PKT_MAX 128

struct seed_lb_packet {
	const char *desc;
	uint8_t data[SEED_PKT_MAX];
	uint32_t len;
	bool harness; /* one of the harness's pkt_v4/pkt_v6 */
};

/* The harness's pkt_v4 and pkt_v6, then extra sample packets for the demo. */
size_t seed_lb_packets(const struct seed_lb_packet **ret_packets);

/* Fill vip_map, ch_rings and reals as the harness did. */
int seed_lb_setup(struct tool_engine *engine);

/* Sum of the stats entry `key` over all CPUs, as the harness reads it. */
int seed_lb_stats(struct tool_engine *engine, uint32_t key, uint64_t *ret_bytes, uint64_t *ret_pkts);

/* One test run of a packet and what came out (the output zeroed first). */
struct seed_lb_run {
	int err;
	uint32_t retval;
	uint32_t size;
	uint8_t out[SEED_PKT_MAX + 64];
};

/* Run `pkt` through the engine `repeat` times; the result in *res. */
void seed_lb_run(struct tool_engine *engine, const struct seed_lb_packet *pkt, int repeat,
		 struct seed_lb_run *res);

/*
 * Run `script SEEDS_DIR OUTDIR` (build-seed-progs.py).  Returns 0 when built,
 * 77 when the seeds are absent, another positive status on failure.
 */
int seed_lb_build(const char *script, const char *seeds_dir, const char *outdir);

#endif /* XBPF_TOOLS_SEED_LB_H */
