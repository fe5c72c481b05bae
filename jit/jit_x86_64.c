/* SPDX-License-Identifier: MIT */
/*
 * jit_x86_64.c - the x86-64 back end: static emit_* helpers, and the
 * prologue / translate / epilogue that jit_support.c's passes call (the
 * arm64 back end has the same shape).
 *
 * Register mapping (as the kernel's, so that BPF R1-R5 already sit in the
 * SysV argument registers at a helper call and R6-R9 survive every call in
 * callee-saved registers):
 *   R0 rax  R1 rdi  R2 rsi  R3 rdx  R4 rcx  R5 r8
 *   R6 rbx  R7 r13  R8 r14  R9 r15  R10 rbp (frame pointer)
 *   AX (blinding) r10; r11 and r9 are scratch.
 *
 * Frame of every function (the entry function included, it is a plain SysV
 * function (R1, R2) -> R0):
 *   push rbp; mov rbp, rsp; sub rsp, round_up(stack_depth, 16);
 *   push rbx; push r13; push r14; push r15
 * which keeps rsp 16-byte aligned at every call.  The BPF stack of the
 * function is [rbp - stack_depth, rbp).  Each exit emits the epilogue inline.
 */
#include <errno.h>
#include <string.h>

#include "engine_impl.h"
#include "xbpf.h"

enum {
	RAX = 0, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	R8, R9, R10, R11, R12, R13, R14, R15,
};

#define TMP R11	 /* scratch: divisor, shift count save, call target */
#define TMP2 R9	 /* scratch: R0 save in fetch loops */

static const uint8_t reg_map[XBPF_REG_AX + 1] = {
	[0] = RAX, [1] = RDI, [2] = RSI, [3] = RDX, [4] = RCX, [5] = R8,
	[6] = RBX, [7] = R13, [8] = R14, [9] = R15, [10] = RBP, [XBPF_REG_AX] = R10,
};

/* Condition codes (low nibble of jcc). */
enum {
	CC_B = 0x2, CC_AE = 0x3, CC_E = 0x4, CC_NE = 0x5, CC_BE = 0x6, CC_A = 0x7,
	CC_S = 0x8, CC_L = 0xc, CC_GE = 0xd, CC_LE = 0xe, CC_G = 0xf,
	CC_ALWAYS = -1,
};

/* ---- byte emission ----------------------------------------------------- */

static void emit1(struct xbpf_jit_ctx *ctx, uint8_t b)
{
	if (ctx->image) {
		if (ctx->pos < ctx->image_cap)
			ctx->image[ctx->pos] = b;
		else
			ctx->err = -EFAULT;
	}
	ctx->pos++;
}

static void emit2(struct xbpf_jit_ctx *ctx, uint8_t a, uint8_t b)
{
	emit1(ctx, a);
	emit1(ctx, b);
}

static void emit4(struct xbpf_jit_ctx *ctx, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		emit1(ctx, (uint8_t)(v >> (8 * i)));
}

static void emit8(struct xbpf_jit_ctx *ctx, uint64_t v)
{
	emit4(ctx, (uint32_t)v);
	emit4(ctx, (uint32_t)(v >> 32));
}

static bool is_imm8(int64_t v)
{
	return v >= -128 && v <= 127;
}

/* REX prefix; `force` for byte registers (sil/dil/bpl need one). */
static void emit_rex(struct xbpf_jit_ctx *ctx, bool w, int reg, int rm, bool force)
{
	uint8_t rex = 0x40 | (w << 3) | ((reg >> 3) << 2) | (rm >> 3);

	if (rex != 0x40 || force)
		emit1(ctx, rex);
}

static void emit_modrm_rr(struct xbpf_jit_ctx *ctx, int reg, int rm)
{
	emit1(ctx, 0xc0 | (reg & 7) << 3 | (rm & 7));
}

/* [base + off]; always with a displacement so rbp/r13 need no special case. */
static void emit_modrm_mem(struct xbpf_jit_ctx *ctx, int reg, int base, int32_t off)
{
	bool d8 = is_imm8(off);

	emit1(ctx, (d8 ? 0x40 : 0x80) | (reg & 7) << 3 | (base & 7));
	if ((base & 7) == RSP)
		emit1(ctx, 0x24); /* SIB: base only */
	if (d8)
		emit1(ctx, (uint8_t)off);
	else
		emit4(ctx, (uint32_t)off);
}

