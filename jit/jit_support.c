/* SPDX-License-Identifier: MIT */
/*
 * jit_support.c - the architecture-independent JIT pass driver.
 *
 * The driver owns the walk over the program: in every pass it visits each
 * function (the back end's prologue), each instruction (the back end's
 * translate(), one instruction) and the function's end (epilogue), and
 * records the native offset of every instruction and function.  So both
 * back ends have the same shape and differ only in what they emit.
 * The driver:
 *   1. checks every instruction as all engines do (__xbpf_engine_check_insn:
 *      the isa/ opcode table, no unresolved references),
 *   2. rewrites the program (jit_rewrite.c): map lookups whose map is known
 *      inlined (arrays, per-CPU arrays) or sent to the map family's own
 *      lookup, then, if asked, constants blinded with XBPF_REG_AX,
 *   3. checks the structure the back ends rely on (jumps stay inside their
 *      function, calls land on function entries, functions end in exit/ja),
 *      and plans each function (stack bytes, registers named),
 *   4. runs sizing passes (image == NULL) until no native offset changes,
 *   5. makes the image RW (its address range was reserved before sizing,
 *      near the runtime's code, so that helpers can be called directly)
 *      and emits into it,
 *   6. runs one final pass (final_pass = true) in which calls between
 *      functions see their final addresses; it must produce the same size
 *      and offsets as the previous pass (the seed 006 design), and
 *   7. maps the image RX.  The image is never writable and executable at once.
 *
 * It also holds __xbpf_engine_check_insn(), the instruction check every
 * engine shares (the VM applies it before the interpreter too).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine_impl.h"

/* Sizing passes before giving up: x86 converges in 3-6 on real programs. */
#define JIT_MAX_PASSES 32
/* First-pass estimate of native bytes per instruction (generous: long jumps). */
#define JIT_EST_INSN_BYTES 64

#define LD_IMM64 (XBPF_LD | XBPF_DW | XBPF_IMM)

static int insn_slots(const struct xbpf_insn *insns, uint32_t cnt, uint32_t idx)
{
	return insns[idx].code == LD_IMM64 && idx + 1 < cnt ? 2 : 1;
}

static uint32_t func_end(const struct xbpf_exec_prog *prog, uint32_t f)
{
	return f + 1 < prog->func_cnt ? prog->func_start[f + 1] : prog->insn_cnt;
}

/*
 * Does insn write the frame pointer?  Back ends keep R10 in the native
 * frame register, so an unverified program that did could wreck the native
 * stack; the verifier refuses such programs anyway.
 */
static bool writes_fp(const struct xbpf_insn *insn)
{
	switch (XBPF_CLASS(insn->code)) {
	case XBPF_ALU:
	case XBPF_ALU64:
	case XBPF_LDX:
	case XBPF_LD:
		return insn->dst_reg == XBPF_REG_FP;
	case XBPF_STX:
		return XBPF_MODE(insn->code) == XBPF_ATOMIC && (insn->imm & XBPF_FETCH) &&
		       insn->src_reg == XBPF_REG_FP;
	}
	return false;
}

int __xbpf_engine_check_insn(const struct xbpf_insn *insns, uint32_t cnt, uint32_t idx,
			     const char **ret_msg)
{
	const struct xbpf_insn *insn;
	const char *msg = NULL;

	if (xbpf_insn_check(insns, cnt, idx, &msg)) {
		if (ret_msg)
			*ret_msg = msg;
		return -EINVAL;
	}
	insn = &insns[idx];
	if (insn->code == LD_IMM64 && insn->src_reg != 0 && insn->src_reg != XBPF_PSEUDO_FUNC)
		msg = "ld_imm64 with an unresolved map or BTF reference";
	else if (insn->code == (XBPF_JMP | XBPF_CALL) && insn->src_reg == XBPF_PSEUDO_KFUNC_CALL)
		msg = "kernel function calls are not supported";
	if (msg) {
		if (ret_msg)
			*ret_msg = msg;
		return -EINVAL;
	}
	return 0;
}

/*
 * What the back ends may take for granted.  A verified program always passes;
 * an unverified one that does not gets -ENOTSUP, so the VM runs it in the
 * interpreter, which reports the fault at run time.
 */
