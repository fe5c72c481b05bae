/* SPDX-License-Identifier: MIT */
/*
 * xbpf_isa.h - the eBPF instruction set, as every part of xbpf sees it.
 *
 * One header and one opcode table (isa/opcodes.c) serve the ELF loader, the
 * verifier, the disassembler, the interpreter and both JITs, so that the
 * parts cannot drift apart on what an encoding means.  Constants carry an
 * XBPF_ prefix so this header can sit next to <linux/bpf.h> (whose copy on
 * Debian 12 predates the v4 additions) in the same translation unit.
 */
#ifndef XBPF_ISA_H
#define XBPF_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same layout as the kernel's struct bpf_insn: 8 bytes, little-endian. */
struct xbpf_insn {
	uint8_t code;
	uint8_t dst_reg : 4;
	uint8_t src_reg : 4;
	int16_t off;
	int32_t imm;
};

#define XBPF_INSN_SIZE 8
#define XBPF_MAX_REG 11 /* R0..R10 */
#define XBPF_REG_FP 10
#define XBPF_STACK_SIZE 512 /* combined stack of all frames */
#define XBPF_MAX_CALL_FRAMES 8
#define XBPF_MAX_SUBPROGS 256

/* Instruction classes (code & 0x07). */
#define XBPF_CLASS(code) ((code) & 0x07)
#define XBPF_LD 0x00
#define XBPF_LDX 0x01
#define XBPF_ST 0x02
#define XBPF_STX 0x03
#define XBPF_ALU 0x04
#define XBPF_JMP 0x05
#define XBPF_JMP32 0x06
#define XBPF_ALU64 0x07

/* Load/store size (code & 0x18) and mode (code & 0xe0). */
#define XBPF_SIZE(code) ((code) & 0x18)
#define XBPF_W 0x00
#define XBPF_H 0x08
#define XBPF_B 0x10
#define XBPF_DW 0x18
#define XBPF_MODE(code) ((code) & 0xe0)
#define XBPF_IMM 0x00
#define XBPF_ABS 0x20
#define XBPF_IND 0x40
#define XBPF_MEM 0x60
#define XBPF_MEMSX 0x80 /* v4: sign-extending load */
#define XBPF_ATOMIC 0xc0

/* ALU and JMP operation (code & 0xf0) and source (code & 0x08). */
#define XBPF_OP(code) ((code) & 0xf0)
#define XBPF_SRC(code) ((code) & 0x08)
#define XBPF_K 0x00
#define XBPF_X 0x08

#define XBPF_ADD 0x00
#define XBPF_SUB 0x10
#define XBPF_MUL 0x20
#define XBPF_DIV 0x30 /* off == 1: signed (v4 sdiv) */
#define XBPF_OR 0x40
#define XBPF_AND 0x50
#define XBPF_LSH 0x60
#define XBPF_RSH 0x70
#define XBPF_NEG 0x80
#define XBPF_MOD 0x90 /* off == 1: signed (v4 smod) */
#define XBPF_XOR 0xa0
#define XBPF_MOV 0xb0 /* off == 8/16/32: v4 movsx */
#define XBPF_ARSH 0xc0
#define XBPF_END 0xd0 /* ALU: TO_LE/TO_BE; ALU64 + TO_LE: v4 bswap */
#define XBPF_TO_LE 0x00
#define XBPF_TO_BE 0x08

#define XBPF_JA 0x00 /* JMP32 | JA: v4 gotol, target in imm */
#define XBPF_JEQ 0x10
#define XBPF_JGT 0x20
#define XBPF_JGE 0x30
#define XBPF_JSET 0x40
#define XBPF_JNE 0x50
#define XBPF_JSGT 0x60
#define XBPF_JSGE 0x70
#define XBPF_CALL 0x80
#define XBPF_EXIT 0x90
#define XBPF_JLT 0xa0
#define XBPF_JLE 0xb0
#define XBPF_JSLT 0xc0
#define XBPF_JSLE 0xd0

/* Atomic operations, in imm of STX | ATOMIC. */
#define XBPF_FETCH 0x01
#define XBPF_XCHG (0xe0 | XBPF_FETCH)
#define XBPF_CMPXCHG (0xf0 | XBPF_FETCH)

/* src_reg of ld_imm64 (XBPF_LD | XBPF_DW | XBPF_IMM). */
#define XBPF_PSEUDO_MAP_FD 1	/* imm: map index (ELF) or fd-like index (raw) */
#define XBPF_PSEUDO_MAP_VALUE 2 /* imm: map index, next imm: offset in value */
#define XBPF_PSEUDO_BTF_ID 3
#define XBPF_PSEUDO_FUNC 4
#define XBPF_PSEUDO_MAP_IDX 5
#define XBPF_PSEUDO_MAP_IDX_VALUE 6

