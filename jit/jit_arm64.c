/* SPDX-License-Identifier: MIT */
/*
 * jit_arm64.c - the arm64 (A64) back end of the JIT.
 *
 * Every function of the program becomes one AAPCS64 function: arguments in
 * x0-x4, result in x0, x19-x28, x29 and x30 preserved.  So function 0 is the C
 * entry (R1, R2) -> R0, a bpf-to-bpf call is a plain BL and a helper call a
 * BLR to the helper's C function.
 *
 * Register mapping (as Linux's arm64 JIT):
 *   R0 = x7, R1-R5 = x0-x4 (argument registers, clobbered by calls),
 *   R6-R9 = x19-x22 (callee-saved), R10 = x25 (frame pointer of this
 *   function's BPF stack), AX = x9 (constant blinding), scratch x10-x13.
 *
 * Frame of each function, from high to low addresses:
 *   x29, x30 | x19, x20 | x21, x22 | x25, x26 | BPF stack (R10 points above it)
 * where a pair is pushed only if the function uses its BPF registers.
 *
 * Instructions are 4 bytes; the only size that depends on offsets is a
 * conditional branch: B.cond reaches +-1 MiB, farther targets take the
 * inverted B.cond over a B (+-128 MiB).  A branch once emitted long stays
 * long in later passes, so sizes only grow and the passes converge (the
 * driver stops when a pass reproduces every offset).
 *
 * Whatever the back end cannot translate (kfuncs, legacy packet loads in
 * multi-function programs, encodings no verifier accepts) yields -ENOTSUP: the VM then runs
 * the program in the interpreter, which reports faults at run time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine_impl.h"

/* ---- registers --------------------------------------------------------- */

enum {
	A64_X0 = 0,
	A64_X7 = 7,
	A64_X9 = 9,
	A64_TMP1 = 10, /* address / immediate operand */
	A64_TMP2 = 11, /* second immediate, loaded value */
	A64_TMP3 = 12, /* atomics: new value */
	A64_TMP4 = 13, /* atomics: store-exclusive status */
	A64_X19 = 19,
	A64_X20 = 20,
	A64_X21 = 21,
	A64_X22 = 22,
	A64_X25 = 25,
	A64_X26 = 26,
	A64_FP = 29,
	A64_LR = 30,
	A64_SP = 31, /* as base register / in add-immediate */
	A64_ZR = 31, /* as data register */
};

#define NR_BPF_REGS (XBPF_REG_AX + 1)

static const uint8_t bpf2a64[NR_BPF_REGS] = {
	[0] = A64_X7,  [1] = 0,	       [2] = 1,	      [3] = 2,
	[4] = 3,       [5] = 4,	       [6] = A64_X19, [7] = A64_X20,
	[8] = A64_X21, [9] = A64_X22, [10] = A64_X25, [XBPF_REG_AX] = A64_X9,
};

/* Condition codes. */
enum {
	A64_COND_EQ = 0x0,
	A64_COND_NE = 0x1,
	A64_COND_HS = 0x2,
	A64_COND_LO = 0x3,
	A64_COND_HI = 0x8,
	A64_COND_LS = 0x9,
	A64_COND_GE = 0xa,
	A64_COND_LT = 0xb,
	A64_COND_GT = 0xc,
	A64_COND_LE = 0xd,
};


/* B.cond: signed 19-bit word offset; B/BL: signed 26-bit word offset. */
#define BCOND_RANGE (1L << 20)
#define B_RANGE (1L << 27)

/* ---- encodings (ARM DDI 0487, A64 base instructions) ------------------- */

static inline uint32_t sf(bool is64)
{
	return is64 ? 0x80000000u : 0;
}

static inline uint32_t a64_movw(uint32_t opc, bool is64, int rd, uint16_t imm16, int shift)
{
	/* opc: 0 MOVN, 2 MOVZ, 3 MOVK */
	return sf(is64) | opc << 29 | 0x12800000u | (uint32_t)(shift / 16) << 21 | (uint32_t)imm16 << 5 | rd;
}

/* Data-processing (shifted register, LSL #0): ADD, SUB, AND, ORR, EOR, ANDS, SUBS. */
static inline uint32_t a64_dp_reg(uint32_t base, bool is64, int rd, int rn, int rm)
{
	return sf(is64) | base | (uint32_t)rm << 16 | (uint32_t)rn << 5 | rd;
}

#define A64_ADD_R 0x0b000000u
#define A64_ADDS_R 0x2b000000u
#define A64_SUB_R 0x4b000000u
#define A64_SUBS_R 0x6b000000u
#define A64_AND_R 0x0a000000u
#define A64_ORR_R 0x2a000000u
#define A64_EOR_R 0x4a000000u
#define A64_ANDS_R 0x6a000000u

/* Add/subtract immediate: imm12, optionally shifted left by 12. */
static inline uint32_t a64_addsub_imm(uint32_t base, bool is64, int rd, int rn, uint32_t imm12, bool lsl12)
{
	return sf(is64) | base | (lsl12 ? 1u << 22 : 0) | (imm12 & 0xfff) << 10 | (uint32_t)rn << 5 | rd;
}

