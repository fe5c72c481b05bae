// SPDX-License-Identifier: MIT
/*
 * cases_helpers.c - the helpers XDP and tc programs call (issue 10), one
 * case per way a prototype can judge a call: the program types, the
 * license, the map types, memory the helper reads, writes or both (map
 * flags, bounds, alignment, spilled values it clobbers), a NULL result and
 * whether the call moves packet data.  Like cases.c, every case also runs
 * through this machine's kernel in the 'kernel' suite, which must agree.
 */
#include "insn.h"
#include "vcase.h"

#define BPF_F_RDONLY_PROG (1u << 7)
#define BPF_F_WRONLY_PROG (1u << 8)
#define ARRAY_64(flags) \
	{ .name = "a", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 64, .max_entries = 4, \
	  .map_flags = (flags) }
#define MAPS(...) .maps = { __VA_ARGS__ }, .map_cnt = sizeof((struct xbpf_map_spec[]){ __VA_ARGS__ }) / sizeof(struct xbpf_map_spec)
#define PERCPU_ARRAY \
	{ .name = "p", .type = XBPF_MAP_PERCPU_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 4 }
#define RINGBUF { .name = "r", .type = XBPF_MAP_RINGBUF, .max_entries = 4096 }

/* r6 = ctx, r7 = the value of map 0 at key 0 (the return is 0 when NULL); 10 insns. */
#define VALUE_IN_R7 \
	MOV64X(R6, R1), ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0), \
	CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JNE, R0, 0, 1), EXIT(), MOV64X(R7, R0)

/* r6 = ctx, r7 = data with one byte checked against data_end (ctx field offsets given). */
#define ONE_PKT_BYTE(DATA, END) \
	MOV64X(R6, R1), LDX(W, R7, R6, DATA), LDX(W, R8, R6, END), MOV64X(R2, R7), \
	A64K(ADD, R2, 1), JX(JLE, R2, R8, 2), MOV64K(R0, 0), EXIT()
#define TC_PKT ONE_PKT_BYTE(SKB(data), SKB(data_end))
#define XDP_PKT ONE_PKT_BYTE(XDP_MD(data), XDP_MD(data_end))

/* After the call (r1 = ctx), the packet pointer checked before it is read. */
#define PKT_USED_AFTER(PKT, ...) { PKT, MOV64X(R1, R6), __VA_ARGS__, LDX(B, R0, R7, 0), EXIT() }

/* fib_lookup(ctx, fp-64, 64, 0) with a constant spilled at fp-8 before, read after as an offset. */
#define SPILL_CALL_REUSE(...) { \
	MOV64X(R6, R1), ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0), \
	CALL_HELPER(BPF_FUNC_map_lookup_elem), JK(JNE, R0, 0, 1), EXIT(), MOV64X(R7, R0), \
	MOV64K(R1, 0), STX(DW, FP, R1, -8), MOV64X(R1, R6), MOV64X(R2, FP), A64K(ADD, R2, -64), \
	MOV64K(R3, 64), MOV64K(R4, 0), __VA_ARGS__, LDX(DW, R1, FP, -8), A64X(ADD, R7, R1), \
	LDX(B, R0, R7, 0), EXIT() }

/* r0 = bpf_ringbuf_reserve(map 0, SIZE, 0): the call is insn 4 (alloc_insn=4). */
#define RESERVE(SIZE) LD_MAP(R1, 0), MOV64K(R2, SIZE), MOV64K(R3, 0), \
	CALL_HELPER(BPF_FUNC_ringbuf_reserve)
/* ... and NULL checked: r6 = the record (9 insns). */
#define RESERVED_IN_R6(SIZE) RESERVE(SIZE), JK(JNE, R0, 0, 2), MOV64K(R0, 0), EXIT(), MOV64X(R6, R0)
#define SUBMIT(REG) MOV64X(R1, REG), MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_submit)
#define DISCARD(REG) MOV64X(R1, REG), MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_discard)
#define RET0 MOV64K(R0, 0), EXIT()

