/* SPDX-License-Identifier: MIT */
/*
 * interp.c - the eBPF interpreter.
 *
 * A program is decoded once (__xbpf_interp_prepare(), at load) into one
 * 16-byte slot per instruction slot: the address of its handler (GCC
 * "labels as values"), the register indices as plain bytes and the
 * immediate, or a pointer the handler needs (a helper's function, an array
 * map's lookup plan, the 64-bit value of an ld_imm64).  Dispatch is direct
 * threaded: each handler ends in an indirect jump through the next slot's
 * handler address, so there is no opcode table to index and the branch
 * predictor learns per-handler successors.  Slots stay one for one with
 * the program's, so jump offsets and call targets are the program's own.
 *
 * What the decoder knows picks a handler of its own: the width of a byte
 * swap, sign extension or not in mov, division by a non-zero constant, a
 * helper's function, the lookup of an array or per-CPU array map whose map
 * is known at its call site (lookup.c; the JIT inlines the same), the
 * frame sizes of a bpf-to-bpf call, and above all the registers: the BPF
 * registers are C locals, which the compiler keeps in machine registers,
 * and the common forms have a handler per register or register pair
 * (REG_FAMILIES, PAIR_FAMILIES below) that names them.  A few pairs of
 * instructions frequent together run as one handler, a superinstruction
 * (FUSED_OPS), in the first slot; the second keeps its own handler, for
 * the jumps that land on it.
 *
 * The handlers are expanded from the ISA's opcode list (XBPF_OPCODES in
 * xbpf_isa.h): opcode NAME has the generic handler L_NAME, so an opcode the
 * list gains and this file lacks does not compile; the specialised
 * handlers come on top.  The generic handlers work on the registers
 * spilled to an array and reload them after.  Every opcode outside the
 * list lands on L_invalid.
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
 * Programs the verifier has not seen (skip_verify) are decoded with jump
 * handlers that spend a budget first (entry B_<name>, falling through into
 * L_<name>), so that an endless loop ends; verified programs pay nothing
 * for it.  vm.c has already checked their encodings and jump targets.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the interpreter assumes a little-endian host, as both JIT targets are"
#endif

/* Jumps an unverified program may take before it is stopped. */
#define UNVERIFIED_JUMP_BUDGET (1u << 26)

/* One decoded instruction slot. */
struct interp_insn {
	const void *op; /* handler */
	union {
		struct {
			uint8_t dst, src;
			/* memory offset; a local call's caller + callee frame bytes (dst: the caller's / 16) */
			int16_t off;
			int32_t imm;
		};
		uint64_t imm64;	   /* second slot of ld_imm64: the value */
		xbpf_helper_fn fn; /* helper call */
		const struct xbpf_lookup_plan *plan;
		const void *(*tail_lookup)(struct xbpf_map *map, uint32_t key);
	};
};

_Static_assert(sizeof(struct interp_insn) == 16, "a decoded slot is two words");

struct xbpf_interp_code {
	const struct xbpf_exec_prog *prog;
	struct interp_insn *insns; /* [insn_cnt] */
	uint32_t main_frame;	   /* stack bytes of function 0 */
};

/*
 * A bpf-to-bpf call's frame.  The running function's stack area is always
 * the frame-size bytes below its R10, so a call needs no record of it.
 */