#define A64_ADD_I 0x11000000u
#define A64_ADDS_I 0x31000000u
#define A64_SUB_I 0x51000000u
#define A64_SUBS_I 0x71000000u

/* Data-processing (2 source): UDIV, SDIV, LSLV, LSRV, ASRV. */
static inline uint32_t a64_dp2(uint32_t opcode, bool is64, int rd, int rn, int rm)
{
	return sf(is64) | 0x1ac00000u | (uint32_t)rm << 16 | opcode << 10 | (uint32_t)rn << 5 | rd;
}

#define A64_UDIV 0x02
#define A64_SDIV 0x03
#define A64_LSLV 0x08
#define A64_LSRV 0x09
#define A64_ASRV 0x0a

/* MADD / MSUB: rd = ra +- rn * rm. */
static inline uint32_t a64_madd(bool sub, bool is64, int rd, int rn, int rm, int ra)
{
	return sf(is64) | 0x1b000000u | (uint32_t)rm << 16 | (sub ? 1u << 15 : 0) | (uint32_t)ra << 10 |
	       (uint32_t)rn << 5 | rd;
}

/* Bitfield move: UBFM (opc 2) and SBFM (opc 0); N equals sf. */
static inline uint32_t a64_bfm(uint32_t opc, bool is64, int rd, int rn, uint32_t immr, uint32_t imms)
{
	return sf(is64) | (is64 ? 1u << 22 : 0) | opc << 29 | 0x13000000u | immr << 16 | imms << 10 |
	       (uint32_t)rn << 5 | rd;
}

#define A64_SBFM 0
#define A64_UBFM 2

/* REV16 (opc 1), REV (32-bit: opc 2, 64-bit: opc 3). */
static inline uint32_t a64_rev(uint32_t opc, bool is64, int rd, int rn)
{
	return sf(is64) | 0x5ac00000u | opc << 10 | (uint32_t)rn << 5 | rd;
}

/*
 * Logical (immediate): AND/ORR/EOR/ANDS take a "bitmask immediate", a run of
 * ones rotated within an element of 2, 4, ..., 64 bits that repeats across
 * the register.  Returns false for values that are no such pattern.
 */
static bool a64_bitmask_imm(uint64_t val, bool is64, uint32_t *ret_field)
{
	uint32_t esize = 64, ones, rot;
	uint64_t emask, elem;

	if (!is64)
		val = (val & 0xffffffffu) | val << 32;
	if (val == 0 || val == ~0ull)
		return false;
	/* Smallest element size whose pattern repeats over the whole value. */
	while (esize > 2) {
		uint32_t half = esize / 2;
		uint64_t m = (1ull << half) - 1;

		if ((val & m) != ((val >> half) & m))
			break;
		esize = half;
	}
	emask = esize == 64 ? ~0ull : (1ull << esize) - 1;
	elem = val & emask;
	ones = (uint32_t)__builtin_popcountll(elem);
	/* Find the right-rotation that turns 0..01..1 into elem. */
	for (rot = 0; rot < esize; rot++) {
		uint64_t run = ones == 64 ? ~0ull : (1ull << ones) - 1;
		uint64_t rotated = rot ? ((run >> rot) | (run << (esize - rot))) & emask : run;

		if (rotated == elem)
			break;
	}
	if (rot == esize)
		return false; /* the ones are not one contiguous (circular) run */
	/* N:imms encodes the element size and ones - 1; immr the rotation. */
	*ret_field = (esize == 64 ? 1u << 12 : 0) | rot << 6 |
		     ((~(esize * 2 - 1) & 0x3f) | (ones - 1));
	return true;
}

static inline uint32_t a64_logic_imm(uint32_t opc, bool is64, int rd, int rn, uint32_t field)
{
	/* opc: 0 AND, 1 ORR, 2 EOR, 3 ANDS */
	return sf(is64) | opc << 29 | 0x12000000u | field << 10 | (uint32_t)rn << 5 | rd;
}

/*
 * Loads and stores.  size: 0 byte, 1 half, 2 word, 3 double; opc: 0 store,
 * 1 load (zero-extending), 2 load sign-extending to 64 bits.
 */
static inline uint32_t a64_ldst_uimm(uint32_t size, uint32_t opc, int rt, int rn, uint32_t imm12)
{
	return size << 30 | 0x39000000u | opc << 22 | imm12 << 10 | (uint32_t)rn << 5 | rt;
}

static inline uint32_t a64_ldst_simm9(uint32_t size, uint32_t opc, int rt, int rn, int32_t imm9)
{
	return size << 30 | 0x38000000u | opc << 22 | ((uint32_t)imm9 & 0x1ff) << 12 | (uint32_t)rn << 5 | rt;
}

static inline uint32_t a64_ldst_reg(uint32_t size, uint32_t opc, int rt, int rn, int rm)
{
	/* option LSL (UXTX), no scaling */
	return size << 30 | 0x38206800u | opc << 22 | (uint32_t)rm << 16 | (uint32_t)rn << 5 | rt;
}

/* Exclusives: LDXR, STXR/STLXR (status in rs). */
static inline uint32_t a64_ldxr(bool is64, int rt, int rn)
{
	return (is64 ? 0xc85f7c00u : 0x885f7c00u) | (uint32_t)rn << 5 | rt;
}

