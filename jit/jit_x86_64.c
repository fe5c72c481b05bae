/* SPDX-License-Identifier: MIT */
/*
 * jit_x86_64.c - the x86-64 back end: static emit_* helpers and a translate
 * loop, driven by jit_support.c.
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
	CC_L = 0xc, CC_GE = 0xd, CC_LE = 0xe, CC_G = 0xf,
	CC_ALWAYS = -1,
};

struct x64 {
	struct xbpf_jit_ctx *ctx;
	int err;
};

/* ---- byte emission ----------------------------------------------------- */

static void emit1(struct x64 *j, uint8_t b)
{
	struct xbpf_jit_ctx *ctx = j->ctx;

	if (ctx->image) {
		if (ctx->pos < ctx->image_cap)
			ctx->image[ctx->pos] = b;
		else
			j->err = -EFAULT;
	}
	ctx->pos++;
}

static void emit2(struct x64 *j, uint8_t a, uint8_t b)
{
	emit1(j, a);
	emit1(j, b);
}

static void emit4(struct x64 *j, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		emit1(j, (uint8_t)(v >> (8 * i)));
}

static void emit8(struct x64 *j, uint64_t v)
{
	emit4(j, (uint32_t)v);
	emit4(j, (uint32_t)(v >> 32));
}

static bool is_imm8(int64_t v)
{
	return v >= -128 && v <= 127;
}

/* REX prefix; `force` for byte registers (sil/dil/bpl need one). */
static void emit_rex(struct x64 *j, bool w, int reg, int rm, bool force)
{
	uint8_t rex = 0x40 | (w << 3) | ((reg >> 3) << 2) | (rm >> 3);

	if (rex != 0x40 || force)
		emit1(j, rex);
}

static void emit_modrm_rr(struct x64 *j, int reg, int rm)
{
	emit1(j, 0xc0 | (reg & 7) << 3 | (rm & 7));
}

/* [base + off]; always with a displacement so rbp/r13 need no special case. */
static void emit_modrm_mem(struct x64 *j, int reg, int base, int32_t off)
{
	bool d8 = is_imm8(off);

	emit1(j, (d8 ? 0x40 : 0x80) | (reg & 7) << 3 | (base & 7));
	if ((base & 7) == RSP)
		emit1(j, 0x24); /* SIB: base only */
	if (d8)
		emit1(j, (uint8_t)off);
	else
		emit4(j, (uint32_t)off);
}

/* "op r/m, reg" with a one-byte opcode: add 01, or 09, and 21, sub 29, ... */
static void emit_rr(struct x64 *j, bool w, uint8_t opc, int rm, int reg)
{
	emit_rex(j, w, reg, rm, false);
	emit1(j, opc);
	emit_modrm_rr(j, reg, rm);
}

/* "op reg, r/m" with a 0x0f-prefixed opcode: imul, movzx, movsx. */
static void emit_0f_rr(struct x64 *j, bool w, uint8_t opc, int reg, int rm, bool byte_rm)
{
	emit_rex(j, w, reg, rm, byte_rm);
	emit2(j, 0x0f, opc);
	emit_modrm_rr(j, reg, rm);
}

static void emit_mov(struct x64 *j, bool w, int dst, int src)
{
	emit_rr(j, w, 0x89, dst, src);
}

/* dst = imm: zero-extended when !w, sign-extended when w. */
static void emit_mov_imm32(struct x64 *j, bool w, int dst, int32_t imm)
{
	if (!w || imm >= 0) {
		emit_rex(j, false, 0, dst, false);
		emit1(j, 0xb8 | (dst & 7));
		emit4(j, (uint32_t)imm);
	} else {
		emit_rex(j, true, 0, dst, false);
		emit1(j, 0xc7);
		emit_modrm_rr(j, 0, dst);
		emit4(j, (uint32_t)imm);
	}
}