static int check_structure(const struct xbpf_exec_prog *prog)
{
	uint8_t *second_slot;
	uint32_t f, i;
	int err = 0;

	if (!prog->insns || !prog->insn_cnt || !prog->func_cnt || !prog->func_start ||
	    !prog->stack_depth || prog->func_start[0] != 0)
		return -EINVAL;
	for (f = 1; f < prog->func_cnt; f++)
		if (prog->func_start[f] <= prog->func_start[f - 1] ||
		    prog->func_start[f] >= prog->insn_cnt)
			return -EINVAL;

	second_slot = calloc(prog->insn_cnt + 1, 1);
	if (!second_slot)
		return -ENOMEM;
	for (f = 0; f < prog->func_cnt && !err; f++) {
		uint32_t start = prog->func_start[f], end = func_end(prog, f);
		const struct xbpf_insn *last = NULL;

		for (i = start; i < end; i++) {
			const struct xbpf_insn *insn = &prog->insns[i];

			last = insn;
			if (insn->code == LD_IMM64) {
				if (i + 1 >= end) {
					err = -ENOTSUP;
					break;
				}
				second_slot[++i] = 1;
			}
		}
		if (err || !last)
			break;
		if (!xbpf_insn_ends_block(last))
			err = -ENOTSUP; /* would fall into the next function */
	}
	for (f = 0; f < prog->func_cnt && !err; f++) {
		uint32_t start = prog->func_start[f], end = func_end(prog, f);

		for (i = start; i < end && !err; i++) {
			const struct xbpf_insn *insn = &prog->insns[i];
			int64_t t;

			if (second_slot[i])
				continue;
			if (writes_fp(insn)) {
				err = -ENOTSUP;
			} else if (xbpf_insn_is_jump(insn)) {
				t = xbpf_jump_target(insn, i);
				if (t < start || t >= end || second_slot[t])
					err = -ENOTSUP;
			} else if (xbpf_insn_is_func_ref(insn)) {
				t = xbpf_func_ref_target(insn, i);
				if (xbpf_func_at(prog->func_start, prog->func_cnt, t) < 0)
					err = -ENOTSUP;
			}
		}
	}
	free(second_slot);
	return err;
}

/* What no engine runs, no back end sees. */
static int check_encodings(const struct xbpf_exec_prog *prog)
{
	for (uint32_t i = 0; i < prog->insn_cnt; i += insn_slots(prog->insns, prog->insn_cnt, i))
		if (__xbpf_engine_check_insn(prog->insns, prog->insn_cnt, i, NULL))
			return -ENOTSUP;
	return 0;
}

/* Stack and registers of each function, the same in every pass. */
static int plan_funcs(const struct xbpf_exec_prog *prog, struct xbpf_jit_func *funcs)
{
	for (uint32_t f = 0; f < prog->func_cnt; f++) {
		struct xbpf_jit_func *fn = &funcs[f];
		/* Unverified programs may touch their whole stack. */
		uint32_t depth = prog->verified ? prog->stack_depth[f] : XBPF_STACK_SIZE;
		uint32_t used = 0;

		if (depth > XBPF_STACK_SIZE)
			return -ENOTSUP;
		fn->idx = f;
		fn->start = prog->func_start[f];
		fn->end = func_end(prog, f);
		for (uint32_t i = fn->start; i < fn->end; i += xbpf_insn_len(&prog->insns[i])) {
			const struct xbpf_insn *insn = &prog->insns[i];

			used |= 1u << insn->dst_reg | 1u << insn->src_reg;
			if (xbpf_opcode_desc(insn->code)->fmt == XBPF_FMT_LDABS)
				used |= 1u << 6 | 1u << 0; /* the context, implicitly; R0 */
		}
		fn->regs_used = (uint16_t)used;
		/* Without R10 nothing can reach a stack of this function. */
		fn->stack = used & (1u << XBPF_REG_FP) ? (depth + 15) & ~15u : 0;
	}
	return 0;
}

/* ---- the image's place ---------------------------------------------------- */

/* Bytes reserved per instruction: more than any translation takes. */
#define JIT_RESERVE_INSN_BYTES 256
#define JIT_RESERVE_MIN (1u << 20)
/* Below the runtime's code: within arm64 BL reach (128 MiB) and x86 rel32 reach. */
#define JIT_NEAR_GAP (32u << 20)

