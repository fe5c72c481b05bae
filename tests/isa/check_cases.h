/* SPDX-License-Identifier: MIT */
/*
 * check_cases.h - encodings and the kernel verifier's message for each,
 * shared by the unit test (xbpf_insn_check()) and the kernel comparison.
 */
#ifndef XBPF_TEST_CHECK_CASES_H
#define XBPF_TEST_CHECK_CASES_H

#include "insn.h"

struct check_case {
	struct xbpf_insn insn[2];
	size_t cnt;
	const char *msg; /* NULL: valid */
};

static const struct check_case check_cases[] = {
	{ { MOV64K(0, 0) }, 1, NULL },
	{ { INSN(0x00, 0, 0, 0, 0) }, 1, "unknown opcode 00" },
	{ { INSN(0xff, 0, 0, 0, 0) }, 1, "unknown opcode ff" },
	{ { INSN(0x8f, 1, 0, 0, 0) }, 1, "unknown opcode 8f" },
	{ { INSN(0x99, 1, 2, 0, 0) }, 1, "unknown opcode 99" },
	{ { LDIMM64(1, 5) }, 2, NULL },
	{ { LDIMM64(1, 5) }, 1, "invalid bpf_ld_imm64 insn" },
	{ { INSN(0x18, 1, 0, 0, 0), MOV64K(0, 0) }, 2, "invalid bpf_ld_imm64 insn" },
	{ { LDIMM64_SRC(1, 9, 0) }, 2, "unrecognized bpf_ld_imm64 insn" },
	{ { LDIMM64_SRC(1, XBPF_PSEUDO_MAP_FD, 0x100000000ull) }, 2, "unrecognized bpf_ld_imm64 insn" },
	{ { LDIMM64_SRC(1, XBPF_PSEUDO_MAP_VALUE, 0x100000000ull) }, 2, NULL },
	{ { LDIMM64(10, 5) }, 2, "frame pointer is read only" },
	{ { A64K(ADD, 1, 1) }, 1, NULL },
	{ { INSN(0x07, 1, 2, 0, 1) }, 1, "BPF_ALU uses reserved fields" },
	{ { INSN(0x0f, 1, 2, 0, 1) }, 1, "BPF_ALU uses reserved fields" },
	{ { INSN(0x0f, 1, 2, 1, 0) }, 1, "BPF_ALU uses reserved fields" },
	{ { S64X(DIV, 1, 2) }, 1, NULL },
	{ { S32K(MOD, 1, 3) }, 1, NULL },
	{ { INSN(0x3f, 1, 2, 2, 0) }, 1, "BPF_ALU uses reserved fields" },
	{ { A64X(ADD, 1, 11) }, 1, "R11 is invalid" },
	{ { A64X(ADD, 12, 1) }, 1, "R12 is invalid" },
	{ { A64K(ADD, 10, 1) }, 1, "frame pointer is read only" },
	{ { A64X(ADD, 1, 10) }, 1, NULL },
	{ { INSN(0x87, 1, 1, 0, 0) }, 1, "BPF_NEG uses reserved fields" },
	{ { INSN(0x87, 1, 0, 0, 1) }, 1, "BPF_NEG uses reserved fields" },
	{ { BE(1, 16) }, 1, NULL },
	{ { BE(1, 8) }, 1, "BPF_END uses reserved fields" },
	{ { INSN(0xd4, 1, 0, 1, 32) }, 1, "BPF_END uses reserved fields" },
	{ { BSWAP(1, 64) }, 1, NULL },
	{ { MOVSX64(1, 2, 32) }, 1, NULL },
	{ { MOVSX32(1, 2, 32) }, 1, "BPF_MOV uses reserved fields" },
	{ { MOVSX64(1, 2, 24) }, 1, "BPF_MOV uses reserved fields" },
	{ { INSN(0xb7, 1, 0, 8, 0) }, 1, "BPF_MOV uses reserved fields" },
	{ { INSN(0xbf, 1, 2, 0, 3) }, 1, "BPF_MOV uses reserved fields" },
	{ { LDX(W, 1, 2, 0) }, 1, NULL },
	{ { INSN(0x61, 1, 2, 0, 1) }, 1, "BPF_LDX uses reserved fields" },
	{ { INSN(0x41, 1, 2, 0, 0) }, 1, "BPF_LDX uses reserved fields" },
	{ { INSN(0x99, 1, 2, 0, 0) }, 1, "unknown opcode 99" },
	{ { LDX(W, 10, 2, 0) }, 1, "frame pointer is read only" },
	{ { LDX(W, 1, 13, 0) }, 1, "R13 is invalid" },
	{ { ST(W, 10, -4, 1) }, 1, NULL },
	{ { INSN(0x62, 10, 1, -4, 1) }, 1, "BPF_ST uses reserved fields" },
	{ { INSN(0x63, 10, 1, -4, 1) }, 1, "BPF_STX uses reserved fields" },
	{ { ATOMIC(DW, XBPF_ADD | XBPF_FETCH, 10, 1, -8) }, 1, NULL },
	{ { ATOMIC(W, XBPF_CMPXCHG, 10, 1, -8) }, 1, NULL },
	{ { ATOMIC(W, 0x02, 10, 1, -8) }, 1, "BPF_ATOMIC uses invalid atomic opcode 02" },
	{ { ATOMIC(W, XBPF_MOV, 10, 1, -8) }, 1, "BPF_ATOMIC uses invalid atomic opcode b0" },
	{ { LDABS(W, 12) }, 1, NULL },
	{ { INSN(0x20, 1, 0, 0, 12) }, 1, "BPF_LD_[ABS|IND] uses reserved fields" },
	{ { INSN(0x20, 0, 1, 0, 12) }, 1, "BPF_LD_[ABS|IND] uses reserved fields" },
	{ { LDIND(H, 1, 12) }, 1, NULL },
	{ { CALL_HELPER(1) }, 1, NULL },
	{ { CALL_PC(3) }, 1, NULL },
	{ { INSN(0x85, 0, 3, 0, 1) }, 1, "BPF_CALL uses reserved fields" },
	{ { INSN(0x85, 1, 0, 0, 1) }, 1, "BPF_CALL uses reserved fields" },
	{ { INSN(0x85, 0, 0, 1, 1) }, 1, "BPF_CALL uses reserved fields" },
	{ { JA(1) }, 1, NULL },
	{ { INSN(0x05, 0, 0, 1, 1) }, 1, "BPF_JA uses reserved fields" },
	{ { GOTOL(1) }, 1, NULL },
	{ { INSN(0x06, 0, 0, 1, 1) }, 1, "BPF_JA uses reserved fields" },
	{ { EXIT() }, 1, NULL },
	{ { INSN(0x95, 0, 0, 0, 1) }, 1, "BPF_EXIT uses reserved fields" },
	{ { INSN(0x95, 1, 0, 0, 0) }, 1, "BPF_EXIT uses reserved fields" },
	{ { JX(JGT, 3, 2, 5) }, 1, NULL },
	{ { INSN(0x2d, 3, 2, 5, 1) }, 1, "BPF_JMP/JMP32 uses reserved fields" },
	{ { INSN(0x25, 3, 2, 5, 1) }, 1, "BPF_JMP/JMP32 uses reserved fields" },
	{ { J32X(JSLT, 3, 14, 5) }, 1, "R14 is invalid" },
	{ { J32K(JSLT, 15, 1, 5) }, 1, "R15 is invalid" },
};

#endif /* XBPF_TEST_CHECK_CASES_H */