static void emit_mov_imm64(struct x64 *j, int dst, uint64_t v)
{
	if (v <= UINT32_MAX) {
		emit_mov_imm32(j, false, dst, (int32_t)(uint32_t)v);
	} else if ((int64_t)v >= INT32_MIN && (int64_t)v <= INT32_MAX) {
		emit_mov_imm32(j, true, dst, (int32_t)v);
	} else {
		emit_rex(j, true, 0, dst, false);
		emit1(j, 0xb8 | (dst & 7));
		emit8(j, v);
	}
}

/* Group-1 "op r/m, imm": ext 0 add, 1 or, 4 and, 5 sub, 6 xor, 7 cmp. */
static void emit_alu_imm(struct x64 *j, bool w, int ext, int dst, int32_t imm)
{
	emit_rex(j, w, 0, dst, false);
	if (is_imm8(imm)) {
		emit1(j, 0x83);
		emit_modrm_rr(j, ext, dst);
		emit1(j, (uint8_t)imm);
	} else {
		emit1(j, 0x81);
		emit_modrm_rr(j, ext, dst);
		emit4(j, (uint32_t)imm);
	}
}

/* Group-2 shift by imm / by cl: ext 4 shl, 5 shr, 7 sar. */
static void emit_shift_imm(struct x64 *j, bool w, int ext, int dst, uint8_t cnt)
{
	emit_rex(j, w, 0, dst, false);
	emit1(j, 0xc1);
	emit_modrm_rr(j, ext, dst);
	emit1(j, cnt);
}

static void emit_shift_cl(struct x64 *j, bool w, int ext, int dst)
{
	emit_rex(j, w, 0, dst, false);
	emit1(j, 0xd3);
	emit_modrm_rr(j, ext, dst);
}

/* Group-3 on a register: ext 3 neg, 6 div, 7 idiv. */
static void emit_grp3(struct x64 *j, bool w, int ext, int rm)
{
	emit_rex(j, w, 0, rm, false);
	emit1(j, 0xf7);
	emit_modrm_rr(j, ext, rm);
}

static void emit_push(struct x64 *j, int reg)
{
	emit_rex(j, false, 0, reg, false);
	emit1(j, 0x50 | (reg & 7));
}

static void emit_pop(struct x64 *j, int reg)
{
	emit_rex(j, false, 0, reg, false);
	emit1(j, 0x58 | (reg & 7));
}

/* Short local jumps inside one instruction's sequence. */
static size_t emit_jcc8_fwd(struct x64 *j, int cc)
{
	emit2(j, cc == CC_ALWAYS ? 0xeb : 0x70 | cc, 0);
	return j->ctx->pos;
}

static void patch_jcc8(struct x64 *j, size_t after)
{
	struct xbpf_jit_ctx *ctx = j->ctx;

	if (ctx->image && after <= ctx->image_cap)
		ctx->image[after - 1] = (uint8_t)(int8_t)(ctx->pos - after);
}

/* Jump to native offset `target`, short when it fits. */
static void emit_jump(struct x64 *j, int cc, uint32_t target)
{
	int64_t rel = (int64_t)target - (int64_t)(j->ctx->pos + 2);

	if (is_imm8(rel)) {
		emit2(j, cc == CC_ALWAYS ? 0xeb : 0x70 | cc, (uint8_t)rel);
	} else if (cc == CC_ALWAYS) {
		emit1(j, 0xe9);
		emit4(j, (uint32_t)(int32_t)((int64_t)target - (int64_t)(j->ctx->pos + 4)));
	} else {
		emit2(j, 0x0f, 0x80 | cc);
		emit4(j, (uint32_t)(int32_t)((int64_t)target - (int64_t)(j->ctx->pos + 4)));
	}
}

/* ---- frames ------------------------------------------------------------ */

static const int callee_saved[] = { RBX, R13, R14, R15 };

