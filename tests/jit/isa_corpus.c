/* SPDX-License-Identifier: MIT */
/*
 * isa_corpus.c - the ISA test corpus and its runner (see isa_corpus.h).
 *
 * Expected values were worked out by hand from the eBPF ISA document and the
 * kernel's semantics; test_isa_kernel.c checks every kernel-acceptable case
 * against the running kernel, so a wrong expectation cannot hide.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "isa_corpus.h"
#include "insn.h"

#define PROG(...)                                                                                  \
	.insns = (const struct xbpf_insn[]){ __VA_ARGS__ },                                        \
	.insn_cnt = sizeof((const struct xbpf_insn[]){ __VA_ARGS__ }) / sizeof(struct xbpf_insn)

/* 32 bytes: 0x80..0x8f then 0x00..0x0f. */
static const uint8_t mem32[32] = {
	0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};
#define MEM32 .mem = mem32, .mem_len = sizeof(mem32)

/* A 64-byte packet: byte i is 0x10 + i. */
static const uint8_t pkt64[64] = {
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f,
	0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f,
	0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
};
#define PKT64 .mem = pkt64, .mem_len = sizeof(pkt64), .type = XBPF_PROG_SCHED_CLS, .flags = ISA_F_LEGACY

#define NOK(reason) .flags = ISA_F_NO_KERNEL, .kernel_skip = (reason)

/* r0 = a; r1 = b; r0 OP= r1 (ALU64 or ALU, X form). */
#define BIN64X(OP, A, B) PROG(LDIMM64(0, A), LDIMM64(1, B), A64X(OP, 0, 1), EXIT())
#define BIN32X(OP, A, B) PROG(LDIMM64(0, A), LDIMM64(1, B), A32X(OP, 0, 1), EXIT())
#define BIN64K(OP, A, K) PROG(LDIMM64(0, A), A64K(OP, 0, K), EXIT())
#define BIN32K(OP, A, K) PROG(LDIMM64(0, A), A32K(OP, 0, K), EXIT())
#define SBIN64X(OP, A, B) PROG(LDIMM64(0, A), LDIMM64(1, B), S64X(OP, 0, 1), EXIT())
#define SBIN32X(OP, A, B) PROG(LDIMM64(0, A), LDIMM64(1, B), S32X(OP, 0, 1), EXIT())
#define SBIN64K(OP, A, K) PROG(LDIMM64(0, A), S64K(OP, 0, K), EXIT())
#define SBIN32K(OP, A, K) PROG(LDIMM64(0, A), S32K(OP, 0, K), EXIT())
#define UN(INSN_, A) PROG(LDIMM64(0, A), INSN_, EXIT())

/*
 * Atomic on the stack slot r10-8 holding V with src r2 = S; the program
 * checks the slot holds MEMV afterwards (else returns 0xbad) and returns r2.
 */
#define ATOMIC_CASE(SZ, OPIMM, V, S, MEMV)                                                        \
	PROG(LDIMM64(1, V), STX(DW, 10, 1, -8), LDIMM64(2, S), ATOMIC(SZ, OPIMM, 10, 2, -8),      \
	     LDX(DW, 3, 10, -8), LDIMM64(4, MEMV), JX(JNE, 3, 4, 2), MOV64X(0, 2), EXIT(),        \
	     MOV64K(0, 0xbad), EXIT())
/* cmpxchg with r0 = CMP before: checks the slot, returns r0. */
#define CMPXCHG_CASE(SZ, V, CMP, S, MEMV)                                                         \
	PROG(LDIMM64(1, V), STX(DW, 10, 1, -8), LDIMM64(2, S), LDIMM64(0, CMP),                   \
	     ATOMIC(SZ, XBPF_CMPXCHG, 10, 2, -8), LDX(DW, 3, 10, -8), LDIMM64(4, MEMV),           \
	     JX(JNE, 3, 4, 1), EXIT(), MOV64K(0, 0xbad), EXIT())

#define AV 0xf0f0f0f012345678ull
#define AS 0x0f0f0f0f87654321ull
#define I64_MIN 0x8000000000000000ull