const struct vcase vcases_helpers[] = {
	/* ---- program types ----------------------------------------------------- */
	{ "types: xdp_load_bytes is XDP only", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -8), MOV64K(R4, 8),
		CALL_HELPER(BPF_FUNC_xdp_load_bytes), EXIT() },
		REJECT("cannot use helper bpf_xdp_load_bytes#189") },
	{ "types: skb_vlan_push is tc only", XBPF_PROG_XDP, {
		MOV64K(R2, 0x81), MOV64K(R3, 1), CALL_HELPER(BPF_FUNC_skb_vlan_push), EXIT() },
		REJECT("cannot use helper bpf_skb_vlan_push#18") },
	{ "types: xdp_get_buff_len", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_xdp_get_buff_len), EXIT() }, ACCEPT },
	{ "types: xdp_get_buff_len needs the ctx", XBPF_PROG_XDP, {
		MOV64X(R1, FP), CALL_HELPER(BPF_FUNC_xdp_get_buff_len), EXIT() },
		REJECT("R1 type=fp expected=ctx") },
	{ "types: time, jiffies, NUMA node in XDP", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_ktime_get_coarse_ns), CALL_HELPER(BPF_FUNC_ktime_get_tai_ns),
		CALL_HELPER(BPF_FUNC_jiffies64), CALL_HELPER(BPF_FUNC_get_numa_node_id),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "types: tracing reads in XDP (verified, never run)", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(ADD, R1, -8), MOV64K(R2, 8), MOV64K(R3, 0),
		CALL_HELPER(BPF_FUNC_probe_read_kernel), CALL_HELPER(BPF_FUNC_get_current_pid_tgid),
		MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "types: probe_read_kernel size unbounded", XBPF_PROG_XDP, {
		MOV64X(R6, R1), CALL_HELPER(BPF_FUNC_get_prandom_u32), MOV64X(R2, R0),
		MOV64X(R1, FP), A64K(ADD, R1, -8), MOV64K(R3, 0),
		CALL_HELPER(BPF_FUNC_probe_read_kernel), MOV64K(R0, 0), EXIT() },
		REJECT("R2 min value is negative") },

	/* ---- the license ---------------------------------------------------------- */
	{ "license: trace_printk is GPL only", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64X(R1, FP), A64K(ADD, R1, -8), MOV64K(R2, 8),
		CALL_HELPER(BPF_FUNC_trace_printk), MOV64K(R0, 0), EXIT() },
		REJECT("cannot call GPL-restricted function from non-GPL compatible program"),
		.license = "MIT" },
	{ "license: fib_lookup is GPL only", XBPF_PROG_XDP, {
		MOV64X(R2, FP), A64K(ADD, R2, -64), MOV64K(R3, 64), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() },
		REJECT("cannot call GPL-restricted function"), .license = "Proprietary" },
	{ "license: fib_lookup in a Dual MIT/GPL program", XBPF_PROG_XDP, {
		MOV64X(R2, FP), A64K(ADD, R2, -64), MOV64K(R3, 64), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() }, ACCEPT,
		.license = "Dual MIT/GPL" },
	{ "license: ktime_get_ns in an MIT program", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_ktime_get_ns), MOV64K(R0, 0), EXIT() }, ACCEPT, .license = "MIT" },
	{ "license: probe_read_kernel is GPL only", XBPF_PROG_XDP, {
		MOV64X(R1, FP), A64K(ADD, R1, -8), MOV64K(R2, 8), MOV64K(R3, 0),
		CALL_HELPER(BPF_FUNC_probe_read_kernel), MOV64K(R0, 0), EXIT() },
		REJECT("cannot call GPL-restricted function"), .license = "BSD" },

	/* ---- memory the helper reads (xdp_store_bytes: MEM_RDONLY) -------------- */
	{ "read mem: xdp_store_bytes from a read-only map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), MOV64K(R4, 8),
		CALL_HELPER(BPF_FUNC_xdp_store_bytes), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(BPF_F_RDONLY_PROG)), ACCEPT },
	{ "read mem: xdp_store_bytes from a write-only map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), MOV64K(R4, 8),
		CALL_HELPER(BPF_FUNC_xdp_store_bytes), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(BPF_F_WRONLY_PROG)), REJECT("read from map forbidden") },
	{ "read mem: xdp_store_bytes past the value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), A64K(ADD, R3, 60),
		MOV64K(R4, 8), CALL_HELPER(BPF_FUNC_xdp_store_bytes), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(0)), REJECT("invalid access to map value") },
	{ "read mem: xdp_store_bytes keeps a spilled constant", XBPF_PROG_XDP,
		SPILL_CALL_REUSE(MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -64), MOV64K(R4, 64),
				 CALL_HELPER(BPF_FUNC_xdp_store_bytes)),
		MAPS(ARRAY_64(0)), ACCEPT },
	{ "read mem: xdp_store_bytes size zero", XBPF_PROG_XDP, {
		MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -8), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_xdp_store_bytes), MOV64K(R0, 0), EXIT() },
		REJECT("R4 invalid zero-sized read") },

	/* ---- memory the helper writes (xdp_load_bytes, skb_load_bytes_relative) -- */
	{ "write mem: xdp_load_bytes into a read-only map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), MOV64K(R4, 8),
		CALL_HELPER(BPF_FUNC_xdp_load_bytes), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(BPF_F_RDONLY_PROG)), REJECT("write into map forbidden") },
	{ "write mem: xdp_load_bytes into the stack, then read", XBPF_PROG_XDP, {
		MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -16), MOV64K(R4, 16),
		CALL_HELPER(BPF_FUNC_xdp_load_bytes), LDX(DW, R0, FP, -8), EXIT() }, ACCEPT },
	{ "write mem: skb_load_bytes_relative into the stack", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -8), MOV64K(R4, 8), MOV64K(R5, 1),
		CALL_HELPER(BPF_FUNC_skb_load_bytes_relative), LDX(DW, R0, FP, -8), EXIT() }, ACCEPT },
	{ "write mem: skb_load_bytes_relative past the stack", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -8), MOV64K(R4, 16), MOV64K(R5, 1),
		CALL_HELPER(BPF_FUNC_skb_load_bytes_relative), MOV64K(R0, 0), EXIT() },
		REJECT("invalid write to stack R3 off=-8 size=16") },

	/* ---- memory read and written (fib_lookup: MEM_WRITE) --------------------- */
	{ "rw mem: fib_lookup params in a read-only map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64X(R2, R7), MOV64K(R3, 64), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(BPF_F_RDONLY_PROG)), REJECT("write into map forbidden") },
	{ "rw mem: fib_lookup params in a write-only map value", XBPF_PROG_SCHED_CLS, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64X(R2, R7), MOV64K(R3, 64), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(BPF_F_WRONLY_PROG)), ACCEPT },
	{ "rw mem: fib_lookup params past the value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64X(R2, R7), A64K(ADD, R2, 8), MOV64K(R3, 64),
		MOV64K(R4, 0), CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(0)), REJECT("invalid access to map value") },
	{ "rw mem: fib_lookup size zero", XBPF_PROG_XDP, {
		MOV64X(R2, FP), A64K(ADD, R2, -64), MOV64K(R3, 0), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() },
		REJECT("R3 invalid zero-sized read") },
	{ "rw mem: fib_lookup params in the packet", XBPF_PROG_XDP, {
		XDP_PKT, MOV64X(R1, R6), MOV64X(R2, R7), MOV64K(R3, 1), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() },
		REJECT("helper access to the packet is not allowed") },
	{ "rw mem: fib_lookup clobbers a spilled constant", XBPF_PROG_XDP,
		SPILL_CALL_REUSE(CALL_HELPER(BPF_FUNC_fib_lookup)),
		MAPS(ARRAY_64(0)), REJECT("math between map_value pointer and register with unbounded min value") },
	{ "rw mem: fib_lookup params as a scalar", XBPF_PROG_SCHED_CLS, {
		MOV64K(R2, 0), MOV64K(R3, 64), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(R0, 0), EXIT() },
		REJECT("R2 type=scalar expected=fp") },

	/* ---- fixed-size memory (check_mtu's mtu_len: 4 bytes, written, aligned) -- */
	{ "fixed mem: check_mtu on the stack", XBPF_PROG_XDP, {
		ST(W, FP, -4, 0), MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -4), MOV64K(R4, 0),
		MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu), LDX(W, R0, FP, -4), EXIT() }, ACCEPT },
	{ "fixed mem: check_mtu in tc", XBPF_PROG_SCHED_CLS, {
		ST(W, FP, -4, 0), MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -4), MOV64K(R4, 0),
		MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() }, ACCEPT },
	{ "fixed mem: check_mtu misaligned on the stack", XBPF_PROG_XDP, {
		ST(DW, FP, -8, 0), MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -6), MOV64K(R4, 0),
		MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() },
		REJECT("misaligned stack access") },
	{ "fixed mem: check_mtu in a map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), A64K(ADD, R3, 60),
		MOV64K(R4, 0), MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(0)), ACCEPT },
	{ "fixed mem: check_mtu misaligned in a map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), A64K(ADD, R3, 2),
		MOV64K(R4, 0), MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(0)), REJECT("misaligned value access") },
	{ "fixed mem: check_mtu past the value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), A64K(ADD, R3, 64),
		MOV64K(R4, 0), MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(0)), REJECT("invalid access to map value") },
	{ "fixed mem: check_mtu in a read-only map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), MOV64K(R4, 0),
		MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(BPF_F_RDONLY_PROG)), REJECT("write into map forbidden") },
	{ "fixed mem: check_mtu in the packet", XBPF_PROG_XDP, {
		XDP_PKT, MOV64X(R1, R6), MOV64K(R2, 0), MOV64X(R3, R7), MOV64K(R4, 0), MOV64K(R5, 0),
		CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() },
		REJECT("helper access to the packet is not allowed") },
	{ "fixed mem: check_mtu with a scalar", XBPF_PROG_XDP, {
		MOV64K(R2, 0), MOV64K(R3, 0), MOV64K(R4, 0), MOV64K(R5, 0),
		CALL_HELPER(BPF_FUNC_check_mtu), MOV64K(R0, 0), EXIT() },
		REJECT("R3 type=scalar expected=fp") },

	/* ---- map types and NULL results ----------------------------------------- */
	{ "maps: map_lookup_percpu_elem with a NULL check", XBPF_PROG_XDP, {
		ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0), MOV64K(R3, 0),
		CALL_HELPER(BPF_FUNC_map_lookup_percpu_elem), JK(JEQ, R0, 0, 1), LDX(DW, R0, R0, 0),
		EXIT() }, MAPS(PERCPU_ARRAY), ACCEPT },
	{ "maps: map_lookup_percpu_elem may be NULL, even with a constant key", XBPF_PROG_XDP, {
		ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0), MOV64K(R3, 0),
		CALL_HELPER(BPF_FUNC_map_lookup_percpu_elem), LDX(DW, R0, R0, 0), EXIT() },
		MAPS(PERCPU_ARRAY), REJECT("invalid mem access 'map_value_or_null'") },
	{ "maps: map_lookup_percpu_elem needs a per-CPU map", XBPF_PROG_XDP, {
		ST(W, FP, -4, 0), MOV64X(R2, FP), A64K(ADD, R2, -4), LD_MAP(R1, 0), MOV64K(R3, 0),
		CALL_HELPER(BPF_FUNC_map_lookup_percpu_elem), MOV64K(R0, 0), EXIT() },
		MAPS(ARRAY_64(0)), REJECT("cannot pass map_type 2 into func bpf_map_lookup_percpu_elem#195") },
	{ "maps: ringbuf_query", XBPF_PROG_XDP, {
		LD_MAP(R1, 0), MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_query), EXIT() },
		MAPS(RINGBUF), ACCEPT },
	{ "maps: ringbuf_query needs a ring buffer", XBPF_PROG_XDP, {
		LD_MAP(R1, 0), MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_query), EXIT() },
		MAPS(ARRAY_64(0)), REJECT("cannot pass map_type 2 into func bpf_ringbuf_query#134") },
	{ "maps: a ring buffer is no redirect map", XBPF_PROG_XDP, {
		LD_MAP(R1, 0), MOV64K(R2, 0), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_redirect_map), EXIT() },
		MAPS(RINGBUF), REJECT("cannot pass map_type 27 into func bpf_redirect_map#51") },

	/* ---- ring buffer records: references released on every path ---------------- */
	{ "ringbuf: reserve, write, submit", XBPF_PROG_XDP, {
		RESERVED_IN_R6(16), ST(DW, R6, 0, 7), ST(DW, R6, 8, 9), SUBMIT(R6), RET0 },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: reserve, discard", XBPF_PROG_SCHED_CLS, {
		RESERVED_IN_R6(8), DISCARD(R6), RET0 }, MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: reserve in a socket filter", XBPF_PROG_SOCKET_FILTER, {
		RESERVED_IN_R6(8), ST(DW, R6, 0, 1), SUBMIT(R6), RET0 }, MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: the record unreleased at exit", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), RET0 }, MAPS(RINGBUF), REJECT("Unreleased reference id=2 alloc_insn=4") },
	{ "ringbuf: the leak named at exit", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), RET0 }, MAPS(RINGBUF),
		REJECT("BPF_EXIT instruction in main prog would lead to reference leak") },
	{ "ringbuf: never null checked, never released", XBPF_PROG_XDP, {
		RESERVE(8), MOV64X(R6, R0), RET0 }, MAPS(RINGBUF),
		REJECT("Unreleased reference id=2 alloc_insn=4") },
	{ "ringbuf: the second record unreleased", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), RESERVE(8), MOV64X(R7, R0), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("Unreleased reference id=4 alloc_insn=13") },
	{ "ringbuf: written before the NULL check", XBPF_PROG_XDP, {
		RESERVE(8), ST(DW, R0, 0, 7), RET0 }, MAPS(RINGBUF),
		REJECT("R0 invalid mem access 'ringbuf_mem_or_null'") },
	{ "ringbuf: submitted before the NULL check", XBPF_PROG_XDP, {
		RESERVE(8), SUBMIT(R0), RET0 }, MAPS(RINGBUF),
		REJECT("R1 type=ringbuf_mem_or_null expected=ringbuf_mem") },
	{ "ringbuf: arithmetic before the NULL check", XBPF_PROG_XDP, {
		RESERVE(8), A64K(ADD, R0, 8), RET0 }, MAPS(RINGBUF),
		REJECT("R0 pointer arithmetic on ringbuf_mem_or_null prohibited, null-check it first") },
	{ "ringbuf: NULL checked through a copy", XBPF_PROG_XDP, {
		RESERVE(8), MOV64X(R6, R0), JK(JNE, R6, 0, 2), MOV64K(R0, 0), EXIT(), SUBMIT(R0), RET0 },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: JEQ NULL check, released on the taken side", XBPF_PROG_XDP, {
		RESERVE(8), JK(JEQ, R0, 0, 4), MOV64X(R6, R0), SUBMIT(R6), RET0 },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: a write past the record", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), ST(DW, R6, 8, 7), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("invalid access to memory, mem_size=8 off=8 size=8") },
	{ "ringbuf: a read below the record", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), LDX(B, R7, R6, -1), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("invalid access to memory, mem_size=8 off=-1 size=1") },
	{ "ringbuf: read back what was written", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), ST(W, R6, 4, 7), LDX(W, R7, R6, 4), SUBMIT(R6), MOV64X(R0, R7), EXIT() },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: a bounded variable offset inside", XBPF_PROG_XDP, {
		RESERVED_IN_R6(16), CALL_HELPER(BPF_FUNC_get_prandom_u32), A64K(AND, R0, 7),
		MOV64X(R7, R6), A64X(ADD, R7, R0), ST(DW, R7, 0, 1), SUBMIT(R6), RET0 },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: a variable offset past the end", XBPF_PROG_XDP, {
		RESERVED_IN_R6(16), CALL_HELPER(BPF_FUNC_get_prandom_u32), A64K(AND, R0, 15),
		MOV64X(R7, R6), A64X(ADD, R7, R0), ST(DW, R7, 0, 1), SUBMIT(R6), RET0 },
		MAPS(RINGBUF), REJECT("R7 max value is outside of the allowed memory range") },
	{ "ringbuf: a record of zero bytes", XBPF_PROG_XDP, {
		RESERVED_IN_R6(0), SUBMIT(R6), RET0 }, MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: nothing fits a record of zero bytes", XBPF_PROG_XDP, {
		RESERVED_IN_R6(0), ST(B, R6, 0, 1), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("invalid access to memory, mem_size=0 off=0 size=1") },
	{ "ringbuf: the size must be a known constant", XBPF_PROG_XDP, {
		CALL_HELPER(BPF_FUNC_get_prandom_u32), A64K(AND, R0, 15), MOV64X(R2, R0), LD_MAP(R1, 0),
		MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_ringbuf_reserve), RET0 }, MAPS(RINGBUF),
		REJECT("R2 is not a known constant'") },
	{ "ringbuf: the size is no pointer", XBPF_PROG_XDP, {
		LD_MAP(R1, 0), MOV64X(R2, FP), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_ringbuf_reserve), RET0 },
		MAPS(RINGBUF), REJECT("R2 type=fp expected=scalar") },
	{ "ringbuf: reserve needs a ring buffer", XBPF_PROG_XDP, {
		RESERVE(8), RET0 }, MAPS(ARRAY_64(0)),
		REJECT("cannot pass map_type 2 into func bpf_ringbuf_reserve#131") },
	{ "ringbuf: used after submit", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), SUBMIT(R6), ST(DW, R6, 0, 1), RET0 }, MAPS(RINGBUF),
		REJECT("R6 invalid mem access 'scalar'") },
	{ "ringbuf: a spilled copy used after discard", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), STX(DW, FP, R6, -8), DISCARD(R6), LDX(DW, R7, FP, -8),
		ST(DW, R7, 0, 1), RET0 }, MAPS(RINGBUF), REJECT("R7 invalid mem access 'scalar'") },
	{ "ringbuf: submitted twice", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), SUBMIT(R6), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("R1 type=scalar expected=ringbuf_mem") },
	{ "ringbuf: submit then discard", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), SUBMIT(R6), DISCARD(R6), RET0 }, MAPS(RINGBUF),
		REJECT("R1 type=scalar expected=ringbuf_mem") },
	{ "ringbuf: submit what was never reserved", XBPF_PROG_XDP, {
		SUBMIT(FP), RET0 }, REJECT("R1 type=fp expected=ringbuf_mem") },
	{ "ringbuf: submit NULL", XBPF_PROG_XDP, {
		MOV64K(R6, 0), SUBMIT(R6), RET0 }, REJECT("R1 type=scalar expected=ringbuf_mem") },
	{ "ringbuf: submit a map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, SUBMIT(R7), RET0 }, MAPS(ARRAY_64(0)),
		REJECT("R1 type=map_value expected=ringbuf_mem") },
	{ "ringbuf: submit with an offset", XBPF_PROG_XDP, {
		RESERVED_IN_R6(16), A64K(ADD, R6, 8), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("R1 must have zero offset when passed to release func") },
	{ "ringbuf: submit with a variable offset", XBPF_PROG_XDP, {
		RESERVED_IN_R6(16), CALL_HELPER(BPF_FUNC_get_prandom_u32), A64K(AND, R0, 8),
		A64X(ADD, R6, R0), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("variable ringbuf_mem access var_off=(0x0; 0x8) disallowed") },
	{ "ringbuf: released on both branches", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), CALL_HELPER(BPF_FUNC_get_prandom_u32), JK(JEQ, R0, 0, 5),
		SUBMIT(R6), RET0, DISCARD(R6), RET0 }, MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: released on one branch only", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), CALL_HELPER(BPF_FUNC_get_prandom_u32), JK(JEQ, R0, 0, 3),
		SUBMIT(R6), RET0 }, MAPS(RINGBUF), REJECT("Unreleased reference id=2 alloc_insn=4") },
	{ "ringbuf: the record as ringbuf_output's data", XBPF_PROG_XDP, {
		RESERVED_IN_R6(16), ST(DW, R6, 0, 1), ST(DW, R6, 8, 2), LD_MAP(R1, 0), MOV64X(R2, R6),
		MOV64K(R3, 16), MOV64K(R4, 0), CALL_HELPER(BPF_FUNC_ringbuf_output), SUBMIT(R6), RET0 },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: ringbuf_output past the record", XBPF_PROG_XDP, {
		RESERVED_IN_R6(16), LD_MAP(R1, 0), MOV64X(R2, R6), MOV64K(R3, 24), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_ringbuf_output), SUBMIT(R6), RET0 }, MAPS(RINGBUF),
		REJECT("invalid access to memory, mem_size=16 off=0 size=24") },
	{ "ringbuf: the record filled by xdp_load_bytes", XBPF_PROG_XDP, {
		MOV64X(R9, R1), RESERVED_IN_R6(8), MOV64X(R1, R9), MOV64K(R2, 0), MOV64X(R3, R6),
		MOV64K(R4, 8), CALL_HELPER(BPF_FUNC_xdp_load_bytes), SUBMIT(R6), RET0 },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: LD_ABS while holding a record", XBPF_PROG_SCHED_CLS, {
		MOV64X(R9, R1), RESERVED_IN_R6(8), MOV64X(R7, R6), MOV64X(R6, R9), LDABS(B, 0),
		SUBMIT(R7), RET0 }, MAPS(RINGBUF),
		REJECT("BPF_LD_[ABS|IND] would lead to reference leak") },
	{ "ringbuf: LD_ABS after the submit", XBPF_PROG_SCHED_CLS, {
		MOV64X(R9, R1), RESERVED_IN_R6(8), SUBMIT(R6), MOV64X(R6, R9), LDABS(B, 0), EXIT() },
		MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: submitted by a subprog", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), MOV64X(R1, R6), CALL_PC(2), RET0,
		/* subprog(rec): submit */
		MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_submit), RET0 }, MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: reserved by a subprog, submitted by main", XBPF_PROG_XDP, {
		CALL_PC(7), JK(JNE, R0, 0, 1), EXIT(), SUBMIT(R0), RET0,
		/* subprog: return bpf_ringbuf_reserve(map, 8, 0) */
		RESERVE(8), EXIT() }, MAPS(RINGBUF), ACCEPT },
	{ "ringbuf: reserved by a subprog, leaked by main", XBPF_PROG_XDP, {
		CALL_PC(2), RET0,
		/* subprog: reserve, check, return 0 */
		RESERVED_IN_R6(8), RET0 }, MAPS(RINGBUF), REJECT("Unreleased reference id=2 alloc_insn=7") },
	{ "ringbuf: a subprog uses the record after submitting it", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), MOV64X(R1, R6), CALL_PC(2), RET0,
		MOV64X(R7, R1), SUBMIT(R7), ST(DW, R7, 0, 1), RET0 }, MAPS(RINGBUF),
		REJECT("R7 invalid mem access 'scalar'") },
	{ "ringbuf: main uses the record a subprog submitted", XBPF_PROG_XDP, {
		RESERVED_IN_R6(8), MOV64X(R1, R6), CALL_PC(3), ST(DW, R6, 0, 1), RET0,
		MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_ringbuf_submit), RET0 }, MAPS(RINGBUF),
		REJECT("R6 invalid mem access 'scalar'") },

	/* ---- callbacks (the ones with BTF are in shapes/callbacks.bpf.c) ----------- */
	{ "callbacks: a callback's address needs BTF func_info", XBPF_PROG_XDP, {
		MOV64K(R1, 4), LDIMM64_SRC(R2, XBPF_PSEUDO_FUNC, 6), MOV64K(R3, 0), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_loop), RET0,
		/* callback: return 0 */
		RET0 }, REJECT("missing btf func_info") },
	{ "callbacks: bpf_loop's callback is no scalar", XBPF_PROG_XDP, {
		MOV64K(R1, 4), MOV64K(R2, 0), MOV64K(R3, 0), MOV64K(R4, 0), CALL_HELPER(BPF_FUNC_loop),
		RET0 }, REJECT("R2 type=scalar expected=func") },
	{ "callbacks: bpf_loop's callback is no stack pointer", XBPF_PROG_SCHED_CLS, {
		MOV64K(R1, 4), MOV64X(R2, FP), MOV64K(R3, 0), MOV64K(R4, 0), CALL_HELPER(BPF_FUNC_loop),
		RET0 }, REJECT("R2 type=fp expected=func") },
	{ "callbacks: for_each_map_elem's callback is no map value", XBPF_PROG_XDP, {
		VALUE_IN_R7, LD_MAP(R1, 0), MOV64X(R2, R7), MOV64K(R3, 0), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_for_each_map_elem), RET0 }, MAPS(ARRAY_64(0)),
		REJECT("R2 type=map_value expected=func") },
	{ "callbacks: for_each_map_elem needs a map", XBPF_PROG_XDP, {
		MOV64X(R1, FP), MOV64K(R2, 0), MOV64K(R3, 0), MOV64K(R4, 0),
		CALL_HELPER(BPF_FUNC_for_each_map_elem), RET0 }, REJECT("R1 type=fp expected=map_ptr") },

	/* ---- packet pointers after the call ---------------------------------------- */
	{ "pkt: skb_vlan_push moves packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 0x81), MOV64K(R3, 1), CALL_HELPER(BPF_FUNC_skb_vlan_push)),
		REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: skb_vlan_pop moves packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, CALL_HELPER(BPF_FUNC_skb_vlan_pop)),
		REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: skb_change_tail moves packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 64), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_skb_change_tail)),
		REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: skb_change_head moves packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 14), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_skb_change_head)),
		REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: skb_change_proto moves packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 0xdd86), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_skb_change_proto)),
		REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: clone_redirect moves packet data (once a false accept)", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 1), MOV64K(R3, 0), CALL_HELPER(BPF_FUNC_clone_redirect)),
		REJECT("R7 invalid mem access 'scalar'") },
	{ "pkt: skb_change_type keeps packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_skb_change_type)), ACCEPT },
	{ "pkt: csum_update keeps packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_csum_update)), ACCEPT },
	{ "pkt: csum_level keeps packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 0), CALL_HELPER(BPF_FUNC_csum_level)), ACCEPT },
	{ "pkt: set_hash and set_hash_invalid keep packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, MOV64K(R2, 7), CALL_HELPER(BPF_FUNC_set_hash), MOV64X(R1, R6),
			       CALL_HELPER(BPF_FUNC_set_hash_invalid)), ACCEPT },
	{ "pkt: skb_ecn_set_ce, route realm, classid keep packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, CALL_HELPER(BPF_FUNC_skb_ecn_set_ce), MOV64X(R1, R6),
			       CALL_HELPER(BPF_FUNC_get_route_realm), MOV64X(R1, R6),
			       CALL_HELPER(BPF_FUNC_get_cgroup_classid)), ACCEPT },
	{ "pkt: check_mtu keeps packet data", XBPF_PROG_SCHED_CLS,
		PKT_USED_AFTER(TC_PKT, ST(W, FP, -4, 0), MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -4),
			       MOV64K(R4, 0), MOV64K(R5, 0), CALL_HELPER(BPF_FUNC_check_mtu)), ACCEPT },
	{ "pkt: fib_lookup keeps packet data", XBPF_PROG_XDP,
		PKT_USED_AFTER(XDP_PKT, MOV64X(R2, FP), A64K(ADD, R2, -64), MOV64K(R3, 64), MOV64K(R4, 0),
			       CALL_HELPER(BPF_FUNC_fib_lookup)), ACCEPT },
	{ "pkt: xdp_store_bytes and xdp_load_bytes keep packet data", XBPF_PROG_XDP,
		PKT_USED_AFTER(XDP_PKT, MOV64K(R2, 0), MOV64X(R3, FP), A64K(ADD, R3, -8), MOV64K(R4, 8),
			       CALL_HELPER(BPF_FUNC_xdp_load_bytes), MOV64X(R1, R6), MOV64K(R2, 0),
			       MOV64X(R3, FP), A64K(ADD, R3, -8), MOV64K(R4, 8),
			       CALL_HELPER(BPF_FUNC_xdp_store_bytes)), ACCEPT },
	{ "pkt: xdp_get_buff_len keeps packet data", XBPF_PROG_XDP,
		PKT_USED_AFTER(XDP_PKT, CALL_HELPER(BPF_FUNC_xdp_get_buff_len)), ACCEPT },
	{ "ret: set_hash_invalid returns an integer", XBPF_PROG_SCHED_CLS, {
		CALL_HELPER(BPF_FUNC_set_hash_invalid), EXIT() }, ACCEPT },
};

const size_t vcase_helpers_cnt = sizeof(vcases_helpers) / sizeof(vcases_helpers[0]);
