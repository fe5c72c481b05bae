/* SPDX-License-Identifier: MIT */
/*
 * isa_corpus.h - a data-driven eBPF ISA test corpus, shared by every engine.
 *
 * Each case is a small program (written with tests/lib/insn.h), an
 * optional input memory and the expected 64-bit R0.  Programs follow the
 * XBPF_PROG_RAW_MEM convention: R1 points at a private copy of the input
 * memory (writable), R2 holds its length; the legacy packet loads
 * (LD_ABS/LD_IND) run as SCHED_CLS programs over a packet instead.  Cases cover every opcode family
 * with edge values, all jump conditions (generated: signed/unsigned, 32/64,
 * K/X over value pairs chosen to tell them apart), atomics, byte swaps, the
 * v4 additions and bpf-to-bpf calls up to the 8-frame limit.
 *
 * How to use it (JIT differential tests do exactly this):
 *
 *	size_t n;
 *	const struct isa_case *cases = isa_corpus_cases(&n);
 *	int failures = isa_corpus_check_all(XBPF_ENGINE_JIT, stderr);
 *
 * isa_corpus_check_all() runs every case on the given engine, checks R0
 * against the expected value and, for a JIT, against the interpreter too.
 * Cases flagged ISA_F_INTERP_ONLY expect the interpreter to stop a hostile
 * program (call depth, endless loop, missing helper) and are skipped for
 * JITs.  Programs run with skip_verify unless `verify` is asked for.
 *
 * The kernel comparison (tests/jit/test_isa_kernel.c) loads every case
 * without ISA_F_NO_KERNEL into the kernel as XDP behind a prologue that
 * turns the packet into the R1/R2 memory convention.
 */
#ifndef XBPF_TEST_ISA_CORPUS_H
#define XBPF_TEST_ISA_CORPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xbpf_engine.h"

/* The kernel verifier would reject the case (reason in kernel_skip). */
#define ISA_F_NO_KERNEL (1u << 0)
/* Only the interpreter can run it: it must stop a program no verifier accepts. */
#define ISA_F_INTERP_ONLY (1u << 1)
/* Uses all 8 call frames: the kernel variant that wraps it in a call is skipped. */
#define ISA_F_MAX_DEPTH (1u << 2)
/* Legacy packet loads: a JIT may refuse them (the VM then falls back), reported, not failed. */
#define ISA_F_LEGACY (1u << 3)

struct isa_case {
	const char *name;
	const struct xbpf_insn *insns;
	size_t insn_cnt;
	const uint8_t *mem; /* input memory, NULL for none */
	uint32_t mem_len;
	uint64_t expect; /* R0 */
	unsigned int flags;
	const char *kernel_skip; /* why the kernel refuses it (ISA_F_NO_KERNEL) */
	/* Expected failure instead of a result: */
	int load_err;		   /* xbpf_vm__new() fails with this errno (structural check) */
	int run_err;		   /* interpreter stops with this -errno (ISA_F_INTERP_ONLY) */
	const char *kernel_reject; /* kernel refuses to load with this log text */
	/*
	 * 0: XBPF_PROG_RAW_MEM.  XBPF_PROG_SCHED_CLS: mem is the packet, R1 the
	 * __sk_buff, and only the 32-bit retval of test_run is compared.
	 */
	enum xbpf_prog_type type;
};

/* Every case (static cases, then generated jump cases); never NULL. */
const struct isa_case *isa_corpus_cases(size_t *ret_cnt);

struct isa_result {
	uint64_t r0;	/* from xbpf_vm__exec() */
	uint32_t retval; /* from xbpf_vm__test_run() */
	int load_err;	/* errno of xbpf_vm__new(), 0 if it loaded */
	int run_err;	/* xbpf_vm__test_run() result */
	enum xbpf_engine_kind engine; /* engine that actually ran */
	char log[256];		      /* xbpf_vm__new() log when it failed */
};

/* Run one case on `kind`; 0, or -errno if the case could not even be set up. */
int isa_corpus_run(const struct isa_case *c, enum xbpf_engine_kind kind, bool verify,
		   struct isa_result *ret);

/* Check one case's result against its expectations; NULL if right, else a static reason. */
const char *isa_corpus_judge(const struct isa_case *c, const struct isa_result *res);

/* Run and judge every case on `kind` (and vs the interpreter for a JIT); returns failures. */
int isa_corpus_check_all(enum xbpf_engine_kind kind, FILE *log);

#endif /* XBPF_TEST_ISA_CORPUS_H */