static const struct isa_case static_cases[] = {
	/* ---- ALU64 / ALU ---- */
	{ "add64_k_overflow", BIN64K(ADD, 0x7fffffffffffffffull, 1), .expect = I64_MIN },
	{ "add64_x_carry", BIN64X(ADD, 0xffffffffull, 1), .expect = 0x100000000ull },
	{ "add64_k_neg", BIN64K(ADD, 5, -6), .expect = 0xffffffffffffffffull },
	{ "add32_x_wrap_zext", BIN32X(ADD, 0xffffffffffffffffull, 1), .expect = 0 },
	{ "add32_k_drops_carry", BIN32K(ADD, 0x1ffffffffull, 2), .expect = 1 },
	{ "sub64_k_borrow", BIN64K(SUB, 0, 1), .expect = 0xffffffffffffffffull },
	{ "sub64_x", BIN64X(SUB, 0x100000000ull, 1), .expect = 0xffffffffull },
	{ "sub32_k_zext", BIN32K(SUB, 0x500000000ull, 1), .expect = 0xffffffffull },
	{ "mul64_x_wrap", BIN64X(MUL, 0x100000001ull, 0x100000001ull), .expect = 0x200000001ull },
	{ "mul64_k_neg", BIN64K(MUL, 3, -2), .expect = 0xfffffffffffffffaull },
	{ "mul32_k", BIN32K(MUL, 0xffffffff00010001ull, 0x10001), .expect = 0x20001 },
	{ "mul32_x_neg", BIN32X(MUL, 7, (uint64_t)-3), .expect = 0xffffffebull },
	{ "div64_x", BIN64X(DIV, 100, 7), .expect = 14 },
	{ "div64_x_by_zero", BIN64X(DIV, 100, 0), .expect = 0 },
	{ "div64_k_by_zero", BIN64K(DIV, 100, 0), .expect = 0, NOK("div by zero") },
	{ "div64_k_neg_is_huge", BIN64K(DIV, 100, -1), .expect = 0 },
	{ "div64_k_max_by_neg", BIN64K(DIV, 0xffffffffffffffffull, -1), .expect = 1 },
	{ "div32_x_ignores_upper", BIN32X(DIV, 0x100000010ull, 0x100000002ull), .expect = 8 },
	{ "div32_x_by_zero", BIN32X(DIV, 0xffffffffffffffffull, 0x100000000ull), .expect = 0 },
	{ "div32_k_by_zero", BIN32K(DIV, 0xffffffffffffffffull, 0), .expect = 0, NOK("div by zero") },
	{ "div32_k_neg", BIN32K(DIV, 0xffffffffull, -1), .expect = 1 },
	{ "mod64_x", BIN64X(MOD, 100, 7), .expect = 2 },
	{ "mod64_x_by_zero", BIN64X(MOD, 0x1234567890ull, 0), .expect = 0x1234567890ull },
	{ "mod64_k_by_zero", BIN64K(MOD, 0x1234567890ull, 0), .expect = 0x1234567890ull,
	  NOK("div by zero") },
	{ "mod64_k_neg_is_huge", BIN64K(MOD, 100, -1), .expect = 100 },
	{ "mod32_x", BIN32X(MOD, 0xffffffff0000000aull, 3), .expect = 1 },
	{ "mod32_x_by_zero_zext", BIN32X(MOD, 0xaaaaaaaa12345678ull, 0x100000000ull),
	  .expect = 0x12345678 },
	{ "mod32_k_by_zero_zext", BIN32K(MOD, 0xaaaaaaaa12345678ull, 0), .expect = 0x12345678,
	  NOK("div by zero") },
	{ "sdiv64_x", SBIN64X(DIV, (uint64_t)-100, 7), .expect = (uint64_t)-14 },
	{ "sdiv64_k", SBIN64K(DIV, (uint64_t)-7, 2), .expect = (uint64_t)-3 },
	{ "sdiv64_x_neg_neg", SBIN64X(DIV, (uint64_t)-100, (uint64_t)-7), .expect = 14 },
	{ "sdiv64_x_intmin_by_neg1", SBIN64X(DIV, I64_MIN, (uint64_t)-1), .expect = I64_MIN },
	{ "sdiv64_k_intmin_by_neg1", SBIN64K(DIV, I64_MIN, -1), .expect = I64_MIN },
	{ "sdiv64_x_by_zero", SBIN64X(DIV, (uint64_t)-5, 0), .expect = 0 },
	{ "smod64_x", SBIN64X(MOD, (uint64_t)-100, 7), .expect = (uint64_t)-2 },
	{ "smod64_x_neg_divisor", SBIN64X(MOD, 100, (uint64_t)-7), .expect = 2 },
	{ "smod64_k", SBIN64K(MOD, (uint64_t)-9, 4), .expect = (uint64_t)-1 },
	{ "smod64_x_intmin_by_neg1", SBIN64X(MOD, I64_MIN, (uint64_t)-1), .expect = 0 },
	{ "smod64_x_by_zero", SBIN64X(MOD, (uint64_t)-5, 0), .expect = (uint64_t)-5 },
	{ "sdiv32_x", SBIN32X(DIV, 0x7ffffff9cull, 7), .expect = 0xfffffff2ull },
	{ "sdiv32_x_intmin_by_neg1", SBIN32X(DIV, 0x80000000ull, (uint64_t)-1), .expect = 0x80000000ull },
	{ "sdiv32_k_intmin_by_neg1", SBIN32K(DIV, 0x80000000ull, -1), .expect = 0x80000000ull },
	{ "sdiv32_x_by_zero", SBIN32X(DIV, 0xffffffff80000000ull, 0x100000000ull), .expect = 0 },
	{ "smod32_x", SBIN32X(MOD, 0x7ffffff9cull, 7), .expect = 0xfffffffeull },
	{ "smod32_k", SBIN32K(MOD, 100, -7), .expect = 2 },
	{ "smod32_x_intmin_by_neg1", SBIN32X(MOD, 0x80000000ull, (uint64_t)-1), .expect = 0 },
	{ "smod32_x_by_zero_zext", SBIN32X(MOD, 0xdead0000fffffffbull, 0), .expect = 0xfffffffbull },
	{ "or64_k", BIN64K(OR, 0xf0f0000000000000ull, 0x0f), .expect = 0xf0f000000000000full },
	{ "or64_k_neg_sext", BIN64K(OR, 0, -16), .expect = 0xfffffffffffffff0ull },
	{ "or32_k_zext", BIN32K(OR, 0xffff000000000000ull, 1), .expect = 1 },
	{ "and64_x", BIN64X(AND, 0xff00ff00ff00ff00ull, 0x0ff00ff00ff00ff0ull),
	  .expect = 0x0f000f000f000f00ull },
	{ "and64_k_neg_sext", BIN64K(AND, 0x123456789abcdef0ull, -256), .expect = 0x123456789abcde00ull },
	{ "and32_k_zext", BIN32K(AND, 0x123456789abcdef0ull, -1), .expect = 0x9abcdef0ull },
	{ "xor64_x", BIN64X(XOR, 0x5555555555555555ull, (uint64_t)-1), .expect = 0xaaaaaaaaaaaaaaaaull },
	{ "xor32_x_zext", BIN32X(XOR, 0xffffffff0000ffffull, 0xffffffffffffffffull), .expect = 0xffff0000ull },
	{ "lsh64_x_63", BIN64X(LSH, 1, 63), .expect = I64_MIN },
	{ "lsh64_x_64_masked", BIN64X(LSH, 3, 64), .expect = 3 },
	{ "lsh64_x_65_masked", BIN64X(LSH, 3, 65), .expect = 6 },
	{ "lsh64_k_32", BIN64K(LSH, 1, 32), .expect = 0x100000000ull },
	{ "lsh64_k_64", BIN64K(LSH, 5, 64), .expect = 5, NOK("invalid shift 64") },
	{ "lsh32_x_31", BIN32X(LSH, 0xff00000003ull, 31), .expect = 0x80000000ull },
	{ "lsh32_x_32_masked", BIN32X(LSH, 0xff00000003ull, 32), .expect = 3 },
	{ "lsh32_k_32", BIN32K(LSH, 0x700000005ull, 32), .expect = 5, NOK("invalid shift 32") },
	{ "rsh64_x_63", BIN64X(RSH, I64_MIN, 63), .expect = 1 },
	{ "rsh64_k_32", BIN64K(RSH, 0x1234567800000000ull, 32), .expect = 0x12345678 },
	{ "rsh64_x_64_masked", BIN64X(RSH, 0x1234567800000000ull, 64), .expect = 0x1234567800000000ull },
	{ "rsh32_x_31", BIN32X(RSH, 0xffffffff80000000ull, 31), .expect = 1 },
	{ "rsh32_x_32_masked", BIN32X(RSH, 0xffffffff80000000ull, 32), .expect = 0x80000000ull },
	{ "rsh32_k_zext", BIN32K(RSH, 0xffffffff80000000ull, 4), .expect = 0x08000000ull },
	{ "arsh64_x_63", BIN64X(ARSH, I64_MIN, 63), .expect = 0xffffffffffffffffull },
	{ "arsh64_k", BIN64K(ARSH, (uint64_t)-256, 4), .expect = (uint64_t)-16 },
	{ "arsh64_x_64_masked", BIN64X(ARSH, (uint64_t)-256, 64), .expect = (uint64_t)-256 },
	{ "arsh32_x_31", BIN32X(ARSH, 0x80000000ull, 31), .expect = 0xffffffffull },
	{ "arsh32_k_neg", BIN32K(ARSH, 0x180000000ull, 4), .expect = 0xf8000000ull },
	{ "arsh32_k_pos", BIN32K(ARSH, 0xffffffff40000000ull, 30), .expect = 1 },
	{ "arsh32_x_32_masked", BIN32X(ARSH, 0x80000000ull, 32), .expect = 0x80000000ull },
	{ "neg64", UN(NEG64(0), 5), .expect = (uint64_t)-5 },
	{ "neg64_intmin", UN(NEG64(0), I64_MIN), .expect = I64_MIN },
	{ "neg32_zext", UN(NEG32(0), 0xffffffff00000001ull), .expect = 0xffffffffull },
	{ "neg32_zero", UN(NEG32(0), 0x500000000ull), .expect = 0 },
	{ "mov64_k_sext", PROG(MOV64K(0, -1), EXIT()), .expect = 0xffffffffffffffffull },
	{ "mov32_k_zext", PROG(LDIMM64(0, 0x123456789abcdef0ull), A32K(MOV, 0, -1), EXIT()),
	  .expect = 0xffffffffull },
	{ "mov32_x_zext", PROG(MOV64K(1, -1), A32X(MOV, 0, 1), EXIT()), .expect = 0xffffffffull },
	{ "mov64_x", PROG(LDIMM64(1, 0x1122334455667788ull), MOV64X(0, 1), EXIT()),
	  .expect = 0x1122334455667788ull },
	{ "movsx64_s8_neg", PROG(LDIMM64(1, 0x1234567800000080ull), MOVSX64(0, 1, 8), EXIT()),
	  .expect = 0xffffffffffffff80ull },
	{ "movsx64_s8_pos", PROG(LDIMM64(1, 0xffffffffffffff7full), MOVSX64(0, 1, 8), EXIT()),
	  .expect = 0x7f },
	{ "movsx64_s16_neg", PROG(MOV64K(1, 0x8001), MOVSX64(0, 1, 16), EXIT()),
	  .expect = 0xffffffffffff8001ull },
	{ "movsx64_s32_neg", PROG(LDIMM64(1, 0x80000000ull), MOVSX64(0, 1, 32), EXIT()),
	  .expect = 0xffffffff80000000ull },
	{ "movsx64_s32_pos", PROG(LDIMM64(1, 0xffffffff7fffffffull), MOVSX64(0, 1, 32), EXIT()),
	  .expect = 0x7fffffff },
	{ "movsx32_s8_zext", PROG(MOV64K(1, 0x80), MOVSX32(0, 1, 8), EXIT()), .expect = 0xffffff80ull },
	{ "movsx32_s16_zext", PROG(LDIMM64(1, 0xffffffff00008000ull), MOVSX32(0, 1, 16), EXIT()),
	  .expect = 0xffff8000ull },
	{ "movsx32_s16_pos", PROG(MOV64K(1, 0x17fff), MOVSX32(0, 1, 16), EXIT()), .expect = 0x7fff },
	{ "be16_truncates", UN(BE(0, 16), 0x1122334455667788ull), .expect = 0x8877 },
	{ "be32_truncates", UN(BE(0, 32), 0x1122334455667788ull), .expect = 0x88776655ull },
	{ "be64", UN(BE(0, 64), 0x1122334455667788ull), .expect = 0x8877665544332211ull },
	{ "le16_truncates", UN(LE(0, 16), 0x1122334455667788ull), .expect = 0x7788 },
	{ "le32_truncates", UN(LE(0, 32), 0x1122334455667788ull), .expect = 0x55667788ull },
	{ "le64", UN(LE(0, 64), 0x1122334455667788ull), .expect = 0x1122334455667788ull },
	{ "bswap16", UN(BSWAP(0, 16), 0x1122334455667788ull), .expect = 0x8877 },
	{ "bswap32", UN(BSWAP(0, 32), 0x1122334455667788ull), .expect = 0x88776655ull },
	{ "bswap64", UN(BSWAP(0, 64), 0x1122334455667788ull), .expect = 0x8877665544332211ull },
	{ "ldimm64", PROG(LDIMM64(0, 0x1122334455667788ull), EXIT()), .expect = 0x1122334455667788ull },
	{ "ldimm64_lo_not_sext", PROG(LDIMM64(0, 0x80000000ull), EXIT()), .expect = 0x80000000ull },
	{ "ldimm64_hi_only", PROG(LDIMM64(0, 0xffffffff00000000ull), EXIT()),
	  .expect = 0xffffffff00000000ull },

	/* ---- loads and stores ---- */
	{ "ldxb", PROG(LDX(B, 0, 1, 0), EXIT()), MEM32, .expect = 0x80 },
	{ "ldxh", PROG(LDX(H, 0, 1, 0), EXIT()), MEM32, .expect = 0x8180 },
	{ "ldxw", PROG(LDX(W, 0, 1, 0), EXIT()), MEM32, .expect = 0x83828180ull },
	{ "ldxdw", PROG(LDX(DW, 0, 1, 0), EXIT()), MEM32, .expect = 0x8786858483828180ull },
	{ "ldxw_unaligned", PROG(LDX(W, 0, 1, 1), EXIT()), MEM32, .expect = 0x84838281ull },
	{ "ldxdw_unaligned", PROG(LDX(DW, 0, 1, 3), EXIT()), MEM32, .expect = 0x8a89888786858483ull },
	{ "ldx_neg_off", PROG(A64K(ADD, 1, 8), LDX(H, 0, 1, -2), EXIT()), MEM32, .expect = 0x8786 },
	{ "ldxsb_neg", PROG(LDXSX(B, 0, 1, 0), EXIT()), MEM32, .expect = 0xffffffffffffff80ull },
	{ "ldxsb_pos", PROG(LDXSX(B, 0, 1, 17), EXIT()), MEM32, .expect = 1 },
	{ "ldxsh_neg", PROG(LDXSX(H, 0, 1, 0), EXIT()), MEM32, .expect = 0xffffffffffff8180ull },
	{ "ldxsh_pos", PROG(LDXSX(H, 0, 1, 16), EXIT()), MEM32, .expect = 0x0100 },
	{ "ldxsw_neg", PROG(LDXSX(W, 0, 1, 0), EXIT()), MEM32, .expect = 0xffffffff83828180ull },
	{ "ldxsw_pos", PROG(LDXSX(W, 0, 1, 16), EXIT()), MEM32, .expect = 0x03020100 },
	{ "ldx_dst_is_src", PROG(LDX(DW, 1, 1, 8), MOV64X(0, 1), EXIT()), MEM32,
	  .expect = 0x8f8e8d8c8b8a8988ull },
	{ "stxb_truncates", PROG(MOV64K(3, 0x1ff), STX(B, 1, 3, 1), LDX(H, 0, 1, 0), EXIT()), MEM32,
	  .expect = 0xff80 },
	{ "stxh", PROG(MOV64K(3, 0x12345), STX(H, 1, 3, 2), LDX(W, 0, 1, 0), EXIT()), MEM32,
	  .expect = 0x23458180ull },
	{ "stxw", PROG(LDIMM64(3, 0x1122334455667788ull), STX(W, 1, 3, 4), LDX(DW, 0, 1, 0), EXIT()),
	  MEM32, .expect = 0x5566778883828180ull },
	{ "stxdw", PROG(LDIMM64(3, 0x1122334455667788ull), STX(DW, 1, 3, 8), LDX(DW, 0, 1, 8), EXIT()),
	  MEM32, .expect = 0x1122334455667788ull },
	{ "stxdw_unaligned", PROG(LDIMM64(3, 0x1122334455667788ull), STX(DW, 1, 3, 5), LDX(DW, 0, 1, 8),
				  EXIT()),
	  MEM32, .expect = 0x8f8e8d1122334455ull },
	{ "stb_truncates", PROG(ST(B, 1, 0, 0x1ff), LDX(H, 0, 1, 0), EXIT()), MEM32, .expect = 0x81ff },
	{ "sth_neg", PROG(ST(H, 1, 0, -2), LDX(W, 0, 1, 0), EXIT()), MEM32, .expect = 0x8382fffeull },
	{ "stw_neg", PROG(ST(W, 1, 0, -1), LDX(DW, 0, 1, 0), EXIT()), MEM32,
	  .expect = 0x87868584ffffffffull },
	{ "stdw_sext", PROG(ST(DW, 1, 0, -2), LDX(DW, 0, 1, 0), EXIT()), MEM32,
	  .expect = 0xfffffffffffffffeull },
	{ "stdw_pos", PROG(ST(DW, 1, 8, 0x7fffffff), LDX(DW, 0, 1, 8), EXIT()), MEM32,
	  .expect = 0x7fffffff },
	{ "stack_dw_then_w", PROG(LDIMM64(1, 0x1122334455667788ull), STX(DW, 10, 1, -8),
				  LDX(W, 0, 10, -4), EXIT()),
	  .expect = 0x11223344 },
	{ "stack_dw_then_b", PROG(LDIMM64(1, 0x1122334455667788ull), STX(DW, 10, 1, -8),
				  LDX(B, 0, 10, -1), EXIT()),
	  .expect = 0x11 },
	{ "stack_st_then_ldxsw", PROG(ST(W, 10, -4, -5), LDXSX(W, 0, 10, -4), EXIT()),
	  .expect = (uint64_t)-5 },
	{ "stack_full_512", PROG(ST(DW, 10, -512, 77), ST(DW, 10, -8, 1), LDX(DW, 0, 10, -512),
				 LDX(DW, 1, 10, -8), A64X(ADD, 0, 1), EXIT()),
	  .expect = 78 },

	/* ---- atomics (stack slot r10-8 = AV, src = AS) ---- */
	{ "atomic64_add", ATOMIC_CASE(DW, XBPF_ADD, AV, AS, 0xffffffff99999999ull), .expect = AS },
	{ "atomic64_or", ATOMIC_CASE(DW, XBPF_OR, AV, AS, 0xffffffff97755779ull), .expect = AS },
	{ "atomic64_and", ATOMIC_CASE(DW, XBPF_AND, AV, AS, 0x0000000002244220ull), .expect = AS },
	{ "atomic64_xor", ATOMIC_CASE(DW, XBPF_XOR, AV, AS, 0xffffffff95511559ull), .expect = AS },
	{ "atomic64_fetch_add", ATOMIC_CASE(DW, XBPF_ADD | XBPF_FETCH, AV, AS, 0xffffffff99999999ull),
	  .expect = AV },
	{ "atomic64_fetch_or", ATOMIC_CASE(DW, XBPF_OR | XBPF_FETCH, AV, AS, 0xffffffff97755779ull),
	  .expect = AV },
	{ "atomic64_fetch_and", ATOMIC_CASE(DW, XBPF_AND | XBPF_FETCH, AV, AS, 0x0000000002244220ull),
	  .expect = AV },
	{ "atomic64_fetch_xor", ATOMIC_CASE(DW, XBPF_XOR | XBPF_FETCH, AV, AS, 0xffffffff95511559ull),
	  .expect = AV },
	{ "atomic64_xchg", ATOMIC_CASE(DW, XBPF_XCHG, AV, AS, AS), .expect = AV },
	{ "atomic32_add", ATOMIC_CASE(W, XBPF_ADD, AV, AS, 0xf0f0f0f099999999ull), .expect = AS },
	{ "atomic32_or", ATOMIC_CASE(W, XBPF_OR, AV, AS, 0xf0f0f0f097755779ull), .expect = AS },
	{ "atomic32_and", ATOMIC_CASE(W, XBPF_AND, AV, AS, 0xf0f0f0f002244220ull), .expect = AS },
	{ "atomic32_xor", ATOMIC_CASE(W, XBPF_XOR, AV, AS, 0xf0f0f0f095511559ull), .expect = AS },
	{ "atomic32_fetch_add_zext", ATOMIC_CASE(W, XBPF_ADD | XBPF_FETCH, AV, AS, 0xf0f0f0f099999999ull),
	  .expect = 0x12345678 },
	{ "atomic32_fetch_or_zext", ATOMIC_CASE(W, XBPF_OR | XBPF_FETCH, AV, AS, 0xf0f0f0f097755779ull),
	  .expect = 0x12345678 },
	{ "atomic32_fetch_and_zext", ATOMIC_CASE(W, XBPF_AND | XBPF_FETCH, AV, AS, 0xf0f0f0f002244220ull),
	  .expect = 0x12345678 },
	{ "atomic32_fetch_xor_zext", ATOMIC_CASE(W, XBPF_XOR | XBPF_FETCH, AV, AS, 0xf0f0f0f095511559ull),
	  .expect = 0x12345678 },
	{ "atomic32_xchg_zext", ATOMIC_CASE(W, XBPF_XCHG, AV, AS, 0xf0f0f0f087654321ull),
	  .expect = 0x12345678 },
	{ "cmpxchg64_success", CMPXCHG_CASE(DW, AV, AV, AS, AS), .expect = AV },
	{ "cmpxchg64_failure", CMPXCHG_CASE(DW, AV, AV + 1, AS, AV), .expect = AV },
	{ "cmpxchg32_success_ignores_upper", CMPXCHG_CASE(W, AV, 0xdead000012345678ull, AS,
							  0xf0f0f0f087654321ull),
	  .expect = 0x12345678 },
	{ "cmpxchg32_failure", CMPXCHG_CASE(W, AV, 0x12345679ull, AS, AV), .expect = 0x12345678 },

	/*
	 * ---- pairs the interpreter fuses into one handler (interp.c
	 * FUSED_OPS): mov + add, shift pairs; boundaries, pairs that must not
	 * fuse (other register, movsx), and jumps onto a pair's second slot,
	 * which keeps its own handler ----
	 */
	{ "fused_mov_add64k", PROG(LDIMM64(1, 0x7ffffffffffffff0ull), MOV64X(0, 1), A64K(ADD, 0, 0x20), EXIT()),
	  .expect = 0x8000000000000010ull },
	{ "fused_mov_add64k_neg_k_same_reg", PROG(MOV64K(0, 5), MOV64X(0, 0), A64K(ADD, 0, -6), EXIT()),
	  .expect = 0xffffffffffffffffull },
	{ "fused_mov_add64k_src_kept",
	  PROG(LDIMM64(1, 0x100000000ull), MOV64X(2, 1), A64K(ADD, 2, -1), MOV64X(0, 1), A64X(SUB, 0, 2), EXIT()),
	  .expect = 1 },
	{ "fused_mov_add64k_fp", PROG(MOV64K(1, 77), MOV64X(2, 10), A64K(ADD, 2, -8), STX(DW, 2, 1, 0),
				      LDX(DW, 0, 10, -8), EXIT()),
	  .expect = 77 },
	{ "fused_mov_add64k_other_reg_not_fused",
	  PROG(MOV64K(1, 10), MOV64X(0, 1), A64K(ADD, 1, 5), A64X(SUB, 0, 1), EXIT()), .expect = (uint64_t)-5 },
	{ "fused_movsx_add64k_not_fused", PROG(MOV64K(1, 0x80), MOVSX64(0, 1, 8), A64K(ADD, 0, 1), EXIT()),
	  .expect = (uint64_t)-127 },
	{ "fused_mov_add64k_jump_to_second",
	  PROG(MOV64K(0, 100), MOV64K(1, 7), JK(JNE, 0, 0, 1), MOV64X(0, 1), A64K(ADD, 0, 5), EXIT()), .expect = 105 },
	/* the pair fused on the first pass, then entered at its second slot twice */
	{ "fused_mov_add64k_loop_to_second",
	  PROG(MOV64K(0, 1), MOV64K(2, 0), MOV64X(1, 0), A64K(ADD, 1, 10), A64K(ADD, 2, 1), JK(JGE, 2, 3, 1),
	       JA(-4), MOV64X(0, 1), EXIT()),
	  .expect = 31 },
	{ "fused_lsh_rsh_zext", PROG(LDIMM64(0, 0xfedcba9876543210ull), A64K(LSH, 0, 32), A64K(RSH, 0, 32), EXIT()),
	  .expect = 0x76543210 },
	{ "fused_lsh_rsh_field", PROG(LDIMM64(0, 0xfedcba9876543210ull), A64K(LSH, 0, 8), A64K(RSH, 0, 60), EXIT()),
	  .expect = 0xd },
	{ "fused_lsh_rsh_0_0", PROG(LDIMM64(0, 0xfedcba9876543210ull), A64K(LSH, 0, 0), A64K(RSH, 0, 0), EXIT()),
	  .expect = 0xfedcba9876543210ull },
	{ "fused_lsh_rsh_63_63", PROG(LDIMM64(0, 0xfedcba9876543211ull), A64K(LSH, 0, 63), A64K(RSH, 0, 63), EXIT()),
	  .expect = 1 },
	{ "fused_lsh_arsh_sext", PROG(LDIMM64(0, 0x80000001ull), A64K(LSH, 0, 32), A64K(ARSH, 0, 32), EXIT()),
	  .expect = 0xffffffff80000001ull },
	{ "fused_lsh_arsh_pos", PROG(LDIMM64(0, 0xffffffff7fffffffull), A64K(LSH, 0, 32), A64K(ARSH, 0, 32), EXIT()),
	  .expect = 0x7fffffff },
	{ "fused_lsh_arsh_63_63", PROG(MOV64K(0, 3), A64K(LSH, 0, 63), A64K(ARSH, 0, 63), EXIT()),
	  .expect = 0xffffffffffffffffull },
	{ "fused_lsh_rsh_other_reg_not_fused",
	  PROG(MOV64K(0, 0xff00), MOV64K(1, 0x100), A64K(LSH, 0, 4), A64K(RSH, 1, 4), A64X(ADD, 0, 1), EXIT()),
	  .expect = 0xff010 },
	{ "fused_lsh_rsh_jump_to_second",
	  PROG(LDIMM64(0, 0x1234567800000000ull), JK(JNE, 0, 0, 1), A64K(LSH, 0, 32), A64K(RSH, 0, 32), EXIT()),
	  .expect = 0x12345678 },
	{ "fused_lsh_arsh_jump_to_second",
	  PROG(LDIMM64(0, 0x8000000000000000ull), JK(JNE, 0, 0, 1), A64K(LSH, 0, 1), A64K(ARSH, 0, 63), EXIT()),
	  .expect = 0xffffffffffffffffull },

	/* X forms with a handler per register pair (interp.c PAIR_FAMILIES): dst == src, high registers */
	{ "pair_xor64_x_same_reg", PROG(LDIMM64(0, AV), A64X(XOR, 0, 0), EXIT()), .expect = 0 },
	{ "pair_add64_x_r9_r6", PROG(LDIMM64(6, AV), LDIMM64(9, AS), A64X(ADD, 9, 6), MOV64X(0, 9), EXIT()),
	  .expect = AV + AS },
	{ "pair_sub64_x_r7_r8", PROG(MOV64K(7, 1), LDIMM64(8, 2), A64X(SUB, 7, 8), MOV64X(0, 7), EXIT()),
	  .expect = 0xffffffffffffffffull },
	{ "pair_mul64_x_r5_r4", PROG(LDIMM64(5, AV), LDIMM64(4, AS), A64X(MUL, 5, 4), MOV64X(0, 5), EXIT()),
	  .expect = AV * AS },
	{ "pair_or64_x_r3_r2", PROG(LDIMM64(3, AV), LDIMM64(2, AS), A64X(OR, 3, 2), MOV64X(0, 3), EXIT()),
	  .expect = AV | AS },
	{ "pair_or32_x_zext_r1_r9", PROG(LDIMM64(1, AV), LDIMM64(9, AS), A32X(OR, 1, 9), MOV64X(0, 1), EXIT()),
	  .expect = (uint32_t)(AV | AS) },
	{ "pair_mov32_x_same_reg_zext", PROG(LDIMM64(0, AV), A32X(MOV, 0, 0), EXIT()), .expect = (uint32_t)AV },

	/* ---- jumps (conditions: see the generated cases) ---- */
	{ "ja_fwd_back", PROG(MOV64K(0, 1), JA(2), A64K(ADD, 0, 2), EXIT(), A64K(ADD, 0, 4), JA(-4)),
	  .expect = 7 },
	{ "ja_zero", PROG(JA(0), MOV64K(0, 3), EXIT()), .expect = 3 },
	{ "gotol_fwd_back", PROG(MOV64K(0, 1), GOTOL(2), A64K(ADD, 0, 2), EXIT(), A64K(ADD, 0, 4),
				 GOTOL(-4)),
	  .expect = 7 },
	{ "gotol_back", PROG(MOV64K(0, 0), GOTOL(2), A64K(ADD, 0, 100), EXIT(), A64K(ADD, 0, 1),
			     GOTOL(-4)),
	  .expect = 101 },
	{ "loop_sum_1_to_100", PROG(MOV64K(0, 0), MOV64K(1, 100), A64X(ADD, 0, 1), A64K(SUB, 1, 1),
				    JK(JNE, 1, 0, -3), EXIT()),
	  .expect = 5050 },
	{ "loop_jmp32_low_half", PROG(MOV64K(0, 0), LDIMM64(1, 0x100000005ull), A64K(ADD, 0, 1),
				      A64K(SUB, 1, 1), J32K(JNE, 1, 0, -3), EXIT()),
	  .expect = 5 },
	{ "jmp_k_sext_imm", PROG(LDIMM64(1, 0xffffffffffffffffull), MOV64K(0, 1), JK(JEQ, 1, -1, 1),
				 MOV64K(0, 2), EXIT()),
	  .expect = 1 },
	{ "jmp32_k_ignores_upper", PROG(LDIMM64(1, 0xffffffff00000000ull), MOV64K(0, 1),
					J32K(JEQ, 1, 0, 1), MOV64K(0, 2), EXIT()),
	  .expect = 1 },

	/* ---- bpf-to-bpf calls ---- */
	{ "call_simple", PROG(MOV64K(1, 5), CALL_PC(2), A64K(ADD, 0, 1000), EXIT(), MOV64X(0, 1),
			      A64K(ADD, 0, 1), EXIT()),
	  .expect = 1006 },
	{ "call_five_args", PROG(MOV64K(1, 1), MOV64K(2, 2), MOV64K(3, 3), MOV64K(4, 4), MOV64K(5, 5),
				 CALL_PC(1), EXIT(),
				 MOV64X(0, 1), A64K(MUL, 2, 2), A64X(ADD, 0, 2), A64K(MUL, 3, 3),
				 A64X(ADD, 0, 3), A64K(MUL, 4, 4), A64X(ADD, 0, 4), A64K(MUL, 5, 5),
				 A64X(ADD, 0, 5), EXIT()),
	  .expect = 55 },
	{ "call_preserves_r6_r9", PROG(MOV64K(6, 6), MOV64K(7, 7), MOV64K(8, 8), MOV64K(9, 9),
				       CALL_PC(8), MOV64X(0, 6), A64K(MUL, 0, 10), A64X(ADD, 0, 7),
				       A64K(MUL, 0, 10), A64X(ADD, 0, 8), A64K(MUL, 0, 10),
				       A64X(ADD, 0, 9), EXIT(),
				       MOV64K(6, 0), MOV64K(7, 0), MOV64K(8, 0), MOV64K(9, 0),
				       MOV64K(0, 0), EXIT()),
	  .expect = 6789 },
	{ "call_own_stack", PROG(MOV64K(1, 111), STX(DW, 10, 1, -8), CALL_PC(3), LDX(DW, 1, 10, -8),
				 A64X(ADD, 0, 1), EXIT(),
				 MOV64K(1, 222), STX(DW, 10, 1, -8), LDX(DW, 0, 10, -8), EXIT()),
	  .expect = 333 },
	{ "call_stack_ptr_arg", PROG(MOV64K(1, 7), STX(DW, 10, 1, -8), MOV64X(1, 10), A64K(ADD, 1, -8),
				     CALL_PC(2), LDX(DW, 0, 10, -8), EXIT(),
				     LDX(DW, 2, 1, 0), A64K(MUL, 2, 3), STX(DW, 1, 2, 0), MOV64K(0, 0),
				     EXIT()),
	  .expect = 21 },
	{ "call_stack_ptr_two_levels", PROG(MOV64K(1, 5), STX(DW, 10, 1, -8), MOV64X(1, 10),
					    A64K(ADD, 1, -8), CALL_PC(2), LDX(DW, 0, 10, -8), EXIT(),
					    /* f: its own stack use, then g */
					    ST(DW, 10, -8, 99), CALL_PC(2), LDX(DW, 0, 10, -8), EXIT(),
					    /* g: adds 10 to main's slot */
					    LDX(DW, 2, 1, 0), A64K(ADD, 2, 10), STX(DW, 1, 2, 0),
					    MOV64K(0, 0), EXIT()),
	  .expect = 15 },
	{ "call_mem_arg", PROG(CALL_PC(1), EXIT(), LDX(W, 0, 1, 0), EXIT()), MEM32,
	  .expect = 0x83828180ull },
	{ "call_helper_in_callee", PROG(MOV64K(6, 42), CALL_PC(2), MOV64X(0, 6), EXIT(), MOV64K(6, 1),
					CALL_HELPER(7), MOV64X(0, 6), EXIT()),
	  .expect = 42 },
	{ "call_r0_through_frames", PROG(CALL_PC(2), A64K(ADD, 0, 1), EXIT(), CALL_PC(2),
					 A64K(MUL, 0, 3), EXIT(), MOV64K(0, 4), EXIT()),
	  .expect = 13 },

	/* ---- legacy packet loads (SCHED_CLS: big-endian, bounds-checked) ---- */
	{ "ldabs_b", PROG(MOV64X(6, 1), LDABS(B, 5), EXIT()), PKT64, .expect = 0x15 },
	{ "ldabs_h_big_endian", PROG(MOV64X(6, 1), LDABS(H, 10), EXIT()), PKT64, .expect = 0x1a1b },
	{ "ldabs_w_big_endian", PROG(MOV64X(6, 1), LDABS(W, 20), EXIT()), PKT64, .expect = 0x24252627 },
	{ "ldabs_w_last_bytes", PROG(MOV64X(6, 1), LDABS(W, 60), EXIT()), PKT64, .expect = 0x4c4d4e4f },
	{ "ldabs_w_past_end_ends_prog", PROG(MOV64X(6, 1), LDABS(W, 61), MOV64K(0, 7), EXIT()), PKT64,
	  .expect = 0 },
	{ "ldabs_b_far_past_end", PROG(MOV64X(6, 1), LDABS(B, 100000), MOV64K(0, 7), EXIT()), PKT64,
	  .expect = 0 },
	{ "ldabs_in_bounds_continues", PROG(MOV64X(6, 1), LDABS(B, 63), A64K(ADD, 0, 0x100), EXIT()),
	  PKT64, .expect = 0x14f },
	{ "ldind_b", PROG(MOV64X(6, 1), MOV64K(2, 3), LDIND(B, 2, 4), EXIT()), PKT64, .expect = 0x17 },
	{ "ldind_h_neg_reg", PROG(MOV64X(6, 1), MOV64K(2, -2), LDIND(H, 2, 10), EXIT()), PKT64,
	  .expect = 0x1819 },
	{ "ldind_w_low_half_of_reg", PROG(MOV64X(6, 1), LDIMM64(2, 0x100000004ull), LDIND(W, 2, 0),
					  EXIT()),
	  PKT64, .expect = 0x14151617 },
	{ "ldind_b_negative_ends_prog", PROG(MOV64X(6, 1), MOV64K(2, -20), LDIND(B, 2, 4), MOV64K(0, 7),
					     EXIT()),
	  PKT64, .expect = 0 },

	/* ---- programs only a careless engine would run ---- */
	{ "recursion_stops", PROG(MOV64K(0, 0), CALL_PC(1), EXIT(), CALL_PC(-1), EXIT()),
	  .flags = ISA_F_NO_KERNEL | ISA_F_INTERP_ONLY, .kernel_skip = "recursive call",
	  .run_err = -E2BIG },
	{ "endless_loop_stops", PROG(MOV64K(0, 0), JA(-1), EXIT()),
	  .flags = ISA_F_NO_KERNEL | ISA_F_INTERP_ONLY, .kernel_skip = "infinite loop",
	  .run_err = -ELOOP },
	{ "unknown_helper_stops", PROG(MOV64K(0, 0), CALL_HELPER(0x7ffffff0), EXIT()),
	  .flags = ISA_F_NO_KERNEL | ISA_F_INTERP_ONLY, .kernel_skip = "invalid func",
	  .run_err = -ENOENT },
	{ "reject_jump_out_of_range", PROG(MOV64K(0, 0), JA(5), EXIT()), .load_err = EINVAL,
	  .kernel_reject = "jump out of range from insn 1 to 7" },
	{ "reject_write_r10", PROG(MOV64K(10, 0), MOV64K(0, 0), EXIT()), .load_err = EINVAL,
	  .kernel_reject = "frame pointer is read only" },
	{ "reject_no_exit", PROG(MOV64K(0, 0)), .load_err = EINVAL,
	  .kernel_reject = "last insn is not an exit or jmp" },
	{ "reject_unknown_opcode", PROG(MOV64K(0, 0), INSN(0xff, 0, 0, 0, 0), EXIT()),
	  .load_err = EINVAL, .kernel_reject = "unknown opcode ff" },
	{ "reject_ld_abs_raw", PROG(LDABS(B, 0), EXIT()), .load_err = EINVAL,
	  .kernel_reject = "BPF_LD_[ABS|IND] instructions not allowed for this program type" },
	{ "reject_call_out_of_range", PROG(MOV64K(0, 0), CALL_PC(10), EXIT()), .load_err = EINVAL,
	  .kernel_reject = "call to invalid destination" },
	{ "reject_jump_into_ldimm64", PROG(MOV64K(0, 0), JK(JEQ, 0, 0, 1), LDIMM64(0, 1), EXIT()),
	  .load_err = EINVAL, .kernel_reject = "jump into the middle of ldimm64 insn 2" },
};