/* "op r/m, reg" with a one-byte opcode: add 01, or 09, and 21, sub 29, ... */
static void emit_rr(struct xbpf_jit_ctx *ctx, bool w, uint8_t opc, int rm, int reg)
{
	emit_rex(ctx, w, reg, rm, false);
	emit1(ctx, opc);
	emit_modrm_rr(ctx, reg, rm);
}

/* "op reg, r/m" with a 0x0f-prefixed opcode: imul, movzx, movsx. */
static void emit_0f_rr(struct xbpf_jit_ctx *ctx, bool w, uint8_t opc, int reg, int rm, bool byte_rm)
{
	emit_rex(ctx, w, reg, rm, byte_rm);
	emit2(ctx, 0x0f, opc);
	emit_modrm_rr(ctx, reg, rm);
}

static void emit_mov(struct xbpf_jit_ctx *ctx, bool w, int dst, int src)
{
	emit_rr(ctx, w, 0x89, dst, src);
}

/* dst = imm: zero-extended when !w, sign-extended when w. */
static void emit_mov_imm32(struct xbpf_jit_ctx *ctx, bool w, int dst, int32_t imm)
{
	if (!w || imm >= 0) {
		emit_rex(ctx, false, 0, dst, false);
		emit1(ctx, 0xb8 | (dst & 7));
		emit4(ctx, (uint32_t)imm);
	} else {
		emit_rex(ctx, true, 0, dst, false);
		emit1(ctx, 0xc7);
		emit_modrm_rr(ctx, 0, dst);
		emit4(ctx, (uint32_t)imm);
	}
}

static void emit_mov_imm64(struct xbpf_jit_ctx *ctx, int dst, uint64_t v)
{
	if (v <= UINT32_MAX) {
		emit_mov_imm32(ctx, false, dst, (int32_t)(uint32_t)v);
	} else if ((int64_t)v >= INT32_MIN && (int64_t)v <= INT32_MAX) {
		emit_mov_imm32(ctx, true, dst, (int32_t)v);
	} else {
		emit_rex(ctx, true, 0, dst, false);
		emit1(ctx, 0xb8 | (dst & 7));
		emit8(ctx, v);
	}
}

/* Group-1 "op r/m, imm": ext 0 add, 1 or, 4 and, 5 sub, 6 xor, 7 cmp. */
static void emit_alu_imm(struct xbpf_jit_ctx *ctx, bool w, int ext, int dst, int32_t imm)
{
	emit_rex(ctx, w, 0, dst, false);
	if (is_imm8(imm)) {
		emit1(ctx, 0x83);
		emit_modrm_rr(ctx, ext, dst);
		emit1(ctx, (uint8_t)imm);
	} else {
		emit1(ctx, 0x81);
		emit_modrm_rr(ctx, ext, dst);
		emit4(ctx, (uint32_t)imm);
	}
}

/* Group-2 shift by imm / by cl: ext 4 shl, 5 shr, 7 sar. */
static void emit_shift_imm(struct xbpf_jit_ctx *ctx, bool w, int ext, int dst, uint8_t cnt)
{
	emit_rex(ctx, w, 0, dst, false);
	emit1(ctx, 0xc1);
	emit_modrm_rr(ctx, ext, dst);
	emit1(ctx, cnt);
}

static void emit_shift_cl(struct xbpf_jit_ctx *ctx, bool w, int ext, int dst)
{
	emit_rex(ctx, w, 0, dst, false);
	emit1(ctx, 0xd3);
	emit_modrm_rr(ctx, ext, dst);
}

/* Group-3 on a register: ext 3 neg, 6 div, 7 idiv. */
static void emit_grp3(struct xbpf_jit_ctx *ctx, bool w, int ext, int rm)
{
	emit_rex(ctx, w, 0, rm, false);
	emit1(ctx, 0xf7);
	emit_modrm_rr(ctx, ext, rm);
}

static void emit_push(struct xbpf_jit_ctx *ctx, int reg)
{
	emit_rex(ctx, false, 0, reg, false);
	emit1(ctx, 0x50 | (reg & 7));
}

