/* SPDX-License-Identifier: MIT */
/*
 * interp.c - the eBPF interpreter.
 *
 * Dispatch is threaded code: one label per opcode and a 256-entry table of
 * label addresses (GCC "labels as values"), so each handler ends in its own
 * indirect jump and the branch predictor learns per-opcode successors.  The
 * tables are expanded from the ISA's opcode list (XBPF_OPCODES in
 * xbpf_isa.h); every opcode outside it lands on L_invalid.
 *
 * Semantics are the kernel's, including the corners a C compiler would
 * leave undefined: division by zero gives 0 and modulo by zero leaves the
 * dividend (zero-extended for 32-bit ops), signed INT_MIN / -1 is INT_MIN and
 * INT_MIN % -1 is 0, shift counts are masked to the operand width, 32-bit
 * ALU results are zero-extended.
 *
 * bpf-to-bpf calls: every call pushes a frame holding the return address,
 * the caller's R6-R9 and R10, and gives the callee its own stack area
 * (stack_depth of its function rounded to 16 bytes, 512 when unknown) just
 * below the caller's, with R10 at the top of it.  R1-R5 pass the arguments
 * untouched and R0 carries the result back.  At most XBPF_MAX_CALL_FRAMES
 * frames exist, the main one included.
 *
 * Programs the verifier has not seen (skip_verify) run through a second
 * table whose jump handlers spend a budget first, so that an endless loop
 * ends; vm.c has already checked their encodings and jump targets.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine_impl.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the interpreter assumes a little-endian host, as both JIT targets are"
#endif

/* Jumps an unverified program may take before it is stopped. */
#define UNVERIFIED_JUMP_BUDGET (1u << 26)


struct call_frame {
	const struct xbpf_insn *ret_pc; /* the call instruction */
	uint64_t callee_saved[4];	/* caller's R6..R9 */
	uint64_t fp;			/* caller's R10 */
	uint8_t *bottom;		/* caller's stack area bottom */
};

/* Stack bytes of the function starting at insn `start` (or containing it). */
uint32_t __xbpf_interp_frame_size(const struct xbpf_exec_prog *prog, uint32_t start)
{
	uint32_t depth;

	if (!prog->stack_depth || !prog->func_start || !prog->func_cnt)
		return XBPF_STACK_SIZE;
	depth = (prog->stack_depth[xbpf_func_of(prog->func_start, prog->func_cnt, start)] + 15u) & ~15u;
	return depth > XBPF_STACK_SIZE ? XBPF_STACK_SIZE : depth;
}

static inline uint64_t div64(uint64_t a, uint64_t b, bool sdiv)
{
	if (!b)
		return 0;
	if (!sdiv)
		return a / b;
	if ((int64_t)b == -1)
		return -a; /* INT64_MIN / -1 wraps to INT64_MIN */
	return (uint64_t)((int64_t)a / (int64_t)b);
}

static inline uint64_t mod64(uint64_t a, uint64_t b, bool smod)
{
	if (!b)
		return a;
	if (!smod)
		return a % b;
	if ((int64_t)b == -1)
		return 0;
	return (uint64_t)((int64_t)a % (int64_t)b);
}

static inline uint32_t div32(uint32_t a, uint32_t b, bool sdiv)
{
	if (!b)
		return 0;
	if (!sdiv)
		return a / b;
	if ((int32_t)b == -1)
		return -a;
	return (uint32_t)((int32_t)a / (int32_t)b);
}

static inline uint32_t mod32(uint32_t a, uint32_t b, bool smod)
{
	if (!b)
		return a;
	if (!smod)
		return a % b;
	if ((int32_t)b == -1)
		return 0;
	return (uint32_t)((int32_t)a % (int32_t)b);
}

/* movsx: off is 8, 16 or 32 (xbpf_insn_check() ruled out the rest). */
static inline uint64_t sext(uint64_t v, int16_t bits)
{
	switch (bits) {
	case 8:
		return (uint64_t)(int64_t)(int8_t)v;
	case 16:
		return (uint64_t)(int64_t)(int16_t)v;
	case 32:
		return (uint64_t)(int64_t)(int32_t)v;
	default:
		return v;
	}
}