/* ---- generated cases ---------------------------------------------------------- */

static const uint8_t jmp_ops[] = {
	XBPF_JEQ, XBPF_JNE, XBPF_JGT, XBPF_JGE, XBPF_JLT, XBPF_JLE,
	XBPF_JSGT, XBPF_JSGE, XBPF_JSLT, XBPF_JSLE, XBPF_JSET,
};

static const char *jmp_name(uint8_t op)
{
	switch (op) {
	case XBPF_JEQ: return "jeq";
	case XBPF_JNE: return "jne";
	case XBPF_JGT: return "jgt";
	case XBPF_JGE: return "jge";
	case XBPF_JLT: return "jlt";
	case XBPF_JLE: return "jle";
	case XBPF_JSGT: return "jsgt";
	case XBPF_JSGE: return "jsge";
	case XBPF_JSLT: return "jslt";
	case XBPF_JSLE: return "jsle";
	default: return "jset";
	}
}

/* Pairs telling signed from unsigned and 32 from 64 bits; b fits an imm. */
static const struct { uint64_t a; int32_t b; } jmp_pairs[] = {
	{ 0, 0 }, { 1, 2 }, { 2, 1 }, { (uint64_t)-1, 1 }, { 1, -1 }, { 0x80000000ull, 1 },
	{ 0x100000001ull, 1 }, { I64_MIN, 0x7fffffff }, { 0xffffffffull, -1 }, { 5, 5 },
	{ 0x7fffffff, INT32_MIN }, { (uint64_t)-2, -1 },
};

