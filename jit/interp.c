/* SPDX-License-Identifier: MIT */
/*
 * interp.c - the eBPF interpreter.
 *
 * Dispatch is threaded code: one label per opcode and a 256-entry table of
 * label addresses (GCC "labels as values"), so each handler ends in its own
 * indirect jump and the branch predictor learns per-opcode successors.  The
 * opcode set is the one of isa/opcodes.c; every opcode outside it lands on
 * L_invalid.
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

/* __sk_buff data / data_end, for the legacy LD_ABS / LD_IND packet loads. */
#define SKB_DATA_OFF 76
#define SKB_DATA_END_OFF 80

struct call_frame {
	const struct xbpf_insn *ret_pc; /* the call instruction */
	uint64_t callee_saved[4];	/* caller's R6..R9 */
	uint64_t fp;			/* caller's R10 */
	uint8_t *bottom;		/* caller's stack area bottom */
};

/* Stack bytes of the function starting at insn `start` (or containing it). */
uint32_t __xbpf_interp_frame_size(const struct xbpf_exec_prog *prog, uint32_t start)
{
	uint32_t lo = 0, hi = prog->func_cnt, depth;

	if (!prog->stack_depth || !prog->func_start || !prog->func_cnt)
		return XBPF_STACK_SIZE;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (prog->func_start[mid] <= start)
			lo = mid;
		else
			hi = mid;
	}
	depth = (prog->stack_depth[lo] + 15u) & ~15u;
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
	uint64_t data = LOAD(uint32_t, skb + SKB_DATA_OFF);
	uint64_t data_end = LOAD(uint32_t, skb + SKB_DATA_END_OFF);

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

/* Table entries: X(opcode, label). */
#define ALU_ENTRIES(X)                                                                             \
	X(0x04, A32K_ADD) X(0x0c, A32X_ADD) X(0x07, A64K_ADD) X(0x0f, A64X_ADD)                    \
	X(0x14, A32K_SUB) X(0x1c, A32X_SUB) X(0x17, A64K_SUB) X(0x1f, A64X_SUB)                    \
	X(0x24, A32K_MUL) X(0x2c, A32X_MUL) X(0x27, A64K_MUL) X(0x2f, A64X_MUL)                    \
	X(0x34, A32K_DIV) X(0x3c, A32X_DIV) X(0x37, A64K_DIV) X(0x3f, A64X_DIV)                    \
	X(0x44, A32K_OR) X(0x4c, A32X_OR) X(0x47, A64K_OR) X(0x4f, A64X_OR)                        \
	X(0x54, A32K_AND) X(0x5c, A32X_AND) X(0x57, A64K_AND) X(0x5f, A64X_AND)                    \
	X(0x64, A32K_LSH) X(0x6c, A32X_LSH) X(0x67, A64K_LSH) X(0x6f, A64X_LSH)                    \
	X(0x74, A32K_RSH) X(0x7c, A32X_RSH) X(0x77, A64K_RSH) X(0x7f, A64X_RSH)                    \
	X(0x84, A32_NEG) X(0x87, A64_NEG)                                                          \
	X(0x94, A32K_MOD) X(0x9c, A32X_MOD) X(0x97, A64K_MOD) X(0x9f, A64X_MOD)                    \
	X(0xa4, A32K_XOR) X(0xac, A32X_XOR) X(0xa7, A64K_XOR) X(0xaf, A64X_XOR)                    \
	X(0xb4, A32K_MOV) X(0xbc, A32X_MOV) X(0xb7, A64K_MOV) X(0xbf, A64X_MOV)                    \
	X(0xc4, A32K_ARSH) X(0xcc, A32X_ARSH) X(0xc7, A64K_ARSH) X(0xcf, A64X_ARSH)                \
	X(0xd4, A32_LE) X(0xdc, A32_BE) X(0xd7, A64_BSWAP)