struct call_frame {
	const struct interp_insn *ret_pc; /* the call instruction */
	uint64_t callee_saved[4];	  /* caller's R6..R9 */
	uint64_t fp;			  /* caller's R10 */
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

/* bpf_map_lookup_elem() of an array map, as the JIT inlines it (jit_rewrite.c). */
static inline uint64_t lookup_array(const struct xbpf_lookup_plan *p, uint64_t key_ptr)
{
	uint32_t key = LOAD(uint32_t, key_ptr);

	return key < p->max_entries ? (uintptr_t)(p->base + (uint64_t)key * p->elem_size) : 0;
}

/*
 * The same for a per-CPU array, as the JIT inlines it: the thread's CPU id
 * is read where the plan says (cpu_tls_off from the thread pointer).  An id
 * out of range (not below the map's CPU count, or negative) is left to the
 * map's own lookup, which clamps it: false then.
 */
static inline bool lookup_percpu_array(const struct xbpf_lookup_plan *p, uint64_t key_ptr, uint64_t *ret)
{
	uint32_t key = LOAD(uint32_t, key_ptr), cpu;

	cpu = (uint32_t)LOAD(int32_t, (uintptr_t)__builtin_thread_pointer() + (intptr_t)p->cpu_tls_off);
	if (__builtin_expect(cpu >= p->nr_cpus, 0))
		return false;
	*ret = key < p->max_entries
		       ? (uintptr_t)(p->base + (uint64_t)key * p->elem_size + (uint64_t)cpu * p->cpu_size)
		       : 0;
	return true;
}

/*
 * R6-R9 to and from a call frame, one register at a time: the handler just
 * before wrote them one at a time, and a wider load of two of them would
 * wait for both stores to retire instead of taking each store's value
 * (store forwarding works per store); the empty asm keeps the compiler from
 * merging the copies into vector moves.
 */
static inline __attribute__((unused)) void save_callee_saved(uint64_t *to, const uint64_t *reg)
{
	for (int i = 0; i < 4; i++) {
		uint64_t v = reg[6 + i];

		__asm__("" : "+r"(v));
		to[i] = v;
	}
}

static inline __attribute__((unused)) void restore_callee_saved(uint64_t *reg, const uint64_t *from)
{
	for (int i = 0; i < 4; i++) {
		uint64_t v = from[i];

		__asm__("" : "+r"(v));
		reg[6 + i] = v;
	}
}

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

/* The handlers beyond the generic one per opcode (none of them jumps). */
#define SPECIAL_OPS(X)                                                                             \
	X(MOVSX64) X(MOVSX32)                                                                     \
	X(LE16) X(LE32) X(LE64) X(BE16) X(BE32) X(BE64)                                          \
	X(CALL_HELPER) X(CALL_LOCAL) X(LOOKUP_ARRAY) X(LOOKUP_PERCPU_ARRAY) X(TAIL_CALL)           \
	X(CALL_CALLBACK)                                                                           \
	X(UDIV64_K) X(UDIV32_K) X(UMOD64_K) X(UMOD32_K) /* unsigned, by a non-zero constant */  \
	FUSED_OPS(X)

/*
 * Superinstructions: two instructions frequent together, run by one
 * handler in the first one's slot (the pair's second slot keeps its own
 * handler, so a jump may still land there).  No jump among them.
 *   MOV_ADD64K   rD = rS; rD += K      (pointer arithmetic: rX = r10 - n, packet bounds)
 *   LSH_RSH64K   rD <<= A; rD >>= B    (zero extension, bit fields)
 *   LSH_ARSH64K  rD <<= A; rD s>>= B   (sign extension)
 */
#define FUSED_OPS(X) X(MOV_ADD64K) X(LSH_RSH64K) X(LSH_ARSH64K)

/*
 * Register families: the forms most programs spend their time in get one
 * handler per destination register, which names it, so that the BPF
 * registers live in C locals (machine registers) instead of an array every
 * instruction goes through memory for (through memory, every value one
 * instruction hands the next waits for store forwarding, several cycles per
 * hop; that was most of the interpreter's time).
 *
 * FK(NAME, SHAPE, A): a K form or one-register opcode; its handler
 * L_<NAME>_<d> for r<d> has shape H_<SHAPE> (below).  FX(NAME, SHAPE, A):
 * an X form, run in two steps: the slot's handler FETCH_<s> copies r<s> into
 * the local `src` and jumps to L_<NAME>_<d>, whose offset from FETCH_0 the
 * decoder put in the slot's imm (no X form uses imm).  One handler per
 * register rather than per register pair keeps the function small enough
 * for compilers (11 per form, not 121).  Every other opcode runs its
 * generic handler, over the registers spilled to an array.
 */
#ifdef XBPF_INTERP_GENERIC
/*
 * Sanitizer and fuzzing builds: no families, every form on its generic
 * handler.  Instrumented compilers take tens of minutes over the
 * specialised function; the semantics are the same handlers' (the normal
 * builds' tests hold the families to them).
 */
#define REG_FAMILIES(FX, FK)
#define PAIR_FAMILIES(FP)
#else
#define REG_FAMILIES(FX, FK)                                                                       \
	FX(ALU64_AND_X, ALU64X, &)                                                                 \
	FX(ALU64_LSH_X, SHIFT64X, <<) FX(ALU64_RSH_X, SHIFT64X, >>) FX(ALU64_ARSH_X, ARSH64X, _) \
	FX(ALU32_ADD_X, ALU32X, +) FX(ALU32_SUB_X, ALU32X, -) FX(ALU32_MUL_X, ALU32X, *)         \
	FX(ALU32_AND_X, ALU32X, &) FX(ALU32_XOR_X, ALU32X, ^)                                    \
	FX(ALU32_LSH_X, SHIFT32X, <<) FX(ALU32_RSH_X, SHIFT32X, >>)                              \
	FX(JMP64_JEQ_X, JX64, ==) FX(JMP64_JNE_X, JX64, !=) FX(JMP64_JGT_X, JX64, >)            \
	FX(JMP64_JGE_X, JX64, >=) FX(JMP64_JLT_X, JX64, <) FX(JMP64_JLE_X, JX64, <=)             \
	FX(JMP64_JSGT_X, JSX64, >) FX(JMP64_JSGE_X, JSX64, >=) FX(JMP64_JSLT_X, JSX64, <)        \
	FX(JMP64_JSLE_X, JSX64, <=) FX(JMP64_JSET_X, JX64, &)                                    \
	FX(JMP32_JEQ_X, JX32, ==) FX(JMP32_JNE_X, JX32, !=) FX(JMP32_JGT_X, JX32, >)            \
	FX(JMP32_JGE_X, JX32, >=) FX(JMP32_JLT_X, JX32, <) FX(JMP32_JLE_X, JX32, <=)             \
	FK(ALU64_ADD_K, ALU64K, +) FK(ALU64_SUB_K, ALU64K, -) FK(ALU64_MUL_K, ALU64K, *)         \
	FK(ALU64_OR_K, ALU64K, |) FK(ALU64_AND_K, ALU64K, &) FK(ALU64_XOR_K, ALU64K, ^)          \
	FK(ALU64_LSH_K, ALU64K, <<) FK(ALU64_RSH_K, ALU64K, >>) FK(ALU64_ARSH_K, ARSH64K, _)    \
	FK(ALU64_MOV_K, MOV64K, _) FK(ALU64_NEG, NEG64, _)                                       \
	FK(ALU32_ADD_K, ALU32K, +) FK(ALU32_SUB_K, ALU32K, -) FK(ALU32_MUL_K, ALU32K, *)         \
	FK(ALU32_OR_K, ALU32K, |) FK(ALU32_AND_K, ALU32K, &) FK(ALU32_XOR_K, ALU32K, ^)          \
	FK(ALU32_LSH_K, ALU32K, <<) FK(ALU32_RSH_K, ALU32K, >>) FK(ALU32_ARSH_K, ARSH32K, _)    \
	FK(ALU32_MOV_K, MOV32K, _)                                                               \
	FK(ST_B, ST, uint8_t) FK(ST_H, ST, uint16_t) FK(ST_W, ST, uint32_t) FK(ST_DW, ST, uint64_t) \
	FK(LD_IMM64, LDIMM64, _)                                                                 \
	FK(JMP64_JEQ_K, JK64, ==) FK(JMP64_JNE_K, JK64, !=) FK(JMP64_JGT_K, JK64, >)            \
	FK(JMP64_JGE_K, JK64, >=) FK(JMP64_JLT_K, JK64, <) FK(JMP64_JLE_K, JK64, <=)             \
	FK(JMP64_JSGT_K, JSK64, >) FK(JMP64_JSGE_K, JSK64, >=) FK(JMP64_JSLT_K, JSK64, <)        \
	FK(JMP64_JSLE_K, JSK64, <=) FK(JMP64_JSET_K, JK64, &)                                    \
	FK(JMP32_JEQ_K, JK32, ==) FK(JMP32_JNE_K, JK32, !=) FK(JMP32_JGT_K, JK32, >)            \
	FK(JMP32_JGE_K, JK32, >=) FK(JMP32_JLT_K, JK32, <) FK(JMP32_JLE_K, JK32, <=)             \
	FK(JMP32_JSGT_K, JSK32, >) FK(JMP32_JSGE_K, JSK32, >=) FK(JMP32_JSLT_K, JSK32, <)        \
	FK(JMP32_JSLE_K, JSK32, <=) FK(JMP32_JSET_K, JK32, &)                                    \
	FK(BE16, BSWAP, 16) FK(BE32, BSWAP, 32) FK(BE64, BSWAP, 64)                               \
	FK(LE16, ZEXT, uint16_t) FK(LE32, ZEXT, uint32_t)                                         \
	FK(UDIV64_K, ALU64K, /) FK(UDIV32_K, ALU32K, /) FK(UMOD64_K, ALU64K, %)                   \
	FK(UMOD32_K, ALU32K, %) FK(LSH_RSH64K, LSHRSH, _) FK(LSH_ARSH64K, LSHARSH, _)

/*
 * The X forms frequent enough to be worth a handler per register pair
 * (L_<NAME>_<d>_<s>, shape H_<SHAPE>), saving their fetch step: register
 * moves are a sixth of what the seeds' programs run; add, sub, mul, or
 * and xor (or32, mov32) are the X forms the LB programs and hash loops
 * run most (the fetch is a second indirect jump).
 */
#define PAIR_FAMILIES(FP)                                                                          \
	FP(ALU64_MOV_X, MOV64P, _)                                                                 \
	FP(LDX_B, LDXP, uint8_t) FP(LDX_H, LDXP, uint16_t) FP(LDX_W, LDXP, uint32_t)             \
	FP(LDX_DW, LDXP, uint64_t) FP(STX_B, STXP, uint8_t) FP(STX_H, STXP, uint16_t)            \
	FP(STX_W, STXP, uint32_t) FP(STX_DW, STXP, uint64_t) FP(MOV_ADD64K, MOVADDP, _)        \
	FP(ALU64_ADD_X, ALU64P, +) FP(ALU64_SUB_X, ALU64P, -) FP(ALU64_MUL_X, ALU64P, *)          \
	FP(ALU64_OR_X, ALU64P, |) FP(ALU64_XOR_X, ALU64P, ^) FP(ALU32_OR_X, ALU32P, |)            \
	FP(ALU32_MOV_X, MOV32P, _)
#endif /* XBPF_INTERP_GENERIC */

/* M(r, ...) for each BPF register; M(s, d, ...) for each pair. */
#define EACH_REG(M, ...)                                                                           \
	M(0, __VA_ARGS__) M(1, __VA_ARGS__) M(2, __VA_ARGS__) M(3, __VA_ARGS__)                   \
	M(4, __VA_ARGS__) M(5, __VA_ARGS__) M(6, __VA_ARGS__) M(7, __VA_ARGS__)                   \
	M(8, __VA_ARGS__) M(9, __VA_ARGS__) M(10, __VA_ARGS__)
#define EACH_SRC_OF(d, M, ...)                                                                     \
	M(0, d, __VA_ARGS__) M(1, d, __VA_ARGS__) M(2, d, __VA_ARGS__) M(3, d, __VA_ARGS__)       \
	M(4, d, __VA_ARGS__) M(5, d, __VA_ARGS__) M(6, d, __VA_ARGS__) M(7, d, __VA_ARGS__)       \
	M(8, d, __VA_ARGS__) M(9, d, __VA_ARGS__) M(10, d, __VA_ARGS__)
#define EACH_PAIR(M, ...) EACH_REG(EACH_SRC_OF, M, __VA_ARGS__)

/*
 * Handler numbers: the generic one of every opcode, the special ones, the
 * source fetches, then each family's 11 (r0's first).
 */
enum interp_op {
#define OPCODE_OP(CODE, NAME, MN, FMT, SIZE, IS64, SRC) OP_##NAME,
#define SPECIAL_OP(NAME) OP_##NAME,
#define FAMILY_OP(NAME, SHAPE, A) OP_R_##NAME, OP_R_##NAME##_last = OP_R_##NAME + XBPF_MAX_REG - 1,
#define PAIR_OP(NAME, SHAPE, A) OP_P_##NAME, OP_P_##NAME##_last = OP_P_##NAME + XBPF_MAX_REG * XBPF_MAX_REG - 1,
	XBPF_OPCODES(OPCODE_OP)
	SPECIAL_OPS(SPECIAL_OP)
	OP_FETCH, /* r0's; r<s>'s is OP_FETCH + s */
	OP_FETCH_last = OP_FETCH + XBPF_MAX_REG - 1,
	REG_FAMILIES(FAMILY_OP, FAMILY_OP)
	PAIR_FAMILIES(PAIR_OP)
	OP_invalid,
	OP_CNT
#undef OPCODE_OP
#undef SPECIAL_OP
#undef FAMILY_OP
#undef PAIR_OP
};

enum family_kind { FAMILY_NONE, FAMILY_X, FAMILY_K, FAMILY_PAIR };

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#ifdef __clang__
#pragma GCC diagnostic ignored "-Winitializer-overrides"
#endif

/* Each opcode's generic handler. */
static const uint16_t opcode_op[256] = {
	[0 ... 255] = OP_invalid,
#define OPCODE_ENTRY(CODE, NAME, MN, FMT, SIZE, IS64, SRC) [CODE] = OP_##NAME,
	XBPF_OPCODES(OPCODE_ENTRY)
#undef OPCODE_ENTRY
};

/* The register family of a generic handler, if it has one: its r0 handler and its kind. */
static const struct reg_family {
	uint16_t first;
	uint8_t kind;
} reg_family[OP_CNT] = {
#define FAMILY_X_ENTRY(NAME, SHAPE, A) [OP_##NAME] = { OP_R_##NAME, FAMILY_X },
#define FAMILY_K_ENTRY(NAME, SHAPE, A) [OP_##NAME] = { OP_R_##NAME, FAMILY_K },
#define FAMILY_PAIR_ENTRY(NAME, SHAPE, A) [OP_##NAME] = { OP_P_##NAME, FAMILY_PAIR },
	REG_FAMILIES(FAMILY_X_ENTRY, FAMILY_K_ENTRY)
	PAIR_FAMILIES(FAMILY_PAIR_ENTRY)
#undef FAMILY_X_ENTRY
#undef FAMILY_K_ENTRY
#undef FAMILY_PAIR_ENTRY
};

#pragma GCC diagnostic pop

/* The handlers' addresses: [0] plain, [1] with a jump budget; the interpreter fills them in. */
static const void *const *handler_tables[2];

static uint64_t interp_exec(const struct xbpf_interp_code *code, uint32_t start, const uint64_t *args,
			    int base_depth, int *ret_err);

/* ---- decoding ---------------------------------------------------------- */

static enum interp_op decode_alu_un(const struct xbpf_insn *insn)
{
	static const enum interp_op le[3] = { OP_LE16, OP_LE32, OP_LE64 };
	static const enum interp_op be[3] = { OP_BE16, OP_BE32, OP_BE64 };
	int w = insn->imm == 16 ? 0 : insn->imm == 32 ? 1 : insn->imm == 64 ? 2 : -1;