/* src_reg of call. */
#define XBPF_PSEUDO_CALL 1 /* bpf-to-bpf call, imm: relative insn offset */
#define XBPF_PSEUDO_KFUNC_CALL 2

/* Program types understood by the toolkit. */
enum xbpf_prog_type {
	XBPF_PROG_UNSPEC = 0,
	XBPF_PROG_SOCKET_FILTER,
	XBPF_PROG_SCHED_CLS,
	XBPF_PROG_SCHED_ACT,
	XBPF_PROG_XDP,
	XBPF_PROG_TRACEPOINT,
	/* Plain memory in R1 and its length in R2 (bpf_conformance, ISA tests). */
	XBPF_PROG_RAW_MEM,
};

/*
 * The opcode list: every opcode of the ISA, once.  X(code, NAME, mnemonic,
 * fmt, size, is64, uses_src_reg) per opcode; NAME is a C token unique per
 * opcode (the interpreter makes its labels of it), fmt the suffix of an
 * enum xbpf_opfmt constant, size the memory access width in bytes (0: none).
 * The descriptor table (opcodes.c), the interpreter's dispatch tables and
 * the tests are expanded from this list, so an opcode added here is a
 * compile error in every engine until it handles it.
 */
#define XBPF_OPCODES(X)                                                                            \
	XBPF__ALU_CLASS(X, XBPF_ALU, ALU32, "32", false)                                           \
	XBPF__ALU_CLASS(X, XBPF_ALU64, ALU64, "64", true)                                          \
	/* Byte swaps: imm is the width; ALU64 only has the unconditional bswap. */                \
	X(XBPF_ALU | XBPF_END | XBPF_TO_LE, ALU32_LE, "le", ALU_UN, 0, false, false)               \
	X(XBPF_ALU | XBPF_END | XBPF_TO_BE, ALU32_BE, "be", ALU_UN, 0, false, false)               \
	X(XBPF_ALU64 | XBPF_END | XBPF_TO_LE, ALU64_BSWAP, "bswap", ALU_UN, 0, true, false)        \
	XBPF__JMP_CLASS(X, XBPF_JMP, JMP64, "", true)                                              \
	XBPF__JMP_CLASS(X, XBPF_JMP32, JMP32, "32", false)                                         \
	X(XBPF_JMP | XBPF_JA, JMP64_JA, "ja", JA, 0, true, false)                                  \
	X(XBPF_JMP32 | XBPF_JA, JMP32_JA, "gotol", JA, 0, false, false)                            \
	X(XBPF_JMP | XBPF_CALL, JMP64_CALL, "call", CALL, 0, true, false)                          \
	X(XBPF_JMP | XBPF_EXIT, JMP64_EXIT, "exit", EXIT, 0, true, false)                          \
	X(XBPF_LD | XBPF_IMM | XBPF_DW, LD_IMM64, "lddw", LDIMM64, 8, true, false)                 \
	X(XBPF_LD | XBPF_ABS | XBPF_W, LD_ABS_W, "ldabsw", LDABS, 4, false, false)                 \
	X(XBPF_LD | XBPF_ABS | XBPF_H, LD_ABS_H, "ldabsh", LDABS, 2, false, false)                 \
	X(XBPF_LD | XBPF_ABS | XBPF_B, LD_ABS_B, "ldabsb", LDABS, 1, false, false)                 \
	X(XBPF_LD | XBPF_IND | XBPF_W, LD_IND_W, "ldindw", LDABS, 4, false, true)                  \
	X(XBPF_LD | XBPF_IND | XBPF_H, LD_IND_H, "ldindh", LDABS, 2, false, true)                  \
	X(XBPF_LD | XBPF_IND | XBPF_B, LD_IND_B, "ldindb", LDABS, 1, false, true)                  \
	X(XBPF_LDX | XBPF_MEM | XBPF_W, LDX_W, "ldxw", LDX, 4, false, true)                        \
	X(XBPF_LDX | XBPF_MEM | XBPF_H, LDX_H, "ldxh", LDX, 2, false, true)                        \
	X(XBPF_LDX | XBPF_MEM | XBPF_B, LDX_B, "ldxb", LDX, 1, false, true)                        \
	X(XBPF_LDX | XBPF_MEM | XBPF_DW, LDX_DW, "ldxdw", LDX, 8, true, true)                      \
	X(XBPF_LDX | XBPF_MEMSX | XBPF_W, LDX_SW, "ldxsw", LDX, 4, false, true)                    \
	X(XBPF_LDX | XBPF_MEMSX | XBPF_H, LDX_SH, "ldxsh", LDX, 2, false, true)                    \
	X(XBPF_LDX | XBPF_MEMSX | XBPF_B, LDX_SB, "ldxsb", LDX, 1, false, true)                    \
	X(XBPF_ST | XBPF_MEM | XBPF_W, ST_W, "stw", ST, 4, false, false)                           \
	X(XBPF_ST | XBPF_MEM | XBPF_H, ST_H, "sth", ST, 2, false, false)                           \
	X(XBPF_ST | XBPF_MEM | XBPF_B, ST_B, "stb", ST, 1, false, false)                           \
	X(XBPF_ST | XBPF_MEM | XBPF_DW, ST_DW, "stdw", ST, 8, true, false)                         \
	X(XBPF_STX | XBPF_MEM | XBPF_W, STX_W, "stxw", STX, 4, false, true)                        \
	X(XBPF_STX | XBPF_MEM | XBPF_H, STX_H, "stxh", STX, 2, false, true)                        \
	X(XBPF_STX | XBPF_MEM | XBPF_B, STX_B, "stxb", STX, 1, false, true)                        \
	X(XBPF_STX | XBPF_MEM | XBPF_DW, STX_DW, "stxdw", STX, 8, true, true)                      \
	X(XBPF_STX | XBPF_ATOMIC | XBPF_W, ATOMIC_W, "atomic32", ATOMIC, 4, false, true)           \
	X(XBPF_STX | XBPF_ATOMIC | XBPF_DW, ATOMIC_DW, "atomic64", ATOMIC, 8, true, true)