static void emit_pop(struct xbpf_jit_ctx *ctx, int reg)
{
	emit_rex(ctx, false, 0, reg, false);
	emit1(ctx, 0x58 | (reg & 7));
}

/* Short local jumps inside one instruction's sequence. */
static size_t emit_jcc8_fwd(struct xbpf_jit_ctx *ctx, int cc)
{
	emit2(ctx, cc == CC_ALWAYS ? 0xeb : 0x70 | cc, 0);
	return ctx->pos;
}

static void patch_jcc8(struct xbpf_jit_ctx *ctx, size_t after)
{
	if (ctx->image && after <= ctx->image_cap)
		ctx->image[after - 1] = (uint8_t)(int8_t)(ctx->pos - after);
}

/* Jump to native offset `target`, short when it fits. */
static void emit_jump(struct xbpf_jit_ctx *ctx, int cc, uint32_t target)
{
	int64_t rel = (int64_t)target - (int64_t)(ctx->pos + 2);

	if (is_imm8(rel)) {
		emit2(ctx, cc == CC_ALWAYS ? 0xeb : 0x70 | cc, (uint8_t)rel);
	} else if (cc == CC_ALWAYS) {
		emit1(ctx, 0xe9);
		emit4(ctx, (uint32_t)(int32_t)((int64_t)target - (int64_t)(ctx->pos + 4)));
	} else {
		emit2(ctx, 0x0f, 0x80 | cc);
		emit4(ctx, (uint32_t)(int32_t)((int64_t)target - (int64_t)(ctx->pos + 4)));
	}
}

/* ---- frames ------------------------------------------------------------ */

static const int callee_saved[] = { RBX, R13, R14, R15 };

static void emit_prologue(struct xbpf_jit_ctx *ctx, uint32_t frame)
{
	emit_push(ctx, RBP);
	emit_mov(ctx, true, RBP, RSP);
	if (frame)
		emit_alu_imm(ctx, true, 5, RSP, (int32_t)frame); /* sub rsp, frame */
	for (size_t i = 0; i < sizeof(callee_saved) / sizeof(callee_saved[0]); i++)
		emit_push(ctx, callee_saved[i]);
}

static void emit_epilogue(struct xbpf_jit_ctx *ctx)
{
	for (size_t i = sizeof(callee_saved) / sizeof(callee_saved[0]); i-- > 0;)
		emit_pop(ctx, callee_saved[i]);
	emit1(ctx, 0xc9); /* leave */
	emit1(ctx, 0xc3); /* ret */
}

/* ---- ALU --------------------------------------------------------------- */

/*
 * Kernel semantics: x / 0 = 0, x % 0 = x (zero-extended for 32-bit),
 * signed INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0 (x86 would trap).
 */
static void emit_div(struct xbpf_jit_ctx *ctx, bool w, bool is_mod, bool is_signed, int dst, bool x, int src,
		     int32_t imm)
{
	size_t j_nonzero, j_done1, j_normal = 0, j_done2 = 0;

	if (x)
		emit_mov(ctx, w, TMP, src);
	else
		emit_mov_imm32(ctx, w, TMP, imm);

	emit_rr(ctx, w, 0x85, TMP, TMP); /* test */
	j_nonzero = emit_jcc8_fwd(ctx, CC_NE);
	if (!is_mod)
		emit_rr(ctx, false, 0x31, dst, dst); /* xor: dst = 0 */
	else if (!w)
		emit_mov(ctx, false, dst, dst);
	j_done1 = emit_jcc8_fwd(ctx, CC_ALWAYS);
	patch_jcc8(ctx, j_nonzero);

	if (is_signed) {
		emit_alu_imm(ctx, w, 7, TMP, -1); /* cmp tmp, -1 */
		j_normal = emit_jcc8_fwd(ctx, CC_NE);
		if (!is_mod)
			emit_grp3(ctx, w, 3, dst); /* x / -1 = -x, wrapping */
		else
			emit_rr(ctx, false, 0x31, dst, dst);
		j_done2 = emit_jcc8_fwd(ctx, CC_ALWAYS);
		patch_jcc8(ctx, j_normal);
	}

	if (dst != RAX)
		emit_push(ctx, RAX);
	if (dst != RDX)
		emit_push(ctx, RDX);
	if (dst != RAX)
		emit_mov(ctx, true, RAX, dst);
	if (is_signed) {
		if (w)
			emit1(ctx, 0x48);
		emit1(ctx, 0x99); /* cqo / cdq */
	} else {
		emit_rr(ctx, false, 0x31, RDX, RDX);
	}
	emit_grp3(ctx, w, is_signed ? 7 : 6, TMP);
	emit_mov(ctx, true, TMP, is_mod ? RDX : RAX);
	if (dst != RDX)
		emit_pop(ctx, RDX);
	if (dst != RAX)
		emit_pop(ctx, RAX);
	emit_mov(ctx, w, dst, TMP);

	patch_jcc8(ctx, j_done1);
	if (is_signed)
		patch_jcc8(ctx, j_done2);
}