static void emit_prologue(struct x64 *j, uint32_t frame)
{
	emit_push(j, RBP);
	emit_mov(j, true, RBP, RSP);
	if (frame)
		emit_alu_imm(j, true, 5, RSP, (int32_t)frame); /* sub rsp, frame */
	for (size_t i = 0; i < sizeof(callee_saved) / sizeof(callee_saved[0]); i++)
		emit_push(j, callee_saved[i]);
}

static void emit_epilogue(struct x64 *j)
{
	for (size_t i = sizeof(callee_saved) / sizeof(callee_saved[0]); i-- > 0;)
		emit_pop(j, callee_saved[i]);
	emit1(j, 0xc9); /* leave */
	emit1(j, 0xc3); /* ret */
}

/* ---- ALU --------------------------------------------------------------- */

/*
 * Kernel semantics: x / 0 = 0, x % 0 = x (zero-extended for 32-bit),
 * signed INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0 (x86 would trap).
 */
static void emit_div(struct x64 *j, bool w, bool is_mod, bool is_signed, int dst, bool x, int src,
		     int32_t imm)
{
	size_t j_nonzero, j_done1, j_normal = 0, j_done2 = 0;

	if (x)
		emit_mov(j, w, TMP, src);
	else
		emit_mov_imm32(j, w, TMP, imm);

	emit_rr(j, w, 0x85, TMP, TMP); /* test */
	j_nonzero = emit_jcc8_fwd(j, CC_NE);
	if (!is_mod)
		emit_rr(j, false, 0x31, dst, dst); /* xor: dst = 0 */
	else if (!w)
		emit_mov(j, false, dst, dst);
	j_done1 = emit_jcc8_fwd(j, CC_ALWAYS);
	patch_jcc8(j, j_nonzero);

	if (is_signed) {
		emit_alu_imm(j, w, 7, TMP, -1); /* cmp tmp, -1 */
		j_normal = emit_jcc8_fwd(j, CC_NE);
		if (!is_mod)
			emit_grp3(j, w, 3, dst); /* x / -1 = -x, wrapping */
		else
			emit_rr(j, false, 0x31, dst, dst);
		j_done2 = emit_jcc8_fwd(j, CC_ALWAYS);
		patch_jcc8(j, j_normal);
	}

	if (dst != RAX)
		emit_push(j, RAX);
	if (dst != RDX)
		emit_push(j, RDX);
	if (dst != RAX)
		emit_mov(j, true, RAX, dst);
	if (is_signed) {
		if (w)
			emit1(j, 0x48);
		emit1(j, 0x99); /* cqo / cdq */
	} else {
		emit_rr(j, false, 0x31, RDX, RDX);
	}
	emit_grp3(j, w, is_signed ? 7 : 6, TMP);
	emit_mov(j, true, TMP, is_mod ? RDX : RAX);
	if (dst != RDX)
		emit_pop(j, RDX);
	if (dst != RAX)
		emit_pop(j, RAX);
	emit_mov(j, w, dst, TMP);

	patch_jcc8(j, j_done1);
	if (is_signed)
		patch_jcc8(j, j_done2);
}

/* Shift by a register: the count must be in cl, which holds BPF R4. */
static void emit_shift_reg(struct x64 *j, bool w, int ext, int dst, int src)
{
	if (src == RCX) {
		emit_shift_cl(j, w, ext, dst);
	} else {
		emit_mov(j, true, TMP, RCX);
		emit_mov(j, false, RCX, src);
		if (dst == RCX) {
			emit_shift_cl(j, w, ext, TMP);
			emit_mov(j, true, RCX, TMP);
		} else {
			emit_shift_cl(j, w, ext, dst);
			emit_mov(j, true, RCX, TMP);
		}
	}
	/* 32-bit results are zero-extended even for a zero count. */
	if (!w)
		emit_mov(j, false, dst, dst);
}

