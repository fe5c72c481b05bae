/* SPDX-License-Identifier: MIT */
/*
 * engine_impl.h - private contract between the VM front end (vm.c), the
 * interpreter (interp.c), the shared JIT pass driver (jit_support.c) and the
 * per-architecture JIT back ends (jit_x86_64.c, jit_arm64.c; meson picks the
 * host's).
 */
#ifndef XBPF_ENGINE_IMPL_H
#define XBPF_ENGINE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libxbpf_internal.h"
#include "xbpf_engine.h"

/* A program ready to run: map references resolved, functions known. */
struct xbpf_exec_prog {
	const struct xbpf_insn *insns;
	uint32_t insn_cnt;
	uint32_t func_cnt;
	const uint32_t *func_start;  /* first insn of each function; [0] == 0 */
	const uint16_t *stack_depth; /* bytes used by each function's frame */
	bool verified;		     /* false: skip_verify, bounds not proven */
	/*
	 * Optional, for the interpreter: [insn_cnt], at each bpf-to-bpf call the
	 * stack bytes of its callee's frame (NULL: looked up at each call).
	 */
	const uint16_t *call_frame_size;
};

/* Interpreter: run prog from insn 0 with R1, R2; returns R0. */
uint64_t __xbpf_interp_run(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2);
/*
 * As __xbpf_interp_run(), and *ret_err gets 0 or why the run stopped early
 * (R0 is then 0): -E2BIG call depth beyond XBPF_MAX_CALL_FRAMES, -ENOENT
 * helper the runtime lacks, -ELOOP jump budget of an unverified program
 * spent, -EINVAL instruction the interpreter cannot run.  Only unverified
 * programs (skip_verify) can stop early.
 */
uint64_t __xbpf_interp_run_err(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2,
			       int *ret_err);
/* Stack bytes the interpreter gives the function at insn `start`: depth rounded to 16, 512 if unknown. */
uint32_t __xbpf_interp_frame_size(const struct xbpf_exec_prog *prog, uint32_t start);

/* ---- JIT --------------------------------------------------------------- */

/* Extra scratch register a back end provides for constant blinding. */
#define XBPF_REG_AX 11

/*
 * State of one emit pass.  A back end's emit() writes the whole program,
 * function after function, starting each function at a fresh offset.  While
 * image is NULL it only counts bytes.  Jump and call targets come from
 * insn_off[] / func_off[] of the previous pass (first pass: estimates);
 * emit() fills them for the next one.  The driver repeats sizing passes until
 * the size converges, then emits into an RW mapping, patches calls with the
 * final addresses in one more pass, checks the size did not change, and maps
 * the image RX.
 */
struct xbpf_jit_ctx {
	const struct xbpf_exec_prog *prog;
	uint8_t *image;	      /* NULL while sizing */
	size_t image_cap;     /* bytes available at image */
	size_t pos;	      /* bytes emitted so far in this pass */
	uint32_t *insn_off;   /* [insn_cnt + 1]: native offset of each insn */
	uint32_t *func_off;   /* [func_cnt + 1]: native offset of each function */
	int pass;
	bool final_pass;      /* image != NULL and every offset is final */
	void *arch_priv;
};

struct xbpf_jit_arch {
	const char *name;
	/* Emit every function of ctx->prog; 0 or -errno (-ENOTSUP: cannot JIT). */
	int (*emit)(struct xbpf_jit_ctx *ctx);
};

/* The back end for the host architecture, or NULL when there is none. */
extern const struct xbpf_jit_arch *const __xbpf_jit_host_arch;

struct xbpf_jit_image {
	void *code;	  /* RX mapping, entry of function 0 at code */
	size_t size;
	size_t map_size;
	uint32_t func_cnt;
	uint32_t *func_off; /* [func_cnt + 1] */
};

/* Compile prog with arch (blinding constants if asked); 0 or -errno. */
int __xbpf_jit_compile(const struct xbpf_jit_arch *arch, const struct xbpf_exec_prog *prog,
		       bool blind_constants, struct xbpf_jit_image *ret_image);
void __xbpf_jit_image_free(struct xbpf_jit_image *image);

/* Native entry: (R1, R2) -> R0, following the platform C ABI. */
typedef uint64_t (*xbpf_jit_entry_fn)(uint64_t r1, uint64_t r2);

#endif /* XBPF_ENGINE_IMPL_H */