/* Shift by a register: the count must be in cl, which holds BPF R4. */
static void emit_shift_reg(struct xbpf_jit_ctx *ctx, bool w, int ext, int dst, int src)
{
	if (src == RCX) {
		emit_shift_cl(ctx, w, ext, dst);
	} else {
		emit_mov(ctx, true, TMP, RCX);
		emit_mov(ctx, false, RCX, src);
		if (dst == RCX) {
			emit_shift_cl(ctx, w, ext, TMP);
			emit_mov(ctx, true, RCX, TMP);
		} else {
			emit_shift_cl(ctx, w, ext, dst);
			emit_mov(ctx, true, RCX, TMP);
		}
	}
	/* 32-bit results are zero-extended even for a zero count. */
	if (!w)
		emit_mov(ctx, false, dst, dst);
}

static int emit_end(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, int dst)
{
	bool swap = XBPF_CLASS(insn->code) == XBPF_ALU64 || XBPF_SRC(insn->code) == XBPF_TO_BE;

	if (XBPF_CLASS(insn->code) == XBPF_ALU64 && XBPF_SRC(insn->code) != XBPF_TO_LE)
		return -ENOTSUP;
	switch (insn->imm) {
	case 16:
		if (swap) { /* rol dst16, 8 */
			emit1(ctx, 0x66);
			emit_rex(ctx, false, 0, dst, false);
			emit1(ctx, 0xc1);
			emit_modrm_rr(ctx, 0, dst);
			emit1(ctx, 8);
		}
		emit_0f_rr(ctx, false, 0xb7, dst, dst, false); /* movzx dst32, dst16 */
		return 0;
	case 32:
		if (swap) {
			emit_rex(ctx, false, 0, dst, false);
			emit2(ctx, 0x0f, 0xc8 | (dst & 7));
		} else {
			emit_mov(ctx, false, dst, dst);
		}
		return 0;
	case 64:
		if (swap) {
			emit_rex(ctx, true, 0, dst, false);
			emit2(ctx, 0x0f, 0xc8 | (dst & 7));
		}
		return 0;
	}
	return -ENOTSUP;
}

