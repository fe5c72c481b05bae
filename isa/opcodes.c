/* SPDX-License-Identifier: MIT */
/*
 * opcodes.c - the opcode table: which of the 256 opcodes exist and what each
 * one carries.  Every other part (encoding checks, disassembler, verifier,
 * interpreter, JITs) asks this table instead of keeping its own switch, so
 * that they cannot disagree about what an encoding means.
 */
#include "xbpf_isa.h"

#define ALU_OPS(CLASS, SFX, IS64)                                                                  \
	ALU_PAIR(XBPF_ADD, CLASS, "add" SFX, IS64),                                                \
	ALU_PAIR(XBPF_SUB, CLASS, "sub" SFX, IS64),                                                \
	ALU_PAIR(XBPF_MUL, CLASS, "mul" SFX, IS64),                                                \
	ALU_PAIR(XBPF_DIV, CLASS, "div" SFX, IS64),                                                \
	ALU_PAIR(XBPF_OR, CLASS, "or" SFX, IS64),                                                  \
	ALU_PAIR(XBPF_AND, CLASS, "and" SFX, IS64),                                                \
	ALU_PAIR(XBPF_LSH, CLASS, "lsh" SFX, IS64),                                                \
	ALU_PAIR(XBPF_RSH, CLASS, "rsh" SFX, IS64),                                                \
	ALU_PAIR(XBPF_MOD, CLASS, "mod" SFX, IS64),                                                \
	ALU_PAIR(XBPF_XOR, CLASS, "xor" SFX, IS64),                                                \
	ALU_PAIR(XBPF_MOV, CLASS, "mov" SFX, IS64),                                                \
	ALU_PAIR(XBPF_ARSH, CLASS, "arsh" SFX, IS64),                                              \
	[XBPF_NEG | XBPF_K | (CLASS)] = { "neg" SFX, XBPF_FMT_ALU_UN, 0, IS64, false }

#define ALU_PAIR(OP, CLASS, NAME, IS64)                                                            \
	[(OP) | XBPF_K | (CLASS)] = { NAME, XBPF_FMT_ALU, 0, IS64, false },                        \
	[(OP) | XBPF_X | (CLASS)] = { NAME, XBPF_FMT_ALU, 0, IS64, true }

#define JMP_OPS(CLASS, SFX, IS64)                                                                  \
	JMP_PAIR(XBPF_JEQ, CLASS, "jeq" SFX, IS64),                                                \
	JMP_PAIR(XBPF_JGT, CLASS, "jgt" SFX, IS64),                                                \
	JMP_PAIR(XBPF_JGE, CLASS, "jge" SFX, IS64),                                                \
	JMP_PAIR(XBPF_JSET, CLASS, "jset" SFX, IS64),                                              \
	JMP_PAIR(XBPF_JNE, CLASS, "jne" SFX, IS64),                                                \
	JMP_PAIR(XBPF_JSGT, CLASS, "jsgt" SFX, IS64),                                              \
	JMP_PAIR(XBPF_JSGE, CLASS, "jsge" SFX, IS64),                                              \
	JMP_PAIR(XBPF_JLT, CLASS, "jlt" SFX, IS64),                                                \
	JMP_PAIR(XBPF_JLE, CLASS, "jle" SFX, IS64),                                                \
	JMP_PAIR(XBPF_JSLT, CLASS, "jslt" SFX, IS64),                                              \
	JMP_PAIR(XBPF_JSLE, CLASS, "jsle" SFX, IS64)

#define JMP_PAIR(OP, CLASS, NAME, IS64)                                                            \
	[(OP) | XBPF_K | (CLASS)] = { NAME, XBPF_FMT_JCOND, 0, IS64, false },                      \
	[(OP) | XBPF_X | (CLASS)] = { NAME, XBPF_FMT_JCOND, 0, IS64, true }

#define MEM(CLASS, MODE, SIZE, BYTES, NAME, FMT, SRC)                                              \
	[(CLASS) | (MODE) | (SIZE)] = { NAME, FMT, BYTES, (BYTES) == 8, SRC }

