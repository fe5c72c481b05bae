// SPDX-License-Identifier: MIT
/*
 * cases_gaps.c - verdicts where xlb's verifier and the kernel once
 * disagreed (issue 10), each with its twin on the other side of the line.
 * Like cases.c, every case also runs through this machine's kernel in the
 * 'kernel' suite, which must give the same verdict.
 */
#include "insn.h"
#include "vcase.h"

#define ARRAY_4_48(flags) \
	{ .name = "a", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 48, .max_entries = 4, \
	  .map_flags = (flags) }
#define BPF_F_RDONLY_PROG (1u << 7)
#define BPF_F_WRONLY_PROG (1u << 8)

/* r0 = lookup(map 0, key 0) and return 0 when NULL; 8 insns. */
#define LOOKUP_KEY0 \
	ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0), \
	CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JNE, R0, 0, 2), MOV64K(R0, 0), EXIT()

const struct vcase vcases_gaps[] = {
	/* ---- a pointer stored to the stack with fewer than 8 bytes (false accept) -- */
	{ "narrow spill: u32 store of the ctx pointer", XBPF_PROG_XDP, {
		STX(W, FP, R1, -8), MOV64K(R0, 0), EXIT() },
		REJECT("invalid size of register spill") },
	{ "narrow spill: u16 store of the ctx pointer", XBPF_PROG_XDP, {
		STX(H, FP, R1, -8), MOV64K(R0, 0), EXIT() },
		REJECT("invalid size of register spill") },
	{ "narrow spill: u8 store of the ctx pointer", XBPF_PROG_XDP, {
		STX(B, FP, R1, -8), MOV64K(R0, 0), EXIT() },
		REJECT("invalid size of register spill") },
	{ "narrow spill: u32 store of the ctx pointer in the slot's upper half", XBPF_PROG_XDP, {
		STX(W, FP, R1, -4), MOV64K(R0, 0), EXIT() },
		REJECT("invalid size of register spill") },
	{ "narrow spill: u32 store of the frame pointer in a subprogram", XBPF_PROG_XDP, {
		CALL_PC(2), MOV64K(R0, 0), EXIT(), MOV64X(R2, FP),
		STX(W, FP, R2, -8), EXIT() },
		REJECT("invalid size of register spill") },
	{ "narrow spill: u32 store of a map value pointer in a subprogram", XBPF_PROG_XDP, {
		LOOKUP_KEY0, MOV64X(R1, R0), CALL_PC(2), MOV64K(R0, 0), EXIT(),
		STX(W, FP, R1, -8), EXIT() },
		.maps = { ARRAY_4_48(0) }, .map_cnt = 1, REJECT("invalid size of register spill") },
	{ "narrow spill: the whole pointer spilled and filled is fine", XBPF_PROG_XDP, {
		STX(DW, FP, R1, -8), LDX(DW, R1, FP, -8), LDX(W, R0, R1, XDP_MD(rx_queue_index)),
		EXIT() }, ACCEPT },
	{ "narrow spill: u32 store of a scalar is fine", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(rx_queue_index)), STX(W, FP, R2, -4), MOV64K(R0, 0), EXIT() },
		ACCEPT },
	{ "narrow spill: a u32 fill of a spilled pointer", XBPF_PROG_XDP, {
		STX(DW, FP, R1, -8), LDX(W, R0, FP, -8), EXIT() },
		REJECT("invalid size of register fill") },

	/* ---- one instruction, different pointer kinds on different paths -------- */
	{ "same insn: ctx on one path, stack on the other", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), LDX(W, R2, R1, XDP_MD(rx_queue_index)), JK(JEQ, R2, 0, 3),
		MOV64X(R3, FP), A64K(ADD, R3, -8), JA(1), MOV64X(R3, R1),
		LDX(W, R0, R3, 0), MOV64K(R0, 0), EXIT() },
		REJECT("same insn cannot be used with different pointers") },
	{ "same insn: a subprogram loads through ctx, then through the stack", XBPF_PROG_XDP, {
		MOV64X(R6, R1), CALL_PC(5), ST(DW, FP, -8, 0), MOV64X(R1, FP),
		A64K(ADD, R1, -8), CALL_PC(1), EXIT(),
		LDX(W, R0, R1, XDP_MD(data)), EXIT() },
		REJECT("same insn cannot be used with different pointers") },
	{ "same insn: a subprogram stores through ctx, then through the stack", XBPF_PROG_SCHED_CLS, {
		CALL_PC(5), ST(DW, FP, -8, 0), MOV64X(R1, FP),
		A64K(ADD, R1, -16), CALL_PC(1), EXIT(),
		ST(W, R1, SKB(mark), 7), MOV64K(R0, 0), EXIT() },
		REJECT("same insn cannot be used with different pointers") },
	{ "same insn: packet on one path, stack on the other is fine", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), LDX(W, R2, R1, XDP_MD(data)),
		LDX(W, R4, R1, XDP_MD(data_end)), MOV64X(R5, R2), A64K(ADD, R5, 8),
		JX(JGT, R5, R4, 7), LDX(W, R6, R1, XDP_MD(rx_queue_index)),
		JK(JEQ, R6, 0, 3), MOV64X(R3, FP), A64K(ADD, R3, -8), JA(1),
		MOV64X(R3, R2), LDX(W, R0, R3, 0), MOV64K(R0, 0), EXIT() }, ACCEPT },

	/* ---- atomics ------------------------------------------------------------ */
	{ "atomic: fetch into the frame pointer", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), ATOMIC(DW, XBPF_ADD | XBPF_FETCH, FP, FP, -8),
		MOV64K(R0, 0), EXIT() }, REJECT("frame pointer is read only") },
	{ "atomic: misaligned add into a map value", XBPF_PROG_XDP, {
		LOOKUP_KEY0, MOV64K(R1, 1), ATOMIC(W, XBPF_ADD, R0, R1, 3), MOV64K(R0, 0),
		EXIT() }, .maps = { ARRAY_4_48(0) }, .map_cnt = 1, REJECT("misaligned value access") },
	{ "atomic: aligned add into a map value", XBPF_PROG_XDP, {
		LOOKUP_KEY0, MOV64K(R1, 1), ATOMIC(W, XBPF_ADD, R0, R1, 4), MOV64K(R0, 0),
		EXIT() }, .maps = { ARRAY_4_48(0) }, .map_cnt = 1, ACCEPT },
	{ "atomic: fetch from a spilled pointer gives the pointer back", XBPF_PROG_XDP, {
		STX(DW, FP, R1, -8), MOV64K(R2, 0), ATOMIC(DW, XBPF_XCHG, FP, R2, -8),
		LDX(W, R0, R2, XDP_MD(rx_queue_index)), EXIT() }, ACCEPT },

	/* ---- BPF_F_RDONLY_PROG / BPF_F_WRONLY_PROG maps ------------------------- */
	{ "map flags: store into a read-only map value", XBPF_PROG_XDP, {
		LOOKUP_KEY0, ST(DW, R0, 0, 1), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(BPF_F_RDONLY_PROG) }, .map_cnt = 1, REJECT("write into map forbidden") },
	{ "map flags: load from a write-only map value", XBPF_PROG_XDP, {
		LOOKUP_KEY0, LDX(DW, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(BPF_F_WRONLY_PROG) }, .map_cnt = 1, REJECT("read from map forbidden") },
	{ "map flags: load from a read-only map value is fine", XBPF_PROG_XDP, {
		LOOKUP_KEY0, LDX(DW, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(BPF_F_RDONLY_PROG) }, .map_cnt = 1, ACCEPT },

	/* ---- BPF_F_STRICT_ALIGNMENT -------------------------------------------- */
	{ "strict alignment: u32 packet load at offset 0 (NET_IP_ALIGN 2)", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 8), JX(JGT, R4, R3, 1),
		LDX(W, R0, R2, 0), MOV64K(R0, 0), EXIT() },
		.prog_flags = 1, REJECT("misaligned packet access") },
	{ "strict alignment: u32 packet load at offset 2", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		MOV64X(R4, R2), A64K(ADD, R4, 8), JX(JGT, R4, R3, 1),
		LDX(W, R0, R2, 2), MOV64K(R0, 0), EXIT() }, .prog_flags = 1, ACCEPT },

	/* ---- narrow scalar spills keep their value (false reject) ---------------- */
	{ "narrow spill: u32 spill and fill of a constant, then a packet offset", XBPF_PROG_SCHED_CLS, {
		LDX(W, R2, R1, SKB(data)), LDX(W, R3, R1, SKB(data_end)),
		MOV32K(R4, 20), STX(W, FP, R4, -8), LDX(W, R4, FP, -8),
		A64X(ADD, R4, R2), JX(JGT, R4, R3, 1), LDX(W, R0, R2, 0),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "narrow spill: u16 fill of a u32 constant spill", XBPF_PROG_SCHED_CLS, {
		LDX(W, R2, R1, SKB(data)), LDX(W, R3, R1, SKB(data_end)),
		MOV32K(R4, 20), STX(W, FP, R4, -8), LDX(H, R4, FP, -8),
		A64X(ADD, R4, R2), JX(JGT, R4, R3, 1), LDX(W, R0, R2, 0),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "narrow spill: u32 spill and fill of a bounded value keeps the bound", XBPF_PROG_SCHED_CLS, {
		LDX(W, R2, R1, SKB(data)), LDX(W, R3, R1, SKB(data_end)),
		LDX(W, R4, R1, SKB(mark)), A64K(AND, R4, 40),
		STX(W, FP, R4, -8), LDX(W, R4, FP, -8), A64X(ADD, R2, R4),
		MOV64X(R5, R2), A64K(ADD, R5, 4), JX(JGT, R5, R3, 1),
		LDX(W, R0, R2, 0), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "narrow spill: an 8-byte fill of a u32 spill is not the value", XBPF_PROG_SCHED_CLS, {
		LDX(W, R2, R1, SKB(data)), LDX(W, R3, R1, SKB(data_end)),
		MOV32K(R4, 20), STX(W, FP, R4, -8), LDX(DW, R4, FP, -8),
		A64X(ADD, R2, R4), MOV64X(R5, R2), A64K(ADD, R5, 4),
		JX(JGT, R5, R3, 1), LDX(W, R0, R2, 0), MOV64K(R0, 0), EXIT() },
		REJECT("math between pkt pointer and register with unbounded min value is not allowed") },

	/* ---- byte swap or negation of a pointer (false reject) ------------------ */
	{ "pointer: a byte-swapped pointer is a number", XBPF_PROG_XDP, {
		MOV64X(R2, FP), BE(R2, 16),
		MOV64X(R0, R2), A64K(AND, R0, 1), EXIT() }, ACCEPT },
	{ "pointer: a negated pointer is a number", XBPF_PROG_XDP, {
		MOV64X(R2, R1), NEG64(R2), MOV64X(R0, R2),
		A64K(AND, R0, 1), EXIT() }, ACCEPT },
	{ "pointer: a negated pointer cannot be dereferenced", XBPF_PROG_XDP, {
		NEG64(R1), LDX(W, R0, R1, 0), EXIT() },
		REJECT("R1 invalid mem access 'scalar'") },
	/* ---- array lookups with a constant key cannot miss (false reject) ------- */
	{ "const key: array lookup with key 0 needs no null check", XBPF_PROG_XDP, {
		ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0),
		CALL_HELPER(BPF_FUNC_map_lookup_elem), LDX(DW, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(0) }, .map_cnt = 1, ACCEPT },
	{ "const key: array lookup with a spilled constant key 3", XBPF_PROG_XDP, {
		MOV32K(R3, 3), STX(W, FP, R3, -8), MOV64X(R2, FP), A64K(ADD, R2, -8), LD_MAP(R1, 0),
		CALL_HELPER(BPF_FUNC_map_lookup_elem), LDX(DW, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(0) }, .map_cnt = 1, ACCEPT },
	{ "const key: array lookup with key 4 of 4 entries may miss", XBPF_PROG_XDP, {
		ST(W, FP, -4, 4), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0),
		CALL_HELPER(BPF_FUNC_map_lookup_elem), LDX(DW, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(0) }, .map_cnt = 1, REJECT("R0 invalid mem access 'map_value_or_null'") },
	{ "const key: array lookup with an unknown key may miss", XBPF_PROG_XDP, {
		LDX(W, R3, R1, XDP_MD(rx_queue_index)), STX(W, FP, R3, -4), MOV64X(R2, FP),
		A64K(ADD, R2, -4), LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem),
		LDX(DW, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(0) }, .map_cnt = 1, REJECT("R0 invalid mem access 'map_value_or_null'") },
	{ "const key: the null check of a lookup that cannot miss is decided", XBPF_PROG_XDP, {
		ST(W, FP, -4, 1), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0),
		CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JNE, R0, 0, 1), STX(DW, FP, FP, -16),
		MOV64K(R0, 0), EXIT() }, .maps = { ARRAY_4_48(0) }, .map_cnt = 1, ACCEPT },

	/* ---- encodings on paths never walked (false reject) --------------------- */
	{ "dead code: reserved fields of an ALU insn no path reaches", XBPF_PROG_XDP, {
		MOV64K(R0, 0), JK(JEQ, R0, 0, 1), INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, R1, R3, 0, 1),
		EXIT() }, ACCEPT },
	{ "dead code: reserved fields of an ALU insn a path reaches", XBPF_PROG_XDP, {
		MOV64K(R0, 0), JK(JNE, R0, 0, 1), INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, R1, R3, 0, 1),
		EXIT() }, REJECT("BPF_ALU uses reserved fields") },
	{ "dead code: register 12 where no path goes", XBPF_PROG_XDP, {
		MOV64K(R0, 0), JK(JEQ, R0, 0, 1), MOV64X(12, R1), EXIT() }, ACCEPT },
	{ "dead code: an unknown opcode is refused anywhere", XBPF_PROG_XDP, {
		MOV64K(R0, 0), JK(JEQ, R0, 0, 1), INSN(0xff, 0, 0, 0, 0), EXIT() },
		REJECT("unknown opcode ff") },
	{ "dead code: LDX reserved fields are refused anywhere", XBPF_PROG_XDP, {
		MOV64K(R0, 0), JK(JEQ, R0, 0, 1), INSN(XBPF_LDX | XBPF_MEM | XBPF_W, R0, R1, 0, 1),
		EXIT() }, REJECT("BPF_LDX uses reserved fields") },

	/* ---- jset ---------------------------------------------------------------- */
	{ "jset32: a known-set bit gives a lower bound", XBPF_PROG_XDP, {
		LDX(W, R7, R1, XDP_MD(rx_queue_index)), MOV64K(R0, 0), J32K(JSET, R7, 0x10, 1), EXIT(),
		J32K(JGE, R7, 0x10, 1), LDX(B, R8, R9, 0), EXIT() }, ACCEPT },
	{ "jset: the false branch forgets the range before clearing the bits", XBPF_PROG_XDP, {
		MOV64K(R0, 0), LDX(W, R6, R1, XDP_MD(rx_queue_index)), A64K(AND, R6, 0x3f),
		JK(JGT, R6, 40, 12), JK(JSET, R6, 1, 11), ST(W, FP, -4, 0), MOV64X(R2, FP),
		A64K(ADD, R2, -4), LD_MAP(R1, 0), CALL_HELPER(BPF_FUNC_map_lookup_elem),
		JK(JNE, R0, 0, 1), EXIT(), A64X(ADD, R0, R6), LDX(DW, R0, R0, 0), MOV64K(R0, 0), EXIT() },
		.maps = { ARRAY_4_48(0) }, .map_cnt = 1, REJECT("invalid access to map value") },
	/* ---- 64-bit bounds from a tnum's members (false accept, long run 2026-12-03) ---- */
	/*
	 * r8 after a 32-bit "s>= 64" has var_off (0x40; 0x100000007) and umax
	 * 0x100000007: only values up to 71 are members, but the kernel keeps
	 * umax, so the packet offset stays unbounded and the read is refused.
	 */
	{ "tnum members: 64-bit umax is not moved in to the largest member", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		LDX(W, R8, R1, XDP_MD(ingress_ifindex)), A64K(ADD, R8, 3), A32K(ARSH, R8, 25),
		A64K(ADD, R8, 8), J32K(JSLT, R8, 64, 6), MOV64X(R5, R2), A64X(ADD, R5, R8),
		MOV64X(R4, R5), A64K(ADD, R4, 1), JX(JGT, R4, R3, 1), LDX(B, R0, R5, 0),
		MOV64K(R0, 0), EXIT() },
		REJECT("invalid access to packet") },
	{ "tnum members: the same offset computed in 32 bits is bounded", XBPF_PROG_XDP, {
		LDX(W, R2, R1, XDP_MD(data)), LDX(W, R3, R1, XDP_MD(data_end)),
		LDX(W, R8, R1, XDP_MD(ingress_ifindex)), A64K(ADD, R8, 3), A32K(ARSH, R8, 25),
		A32K(ADD, R8, 8), J32K(JSLT, R8, 64, 6), MOV64X(R5, R2), A64X(ADD, R5, R8),
		MOV64X(R4, R5), A64K(ADD, R4, 1), JX(JGT, R4, R3, 1), LDX(B, R0, R5, 0),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	/*
	 * Linux 6.18's tnum_mul() (the union of "adds b" and "adds nothing" for
	 * an unknown bit): {1,3} * 3 = {3,9} keeps bit 2 known zero, so the JSET
	 * is never taken and its load through a scalar is dead code.  The
	 * older long multiplication lost bit 2, and xlb refused it.
	 */
	{ "tnum_mul: an unknown bit adds b or nothing", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_get_prandom_u32), A64K(AND, R0, 2), A64K(OR, R0, 1),
		A64K(MUL, R0, 3), JK(JSET, R0, 4, 2), MOV64K(R0, 0), EXIT(),
		LDX(DW, R0, R0, 0), EXIT() }, ACCEPT },
	{ "tnum_mul: a bit the product may set keeps its branch", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_get_prandom_u32), A64K(AND, R0, 2), A64K(OR, R0, 1),
		A64K(MUL, R0, 3), JK(JSET, R0, 8, 2), MOV64K(R0, 0), EXIT(),
		LDX(DW, R0, R0, 0), EXIT() }, REJECT("R0 invalid mem access 'scalar'") },
	/*
	 * Linux 6.18: a u64 range and a tnum that share one value make it a
	 * constant.  ifindex + 1 is in [1, 2^32]; its low half 16 leaves the
	 * tnum {16, 2^32 + 16}, and only 16 is in the range: the packet
	 * offset is 16, bounded by the check (both verifiers accept).
	 */
	{ "tnum and range: one shared value is a constant", XBPF_PROG_XDP, {
		MOV64X(R6, R1), LDX(W, R2, R6, XDP_MD(data)), LDX(W, R3, R6, XDP_MD(data_end)),
		LDX(W, R8, R6, XDP_MD(rx_queue_index)), A64K(ADD, R8, 1), J32K(JNE, R8, 0x10, 6),
		MOV64X(R5, R2), A64X(ADD, R5, R8), MOV64X(R4, R5), A64K(ADD, R4, 1),
		JX(JGT, R4, R3, 1), LDX(B, R0, R5, 0), MOV64K(R0, 0), EXIT() }, ACCEPT },
	/* ... and two shared values are not: the same offset with low half 16 or 17 */
	{ "tnum and range: two shared values stay a range", XBPF_PROG_XDP, {
		MOV64X(R6, R1), LDX(W, R2, R6, XDP_MD(data)), LDX(W, R3, R6, XDP_MD(data_end)),
		LDX(W, R8, R6, XDP_MD(rx_queue_index)), A64K(ADD, R8, 1), J32K(JLT, R8, 0x10, 7),
		J32K(JGT, R8, 0x11, 6), MOV64X(R5, R2), A64X(ADD, R5, R8), MOV64X(R4, R5),
		A64K(ADD, R4, 1), JX(JGT, R4, R3, 1), LDX(B, R0, R5, 0), MOV64K(R0, 0), EXIT() },
		REJECT("invalid access to packet") },
	/* ---- helper prototypes as the kernel has them ------------------------------ */
	{ "helper proto: skb_load_bytes may not fill the packet itself", XBPF_PROG_SCHED_CLS, {
		LDX(W, R6, R1, SKB(data)), LDX(W, R7, R1, SKB(data_end)), MOV64X(R3, R6),
		A64K(ADD, R6, 8), JX(JGT, R6, R7, 3), MOV64K(R2, 0), MOV64K(R4, 4),
		CALL_HELPER(BPF_FUNC_skb_load_bytes), MOV64K(R0, 0), EXIT() },
		REJECT("helper access to the packet is not allowed") },
	{ "helper proto: csum_diff may read the packet", XBPF_PROG_SCHED_CLS, {
		LDX(W, R6, R1, SKB(data)), LDX(W, R7, R1, SKB(data_end)), MOV64X(R1, R6),
		A64K(ADD, R6, 8), JX(JGT, R6, R7, 5), MOV64K(R2, 4), MOV64K(R3, 0), MOV64K(R4, 0),
		MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_csum_diff), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "helper proto: trace_printk takes two arguments", XBPF_PROG_TRACEPOINT, {
		ST(DW, FP, -8, 0), MOV64X(R1, FP), A64K(ADD, R1, -8), MOV64K(R2, 8),
		CALL_HELPER(BPF_FUNC_trace_printk), MOV64K(R0, 0), EXIT() }, ACCEPT },
};

const size_t vcase_gaps_cnt = sizeof(vcases_gaps) / sizeof(vcases_gaps[0]);
