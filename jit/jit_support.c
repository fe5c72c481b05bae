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
 *   2. optionally blinds constants (a rewritten copy of the program using
 *      XBPF_REG_AX, after the kernel's bpf_jit_blind_constants()),
 *   3. checks the structure the back ends rely on (jumps stay inside their
 *      function, calls land on function entries, functions end in exit/ja),
 *      and plans each function (stack bytes, registers named),
 *   4. runs sizing passes (image == NULL) until no native offset changes,
 *   5. maps an RW image and emits into it,
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
#include <sys/random.h>
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

/* ---- constant blinding ------------------------------------------------- */

struct blinded_prog {
	struct xbpf_exec_prog prog;
	struct xbpf_insn *insns;
	uint32_t *func_start;
};

static void free_blinded(struct blinded_prog *b)
{
	if (!b)
		return;
	free(b->insns);
	free(b->func_start);
	free(b);
}

static uint64_t random_u64(void)
{
	uint64_t v = 0;

	/* Blinding needs unpredictability, not cryptographic strength. */
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)rand() << 32 ^ (uint64_t)rand() ^ (uint64_t)(uintptr_t)&v;
	return v;
}

static struct xbpf_insn mk(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct xbpf_insn insn = { .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };

	return insn;
}

/* Rewrite insn into out[] (at most 5 slots); returns the slot count. */
static int blind_one(const struct xbpf_insn *insn, struct xbpf_insn *out)
{
	uint8_t cls = XBPF_CLASS(insn->code), op = XBPF_OP(insn->code);
	uint32_t rnd = (uint32_t)random_u64();
	const uint8_t ax = XBPF_REG_AX;

	switch (cls) {
	case XBPF_ALU:
	case XBPF_ALU64:
		if (XBPF_SRC(insn->code) != XBPF_K || op == XBPF_NEG || op == XBPF_END ||
		    (op == XBPF_MOV && insn->off))
			break;
		out[0] = mk(cls | XBPF_MOV | XBPF_K, ax, 0, 0, (int32_t)(rnd ^ (uint32_t)insn->imm));
		out[1] = mk(cls | XBPF_XOR | XBPF_K, ax, 0, 0, (int32_t)rnd);
		out[2] = mk(cls | op | XBPF_X, insn->dst_reg, ax, insn->off, 0);
		return 3;
	case XBPF_JMP:
	case XBPF_JMP32:
		if (!xbpf_insn_is_jump(insn) || op == XBPF_JA || XBPF_SRC(insn->code) != XBPF_K)
			break;
		/* ALU64 mov sign-extends, as a JMP's immediate is. */
		out[0] = mk(XBPF_ALU64 | XBPF_MOV | XBPF_K, ax, 0, 0, (int32_t)(rnd ^ (uint32_t)insn->imm));
		out[1] = mk(XBPF_ALU64 | XBPF_XOR | XBPF_K, ax, 0, 0, (int32_t)rnd);
		out[2] = mk(cls | op | XBPF_X, insn->dst_reg, ax, insn->off, 0);
		return 3;
	case XBPF_ST:
		if (XBPF_MODE(insn->code) != XBPF_MEM)
			break;
		out[0] = mk(XBPF_ALU64 | XBPF_MOV | XBPF_K, ax, 0, 0, (int32_t)(rnd ^ (uint32_t)insn->imm));
		out[1] = mk(XBPF_ALU64 | XBPF_XOR | XBPF_K, ax, 0, 0, (int32_t)rnd);
		out[2] = mk(XBPF_STX | XBPF_MEM | XBPF_SIZE(insn->code), insn->dst_reg, ax, insn->off, 0);
		return 3;
	case XBPF_LD:
		if (insn->code != LD_IMM64 || insn->src_reg == XBPF_PSEUDO_FUNC ||
		    insn->src_reg == XBPF_PSEUDO_BTF_ID) {
			break;
		} else {
			uint64_t v = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
			uint64_t r = random_u64(), x = v ^ r;

			/* ax = v ^ r; dst = r; dst ^= ax */
			out[0] = mk(LD_IMM64, ax, 0, 0, (int32_t)(uint32_t)x);
			out[1] = mk(0, 0, 0, 0, (int32_t)(uint32_t)(x >> 32));
			out[2] = mk(LD_IMM64, insn->dst_reg, 0, 0, (int32_t)(uint32_t)r);
			out[3] = mk(0, 0, 0, 0, (int32_t)(uint32_t)(r >> 32));
			out[4] = mk(XBPF_ALU64 | XBPF_XOR | XBPF_X, insn->dst_reg, ax, 0, 0);
			return 5;
		}
	}
	out[0] = insn[0];
	if (insn->code == LD_IMM64) {
		out[1] = insn[1];
		return 2;
	}
	return 1;
}