/*
 * Reserve the image's address range before sizing, PROT_NONE, just below
 * the runtime's own code when the kernel grants the hint: then the back
 * ends know every address from the first pass and can call helpers
 * directly (__xbpf_jit_reaches()).  Elsewhere they call through a register.
 */
static void *reserve_image(size_t len)
{
	uintptr_t text = (uintptr_t)&xbpf_helper_impl, hint = 0;

	if (text > JIT_NEAR_GAP + len)
		hint = (text - JIT_NEAR_GAP - len) & ~(uintptr_t)0xfffff;
	return mmap((void *)hint, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

/* ---- passes ------------------------------------------------------------ */

/* One pass over the whole program: every function, every instruction. */
static int run_pass(const struct xbpf_jit_arch *arch, struct xbpf_jit_ctx *ctx,
		    const struct xbpf_jit_func *funcs)
{
	const struct xbpf_exec_prog *prog = ctx->prog;
	int err;

	ctx->pos = 0;
	ctx->err = 0;
	for (uint32_t f = 0; f < prog->func_cnt; f++) {
		const struct xbpf_jit_func *fn = &funcs[f];

		ctx->func_off[f] = (uint32_t)ctx->pos;
		err = arch->prologue(ctx, fn);
		for (uint32_t i = fn->start; i < fn->end && !err && !ctx->err;) {
			uint32_t len = xbpf_insn_len(&prog->insns[i]);

			ctx->insn_off[i] = (uint32_t)ctx->pos;
			if (len == 2)
				ctx->insn_off[i + 1] = (uint32_t)ctx->pos;
			err = arch->translate(ctx, fn, i);
			i += len;
		}
		if (!err && !ctx->err)
			err = arch->epilogue(ctx, fn);
		if (!err)
			err = ctx->err;
		if (err)
			return err;
	}
	ctx->func_off[prog->func_cnt] = (uint32_t)ctx->pos;
	ctx->insn_off[prog->insn_cnt] = (uint32_t)ctx->pos;
	if (ctx->pos > arch->max_image || (ctx->image && ctx->pos > ctx->image_cap))
		return -E2BIG;
	ctx->pass++;
	return 0;
}

int __xbpf_jit_compile(const struct xbpf_jit_arch *arch, const struct xbpf_exec_prog *prog,
		       bool blind_constants_on, struct xbpf_jit_image *ret_image)
{
	struct xbpf_rewritten *inlined = NULL, *blinded = NULL;
	uint32_t *insn_off = NULL, *func_off = NULL, *prev_insn = NULL, *prev_func = NULL;
	struct xbpf_jit_func *funcs = NULL;
	struct xbpf_jit_ctx ctx = {};
	size_t size, map_size = 0, reserve = 0, insn_bytes, func_bytes, page;
	void *mem = MAP_FAILED;
	bool converged = false;
	uint32_t i;
	int err;

	if (!ret_image || !prog)
		return -EINVAL;
	memset(ret_image, 0, sizeof(*ret_image));
	if (!arch || !arch->prologue || !arch->translate || !arch->epilogue)
		return -ENOTSUP;
	if (!prog->insns || !prog->insn_cnt || !prog->func_cnt || !prog->func_start ||
	    !prog->stack_depth)
		return -EINVAL;

	err = check_encodings(prog);
	if (err)
		return err;
	err = __xbpf_jit_inline_lookups(prog, &inlined);
	if (err)
		return err;
	if (inlined)
		prog = &inlined->prog;
	if (blind_constants_on) {
		err = __xbpf_jit_blind(prog, &blinded);
		if (err)
			goto out;
		prog = &blinded->prog;
	}
	err = check_structure(prog);
	if (err)
		goto out;
	funcs = calloc(prog->func_cnt, sizeof(*funcs));
	err = funcs ? plan_funcs(prog, funcs) : -ENOMEM;
	if (err)
		goto out;

	insn_bytes = ((size_t)prog->insn_cnt + 1) * sizeof(uint32_t);
	func_bytes = ((size_t)prog->func_cnt + 1) * sizeof(uint32_t);
	insn_off = malloc(insn_bytes);
	prev_insn = malloc(insn_bytes);
	func_off = malloc(func_bytes);
	prev_func = malloc(func_bytes);
	err = -ENOMEM;
	if (!insn_off || !prev_insn || !func_off || !prev_func)
		goto out;

	/* First-pass estimates: far apart, so the first pass picks long forms. */
	for (i = 0; i <= prog->insn_cnt; i++)
		insn_off[i] = i * JIT_EST_INSN_BYTES;
	for (i = 0; i < prog->func_cnt; i++)
		func_off[i] = insn_off[prog->func_start[i]];
	func_off[prog->func_cnt] = insn_off[prog->insn_cnt];

	page = (size_t)sysconf(_SC_PAGESIZE);
	reserve = ((size_t)prog->insn_cnt + prog->func_cnt) * JIT_RESERVE_INSN_BYTES;
	if (reserve < JIT_RESERVE_MIN)
		reserve = JIT_RESERVE_MIN;
	reserve = (reserve + page - 1) / page * page;
	mem = reserve_image(reserve);
	if (mem == MAP_FAILED) {
		err = -ENOMEM;
		goto out;
	}
	ctx.base = (uintptr_t)mem;
	ctx.reserve = reserve;
	ctx.prog = prog;
	ctx.insn_off = insn_off;
	ctx.func_off = func_off;
	ctx.prev_insn_off = prev_insn;
	ctx.prev_func_off = prev_func;

	/* Sizing: converged once a pass reproduces every offset. */
	while (ctx.pass < JIT_MAX_PASSES) {
		memcpy(prev_insn, insn_off, insn_bytes);
		memcpy(prev_func, func_off, func_bytes);
		err = run_pass(arch, &ctx, funcs);
		if (err)
			goto out;
		if (!memcmp(prev_insn, insn_off, insn_bytes) && !memcmp(prev_func, func_off, func_bytes)) {
			converged = true;
			break;
		}
	}
	err = -ELOOP;
	if (!converged || !ctx.pos)
		goto out;
	err = -E2BIG;
	if (ctx.pos > reserve)
		goto out;

	size = ctx.pos;
	map_size = (size + page - 1) / page * page;
	if (mprotect(mem, map_size, PROT_READ | PROT_WRITE)) {
		err = -errno;
		goto out;
	}
	ctx.image = mem;
	ctx.image_cap = size;

	/* Emit into the image, then the final pass with every address known. */
	for (i = 0; i < 2; i++) {
		ctx.final_pass = i == 1;
		err = run_pass(arch, &ctx, funcs);
		if (err)
			goto out;
		if (ctx.pos != size || memcmp(prev_insn, insn_off, insn_bytes) ||
		    memcmp(prev_func, func_off, func_bytes)) {
			err = -EFAULT; /* a back end whose output depends on more than offsets */
			goto out;
		}
	}
	__builtin___clear_cache((char *)mem, (char *)mem + size);
	if (mprotect(mem, map_size, PROT_READ | PROT_EXEC)) {
		err = -errno;
		goto out;
	}

	/* The rest of the reservation stays PROT_NONE: a guard after the code. */
	ret_image->code = mem;
	ret_image->size = size;
	ret_image->map_size = reserve;
	ret_image->func_cnt = prog->func_cnt;
	ret_image->func_off = func_off;
	func_off = NULL;
	mem = MAP_FAILED;
	err = 0;
out:
	if (mem != MAP_FAILED)
		munmap(mem, reserve);
	free(insn_off);
	free(prev_insn);
	free(func_off);
	free(prev_func);
	free(funcs);
	__xbpf_rewritten_free(blinded);
	__xbpf_rewritten_free(inlined);
	return err;
}

void __xbpf_jit_image_free(struct xbpf_jit_image *image)
{
	if (!image)
		return;
	if (image->code)
		munmap(image->code, image->map_size);
	free(image->func_off);
	memset(image, 0, sizeof(*image));
}

/* Only the host's back end runs; both are built (see engine_impl.h). */
#if defined(__x86_64__)
const struct xbpf_jit_arch *const __xbpf_jit_host_arch = &__xbpf_jit_x86_64;
#elif defined(__aarch64__)
const struct xbpf_jit_arch *const __xbpf_jit_host_arch = &__xbpf_jit_arm64;
#else
const struct xbpf_jit_arch *const __xbpf_jit_host_arch = NULL;
#endif