/* Unaligned-safe loads and stores; compilers make single moves of them. */
#define LOAD(T, addr)                                                                              \
	({                                                                                         \
		T v_;                                                                              \
		memcpy(&v_, (const void *)(uintptr_t)(addr), sizeof(v_));                         \
		v_;                                                                                \
	})
#define STORE(T, addr, val)                                                                        \
	do {                                                                                       \
		T v_ = (T)(val);                                                                   \
		memcpy((void *)(uintptr_t)(addr), &v_, sizeof(v_));                                \
	} while (0)

/* Legacy packet load: big-endian, bounds-checked; false ends the program with R0 = 0. */
static bool ld_abs(uint64_t skb, int32_t off, int size, uint64_t *ret)
{
	uint64_t data = LOAD(uint32_t, skb + offsetof(struct __sk_buff, data));
	uint64_t data_end = LOAD(uint32_t, skb + offsetof(struct __sk_buff, data_end));

	if (off < 0 || data + (uint64_t)off + size > data_end)
		return false;
	switch (size) {
	case 1:
		*ret = LOAD(uint8_t, data + off);
		break;
	case 2:
		*ret = __builtin_bswap16(LOAD(uint16_t, data + off));
		break;
	default:
		*ret = __builtin_bswap32(LOAD(uint32_t, data + off));
		break;
	}
	return true;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#ifdef __clang__
#pragma GCC diagnostic ignored "-Winitializer-overrides"
#endif

/*
 * Dispatch tables, expanded from the one opcode list (XBPF_OPCODES): the
 * handler of opcode NAME is label L_NAME, so an opcode the list gains and
 * this file lacks does not compile.  The budget table sends the jumps (JA
 * and JCOND formats) through L_budget first.
 */
#define FAST_ENTRY(CODE, NAME, MN, FMT, SIZE, IS64, SRC) [CODE] = &&L_##NAME,
#define BUDGET_ENTRY(CODE, NAME, MN, FMT, SIZE, IS64, SRC) [CODE] = BUDGET_##FMT(NAME),
#define BUDGET_JA(NAME) &&L_budget
#define BUDGET_JCOND(NAME) &&L_budget
#define BUDGET_ALU(NAME) &&L_##NAME
#define BUDGET_ALU_UN(NAME) &&L_##NAME
#define BUDGET_LDIMM64(NAME) &&L_##NAME
#define BUDGET_LDABS(NAME) &&L_##NAME
#define BUDGET_LDX(NAME) &&L_##NAME
#define BUDGET_ST(NAME) &&L_##NAME
#define BUDGET_STX(NAME) &&L_##NAME
#define BUDGET_ATOMIC(NAME) &&L_##NAME
#define BUDGET_CALL(NAME) &&L_##NAME
#define BUDGET_EXIT(NAME) &&L_##NAME

#define DST reg[pc->dst_reg]
#define SRC reg[pc->src_reg]
#define IMM ((uint64_t)(int64_t)pc->imm)
#define IMM32 ((uint32_t)pc->imm)
#define ADDR(base) ((base) + (int64_t)pc->off)

#define DISPATCH() goto *jt[pc->code]
#define NEXT()                                                                                     \
	do {                                                                                       \
		pc++;                                                                              \
		DISPATCH();                                                                        \
	} while (0)
#define FAULT(err)                                                                                 \
	do {                                                                                       \
		*ret_err = (err);                                                                  \
		return 0;                                                                          \
	} while (0)

#define ALU_BIN(NAME, OP)                                                                          \
	L_ALU64_##NAME##_X : DST = DST OP SRC;                                                     \
	NEXT();                                                                                    \
	L_ALU64_##NAME##_K : DST = DST OP IMM;                                                     \
	NEXT();                                                                                    \
	L_ALU32_##NAME##_X : DST = (uint32_t)((uint32_t)DST OP(uint32_t) SRC);                     \
	NEXT();                                                                                    \
	L_ALU32_##NAME##_K : DST = (uint32_t)((uint32_t)DST OP IMM32);                             \
	NEXT();

#define ALU_SHIFT(NAME, OP)                                                                        \
	L_ALU64_##NAME##_X : DST = DST OP(SRC & 63);                                               \
	NEXT();                                                                                    \
	L_ALU64_##NAME##_K : DST = DST OP(IMM & 63);                                               \
	NEXT();                                                                                    \
	L_ALU32_##NAME##_X : DST = (uint32_t)((uint32_t)DST OP(SRC & 31));                         \
	NEXT();                                                                                    \
	L_ALU32_##NAME##_K : DST = (uint32_t)((uint32_t)DST OP(IMM32 & 31));                       \
	NEXT();

#define JCOND(NAME, OP, T64, T32)                                                                  \
	L_JMP64_##NAME##_X : if ((T64)DST OP(T64) SRC) pc += pc->off;                              \
	NEXT();                                                                                    \
	L_JMP64_##NAME##_K : if ((T64)DST OP(T64) IMM) pc += pc->off;                              \
	NEXT();                                                                                    \
	L_JMP32_##NAME##_X : if ((T32)DST OP(T32) SRC) pc += pc->off;                              \
	NEXT();                                                                                    \
	L_JMP32_##NAME##_K : if ((T32)DST OP(T32) IMM) pc += pc->off;                              \
	NEXT();

#define LDX(NAME, T)                                                                               \
	L_LDX_##NAME : DST = LOAD(T, ADDR(SRC));                                                   \
	NEXT();
#define LDXS(NAME, T)                                                                              \
	L_LDX_S##NAME : DST = (uint64_t)(int64_t)LOAD(T, ADDR(SRC));                               \
	NEXT();
#define ST(NAME, T)                                                                                \
	L_ST_##NAME : STORE(T, ADDR(DST), IMM);                                                    \
	NEXT();                                                                                    \
	L_STX_##NAME : STORE(T, ADDR(DST), SRC);                                                   \
	NEXT();

#define ATOMIC(NAME, T)                                                                            \
	L_ATOMIC_##NAME : {                                                                        \
		T *p = (T *)(uintptr_t)ADDR(DST);                                                  \
		T v = (T)SRC;                                                                      \
                                                                                                   \
		switch (pc->imm) {                                                                 \
		case XBPF_ADD:                                                                     \
			__atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                                \
			break;                                                                     \
		case XBPF_AND:                                                                     \
			__atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                                \
			break;                                                                     \
		case XBPF_OR:                                                                      \
			__atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                                 \
			break;                                                                     \
		case XBPF_XOR:                                                                     \
			__atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                                \
			break;                                                                     \
		case XBPF_ADD | XBPF_FETCH:                                                        \
			SRC = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                          \
			break;                                                                     \
		case XBPF_AND | XBPF_FETCH:                                                        \
			SRC = __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                          \
			break;                                                                     \
		case XBPF_OR | XBPF_FETCH:                                                         \
			SRC = __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                           \
			break;                                                                     \
		case XBPF_XOR | XBPF_FETCH:                                                        \
			SRC = __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                          \
			break;                                                                     \
		case XBPF_XCHG:                                                                    \
			SRC = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                         \
			break;                                                                     \
		case XBPF_CMPXCHG: {                                                               \
			T expected = (T)reg[0];                                                    \
                                                                                                   \
			__atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST,      \
						    __ATOMIC_SEQ_CST);                             \
			reg[0] = expected;                                                         \
			break;                                                                     \
		}                                                                                  \
		default:                                                                           \
			FAULT(-EINVAL);                                                            \
		}                                                                                  \
		NEXT();                                                                            \
	}