#define MEM_ENTRIES(X)                                                                             \
	X(0x18, LDDW)                                                                              \
	X(0x20, LDABS_W) X(0x28, LDABS_H) X(0x30, LDABS_B)                                         \
	X(0x40, LDIND_W) X(0x48, LDIND_H) X(0x50, LDIND_B)                                         \
	X(0x61, LDX_W) X(0x69, LDX_H) X(0x71, LDX_B) X(0x79, LDX_DW)                               \
	X(0x81, LDXS_W) X(0x89, LDXS_H) X(0x91, LDXS_B)                                            \
	X(0x62, ST_W) X(0x6a, ST_H) X(0x72, ST_B) X(0x7a, ST_DW)                                   \
	X(0x63, STX_W) X(0x6b, STX_H) X(0x73, STX_B) X(0x7b, STX_DW)                               \
	X(0xc3, ATOMIC_W) X(0xdb, ATOMIC_DW)                                                       \
	X(0x85, CALL) X(0x95, EXIT)

#define JMP_ENTRIES(X)                                                                             \
	X(0x05, JA) X(0x06, GOTOL)                                                                 \
	X(0x15, J64K_JEQ) X(0x1d, J64X_JEQ) X(0x16, J32K_JEQ) X(0x1e, J32X_JEQ)                    \
	X(0x25, J64K_JGT) X(0x2d, J64X_JGT) X(0x26, J32K_JGT) X(0x2e, J32X_JGT)                    \
	X(0x35, J64K_JGE) X(0x3d, J64X_JGE) X(0x36, J32K_JGE) X(0x3e, J32X_JGE)                    \
	X(0x45, J64K_JSET) X(0x4d, J64X_JSET) X(0x46, J32K_JSET) X(0x4e, J32X_JSET)                \
	X(0x55, J64K_JNE) X(0x5d, J64X_JNE) X(0x56, J32K_JNE) X(0x5e, J32X_JNE)                    \
	X(0x65, J64K_JSGT) X(0x6d, J64X_JSGT) X(0x66, J32K_JSGT) X(0x6e, J32X_JSGT)                \
	X(0x75, J64K_JSGE) X(0x7d, J64X_JSGE) X(0x76, J32K_JSGE) X(0x7e, J32X_JSGE)                \
	X(0xa5, J64K_JLT) X(0xad, J64X_JLT) X(0xa6, J32K_JLT) X(0xae, J32X_JLT)                    \
	X(0xb5, J64K_JLE) X(0xbd, J64X_JLE) X(0xb6, J32K_JLE) X(0xbe, J32X_JLE)                    \
	X(0xc5, J64K_JSLT) X(0xcd, J64X_JSLT) X(0xc6, J32K_JSLT) X(0xce, J32X_JSLT)                \
	X(0xd5, J64K_JSLE) X(0xdd, J64X_JSLE) X(0xd6, J32K_JSLE) X(0xde, J32X_JSLE)

#define FAST_ENTRY(code, label) [code] = &&L_##label,
#define BUDGET_ENTRY(code, label) [code] = &&L_budget,

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
	L_A64X_##NAME : DST = DST OP SRC;                                                          \
	NEXT();                                                                                    \
	L_A64K_##NAME : DST = DST OP IMM;                                                          \
	NEXT();                                                                                    \
	L_A32X_##NAME : DST = (uint32_t)((uint32_t)DST OP(uint32_t) SRC);                          \
	NEXT();                                                                                    \
	L_A32K_##NAME : DST = (uint32_t)((uint32_t)DST OP IMM32);                                  \
	NEXT();

#define ALU_SHIFT(NAME, OP)                                                                        \
	L_A64X_##NAME : DST = DST OP(SRC & 63);                                                    \
	NEXT();                                                                                    \
	L_A64K_##NAME : DST = DST OP(IMM & 63);                                                    \
	NEXT();                                                                                    \
	L_A32X_##NAME : DST = (uint32_t)((uint32_t)DST OP(SRC & 31));                              \
	NEXT();                                                                                    \
	L_A32K_##NAME : DST = (uint32_t)((uint32_t)DST OP(IMM32 & 31));                            \
	NEXT();

#define JCOND(NAME, OP, T64, T32)                                                                  \
	L_J64X_##NAME : if ((T64)DST OP(T64) SRC) pc += pc->off;                                   \
	NEXT();                                                                                    \
	L_J64K_##NAME : if ((T64)DST OP(T64) IMM) pc += pc->off;                                   \
	NEXT();                                                                                    \
	L_J32X_##NAME : if ((T32)DST OP(T32) SRC) pc += pc->off;                                   \
	NEXT();                                                                                    \
	L_J32K_##NAME : if ((T32)DST OP(T32) IMM) pc += pc->off;                                   \
	NEXT();

