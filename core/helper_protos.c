// SPDX-License-Identifier: MIT
/*
 * helper_protos.c - the prototypes of the BPF helpers the runtime provides,
 * with the kernel's numbers, argument and return kinds, the program types
 * that may call them, and whether they move packet data.  The verifier reads
 * only this table; the implementations are in helpers.c, which only the
 * engines link.  Indexed by the kernel's BPF_FUNC_* number.
 */
#include <linux/bpf.h>

#include "libxbpf_internal.h"

#define PROG(t) XBPF_PROG_BIT(XBPF_PROG_##t)
#define NET_PROGS (PROG(SOCKET_FILTER) | PROG(SCHED_CLS) | PROG(SCHED_ACT) | PROG(XDP))
#define TC_PROGS (PROG(SCHED_CLS) | PROG(SCHED_ACT))
#define ALL_PROGS (NET_PROGS | PROG(TRACEPOINT) | PROG(RAW_MEM))

#define A(x) XBPF_ARG_##x
#define HELPER(name_, ret_, flags_, progs_, ...)                                                    \
	[BPF_FUNC_##name_] = {                                                                     \
		.id = BPF_FUNC_##name_,                                                            \
		.name = #name_,                                                                    \
		.ret = ret_,                                                                       \
		.args = { __VA_ARGS__ },                                                                     \
		.changes_pkt_data = (flags_) & PKT_MOVES,                                          \
		.prog_types = progs_,                                                              \
		.pkt_access = (flags_) & PKT_ACCESS,                                               \
	}

/* Flags: moves packet data (invalidates packet pointers); may take packet pointers (pkt_access). */
#define PKT_MOVES (1u << 0)
#define PKT_ACCESS (1u << 1)

static const struct xbpf_helper_proto protos[] = {
	HELPER(map_lookup_elem, XBPF_RET_PTR_TO_MAP_VALUE_OR_NULL, PKT_ACCESS, ALL_PROGS, A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY)),
	HELPER(map_update_elem, XBPF_RET_INTEGER, PKT_ACCESS, ALL_PROGS, A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY), A(PTR_TO_MAP_VALUE), A(ANYTHING)),
	HELPER(map_delete_elem, XBPF_RET_INTEGER, PKT_ACCESS, ALL_PROGS, A(CONST_MAP_PTR), A(PTR_TO_MAP_KEY)),
	HELPER(ktime_get_ns, XBPF_RET_INTEGER, 0, ALL_PROGS),
	HELPER(trace_printk, XBPF_RET_INTEGER, 0, ALL_PROGS, A(PTR_TO_MEM), A(CONST_SIZE)),
	HELPER(get_prandom_u32, XBPF_RET_INTEGER, 0, ALL_PROGS),
	HELPER(get_smp_processor_id, XBPF_RET_INTEGER, 0, ALL_PROGS),
	HELPER(skb_store_bytes, XBPF_RET_INTEGER, PKT_MOVES, TC_PROGS, A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(l3_csum_replace, XBPF_RET_INTEGER, PKT_MOVES, TC_PROGS, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING), A(ANYTHING), A(ANYTHING)),
	HELPER(l4_csum_replace, XBPF_RET_INTEGER, PKT_MOVES, TC_PROGS, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING), A(ANYTHING), A(ANYTHING)),
	HELPER(skb_get_tunnel_key, XBPF_RET_INTEGER, 0, TC_PROGS, A(PTR_TO_CTX), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(skb_set_tunnel_key, XBPF_RET_INTEGER, 0, TC_PROGS, A(PTR_TO_CTX), A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING)),
	HELPER(redirect, XBPF_RET_INTEGER, 0, TC_PROGS | PROG(XDP), A(ANYTHING), A(ANYTHING)),
	HELPER(perf_event_output, XBPF_RET_INTEGER, 0, NET_PROGS | PROG(TRACEPOINT), A(PTR_TO_CTX), A(CONST_MAP_PTR), A(ANYTHING), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO)),
	HELPER(skb_load_bytes, XBPF_RET_INTEGER, 0, TC_PROGS | PROG(SOCKET_FILTER), A(PTR_TO_CTX), A(ANYTHING), A(PTR_TO_UNINIT_MEM), A(CONST_SIZE)),
	HELPER(csum_diff, XBPF_RET_INTEGER, PKT_ACCESS, NET_PROGS, A(PTR_TO_MEM_OR_NULL), A(CONST_SIZE_OR_ZERO), A(PTR_TO_MEM_OR_NULL), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
	HELPER(get_hash_recalc, XBPF_RET_INTEGER, 0, TC_PROGS, A(PTR_TO_CTX)),
	HELPER(skb_pull_data, XBPF_RET_INTEGER, PKT_MOVES, TC_PROGS, A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(xdp_adjust_head, XBPF_RET_INTEGER, PKT_MOVES, PROG(XDP), A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(skb_adjust_room, XBPF_RET_INTEGER, PKT_MOVES, TC_PROGS, A(PTR_TO_CTX), A(ANYTHING), A(ANYTHING), A(ANYTHING)),
	HELPER(redirect_map, XBPF_RET_INTEGER, 0, PROG(XDP), A(CONST_MAP_PTR), A(ANYTHING), A(ANYTHING)),
	HELPER(xdp_adjust_meta, XBPF_RET_INTEGER, PKT_MOVES, PROG(XDP), A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(xdp_adjust_tail, XBPF_RET_INTEGER, PKT_MOVES, PROG(XDP), A(PTR_TO_CTX), A(ANYTHING)),
	HELPER(ktime_get_boot_ns, XBPF_RET_INTEGER, 0, ALL_PROGS),
	HELPER(ringbuf_output, XBPF_RET_INTEGER, 0, ALL_PROGS, A(CONST_MAP_PTR), A(PTR_TO_MEM), A(CONST_SIZE_OR_ZERO), A(ANYTHING)),
};

const struct xbpf_helper_proto *xbpf_helper_proto(int32_t id)
{
	if (id <= 0 || (size_t)id >= sizeof(protos) / sizeof(protos[0]) || !protos[id].name)
		return NULL;
	return &protos[id];
}