/* Register-only pairs: b beyond an imm. */
static const struct { uint64_t a, b; } jmp_pairs_x[] = {
	{ 1, 0x100000001ull }, { I64_MIN, 0x7fffffffffffffffull }, { 0x200000003ull, 0x100000003ull },
};

/* The reference: what the condition means, spelled out for each width. */
static bool jmp_ref(uint8_t op, bool is64, uint64_t a, uint64_t b)
{
	uint64_t ua = is64 ? a : (uint32_t)a, ub = is64 ? b : (uint32_t)b;
	int64_t sa = is64 ? (int64_t)a : (int32_t)a, sb = is64 ? (int64_t)b : (int32_t)b;

	switch (op) {
	case XBPF_JEQ: return ua == ub;
	case XBPF_JNE: return ua != ub;
	case XBPF_JGT: return ua > ub;
	case XBPF_JGE: return ua >= ub;
	case XBPF_JLT: return ua < ub;
	case XBPF_JLE: return ua <= ub;
	case XBPF_JSGT: return sa > sb;
	case XBPF_JSGE: return sa >= sb;
	case XBPF_JSLT: return sa < sb;
	case XBPF_JSLE: return sa <= sb;
	default: return (ua & ub) != 0;
	}
}

#define JMP_PROG_LEN 9
#define MAX_CHAIN 9
#define CHAIN_FN_LEN 6