#define LDX(NAME, T)                                                                               \
	L_LDX_##NAME : DST = LOAD(T, ADDR(SRC));                                                   \
	NEXT();
#define LDXS(NAME, T)                                                                              \
	L_LDXS_##NAME : DST = (uint64_t)(int64_t)LOAD(T, ADDR(SRC));                               \
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
		ALU_ENTRIES(FAST_ENTRY) MEM_ENTRIES(FAST_ENTRY) JMP_ENTRIES(FAST_ENTRY)
	};
	static const void *const jt_budget[256] = {
		[0 ... 255] = &&L_invalid,
		ALU_ENTRIES(FAST_ENTRY) MEM_ENTRIES(FAST_ENTRY) JMP_ENTRIES(BUDGET_ENTRY)
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

L_A64X_ARSH:
	DST = (uint64_t)((int64_t)DST >> (SRC & 63));
	NEXT();
L_A64K_ARSH:
	DST = (uint64_t)((int64_t)DST >> (IMM & 63));
	NEXT();
L_A32X_ARSH:
	DST = (uint32_t)((int32_t)DST >> (SRC & 31));
	NEXT();
L_A32K_ARSH:
	DST = (uint32_t)((int32_t)DST >> (IMM32 & 31));
	NEXT();

L_A64X_DIV:
	DST = div64(DST, SRC, pc->off == 1);
	NEXT();
L_A64K_DIV:
	DST = div64(DST, IMM, pc->off == 1);
	NEXT();
L_A32X_DIV:
	DST = div32(DST, SRC, pc->off == 1);
	NEXT();
L_A32K_DIV:
	DST = div32(DST, IMM32, pc->off == 1);
	NEXT();
L_A64X_MOD:
	DST = mod64(DST, SRC, pc->off == 1);
	NEXT();
L_A64K_MOD:
	DST = mod64(DST, IMM, pc->off == 1);
	NEXT();
L_A32X_MOD:
	DST = mod32(DST, SRC, pc->off == 1);
	NEXT();
L_A32K_MOD:
	DST = mod32(DST, IMM32, pc->off == 1);
	NEXT();

L_A64X_MOV:
	DST = pc->off ? sext(SRC, pc->off) : SRC;
	NEXT();
L_A64K_MOV:
	DST = IMM;
	NEXT();
L_A32X_MOV:
	DST = (uint32_t)(pc->off ? sext(SRC, pc->off) : SRC);
	NEXT();
L_A32K_MOV:
	DST = IMM32;
	NEXT();

L_A64_NEG:
	DST = -DST;
	NEXT();
L_A32_NEG:
	DST = (uint32_t)-(uint32_t)DST;
	NEXT();

L_A32_LE:
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
L_A32_BE:
L_A64_BSWAP:
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

L_LDDW:
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

	LD_PKT(LDABS_W, 4, pc->imm)
	LD_PKT(LDABS_H, 2, pc->imm)
	LD_PKT(LDABS_B, 1, pc->imm)
	LD_PKT(LDIND_W, 4, (int32_t)((uint32_t)SRC + IMM32))
	LD_PKT(LDIND_H, 2, (int32_t)((uint32_t)SRC + IMM32))
	LD_PKT(LDIND_B, 1, (int32_t)((uint32_t)SRC + IMM32))

L_JA:
	pc += pc->off;
	NEXT();
L_GOTOL:
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

L_J64X_JSET:
	if (DST & SRC)
		pc += pc->off;
	NEXT();
L_J64K_JSET:
	if (DST & IMM)
		pc += pc->off;
	NEXT();
L_J32X_JSET:
	if ((uint32_t)DST & (uint32_t)SRC)
		pc += pc->off;
	NEXT();
L_J32K_JSET:
	if ((uint32_t)DST & IMM32)
		pc += pc->off;
	NEXT();

L_CALL:
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

L_EXIT:
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