static int emit_alu(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn)
{
	bool w = XBPF_CLASS(insn->code) == XBPF_ALU64;
	bool x = XBPF_SRC(insn->code) == XBPF_X;
	int dst = reg_map[insn->dst_reg], src = reg_map[insn->src_reg];
	int32_t imm = insn->imm;
	uint8_t op = XBPF_OP(insn->code);
	int ext;

	if (op != XBPF_DIV && op != XBPF_MOD && op != XBPF_MOV && insn->off)
		return -ENOTSUP;
	switch (op) {
	case XBPF_ADD: ext = 0; goto group1;
	case XBPF_OR:  ext = 1; goto group1;
	case XBPF_AND: ext = 4; goto group1;
	case XBPF_SUB: ext = 5; goto group1;
	case XBPF_XOR: ext = 6;
group1:
		if (x)
			emit_rr(ctx, w, (uint8_t)(ext << 3 | 1), dst, src);
		else
			emit_alu_imm(ctx, w, ext, dst, imm);
		return 0;
	case XBPF_MOV:
		if (!x) {
			if (insn->off)
				return -ENOTSUP;
			emit_mov_imm32(ctx, w, dst, imm);
		} else if (insn->off == 0) {
			emit_mov(ctx, w, dst, src);
		} else if (insn->off == 8 || insn->off == 16) {
			emit_0f_rr(ctx, w, insn->off == 8 ? 0xbe : 0xbf, dst, src, insn->off == 8);
		} else if (insn->off == 32 && w) {
			emit_rex(ctx, true, dst, src, false);
			emit1(ctx, 0x63); /* movsxd */
			emit_modrm_rr(ctx, dst, src);
		} else {
			return -ENOTSUP;
		}
		return 0;
	case XBPF_MUL:
		if (x) {
			emit_0f_rr(ctx, w, 0xaf, dst, src, false);
		} else {
			emit_rex(ctx, w, dst, dst, false);
			emit1(ctx, is_imm8(imm) ? 0x6b : 0x69);
			emit_modrm_rr(ctx, dst, dst);
			if (is_imm8(imm))
				emit1(ctx, (uint8_t)imm);
			else
				emit4(ctx, (uint32_t)imm);
		}
		return 0;
	case XBPF_LSH: ext = 4; goto shift;
	case XBPF_RSH: ext = 5; goto shift;
	case XBPF_ARSH: ext = 7;
shift:
		if (x) {
			emit_shift_reg(ctx, w, ext, dst, src);
		} else {
			uint8_t cnt = (uint8_t)imm & (w ? 63 : 31);

			if (cnt)
				emit_shift_imm(ctx, w, ext, dst, cnt);
			else if (!w)
				emit_mov(ctx, false, dst, dst);
		}
		return 0;
	case XBPF_NEG:
		if (x || imm)
			return -ENOTSUP;
		emit_grp3(ctx, w, 3, dst);
		return 0;
	case XBPF_DIV:
	case XBPF_MOD:
		if (insn->off != 0 && insn->off != 1)
			return -ENOTSUP;
		emit_div(ctx, w, op == XBPF_MOD, insn->off == 1, dst, x, src, imm);
		return 0;
	case XBPF_END:
		return emit_end(ctx, insn, dst);
	}
	return -ENOTSUP;
}

/* ---- memory ------------------------------------------------------------ */

static int emit_ldx(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn)
{
	int dst = reg_map[insn->dst_reg], base = reg_map[insn->src_reg];
	bool sx = XBPF_MODE(insn->code) == XBPF_MEMSX;

	switch (XBPF_SIZE(insn->code)) {
	case XBPF_B:
		emit_rex(ctx, sx, dst, base, false);
		emit2(ctx, 0x0f, sx ? 0xbe : 0xb6);
		break;
	case XBPF_H:
		emit_rex(ctx, sx, dst, base, false);
		emit2(ctx, 0x0f, sx ? 0xbf : 0xb7);
		break;
	case XBPF_W:
		emit_rex(ctx, sx, dst, base, false);
		emit1(ctx, sx ? 0x63 : 0x8b);
		break;
	case XBPF_DW:
		if (sx)
			return -ENOTSUP;
		emit_rex(ctx, true, dst, base, false);
		emit1(ctx, 0x8b);
		break;
	}
	emit_modrm_mem(ctx, dst, base, insn->off);
	return 0;
}

static void emit_stx_sized(struct xbpf_jit_ctx *ctx, uint8_t size, int base, int16_t off, int src)
{
	if (size == XBPF_H)
		emit1(ctx, 0x66);
	emit_rex(ctx, size == XBPF_DW, src, base, size == XBPF_B);
	emit1(ctx, size == XBPF_B ? 0x88 : 0x89);
	emit_modrm_mem(ctx, src, base, off);
}

static void emit_st_imm(struct xbpf_jit_ctx *ctx, uint8_t size, int base, int16_t off, int32_t imm)
{
	if (size == XBPF_H)
		emit1(ctx, 0x66);
	emit_rex(ctx, size == XBPF_DW, 0, base, false);
	emit1(ctx, size == XBPF_B ? 0xc6 : 0xc7);
	emit_modrm_mem(ctx, 0, base, off);
	if (size == XBPF_B)
		emit1(ctx, (uint8_t)imm);
	else if (size == XBPF_H)
		emit2(ctx, (uint8_t)imm, (uint8_t)(imm >> 8));
	else
		emit4(ctx, (uint32_t)imm);
}