/*
 * Blind every immediate an attacker could use to plant instruction bytes.
 * Jump, gotol and call offsets are recomputed for the longer program.
 */
static int blind_constants(const struct xbpf_exec_prog *prog, struct blinded_prog **ret)
{
	uint32_t cnt = prog->insn_cnt, i, n = 0;
	uint32_t *newidx, *lastidx;
	struct blinded_prog *b;
	int err = -ENOMEM;

	b = calloc(1, sizeof(*b));
	newidx = calloc(cnt + 1, sizeof(*newidx));
	lastidx = calloc(cnt + 1, sizeof(*lastidx));
	if (!b || !newidx || !lastidx)
		goto out;
	/* Worst case: every ld_imm64 (2 slots) becomes 5, every other insn 3. */
	b->insns = calloc((size_t)cnt * 3 + 2, sizeof(*b->insns));
	b->func_start = calloc(prog->func_cnt, sizeof(*b->func_start));
	if (!b->insns || !b->func_start)
		goto out;

	for (i = 0; i < cnt;) {
		const struct xbpf_insn *insn = &prog->insns[i];
		int slots = insn_slots(prog->insns, cnt, i);
		int k;

		if (slots == 1 && insn->code == LD_IMM64) {
			/* truncated ld_imm64: copy it, the structure check refuses it */
			b->insns[n] = *insn;
			k = 1;
		} else {
			k = blind_one(insn, &b->insns[n]);
		}
		newidx[i] = n;
		lastidx[i] = n + k - 1;
		if (slots == 2) {
			newidx[i + 1] = n + 1;
			lastidx[i + 1] = n + k - 1;
		}
		n += k;
		i += slots;
	}
	newidx[cnt] = n;

	err = -E2BIG;
	for (i = 0; i < cnt; i += insn_slots(prog->insns, cnt, i)) {
		const struct xbpf_insn *insn = &prog->insns[i];
		struct xbpf_insn *to;
		int64_t t, rel;

		bool func_ref = xbpf_insn_is_func_ref(insn);

		if (!xbpf_insn_is_jump(insn) && !func_ref)
			continue;
		t = func_ref ? xbpf_func_ref_target(insn, i) : xbpf_jump_target(insn, i);
		if (t < 0 || t > cnt) {
			err = -ENOTSUP;
			goto out;
		}
		/* ld_imm64 is copied as is (first slot); jumps and calls end their expansion */
		to = &b->insns[func_ref && insn->code == LD_IMM64 ? newidx[i] : lastidx[i]];
		rel = (int64_t)newidx[t] - (to - b->insns) - 1;
		if (insn->code == (XBPF_JMP32 | XBPF_JA) || func_ref) {
			if (rel < INT32_MIN || rel > INT32_MAX)
				goto out;
			to->imm = (int32_t)rel;
		} else {
			if (rel < INT16_MIN || rel > INT16_MAX)
				goto out;
			to->off = (int16_t)rel;
		}
	}
	for (i = 0; i < prog->func_cnt; i++) {
		if (prog->func_start[i] >= cnt) {
			err = -EINVAL;
			goto out;
		}
		b->func_start[i] = newidx[prog->func_start[i]];
	}

	b->prog = *prog;
	b->prog.insns = b->insns;
	b->prog.insn_cnt = n;
	b->prog.func_start = b->func_start;
	*ret = b;
	b = NULL;
	err = 0;
out:
	free(newidx);
	free(lastidx);
	free_blinded(b);
	return err;
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
	struct blinded_prog *blinded = NULL;
	uint32_t *insn_off = NULL, *func_off = NULL, *prev_insn = NULL, *prev_func = NULL;
	struct xbpf_jit_func *funcs = NULL;
	struct xbpf_jit_ctx ctx = {};
	size_t size, map_size, insn_bytes, func_bytes, page;
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
	if (blind_constants_on) {
		err = blind_constants(prog, &blinded);
		if (err)
			return err;
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

	size = ctx.pos;
	page = (size_t)sysconf(_SC_PAGESIZE);
	map_size = (size + page - 1) / page * page;
	mem = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		err = -ENOMEM;
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

	ret_image->code = mem;
	ret_image->size = size;
	ret_image->map_size = map_size;
	ret_image->func_cnt = prog->func_cnt;
	ret_image->func_off = func_off;
	func_off = NULL;
	mem = MAP_FAILED;
	err = 0;
out:
	if (mem != MAP_FAILED)
		munmap(mem, map_size);
	free(insn_off);
	free(prev_insn);
	free(func_off);
	free(prev_func);
	free(funcs);
	free_blinded(blinded);
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
