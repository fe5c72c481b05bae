// SPDX-License-Identifier: MIT
/*
 * helper_protos.c - the prototypes of the BPF helpers xlb knows, with the
 * kernel's numbers, argument and return kinds, the program types this
 * kernel allows each for (probed against it), and whether they move packet
 * data or may take packet pointers.  The verifier reads only this table, so
 * `xbpf verify` judges a program as the kernel would; the implementations
 * are in helpers*.c, which only the engines link, and a helper without one
 * (the tracing reads, fib_lookup, ...) is refused when an engine loads the
 * program ("not supported in userspace").  Indexed by BPF_FUNC_* number.
 */
#include <linux/bpf.h>

#include "libxbpf_internal.h"

#define PROG(t) XBPF_PROG_BIT(XBPF_PROG_##t)
/* Program types, as this kernel allows each helper (its func_proto per type). */
#define SF PROG(SOCKET_FILTER)
#define TC (PROG(SCHED_CLS) | PROG(SCHED_ACT))
#define XDP PROG(XDP)
#define TP PROG(TRACEPOINT)
#define RAW PROG(RAW_MEM) /* xlb's own: the helpers that need no context */
#define ALL (SF | TC | XDP | TP | RAW)

#define A(x) XBPF_ARG_##x
#define HELPER(name_, ret_, flags_, progs_, ...)                                                    \
	[BPF_FUNC_##name_] = {                                                                     \
		.id = BPF_FUNC_##name_,                                                            \
		.name = #name_,                                                                    \
		.ret = XBPF_RET_##ret_,                                                            \
		.args = { __VA_ARGS__ },                                                           \
		.changes_pkt_data = (flags_) & PKT_MOVES,                                          \
		.prog_types = progs_,                                                              \
		.pkt_access = (flags_) & PKT_ACCESS,                                               \
		.arg_size = { [2] = (flags_) & FIXED4 ? 4 : 0 },                                   \
		.gpl_only = (flags_) & GPL,                                                        \
	}

/*
 * Flags: moves packet data (invalidates packet pointers); may take packet
 * pointers (pkt_access); the third argument is 4 bytes of fixed-size memory;
 * GPL-compatible programs only.
 */
#define PKT_MOVES (1u << 0)
#define PKT_ACCESS (1u << 1)
#define FIXED4 (1u << 2)
#define GPL (1u << 3)