static inline uint32_t a64_stlxr(bool is64, int rs, int rt, int rn)
{
	return (is64 ? 0xc800fc00u : 0x8800fc00u) | (uint32_t)rs << 16 | (uint32_t)rn << 5 | rt;
}

static inline uint32_t a64_stxr(bool is64, int rs, int rt, int rn)
{
	return (is64 ? 0xc8007c00u : 0x88007c00u) | (uint32_t)rs << 16 | (uint32_t)rn << 5 | rt;
}

#define A64_DMB_ISH 0xd5033bbfu
#define A64_RET 0xd65f03c0u

static inline uint32_t a64_blr(int rn)
{
	return 0xd63f0000u | (uint32_t)rn << 5;
}

/* Branches: offsets in bytes, relative to the branch itself. */
static inline uint32_t a64_b(bool link, int64_t off)
{
	return (link ? 0x94000000u : 0x14000000u) | ((uint32_t)(off >> 2) & 0x3ffffff);
}

static inline uint32_t a64_bcond(int cond, int64_t off)
{
	return 0x54000000u | ((uint32_t)(off >> 2) & 0x7ffff) << 5 | cond;
}

static inline uint32_t a64_cbz(bool nz, bool is64, int rt, int64_t off)
{
	return sf(is64) | (nz ? 0x35000000u : 0x34000000u) | ((uint32_t)(off >> 2) & 0x7ffff) << 5 | rt;
}

/* STP pre-index / LDP post-index of two X registers on SP. */
static inline uint32_t a64_push(int rt, int rt2)
{
	return 0xa9800000u | (uint32_t)(-2 & 0x7f) << 15 | (uint32_t)rt2 << 10 | (uint32_t)A64_SP << 5 | rt;
}

static inline uint32_t a64_pop(int rt, int rt2)
{
	return 0xa8c00000u | (uint32_t)(2 & 0x7f) << 15 | (uint32_t)rt2 << 10 | (uint32_t)A64_SP << 5 | rt;
}

/* ---- emission ---------------------------------------------------------- */

static void emit(struct xbpf_jit_ctx *ctx, uint32_t insn)
{
	if (ctx->image) {
		if (ctx->pos + 4 > ctx->image_cap) {
			ctx->err = -ENOSPC;
			return;
		}
		/* A64 instructions are little-endian words. */
		ctx->image[ctx->pos] = insn & 0xff;
		ctx->image[ctx->pos + 1] = (insn >> 8) & 0xff;
		ctx->image[ctx->pos + 2] = (insn >> 16) & 0xff;
		ctx->image[ctx->pos + 3] = insn >> 24;
	}
	ctx->pos += 4;
}

/* rd = val with as few MOVZ/MOVN/MOVK as the value allows. */
static void emit_mov_imm(struct xbpf_jit_ctx *ctx, bool is64, int rd, uint64_t val)
{
	int chunks = is64 ? 4 : 2;
	int zeros = 0, ones = 0;
	bool first = true;
	uint16_t skip;
	uint32_t opc;

	if (!is64)
		val &= 0xffffffffu;
	for (int i = 0; i < chunks; i++) {
		uint16_t c = val >> (16 * i);

		zeros += c == 0;
		ones += c == 0xffff;
	}
	/* MOVN starts from all ones: better when more chunks are 0xffff. */
	if (ones > zeros) {
		skip = 0xffff;
		opc = 0;
	} else {
		skip = 0;
		opc = 2;
	}
	for (int i = 0; i < chunks; i++) {
		uint16_t c = val >> (16 * i);

		if (c == skip)
			continue;
		if (first) {
			emit(ctx, a64_movw(opc, is64, rd, opc == 0 ? (uint16_t)~c : c, 16 * i));
			first = false;
		} else {
			emit(ctx, a64_movw(3, is64, rd, c, 16 * i));
		}
	}
	if (first) /* every chunk equals skip: 0 or all ones */
		emit(ctx, a64_movw(opc, is64, rd, 0, 0));
}

/* rd = val in exactly four instructions (the value is an address known late). */
static void emit_mov_addr(struct xbpf_jit_ctx *ctx, int rd, uint64_t val)
{
	emit(ctx, a64_movw(2, true, rd, val & 0xffff, 0));
	for (int shift = 16; shift < 64; shift += 16)
		emit(ctx, a64_movw(3, true, rd, (val >> shift) & 0xffff, shift));
}

static inline void emit_mov_reg(struct xbpf_jit_ctx *ctx, bool is64, int rd, int rm)
{
	emit(ctx, a64_dp_reg(A64_ORR_R, is64, rd, A64_ZR, rm));
}