	if (w < 0)
		return opcode_op[insn->code]; /* faults when reached */
	switch (insn->code) {
	case XBPF_ALU | XBPF_END | XBPF_TO_LE:
		return le[w];
	case XBPF_ALU | XBPF_END | XBPF_TO_BE:
	case XBPF_ALU64 | XBPF_END | XBPF_TO_LE:
		return be[w];
	default:
		return opcode_op[insn->code];
	}
}

/* Slot idx of prog decoded into *out (all but op); returns its handler. */
static enum interp_op decode_one(const struct xbpf_exec_prog *prog, uint32_t idx,
				 struct interp_insn *out)
{
	const struct xbpf_insn *insn = &prog->insns[idx];
	const struct xbpf_opdesc *desc = xbpf_opcode_desc(insn->code);

	out->dst = insn->dst_reg;
	out->src = insn->src_reg;
	out->off = insn->off;
	out->imm = insn->imm;
	switch (desc->fmt) {
	case XBPF_FMT_ALU:
		if (XBPF_OP(insn->code) == XBPF_MOV && XBPF_SRC(insn->code) == XBPF_X && insn->off)
			return desc->is64 ? OP_MOVSX64 : OP_MOVSX32;
		if ((XBPF_OP(insn->code) == XBPF_DIV || XBPF_OP(insn->code) == XBPF_MOD) &&
		    XBPF_SRC(insn->code) == XBPF_K && insn->off == 0 && insn->imm != 0) {
			if (XBPF_OP(insn->code) == XBPF_DIV)
				return desc->is64 ? OP_UDIV64_K : OP_UDIV32_K;
			return desc->is64 ? OP_UMOD64_K : OP_UMOD32_K;
		}
		if ((XBPF_OP(insn->code) == XBPF_LSH || XBPF_OP(insn->code) == XBPF_RSH ||
		     XBPF_OP(insn->code) == XBPF_ARSH) && XBPF_SRC(insn->code) == XBPF_K)
			out->imm &= desc->is64 ? 63 : 31;
		break;
	case XBPF_FMT_ALU_UN:
		if (XBPF_OP(insn->code) == XBPF_END)
			return decode_alu_un(insn);
		break;
	case XBPF_FMT_LDIMM64:
		if (idx + 1 >= prog->insn_cnt)
			return OP_invalid;
		break;
	case XBPF_FMT_CALL:
		if (insn->src_reg == 0 && insn->imm == BPF_FUNC_tail_call && prog->tail_lookup) {
			out->tail_lookup = prog->tail_lookup;
			return OP_TAIL_CALL;
		}
		/* Helpers that call back: the interpreter runs the callback itself. */
		if (insn->src_reg == 0 && (insn->imm == BPF_FUNC_loop || insn->imm == BPF_FUNC_for_each_map_elem))
			return OP_CALL_CALLBACK;
		if (insn->src_reg == 0) {
			const struct xbpf_lookup_plan *plan =
				prog->lookup_plan ? prog->lookup_plan[idx] : NULL;

			if (plan && plan->kind == XBPF_LOOKUP_ARRAY) {
				out->plan = plan;
				return OP_LOOKUP_ARRAY;
			}
			if (plan && plan->kind == XBPF_LOOKUP_PERCPU_ARRAY) {
				out->plan = plan;
				return OP_LOOKUP_PERCPU_ARRAY;
			}
			out->fn = plan ? plan->fn : xbpf_helper_impl(insn->imm);
			/* A helper the runtime lacks faults when reached (generic handler). */
			return out->fn ? OP_CALL_HELPER : opcode_op[insn->code];
		}
		if (insn->src_reg == XBPF_PSEUDO_CALL) {
			int64_t target = (int64_t)idx + insn->imm + 1;

			if (target < 0 || target >= prog->insn_cnt)
				return OP_invalid;
			uint32_t caller = __xbpf_interp_frame_size(prog, idx);
			uint32_t callee = prog->call_frame_size
						  ? prog->call_frame_size[idx]
						  : __xbpf_interp_frame_size(prog, (uint32_t)target);

			out->dst = (uint8_t)(caller / 16);
			out->off = (int16_t)(caller + callee);
			return OP_CALL_LOCAL;
		}
		return OP_invalid; /* kfuncs exist only in the kernel */
	default:
		break;
	}
	return opcode_op[insn->code];
}

/*
 * The superinstruction of slot i decoded to op and the next slot decoded to
 * next (their operands in insn[0..1]), or op.
 */
static enum interp_op fuse(enum interp_op op, enum interp_op next, const struct interp_insn *insn)
{
	if (insn[1].dst != insn[0].dst)
		return op;
	if (op == OP_ALU64_MOV_X && next == OP_ALU64_ADD_K)
		return OP_MOV_ADD64K;
	if (op == OP_ALU64_LSH_K && next == OP_ALU64_RSH_K)
		return OP_LSH_RSH64K;
	if (op == OP_ALU64_LSH_K && next == OP_ALU64_ARSH_K)
		return OP_LSH_ARSH64K;
	return op;
}

/*
 * The handlers of a slot decoded to op: the slot's own, and for an X form
 * of a register family the one its source fetch jumps to (else OP_CNT).
 */
static void specialise(enum interp_op op, const struct interp_insn *insn, uint16_t *first,
		       uint16_t *second)
{
	const struct reg_family *f = &reg_family[op];

	*first = (uint16_t)op;
	*second = OP_CNT;
	if (f->kind == FAMILY_NONE || insn->dst >= XBPF_MAX_REG || insn->src >= XBPF_MAX_REG)
		return;
	if (f->kind == FAMILY_K) {
		*first = (uint16_t)(f->first + insn->dst);
		return;
	}
	if (f->kind == FAMILY_PAIR) {
		*first = (uint16_t)(f->first + insn->dst * XBPF_MAX_REG + insn->src);
		return;
	}
	*first = (uint16_t)(OP_FETCH + insn->src);
	*second = (uint16_t)(f->first + insn->dst);
}

int __xbpf_interp_prepare(const struct xbpf_exec_prog *prog, struct xbpf_interp_code **ret)
{
	const void *const *handlers;
	struct xbpf_interp_code *c;
	uint16_t(*ops)[2]; /* each slot's handler, and its second step's */

	*ret = NULL;
	if (!prog->insn_cnt)
		return -EINVAL;
	if (!__atomic_load_n(&handler_tables[0], __ATOMIC_ACQUIRE))
		interp_exec(NULL, 0, NULL, 0, NULL);
	handlers = handler_tables[prog->verified ? 0 : 1];
	c = calloc(1, sizeof(*c));
	ops = calloc(prog->insn_cnt, sizeof(*ops));
	if (c)
		c->insns = calloc(prog->insn_cnt, sizeof(*c->insns));
	if (!c || !ops || !c->insns) {
		free(ops);
		__xbpf_interp_code_free(c);
		return -ENOMEM;
	}
	c->prog = prog;
	c->main_frame = __xbpf_interp_frame_size(prog, 0);
	/* Each slot's plain handler first, in ops[][0]... */
	for (uint32_t i = 0; i < prog->insn_cnt; i++) {
		ops[i][0] = (uint16_t)decode_one(prog, i, &c->insns[i]);
		ops[i][1] = OP_CNT;
		if (ops[i][0] == OP_LD_IMM64) {
			i++;
			c->insns[i].imm64 = (uint32_t)prog->insns[i - 1].imm |
					    (uint64_t)(uint32_t)prog->insns[i].imm << 32;
			/* A callback's address is, to the interpreter, its first slot. */
			if (prog->insns[i - 1].src_reg == XBPF_PSEUDO_FUNC)
				c->insns[i].imm64 = (uint64_t)((int64_t)i + prog->insns[i - 1].imm);
			ops[i][0] = OP_invalid; /* never a jump target (vm.c checked) */
			ops[i][1] = OP_CNT;
		}
	}
	/* ... then fused with the next slot's where a superinstruction fits, and specialised. */
	for (uint32_t i = 0; i < prog->insn_cnt; i++) {
		enum interp_op op = (enum interp_op)ops[i][0];

		if (op != OP_LD_IMM64 && i + 1 < prog->insn_cnt)
			op = fuse(op, (enum interp_op)ops[i + 1][0], &c->insns[i]);
		specialise(op, &c->insns[i], &ops[i][0], &ops[i][1]);
		if (op == OP_LD_IMM64)
			i++; /* its second slot stays OP_invalid */
	}
	for (uint32_t i = 0; i < prog->insn_cnt; i++) {
		c->insns[i].op = handlers[ops[i][0]];
		if (ops[i][1] != OP_CNT)
			c->insns[i].imm = (int32_t)((intptr_t)handlers[ops[i][1]] - (intptr_t)handlers[OP_FETCH]);
	}
	free(ops);
	*ret = c;
	return 0;
}

void __xbpf_interp_code_free(struct xbpf_interp_code *code)
{
	if (!code)
		return;
	free(code->insns);
	free(code);
}

/* ---- the interpreter --------------------------------------------------- */

/*
 * Handler tables, in interp_op order: the generic handler of opcode NAME is
 * L_NAME; in the budget table, those of the jumps (JA and JCOND formats)
 * and of the register families' jump shapes start at B_NAME, which spends
 * the budget and falls through into L_NAME.
 */
#define PLAIN_ENTRY(CODE, NAME, MN, FMT, SIZE, IS64, SRC) &&L_##NAME,
#define BUDGET_ENTRY(CODE, NAME, MN, FMT, SIZE, IS64, SRC) BUDGET_##FMT(NAME),
#define SPECIAL_ENTRY(NAME) &&L_##NAME,
#define BUDGET_JA(NAME) &&B_##NAME
#define BUDGET_JCOND(NAME) &&B_##NAME
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

#define FETCH_ENTRY(s, _) &&L_FETCH_##s,
#define FAMILY_PLAIN_ENTRY(d, NAME) &&L_##NAME##_##d,
#define FAMILY_BUDGET_ENTRY(d, NAME) &&B_##NAME##_##d,
#define FAMILY_PLAIN(NAME, SHAPE, A) EACH_REG(FAMILY_PLAIN_ENTRY, NAME)
#define PAIR_ENTRY(s, d, NAME) &&L_##NAME##_##d##_##s,
#define PAIR_PLAIN(NAME, SHAPE, A) EACH_PAIR(PAIR_ENTRY, NAME)
#define FAMILY_BUDGET(NAME, SHAPE, A) EACH_REG(SHAPE_##SHAPE##_ENTRY, NAME)
/* Only the jump shapes have budget entries. */
#define SHAPE_ALU64X_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_SHIFT64X_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ARSH64X_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ALU32X_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_SHIFT32X_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_MOV32X_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ALU64K_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ARSH64K_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_MOV64K_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_NEG64_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ALU32K_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ARSH32K_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_MOV32K_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ST_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_LDIMM64_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_BSWAP_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_ZEXT_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_LSHRSH_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_LSHARSH_ENTRY FAMILY_PLAIN_ENTRY
#define SHAPE_JX64_ENTRY FAMILY_BUDGET_ENTRY
#define SHAPE_JSX64_ENTRY FAMILY_BUDGET_ENTRY
#define SHAPE_JX32_ENTRY FAMILY_BUDGET_ENTRY
#define SHAPE_JK64_ENTRY FAMILY_BUDGET_ENTRY
#define SHAPE_JSK64_ENTRY FAMILY_BUDGET_ENTRY
#define SHAPE_JK32_ENTRY FAMILY_BUDGET_ENTRY
#define SHAPE_JSK32_ENTRY FAMILY_BUDGET_ENTRY

#define IMM ((uint64_t)(int64_t)pc->imm)
#define IMM32 ((uint32_t)pc->imm)
#define ADDR(base) ((base) + (int64_t)pc->off)

/* Fast handlers (the registers in r0..r10): */
#define DISPATCH() goto *pc->op
#define NEXT()                                                                                     \
	do {                                                                                       \
		pc++;                                                                              \
		DISPATCH();                                                                        \
	} while (0)

/* Generic handlers: entered through GENERIC() (registers spilled to reg[]), left through these. */
#define DST reg[pc->dst]
#define SRC reg[pc->src]
#define SPILL_ONE(n, _) reg[n] = r##n;
#define RELOAD_ONE(n, _) r##n = reg[n];
#define GENERIC(NAME)                                                                              \
	L_##NAME : EACH_REG(SPILL_ONE, _)
#define G_DISPATCH() goto reload
#define G_NEXT()                                                                                   \
	do {                                                                                       \
		pc++;                                                                              \
		G_DISPATCH();                                                                      \
	} while (0)

#define FAULT(err)                                                                                 \
	do {                                                                                       \
		*ret_err = (err);                                                                  \
		return 0;                                                                          \
	} while (0)
/* Entry of a jump handler in unverified programs: spend one unit of the budget. */
#define SPEND_BUDGET(NAME) B_##NAME : if (__builtin_expect(!--budget, 0)) FAULT(-ELOOP);
#define BUDGET(NAME) SPEND_BUDGET(NAME) GENERIC(NAME)

/* The register families' handlers, H_<SHAPE>(d, NAME, A); X forms find r<s> in src. */
#define H_ALU64X(d, NAME, OP) L_##NAME##_##d : r##d = r##d OP src; NEXT();
#define H_SHIFT64X(d, NAME, OP) L_##NAME##_##d : r##d = r##d OP(src & 63); NEXT();
#define H_ARSH64X(d, NAME, _) L_##NAME##_##d : r##d = (uint64_t)((int64_t)r##d >> (src & 63)); NEXT();
#define H_ALU32X(d, NAME, OP) L_##NAME##_##d : r##d = (uint32_t)((uint32_t)r##d OP(uint32_t) src); NEXT();
#define H_SHIFT32X(d, NAME, OP) L_##NAME##_##d : r##d = (uint32_t)((uint32_t)r##d OP(src & 31)); NEXT();
#define H_MOV32X(d, NAME, _) L_##NAME##_##d : r##d = (uint32_t)src; NEXT();
#define H_JUMP_IF(LABEL, COND)                                                                     \
	SPEND_BUDGET(LABEL)                                                                        \
	L_##LABEL : if (COND) pc += pc->off;                                                       \
	NEXT();
#define H_JX64(d, NAME, OP) H_JUMP_IF(NAME##_##d, r##d OP src)
#define H_JSX64(d, NAME, OP) H_JUMP_IF(NAME##_##d, (int64_t)r##d OP(int64_t) src)
#define H_JX32(d, NAME, OP) H_JUMP_IF(NAME##_##d, (uint32_t)r##d OP(uint32_t) src)
#define H_ALU64K(d, NAME, OP) L_##NAME##_##d : r##d = r##d OP IMM; NEXT();
#define H_ARSH64K(d, NAME, _) L_##NAME##_##d : r##d = (uint64_t)((int64_t)r##d >> IMM); NEXT();
#define H_MOV64K(d, NAME, _) L_##NAME##_##d : r##d = IMM; NEXT();
#define H_NEG64(d, NAME, _) L_##NAME##_##d : r##d = -r##d; NEXT();
#define H_ALU32K(d, NAME, OP) L_##NAME##_##d : r##d = (uint32_t)((uint32_t)r##d OP IMM32); NEXT();
#define H_ARSH32K(d, NAME, _) L_##NAME##_##d : r##d = (uint32_t)((int32_t)r##d >> IMM32); NEXT();
#define H_MOV32K(d, NAME, _) L_##NAME##_##d : r##d = IMM32; NEXT();
#define H_ST(d, NAME, T) L_##NAME##_##d : STORE(T, ADDR(r##d), IMM); NEXT();
#define H_LDIMM64(d, NAME, _)                                                                      \
	L_##NAME##_##d : r##d = pc[1].imm64;                                                       \
	pc += 2;                                                                                   \
	DISPATCH();
#define H_BSWAP(d, NAME, W) L_##NAME##_##d : r##d = __builtin_bswap##W((uint##W##_t)r##d); NEXT();
#define H_ZEXT(d, NAME, T) L_##NAME##_##d : r##d = (T)r##d; NEXT();
/* Superinstructions: the second slot's imm; the decoder masked both counts. */
#define NEXT2()                                                                                    \
	do {                                                                                       \
		pc += 2;                                                                           \
		DISPATCH();                                                                        \
	} while (0)
#define H_LSHRSH(d, NAME, _) L_##NAME##_##d : r##d = (r##d << pc->imm) >> pc[1].imm; NEXT2();
#define H_LSHARSH(d, NAME, _)                                                                      \
	L_##NAME##_##d : r##d = (uint64_t)((int64_t)(r##d << pc->imm) >> pc[1].imm);              \
	NEXT2();
#define H_JK64(d, NAME, OP) H_JUMP_IF(NAME##_##d, r##d OP IMM)
#define H_JSK64(d, NAME, OP) H_JUMP_IF(NAME##_##d, (int64_t)r##d OP(int64_t) IMM)
#define H_JK32(d, NAME, OP) H_JUMP_IF(NAME##_##d, (uint32_t)r##d OP IMM32)
#define H_JSK32(d, NAME, OP) H_JUMP_IF(NAME##_##d, (int32_t)r##d OP(int32_t) IMM32)
#define FAMILY_HANDLERS(NAME, SHAPE, A) EACH_REG(H_##SHAPE, NAME, A)
#define H_MOV64P(s, d, NAME, _) L_##NAME##_##d##_##s : r##d = r##s; NEXT();
#define H_MOV32P(s, d, NAME, _) L_##NAME##_##d##_##s : r##d = (uint32_t)r##s; NEXT();
#define H_ALU64P(s, d, NAME, OP) L_##NAME##_##d##_##s : r##d = r##d OP r##s; NEXT();
#define H_ALU32P(s, d, NAME, OP) L_##NAME##_##d##_##s : r##d = (uint32_t)((uint32_t)r##d OP(uint32_t) r##s); NEXT();
#define H_MOVADDP(s, d, NAME, _)                                                                   \
	L_##NAME##_##d##_##s : r##d = r##s + (uint64_t)(int64_t)pc[1].imm;                         \
	NEXT2();
#define H_LDXP(s, d, NAME, T) L_##NAME##_##d##_##s : r##d = LOAD(T, ADDR(r##s)); NEXT();
#define H_STXP(s, d, NAME, T) L_##NAME##_##d##_##s : STORE(T, ADDR(r##d), r##s); NEXT();
#define PAIR_HANDLERS(NAME, SHAPE, A) EACH_PAIR(H_##SHAPE, NAME, A)
/* An X form's first step: r<s> into src, on to the handler the slot's imm names. */
#define H_FETCH(s, _)                                                                              \
	L_FETCH_##s : src = r##s;                                                                  \
	goto *(const void *)((uintptr_t)&&L_FETCH_0 + (intptr_t)pc->imm);

#define ALU_BIN(NAME, OP)                                                                          \
	GENERIC(ALU64_##NAME##_X) DST = DST OP SRC;                                                \
	G_NEXT();                                                                                  \
	GENERIC(ALU64_##NAME##_K) DST = DST OP IMM;                                                \
	G_NEXT();                                                                                  \
	GENERIC(ALU32_##NAME##_X) DST = (uint32_t)((uint32_t)DST OP(uint32_t) SRC);                \
	G_NEXT();                                                                                  \
	GENERIC(ALU32_##NAME##_K) DST = (uint32_t)((uint32_t)DST OP IMM32);                        \
	G_NEXT();

/* K forms: the decoder masked the count already. */
#define ALU_SHIFT(NAME, OP)                                                                        \
	GENERIC(ALU64_##NAME##_X) DST = DST OP(SRC & 63);                                          \
	G_NEXT();                                                                                  \
	GENERIC(ALU64_##NAME##_K) DST = DST OP IMM;                                                \
	G_NEXT();                                                                                  \
	GENERIC(ALU32_##NAME##_X) DST = (uint32_t)((uint32_t)DST OP(SRC & 31));                    \
	G_NEXT();                                                                                  \
	GENERIC(ALU32_##NAME##_K) DST = (uint32_t)((uint32_t)DST OP IMM32);                        \
	G_NEXT();

#define JCOND(NAME, OP, T64, T32)                                                                  \
	BUDGET(JMP64_##NAME##_X) if ((T64)DST OP(T64) SRC) pc += pc->off;                          \
	G_NEXT();                                                                                  \
	BUDGET(JMP64_##NAME##_K) if ((T64)DST OP(T64) IMM) pc += pc->off;                          \
	G_NEXT();                                                                                  \
	BUDGET(JMP32_##NAME##_X) if ((T32)DST OP(T32) SRC) pc += pc->off;                          \
	G_NEXT();                                                                                  \
	BUDGET(JMP32_##NAME##_K) if ((T32)DST OP(T32) IMM) pc += pc->off;                          \
	G_NEXT();

#define LDX(NAME, T)                                                                               \
	GENERIC(LDX_##NAME) DST = LOAD(T, ADDR(SRC));                                              \
	G_NEXT();
#define LDXS(NAME, T)                                                                              \
	GENERIC(LDX_S##NAME) DST = (uint64_t)(int64_t)LOAD(T, ADDR(SRC));                          \
	G_NEXT();
#define ST(NAME, T)                                                                                \
	GENERIC(ST_##NAME) STORE(T, ADDR(DST), IMM);                                               \
	G_NEXT();                                                                                  \
	GENERIC(STX_##NAME) STORE(T, ADDR(DST), SRC);                                              \
	G_NEXT();

#define ATOMIC(NAME, T)                                                                            \
	GENERIC(ATOMIC_##NAME) {                                                                   \
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
		G_NEXT();                                                                          \
	}

#define LD_PKT(NAME, SIZE, OFFSET)                                                                 \
	GENERIC(NAME) if (!ld_abs(reg[6], (OFFSET), SIZE, &reg[0]))                                \
		return 0; /* out of the packet: the whole program ends, as in the kernel */        \
	G_NEXT();

/*
 * Run code from its first slot with R1, R2.  code NULL: only publish the
 * handler tables (the labels' addresses exist only in here).
 */
/* A callback the interpreter runs for a helper: the code, the frames below it, a fault. */
struct interp_callback {
	const struct xbpf_interp_code *code;
	int base_depth;
	int err;
};

static uint64_t interp_callback(void *priv, uint64_t fn, uint64_t r1, uint64_t r2, uint64_t r3,
				uint64_t r4)
{
	struct interp_callback *cb = priv;
	const struct xbpf_exec_prog *prog = cb->code->prog;
	const uint64_t args[5] = { r1, r2, r3, r4, 0 };
	uint64_t r0;
	int f;

	if (cb->err)
		return 1;
	/* Only an unverified program can name something else than a function here. */
	f = fn < prog->insn_cnt ? xbpf_func_at(prog->func_start, prog->func_cnt, (uint32_t)fn) : -1;
	if (f < 0) {
		cb->err = -EINVAL;
		return 1;
	}
	r0 = interp_exec(cb->code, (uint32_t)fn, args, cb->base_depth, &cb->err);
	return cb->err ? 1 : r0;
}

/*
 * Run code from slot start (0: the program, else a callback's first slot)
 * with R1-R5 from args (NULL: none), as if base_depth frames were below.
 */
/*
 * Not vectorised: GCC would move BPF registers through vector registers
 * into one shared dispatch jump, which then is not copied back into every
 * handler (each handler's own indirect jump is what the branch predictor
 * learns from).  Every handler starts on a 16-byte boundary: the seeds'
 * LB programs run 5-30% faster so, the balancer about the same (likely
 * the front end: packed, several handlers' dispatch jumps share a fetch
 * block; no PMU here to tell).  Layout alone moves these figures by tens
 * of percent: measure any change to this function, interleaved.
 */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize", "no-tree-fre", "align-labels=16")))
#endif
static uint64_t interp_exec(const struct xbpf_interp_code *code, uint32_t start, const uint64_t *args,
			    int base_depth, int *ret_err)
{
	static const void *const plain[OP_CNT] = {
		XBPF_OPCODES(PLAIN_ENTRY)
		SPECIAL_OPS(SPECIAL_ENTRY)
		EACH_REG(FETCH_ENTRY, _)
		REG_FAMILIES(FAMILY_PLAIN, FAMILY_PLAIN)
		PAIR_FAMILIES(PAIR_PLAIN)
		&&L_invalid,
	};
	static const void *const budgeted[OP_CNT] = {
		XBPF_OPCODES(BUDGET_ENTRY)
		SPECIAL_OPS(SPECIAL_ENTRY)
		EACH_REG(FETCH_ENTRY, _)
		REG_FAMILIES(FAMILY_BUDGET, FAMILY_BUDGET)
		PAIR_FAMILIES(PAIR_PLAIN) /* no jumps among them */
		&&L_invalid,
	};
	/*
	 * Room for tail calls too: one made from a subprogram leaves the frames
	 * below it (under 256 bytes, at most 7 of them: the verifier's rules)
	 * and the called program adds its own.
	 */
	uint8_t stack[XBPF_MAX_CALL_FRAMES * XBPF_STACK_SIZE + XBPF_MAX_TAIL_CALLS * 256]
		__attribute__((aligned(16)));
	struct call_frame frames[XBPF_MAX_CALL_FRAMES * (XBPF_MAX_TAIL_CALLS + 1)];
	const struct interp_insn *pc;
	xbpf_helper_fn helper;
	/* In memory: a machine register is worth more to the BPF registers. */
	volatile uint32_t budget = UNVERIFIED_JUMP_BUDGET;
	/*
	 * The BPF registers, zeroed as the kernel's interpreter does; reg[]
	 * holds them around a generic handler.  R10 stays in memory (only
	 * calls and exits write it), leaving a machine register to src.
	 */
	uint64_t r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, r6 = 0, r7 = 0, r8 = 0, r9 = 0;
	volatile uint64_t r10;
	uint64_t reg[XBPF_MAX_REG];
	uint64_t src __attribute__((unused)) = 0; /* an X form's source value, between its two steps (none: XBPF_INTERP_GENERIC) */
	/* top: the next call's frame; top_limit: the running program's own frames end there (8 from where it began). */
	struct call_frame *top = frames, *top_limit;
	int frame_limit = XBPF_MAX_CALL_FRAMES - base_depth, tail_calls = 0;

	if (__builtin_expect(!code, 0)) {
		handler_tables[1] = budgeted;
		__atomic_store_n(&handler_tables[0], plain, __ATOMIC_RELEASE);
		return 0;
	}
	*ret_err = 0;
	if (__builtin_expect(frame_limit < 1, 0))
		FAULT(-E2BIG);
	top_limit = frames + frame_limit - 1;
	pc = code->insns + start;
	if (args) {
		r1 = args[0];
		r2 = args[1];
		r3 = args[2];
		r4 = args[3];
		r5 = args[4];
	}
	r10 = (uintptr_t)(stack + sizeof(stack));
	DISPATCH();

reload:
	EACH_REG(RELOAD_ONE, _)
	DISPATCH();

	EACH_REG(H_FETCH, _)
	REG_FAMILIES(FAMILY_HANDLERS, FAMILY_HANDLERS)
	PAIR_FAMILIES(PAIR_HANDLERS)

	ALU_BIN(ADD, +)
	ALU_BIN(SUB, -)
	ALU_BIN(MUL, *)
	ALU_BIN(OR, |)
	ALU_BIN(AND, &)
	ALU_BIN(XOR, ^)
	ALU_SHIFT(LSH, <<)
	ALU_SHIFT(RSH, >>)

	GENERIC(ALU64_ARSH_X)
	DST = (uint64_t)((int64_t)DST >> (SRC & 63));
	G_NEXT();
	GENERIC(ALU64_ARSH_K)
	DST = (uint64_t)((int64_t)DST >> IMM);
	G_NEXT();
	GENERIC(ALU32_ARSH_X)
	DST = (uint32_t)((int32_t)DST >> (SRC & 31));
	G_NEXT();
	GENERIC(ALU32_ARSH_K)
	DST = (uint32_t)((int32_t)DST >> IMM32);
	G_NEXT();

	GENERIC(ALU64_DIV_X)
	DST = div64(DST, SRC, pc->off == 1);
	G_NEXT();
	GENERIC(ALU64_DIV_K)
	DST = div64(DST, IMM, pc->off == 1);
	G_NEXT();
	GENERIC(ALU32_DIV_X)
	DST = div32(DST, SRC, pc->off == 1);
	G_NEXT();
	GENERIC(ALU32_DIV_K)
	DST = div32(DST, IMM32, pc->off == 1);
	G_NEXT();
	GENERIC(UDIV64_K)
	DST = DST / IMM;
	G_NEXT();
	GENERIC(UDIV32_K)
	DST = (uint32_t)DST / IMM32;
	G_NEXT();
	GENERIC(UMOD64_K)
	DST = DST % IMM;
	G_NEXT();
	GENERIC(UMOD32_K)
	DST = (uint32_t)DST % IMM32;
	G_NEXT();
	GENERIC(ALU64_MOD_X)
	DST = mod64(DST, SRC, pc->off == 1);
	G_NEXT();
	GENERIC(ALU64_MOD_K)
	DST = mod64(DST, IMM, pc->off == 1);
	G_NEXT();
	GENERIC(ALU32_MOD_X)
	DST = mod32(DST, SRC, pc->off == 1);
	G_NEXT();
	GENERIC(ALU32_MOD_K)
	DST = mod32(DST, IMM32, pc->off == 1);
	G_NEXT();

	GENERIC(ALU64_MOV_X)
	DST = SRC;
	G_NEXT();
	GENERIC(MOVSX64)
	DST = sext(SRC, pc->off);
	G_NEXT();
	GENERIC(ALU64_MOV_K)
	DST = IMM;
	G_NEXT();
	GENERIC(ALU32_MOV_X)
	DST = (uint32_t)SRC;
	G_NEXT();
	GENERIC(MOVSX32)
	DST = (uint32_t)sext(SRC, pc->off);
	G_NEXT();
	GENERIC(ALU32_MOV_K)
	DST = IMM32;
	G_NEXT();

	GENERIC(MOV_ADD64K)
	DST = SRC + (uint64_t)(int64_t)pc[1].imm;
	pc += 2;
	G_DISPATCH();
	GENERIC(LSH_RSH64K)
	DST = (DST << pc->imm) >> pc[1].imm;
	pc += 2;
	G_DISPATCH();
	GENERIC(LSH_ARSH64K)
	DST = (uint64_t)((int64_t)(DST << pc->imm) >> pc[1].imm);
	pc += 2;
	G_DISPATCH();

	GENERIC(ALU64_NEG)
	DST = -DST;
	G_NEXT();
	GENERIC(ALU32_NEG)
	DST = (uint32_t)-(uint32_t)DST;
	G_NEXT();

	GENERIC(LE16)
	DST = (uint16_t)DST;
	G_NEXT();
	GENERIC(LE32)
	DST = (uint32_t)DST;
	G_NEXT();
L_LE64:
	NEXT();
	GENERIC(BE16)
	DST = __builtin_bswap16((uint16_t)DST);
	G_NEXT();
	GENERIC(BE32)
	DST = __builtin_bswap32((uint32_t)DST);
	G_NEXT();
	GENERIC(BE64)
	DST = __builtin_bswap64(DST);
	G_NEXT();
/* The byte swaps' generic handlers: the decoder sends only a bad width here. */
L_ALU32_LE:
L_ALU32_BE:
L_ALU64_BSWAP:
	FAULT(-EINVAL);

	GENERIC(LD_IMM64)
	DST = pc[1].imm64;
	pc += 2;
	G_DISPATCH();

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

	SPEND_BUDGET(JMP64_JA)
L_JMP64_JA:
	pc += pc->off;
	NEXT();
	SPEND_BUDGET(JMP32_JA)
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

	BUDGET(JMP64_JSET_X)
	if (DST & SRC)
		pc += pc->off;
	G_NEXT();
	BUDGET(JMP64_JSET_K)
	if (DST & IMM)
		pc += pc->off;
	G_NEXT();
	BUDGET(JMP32_JSET_X)
	if ((uint32_t)DST & (uint32_t)SRC)
		pc += pc->off;
	G_NEXT();
	BUDGET(JMP32_JSET_K)
	if ((uint32_t)DST & IMM32)
		pc += pc->off;
	G_NEXT();

/* One call site for every helper function (each more costs the registers' allocation). */
L_CALL_HELPER:
	helper = pc->fn;
call_helper:
	r0 = helper(r1, r2, r3, r4, r5);
	NEXT();
L_LOOKUP_ARRAY:
	r0 = lookup_array(pc->plan, r2);
	NEXT();
/* The map's own lookup for a CPU id out of range: R1 holds the map (lookup.c). */
L_LOOKUP_PERCPU_ARRAY:
	if (__builtin_expect(!lookup_percpu_array(pc->plan, r2, &r0), 0)) {
		helper = pc->plan->fn;
		goto call_helper;
	}
	NEXT();
/* bpf_loop, bpf_for_each_map_elem: the callback runs here, on frames above this one's. */
	GENERIC(CALL_CALLBACK)
	{
		struct interp_callback cb = { .code = code, .base_depth = base_depth + (int)(top - frames) + 1 };

		if (pc->imm == BPF_FUNC_loop)
			reg[0] = __xbpf_loop(reg[1], reg[2], reg[3], reg[4], interp_callback, &cb);
		else
			reg[0] = __xbpf_for_each_map_elem(reg[1], reg[2], reg[3], reg[4], interp_callback, &cb);
		if (__builtin_expect(cb.err, 0))
			FAULT(cb.err);
		G_NEXT();
	}
/*
 * The callee's area goes below the caller's, which is pc->dst * 16 bytes
 * below R10; pc->off: both.  (R10 outside the stack: an unverified
 * program's atomic fetch wrote it.)
 */
L_CALL_LOCAL: {
	uint64_t fp = r10, room = fp - (uintptr_t)stack;

	if (__builtin_expect(top >= top_limit || room > sizeof(stack) || room < (uint16_t)pc->off, 0))
		FAULT(-E2BIG);
	top->ret_pc = pc;
	top->callee_saved[0] = r6;
	top->callee_saved[1] = r7;
	top->callee_saved[2] = r8;
	top->callee_saved[3] = r9;
	top->fp = fp;
	top++;
	r10 = fp - pc->dst * 16u;
	pc += pc->imm + 1;
	DISPATCH();
}
/*
 * bpf_tail_call(ctx, map, index): the program in the slot replaces the
 * running one in this frame (its frames below stay); a missing program, the
 * 33rd tail call of the run or no room left make it fail, and the caller
 * goes on.
 */
	GENERIC(TAIL_CALL)
	{
		const struct xbpf_tail_target *t;

		if (__builtin_expect(tail_calls >= XBPF_MAX_TAIL_CALLS, 0))
			G_NEXT();
		t = pc->tail_lookup((struct xbpf_map *)(uintptr_t)reg[2], (uint32_t)reg[3]);
		if (!t)
			G_NEXT();
		tail_calls++;
		if (!t->interp) {
			r0 = t->jit_entry(reg[1], 0);
			goto L_JMP64_EXIT;
		}
		if ((uint8_t *)(uintptr_t)reg[XBPF_REG_FP] - t->interp->main_frame < stack ||
		    (top - frames) + XBPF_MAX_CALL_FRAMES > (int)(sizeof(frames) / sizeof(frames[0]))) {
			tail_calls--;
			G_NEXT();
		}
		top_limit = top + XBPF_MAX_CALL_FRAMES - base_depth - 1;
		pc = t->interp->insns;
		G_DISPATCH();
	}
/* The decoder sends here only calls of helpers the runtime lacks. */
L_JMP64_CALL:
	FAULT(-ENOENT);

L_JMP64_EXIT:
	if (top == frames)
		return r0;
	top--;
	r6 = top->callee_saved[0];
	r7 = top->callee_saved[1];
	r8 = top->callee_saved[2];
	r9 = top->callee_saved[3];
	r10 = top->fp;
	pc = top->ret_pc;
	NEXT();

L_invalid:
	FAULT(-EINVAL);
}

uint64_t __xbpf_interp_exec(const struct xbpf_interp_code *code, uint64_t r1, uint64_t r2,
			    int *ret_err)
{
	const uint64_t args[5] = { r1, r2 };

	return interp_exec(code, 0, args, 0, ret_err);
}

uint64_t __xbpf_interp_run_err(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2,
			       int *ret_err)
{
	struct xbpf_interp_code *code;
	uint64_t r0;
	int err;

	err = __xbpf_interp_prepare(prog, &code);
	if (err) {
		*ret_err = err;
		return 0;
	}
	r0 = __xbpf_interp_exec(code, r1, r2, ret_err);
	__xbpf_interp_code_free(code);
	return r0;
}

uint64_t __xbpf_interp_run(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2)
{
	int err;

	return __xbpf_interp_run_err(prog, r1, r2, &err);
}