struct generated {
	struct isa_case *cases;
	size_t cnt;
};

static struct isa_case *add_case(struct generated *g, size_t cap)
{
	if (g->cnt >= cap)
		abort(); /* the capacity below is computed, not guessed */
	return &g->cases[g->cnt++];
}

static char *dup_name(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dup_name(const char *fmt, ...)
{
	char buf[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return strdup(buf);
}

static void gen_jump(struct generated *g, size_t cap, uint8_t op, bool is64, bool x, uint64_t a,
		     uint64_t b)
{
	struct isa_case *c = add_case(g, cap);
	struct xbpf_insn *p = calloc(JMP_PROG_LEN, sizeof(*p));
	uint8_t class = is64 ? XBPF_JMP : XBPF_JMP32;
	bool taken;

	if (!p)
		abort();
	p[0] = I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, 1, 0, 0, (int32_t)(uint32_t)a));
	p[1] = I(INSN(0, 0, 0, 0, (int32_t)(uint32_t)(a >> 32)));
	p[2] = I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, 2, 0, 0, (int32_t)(uint32_t)b));
	p[3] = I(INSN(0, 0, 0, 0, (int32_t)(uint32_t)(b >> 32)));
	p[4] = x ? I(INSN(class | op | XBPF_X, 1, 2, 2, 0)) : I(INSN(class | op | XBPF_K, 1, 0, 2, (int32_t)b));
	p[5] = I(MOV64K(0, 0x10));
	p[6] = I(EXIT());
	p[7] = I(MOV64K(0, 0x20));
	p[8] = I(EXIT());
	taken = jmp_ref(op, is64, a, x ? b : (uint64_t)(int64_t)(int32_t)b);
	c->name = dup_name("%s%s_%s_%#llx_%#llx", jmp_name(op), is64 ? "" : "32", x ? "x" : "k",
			   (unsigned long long)a, (unsigned long long)b);
	c->insns = p;
	c->insn_cnt = JMP_PROG_LEN;
	c->expect = taken ? 0x20 : 0x10;
}