#define LD_PKT(NAME, SIZE, OFFSET)                                                                 \
	L_##NAME : if (!ld_abs(reg[6], (OFFSET), SIZE, &reg[0]))                                   \
		return 0; /* out of the packet: the whole program ends, as in the kernel */        \
	NEXT();

uint64_t __xbpf_interp_run_err(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2,
			       int *ret_err)
{
	static const void *const jt_fast[256] = {
		[0 ... 255] = &&L_invalid,
		XBPF_OPCODES(FAST_ENTRY)
	};
	static const void *const jt_budget[256] = {
		[0 ... 255] = &&L_invalid,
		XBPF_OPCODES(BUDGET_ENTRY)
	};
	uint8_t stack[XBPF_MAX_CALL_FRAMES * XBPF_STACK_SIZE] __attribute__((aligned(16)));
	struct call_frame frames[XBPF_MAX_CALL_FRAMES];
	const void *const *jt = prog->verified ? jt_fast : jt_budget;
	const struct xbpf_insn *pc = prog->insns;
	uint32_t budget = UNVERIFIED_JUMP_BUDGET;
	uint64_t reg[XBPF_MAX_REG] = { 0 };
	uint8_t *bottom;
	int depth = 0;

	*ret_err = 0;
	if (!prog->insn_cnt)
		FAULT(-EINVAL);
	bottom = stack + sizeof(stack) - __xbpf_interp_frame_size(prog, 0);
	reg[1] = r1;
	reg[2] = r2;
	reg[XBPF_REG_FP] = (uintptr_t)(stack + sizeof(stack));
	DISPATCH();

	ALU_BIN(ADD, +)
	ALU_BIN(SUB, -)
	ALU_BIN(MUL, *)
	ALU_BIN(OR, |)
	ALU_BIN(AND, &)
	ALU_BIN(XOR, ^)
	ALU_SHIFT(LSH, <<)
	ALU_SHIFT(RSH, >>)

L_ALU64_ARSH_X:
	DST = (uint64_t)((int64_t)DST >> (SRC & 63));
	NEXT();
L_ALU64_ARSH_K:
	DST = (uint64_t)((int64_t)DST >> (IMM & 63));
	NEXT();
L_ALU32_ARSH_X:
	DST = (uint32_t)((int32_t)DST >> (SRC & 31));
	NEXT();
L_ALU32_ARSH_K:
	DST = (uint32_t)((int32_t)DST >> (IMM32 & 31));
	NEXT();

L_ALU64_DIV_X:
	DST = div64(DST, SRC, pc->off == 1);
	NEXT();
L_ALU64_DIV_K:
	DST = div64(DST, IMM, pc->off == 1);
	NEXT();
L_ALU32_DIV_X:
	DST = div32(DST, SRC, pc->off == 1);
	NEXT();
L_ALU32_DIV_K:
	DST = div32(DST, IMM32, pc->off == 1);
	NEXT();
L_ALU64_MOD_X:
	DST = mod64(DST, SRC, pc->off == 1);
	NEXT();
L_ALU64_MOD_K:
	DST = mod64(DST, IMM, pc->off == 1);
	NEXT();
L_ALU32_MOD_X:
	DST = mod32(DST, SRC, pc->off == 1);
	NEXT();
L_ALU32_MOD_K:
	DST = mod32(DST, IMM32, pc->off == 1);
	NEXT();

L_ALU64_MOV_X:
	DST = pc->off ? sext(SRC, pc->off) : SRC;
	NEXT();
L_ALU64_MOV_K:
	DST = IMM;
	NEXT();
L_ALU32_MOV_X:
	DST = (uint32_t)(pc->off ? sext(SRC, pc->off) : SRC);
	NEXT();
L_ALU32_MOV_K:
	DST = IMM32;
	NEXT();

L_ALU64_NEG:
	DST = -DST;
	NEXT();
L_ALU32_NEG:
	DST = (uint32_t)-(uint32_t)DST;
	NEXT();

L_ALU32_LE:
	switch (pc->imm) {
	case 16:
		DST = (uint16_t)DST;
		break;
	case 32:
		DST = (uint32_t)DST;
		break;
	case 64:
		break;
	default:
		FAULT(-EINVAL);
	}
	NEXT();
L_ALU32_BE:
L_ALU64_BSWAP:
	switch (pc->imm) {
	case 16:
		DST = __builtin_bswap16((uint16_t)DST);
		break;
	case 32:
		DST = __builtin_bswap32((uint32_t)DST);
		break;
	case 64:
		DST = __builtin_bswap64(DST);
		break;
	default:
		FAULT(-EINVAL);
	}
	NEXT();

L_LD_IMM64:
	DST = (uint32_t)pc[0].imm | ((uint64_t)(uint32_t)pc[1].imm << 32);
	pc += 2;
	DISPATCH();

	LDX(W, uint32_t)
	LDX(H, uint16_t)
	LDX(B, uint8_t)
	LDX(DW, uint64_t)
	LDXS(W, int32_t)
	LDXS(H, int16_t)
	LDXS(B, int8_t)
	ST(W, uint32_t)
	ST(H, uint16_t)
	ST(B, uint8_t)
	ST(DW, uint64_t)
	ATOMIC(W, uint32_t)
	ATOMIC(DW, uint64_t)

	LD_PKT(LD_ABS_W, 4, pc->imm)
	LD_PKT(LD_ABS_H, 2, pc->imm)
	LD_PKT(LD_ABS_B, 1, pc->imm)
	LD_PKT(LD_IND_W, 4, (int32_t)((uint32_t)SRC + IMM32))
	LD_PKT(LD_IND_H, 2, (int32_t)((uint32_t)SRC + IMM32))
	LD_PKT(LD_IND_B, 1, (int32_t)((uint32_t)SRC + IMM32))

L_JMP64_JA:
	pc += pc->off;
	NEXT();
L_JMP32_JA:
	pc += pc->imm;
	NEXT();

	JCOND(JEQ, ==, uint64_t, uint32_t)
	JCOND(JNE, !=, uint64_t, uint32_t)
	JCOND(JGT, >, uint64_t, uint32_t)
	JCOND(JGE, >=, uint64_t, uint32_t)
	JCOND(JLT, <, uint64_t, uint32_t)
	JCOND(JLE, <=, uint64_t, uint32_t)
	JCOND(JSGT, >, int64_t, int32_t)
	JCOND(JSGE, >=, int64_t, int32_t)
	JCOND(JSLT, <, int64_t, int32_t)
	JCOND(JSLE, <=, int64_t, int32_t)

L_JMP64_JSET_X:
	if (DST & SRC)
		pc += pc->off;
	NEXT();
L_JMP64_JSET_K:
	if (DST & IMM)
		pc += pc->off;
	NEXT();
L_JMP32_JSET_X:
	if ((uint32_t)DST & (uint32_t)SRC)
		pc += pc->off;
	NEXT();
L_JMP32_JSET_K:
	if ((uint32_t)DST & IMM32)
		pc += pc->off;
	NEXT();

L_JMP64_CALL:
	if (pc->src_reg == 0) {
		xbpf_helper_fn fn = xbpf_helper_impl(pc->imm);

		if (__builtin_expect(!fn, 0))
			FAULT(-ENOENT);
		reg[0] = fn(reg[1], reg[2], reg[3], reg[4], reg[5]);
		NEXT();
	}
	if (pc->src_reg == XBPF_PSEUDO_CALL) {
		struct call_frame *f;
		uint32_t target;

		if (depth + 1 >= XBPF_MAX_CALL_FRAMES)
			FAULT(-E2BIG);
		target = (uint32_t)(pc - prog->insns) + pc->imm + 1;
		f = &frames[depth++];
		f->ret_pc = pc;
		memcpy(f->callee_saved, &reg[6], sizeof(f->callee_saved));
		f->fp = reg[XBPF_REG_FP];
		f->bottom = bottom;
		reg[XBPF_REG_FP] = (uintptr_t)bottom;
		bottom -= prog->call_frame_size ? prog->call_frame_size[pc - prog->insns]
						: __xbpf_interp_frame_size(prog, target);
		pc = prog->insns + target;
		DISPATCH();
	}
	FAULT(-EINVAL); /* kfuncs exist only in the kernel */

L_JMP64_EXIT:
	if (depth == 0)
		return reg[0];
	{
		const struct call_frame *f = &frames[--depth];

		memcpy(&reg[6], f->callee_saved, sizeof(f->callee_saved));
		reg[XBPF_REG_FP] = f->fp;
		bottom = f->bottom;
		pc = f->ret_pc;
	}
	NEXT();

L_budget:
	if (__builtin_expect(!--budget, 0))
		FAULT(-ELOOP);
	goto *jt_fast[pc->code];

L_invalid:
	FAULT(-EINVAL);
}

#pragma GCC diagnostic pop

uint64_t __xbpf_interp_run(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2)
{
	int err;

	return __xbpf_interp_run_err(prog, r1, r2, &err);
}
