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

struct progen_opts {
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

#endif