/*
 * A chain of `frames` functions, each keeping its level on its own stack
 * across the call to the next: returns 100 * (frames - 1) + sum(1..frames-1).
 */
static void gen_chain(struct generated *g, size_t cap, int frames)
{
	struct isa_case *c = add_case(g, cap);
	struct xbpf_insn *p = calloc((size_t)frames * CHAIN_FN_LEN + 1, sizeof(*p));
	size_t n = 0;
	int f;

	if (!p)
		abort();
	p[n++] = I(MOV64K(1, 0));
	for (f = 0; f < frames - 1; f++) {
		p[n++] = I(A64K(ADD, 1, 1));
		p[n++] = I(STX(DW, 10, 1, -8));
		p[n++] = I(CALL_PC(3)); /* next function starts 3 slots after this call's successor */
		p[n++] = I(LDX(DW, 1, 10, -8));
		p[n++] = I(A64X(ADD, 0, 1));
		p[n++] = I(EXIT());
	}
	p[n++] = I(MOV64X(0, 1));
	p[n++] = I(A64K(MUL, 0, 100));
	p[n++] = I(EXIT());
	c->name = dup_name("call_chain_%d_frames", frames);
	c->insns = p;
	c->insn_cnt = n;
	if (frames <= XBPF_MAX_CALL_FRAMES) {
		c->expect = 100ull * (frames - 1) + (uint64_t)(frames - 1) * frames / 2;
		if (frames == XBPF_MAX_CALL_FRAMES)
			c->flags = ISA_F_MAX_DEPTH;
	} else {
		c->flags = ISA_F_INTERP_ONLY;
		c->run_err = -E2BIG;
		c->kernel_reject = "the call stack of 9 frames is too deep";
	}
}