static const struct xbpf_helper_proto protos[] = {
	/* callbacks: the verifier walks the callback as if called from the helper, again and again */
	HELPER(loop, INTEGER, 0, ALL, A(ANYTHING), A(PTR_TO_FUNC), A(PTR_TO_STACK_OR_NULL), A(ANYTHING)),
	HELPER(for_each_map_elem, INTEGER, 0, ALL, A(CONST_MAP_PTR), A(PTR_TO_FUNC), A(PTR_TO_STACK_OR_NULL), A(ANYTHING)),
	/* maps */
	HELPER(map_lookup_elem, PTR_TO_MAP_VALUE_OR_NULL, PKT_ACCESS, ALL, A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY)),
	HELPER(map_update_elem, INTEGER, PKT_ACCESS, ALL, A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY), A(PTR_TO_MAP_VALUE), A(ANYTHING)),
	HELPER(map_delete_elem, INTEGER, PKT_ACCESS, ALL, A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY)),
	HELPER(map_lookup_percpu_elem, PTR_TO_MAP_VALUE_OR_NULL, PKT_ACCESS, ALL, A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY), A(ANYTHING)),
	/* the struct bpf_spin_lock of a map value: one held at a time, released before exit */
	HELPER(spin_lock, VOID, 0, ALL, A(PTR_TO_SPIN_LOCK)),
	HELPER(spin_unlock, VOID, 0, ALL, A(PTR_TO_SPIN_LOCK)),
	/* tail calls: the program in a prog_array slot replaces this one */
	HELPER(tail_call, VOID, 0, ALL, A(PTR_TO_CTX), A(CONST_MAP_PTR), A(ANYTHING)),
	/* ring buffers: a reserved record is a reference, submitted or discarded on every path */
	HELPER(ringbuf_reserve, PTR_TO_RINGBUF_MEM_OR_NULL, 0, ALL, A(CONST_MAP_PTR), A(CONST_ALLOC_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(ringbuf_submit, VOID, 0, ALL, A(PTR_TO_RINGBUF_MEM_RELEASE), A(ANYTHING)),
	HELPER(ringbuf_discard, VOID, 0, ALL, A(PTR_TO_RINGBUF_MEM_RELEASE), A(ANYTHING)),
	HELPER(ringbuf_output, INTEGER, 0, ALL, A(CONST_MAP_PTR), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(ringbuf_query, INTEGER, 0, ALL, A(CONST_MAP_PTR), A(ANYTHING)),
	/* time, randomness, CPU */
	HELPER(ktime_get_ns, INTEGER, 0, ALL),
	HELPER(ktime_get_boot_ns, INTEGER, 0, ALL),
	HELPER(ktime_get_coarse_ns, INTEGER, 0, ALL & ~TP),
	HELPER(ktime_get_tai_ns, INTEGER, 0, ALL),
	HELPER(jiffies64, INTEGER, 0, ALL),
	HELPER(get_prandom_u32, INTEGER, 0, ALL),
	HELPER(get_smp_processor_id, INTEGER, 0, ALL),
	HELPER(get_numa_node_id, INTEGER, 0, ALL),
	HELPER(trace_printk, INTEGER, GPL, ALL, A(PTR_TO_MEM), A(CONST_SIZE)),
	/* packets: XDP */
	HELPER(xdp_adjust_head, INTEGER, PKT_MOVES, XDP, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(xdp_adjust_meta, INTEGER, PKT_MOVES, XDP, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(xdp_adjust_tail, INTEGER, PKT_MOVES, XDP, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(xdp_get_buff_len, INTEGER, 0, XDP, A(PTR_TO_CTX)),
	HELPER(xdp_load_bytes, INTEGER, 0, XDP, A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE)),
	HELPER(xdp_store_bytes, INTEGER, 0, XDP, A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_MEM), A(CONST_SIZE)),
	HELPER(redirect_map, INTEGER, 0, XDP, A(CONST_MAP_PTR), A(ANYTHING), A(ANYTHING)),
	/* packets: tc */
	HELPER(skb_store_bytes, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(skb_load_bytes, INTEGER, 0, TC | SF, A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE)),
	HELPER(skb_load_bytes_relative, INTEGER, 0, TC | SF, A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(l3_csum_replace, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING), A(ANYTHING), A(ANYTHING)),
	HELPER(l4_csum_replace, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING), A(ANYTHING), A(ANYTHING)),
	HELPER(csum_update, INTEGER, 0, TC, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(csum_level, INTEGER, 0, TC, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(skb_vlan_push, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING)),
	HELPER(skb_vlan_pop, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX)),
	HELPER(skb_get_tunnel_key, INTEGER, 0, TC, A(PTR_TO_CTX), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(skb_set_tunnel_key, INTEGER, 0, TC, A(PTR_TO_CTX), A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(skb_pull_data, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(skb_adjust_room, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING), A(ANYTHING)),
	HELPER(skb_change_tail, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING)),
	HELPER(skb_change_head, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING)),
	HELPER(skb_change_proto, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING)),
	HELPER(skb_change_type, INTEGER, 0, TC, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(skb_ecn_set_ce, INTEGER, 0, TC, A(PTR_TO_CTX)),
	HELPER(get_hash_recalc, INTEGER, 0, TC, A(PTR_TO_CTX)),
	HELPER(set_hash_invalid, INTEGER, 0, TC, A(PTR_TO_CTX)),
	HELPER(set_hash, INTEGER, 0, TC, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(get_cgroup_classid, INTEGER, 0, ALL & ~RAW, A(PTR_TO_CTX)),
	HELPER(get_route_realm, INTEGER, 0, TC, A(PTR_TO_CTX)),
	HELPER(clone_redirect, INTEGER, PKT_MOVES, TC, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING)),
	HELPER(redirect, INTEGER, 0, TC | XDP, A(ANYTHING), A(ANYTHING)),
	/* packets: both */
	HELPER(csum_diff, INTEGER, PKT_ACCESS, TC | XDP, A(PTR_TO_MEM_OR_NULL), A(CONST_SIZE_OR_ZERO), A(PTR_TO_MEM_OR_NULL), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(fib_lookup, INTEGER, GPL, TC | XDP, A(PTR_TO_CTX), A(PTR_TO_RW_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(check_mtu, INTEGER, FIXED4 | GPL, TC | XDP, A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_FIXED_MEM), A(ANYTHING), A(ANYTHING)),
	HELPER(perf_event_output, INTEGER, GPL, ALL & ~RAW, A(PTR_TO_CTX), A(CONST_MAP_PTR), A(ANYTHING), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO)),
	/* tracing reads: verified as the kernel does, never run in userspace */
	HELPER(probe_read, INTEGER, GPL, TP, A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(probe_read_user, INTEGER, GPL, ALL & ~RAW, A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(probe_read_kernel, INTEGER, GPL, ALL & ~RAW, A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(probe_read_user_str, INTEGER, GPL, ALL & ~RAW, A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(probe_read_kernel_str, INTEGER, GPL, ALL & ~RAW, A(PTR_TO_UNINIT_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(get_current_pid_tgid, INTEGER, 0, ALL & ~RAW),
	HELPER(get_current_uid_gid, INTEGER, 0, ALL & ~RAW),
	HELPER(get_current_comm, INTEGER, 0, ALL & ~RAW, A(PTR_TO_UNINIT_MEM), A(CONST_SIZE)),
};

const struct xbpf_helper_proto *xbpf_helper_proto(int32_t id)
{
	if (id <= 0 || (size_t)id >= sizeof(protos) / sizeof(protos[0]) || !protos[id].name)
		return NULL;
	return &protos[id];
}