/* rd = rn + imm (not SP); uses tmp when the immediate does not fit. */
static void emit_add_imm(struct xbpf_jit_ctx *ctx, bool is64, int rd, int rn, int64_t imm, int tmp)
{
	uint64_t mag = imm < 0 ? -(uint64_t)imm : (uint64_t)imm;
	uint32_t base = imm < 0 ? A64_SUB_I : A64_ADD_I;

	if (mag < 4096) {
		emit(ctx, a64_addsub_imm(base, is64, rd, rn, mag, false));
	} else if ((mag & 0xfff) == 0 && mag < (1u << 24)) {
		emit(ctx, a64_addsub_imm(base, is64, rd, rn, mag >> 12, true));
	} else {
		emit_mov_imm(ctx, is64, tmp, (uint64_t)imm);
		emit(ctx, a64_dp_reg(A64_ADD_R, is64, rd, rn, tmp));
	}
}

/* ---- prologue / epilogue ----------------------------------------------- */

/* Callee-saved register pairs a function may need, pushed in this order. */
static const uint8_t saved_pairs[][2] = {
	{ A64_X19, A64_X20 }, /* R6, R7 */
	{ A64_X21, A64_X22 }, /* R8, R9 */
	{ A64_X25, A64_X26 }, /* R10 */
};
#define NR_SAVED_PAIRS (sizeof(saved_pairs) / sizeof(saved_pairs[0]))

/*
 * Bit p: the function pushes saved_pairs[p], because it names their BPF
 * registers; small noinline functions (hashes, parsers) then skip most of
 * the pushes and pops.  Deterministic per function, so the epilogue has a
 * known size for exits to find it.
 */
static uint32_t saved_mask(const struct xbpf_jit_func *fn)
{
	uint32_t used = fn->regs_used;

	return (used & (3u << 6) ? 1u : 0) | (used & (3u << 8) ? 2u : 0) |
	       (used & (1u << XBPF_REG_FP) ? 4u : 0);
}

static uint32_t epilogue_bytes(const struct xbpf_jit_func *fn)
{
	return 4 * (4 + (uint32_t)__builtin_popcount(saved_mask(fn)));
}

/* The previous pass's offset of fn's epilogue (it ends the function): where exits go. */
static uint32_t old_epilogue(const struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn)
{
	return ctx->prev_func_off[fn->idx + 1] - epilogue_bytes(fn);
}

static int prologue(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn)
{
	uint32_t save = saved_mask(fn);

	emit(ctx, a64_push(A64_FP, A64_LR));
	emit(ctx, a64_addsub_imm(A64_ADD_I, true, A64_FP, A64_SP, 0, false));
	for (uint32_t p = 0; p < NR_SAVED_PAIRS; p++)
		if (save & 1u << p)
			emit(ctx, a64_push(saved_pairs[p][0], saved_pairs[p][1]));
	if (!(save & 4))
		return 0;
	/* R10 = top of this function's BPF stack. */
	emit(ctx, a64_addsub_imm(A64_ADD_I, true, A64_X25, A64_SP, 0, false));
	/* SUB (immediate) is the form that may name SP; stack < 16 MiB. */
	if (fn->stack >> 12)
		emit(ctx, a64_addsub_imm(A64_SUB_I, true, A64_SP, A64_SP, fn->stack >> 12, true));
	if (fn->stack & 0xfff)
		emit(ctx, a64_addsub_imm(A64_SUB_I, true, A64_SP, A64_SP, fn->stack & 0xfff, false));
	return 0;
}

static int epilogue(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn)
{
	uint32_t save = saved_mask(fn);
	uint32_t pushed = 16 * (uint32_t)__builtin_popcount(save);

	/* SP from x29, not from R10: a program cannot unbalance the stack. */
	emit(ctx, a64_addsub_imm(A64_SUB_I, true, A64_SP, A64_FP, pushed, false));
	for (uint32_t p = NR_SAVED_PAIRS; p-- > 0;)
		if (save & 1u << p)
			emit(ctx, a64_pop(saved_pairs[p][0], saved_pairs[p][1]));
	emit(ctx, a64_pop(A64_FP, A64_LR));
	emit_mov_reg(ctx, true, A64_X0, A64_X7);
	emit(ctx, A64_RET);
	return 0;
}

/* ---- instruction translation ------------------------------------------- */


static int64_t rel(const struct xbpf_jit_ctx *ctx, uint32_t target)
{
	return (int64_t)target - (int64_t)ctx->pos;
}

/* B to a byte offset; out of B's range only when the image exceeds 128 MiB. */
static void emit_b_to(struct xbpf_jit_ctx *ctx, uint32_t target)
{
	int64_t off = rel(ctx, target);

	if (ctx->image && (off >= B_RANGE || off < -B_RANGE))
		ctx->err = -E2BIG;
	emit(ctx, a64_b(false, off));
}

/* B.cond to insn `target`, long form if out of reach or long before. */
static void emit_bcond_to(struct xbpf_jit_ctx *ctx, int cond, uint32_t target, bool was_long)
{
	int64_t off = rel(ctx, target);

	if (!was_long && off < BCOND_RANGE && off >= -BCOND_RANGE) {
		emit(ctx, a64_bcond(cond, off));
		return;
	}
	/* Inverted condition skips the B that follows. */
	emit(ctx, a64_bcond(cond ^ 1, 8));
	emit_b_to(ctx, target);
}