static struct isa_case *all_cases;
static size_t all_cnt;

const struct isa_case *isa_corpus_cases(size_t *ret_cnt)
{
	size_t n_static = sizeof(static_cases) / sizeof(static_cases[0]);
	size_t n_jmp = sizeof(jmp_ops) * 2 *
		       (2 * (sizeof(jmp_pairs) / sizeof(jmp_pairs[0])) +
			sizeof(jmp_pairs_x) / sizeof(jmp_pairs_x[0]));
	size_t cap = n_static + n_jmp + 3, i, k;
	struct generated g;
	int w;

	if (all_cases) {
		*ret_cnt = all_cnt;
		return all_cases;
	}
	g.cases = calloc(cap, sizeof(*g.cases));
	g.cnt = 0;
	if (!g.cases)
		abort();
	memcpy(g.cases, static_cases, sizeof(static_cases));
	g.cnt = n_static;
	for (i = 0; i < sizeof(jmp_ops); i++) {
		for (w = 0; w < 2; w++) {
			for (k = 0; k < sizeof(jmp_pairs) / sizeof(jmp_pairs[0]); k++) {
				uint64_t b = (uint64_t)(int64_t)jmp_pairs[k].b;

				gen_jump(&g, cap, jmp_ops[i], w, false, jmp_pairs[k].a, (uint64_t)(uint32_t)jmp_pairs[k].b);
				gen_jump(&g, cap, jmp_ops[i], w, true, jmp_pairs[k].a, b);
			}
			for (k = 0; k < sizeof(jmp_pairs_x) / sizeof(jmp_pairs_x[0]); k++)
				gen_jump(&g, cap, jmp_ops[i], w, true, jmp_pairs_x[k].a, jmp_pairs_x[k].b);
		}
	}
	gen_chain(&g, cap, 2);
	gen_chain(&g, cap, XBPF_MAX_CALL_FRAMES);
	gen_chain(&g, cap, XBPF_MAX_CALL_FRAMES + 1);
	all_cases = g.cases;
	all_cnt = g.cnt;
	*ret_cnt = all_cnt;
	return all_cases;
}