/* lock-prefixed "op [base+off], reg" with a one- or two-byte opcode. */
static void emit_locked(struct xbpf_jit_ctx *ctx, bool w, bool lock, bool twobyte, uint8_t opc, int base,
			int16_t off, int reg)
{
	if (lock)
		emit1(ctx, 0xf0);
	emit_rex(ctx, w, reg, base, false);
	if (twobyte)
		emit1(ctx, 0x0f);
	emit1(ctx, opc);
	emit_modrm_mem(ctx, reg, base, off);
}

static int emit_atomic(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn)
{
	uint8_t size = XBPF_SIZE(insn->code);
	int dst = reg_map[insn->dst_reg], src = reg_map[insn->src_reg];
	bool w = size == XBPF_DW;
	uint8_t opc;

	if (size != XBPF_W && size != XBPF_DW)
		return -ENOTSUP;
	switch (insn->imm) {
	case XBPF_ADD: opc = 0x01; goto plain;
	case XBPF_OR:  opc = 0x09; goto plain;
	case XBPF_AND: opc = 0x21; goto plain;
	case XBPF_XOR: opc = 0x31;
plain:
		emit_locked(ctx, w, true, false, opc, dst, insn->off, src);
		return 0;
	case XBPF_ADD | XBPF_FETCH:
		emit_locked(ctx, w, true, true, 0xc1, dst, insn->off, src); /* xadd */
		return 0;
	case XBPF_XCHG:
		emit_locked(ctx, w, false, false, 0x87, dst, insn->off, src);
		return 0;
	case XBPF_CMPXCHG:
		emit_locked(ctx, w, true, true, 0xb1, dst, insn->off, src);
		if (!w)
			emit_mov(ctx, false, RAX, RAX); /* R0 is zero-extended */
		return 0;
	case XBPF_OR | XBPF_FETCH:  opc = 0x09; goto loop;
	case XBPF_AND | XBPF_FETCH: opc = 0x21; goto loop;
	case XBPF_XOR | XBPF_FETCH: opc = 0x31;
loop: {
		/* rax is cmpxchg's comparand: keep BPF R0 in TMP2 meanwhile. */
		int base = dst == RAX ? TMP2 : dst, val = src == RAX ? TMP2 : src;
		size_t again;

		emit_mov(ctx, true, TMP2, RAX);
		emit_rex(ctx, w, RAX, base, false);
		emit1(ctx, 0x8b);
		emit_modrm_mem(ctx, RAX, base, insn->off);
		again = ctx->pos;
		emit_mov(ctx, true, TMP, RAX);
		emit_rr(ctx, w, opc, TMP, val);
		emit_locked(ctx, w, true, true, 0xb1, base, insn->off, TMP);
		emit2(ctx, 0x70 | CC_NE, (uint8_t)(int8_t)((int64_t)again - (int64_t)(ctx->pos + 2)));
		if (src != RAX) {
			emit_mov(ctx, true, src, RAX);
			emit_mov(ctx, true, RAX, TMP2);
		}
		return 0;
	}
	}
	return -ENOTSUP;
}

/* ---- jumps and calls ---------------------------------------------------- */

static int jcc_of(uint8_t op)
{
	switch (op) {
	case XBPF_JEQ: return CC_E;
	case XBPF_JNE: return CC_NE;
	case XBPF_JSET: return CC_NE;
	case XBPF_JGT: return CC_A;
	case XBPF_JGE: return CC_AE;
	case XBPF_JLT: return CC_B;
	case XBPF_JLE: return CC_BE;
	case XBPF_JSGT: return CC_G;
	case XBPF_JSGE: return CC_GE;
	case XBPF_JSLT: return CC_L;
	case XBPF_JSLE: return CC_LE;
	}
	return -2;
}

static int emit_cond_jump(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, uint32_t target)
{
	bool w = XBPF_CLASS(insn->code) == XBPF_JMP;
	bool x = XBPF_SRC(insn->code) == XBPF_X;
	int dst = reg_map[insn->dst_reg], src = reg_map[insn->src_reg];
	uint8_t op = XBPF_OP(insn->code);
	int cc = jcc_of(op);

	if (cc == -2)
		return -ENOTSUP;
	if (op == XBPF_JSET) {
		if (x) {
			emit_rr(ctx, w, 0x85, dst, src);
		} else {
			emit_rex(ctx, w, 0, dst, false);
			emit1(ctx, 0xf7);
			emit_modrm_rr(ctx, 0, dst);
			emit4(ctx, (uint32_t)insn->imm);
		}
	} else if (x) {
		emit_rr(ctx, w, 0x39, dst, src); /* cmp dst, src */
	} else {
		emit_alu_imm(ctx, w, 7, dst, insn->imm);
	}
	emit_jump(ctx, cc, target);
	return 0;
}