static int jmp_cond(uint8_t op)
{
	switch (op) {
	case XBPF_JEQ: return A64_COND_EQ;
	case XBPF_JNE: return A64_COND_NE;
	case XBPF_JSET: return A64_COND_NE;
	case XBPF_JGT: return A64_COND_HI;
	case XBPF_JGE: return A64_COND_HS;
	case XBPF_JLT: return A64_COND_LO;
	case XBPF_JLE: return A64_COND_LS;
	case XBPF_JSGT: return A64_COND_GT;
	case XBPF_JSGE: return A64_COND_GE;
	case XBPF_JSLT: return A64_COND_LT;
	case XBPF_JSLE: return A64_COND_LE;
	default: return -1;
	}
}

/* Address operand of a load/store: [rn + off] in one instruction when possible. */
static void emit_ldst(struct xbpf_jit_ctx *ctx, uint32_t size, uint32_t opc, int rt, int rn, int16_t off)
{
	uint32_t scale = 1u << size;

	if (off >= 0 && off % scale == 0 && off / scale < 4096) {
		emit(ctx, a64_ldst_uimm(size, opc, rt, rn, off / scale));
	} else if (off >= -256 && off < 256) {
		emit(ctx, a64_ldst_simm9(size, opc, rt, rn, off));
	} else {
		emit_mov_imm(ctx, true, A64_TMP1, (uint64_t)(int64_t)off);
		emit(ctx, a64_ldst_reg(size, opc, rt, rn, A64_TMP1));
	}
}

static uint32_t ldst_size(uint8_t code)
{
	switch (XBPF_SIZE(code)) {
	case XBPF_B: return 0;
	case XBPF_H: return 1;
	case XBPF_W: return 2;
	default: return 3;
	}
}

static int emit_alu(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, bool is64)
{
	int dst = bpf2a64[insn->dst_reg];
	int src = bpf2a64[insn->src_reg];
	uint8_t op = XBPF_OP(insn->code);
	bool is_k = XBPF_SRC(insn->code) == XBPF_K;
	int32_t imm = insn->imm;
	int shmask = is64 ? 63 : 31;

	/* Encodings the ISA reserves: off only selects sdiv/smod and movsx. */
	if (insn->off && op != XBPF_DIV && op != XBPF_MOD && !(op == XBPF_MOV && !is_k))
		return -ENOTSUP;
	if ((op == XBPF_NEG && !is_k) || (op == XBPF_END && is64 && !is_k))
		return -ENOTSUP;

	/* Register-operand ops with an immediate go through TMP2. */
	if (is_k) {
		switch (op) {
		case XBPF_SUB:
		case XBPF_ADD:
			emit_add_imm(ctx, is64, dst, dst, op == XBPF_ADD ? (int64_t)imm : -(int64_t)imm, A64_TMP2);
			return 0;
		case XBPF_OR:
		case XBPF_AND:
		case XBPF_XOR: {
			uint32_t field;

			if (a64_bitmask_imm((uint64_t)(int64_t)imm, is64, &field)) {
				uint32_t opc = op == XBPF_AND ? 0 : op == XBPF_OR ? 1 : 2;

				emit(ctx, a64_logic_imm(opc, is64, dst, dst, field));
				return 0;
			}
		}
			/* fall through */
		case XBPF_MUL:
		case XBPF_DIV:
		case XBPF_MOD:
			emit_mov_imm(ctx, is64, A64_TMP2, (uint64_t)(int64_t)imm);
			src = A64_TMP2;
			break;
		default:
			break;
		}
	}

	switch (op) {
	case XBPF_ADD:
		emit(ctx, a64_dp_reg(A64_ADD_R, is64, dst, dst, src));
		break;
	case XBPF_SUB:
		emit(ctx, a64_dp_reg(A64_SUB_R, is64, dst, dst, src));
		break;
	case XBPF_MUL:
		emit(ctx, a64_madd(false, is64, dst, dst, src, A64_ZR));
		break;
	case XBPF_OR:
		emit(ctx, a64_dp_reg(A64_ORR_R, is64, dst, dst, src));
		break;
	case XBPF_AND:
		emit(ctx, a64_dp_reg(A64_AND_R, is64, dst, dst, src));
		break;
	case XBPF_XOR:
		emit(ctx, a64_dp_reg(A64_EOR_R, is64, dst, dst, src));
		break;
	case XBPF_DIV:
	case XBPF_MOD: {
		/* A64 division by zero yields 0; then MSUB leaves dst as it was. */
		uint32_t div = insn->off == 1 ? A64_SDIV : A64_UDIV;

		if (insn->off != 0 && insn->off != 1)
			return -ENOTSUP;
		if (op == XBPF_DIV) {
			emit(ctx, a64_dp2(div, is64, dst, dst, src));
		} else {
			emit(ctx, a64_dp2(div, is64, A64_TMP1, dst, src));
			emit(ctx, a64_madd(true, is64, dst, A64_TMP1, src, dst));
		}
		break;
	}
	case XBPF_LSH:
	case XBPF_RSH:
	case XBPF_ARSH:
		if (is_k) {
			uint32_t s = (uint32_t)imm & shmask;

			if (op == XBPF_LSH)
				emit(ctx, a64_bfm(A64_UBFM, is64, dst, dst, (-s) & shmask, shmask - s));
			else
				emit(ctx, a64_bfm(op == XBPF_RSH ? A64_UBFM : A64_SBFM, is64, dst, dst, s, shmask));
		} else {
			uint32_t v = op == XBPF_LSH ? A64_LSLV : op == XBPF_RSH ? A64_LSRV : A64_ASRV;

			/* LSLV & co. take the amount modulo the width, as the ISA masks it. */
			emit(ctx, a64_dp2(v, is64, dst, dst, src));
		}
		break;
	case XBPF_NEG:
		emit(ctx, a64_dp_reg(A64_SUB_R, is64, dst, A64_ZR, dst));
		break;
	case XBPF_MOV:
		if (is_k) {
			emit_mov_imm(ctx, is64, dst, (uint64_t)(int64_t)imm);
		} else if (insn->off == 0) {
			emit_mov_reg(ctx, is64, dst, src);
		} else if (insn->off == 8 || insn->off == 16 || (insn->off == 32 && is64)) {
			/* movsx: SXTB/SXTH/SXTW; the 32-bit forms zero the upper half. */
			emit(ctx, a64_bfm(A64_SBFM, is64, dst, src, 0, insn->off - 1));
		} else {
			return -ENOTSUP;
		}
		break;
	case XBPF_END:
		if (imm != 16 && imm != 32 && imm != 64)
			return -ENOTSUP;
		if (!is64 && XBPF_SRC(insn->code) == XBPF_TO_LE) {
			/* Host order: only truncate. */
			if (imm == 16)
				emit(ctx, a64_bfm(A64_UBFM, false, dst, dst, 0, 15));
			else if (imm == 32)
				emit_mov_reg(ctx, false, dst, dst);
			break;
		}
		/* to_be, or the unconditional v4 bswap. */
		if (imm == 16) {
			emit(ctx, a64_rev(1, false, dst, dst));
			emit(ctx, a64_bfm(A64_UBFM, false, dst, dst, 0, 15));
		} else if (imm == 32) {
			emit(ctx, a64_rev(2, false, dst, dst));
		} else {
			emit(ctx, a64_rev(3, true, dst, dst));
		}
		break;
	default:
		return -ENOTSUP;
	}
	return 0;
}