static int emit_end(struct x64 *j, const struct xbpf_insn *insn, int dst)
{
	bool swap = XBPF_CLASS(insn->code) == XBPF_ALU64 || XBPF_SRC(insn->code) == XBPF_TO_BE;

	if (XBPF_CLASS(insn->code) == XBPF_ALU64 && XBPF_SRC(insn->code) != XBPF_TO_LE)
		return -ENOTSUP;
	switch (insn->imm) {
	case 16:
		if (swap) { /* rol dst16, 8 */
			emit1(j, 0x66);
			emit_rex(j, false, 0, dst, false);
			emit1(j, 0xc1);
			emit_modrm_rr(j, 0, dst);
			emit1(j, 8);
		}
		emit_0f_rr(j, false, 0xb7, dst, dst, false); /* movzx dst32, dst16 */
		return 0;
	case 32:
		if (swap) {
			emit_rex(j, false, 0, dst, false);
			emit2(j, 0x0f, 0xc8 | (dst & 7));
		} else {
			emit_mov(j, false, dst, dst);
		}
		return 0;
	case 64:
		if (swap) {
			emit_rex(j, true, 0, dst, false);
			emit2(j, 0x0f, 0xc8 | (dst & 7));
		}
		return 0;
	}
	return -ENOTSUP;
}

static int emit_alu(struct x64 *j, const struct xbpf_insn *insn)
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
			emit_rr(j, w, (uint8_t)(ext << 3 | 1), dst, src);
		else
			emit_alu_imm(j, w, ext, dst, imm);
		return 0;
	case XBPF_MOV:
		if (!x) {
			if (insn->off)
				return -ENOTSUP;
			emit_mov_imm32(j, w, dst, imm);
		} else if (insn->off == 0) {
			emit_mov(j, w, dst, src);
		} else if (insn->off == 8 || insn->off == 16) {
			emit_0f_rr(j, w, insn->off == 8 ? 0xbe : 0xbf, dst, src, insn->off == 8);
		} else if (insn->off == 32 && w) {
			emit_rex(j, true, dst, src, false);
			emit1(j, 0x63); /* movsxd */
			emit_modrm_rr(j, dst, src);
		} else {
			return -ENOTSUP;
		}
		return 0;
	case XBPF_MUL:
		if (x) {
			emit_0f_rr(j, w, 0xaf, dst, src, false);
		} else {
			emit_rex(j, w, dst, dst, false);
			emit1(j, is_imm8(imm) ? 0x6b : 0x69);
			emit_modrm_rr(j, dst, dst);
			if (is_imm8(imm))
				emit1(j, (uint8_t)imm);
			else
				emit4(j, (uint32_t)imm);
		}
		return 0;
	case XBPF_LSH: ext = 4; goto shift;
	case XBPF_RSH: ext = 5; goto shift;
	case XBPF_ARSH: ext = 7;
shift:
		if (x) {
			emit_shift_reg(j, w, ext, dst, src);
		} else {
			uint8_t cnt = (uint8_t)imm & (w ? 63 : 31);

			if (cnt)
				emit_shift_imm(j, w, ext, dst, cnt);
			else if (!w)
				emit_mov(j, false, dst, dst);
		}
		return 0;
	case XBPF_NEG:
		if (x || imm)
			return -ENOTSUP;
		emit_grp3(j, w, 3, dst);
		return 0;
	case XBPF_DIV:
	case XBPF_MOD:
		if (insn->off != 0 && insn->off != 1)
			return -ENOTSUP;
		emit_div(j, w, op == XBPF_MOD, insn->off == 1, dst, x, src, imm);
		return 0;
	case XBPF_END:
		return emit_end(j, insn, dst);
	}
	return -ENOTSUP;
}

/* ---- memory ------------------------------------------------------------ */

