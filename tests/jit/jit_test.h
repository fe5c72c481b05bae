/* SPDX-License-Identifier: MIT */
/*
 * jit_test.h - shared pieces of the JIT tests: a growable program, runners for the JIT and the reference interpreter, and
 * the test helpers the hermetic JIT tests link in place of the core's.
 */
#ifndef XBPF_TEST_JIT_TEST_H
#define XBPF_TEST_JIT_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine_impl.h"
#include "insn.h"
#include "ref_interp.h"

/*
 * Test helpers (hermetic tests provide xbpf_helper_impl() themselves).
 * Id 1 is bpf_map_lookup_elem over struct fake_map, so kernel-loadable
 * programs run unchanged; the test-only helpers sit far above real ids.
 */
enum {
	TH_MAP_LOOKUP = 1,
	TH_DUMP = 0x10001, /* r1 = buffer, r2 = len: copy into the dump area */
	TH_MIX,		   /* returns a hash of r1..r5; checks stack alignment */
	TH_WX,		   /* checks the running image is r-x and nothing is rwx */
	TH_COUNT,	   /* counts calls, returns the count */
	TH_LOG,		   /* appends r1, r2 to th_log (debugging aid) */
	TH_CALLBACK,	   /* calls the JITed function at r1 with (r2, 0), as bpf_loop would */
};

/* An array map as TH_MAP_LOOKUP sees it (ld_imm64 carries its address). */
struct fake_map {
	uint32_t value_size;
	uint32_t max_entries;
	uint8_t data[];
};

#define DUMP_MAX 4096
extern uint8_t th_dump[DUMP_MAX];
extern size_t th_dump_len;
extern int th_misaligned;  /* helper calls that saw a misaligned stack */
extern int th_wx_bad;	   /* TH_WX calls that found a writable image or rwx */
extern int th_wx_checked;
extern uintptr_t th_image_lo, th_image_hi; /* image being run, for TH_WX */
extern uint64_t th_count;
extern uint64_t th_log[4096];
extern size_t th_log_len;

/* A growable program. */
struct tprog {
	struct xbpf_insn *insns;
	uint32_t cnt, cap;
	uint32_t func_start[XBPF_MAX_SUBPROGS];
	uint16_t stack_depth[XBPF_MAX_SUBPROGS];
	uint32_t func_cnt;
};

void tprog_init(struct tprog *p);
void tprog_free(struct tprog *p);
void tprog_add(struct tprog *p, struct xbpf_insn insn);
void tprog_ld_imm64(struct tprog *p, uint8_t dst, uint64_t v);
/* Start a new function at the next instruction. */
void tprog_func(struct tprog *p, uint16_t stack_depth);
struct xbpf_exec_prog tprog_exec(const struct tprog *p);

/* JIT-compile and run; 0 or -errno (compile error). */
int run_jit(const struct xbpf_exec_prog *prog, bool blind, uint64_t r1, uint64_t r2, uint64_t *ret);

/*
 * The product interpreter (jit/interp.c) when the binary links it, as a
 * second oracle next to ref_interp.c; -ENOSYS when it is not linked.
 */
int run_interp(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2, uint64_t *ret);
bool have_interp(void);

/* Failure accounting. */
extern int t_failures;
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			t_failures++;                                                              \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
		}                                                                                  \
	} while (0)

/* Exit 77 with a reason when the host has no JIT back end. */
void require_jit(void);
uint64_t t_rand(void);
void t_srand(uint64_t seed);
void dump_prog(const struct xbpf_exec_prog *prog);

#endif