static int emit_atomic(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn)
{
	bool is64 = XBPF_SIZE(insn->code) == XBPF_DW;
	int dst = bpf2a64[insn->dst_reg];
	int src = bpf2a64[insn->src_reg];
	int r0 = bpf2a64[0];
	int addr = A64_TMP1, old = A64_TMP2, new = A64_TMP3, status = A64_TMP4;
	int32_t op = insn->imm;
	uint32_t alu;

	if (XBPF_SIZE(insn->code) != XBPF_W && !is64)
		return -ENOTSUP;
	if (insn->off)
		emit_add_imm(ctx, true, addr, dst, insn->off, addr);
	else
		addr = dst;

	switch (op & ~XBPF_FETCH) {
	case XBPF_ADD: alu = A64_ADD_R; break;
	case XBPF_AND: alu = A64_AND_R; break;
	case XBPF_OR: alu = A64_ORR_R; break;
	case XBPF_XOR: alu = A64_EOR_R; break;
	default: alu = 0; break;
	}

	/* Load-exclusive / store-exclusive loops: any ARMv8.0 core, no LSE needed. */
	if (alu && !(op & XBPF_FETCH)) {
		emit(ctx, a64_ldxr(is64, old, addr));
		emit(ctx, a64_dp_reg(alu, is64, new, old, src));
		emit(ctx, a64_stxr(is64, status, new, addr));
		emit(ctx, a64_cbz(true, false, status, -12));
	} else if (alu) {
		/* Fetching forms are full barriers, as in the kernel. */
		emit(ctx, a64_ldxr(is64, old, addr));
		emit(ctx, a64_dp_reg(alu, is64, new, old, src));
		emit(ctx, a64_stlxr(is64, status, new, addr));
		emit(ctx, a64_cbz(true, false, status, -12));
		emit(ctx, A64_DMB_ISH);
		emit_mov_reg(ctx, is64, src, old);
	} else if (op == XBPF_XCHG) {
		emit(ctx, a64_ldxr(is64, old, addr));
		emit(ctx, a64_stlxr(is64, status, src, addr));
		emit(ctx, a64_cbz(true, false, status, -8));
		emit(ctx, A64_DMB_ISH);
		emit_mov_reg(ctx, is64, src, old);
	} else if (op == XBPF_CMPXCHG) {
		/* R0 = old value; store src only when old == R0. */
		emit(ctx, a64_ldxr(is64, old, addr));
		emit(ctx, a64_dp_reg(A64_SUBS_R, is64, A64_ZR, old, r0));
		emit(ctx, a64_bcond(A64_COND_NE, 16));
		emit(ctx, a64_stlxr(is64, status, src, addr));
		emit(ctx, a64_cbz(true, false, status, -16));
		emit(ctx, A64_DMB_ISH);
		emit_mov_reg(ctx, is64, r0, old);
	} else {
		return -ENOTSUP;
	}
	return 0;
}