static int emit_call(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, uint32_t idx)
{
	if (xbpf_insn_is_pseudo_call(insn)) {
		int f = __xbpf_jit_callee(ctx, idx);
		int64_t rel;

		if (f < 0)
			return -ENOTSUP;
		/* Until the final pass func_off[] of later functions may be stale. */
		rel = (int64_t)ctx->func_off[f] - (int64_t)(ctx->pos + 5);
		emit1(ctx, 0xe8);
		emit4(ctx, (uint32_t)(int32_t)rel);
		return 0;
	}
	if (xbpf_insn_is_helper_call(insn)) {
		xbpf_helper_fn fn = xbpf_helper_impl(insn->imm);

		if (!fn)
			return -ENOTSUP;
		/* R1-R5 are rdi, rsi, rdx, rcx, r8 already: just call. */
		emit_mov_imm64(ctx, TMP, (uint64_t)(uintptr_t)fn);
		emit_rex(ctx, false, 0, TMP, false);
		emit1(ctx, 0xff);
		emit_modrm_rr(ctx, 2, TMP); /* call *r11 */
		return 0;
	}
	return -ENOTSUP; /* kfuncs */
}

static int emit_ldimm64(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, uint32_t idx)
{
	int dst = reg_map[insn->dst_reg];

	if (insn->src_reg == XBPF_PSEUDO_FUNC) {
		/* Callback address: known once the image is placed, so fixed size. */
		int f = __xbpf_jit_callee(ctx, idx);
		uint64_t addr;

		if (f < 0)
			return -ENOTSUP;
		addr = ctx->image ? (uint64_t)(uintptr_t)(ctx->image + ctx->func_off[f]) : 0;
		emit_rex(ctx, true, 0, dst, false);
		emit1(ctx, 0xb8 | (dst & 7));
		emit8(ctx, addr);
		return 0;
	}
	emit_mov_imm64(ctx, dst, (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32);
	return 0;
}

/*
 * LD_ABS / LD_IND: R0 = big-endian packet bytes at (imm | src + imm), read
 * through the context in R6 (rbx).  Out of the packet the whole program
 * ends with R0 = 0, as in the kernel; that is this function's exit because
 * the back ends take these loads in single-function programs only (the
 * kernel refuses them next to bpf-to-bpf calls without BTF).
 */
static int emit_ld_pkt(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn)
{
	uint8_t size = xbpf_opcode_desc(insn->code)->size;
	size_t j_neg = 0, j_short, j_done;

	if (ctx->prog->func_cnt != 1)
		return -ENOTSUP;
	if (XBPF_MODE(insn->code) == XBPF_ABS && insn->imm < 0) {
		/* Always outside the packet. */
		emit_rr(ctx, false, 0x31, RAX, RAX);
		emit_epilogue(ctx);
		return 0;
	}
	if (XBPF_MODE(insn->code) == XBPF_ABS) {
		emit_mov_imm32(ctx, false, TMP, insn->imm);
	} else {
		/* 32-bit sum, then signed: a negative offset ends the program. */
		emit_mov(ctx, false, TMP, reg_map[insn->src_reg]);
		emit_alu_imm(ctx, false, 0, TMP, insn->imm);
		emit_rex(ctx, true, TMP, TMP, false);
		emit1(ctx, 0x63); /* movsxd */
		emit_modrm_rr(ctx, TMP, TMP);
		emit_rr(ctx, true, 0x85, TMP, TMP);
		j_neg = emit_jcc8_fwd(ctx, CC_S);
	}
	/* rax = data_end - (data + off), signed: fewer than size bytes left ends the program. */
	emit_rex(ctx, false, RAX, RBX, false);
	emit1(ctx, 0x8b);
	emit_modrm_mem(ctx, RAX, RBX, offsetof(struct __sk_buff, data_end));
	emit_rex(ctx, false, TMP2, RBX, false);
	emit1(ctx, 0x8b);
	emit_modrm_mem(ctx, TMP2, RBX, offsetof(struct __sk_buff, data));
	emit_rr(ctx, true, 0x01, TMP2, TMP);
	emit_rr(ctx, true, 0x29, RAX, TMP2);
	emit_alu_imm(ctx, true, 7, RAX, size);
	j_short = emit_jcc8_fwd(ctx, CC_L);
	if (size == 4) {
		emit_rex(ctx, false, RAX, TMP2, false);
		emit1(ctx, 0x8b);
		emit_modrm_mem(ctx, RAX, TMP2, 0);
		emit2(ctx, 0x0f, 0xc8); /* bswap eax */
	} else {
		emit_rex(ctx, false, RAX, TMP2, false);
		emit2(ctx, 0x0f, size == 2 ? 0xb7 : 0xb6); /* movzx eax, word/byte */
		emit_modrm_mem(ctx, RAX, TMP2, 0);
		if (size == 2) {
			emit1(ctx, 0x66); /* rol ax, 8 */
			emit2(ctx, 0xc1, 0xc0);
			emit1(ctx, 8);
		}
	}
	j_done = emit_jcc8_fwd(ctx, CC_ALWAYS);
	if (j_neg)
		patch_jcc8(ctx, j_neg);
	patch_jcc8(ctx, j_short);
	emit_rr(ctx, false, 0x31, RAX, RAX);
	emit_epilogue(ctx);
	patch_jcc8(ctx, j_done);
	return 0;
}

static void emit_ja(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, uint32_t idx)
{
	int64_t t = xbpf_jump_target(insn, idx);

	if (t != idx + 1)
		emit_jump(ctx, CC_ALWAYS, ctx->insn_off[t]);
}

/* ---- translate ---------------------------------------------------------- */

/* One instruction, dispatched on its format in the opcode table (isa/). */
static int translate(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn, uint32_t idx)
{
	const struct xbpf_insn *insn = &ctx->prog->insns[idx];

	(void)fn;
	if (insn->dst_reg > XBPF_REG_AX || insn->src_reg > XBPF_REG_AX)
		return -ENOTSUP;
	switch (xbpf_opcode_desc(insn->code)->fmt) {
	case XBPF_FMT_ALU:
	case XBPF_FMT_ALU_UN:
		return emit_alu(ctx, insn);
	case XBPF_FMT_LDIMM64:
		return emit_ldimm64(ctx, insn, idx);
	case XBPF_FMT_LDABS:
		return emit_ld_pkt(ctx, insn);
	case XBPF_FMT_LDX:
		return emit_ldx(ctx, insn);
	case XBPF_FMT_ST:
		emit_st_imm(ctx, XBPF_SIZE(insn->code), reg_map[insn->dst_reg], insn->off, insn->imm);
		return 0;
	case XBPF_FMT_STX:
		emit_stx_sized(ctx, XBPF_SIZE(insn->code), reg_map[insn->dst_reg], insn->off,
			       reg_map[insn->src_reg]);
		return 0;
	case XBPF_FMT_ATOMIC:
		return emit_atomic(ctx, insn);
	case XBPF_FMT_JA:
		emit_ja(ctx, insn, idx);
		return 0;
	case XBPF_FMT_JCOND:
		return emit_cond_jump(ctx, insn, ctx->insn_off[xbpf_jump_target(insn, idx)]);
	case XBPF_FMT_CALL:
		return emit_call(ctx, insn, idx);
	case XBPF_FMT_EXIT:
		emit_epilogue(ctx); /* inline at every exit: one jump less */
		return 0;
	case XBPF_FMT_INVALID:
		break;
	}
	return -ENOTSUP;
}

static int prologue(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn)
{
	emit_prologue(ctx, fn->stack);
	return 0;
}

/* Functions end in exit or ja (checked by the driver); exits emit the epilogue. */
static int epilogue(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn)
{
	(void)ctx;
	(void)fn;
	return 0;
}

const struct xbpf_jit_arch __xbpf_jit_x86_64 = {
	.name = "x86_64",
	.max_image = INT32_MAX, /* rel32 calls and jumps */
	.prologue = prologue,
	.translate = translate,
	.epilogue = epilogue,
};