/* One ALU class: twelve binary operations in K and X form, and neg. */
#define XBPF__ALU_CLASS(X, CLS, PFX, SFX, IS64)                                                    \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, ADD, "add")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, SUB, "sub")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, MUL, "mul")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, DIV, "div")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, OR, "or")                                           \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, AND, "and")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, LSH, "lsh")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, RSH, "rsh")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, MOD, "mod")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, XOR, "xor")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, MOV, "mov")                                         \
	XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, ARSH, "arsh")                                       \
	X((CLS) | XBPF_NEG | XBPF_K, PFX##_NEG, "neg" SFX, ALU_UN, 0, IS64, false)

#define XBPF__ALU_PAIR(X, CLS, PFX, SFX, IS64, OP, MN)                                             \
	X((CLS) | XBPF_##OP | XBPF_K, PFX##_##OP##_K, MN SFX, ALU, 0, IS64, false)                 \
	X((CLS) | XBPF_##OP | XBPF_X, PFX##_##OP##_X, MN SFX, ALU, 0, IS64, true)

/* One jump class: eleven conditions in K and X form. */
#define XBPF__JMP_CLASS(X, CLS, PFX, SFX, IS64)                                                    \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JEQ, "jeq")                                         \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JGT, "jgt")                                         \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JGE, "jge")                                         \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JSET, "jset")                                       \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JNE, "jne")                                         \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JSGT, "jsgt")                                       \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JSGE, "jsge")                                       \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JLT, "jlt")                                         \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JLE, "jle")                                         \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JSLT, "jslt")                                       \
	XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, JSLE, "jsle")

#define XBPF__JMP_PAIR(X, CLS, PFX, SFX, IS64, OP, MN)                                             \
	X((CLS) | XBPF_##OP | XBPF_K, PFX##_##OP##_K, MN SFX, JCOND, 0, IS64, false)               \
	X((CLS) | XBPF_##OP | XBPF_X, PFX##_##OP##_X, MN SFX, JCOND, 0, IS64, true)

/* How an opcode's fields are laid out; the engines dispatch on it. */
enum xbpf_opfmt {
	XBPF_FMT_INVALID = 0,
	XBPF_FMT_ALU,	 /* dst op= src/imm */
	XBPF_FMT_ALU_UN, /* neg, end/bswap: dst only */
	XBPF_FMT_LDIMM64,
	XBPF_FMT_LDABS, /* legacy packet access */
	XBPF_FMT_LDX,
	XBPF_FMT_ST,
	XBPF_FMT_STX,
	XBPF_FMT_ATOMIC,
	XBPF_FMT_JA,
	XBPF_FMT_JCOND,
	XBPF_FMT_CALL,
	XBPF_FMT_EXIT,
};

/* Opcode descriptor: what one 8-bit opcode may carry. */
struct xbpf_opdesc {
	const char *mnemonic; /* "add64", "ldxw", "jeq", ...; NULL if invalid */
	enum xbpf_opfmt fmt;
	uint8_t size;	   /* memory access width in bytes, 0 if none */
	bool is64;	   /* ALU64 / JMP (not JMP32) */
	bool uses_src_reg; /* src_reg is a register operand */
};

/* The 256 descriptors, expanded from XBPF_OPCODES (opcodes.c). */
extern const struct xbpf_opdesc xbpf_opcode_table[256];

/* Descriptor of an opcode; fmt == XBPF_FMT_INVALID if the opcode is unknown. */
static inline const struct xbpf_opdesc *xbpf_opcode_desc(uint8_t code)
{
	return &xbpf_opcode_table[code];
}

/* Length in slots of the instruction at insns[idx] (2 for ld_imm64). */
static inline int xbpf_insn_len(const struct xbpf_insn *insn)
{
	return insn->code == (XBPF_LD | XBPF_DW | XBPF_IMM) ? 2 : 1;
}

static inline bool xbpf_insn_is_pseudo_call(const struct xbpf_insn *insn)
{
	return insn->code == (XBPF_JMP | XBPF_CALL) && insn->src_reg == XBPF_PSEUDO_CALL;
}

static inline bool xbpf_insn_is_helper_call(const struct xbpf_insn *insn)
{
	return insn->code == (XBPF_JMP | XBPF_CALL) && insn->src_reg == 0;
}

/* A jump (ja, gotol or conditional), not a call or an exit. */
static inline bool xbpf_insn_is_jump(const struct xbpf_insn *insn)
{
	enum xbpf_opfmt fmt = xbpf_opcode_desc(insn->code)->fmt;

	return fmt == XBPF_FMT_JA || fmt == XBPF_FMT_JCOND;
}

/* Target slot of the jump at insns[idx] (gotol keeps its offset in imm). */
static inline int64_t xbpf_jump_target(const struct xbpf_insn *insn, size_t idx)
{
	if (insn->code == (XBPF_JMP32 | XBPF_JA))
		return (int64_t)idx + insn->imm + 1;
	return (int64_t)idx + insn->off + 1;
}

/* A reference to a function entry: bpf-to-bpf call or callback address (ld_imm64 PSEUDO_FUNC). */
static inline bool xbpf_insn_is_func_ref(const struct xbpf_insn *insn)
{
	return xbpf_insn_is_pseudo_call(insn) ||
	       (insn->code == (XBPF_LD | XBPF_DW | XBPF_IMM) && insn->src_reg == XBPF_PSEUDO_FUNC);
}

/* Entry slot named by the function reference at insns[idx]. */
static inline int64_t xbpf_func_ref_target(const struct xbpf_insn *insn, size_t idx)
{
	return (int64_t)idx + insn->imm + 1;
}

/* An instruction after which control never falls through to the next slot. */
static inline bool xbpf_insn_ends_block(const struct xbpf_insn *insn)
{
	return insn->code == (XBPF_JMP | XBPF_EXIT) || insn->code == (XBPF_JMP | XBPF_JA) ||
	       insn->code == (XBPF_JMP32 | XBPF_JA);
}

/*
 * Functions of a program, given as the sorted first slots of func_cnt
 * functions (func_start[0] == 0; func_cnt >= 1).  xbpf_func_of(): index of
 * the function holding slot idx.  xbpf_func_at(): index of the function
 * starting at slot idx, or -1.  Both are binary searches.
 */
uint32_t xbpf_func_of(const uint32_t *func_start, uint32_t func_cnt, uint32_t idx);
int xbpf_func_at(const uint32_t *func_start, uint32_t func_cnt, int64_t idx);

/*
 * Check the encoding of insns[idx] alone: known opcode, registers in range,
 * reserved fields zero, ld_imm64 complete.  Returns 0 or -EINVAL and, when
 * ret_msg is not NULL, a static message in the kernel verifier's wording.
 */
int xbpf_insn_check(const struct xbpf_insn *insns, size_t cnt, size_t idx, const char **ret_msg);
/*
 * The part of xbpf_insn_check() the kernel applies to every instruction at
 * load time (LDX reserved fields, ld_imm64 shape, opcode in the table); the
 * rest it applies only to instructions a path reaches.
 */
int xbpf_insn_check_load(const struct xbpf_insn *insns, size_t cnt, size_t idx, const char **ret_msg);

/* Callbacks that let the caller name helpers and maps in disassembly. */
struct xbpf_disasm_cbs {
	/* Name of helper `id`, or NULL for "unknown". */
	const char *(*helper_name)(void *priv, int32_t id);
	/* Text for an ld_imm64 with a pseudo src_reg; return NULL for the default. */
	const char *(*ldimm64_text)(void *priv, const struct xbpf_insn *insn, char *buf, size_t len);
	void *priv;
};

/*
 * Print insns[idx] in the kernel's xlated syntax ("r1 = *(u32 *)(r1 +0)",
 * "call pc+3", "goto pc-2") into buf.  Returns the number of slots consumed
 * (1 or 2) or -EINVAL for an undecodable instruction (buf then explains).
 */
int xbpf_disasm_insn(const struct xbpf_insn *insns, size_t cnt, size_t idx,
		     const struct xbpf_disasm_cbs *cbs, char *buf, size_t len);

#endif /* XBPF_ISA_H */