/* Compare for a conditional jump; K operands go through TMP2. */
static void emit_cmp(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, bool is64)
{
	int dst = bpf2a64[insn->dst_reg];
	int src = bpf2a64[insn->src_reg];
	bool is_k = XBPF_SRC(insn->code) == XBPF_K;
	int32_t imm = insn->imm;

	if (XBPF_OP(insn->code) == XBPF_JSET) {
		uint32_t field;

		if (is_k && a64_bitmask_imm((uint64_t)(int64_t)imm, is64, &field)) {
			emit(ctx, a64_logic_imm(3, is64, A64_ZR, dst, field)); /* TST */
			return;
		}
		if (is_k) {
			emit_mov_imm(ctx, is64, A64_TMP2, (uint64_t)(int64_t)imm);
			src = A64_TMP2;
		}
		emit(ctx, a64_dp_reg(A64_ANDS_R, is64, A64_ZR, dst, src));
		return;
	}
	if (!is_k) {
		emit(ctx, a64_dp_reg(A64_SUBS_R, is64, A64_ZR, dst, src));
	} else if (imm >= 0 && imm < 4096) {
		emit(ctx, a64_addsub_imm(A64_SUBS_I, is64, A64_ZR, dst, imm, false));
	} else if (imm < 0 && imm > -4096) {
		/* CMN: dst + -imm sets the same flags as dst - imm. */
		emit(ctx, a64_addsub_imm(A64_ADDS_I, is64, A64_ZR, dst, -imm, false));
	} else {
		emit_mov_imm(ctx, is64, A64_TMP2, (uint64_t)(int64_t)imm);
		emit(ctx, a64_dp_reg(A64_SUBS_R, is64, A64_ZR, dst, A64_TMP2));
	}
}

/* Previous pass's offset of the code following insn `next - 1` of fn. */
static uint32_t old_end_of(const struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn, uint32_t next)
{
	return next < fn->end ? ctx->prev_insn_off[next] : old_epilogue(ctx, fn);
}

/*
 * LD_ABS / LD_IND: R0 = big-endian packet bytes at (imm | src + imm), read
 * through the context in R6.  Out of the packet the whole program ends with
 * R0 = 0, as in the kernel; that is this function's epilogue because the
 * back ends take these loads in single-function programs only (the kernel
 * refuses them next to bpf-to-bpf calls without BTF).
 */
static int emit_ld_pkt(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn, const struct xbpf_insn *insn)
{
	uint32_t size = ldst_size(insn->code);
	int r0 = bpf2a64[0], ctx_reg = bpf2a64[6];
	int data = A64_TMP1, end = A64_TMP2, off = A64_TMP3, last = A64_TMP4;
	uint32_t k = size > 0; /* a byte swap follows the load */

	if (ctx->prog->func_cnt != 1)
		return -ENOTSUP;
	if (XBPF_MODE(insn->code) == XBPF_ABS) {
		if (insn->imm < 0) {
			/* Always outside the packet. */
			emit_mov_imm(ctx, true, r0, 0);
			emit_b_to(ctx, old_epilogue(ctx, fn));
			return 0;
		}
		emit_mov_imm(ctx, true, off, (uint32_t)insn->imm);
	} else {
		/* 32-bit sum, then signed: a negative offset ends the program. */
		emit_add_imm(ctx, false, off, bpf2a64[insn->src_reg], insn->imm, off);
		emit(ctx, a64_bfm(A64_SBFM, true, off, off, 0, 31));
	}
	emit(ctx, a64_ldst_uimm(2, 1, data, ctx_reg, offsetof(struct __sk_buff, data) / 4));
	emit(ctx, a64_ldst_uimm(2, 1, end, ctx_reg, offsetof(struct __sk_buff, data_end) / 4));
	emit(ctx, a64_dp_reg(A64_ADD_R, true, last, data, off));
	emit(ctx, a64_addsub_imm(A64_ADD_I, true, last, last, 1u << size, false));
	emit(ctx, a64_dp_reg(A64_SUBS_R, true, A64_ZR, last, end));
	emit(ctx, a64_bcond(A64_COND_HI, 20 + 4 * k)); /* past data_end */
	emit(ctx, a64_addsub_imm(A64_SUBS_I, true, A64_ZR, off, 0, false));
	emit(ctx, a64_bcond(A64_COND_LT, 12 + 4 * k)); /* negative offset */
	emit(ctx, a64_ldst_reg(size, 1, r0, data, off));
	if (size == 1) {
		emit(ctx, a64_rev(1, false, r0, r0)); /* the load zeroed bits 16-31 */
	} else if (size == 2) {
		emit(ctx, a64_rev(2, false, r0, r0));
	}
	emit(ctx, a64_b(false, 12));
	emit_mov_imm(ctx, true, r0, 0);
	emit_b_to(ctx, old_epilogue(ctx, fn));
	return 0;
}

