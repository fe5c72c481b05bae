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
#define RINGBUF_4K { .name = "rb", .type = XBPF_MAP_RINGBUF, .max_entries = 4096 }
#define DEVMAP_4 { .name = "dev", .type = XBPF_MAP_DEVMAP, .key_size = 4, .value_size = 4, .max_entries = 4 }
static const struct xbpf_map_spec inner_array = {
	.name = "inner", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 48, .max_entries = 4
};
#define ARRAY_1_48 { .name = "d", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 48, .max_entries = 1 }
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
	{ "calls: overlapping caller and callee", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(0), XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("last insn is not an exit or jmp") },
	{ "calls: conditional call", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, 12), XI_JMP_K(XBPF_JEQ, R2, 0, 1), XI_CALL_REL(2), XI_MOV64_K(R0, 0),
		XI_EXIT(), XI_MOV64_K(R0, 1), XI_EXIT() }, ACCEPT },
	{ "calls: jump from main into the callee", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, 12), XI_JMP_K(XBPF_JEQ, R2, 0, 3), XI_CALL_REL(2), XI_MOV64_K(R0, 0),
		XI_EXIT(), XI_MOV64_K(R0, 1), XI_EXIT() }, REJECT("jump out of range from insn 1 to 5") },
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

	{ "calls: callee reads the context", XBPF_PROG_SCHED_ACT, {
		XI_CALL_REL(1), XI_EXIT(), XI_LDX(XBPF_W, R0, R1, SKB_LEN), XI_EXIT() }, ACCEPT },
	{ "calls: two arguments", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_X(R6, R1), XI_LDX(XBPF_W, R1, R6, SKB_LEN), XI_LDX(XBPF_W, R2, R6, SKB_MARK),
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_X(R0, R1), XI_ALU64_X(XBPF_ADD, R0, R2), XI_EXIT() }, ACCEPT },
	{ "calls: callee writes the caller's stack, caller reads it", XBPF_PROG_XDP, {
		XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -16), XI_CALL_REL(2), XI_LDX(XBPF_DW, R0, FP, -16),
		XI_EXIT(), XI_ST(XBPF_DW, R1, 0, 7), XI_EXIT() }, ACCEPT },
	{ "calls: caller uses r0 of a callee that set none", XBPF_PROG_XDP, {
		XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -8), XI_CALL_REL(2), XI_MOV64_X(R1, R0),
		XI_EXIT(), XI_ST(XBPF_DW, R1, 0, 7), XI_EXIT() }, REJECT("R0 !read_ok") },
	{ "calls: callee's adjust_head invalidates the caller's packet pointers", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R6, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R7, R1, XDP_MD_DATA_END),
		XI_MOV64_X(R8, R6), XI_ALU64_K(XBPF_ADD, R8, 8), XI_JMP_X(XBPF_JGT, R8, R7, 2),
		XI_CALL_REL(3), XI_LDX(XBPF_DW, R0, R6, 0), XI_MOV32_K(R0, 0), XI_EXIT(),
		XI_MOV64_K(R2, 0), XI_CALL(XH_XDP_ADJUST_HEAD), XI_EXIT() },
		REJECT("R6 invalid mem access 'scalar'") },
	{ "calls: callee returns a map value through the caller's stack", XBPF_PROG_XDP, {
		XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -8), XI_CALL_REL(5),
		XI_LDX(XBPF_DW, R0, FP, -8), XI_JMP_K(XBPF_JEQ, R0, 0, 1), XI_ST(XBPF_DW, R0, 0, 0),
		XI_MOV64_K(R0, 0), XI_EXIT(),
		XI_MOV64_X(R6, R1), XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -8),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_STX(XBPF_DW, R6, R0, 0), XI_MOV64_K(R0, 0),
		XI_EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1, ACCEPT },
	{ "calls: map value from the callee used without a null check", XBPF_PROG_XDP, {
		XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -8), XI_CALL_REL(4),
		XI_LDX(XBPF_DW, R0, FP, -8), XI_ST(XBPF_DW, R0, 0, 0),
		XI_MOV64_K(R0, 0), XI_EXIT(),
		XI_MOV64_X(R6, R1), XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -8),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_STX(XBPF_DW, R6, R0, 0), XI_MOV64_K(R0, 0),
		XI_EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("R0 invalid mem access 'map_value_or_null'") },
	{ "calls: unchecked packet pointer spilled into the caller, checked later", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_X(R4, FP), XI_ALU64_K(XBPF_ADD, R4, -8), XI_CALL_REL(1), XI_EXIT(),
		XI_LDX(XBPF_W, R2, R1, SKB_DATA), XI_LDX(XBPF_W, R3, R1, SKB_DATA_END),
		XI_MOV64_X(R0, R2), XI_ALU64_K(XBPF_ADD, R0, 8), XI_STX(XBPF_DW, R4, R2, 0),
		XI_JMP_X(XBPF_JGT, R0, R3, 2), XI_LDX(XBPF_DW, R2, R4, 0), XI_ST(XBPF_W, R2, 0, 0),
		XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "calls: call into the middle of ld_imm64", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(3), XI_CALL_REL(3), XI_MOV64_K(R0, 0), XI_EXIT(), XI_LD64(R0, 0), XI_EXIT() },
		REJECT("last insn is not an exit or jmp") },
	/* ---- frames and stack limits ----------------------------------------- */
	{ "calls: nine frames deep", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(),
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(),
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(),
		XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("the call stack of 9 frames is too deep") },
	{ "calls: eight frames deep", XBPF_PROG_TRACEPOINT, {
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(),
		XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(), XI_CALL_REL(1), XI_EXIT(),
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "calls: combined stack of two frames too large", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -304, 0), XI_CALL_REL(2), XI_MOV64_K(R0, 0), XI_EXIT(),
		XI_ST(XBPF_DW, FP, -304, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("combined stack size of 2 calls is") },
	{ "calls: a callee only called from dead code adds no stack", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -304, 0), XI_MOV64_K(R1, 0), XI_JMP_K(XBPF_JEQ, R1, 0, 1),
		XI_CALL_REL(2), XI_MOV64_K(R0, 0), XI_EXIT(),
		XI_ST(XBPF_DW, FP, -304, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		ACCEPT },
	{ "stack: write below the frame", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -520, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid write to stack R10 off=-520 size=8") },
	{ "stack: write above the frame", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, 0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid write to stack R10 off=0 size=8") },
	{ "stack: misaligned", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -12, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("misaligned stack access") },
	{ "stack: variable-offset write and read inside the frame", XBPF_PROG_XDP, {
		XI_CALL(XH_KTIME), XI_ALU64_K(XBPF_AND, R0, 8), XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -16),
		XI_ALU64_X(XBPF_ADD, R1, R0), XI_ST(XBPF_DW, R1, 0, 0), XI_LDX(XBPF_DW, R0, R1, 0), XI_EXIT() },
		ACCEPT },
	{ "stack: variable-offset write may leave the frame", XBPF_PROG_XDP, {
		XI_CALL(XH_KTIME), XI_ALU64_K(XBPF_AND, R0, 8), XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -8),
		XI_ALU64_X(XBPF_ADD, R1, R0), XI_ST(XBPF_DW, R1, 0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid variable-offset write to stack R1 var_off=(0x0; 0x8) off=-8 size=8") },
	{ "stack: variable-offset access misaligned", XBPF_PROG_XDP, {
		XI_CALL(XH_KTIME), XI_ALU64_K(XBPF_AND, R0, 4), XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -16),
		XI_ALU64_X(XBPF_ADD, R1, R0), XI_ST(XBPF_DW, R1, 0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("misaligned stack access off (0x0; 0x4)+-16+0 size 8") },
	{ "stack: pointer spill and fill keeps the type", XBPF_PROG_XDP, {
		XI_STX(XBPF_DW, FP, R1, -8), XI_LDX(XBPF_DW, R2, FP, -8),
		XI_LDX(XBPF_W, R0, R2, XDP_MD_DATA), XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "stack: partial fill of a spilled pointer", XBPF_PROG_XDP, {
		XI_STX(XBPF_DW, FP, R1, -8), XI_LDX(XBPF_W, R2, FP, -8), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid size of register fill") },
	{ "stack: frame pointer is read only", XBPF_PROG_XDP, {
		XI_MOV64_K(FP, 0), XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("frame pointer is read only") },
	/* ---- registers ------------------------------------------------------- */
	{ "regs: helper clobbers r1-r5", XBPF_PROG_XDP, {
		XI_CALL(XH_KTIME), XI_MOV64_X(R0, R1), XI_EXIT() }, REJECT("R1 !read_ok") },
	{ "regs: callee-saved survive a helper", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 1), XI_CALL(XH_KTIME), XI_MOV64_X(R0, R6), XI_EXIT() }, ACCEPT },
	{ "regs: exit without r0", XBPF_PROG_XDP, { XI_EXIT() }, REJECT("R0 !read_ok") },
	{ "regs: returning a pointer is fine when privileged", XBPF_PROG_XDP, {
		XI_MOV64_X(R0, R1), XI_EXIT() }, ACCEPT },
	{ "alu: div by zero constant", XBPF_PROG_XDP, {
		XI_MOV64_K(R0, 1), XI_ALU64_K(XBPF_DIV, R0, 0), XI_EXIT() }, REJECT("div by zero") },
	{ "alu: bitwise op on a pointer", XBPF_PROG_XDP, {
		XI_ALU64_K(XBPF_AND, R1, 7), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("R1 bitwise operator &= on pointer prohibited") },
	{ "alu: 32-bit pointer arithmetic", XBPF_PROG_XDP, {
		XI_ALU32_K(XBPF_ADD, R1, 7), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("R1 32-bit pointer arithmetic prohibited") },
	{ "alu: pointer minus pointer is a number", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END),
		XI_ALU64_X(XBPF_SUB, R3, R2), XI_MOV64_X(R0, R3), XI_EXIT() }, ACCEPT },
	{ "alu: pointer plus pointer", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_MOV64_X(R3, R2), XI_ALU64_X(XBPF_ADD, R3, R2),
		XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("R3 pointer += pointer prohibited") },
	{ "alu: subtraction from the stack pointer", XBPF_PROG_XDP, {
		XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_SUB, R1, 8), XI_ST(XBPF_DW, R1, 0, 0), XI_MOV64_K(R0, 0),
		XI_EXIT() }, REJECT("R1 subtraction from stack pointer prohibited") },
	{ "alu: arithmetic on pkt_end", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END), XI_ALU64_K(XBPF_ADD, R3, 1), XI_MOV64_K(R0, 0),
		XI_EXIT() }, REJECT("R3 pointer arithmetic on pkt_end prohibited") },
	/* ---- context --------------------------------------------------------- */
	{ "ctx: xdp reads data, data_end, data_meta, ifindex", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, 0), XI_LDX(XBPF_W, R2, R1, 4), XI_LDX(XBPF_W, R2, R1, 8),
		XI_LDX(XBPF_W, R2, R1, 12), XI_LDX(XBPF_W, R2, R1, 16), XI_MOV64_K(R0, 0), XI_EXIT() },
		ACCEPT },
	{ "ctx: xdp narrow read", XBPF_PROG_XDP, {
		XI_LDX(XBPF_B, R2, R1, 12), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid bpf_context access off=12 size=1") },
	{ "ctx: xdp write", XBPF_PROG_XDP, {
		XI_MOV64_K(R2, 0), XI_STX(XBPF_W, R1, R2, 12), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid bpf_context access off=12 size=4") },
	{ "ctx: xdp beyond the struct", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, 24), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid bpf_context access off=24 size=4") },
	{ "ctx: tc writes mark, reads len narrowly", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_K(R2, 7), XI_STX(XBPF_W, R1, R2, SKB_MARK), XI_LDX(XBPF_B, R3, R1, SKB_LEN),
		XI_LDX(XBPF_H, R3, R1, SKB_LEN + 2), XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "ctx: tc writes len", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_K(R2, 7), XI_STX(XBPF_W, R1, R2, SKB_LEN), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid bpf_context access off=0 size=4") },
	{ "ctx: socket filter writes mark", XBPF_PROG_SOCKET_FILTER, {
		XI_MOV64_K(R2, 7), XI_STX(XBPF_W, R1, R2, SKB_MARK), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid bpf_context access off=8 size=4") },
	{ "ctx: socket filter writes cb", XBPF_PROG_SOCKET_FILTER, {
		XI_MOV64_K(R2, 7), XI_STX(XBPF_W, R1, R2, SKB_CB0), XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "ctx: socket filter reads data", XBPF_PROG_SOCKET_FILTER, {
		XI_LDX(XBPF_W, R2, R1, SKB_DATA), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid bpf_context access off=76 size=4") },
	{ "ctx: BPF_ST into ctx (allowed since 5.x)", XBPF_PROG_SCHED_CLS, {
		XI_ST(XBPF_W, R1, SKB_MARK, 1), XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "ctx: modified ctx pointer", XBPF_PROG_SCHED_CLS, {
		XI_ALU64_K(XBPF_ADD, R1, 4), XI_LDX(XBPF_W, R0, R1, 0), XI_EXIT() },
		REJECT("dereference of modified ctx ptr R1 off=4 disallowed") },
	{ "ctx: tracepoint reads, aligned", XBPF_PROG_TRACEPOINT, {
		XI_LDX(XBPF_DW, R0, R1, 16), XI_EXIT() }, ACCEPT },
	{ "ctx: tracepoint hides its first 8 bytes", XBPF_PROG_TRACEPOINT, {
		XI_LDX(XBPF_W, R0, R1, 4), XI_EXIT() }, REJECT("invalid bpf_context access off=4 size=4") },
	{ "ctx: xdp egress_ifindex is for devmap programs", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R0, R1, 20), XI_EXIT() }, REJECT("invalid bpf_context access off=20 size=4") },
	{ "ctx: tracepoint misaligned read", XBPF_PROG_TRACEPOINT, {
		XI_LDX(XBPF_DW, R0, R1, 12), XI_EXIT() }, REJECT("invalid bpf_context access off=12 size=8") },
	/* ---- packet ------------------------------------------------------------ */
	{ "pkt: read without range check", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_B, R0, R2, 0), XI_EXIT() },
		REJECT("invalid access to packet, off=0 size=1, R2(id=0,off=0,r=0)") },
	{ "pkt: read inside the checked range", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END),
		XI_MOV64_X(R4, R2), XI_ALU64_K(XBPF_ADD, R4, 14), XI_JMP_X(XBPF_JGT, R4, R3, 2),
		XI_LDX(XBPF_W, R0, R2, 10), XI_ST(XBPF_H, R2, 12, 0), XI_MOV64_K(R0, 2), XI_EXIT() },
		ACCEPT },
	{ "pkt: read one byte past the checked range", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END),
		XI_MOV64_X(R4, R2), XI_ALU64_K(XBPF_ADD, R4, 14), XI_JMP_X(XBPF_JGT, R4, R3, 1),
		XI_LDX(XBPF_W, R0, R2, 11), XI_MOV64_K(R0, 2), XI_EXIT() },
		REJECT("invalid access to packet, off=11 size=4, R2(id=0,off=11,r=14)") },
	{ "pkt: checked range, reversed compare (end < pkt')", XBPF_PROG_SCHED_CLS, {
		XI_LDX(XBPF_W, R2, R1, SKB_DATA), XI_LDX(XBPF_W, R3, R1, SKB_DATA_END),
		XI_MOV64_X(R4, R2), XI_ALU64_K(XBPF_ADD, R4, 8), XI_JMP_X(XBPF_JLT, R3, R4, 1),
		XI_LDX(XBPF_DW, R0, R2, 0), XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "pkt: wrong branch of the check", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END),
		XI_MOV64_X(R4, R2), XI_ALU64_K(XBPF_ADD, R4, 8), XI_JMP_X(XBPF_JLE, R4, R3, 2),
		XI_LDX(XBPF_DW, R0, R2, 0), XI_EXIT(), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("invalid access to packet") },
	{ "pkt: variable offset needs a new check", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END),
		XI_MOV64_X(R4, R2), XI_ALU64_K(XBPF_ADD, R4, 1), XI_JMP_X(XBPF_JGT, R4, R3, 6),
		XI_LDX(XBPF_B, R5, R2, 0), XI_ALU64_X(XBPF_ADD, R2, R5), XI_MOV64_X(R4, R2),
		XI_ALU64_K(XBPF_ADD, R4, 2), XI_JMP_X(XBPF_JGT, R4, R3, 1), XI_LDX(XBPF_H, R0, R2, 0),
		XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "pkt: variable offset without a new check", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END),
		XI_MOV64_X(R4, R2), XI_ALU64_K(XBPF_ADD, R4, 4), XI_JMP_X(XBPF_JGT, R4, R3, 3),
		XI_LDX(XBPF_B, R5, R2, 0), XI_ALU64_X(XBPF_ADD, R2, R5), XI_LDX(XBPF_B, R0, R2, 0),
		XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("invalid access to packet") },
	{ "pkt: adjust_head invalidates packet pointers", XBPF_PROG_XDP, {
		XI_MOV64_X(R6, R1), XI_LDX(XBPF_W, R7, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA_END),
		XI_MOV64_X(R4, R7), XI_ALU64_K(XBPF_ADD, R4, 8), XI_JMP_X(XBPF_JGT, R4, R3, 4),
		XI_MOV64_X(R1, R6), XI_MOV64_K(R2, 4), XI_CALL(XH_XDP_ADJUST_HEAD), XI_LDX(XBPF_B, R0, R7, 0),
		XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: meta before data", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA_META), XI_LDX(XBPF_W, R3, R1, XDP_MD_DATA),
		XI_MOV64_X(R4, R2), XI_ALU64_K(XBPF_ADD, R4, 4), XI_JMP_X(XBPF_JGT, R4, R3, 1),
		XI_LDX(XBPF_W, R0, R2, 0), XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	/* ---- maps and null checks ---------------------------------------------- */
	{ "map: lookup result used without null check", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -8),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_LDX(XBPF_DW, R0, R0, 0), XI_EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("R0 invalid mem access 'map_value_or_null'") },
	{ "map: null check on a copy covers the original", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -8),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_MOV64_X(R6, R0),
		XI_JMP_K(XBPF_JEQ, R6, 0, 2), XI_ST(XBPF_DW, R0, 0, 1), XI_MOV64_K(R0, 0), XI_MOV64_K(R0, 0),
		XI_EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1, ACCEPT },
	{ "map: value access out of bounds", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -8),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 1),
		XI_ST(XBPF_W, R0, 6, 1), XI_MOV64_K(R0, 0), XI_EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("invalid access to map value, value_size=8 off=6 size=4") },
	{ "map: index bounded by and", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 0), XI_STX(XBPF_W, FP, R6, -4), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 5),
		XI_LDX(XBPF_W, R1, R0, 0), XI_ALU64_K(XBPF_AND, R1, 31), XI_ALU64_X(XBPF_ADD, R0, R1),
		XI_LDX(XBPF_DW, R0, R0, 8), XI_MOV64_K(R0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "map: index bounded too loosely", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 0), XI_STX(XBPF_W, FP, R6, -4), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 5),
		XI_LDX(XBPF_W, R1, R0, 0), XI_ALU64_K(XBPF_AND, R1, 63), XI_ALU64_X(XBPF_ADD, R0, R1),
		XI_LDX(XBPF_DW, R0, R0, 8), XI_MOV64_K(R0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, REJECT("invalid access to map value, value_size=48 off=71 size=8") },
	{ "map: index bounded by a 32-bit compare", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 0), XI_STX(XBPF_W, FP, R6, -4), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 5),
		XI_LDX(XBPF_W, R1, R0, 0), XI_JMP32_K(XBPF_JGT, R1, 40, 3), XI_ALU64_X(XBPF_ADD, R0, R1),
		XI_LDX(XBPF_DW, R0, R0, 0), XI_MOV64_K(R0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "map: signed index may be negative", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 0), XI_STX(XBPF_W, FP, R6, -4), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 5),
		XI_LDX(XBPF_DW, R1, R0, 0), XI_JMP_K(XBPF_JSGT, R1, 40, 3), XI_ALU64_X(XBPF_ADD, R0, R1),
		XI_LDX(XBPF_DW, R0, R0, 0), XI_MOV64_K(R0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1,
		REJECT("math between map_value pointer and register with unbounded min value is not allowed") },
	{ "map: map pointer arithmetic", XBPF_PROG_XDP, {
		XI_LD_MAP(R1, 0), XI_ALU64_K(XBPF_ADD, R1, 8), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("R1 pointer arithmetic on map_ptr prohibited") },
	{ "map: arithmetic before the null check", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -8),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_ALU64_K(XBPF_ADD, R0, 8), XI_MOV64_K(R0, 0),
		XI_EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("R0 pointer arithmetic on map_value_or_null prohibited, null-check it first") },
	{ "map: key on the stack too short", XBPF_PROG_XDP, {
		XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4), XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP),
		XI_MOV64_K(R0, 0), XI_EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("invalid read from stack R2 off=-4 size=8") },
	{ "map: key is not a pointer", XBPF_PROG_XDP, {
		XI_MOV64_K(R2, 0), XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("R2 type=scalar expected=") },
	{ "map: direct value access", XBPF_PROG_XDP, {
		XI_LD_MAP_VALUE(R1, 0, 16), XI_LDX(XBPF_DW, R0, R1, 24), XI_EXIT() },
		.maps = { ARRAY_1_48 }, .map_cnt = 1, ACCEPT },
	{ "map: direct value access needs a one-element array", XBPF_PROG_XDP, {
		XI_LD_MAP_VALUE(R1, 0, 16), XI_LDX(XBPF_DW, R0, R1, 24), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, REJECT("invalid access to map value pointer, value_size=48 off=16") },
	{ "map: direct value access out of bounds", XBPF_PROG_XDP, {
		XI_LD_MAP_VALUE(R1, 0, 16), XI_LDX(XBPF_DW, R0, R1, 32), XI_EXIT() },
		.maps = { ARRAY_1_48 }, .map_cnt = 1, REJECT("invalid access to map value, value_size=48 off=48 size=8") },
	/* ---- helpers ----------------------------------------------------------- */
	{ "map: lookup in a ring buffer", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -8),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { RINGBUF_4K }, .map_cnt = 1, REJECT("invalid zero-sized read") },
	{ "map: redirect_map needs a devmap", XBPF_PROG_XDP, {
		XI_LD_MAP(R1, 0), XI_MOV64_K(R2, 0), XI_MOV64_K(R3, 0), XI_CALL(XH_REDIRECT_MAP), XI_EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("cannot pass map_type 1 into func bpf_redirect_map#51") },
	{ "map: redirect_map into a devmap", XBPF_PROG_XDP, {
		XI_LD_MAP(R1, 0), XI_MOV64_K(R2, 0), XI_MOV64_K(R3, 0), XI_CALL(XH_REDIRECT_MAP), XI_EXIT() },
		.maps = { DEVMAP_4 }, .map_cnt = 1, ACCEPT },
	{ "map: lookup through a map of maps", XBPF_PROG_XDP, {
		XI_ST(XBPF_W, FP, -4, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 6),
		XI_MOV64_X(R1, R0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4), XI_CALL(XH_MAP_LOOKUP),
		XI_JMP_K(XBPF_JEQ, R0, 0, 1), XI_LDX(XBPF_DW, R0, R0, 40), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { { .name = "outer", .type = XBPF_MAP_ARRAY_OF_MAPS, .key_size = 4, .value_size = 4,
			    .max_entries = 2, .inner = &inner_array } }, .map_cnt = 1, ACCEPT,
		.kernel_skip = "a map of maps needs an inner map fd at creation, which the runner does not make" },
	{ "map: map of maps value used before the null check", XBPF_PROG_XDP, {
		XI_ST(XBPF_W, FP, -4, 0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP),
		XI_MOV64_X(R1, R0), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4), XI_CALL(XH_MAP_LOOKUP),
		XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { { .name = "outer", .type = XBPF_MAP_ARRAY_OF_MAPS, .key_size = 4, .value_size = 4,
			    .max_entries = 2, .inner = &inner_array } }, .map_cnt = 1,
		REJECT("R1 type=map_ptr_or_null expected=map_ptr"),
		.kernel_skip = "a map of maps needs an inner map fd at creation, which the runner does not make" },
	{ "helper: unknown", XBPF_PROG_XDP, {
		XI_CALL(100000), XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("invalid func unknown#100000") },
	{ "helper: not for this program type", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_K(R2, 0), XI_CALL(XH_XDP_ADJUST_HEAD), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("program of this type cannot use helper bpf_xdp_adjust_head#44") },
	{ "helper: ctx argument", XBPF_PROG_XDP, {
		XI_MOV64_K(R1, 0), XI_MOV64_K(R2, 0), XI_CALL(XH_XDP_ADJUST_HEAD), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("R1 type=scalar expected=ctx") },
	{ "helper: memory and size from the stack", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_ST(XBPF_DW, FP, -16, 0), XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -16),
		XI_MOV64_K(R2, 16), XI_MOV64_K(R3, 0), XI_MOV64_K(R4, 0), XI_MOV64_K(R5, 0), XI_CALL(XH_CSUM_DIFF),
		XI_EXIT() }, ACCEPT },
	{ "helper: memory argument larger than the stack", XBPF_PROG_XDP, {
		XI_MOV64_X(R1, FP), XI_ALU64_K(XBPF_ADD, R1, -16), XI_MOV64_K(R2, 24), XI_MOV64_K(R3, 0),
		XI_MOV64_K(R4, 0), XI_MOV64_K(R5, 0), XI_CALL(XH_CSUM_DIFF), XI_EXIT() },
		REJECT("invalid read from stack R1 off=-16 size=24") },
	{ "helper: unbounded size", XBPF_PROG_XDP, {
		XI_MOV64_X(R6, R1), XI_CALL(XH_KTIME), XI_MOV64_X(R2, R0), XI_MOV64_X(R1, FP),
		XI_ALU64_K(XBPF_ADD, R1, -16), XI_MOV64_K(R3, 0), XI_MOV64_K(R4, 0), XI_MOV64_K(R5, 0),
		XI_CALL(XH_CSUM_DIFF), XI_EXIT() }, REJECT("R2 min value is negative, either use unsigned or 'var &= const'") },
	/* ---- legacy packet access ------------------------------------------------ */
	{ "ld_abs: tc program", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_X(R6, R1), XI_LD_ABS(XBPF_H, 12), XI_EXIT() }, ACCEPT },
	{ "ld_abs: not in xdp", XBPF_PROG_XDP, {
		XI_MOV64_X(R6, R1), XI_LD_ABS(XBPF_H, 12), XI_EXIT() },
		REJECT("BPF_LD_[ABS|IND] instructions not allowed for this program type") },
	{ "ld_abs: in a subprogram", XBPF_PROG_SCHED_CLS, {
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_X(R6, R1), XI_LD_ABS(XBPF_H, 12), XI_EXIT() },
		REJECT("LD_ABS is not allowed in subprogs without BTF") },
	{ "ld_abs: in main next to a subprogram", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_X(R6, R1), XI_LD_ABS(XBPF_H, 12), XI_CALL_REL(1), XI_EXIT(), XI_MOV64_K(R0, 0),
		XI_EXIT() }, ACCEPT },
	/* ---- loops and limits --------------------------------------------------- */
	{ "loop: bounded", XBPF_PROG_XDP, {
		XI_MOV64_K(R0, 0), XI_ALU64_K(XBPF_ADD, R0, 1), XI_JMP_K(XBPF_JLT, R0, 10, -2), XI_EXIT() },
		ACCEPT },
	{ "loop: infinite", XBPF_PROG_XDP, {
		XI_MOV64_K(R0, 0), XI_JMP_K(XBPF_JEQ, R0, 0, -1), XI_EXIT() },
		REJECT("infinite loop detected at insn 1") },
	{ "loop: too many instructions", XBPF_PROG_XDP, {
		XI_MOV64_K(R0, 0), XI_ALU64_K(XBPF_ADD, R0, 1), XI_JMP_K(XBPF_JLT, R0, 600000, -2), XI_EXIT() },
		REJECT("BPF program is too large. Processed 1000001 insn") },
	/* ---- reported by the dataplane (kernel 6.18 as root accepts) -------------- */
	{ "dataplane: 32-bit difference of a pointer copy and a pointer", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_LDX(XBPF_W, R1, R1, XDP_MD_DATA_END),
		XI_MOV32_X(R4, R2), XI_ALU32_X(XBPF_SUB, R4, R1), XI_MOV64_X(R0, R4),
		XI_ALU64_K(XBPF_AND, R0, 1), XI_EXIT() }, ACCEPT },
	{ "dataplane: 32-bit sum of a scalar and a pointer", XBPF_PROG_XDP, {
		XI_LDX(XBPF_W, R2, R1, XDP_MD_DATA), XI_MOV32_K(R4, 1),
		XI_ALU32_X(XBPF_ADD, R4, R2), XI_MOV64_K(R0, 0), XI_EXIT() },
		REJECT("R4 32-bit pointer arithmetic prohibited") },
	{ "dataplane: subprogram exits without R0, caller does not read it", XBPF_PROG_XDP, {
		XI_CALL_REL(2), XI_MOV64_K(R0, 2), XI_EXIT(), XI_MOV64_K(R1, 0), XI_EXIT() }, ACCEPT },
	{ "dataplane: subprogram exits without R0, caller reads it", XBPF_PROG_XDP, {
		XI_CALL_REL(1), XI_EXIT(), XI_MOV64_K(R1, 0), XI_EXIT() }, REJECT("R0 !read_ok") },
	{ "dataplane: bound on a 32-bit copy carries to the original", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 0), XI_STX(XBPF_W, FP, R6, -4), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 5),
		XI_LDX(XBPF_B, R5, R0, 0), XI_MOV32_X(R6, R5), XI_JMP_K(XBPF_JGT, R6, 32, 2),
		XI_ALU64_X(XBPF_ADD, R0, R5), XI_LDX(XBPF_B, R0, R0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "dataplane: bound on the original carries to its 32-bit copy", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 0), XI_STX(XBPF_W, FP, R6, -4), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 5),
		XI_LDX(XBPF_H, R5, R0, 0), XI_MOV32_X(R6, R5), XI_JMP_K(XBPF_JGT, R5, 32, 2),
		XI_ALU64_X(XBPF_ADD, R0, R6), XI_LDX(XBPF_B, R0, R0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "dataplane: no link from a 32-bit copy of a 64-bit value", XBPF_PROG_XDP, {
		XI_MOV64_K(R6, 0), XI_STX(XBPF_W, FP, R6, -4), XI_MOV64_X(R2, FP), XI_ALU64_K(XBPF_ADD, R2, -4),
		XI_LD_MAP(R1, 0), XI_CALL(XH_MAP_LOOKUP), XI_JMP_K(XBPF_JEQ, R0, 0, 5),
		XI_LDX(XBPF_DW, R5, R0, 0), XI_MOV32_X(R6, R5), XI_JMP_K(XBPF_JGT, R6, 32, 2),
		XI_ALU64_X(XBPF_ADD, R0, R5), XI_LDX(XBPF_B, R0, R0, 0), XI_MOV64_K(R0, 0), XI_EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, REJECT("math between map_value pointer and register with unbounded min value is not allowed") },
	/* ---- helper memory that may be NULL (libFuzzer: NULL read in csum_diff) -- */
	{ "helper mem: NULL with a non-zero size", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_ST(XBPF_DW, FP, -16, 0), XI_MOV64_X(R1, FP),
		XI_ALU64_K(XBPF_ADD, R1, -16), XI_MOV64_K(R2, 16), XI_MOV64_K(R3, 0), XI_MOV64_K(R4, 64),
		XI_MOV64_K(R5, 0), XI_CALL(28), XI_EXIT() }, REJECT("R3 type=scalar expected=fp") },
	{ "helper mem: NULL with size zero", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_ST(XBPF_DW, FP, -16, 0), XI_MOV64_X(R1, FP),
		XI_ALU64_K(XBPF_ADD, R1, -16), XI_MOV64_K(R2, 16), XI_MOV64_K(R3, 0), XI_MOV64_K(R4, 0),
		XI_MOV64_K(R5, 0), XI_CALL(28), XI_EXIT() }, ACCEPT },
	/* ---- XBPF_PROG_RAW_MEM: R1 the memory, R2 its length (no kernel twin) -- */
	{ "raw_mem: R2 is an initialized scalar", XBPF_PROG_RAW_MEM, {
		XI_MOV64_X(R0, R2), XI_ALU64_K(XBPF_AND, R0, 0xff), XI_EXIT() }, ACCEPT,
		.kernel_skip = "XBPF_PROG_RAW_MEM is xbpf's own program type" },
	{ "raw_mem: R2 is not a pointer", XBPF_PROG_RAW_MEM, {
		XI_LDX(XBPF_B, R0, R2, 0), XI_EXIT() }, REJECT("R2 invalid mem access 'scalar'"),
		.kernel_skip = "XBPF_PROG_RAW_MEM is xbpf's own program type" },
	{ "raw_mem: R3 is not initialized", XBPF_PROG_RAW_MEM, {
		XI_MOV64_X(R0, R3), XI_EXIT() }, REJECT("R3 !read_ok"),
		.kernel_skip = "XBPF_PROG_RAW_MEM is xbpf's own program type" },
	/* ---- atomics ------------------------------------------------------------ */
	{ "atomic: add on the stack", XBPF_PROG_XDP, {
		XI_ST(XBPF_DW, FP, -8, 0), XI_MOV64_K(R1, 1), XI_ATOMIC(XBPF_DW, XBPF_ADD, FP, R1, -8),
		XI_MOV64_K(R0, 0), XI_EXIT() }, ACCEPT },
	{ "atomic: fetch-add into the context", XBPF_PROG_SCHED_CLS, {
		XI_MOV64_K(R2, 1), XI_ATOMIC(XBPF_W, XBPF_ADD | XBPF_FETCH, R1, R2, SKB_MARK),
		XI_MOV64_K(R0, 0), XI_EXIT() }, REJECT("BPF_ATOMIC stores into R1 ctx is not allowed") },
};

const size_t vcase_cnt = sizeof(vcases) / sizeof(vcases[0]);