/* ---- runner ----------------------------------------------------------------- */

int isa_corpus_run(const struct isa_case *c, enum xbpf_engine_kind kind, bool verify,
		   struct isa_result *ret)
{
	struct xbpf_object *obj;
	struct xbpf_prog *prog;
	struct xbpf_vm *vm;
	uint8_t *buf, out[256];
	int err = 0;

	memset(ret, 0, sizeof(*ret));

	XBPF_OPTS(xbpf_vm_opts, vm_opts, .engine = kind, .skip_verify = !verify, .log_level = 1,
		  .log_buf = ret->log, .log_size = sizeof(ret->log));

	obj = xbpf_object__open_raw(c->insns, c->insn_cnt, c->type ? c->type : XBPF_PROG_RAW_MEM, NULL, 0,
				    NULL);
	if (!obj)
		return -errno;
	prog = xbpf_object__next_prog(obj, NULL);
	if (!prog) {
		xbpf_object__close(obj);
		return -ENOENT;
	}
	vm = xbpf_vm__new(prog, &vm_opts);
	if (!vm) {
		ret->load_err = errno;
		xbpf_object__close(obj);
		return 0;
	}
	ret->engine = xbpf_vm__engine(vm);

	/* exec() gives the full 64-bit R0 over a private copy of the memory. */
	buf = malloc(c->mem_len ? c->mem_len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (c->mem_len)
		memcpy(buf, c->mem, c->mem_len);
	if (!c->run_err && !c->type)
		ret->r0 = xbpf_vm__exec(vm, buf, c->mem_len);
	free(buf);

	/* test_run() is the path the tools take; it also reports interpreter stops. */
	{
		XBPF_OPTS(xbpf_test_run_opts, topts, .data_in = c->mem, .data_size_in = c->mem_len,
			  .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		ret->run_err = xbpf_vm__test_run(vm, &topts);
		ret->retval = topts.retval;
		if (c->type) /* a context program: R0 is what test_run reports */
			ret->r0 = ret->retval;
	}
out:
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	return err;
}

const char *isa_corpus_judge(const struct isa_case *c, const struct isa_result *res)
{
	if (c->load_err) {
		if (res->load_err != c->load_err)
			return "expected the load to fail";
		/* Our structural checks speak the kernel verifier's words. */
		if (c->kernel_reject && !strstr(res->log, c->kernel_reject))
			return "load refused without the kernel's message";
		return NULL;
	}
	if (res->load_err)
		return "load failed";
	if (c->run_err)
		return res->run_err == c->run_err ? NULL : "expected the run to stop with an error";
	if (res->run_err)
		return "test_run failed";
	if (res->r0 != c->expect)
		return "wrong R0 from exec";
	if (res->retval != (uint32_t)c->expect)
		return "wrong retval from test_run";
	return NULL;
}

int isa_corpus_check_all(enum xbpf_engine_kind kind, FILE *log)
{
	const struct isa_case *cases;
	size_t cnt, i, ran = 0;
	int failures = 0;

	cases = isa_corpus_cases(&cnt);
	for (i = 0; i < cnt; i++) {
		const struct isa_case *c = &cases[i];
		struct isa_result res, ref;
		const char *why;
		int err;

		if (kind != XBPF_ENGINE_INTERP && (c->flags & ISA_F_INTERP_ONLY))
			continue;
		err = isa_corpus_run(c, kind, false, &res);
		if (err) {
			fprintf(log, "FAIL %s: setup: %s\n", c->name, strerror(-err));
			failures++;
			continue;
		}
		ran++;
		why = isa_corpus_judge(c, &res);
		if (!why && !c->load_err && res.engine != kind) {
			if (c->flags & ISA_F_LEGACY) {
				fprintf(log, "note %s [%s]: fell back to the interpreter (legacy packet load)\n",
					c->name, xbpf_engine_name(kind));
				continue;
			}
			why = "engine fell back to the interpreter";
		}
		if (!why && kind != XBPF_ENGINE_INTERP && !c->load_err) {
			err = isa_corpus_run(c, XBPF_ENGINE_INTERP, false, &ref);
			if (err || ref.r0 != res.r0)
				why = "differs from the interpreter";
		}
		if (why) {
			fprintf(log, "FAIL %s [%s]: %s (r0 %#llx retval %#x expected %#llx, load_err %d run_err %d)\n",
				c->name, xbpf_engine_name(kind), why, (unsigned long long)res.r0,
				res.retval, (unsigned long long)c->expect, res.load_err, res.run_err);
			failures++;
		}
	}
	fprintf(log, "isa corpus [%s]: %zu cases run, %d failure(s)\n", xbpf_engine_name(kind), ran,
		failures);
	return failures;
}