static const struct xbpf_opdesc opcode_table[256] = {
	ALU_OPS(XBPF_ALU, "32", false),
	ALU_OPS(XBPF_ALU64, "64", true),
	/* Byte swaps: imm is the width; ALU64 only has the unconditional bswap. */
	[XBPF_ALU | XBPF_END | XBPF_TO_LE] = { "le", XBPF_FMT_ALU_UN, 0, false, false },
	[XBPF_ALU | XBPF_END | XBPF_TO_BE] = { "be", XBPF_FMT_ALU_UN, 0, false, false },
	[XBPF_ALU64 | XBPF_END | XBPF_TO_LE] = { "bswap", XBPF_FMT_ALU_UN, 0, true, false },

	JMP_OPS(XBPF_JMP, "", true),
	JMP_OPS(XBPF_JMP32, "32", false),
	[XBPF_JMP | XBPF_JA] = { "ja", XBPF_FMT_JA, 0, true, false },
	[XBPF_JMP32 | XBPF_JA] = { "gotol", XBPF_FMT_JA, 0, false, false },
	[XBPF_JMP | XBPF_CALL] = { "call", XBPF_FMT_CALL, 0, true, false },
	[XBPF_JMP | XBPF_EXIT] = { "exit", XBPF_FMT_EXIT, 0, true, false },

	[XBPF_LD | XBPF_IMM | XBPF_DW] = { "lddw", XBPF_FMT_LDIMM64, 8, true, false },
	MEM(XBPF_LD, XBPF_ABS, XBPF_W, 4, "ldabsw", XBPF_FMT_LDABS, false),
	MEM(XBPF_LD, XBPF_ABS, XBPF_H, 2, "ldabsh", XBPF_FMT_LDABS, false),
	MEM(XBPF_LD, XBPF_ABS, XBPF_B, 1, "ldabsb", XBPF_FMT_LDABS, false),
	MEM(XBPF_LD, XBPF_IND, XBPF_W, 4, "ldindw", XBPF_FMT_LDABS, true),
	MEM(XBPF_LD, XBPF_IND, XBPF_H, 2, "ldindh", XBPF_FMT_LDABS, true),
	MEM(XBPF_LD, XBPF_IND, XBPF_B, 1, "ldindb", XBPF_FMT_LDABS, true),

	MEM(XBPF_LDX, XBPF_MEM, XBPF_W, 4, "ldxw", XBPF_FMT_LDX, true),
	MEM(XBPF_LDX, XBPF_MEM, XBPF_H, 2, "ldxh", XBPF_FMT_LDX, true),
	MEM(XBPF_LDX, XBPF_MEM, XBPF_B, 1, "ldxb", XBPF_FMT_LDX, true),
	MEM(XBPF_LDX, XBPF_MEM, XBPF_DW, 8, "ldxdw", XBPF_FMT_LDX, true),
	MEM(XBPF_LDX, XBPF_MEMSX, XBPF_W, 4, "ldxsw", XBPF_FMT_LDX, true),
	MEM(XBPF_LDX, XBPF_MEMSX, XBPF_H, 2, "ldxsh", XBPF_FMT_LDX, true),
	MEM(XBPF_LDX, XBPF_MEMSX, XBPF_B, 1, "ldxsb", XBPF_FMT_LDX, true),

	MEM(XBPF_ST, XBPF_MEM, XBPF_W, 4, "stw", XBPF_FMT_ST, false),
	MEM(XBPF_ST, XBPF_MEM, XBPF_H, 2, "sth", XBPF_FMT_ST, false),
	MEM(XBPF_ST, XBPF_MEM, XBPF_B, 1, "stb", XBPF_FMT_ST, false),
	MEM(XBPF_ST, XBPF_MEM, XBPF_DW, 8, "stdw", XBPF_FMT_ST, false),

	MEM(XBPF_STX, XBPF_MEM, XBPF_W, 4, "stxw", XBPF_FMT_STX, true),
	MEM(XBPF_STX, XBPF_MEM, XBPF_H, 2, "stxh", XBPF_FMT_STX, true),
	MEM(XBPF_STX, XBPF_MEM, XBPF_B, 1, "stxb", XBPF_FMT_STX, true),
	MEM(XBPF_STX, XBPF_MEM, XBPF_DW, 8, "stxdw", XBPF_FMT_STX, true),
	MEM(XBPF_STX, XBPF_ATOMIC, XBPF_W, 4, "atomic32", XBPF_FMT_ATOMIC, true),
	MEM(XBPF_STX, XBPF_ATOMIC, XBPF_DW, 8, "atomic64", XBPF_FMT_ATOMIC, true),
};

const struct xbpf_opdesc *xbpf_opcode_desc(uint8_t code)
{
	return &opcode_table[code];
}