static int emit_ldx(struct x64 *j, const struct xbpf_insn *insn)
{
	int dst = reg_map[insn->dst_reg], base = reg_map[insn->src_reg];
	bool sx = XBPF_MODE(insn->code) == XBPF_MEMSX;

	switch (XBPF_SIZE(insn->code)) {
	case XBPF_B:
		emit_rex(j, sx, dst, base, false);
		emit2(j, 0x0f, sx ? 0xbe : 0xb6);
		break;
	case XBPF_H:
		emit_rex(j, sx, dst, base, false);
		emit2(j, 0x0f, sx ? 0xbf : 0xb7);
		break;
	case XBPF_W:
		emit_rex(j, sx, dst, base, false);
		emit1(j, sx ? 0x63 : 0x8b);
		break;
	case XBPF_DW:
		if (sx)
			return -ENOTSUP;
		emit_rex(j, true, dst, base, false);
		emit1(j, 0x8b);
		break;
	}
	emit_modrm_mem(j, dst, base, insn->off);
	return 0;
}

static void emit_stx_sized(struct x64 *j, uint8_t size, int base, int16_t off, int src)
{
	if (size == XBPF_H)
		emit1(j, 0x66);
	emit_rex(j, size == XBPF_DW, src, base, size == XBPF_B);
	emit1(j, size == XBPF_B ? 0x88 : 0x89);
	emit_modrm_mem(j, src, base, off);
}

static void emit_st_imm(struct x64 *j, uint8_t size, int base, int16_t off, int32_t imm)
{
	if (size == XBPF_H)
		emit1(j, 0x66);
	emit_rex(j, size == XBPF_DW, 0, base, false);
	emit1(j, size == XBPF_B ? 0xc6 : 0xc7);
	emit_modrm_mem(j, 0, base, off);
	if (size == XBPF_B)
		emit1(j, (uint8_t)imm);
	else if (size == XBPF_H)
		emit2(j, (uint8_t)imm, (uint8_t)(imm >> 8));
	else
		emit4(j, (uint32_t)imm);
}

/* lock-prefixed "op [base+off], reg" with a one- or two-byte opcode. */
static void emit_locked(struct x64 *j, bool w, bool lock, bool twobyte, uint8_t opc, int base,
			int16_t off, int reg)
{
	if (lock)
		emit1(j, 0xf0);
	emit_rex(j, w, reg, base, false);
	if (twobyte)
		emit1(j, 0x0f);
	emit1(j, opc);
	emit_modrm_mem(j, reg, base, off);
}

static int emit_atomic(struct x64 *j, const struct xbpf_insn *insn)
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
		emit_locked(j, w, true, false, opc, dst, insn->off, src);
		return 0;
	case XBPF_ADD | XBPF_FETCH:
		emit_locked(j, w, true, true, 0xc1, dst, insn->off, src); /* xadd */
		return 0;
	case XBPF_XCHG:
		emit_locked(j, w, false, false, 0x87, dst, insn->off, src);
		return 0;
	case XBPF_CMPXCHG:
		emit_locked(j, w, true, true, 0xb1, dst, insn->off, src);
		if (!w)
			emit_mov(j, false, RAX, RAX); /* R0 is zero-extended */
		return 0;
	case XBPF_OR | XBPF_FETCH:  opc = 0x09; goto loop;
	case XBPF_AND | XBPF_FETCH: opc = 0x21; goto loop;
	case XBPF_XOR | XBPF_FETCH: opc = 0x31;
loop: {
		/* rax is cmpxchg's comparand: keep BPF R0 in TMP2 meanwhile. */
		int base = dst == RAX ? TMP2 : dst, val = src == RAX ? TMP2 : src;
		size_t again;

		emit_mov(j, true, TMP2, RAX);
		emit_rex(j, w, RAX, base, false);
		emit1(j, 0x8b);
		emit_modrm_mem(j, RAX, base, insn->off);
		again = j->ctx->pos;
		emit_mov(j, true, TMP, RAX);
		emit_rr(j, w, opc, TMP, val);
		emit_locked(j, w, true, true, 0xb1, base, insn->off, TMP);
		emit2(j, 0x70 | CC_NE, (uint8_t)(int8_t)((int64_t)again - (int64_t)(j->ctx->pos + 2)));
		if (src != RAX) {
			emit_mov(j, true, src, RAX);
			emit_mov(j, true, RAX, TMP2);
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

static int emit_cond_jump(struct x64 *j, const struct xbpf_insn *insn, uint32_t target)
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
			emit_rr(j, w, 0x85, dst, src);
		} else {
			emit_rex(j, w, 0, dst, false);
			emit1(j, 0xf7);
			emit_modrm_rr(j, 0, dst);
			emit4(j, (uint32_t)insn->imm);
		}
	} else if (x) {
		emit_rr(j, w, 0x39, dst, src); /* cmp dst, src */
	} else {
		emit_alu_imm(j, w, 7, dst, insn->imm);
	}
	emit_jump(j, cc, target);
	return 0;
}

