/* SPDX-License-Identifier: MIT */
/*
 * vcase.h - one verifier test case: a raw program, its type and maps, and
 * the verdict expected from our verifier and from the kernel.
 */
#ifndef XLB_TEST_VCASE_H
#define XLB_TEST_VCASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xbpf.h"

#define VCASE_MAX_INSNS 512
#define VCASE_MAX_MAPS 4

enum vcase_result {
	VCASE_ACCEPT = 1,
	VCASE_REJECT = 2,
};

struct vcase {
	const char *name;
	enum xbpf_prog_type type;
	struct xbpf_insn insns[VCASE_MAX_INSNS];
	size_t insn_cnt; /* 0: up to the last non-zero insn */
	struct xbpf_map_spec maps[VCASE_MAX_MAPS];
	size_t map_cnt;
	enum vcase_result result;
	const char *errstr; /* substring of our message (and of the kernel log) */
	/* Substring expected in the kernel's log instead of errstr, when its wording differs. */
	const char *kernel_errstr;
	/* Kernel cannot load this case the same way (e.g. needs our map index semantics). */
	const char *kernel_skip;
	/* BPF_PROG_LOAD prog_flags (XBPF_F_*), on both sides. */
	uint32_t prog_flags;
	/* Programs longer than insns[] (case files): used instead of insns when set. */
	struct xbpf_insn *big_insns;
	/* The program's license on both sides; NULL: "GPL". */
	const char *license;
};

/* For the case tables: registers by name, and the verdicts. */
#define R0 0
#define R1 1
#define R2 2
#define R3 3
#define R4 4
#define R5 5
#define R6 6
#define R7 7
#define R8 8
#define R9 9
#define FP 10
#define ACCEPT .result = VCASE_ACCEPT
#define REJECT(msg) .result = VCASE_REJECT, .errstr = (msg)

/* The built-in corpus: cases.c, cases_gaps.c (where xlb and the kernel once disagreed), cases_helpers.c. */
extern const struct vcase vcases[];
extern const size_t vcase_cnt;
extern const struct vcase vcases_gaps[];
extern const size_t vcase_gaps_cnt;
/* cases_helpers.c: the helpers' prototypes, each kind of argument on both sides. */
extern const struct vcase vcases_helpers[];
extern const size_t vcase_helpers_cnt;

#endif /* XLB_TEST_VCASE_H */