static int emit_ldimm64(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, uint32_t idx)
{
	int dst = bpf2a64[insn->dst_reg];
	uint64_t val;

	if (insn->src_reg == XBPF_PSEUDO_FUNC) {
		/*
		 * Callback address: known only once the image is placed, so
		 * always four instructions.  Functions follow the C ABI, so a
		 * helper can call it back directly.
		 */
		int f = __xbpf_jit_callee(ctx, idx);

		if (f < 0)
			return -ENOTSUP;
		val = ctx->image ? (uint64_t)(uintptr_t)(ctx->image + ctx->func_off[f]) : 0;
		emit_mov_addr(ctx, dst, val);
		return 0;
	}
	val = (uint32_t)insn->imm | (uint64_t)(uint32_t)insn[1].imm << 32;
	emit_mov_imm(ctx, true, dst, val);
	return 0;
}

static int emit_call(struct xbpf_jit_ctx *ctx, const struct xbpf_insn *insn, uint32_t idx)
{
	if (xbpf_insn_is_pseudo_call(insn)) {
		int f = __xbpf_jit_callee(ctx, idx);
		int64_t off;

		if (f < 0)
			return -ENOTSUP;
		off = rel(ctx, ctx->func_off[f]);
		if (ctx->image && (off >= B_RANGE || off < -B_RANGE))
			return -E2BIG;
		emit(ctx, a64_b(true, off));
	} else if (xbpf_insn_is_helper_call(insn)) {
		xbpf_helper_fn fn = xbpf_helper_impl(insn->imm);

		if (!fn)
			return -ENOTSUP;
		emit_mov_imm(ctx, true, A64_TMP1, (uint64_t)(uintptr_t)fn);
		emit(ctx, a64_blr(A64_TMP1));
	} else {
		return -ENOTSUP; /* kfuncs */
	}
	emit_mov_reg(ctx, true, bpf2a64[0], A64_X0);
	return 0;
}

static int emit_cond_jump(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn,
			  const struct xbpf_insn *insn, uint32_t idx)
{
	int cond = jmp_cond(XBPF_OP(insn->code));
	size_t cmp_start = ctx->pos;
	bool was_long;

	if (cond < 0)
		return -ENOTSUP;
	emit_cmp(ctx, insn, XBPF_CLASS(insn->code) == XBPF_JMP);
	/*
	 * Sticky long form: from the third pass on, sizes never shrink, so
	 * the passes converge.  (The first pass runs on the driver's
	 * estimates, the second corrects them.)
	 */
	was_long = ctx->pass > 1 &&
		   old_end_of(ctx, fn, idx + 1) - ctx->prev_insn_off[idx] >= ctx->pos - cmp_start + 8;
	emit_bcond_to(ctx, cond, ctx->insn_off[xbpf_jump_target(insn, idx)], was_long);
	return 0;
}

/* One instruction, dispatched on its format in the opcode table (isa/). */
static int translate(struct xbpf_jit_ctx *ctx, const struct xbpf_jit_func *fn, uint32_t idx)
{
	const struct xbpf_insn *insn = &ctx->prog->insns[idx];
	const struct xbpf_opdesc *desc = xbpf_opcode_desc(insn->code);
	int dst = bpf2a64[insn->dst_reg & 15], src = bpf2a64[insn->src_reg & 15];

	if (insn->dst_reg >= NR_BPF_REGS || insn->src_reg >= NR_BPF_REGS)
		return -ENOTSUP;
	switch (desc->fmt) {
	case XBPF_FMT_ALU:
	case XBPF_FMT_ALU_UN:
		return emit_alu(ctx, insn, desc->is64);
	case XBPF_FMT_LDIMM64:
		return emit_ldimm64(ctx, insn, idx);
	case XBPF_FMT_LDABS:
		return emit_ld_pkt(ctx, fn, insn);
	case XBPF_FMT_LDX:
		emit_ldst(ctx, ldst_size(insn->code), XBPF_MODE(insn->code) == XBPF_MEMSX ? 2 : 1, dst,
			  src, insn->off);
		return 0;
	case XBPF_FMT_ST:
		emit_mov_imm(ctx, true, A64_TMP2, (uint64_t)(int64_t)insn->imm);
		emit_ldst(ctx, ldst_size(insn->code), 0, A64_TMP2, dst, insn->off);
		return 0;
	case XBPF_FMT_STX:
		emit_ldst(ctx, ldst_size(insn->code), 0, src, dst, insn->off);
		return 0;
	case XBPF_FMT_ATOMIC:
		return emit_atomic(ctx, insn);
	case XBPF_FMT_JA:
		emit_b_to(ctx, ctx->insn_off[xbpf_jump_target(insn, idx)]);
		return 0;
	case XBPF_FMT_JCOND:
		return emit_cond_jump(ctx, fn, insn, idx);
	case XBPF_FMT_CALL:
		return emit_call(ctx, insn, idx);
	case XBPF_FMT_EXIT:
		/* The epilogue follows the last instruction. */
		if (idx + 1 < fn->end)
			emit_b_to(ctx, old_epilogue(ctx, fn));
		return 0;
	case XBPF_FMT_INVALID:
		break;
	}
	return -ENOTSUP;
}

const struct xbpf_jit_arch __xbpf_jit_arm64 = {
	.name = "arm64",
	.max_image = B_RANGE - 1, /* B and BL reach +-128 MiB */
	.prologue = prologue,
	.translate = translate,
	.epilogue = epilogue,
};