static int find_func(const struct xbpf_exec_prog *prog, int64_t insn_idx)
{
	for (uint32_t f = 0; f < prog->func_cnt; f++)
		if (prog->func_start[f] == insn_idx)
			return (int)f;
	return -1;
}

static int emit_call(struct x64 *j, const struct xbpf_insn *insn, uint32_t idx)
{
	struct xbpf_jit_ctx *ctx = j->ctx;

	if (xbpf_insn_is_pseudo_call(insn)) {
		int f = find_func(ctx->prog, (int64_t)idx + insn->imm + 1);
		int64_t rel;

		if (f < 0)
			return -ENOTSUP;
		/* Until the final pass func_off[] of later functions may be stale. */
		rel = (int64_t)ctx->func_off[f] - (int64_t)(ctx->pos + 5);
		emit1(j, 0xe8);
		emit4(j, (uint32_t)(int32_t)rel);
		return 0;
	}
	if (xbpf_insn_is_helper_call(insn)) {
		xbpf_helper_fn fn = xbpf_helper_impl(insn->imm);

		if (!fn)
			return -ENOTSUP;
		/* R1-R5 are rdi, rsi, rdx, rcx, r8 already: just call. */
		emit_mov_imm64(j, TMP, (uint64_t)(uintptr_t)fn);
		emit_rex(j, false, 0, TMP, false);
		emit1(j, 0xff);
		emit_modrm_rr(j, 2, TMP); /* call *r11 */
		return 0;
	}
	return -ENOTSUP; /* kfuncs */
}

/* ---- translate ---------------------------------------------------------- */

