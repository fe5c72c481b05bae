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
	/*
	 * Optional: [insn_cnt], at each bpf_map_lookup_elem() call whose map is
	 * known (lookup.c) how to do it cheapest; NULL elsewhere.
	 */
	const struct xbpf_lookup_plan *const *lookup_plan;
	/* Optional: [insn_cnt], a helper call's target instead of xbpf_helper_impl(imm) (JIT rewrites). */
	const xbpf_helper_fn *call_fn;
	/* Optional: a prog_array slot's tail target (__xbpf_prog_array_get); NULL: no tail calls. */
	const void *(*tail_lookup)(struct xbpf_map *map, uint32_t key);
};

/* The lookup plans of a program's call sites (lookup.c); free with __xbpf_lookup_plans_free(). */
struct xbpf_call_plans {
	const struct xbpf_lookup_plan **at; /* [insn_cnt] */
	struct xbpf_lookup_plan *plans;
	uint32_t cnt;
};

/*
 * Plans for prog's bpf_map_lookup_elem() calls whose map is known; orig is
 * the program before map resolution (which ld_imm64 referred to a map).
 */
int __xbpf_lookup_plans(const struct xbpf_exec_prog *prog, const struct xbpf_insn *orig,
			struct xbpf_call_plans *ret);
void __xbpf_lookup_plans_free(struct xbpf_call_plans *plans);

/*
 * Interpreter.  __xbpf_interp_prepare() decodes prog once (0 or -errno;
 * prog and its maps must outlive the code); __xbpf_interp_exec() runs the
 * code from insn 0 with R1, R2 and returns R0, *ret_err as
 * __xbpf_interp_run_err() gives it.
 */
struct xbpf_interp_code;

/*
 * What a prog_array slot holds (xbpf_vm__prog_array_update()): a loaded
 * program as a tail call enters it.  The interpreter enters interpreted code
 * in place of the calling frame; JITed code it calls, and its R0 ends the
 * calling frame, which is the same (a JITed program makes no tail calls).
 */
struct xbpf_tail_target {
	enum xbpf_prog_type type;
	const struct xbpf_interp_code *interp;
	uint64_t (*jit_entry)(uint64_t r1, uint64_t r2);
};

/* The kernel's MAX_TAIL_CALL_CNT: tail calls one run may make. */
#define XBPF_MAX_TAIL_CALLS 33

int __xbpf_interp_prepare(const struct xbpf_exec_prog *prog, struct xbpf_interp_code **ret);
void __xbpf_interp_code_free(struct xbpf_interp_code *code);
uint64_t __xbpf_interp_exec(const struct xbpf_interp_code *code, uint64_t r1, uint64_t r2,
			    int *ret_err);
/* Decode, run once, free: for tests and one-off runs. */
uint64_t __xbpf_interp_run(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2);
/*
 * As __xbpf_interp_run(), and *ret_err gets 0 or why the run stopped early
 * (R0 is then 0): -E2BIG call depth beyond XBPF_MAX_CALL_FRAMES, -ENOENT
 * helper the runtime lacks, -ELOOP jump budget of an unverified program
 * spent, -EINVAL instruction the interpreter cannot run, -ENOMEM decoding.
 * Only unverified programs (skip_verify) can stop early.
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
	uintptr_t base;	      /* where the image will be, known in every pass */
	size_t reserve;	      /* bytes reserved at base: the image fits in them */
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

/*
 * JIT-internal instruction, inserted by the lookup rewrite only: ALU64 MOV K
 * with this off sets dst to the thread's CPU id (xbpf_get_cpu()), the int
 * at imm bytes from the thread pointer (static TLS: the same offset in every
 * thread).  The encoding checks refuse it in programs (MOV K takes no off).
 */
#define XBPF_OFF_CPU_ID (-1)

/* A rewritten copy of a program (jit_rewrite.c). */
struct xbpf_rewritten {
	struct xbpf_exec_prog prog;
	struct xbpf_insn *insns;
	uint32_t *func_start;
	xbpf_helper_fn *call_fn;
};

/* Lookups of known maps inlined or made direct; *ret NULL when prog has no plans. */
int __xbpf_jit_inline_lookups(const struct xbpf_exec_prog *prog, struct xbpf_rewritten **ret);
/* Every immediate blinded (XBPF_REG_AX), offsets recomputed. */
int __xbpf_jit_blind(const struct xbpf_exec_prog *prog, struct xbpf_rewritten **ret);
void __xbpf_rewritten_free(struct xbpf_rewritten *r);

/*
 * Does a branch anywhere in the image's reserved range reach target within
 * +-range bytes?  The same answer in every pass, so sizes can depend on it.
 */
static inline bool __xbpf_jit_reaches(const struct xbpf_jit_ctx *ctx, uintptr_t target, int64_t range)
{
	int64_t lo = (int64_t)target - (int64_t)ctx->base;
	int64_t hi = lo - (int64_t)ctx->reserve;

	return ctx->base && lo > -range && lo < range && hi > -range && hi < range;
}

/* The function a helper call at insns[idx] calls. */
static inline xbpf_helper_fn __xbpf_jit_helper(const struct xbpf_jit_ctx *ctx, uint32_t idx)
{
	const struct xbpf_exec_prog *prog = ctx->prog;

	if (prog->call_fn && prog->call_fn[idx])
		return prog->call_fn[idx];
	return xbpf_helper_impl(prog->insns[idx].imm);
}

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
/* x86-64: use BMI2 (-1: if the CPU has it, the default; 0: never, for tests of the plain forms). */
extern int __xbpf_jit_x86_use_bmi2;
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
