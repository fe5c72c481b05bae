/* SPDX-License-Identifier: MIT */
/*
 * engine_impl.h - private contract between the VM front end (vm.c), the
 * interpreter (interp.c), the shared JIT pass driver (jit_support.c) and the
 * per-architecture JIT back ends (jit_x86_64.c, jit_arm64.c; both are built,
 * the host's runs).
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

/*
 * What every engine runs, checked once for all of them (vm.c before it picks
 * an engine, the JIT driver again for its direct callers): an encoding the
 * opcode table accepts (isa/), and none of the forms only the kernel can
 * give a meaning to: ld_imm64 whose map or BTF reference is still unresolved
 * (src_reg other than 0 and PSEUDO_FUNC after xbpf_prog__resolve_maps()) and
 * kfunc calls.  0 or -EINVAL with a static message in *ret_msg (if given).
 */
int __xbpf_engine_check_insn(const struct xbpf_insn *insns, uint32_t cnt, uint32_t idx,
			     const char **ret_msg);

/* ---- JIT --------------------------------------------------------------- */

/* Extra scratch register a back end provides for constant blinding. */
#define XBPF_REG_AX 11

/*
 * State of one emit pass.  The driver (jit_support.c) walks the program
 * function after function and instruction after instruction, recording
 * insn_off[] and func_off[], and calls the back end's prologue, translate
 * (one instruction) and epilogue.  While image is NULL the back end only
 * counts bytes.  Jump and call targets come from insn_off[] / func_off[]:
 * already this pass's for earlier code, the previous pass's (first pass:
 * estimates) for later code; prev_insn_off[] / prev_func_off[] hold the
 * whole previous pass.  The driver repeats sizing passes until no offset
 * changes, then emits into an RW mapping, patches calls with the final
 * addresses in one more pass, checks the size did not change, and maps the
 * image RX.
 */
struct xbpf_jit_ctx {
	const struct xbpf_exec_prog *prog;
	uint8_t *image;	      /* NULL while sizing */
	size_t image_cap;     /* bytes available at image */
	size_t pos;	      /* bytes emitted so far in this pass */
	uint32_t *insn_off;   /* [insn_cnt + 1]: native offset of each insn */
	uint32_t *func_off;   /* [func_cnt + 1]: native offset of each function */
	const uint32_t *prev_insn_off; /* the previous pass's insn_off[] */
	const uint32_t *prev_func_off; /* the previous pass's func_off[] */
	int pass;
	bool final_pass;      /* image != NULL and every offset is final */
	int err;	      /* sticky emission error (image overflow, out of range) */
};

/* Index of the function a call or callback reference at insns[idx] names (checked: exists). */
static inline int __xbpf_jit_callee(const struct xbpf_jit_ctx *ctx, uint32_t idx)
{
	const struct xbpf_exec_prog *prog = ctx->prog;

	return xbpf_func_at(prog->func_start, prog->func_cnt,
			    xbpf_func_ref_target(&prog->insns[idx], idx));
}

/* One function as the driver hands it to a back end. */
struct xbpf_jit_func {
	uint32_t idx;	     /* function index */
	uint32_t start, end; /* instruction slots [start, end) */
	/*
	 * BPF stack bytes below R10, rounded up to 16: the verifier's depth,
	 * 512 for unverified programs, 0 when the function never uses R10.
	 */
	uint32_t stack;
	/* Bit r: the function names BPF register r (R6 implicitly for LD_ABS/LD_IND). */
	uint16_t regs_used;
};

/*
 * A back end.  Both have the same shape: prologue and epilogue of one
 * function, and translate(), one instruction dispatched on its format in
 * the opcode table; each returns 0 or -errno (-ENOTSUP: cannot JIT, the VM
 * then runs the interpreter).  Emission errors go to ctx->err.
 */
struct xbpf_jit_arch {
	const char *name;
	size_t max_image; /* largest image the back end's branches reach */
	int (*prologue)(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn);
	int (*translate)(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn, uint32_t idx);
	int (*epilogue)(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn);
};

/*
 * Both back ends are built on every host (emitting is portable C), so that
 * tests can compile for the other architecture too; only the host's runs.
 */
extern const struct xbpf_jit_arch __xbpf_jit_x86_64;
extern const struct xbpf_jit_arch __xbpf_jit_arm64;
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
