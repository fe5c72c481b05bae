/* SPDX-License-Identifier: MIT */
/*
 * insn.h - the instruction builders of every test: brace initializers for
 * eBPF programs in test tables, I() to use one as a value.  Names follow the
 * instruction classes: A64/A32 for ALU, J/J32 for jumps; OP and SZ are the
 * XBPF_ names without their prefix (ADD, JEQ, W, DW).  Opcodes chosen at run
 * time go through INSN() with the full code.  Helper ids are the kernel's
 * BPF_FUNC_* numbers; context offsets are XDP_MD(field) and SKB(field).
 */
#ifndef XBPF_TEST_INSN_H
#define XBPF_TEST_INSN_H

#include <stddef.h>

#include <linux/bpf.h>

#include "xbpf_isa.h"

/* A brace initializer, usable in static tables; I() makes it a value for assignments. */
#define INSN(CODE, DST, SRC, OFF, IMM)                                                             \
	{ .code = (CODE), .dst_reg = (DST), .src_reg = (SRC), .off = (OFF), .imm = (IMM) }
#define I(...) ((struct xbpf_insn)__VA_ARGS__)

/* dst op= imm / dst op= src (ALU64 and 32-bit ALU). */
#define A64K(OP, DST, IMM) INSN(XBPF_ALU64 | XBPF_##OP | XBPF_K, DST, 0, 0, IMM)
#define A64X(OP, DST, SRC) INSN(XBPF_ALU64 | XBPF_##OP | XBPF_X, DST, SRC, 0, 0)
#define A32K(OP, DST, IMM) INSN(XBPF_ALU | XBPF_##OP | XBPF_K, DST, 0, 0, IMM)
#define A32X(OP, DST, SRC) INSN(XBPF_ALU | XBPF_##OP | XBPF_X, DST, SRC, 0, 0)
/* Signed division/modulo (off 1) and sign-extending moves (off 8/16/32). */
#define S64K(OP, DST, IMM) INSN(XBPF_ALU64 | XBPF_##OP | XBPF_K, DST, 0, 1, IMM)
#define S64X(OP, DST, SRC) INSN(XBPF_ALU64 | XBPF_##OP | XBPF_X, DST, SRC, 1, 0)
#define S32K(OP, DST, IMM) INSN(XBPF_ALU | XBPF_##OP | XBPF_K, DST, 0, 1, IMM)
#define S32X(OP, DST, SRC) INSN(XBPF_ALU | XBPF_##OP | XBPF_X, DST, SRC, 1, 0)
#define MOVSX64(DST, SRC, BITS) INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, DST, SRC, BITS, 0)
#define MOVSX32(DST, SRC, BITS) INSN(XBPF_ALU | XBPF_MOV | XBPF_X, DST, SRC, BITS, 0)
#define MOV64K(DST, IMM) A64K(MOV, DST, IMM)
#define MOV64X(DST, SRC) A64X(MOV, DST, SRC)
#define MOV32K(DST, IMM) A32K(MOV, DST, IMM)
#define MOV32X(DST, SRC) A32X(MOV, DST, SRC)
#define NEG64(DST) INSN(XBPF_ALU64 | XBPF_NEG, DST, 0, 0, 0)
#define NEG32(DST) INSN(XBPF_ALU | XBPF_NEG, DST, 0, 0, 0)
#define LE(DST, BITS) INSN(XBPF_ALU | XBPF_END | XBPF_TO_LE, DST, 0, 0, BITS)
#define BE(DST, BITS) INSN(XBPF_ALU | XBPF_END | XBPF_TO_BE, DST, 0, 0, BITS)
#define BSWAP(DST, BITS) INSN(XBPF_ALU64 | XBPF_END | XBPF_TO_LE, DST, 0, 0, BITS)

/* Two slots: a 64-bit immediate (src 0) or a pseudo reference (src != 0). */
#define LDIMM64_SRC(DST, SRC, IMM64)                                                               \
	INSN(XBPF_LD | XBPF_DW | XBPF_IMM, DST, SRC, 0, (int32_t)(uint32_t)(IMM64)),             \
		INSN(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(IMM64) >> 32))
#define LDIMM64(DST, IMM64) LDIMM64_SRC(DST, 0, IMM64)
/* Map IDX of the program's map list, and OFF bytes into its value. */
#define LD_MAP(DST, IDX) LDIMM64_SRC(DST, XBPF_PSEUDO_MAP_FD, IDX)
#define LD_MAP_VALUE(DST, IDX, OFF)                                                                \
	INSN(XBPF_LD | XBPF_DW | XBPF_IMM, DST, XBPF_PSEUDO_MAP_VALUE, 0, IDX), INSN(0, 0, 0, 0, OFF)

/* Memory: SZ is W, H, B or DW. */
#define LDX(SZ, DST, SRC, OFF) INSN(XBPF_LDX | XBPF_MEM | XBPF_##SZ, DST, SRC, OFF, 0)
#define LDXSX(SZ, DST, SRC, OFF) INSN(XBPF_LDX | XBPF_MEMSX | XBPF_##SZ, DST, SRC, OFF, 0)
#define STX(SZ, DST, SRC, OFF) INSN(XBPF_STX | XBPF_MEM | XBPF_##SZ, DST, SRC, OFF, 0)
#define ST(SZ, DST, OFF, IMM) INSN(XBPF_ST | XBPF_MEM | XBPF_##SZ, DST, 0, OFF, IMM)
#define ATOMIC(SZ, OPIMM, DST, SRC, OFF) INSN(XBPF_STX | XBPF_ATOMIC | XBPF_##SZ, DST, SRC, OFF, OPIMM)
#define LDABS(SZ, IMM) INSN(XBPF_LD | XBPF_ABS | XBPF_##SZ, 0, 0, 0, IMM)
#define LDIND(SZ, SRC, IMM) INSN(XBPF_LD | XBPF_IND | XBPF_##SZ, 0, SRC, 0, IMM)

/* Jumps: OP is JEQ, JGT, ...; OFF is relative to the next instruction. */
#define JK(OP, DST, IMM, OFF) INSN(XBPF_JMP | XBPF_##OP | XBPF_K, DST, 0, OFF, IMM)
#define JX(OP, DST, SRC, OFF) INSN(XBPF_JMP | XBPF_##OP | XBPF_X, DST, SRC, OFF, 0)
#define J32K(OP, DST, IMM, OFF) INSN(XBPF_JMP32 | XBPF_##OP | XBPF_K, DST, 0, OFF, IMM)
#define J32X(OP, DST, SRC, OFF) INSN(XBPF_JMP32 | XBPF_##OP | XBPF_X, DST, SRC, OFF, 0)
#define JA(OFF) INSN(XBPF_JMP | XBPF_JA, 0, 0, OFF, 0)
#define GOTOL(IMM) INSN(XBPF_JMP32 | XBPF_JA, 0, 0, 0, IMM)
#define CALL_HELPER(ID) INSN(XBPF_JMP | XBPF_CALL, 0, 0, 0, ID)
#define CALL_PC(OFF) INSN(XBPF_JMP | XBPF_CALL, 0, XBPF_PSEUDO_CALL, 0, OFF)
#define EXIT() INSN(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0)

/* Context fields, in the UAPI layouts every engine uses. */
#define XDP_MD(FIELD) ((int16_t)offsetof(struct xdp_md, FIELD))
#define SKB(FIELD) ((int16_t)offsetof(struct __sk_buff, FIELD))

#endif /* XBPF_TEST_INSN_H */
