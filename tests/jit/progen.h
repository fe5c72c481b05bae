/* SPDX-License-Identifier: MIT */
/*
 * progen.h - random program generator for differential JIT testing.
 *
 * Programs are deterministic (no uninitialized reads, no pointer values
 * leaking into results), so every correct engine produces the same dump.
 * They stay within what the verifier accepts: forward bounded branches,
 * calls forming a DAG (at most XBPF_MAX_CALL_FRAMES deep), combined stack
 * <= 512 bytes, R1-R5 re-initialized after every call, R6-R9 initialized in
 * every function, aligned stack accesses.
 */
#ifndef XBPF_TEST_PROGEN_H
#define XBPF_TEST_PROGEN_H

#include <stdint.h>

#include "jit_test.h"

enum progen_mode {
	PROGEN_RAW,	/* hermetic helpers (TH_MIX, TH_DUMP) */
	PROGEN_XDP,	/* kernel-loadable XDP program: packet and map accesses */
};

/* XDP mode: ld_imm64 src_reg XBPF_PSEUDO_MAP_FD, imm = one of these. */
#define PROGEN_MAP_DATA 0   /* array, key u32, PROGEN_DATA_VALUE bytes, PROGEN_DATA_ENTRIES */
#define PROGEN_MAP_RESULT 1 /* array, 1 entry, PROGEN_RESULT_VALUE bytes: registers + stack */
#define PROGEN_DATA_VALUE 32
#define PROGEN_DATA_ENTRIES 4
#define PROGEN_RESULT_VALUE 512
#define PROGEN_PKT_ACCESS 64 /* bytes of packet the program may touch after its check */

struct progen_opts {
	enum progen_mode mode;
	uint64_t seed;
	int max_funcs;	     /* 1..8 */
	int body_blocks;     /* blocks per function body */
	bool helpers;	     /* TH_MIX helper calls (hermetic helpers) */
	bool long_padding;   /* sometimes pad so jumps cross the rel8 range */
	bool log_returns;    /* callees log (R0, function) with TH_LOG: debugging */
};

/*
 * Generate a raw program: R1/R2 are ignored, the main function ends with a
 * TH_DUMP call of its registers and whole stack, and returns the dumped length.
 */
void progen_raw(struct tprog *p, const struct progen_opts *opts);

/*
 * Generate an XDP program (opts->mode PROGEN_XDP) for the kernel and the
 * JIT alike: R1 is the xdp_md context, packets are accessed after the
 * verifier's data_end check, PROGEN_MAP_DATA values after a NULL check; no
 * unconditional jumps (the kernel refuses unreachable code).  It dumps R0-R9
 * (not R6, the context) and its stack into PROGEN_MAP_RESULT and returns
 * XDP_PASS.
 */
void progen_generate(struct tprog *p, const struct progen_opts *opts);

#endif