static int translate(struct x64 *j, uint32_t func_idx, uint32_t start, uint32_t end)
{
	struct xbpf_jit_ctx *ctx = j->ctx;
	const struct xbpf_insn *insns = ctx->prog->insns;
	uint32_t i;
	int err = 0;

	for (i = start; i < end && !err; i++) {
		const struct xbpf_insn *insn = &insns[i];
		uint8_t cls = XBPF_CLASS(insn->code);

		ctx->insn_off[i] = (uint32_t)ctx->pos;
		if (insn->dst_reg > XBPF_REG_AX || insn->src_reg > XBPF_REG_AX)
			return -ENOTSUP;
		switch (cls) {
		case XBPF_ALU:
		case XBPF_ALU64:
			err = emit_alu(j, insn);
			break;
		case XBPF_LD:
			if (insn->code != (XBPF_LD | XBPF_DW | XBPF_IMM) || i + 1 >= end)
				return -ENOTSUP; /* legacy ld_abs/ld_ind: interpreter */
			switch (insn->src_reg) {
			case 0:
			case XBPF_PSEUDO_MAP_FD:
			case XBPF_PSEUDO_MAP_VALUE:
			case XBPF_PSEUDO_MAP_IDX:
			case XBPF_PSEUDO_MAP_IDX_VALUE:
				emit_mov_imm64(j, reg_map[insn->dst_reg],
					       (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32);
				break;
			case XBPF_PSEUDO_FUNC: {
				/* Callback address: known once the image is placed, so fixed size. */
				int f = find_func(ctx->prog, (int64_t)i + insn->imm + 1);
				uint64_t addr;

				if (f < 0)
					return -ENOTSUP;
				addr = ctx->image ? (uint64_t)(uintptr_t)(ctx->image + ctx->func_off[f]) : 0;
				emit_rex(j, true, 0, reg_map[insn->dst_reg], false);
				emit1(j, 0xb8 | (reg_map[insn->dst_reg] & 7));
				emit8(j, addr);
				break;
			}
			default:
				return -ENOTSUP;
			}
			ctx->insn_off[++i] = (uint32_t)ctx->pos;
			break;
		case XBPF_LDX:
			if (XBPF_MODE(insn->code) != XBPF_MEM && XBPF_MODE(insn->code) != XBPF_MEMSX)
				return -ENOTSUP;
			err = emit_ldx(j, insn);
			break;
		case XBPF_ST:
			if (XBPF_MODE(insn->code) != XBPF_MEM)
				return -ENOTSUP;
			emit_st_imm(j, XBPF_SIZE(insn->code), reg_map[insn->dst_reg], insn->off, insn->imm);
			break;
		case XBPF_STX:
			if (XBPF_MODE(insn->code) == XBPF_ATOMIC) {
				err = emit_atomic(j, insn);
				break;
			}
			if (XBPF_MODE(insn->code) != XBPF_MEM)
				return -ENOTSUP;
			emit_stx_sized(j, XBPF_SIZE(insn->code), reg_map[insn->dst_reg], insn->off,
				       reg_map[insn->src_reg]);
			break;
		case XBPF_JMP:
		case XBPF_JMP32: {
			uint8_t op = XBPF_OP(insn->code);
			int64_t t;

			if (op == XBPF_EXIT) {
				if (cls != XBPF_JMP)
					return -ENOTSUP;
				emit_epilogue(j);
				break;
			}
			if (op == XBPF_CALL) {
				if (cls != XBPF_JMP)
					return -ENOTSUP;
				err = emit_call(j, insn, i);
				break;
			}
			t = (int64_t)i + 1 + (insn->code == (XBPF_JMP32 | XBPF_JA) ? insn->imm : insn->off);
			if (t < start || t >= end)
				return -ENOTSUP; /* checked by the driver already */
			if (op == XBPF_JA) {
				if (t != i + 1)
					emit_jump(j, CC_ALWAYS, ctx->insn_off[t]);
				break;
			}
			err = emit_cond_jump(j, insn, ctx->insn_off[t]);
			break;
		}
		default:
			return -ENOTSUP;
		}
	}
	(void)func_idx;
	return err ? err : j->err;
}

static int x64_emit(struct xbpf_jit_ctx *ctx)
{
	const struct xbpf_exec_prog *prog = ctx->prog;
	struct x64 j = { .ctx = ctx };
	uint32_t f;
	int err;

	for (f = 0; f < prog->func_cnt; f++) {
		uint32_t start = prog->func_start[f];
		uint32_t end = f + 1 < prog->func_cnt ? prog->func_start[f + 1] : prog->insn_cnt;
		/* Unverified programs may touch their whole stack. */
		uint32_t depth = prog->verified ? prog->stack_depth[f] : XBPF_STACK_SIZE;

		if (depth > XBPF_STACK_SIZE)
			return -ENOTSUP;
		ctx->func_off[f] = (uint32_t)ctx->pos;
		emit_prologue(&j, (depth + 15) & ~15u);
		err = translate(&j, f, start, end);
		if (err)
			return err;
	}
	ctx->func_off[prog->func_cnt] = (uint32_t)ctx->pos;
	ctx->insn_off[prog->insn_cnt] = (uint32_t)ctx->pos;
	return j.err;
}

static const struct xbpf_jit_arch x86_64_arch = {
	.name = "x86_64",
	.emit = x64_emit,
};

const struct xbpf_jit_arch *const __xbpf_jit_host_arch = &x86_64_arch;
