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

const struct vcase vcases[] = {
	/* ---- structure: subprograms and CFG ---------------------------------- */
	{ "calls: basic sanity", XBPF_PROG_TRACEPOINT, {
		CALL_PC(2), MOV64K(R0, 1), EXIT(), MOV64K(R0, 2), EXIT() }, ACCEPT },
	{ "calls: r0 returned by callee", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), MOV64K(R0, 2), EXIT() }, ACCEPT },
	{ "calls: callee reads unset r2", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), MOV64X(R0, R2), EXIT() }, REJECT("R2 !read_ok") },
	{ "calls: call to invalid destination", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), CALL_PC(-4), EXIT() }, REJECT("call to invalid destination") },
	{ "calls: jump across function bodies", XBPF_PROG_TRACEPOINT, {
		CALL_PC(2), MOV64K(R0, 0), EXIT(), JK(JEQ, R1, 0, -3), EXIT() },
		REJECT("jump out of range from insn 3 to 1") },
	{ "calls: subprogram falls through", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), MOV64K(R0, 0), JK(JEQ, R1, 0, -2) },
		REJECT("last insn is not an exit or jmp") },
	{ "calls: unreachable code", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), CALL_PC(1), EXIT(), MOV64K(R0, 0), EXIT(),
		MOV64K(R0, 0), EXIT() }, REJECT("unreachable insn 6") },
	{ "calls: overlapping caller and callee", XBPF_PROG_TRACEPOINT, {
		CALL_PC(0), MOV64K(R0, 0), EXIT() }, REJECT("last insn is not an exit or jmp") },
	{ "calls: conditional call", XBPF_PROG_XDP, {
		LDX(W, R2, R1, 12), JK(JEQ, R2, 0, 1), CALL_PC(2), MOV64K(R0, 0),
		EXIT(), MOV64K(R0, 1), EXIT() }, ACCEPT },
	{ "calls: jump from main into the callee", XBPF_PROG_XDP, {
		LDX(W, R2, R1, 12), JK(JEQ, R2, 0, 3), CALL_PC(2), MOV64K(R0, 0),
		EXIT(), MOV64K(R0, 1), EXIT() }, REJECT("jump out of range from insn 1 to 5") },
	{ "cfg: jump out of program", XBPF_PROG_TRACEPOINT, {
		MOV64K(R0, 0), JA(5), EXIT() }, REJECT("jump out of range from insn 1 to 7") },
	{ "cfg: no exit", XBPF_PROG_TRACEPOINT, { MOV64K(R0, 0) }, .insn_cnt = 1,
		REJECT("last insn is not an exit or jmp") },
	{ "calls: recursion", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), CALL_PC(-1), EXIT() },
		REJECT("the call stack of 9 frames is too deep") },
	/* ---- stack across frames --------------------------------------------- */
	{ "calls: callee reads caller stack", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R1, FP), A64K(ADD, R1, -8),
		CALL_PC(1), EXIT(), LDX(W, R0, R1, 0), EXIT() }, ACCEPT },
	{ "calls: spill caller stack pointer into caller stack", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R1, FP), A64K(ADD, R1, -8),
		CALL_PC(1), EXIT(), STX(DW, R1, R1, 0), MOV64K(R0, 0), EXIT() },
		REJECT("cannot spill pointers to stack into stack frame of the caller") },
	{ "calls: return stack pointer", XBPF_PROG_XDP, {
		CALL_PC(1), EXIT(), MOV64X(R0, FP), EXIT() },
		REJECT("cannot return stack pointer to the caller") },

	{ "calls: callee reads the context", XBPF_PROG_SCHED_ACT, {
		CALL_PC(1), EXIT(), LDX(W, R0, R1, SKB(len)), EXIT() }, ACCEPT },
	{ "calls: two arguments", XBPF_PROG_SCHED_CLS, {
		MOV64X(R6, R1), LDX(W, R1, R6, SKB(len)), LDX(W, R2, R6, SKB(mark)),
		CALL_PC(1), EXIT(), MOV64X(R0, R1), A64X(ADD, R0, R2), EXIT() }, ACCEPT },
	{ "calls: callee writes the caller's stack, caller reads it", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(ADD, R1, -16), CALL_PC(2), LDX(DW, R0, FP, -16),
		EXIT(), ST(DW, R1, 0, 7), EXIT() }, ACCEPT },
	{ "calls: caller uses r0 of a callee that set none", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(ADD, R1, -8), CALL_PC(2), MOV64X(R1, R0),
		EXIT(), ST(DW, R1, 0, 7), EXIT() }, REJECT("R0 !read_ok") },
	{ "calls: callee's adjust_head invalidates the caller's packet pointers", XBPF_PROG_XDP, {
		LDX(W, R6, R1, XDP_MD(data)), LDX(W, R7, R1, XDP_MD(data_end)),
		MOV64X(R8, R6), A64K(ADD, R8, 8), JX(JGT, R8, R7, 2),
		CALL_PC(3), LDX(DW, R0, R6, 0), MOV32K(R0, 0), EXIT(),
		MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_xdp_adjust_head), EXIT() },
		REJECT("R6 invalid mem access 'scalar'") },
	{ "calls: callee returns a map value through the caller's stack", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(ADD, R1, -8), CALL_PC(5),
		LDX(DW, R0, FP, -8), JK(JEQ, R0, 0, 1), ST(DW, R0, 0, 0),
		MOV64K(R0, 0), EXIT(),
		MOV64X(R6, R1), ST(DW, FP, -8, 0), MOV64X(R2, FP), A64K(ADD, R2, -8),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), STX(DW, R6, R0, 0), MOV64K(R0, 0),
		EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1, ACCEPT },
	{ "calls: map value from the callee used without a null check", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(ADD, R1, -8), CALL_PC(4),
		LDX(DW, R0, FP, -8), ST(DW, R0, 0, 0),
		MOV64K(R0, 0), EXIT(),
		MOV64X(R6, R1), ST(DW, FP, -8, 0), MOV64X(R2, FP), A64K(ADD, R2, -8),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), STX(DW, R6, R0, 0), MOV64K(R0, 0),
		EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("R0 invalid mem access 'map_value_or_null'") },
	{ "calls: unchecked packet pointer spilled into the caller, checked later", XBPF_PROG_SCHED_CLS, {
		MOV64X(R4, FP), A64K(ADD, R4, -8), CALL_PC(1), EXIT(),
		LDX(W, R2, R1, SKB(data)), LDX(W, R3, R1, SKB(data_end)),
		MOV64X(R0, R2), A64K(ADD, R0, 8), STX(DW, R4, R2, 0),
		JX(JGT, R0, R3, 2), LDX(DW, R2, R4, 0), ST(W, R2, 0, 0),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "calls: call into the middle of ld_imm64", XBPF_PROG_TRACEPOINT, {
		CALL_PC(3), CALL_PC(3), MOV64K(R0, 0), EXIT(), LDIMM64(R0, 0), EXIT() },
		REJECT("last insn is not an exit or jmp") },
	/* ---- frames and stack limits ----------------------------------------- */
	{ "calls: nine frames deep", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), CALL_PC(1), EXIT(), CALL_PC(1), EXIT(),
		CALL_PC(1), EXIT(), CALL_PC(1), EXIT(), CALL_PC(1), EXIT(),
		CALL_PC(1), EXIT(), CALL_PC(1), EXIT(), CALL_PC(1), EXIT(),
		MOV64K(R0, 0), EXIT() }, REJECT("the call stack of 9 frames is too deep") },
	{ "calls: eight frames deep", XBPF_PROG_TRACEPOINT, {
		CALL_PC(1), EXIT(), CALL_PC(1), EXIT(), CALL_PC(1), EXIT(),
		CALL_PC(1), EXIT(), CALL_PC(1), EXIT(), CALL_PC(1), EXIT(),
		CALL_PC(1), EXIT(), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "calls: combined stack of two frames too large", XBPF_PROG_XDP, {
		ST(DW, FP, -304, 0), CALL_PC(2), MOV64K(R0, 0), EXIT(),
		ST(DW, FP, -304, 0), MOV64K(R0, 0), EXIT() },
		REJECT("combined stack size of 2 calls is") },
	{ "calls: a callee only called from dead code adds no stack", XBPF_PROG_XDP, {
		ST(DW, FP, -304, 0), MOV64K(R1, 0), JK(JEQ, R1, 0, 1),
		CALL_PC(2), MOV64K(R0, 0), EXIT(),
		ST(DW, FP, -304, 0), MOV64K(R0, 0), EXIT() },
		ACCEPT },
	{ "stack: write below the frame", XBPF_PROG_XDP, {
		ST(DW, FP, -520, 0), MOV64K(R0, 0), EXIT() },
		REJECT("invalid write to stack R10 off=-520 size=8") },
	{ "stack: write above the frame", XBPF_PROG_XDP, {
		ST(DW, FP, 0, 0), MOV64K(R0, 0), EXIT() },
		REJECT("invalid write to stack R10 off=0 size=8") },
	{ "stack: misaligned", XBPF_PROG_XDP, {
		ST(DW, FP, -12, 0), MOV64K(R0, 0), EXIT() },
		REJECT("misaligned stack access") },
	{ "stack: variable-offset write and read inside the frame", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_ktime_get_ns), A64K(AND, R0, 8), MOV64X(R1, FP), A64K(ADD, R1, -16),
		A64X(ADD, R1, R0), ST(DW, R1, 0, 0), LDX(DW, R0, R1, 0), EXIT() },
		ACCEPT },
	{ "stack: variable-offset write may leave the frame", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_ktime_get_ns), A64K(AND, R0, 8), MOV64X(R1, FP), A64K(ADD, R1, -8),
		A64X(ADD, R1, R0), ST(DW, R1, 0, 0), MOV64K(R0, 0), EXIT() },
		REJECT("invalid variable-offset write to stack R1 var_off=(0x0; 0x8) off=-8 size=8") },
	{ "stack: variable-offset access misaligned", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_ktime_get_ns), A64K(AND, R0, 4), MOV64X(R1, FP), A64K(ADD, R1, -16),
		A64X(ADD, R1, R0), ST(DW, R1, 0, 0), MOV64K(R0, 0), EXIT() },
		REJECT("misaligned stack access off (0x0; 0x4)+-16+0 size 8") },
	{ "stack: pointer spill and fill keeps the type", XBPF_PROG_XDP, {
		STX(DW, FP, R1, -8), LDX(DW, R2, FP, -8),
		LDX(W, R0, R2, XDP_MD(data)), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "stack: partial fill of a spilled pointer", XBPF_PROG_XDP, {
		STX(DW, FP, R1, -8), LDX(W, R2, FP, -8), MOV64K(R0, 0), EXIT() },
		REJECT("invalid size of register fill") },
	{ "stack: frame pointer is read only", XBPF_PROG_XDP, {
		MOV64K(FP, 0), MOV64K(R0, 0), EXIT() }, REJECT("frame pointer is read only") },
	/* ---- registers ------------------------------------------------------- */
	{ "regs: helper clobbers r1-r5", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_ktime_get_ns), MOV64X(R0, R1), EXIT() }, REJECT("R1 !read_ok") },
	{ "regs: callee-saved survive a helper", XBPF_PROG_XDP, {
		MOV64K(R6, 1), CALL_HELPER(BPF_FUNC_ktime_get_ns), MOV64X(R0, R6), EXIT() }, ACCEPT },
	{ "regs: exit without r0", XBPF_PROG_XDP, { EXIT() }, REJECT("R0 !read_ok") },
	{ "regs: returning a pointer is fine when privileged", XBPF_PROG_XDP, {
		MOV64X(R0, R1), EXIT() }, ACCEPT },
	{ "alu: div by zero constant", XBPF_PROG_XDP, {
		MOV64K(R0, 1), A64K(DIV, R0, 0), EXIT() }, REJECT("div by zero") },
	{ "alu: bitwise op on a pointer", XBPF_PROG_XDP, {
		A64K(AND, R1, 7), MOV64K(R0, 0), EXIT() },
		REJECT("R1 bitwise operator &= on pointer prohibited") },
	{ "alu: 32-bit pointer arithmetic", XBPF_PROG_XDP, {
		A32K(ADD, R1, 7), MOV64K(R0, 0), EXIT() },
		REJECT("R1 32-bit pointer arithmetic prohibited") },
	{ "alu: pointer minus pointer is a number", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		A64X(SUB, R3, R2), MOV64X(R0, R3), EXIT() }, ACCEPT },
	{ "alu: pointer plus pointer", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), MOV64X(R3, R2), A64X(ADD, R3, R2),
		MOV64K(R0, 0), EXIT() }, REJECT("R3 pointer += pointer prohibited") },
	{ "alu: subtraction from the stack pointer", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(SUB, R1, 8), ST(DW, R1, 0, 0), MOV64K(R0, 0),
		EXIT() }, REJECT("R1 subtraction from stack pointer prohibited") },
	{ "alu: arithmetic on pkt_end", XBPF_PROG_XDP, {
		LDX(W, R3, R1, XDP_MD(data_end)), A64K(ADD, R3, 1), MOV64K(R0, 0),
		EXIT() }, REJECT("R3 pointer arithmetic on pkt_end prohibited") },
	/* ---- context --------------------------------------------------------- */
	{ "ctx: xdp reads data, data_end, data_meta, ifindex", XBPF_PROG_XDP, {
		LDX(W, R2, R1, 0), LDX(W, R2, R1, 4), LDX(W, R2, R1, 8),
		LDX(W, R2, R1, 12), LDX(W, R2, R1, 16), MOV64K(R0, 0), EXIT() },
		ACCEPT },
	{ "ctx: xdp narrow read", XBPF_PROG_XDP, {
		LDX(B, R2, R1, 12), MOV64K(R0, 0), EXIT() },
		REJECT("invalid bpf_context access off=12 size=1") },
	{ "ctx: xdp write", XBPF_PROG_XDP, {
		MOV64K(R2, 0), STX(W, R1, R2, 12), MOV64K(R0, 0), EXIT() },
		REJECT("invalid bpf_context access off=12 size=4") },
	{ "ctx: xdp beyond the struct", XBPF_PROG_XDP, {
		LDX(W, R2, R1, 24), MOV64K(R0, 0), EXIT() },
		REJECT("invalid bpf_context access off=24 size=4") },
	{ "ctx: tc writes mark, reads len narrowly", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 7), STX(W, R1, R2, SKB(mark)), LDX(B, R3, R1, SKB(len)),
		LDX(H, R3, R1, SKB(len) + 2), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "ctx: tc writes len", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 7), STX(W, R1, R2, SKB(len)), MOV64K(R0, 0), EXIT() },
		REJECT("invalid bpf_context access off=0 size=4") },
	{ "ctx: socket filter writes mark", XBPF_PROG_SOCKET_FILTER, {
		MOV64K(R2, 7), STX(W, R1, R2, SKB(mark)), MOV64K(R0, 0), EXIT() },
		REJECT("invalid bpf_context access off=8 size=4") },
	{ "ctx: socket filter writes cb", XBPF_PROG_SOCKET_FILTER, {
		MOV64K(R2, 7), STX(W, R1, R2, SKB(cb[0])), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "ctx: socket filter reads data", XBPF_PROG_SOCKET_FILTER, {
		LDX(W, R2, R1, SKB(data)), MOV64K(R0, 0), EXIT() },
		REJECT("invalid bpf_context access off=76 size=4") },
	{ "ctx: BPF_ST into ctx (allowed since 5.x)", XBPF_PROG_SCHED_CLS, {
		ST(W, R1, SKB(mark), 1), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "ctx: modified ctx pointer", XBPF_PROG_SCHED_CLS, {
		A64K(ADD, R1, 4), LDX(W, R0, R1, 0), EXIT() },
		REJECT("dereference of modified ctx ptr R1 off=4 disallowed") },
	{ "ctx: tracepoint reads, aligned", XBPF_PROG_TRACEPOINT, {
		LDX(DW, R0, R1, 16), EXIT() }, ACCEPT },
	{ "ctx: tracepoint hides its first 8 bytes", XBPF_PROG_TRACEPOINT, {
		LDX(W, R0, R1, 4), EXIT() }, REJECT("invalid bpf_context access off=4 size=4") },
	{ "ctx: xdp egress_ifindex is for devmap programs", XBPF_PROG_XDP, {
		LDX(W, R0, R1, 20), EXIT() }, REJECT("invalid bpf_context access off=20 size=4") },
	{ "ctx: tracepoint misaligned read", XBPF_PROG_TRACEPOINT, {
		LDX(DW, R0, R1, 12), EXIT() }, REJECT("invalid bpf_context access off=12 size=8") },
	/* ---- packet ------------------------------------------------------------ */
	{ "pkt: read without range check", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(B, R0, R2, 0), EXIT() },
		REJECT("invalid access to packet, off=0 size=1, R2(id=0,off=0,r=0)") },
	{ "pkt: read inside the checked range", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 14), JX(JGT, R4, R3, 2),
		LDX(W, R0, R2, 10), ST(H, R2, 12, 0), MOV64K(R0, 2), EXIT() },
		ACCEPT },
	{ "pkt: read one byte past the checked range", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 14), JX(JGT, R4, R3, 1),
		LDX(W, R0, R2, 11), MOV64K(R0, 2), EXIT() },
		REJECT("invalid access to packet, off=11 size=4, R2(id=0,off=11,r=14)") },
	{ "pkt: checked range, reversed compare (end < pkt')", XBPF_PROG_SCHED_CLS, {
		LDX(W, R2, R1, SKB(data)), LDX(W, R3, R1, SKB(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 8), JX(JLT, R3, R4, 1),
		LDX(DW, R0, R2, 0), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "pkt: wrong branch of the check", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 8), JX(JLE, R4, R3, 2),
		LDX(DW, R0, R2, 0), EXIT(), MOV64K(R0, 0), EXIT() },
		REJECT("invalid access to packet") },
	{ "pkt: variable offset needs a new check", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 1), JX(JGT, R4, R3, 6),
		LDX(B, R5, R2, 0), A64X(ADD, R2, R5), MOV64X(R4, R2),
		A64K(ADD, R4, 2), JX(JGT, R4, R3, 1), LDX(H, R0, R2, 0),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "pkt: variable offset without a new check", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 4), JX(JGT, R4, R3, 3),
		LDX(B, R5, R2, 0), A64X(ADD, R2, R5), LDX(B, R0, R2, 0),
		MOV64K(R0, 0), EXIT() }, REJECT("invalid access to packet") },
	{ "pkt: adjust_head invalidates packet pointers", XBPF_PROG_XDP, {
		MOV64X(R6, R1), LDX(W, R7, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R7), A64K(ADD, R4, 8), JX(JGT, R4, R3, 4),
		MOV64X(R1, R6), MOV64K(R2, 4), CALL_HELPER(BPF_FUNC_xdp_adjust_head), LDX(B, R0, R7, 0),
		MOV64K(R0, 0), EXIT() }, REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: meta before data", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data_meta)), LDX(W, R3, R1, XDP_MD(data)),
		MOV64X(R4, R2), A64K(ADD, R4, 4), JX(JGT, R4, R3, 1),
		LDX(W, R0, R2, 0), MOV64K(R0, 0), EXIT() }, ACCEPT },
	/* ---- maps and null checks ---------------------------------------------- */
	{ "map: lookup result used without null check", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R2, FP), A64K(ADD, R2, -8),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), LDX(DW, R0, R0, 0), EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("R0 invalid mem access 'map_value_or_null'") },
	{ "map: null check on a copy covers the original", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R2, FP), A64K(ADD, R2, -8),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), MOV64X(R6, R0),
		JK(JEQ, R6, 0, 2), ST(DW, R0, 0, 1), MOV64K(R0, 0), MOV64K(R0, 0),
		EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1, ACCEPT },
	{ "map: value access out of bounds", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R2, FP), A64K(ADD, R2, -8),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 1),
		ST(W, R0, 6, 1), MOV64K(R0, 0), EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("invalid access to map value, value_size=8 off=6 size=4") },
	{ "map: index bounded by and", XBPF_PROG_XDP, {
		MOV64K(R6, 0), STX(W, FP, R6, -4), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 5),
		LDX(W, R1, R0, 0), A64K(AND, R1, 31), A64X(ADD, R0, R1),
		LDX(DW, R0, R0, 8), MOV64K(R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "map: index bounded too loosely", XBPF_PROG_XDP, {
		MOV64K(R6, 0), STX(W, FP, R6, -4), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 5),
		LDX(W, R1, R0, 0), A64K(AND, R1, 63), A64X(ADD, R0, R1),
		LDX(DW, R0, R0, 8), MOV64K(R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, REJECT("invalid access to map value, value_size=48 off=71 size=8") },
	{ "map: index bounded by a 32-bit compare", XBPF_PROG_XDP, {
		MOV64K(R6, 0), STX(W, FP, R6, -4), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 5),
		LDX(W, R1, R0, 0), J32K(JGT, R1, 40, 3), A64X(ADD, R0, R1),
		LDX(DW, R0, R0, 0), MOV64K(R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "map: signed index may be negative", XBPF_PROG_XDP, {
		MOV64K(R6, 0), STX(W, FP, R6, -4), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 5),
		LDX(DW, R1, R0, 0), JK(JSGT, R1, 40, 3), A64X(ADD, R0, R1),
		LDX(DW, R0, R0, 0), MOV64K(R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1,
		REJECT("math between map_value pointer and register with unbounded min value is not allowed") },
	{ "map: map pointer arithmetic", XBPF_PROG_XDP, {
		LD_MAP(R1, 0), A64K(ADD, R1, 8), MOV64K(R0, 0), EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("R1 pointer arithmetic on map_ptr prohibited") },
	{ "map: arithmetic before the null check", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R2, FP), A64K(ADD, R2, -8),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), A64K(ADD, R0, 8), MOV64K(R0, 0),
		EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("R0 pointer arithmetic on map_value_or_null prohibited, null-check it first") },
	{ "map: key on the stack too short", XBPF_PROG_XDP, {
		MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem),
		MOV64K(R0, 0), EXIT() }, .maps = { HASH_8_8 }, .map_cnt = 1,
		REJECT("invalid read from stack R2 off=-4 size=8") },
	{ "map: key is not a pointer", XBPF_PROG_XDP, {
		MOV64K(R2, 0), LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), MOV64K(R0, 0), EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("R2 type=scalar expected=") },
	{ "map: direct value access", XBPF_PROG_XDP, {
		LD_MAP_VALUE(R1, 0, 16), LDX(DW, R0, R1, 24), EXIT() },
		.maps = { ARRAY_1_48 }, .map_cnt = 1, ACCEPT },
	{ "map: direct value access needs a one-element array", XBPF_PROG_XDP, {
		LD_MAP_VALUE(R1, 0, 16), LDX(DW, R0, R1, 24), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, REJECT("invalid access to map value pointer, value_size=48 off=16") },
	{ "map: direct value access out of bounds", XBPF_PROG_XDP, {
		LD_MAP_VALUE(R1, 0, 16), LDX(DW, R0, R1, 32), EXIT() },
		.maps = { ARRAY_1_48 }, .map_cnt = 1, REJECT("invalid access to map value, value_size=48 off=48 size=8") },
	/* ---- helpers ----------------------------------------------------------- */
	{ "map: lookup in a ring buffer", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R2, FP), A64K(ADD, R2, -8),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), MOV64K(R0, 0), EXIT() },
		.maps = { RINGBUF_4K }, .map_cnt = 1, REJECT("invalid zero-sized read") },
	{ "map: redirect_map needs a devmap", XBPF_PROG_XDP, {
		LD_MAP(R1, 0), MOV64K(R2, 0), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_redirect_map), EXIT() },
		.maps = { HASH_8_8 }, .map_cnt = 1, REJECT("cannot pass map_type 1 into func bpf_redirect_map#51") },
	{ "map: redirect_map into a devmap", XBPF_PROG_XDP, {
		LD_MAP(R1, 0), MOV64K(R2, 0), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_redirect_map), EXIT() },
		.maps = { DEVMAP_4 }, .map_cnt = 1, ACCEPT },
	{ "map: lookup through a map of maps", XBPF_PROG_XDP, {
		ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 6),
		MOV64X(R1, R0), MOV64X(R2, FP), A64K(ADD, R2, -4), CALL_HELPER(BPF_FUNC_map_lookup_elem),
		JK(JEQ, R0, 0, 1), LDX(DW, R0, R0, 40), MOV64K(R0, 0), EXIT() },
		.maps = { { .name = "outer", .type = XBPF_MAP_ARRAY_OF_MAPS, .key_size = 4, .value_size = 4,
			    .max_entries = 2, .inner = &inner_array } }, .map_cnt = 1, ACCEPT,
		.kernel_skip = "a map of maps needs an inner map fd at creation, which the runner does not make" },
	{ "map: map of maps value used before the null check", XBPF_PROG_XDP, {
		ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem),
		MOV64X(R1, R0), MOV64X(R2, FP), A64K(ADD, R2, -4), CALL_HELPER(BPF_FUNC_map_lookup_elem),
		MOV64K(R0, 0), EXIT() },
		.maps = { { .name = "outer", .type = XBPF_MAP_ARRAY_OF_MAPS, .key_size = 4, .value_size = 4,
			    .max_entries = 2, .inner = &inner_array } }, .map_cnt = 1,
		REJECT("R1 type=map_ptr_or_null expected=map_ptr"),
		.kernel_skip = "a map of maps needs an inner map fd at creation, which the runner does not make" },
	{ "helper: unknown", XBPF_PROG_XDP, {
		CALL_HELPER(100000), MOV64K(R0, 0), EXIT() }, REJECT("invalid func unknown#100000") },
	{ "helper: not for this program type", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_xdp_adjust_head), MOV64K(R0, 0), EXIT() },
		REJECT("program of this type cannot use helper bpf_xdp_adjust_head#44") },
	{ "helper: ctx argument", XBPF_PROG_XDP, {
		MOV64K(R1, 0), MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_xdp_adjust_head), MOV64K(R0, 0), EXIT() },
		REJECT("R1 type=scalar expected=ctx") },
	{ "helper: memory and size from the stack", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), ST(DW, FP, -16, 0), MOV64X(R1, FP), A64K(ADD, R1, -16),
		MOV64K(R2, 16), MOV64K(R3, 0), MOV64K(R4, 0), MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_csum_diff),
		EXIT() }, ACCEPT },
	{ "helper: memory argument larger than the stack", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(ADD, R1, -16), MOV64K(R2, 24), MOV64K(R3, 0),
		MOV64K(R4, 0), MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_csum_diff), EXIT() },
		REJECT("invalid read from stack R1 off=-16 size=24") },
	{ "helper: unbounded size", XBPF_PROG_XDP, {
		MOV64X(R6, R1), CALL_HELPER(BPF_FUNC_ktime_get_ns), MOV64X(R2, R0), MOV64X(R1, FP),
		A64K(ADD, R1, -16), MOV64K(R3, 0), MOV64K(R4, 0), MOV64K(R5, 0),
		CALL_HELPER(BPF_FUNC_csum_diff), EXIT() }, REJECT("R2 min value is negative, either use unsigned or 'var &= const'") },
	/* ---- legacy packet access ------------------------------------------------ */
	{ "ld_abs: tc program", XBPF_PROG_SCHED_CLS, {
		MOV64X(R6, R1), LDABS(H, 12), EXIT() }, ACCEPT },
	{ "ld_abs: not in xdp", XBPF_PROG_XDP, {
		MOV64X(R6, R1), LDABS(H, 12), EXIT() },
		REJECT("BPF_LD_[ABS|IND] instructions not allowed for this program type") },
	{ "ld_abs: in a subprogram", XBPF_PROG_SCHED_CLS, {
		CALL_PC(1), EXIT(), MOV64X(R6, R1), LDABS(H, 12), EXIT() },
		REJECT("LD_ABS is not allowed in subprogs without BTF") },
	{ "ld_abs: in main next to a subprogram", XBPF_PROG_SCHED_CLS, {
		MOV64X(R6, R1), LDABS(H, 12), CALL_PC(1), EXIT(), MOV64K(R0, 0),
		EXIT() }, ACCEPT },
	/* ---- loops and limits --------------------------------------------------- */
	{ "loop: bounded", XBPF_PROG_XDP, {
		MOV64K(R0, 0), A64K(ADD, R0, 1), JK(JLT, R0, 10, -2), EXIT() },
		ACCEPT },
	{ "loop: infinite", XBPF_PROG_XDP, {
		MOV64K(R0, 0), JK(JEQ, R0, 0, -1), EXIT() },
		REJECT("infinite loop detected at insn 1") },
	{ "loop: too many instructions", XBPF_PROG_XDP, {
		MOV64K(R0, 0), A64K(ADD, R0, 1), JK(JLT, R0, 600000, -2), EXIT() },
		REJECT("BPF program is too large. Processed 1000001 insn") },
	/* ---- reported by the dataplane (kernel 6.18 as root accepts) -------------- */
	{ "dataplane: 32-bit difference of a pointer copy and a pointer", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R1, R1, XDP_MD(data_end)),
		MOV32X(R4, R2), A32X(SUB, R4, R1), MOV64X(R0, R4),
		A64K(AND, R0, 1), EXIT() }, ACCEPT },
	{ "dataplane: 32-bit sum of a scalar and a pointer", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), MOV32K(R4, 1),
		A32X(ADD, R4, R2), MOV64K(R0, 0), EXIT() },
		REJECT("R4 32-bit pointer arithmetic prohibited") },
	{ "dataplane: subprogram exits without R0, caller does not read it", XBPF_PROG_XDP, {
		CALL_PC(2), MOV64K(R0, 2), EXIT(), MOV64K(R1, 0), EXIT() }, ACCEPT },
	{ "dataplane: subprogram exits without R0, caller reads it", XBPF_PROG_XDP, {
		CALL_PC(1), EXIT(), MOV64K(R1, 0), EXIT() }, REJECT("R0 !read_ok") },
	{ "dataplane: bound on a 32-bit copy carries to the original", XBPF_PROG_XDP, {
		MOV64K(R6, 0), STX(W, FP, R6, -4), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 5),
		LDX(B, R5, R0, 0), MOV32X(R6, R5), JK(JGT, R6, 32, 2),
		A64X(ADD, R0, R5), LDX(B, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "dataplane: bound on the original carries to its 32-bit copy", XBPF_PROG_XDP, {
		MOV64K(R6, 0), STX(W, FP, R6, -4), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 5),
		LDX(H, R5, R0, 0), MOV32X(R6, R5), JK(JGT, R5, 32, 2),
		A64X(ADD, R0, R6), LDX(B, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, ACCEPT },
	{ "dataplane: no link from a 32-bit copy of a 64-bit value", XBPF_PROG_XDP, {
		MOV64K(R6, 0), STX(W, FP, R6, -4), MOV64X(R2, FP), A64K(ADD, R2, -4),
		LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JEQ, R0, 0, 5),
		LDX(DW, R5, R0, 0), MOV32X(R6, R5), JK(JGT, R6, 32, 2),
		A64X(ADD, R0, R5), LDX(B, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48 }, .map_cnt = 1, REJECT("math between map_value pointer and register with unbounded min value is not allowed") },
	/* ---- helper memory that may be NULL (libFuzzer: NULL read in csum_diff) -- */
	{ "helper mem: NULL with a non-zero size", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), ST(DW, FP, -16, 0), MOV64X(R1, FP),
		A64K(ADD, R1, -16), MOV64K(R2, 16), MOV64K(R3, 0), MOV64K(R4, 64),
		MOV64K(R5, 0), CALL_HELPER(28), EXIT() }, REJECT("R3 type=scalar expected=fp") },
	{ "helper mem: NULL with size zero", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), ST(DW, FP, -16, 0), MOV64X(R1, FP),
		A64K(ADD, R1, -16), MOV64K(R2, 16), MOV64K(R3, 0), MOV64K(R4, 0),
		MOV64K(R5, 0), CALL_HELPER(28), EXIT() }, ACCEPT },
	/* ---- XBPF_PROG_RAW_MEM: R1 the memory, R2 its length (no kernel twin) -- */
	{ "raw_mem: R2 is an initialized scalar", XBPF_PROG_RAW_MEM, {
		MOV64X(R0, R2), A64K(AND, R0, 0xff), EXIT() }, ACCEPT,
		.kernel_skip = "XBPF_PROG_RAW_MEM is xbpf's own program type" },
	{ "raw_mem: R2 is not a pointer", XBPF_PROG_RAW_MEM, {
		LDX(B, R0, R2, 0), EXIT() }, REJECT("R2 invalid mem access 'scalar'"),
		.kernel_skip = "XBPF_PROG_RAW_MEM is xbpf's own program type" },
	{ "raw_mem: R3 is not initialized", XBPF_PROG_RAW_MEM, {
		MOV64X(R0, R3), EXIT() }, REJECT("R3 !read_ok"),
		.kernel_skip = "XBPF_PROG_RAW_MEM is xbpf's own program type" },
	/* ---- atomics ------------------------------------------------------------ */
	{ "atomic: add on the stack", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64K(R1, 1), ATOMIC(DW, XBPF_ADD, FP, R1, -8),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "atomic: fetch-add into the context", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 1), ATOMIC(W, XBPF_ADD | XBPF_FETCH, R1, R2, SKB(mark)),
		MOV64K(R0, 0), EXIT() }, REJECT("BPF_ATOMIC stores into R1 ctx is not allowed") },
};

const size_t vcase_cnt = sizeof(vcases) / sizeof(vcases[0]);
