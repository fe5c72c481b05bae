// SPDX-License-Identifier: MIT
/*
 * balancer.bpf.c - the xlb XDP balancer.  Parses the packet, finds its VIP,
 * picks a real (QUIC connection ID, the shared connection table, session
 * affinity, or the VIP's Maglev ring), encapsulates toward the real and
 * transmits; everything that is not for a VIP passes to the stack
 * untouched.  Built as static subprograms (bpf-to-bpf calls, at most five
 * arguments), one header per job.  What every packet runs is inlined into
 * two functions: the entry (parsing, the VIP filter, the established-flow
 * fast path, the VIP lookup, the encapsulation: host traffic passes without
 * a call) and xlb_balance() (connection table, ring), one call per packet
 * that takes the VIP lookup instead of eleven: each costs a prologue, an
 * epilogue and a return thunk.  An established flow's packet usually meets
 * its connection-table entry before any VIP lookup (conn.h,
 * xlb_conn_fast()) and makes no call.  A new flow's hash
 * (xlb_flow_hash_words(), xlb_shared.h: only when the table has no entry)
 * and ring pick are inlined too; rarer steps (ICMP, fragments, QUIC,
 * affinity, the insert of a new flow, too big) stay subprograms.
 *
 *   parse.h     Ethernet/VLAN, IPv4/IPv6 (+ fragment header), TCP/UDP
 *   vip.h       VIP lookup, VIP addresses, source allow-lists
 *   icmp.h      ICMP to VIP addresses: echo, errors to the flow's real
 *   conn.h      connection table (and its fast path), session affinity
 *   quic.h      QUIC server ids from the connection ID
 *   frag.h      fragments: the first balanced, the later ones follow
 *   tx.h        interface settings, too big, encapsulation, XDP_TX/redirect
 *   icmp_gen.h  the ICMP "fragmentation needed" / "packet too big" it sends
 *   stats.h     counters, each on a map fixed at its call site
 *
 * Every step returns FURTHER_PROCESSING, an XDP action, or -reason; the
 * entry counts a reason once and turns it into its verdict.  Maps:
 * xlb_maps.h; layouts and update rules: xlb_shared.h.
 */
#define XLB_PARSE_INLINE /* parse.h: its steps inlined here */
#include "xlb_consts.h"
#include "xlb_maps.h"
#include "stats.h"
#include "parse.h"
#include "vip.h"
#include "conn.h"
#include "quic.h"
#include "frag.h"
#include "icmp.h"
#include "tx.h"

/* Feature switches, set in .rodata before load. */
const volatile __u8 xlb_enable_quic = 1;
const volatile __u8 xlb_enable_icmp = 1;

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Index the VIP's active ring half with pkt->hash; a real_num or -reason. */
static __always_inline int xlb_ring_pick(struct xlb_pkt *pkt)
{
	__u32 vip = pkt->vip.vip_num, half = pkt->vip.ring_half & 1, key;
	__u32 *real;

	if (vip >= xlb_max_vips)
		return -XLB_DROP_NO_REAL;
	key = (vip * XLB_RING_HALVES + half) * xlb_ring_size + pkt->hash % xlb_ring_size;
	real = bpf_map_lookup_elem(&xlb_rings, &key);
	if (!real || !*real || *real >= xlb_max_reals)
		return -XLB_DROP_NO_REAL;
	return *real;
}

/*
 * Choose the real: QUIC CID; the connection table (never for a SYN); for a
 * new flow, session affinity, then the ring.  Sets pkt->real_num and
 * pkt->hash (from the table entry on a hit: no rehash).
 */
static __always_inline int xlb_select_real(struct xdp_md *ctx, struct xlb_pkt *pkt,
					   const struct xlb_config *cfg)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	int use_lru = !(pkt->vip.flags & XLB_VIP_F_NO_LRU);
	int syn = pkt->flow.proto == IPPROTO_TCP &&
		  (pkt->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN;
	int affinity = pkt->vip.affinity_s && !pkt->icmp_err;
	int found = XLB_FOUND_STALE; /* not looked up: an insert looks first */
	__u32 real = 0;
	int ret;

	if (xlb_enable_quic && (pkt->vip.flags & XLB_VIP_F_QUIC) &&
	    pkt->flow.proto == IPPROTO_UDP && !pkt->icmp_err) {
		real = xlb_quic_real(data, data_end, pkt);
		if (real) {
			pkt->real_num = real;
			pkt->hash = xlb_flow_hash_words(&pkt->flow, pkt->vip.flags);
			return FURTHER_PROCESSING;
		}
	}
	if (use_lru && !syn) {
		found = xlb_conn_lookup(pkt, cfg);
		if (found == XLB_FOUND_HIT) {
			if (affinity && !xlb_affinity_lookup(pkt))
				xlb_affinity_update(pkt);
			return FURTHER_PROCESSING;
		}
	}
	pkt->hash = xlb_flow_hash_words(&pkt->flow, pkt->vip.flags);
	if (affinity) {
		real = xlb_affinity_lookup(pkt);
		if (real)
			xlb_count_event(XLB_EV_AFFINITY_HIT);
	}
	if (!real) {
		ret = xlb_ring_pick(pkt);
		if (ret < 0)
			return ret;
		real = ret;
		pkt->real_num = real;
		if (affinity)
			xlb_affinity_update(pkt);
	}
	pkt->real_num = real;
	if (use_lru && !pkt->icmp_err)
		xlb_conn_insert(pkt, cfg, found);
	return FURTHER_PROCESSING;
}

/* Ethernet, IP, L4 into pkt; FURTHER_PROCESSING or -reason. */
static __always_inline int xlb_parse(struct xdp_md *ctx, struct xlb_pkt *pkt)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	int ret;

	ret = xlb_parse_l2(data, data_end, pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->l3_proto == ETH_P_IP)
		ret = xlb_parse_ipv4(data, data_end, pkt);
	else
		ret = xlb_parse_ipv6(data, data_end, pkt);
	if (ret < 0)
		return ret;
	if (ret > 0)
		xlb_count_event(XLB_EV_IP_OPTIONS);
	if (pkt->frag && pkt->flow.proto != IPPROTO_TCP && pkt->flow.proto != IPPROTO_UDP)
		return -XLB_PASS_FRAGMENT;
	if (pkt->frag == XLB_FRAG_LATER)
		return FURTHER_PROCESSING;
	return xlb_parse_l4(data, data_end, pkt);
}

/* A packet with ports (or an ICMP error's flow) to pkt->vip: its real. */
static __noinline int xlb_balance(struct xdp_md *ctx, struct xlb_pkt *pkt,
				  const struct xlb_config *cfg)
{
	int ret;

	xlb_count_vip(pkt->vip.vip_num, pkt->frame_len);
	if (pkt->vip.flags & XLB_VIP_F_LOCAL)
		return -XLB_PASS_LOCAL_VIP;
	if (pkt->vip.flags & XLB_VIP_F_ALLOWLIST) {
		ret = xlb_src_allowed(pkt);
		if (ret != FURTHER_PROCESSING)
			return ret;
	}
	if (pkt->frag && (cfg->flags & XLB_CFG_F_FRAG_DROP))
		return -XLB_DROP_FRAGMENT;
	ret = xlb_select_real(ctx, pkt, cfg);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->frag == XLB_FRAG_FIRST)
		xlb_frag_remember(pkt);
	return FURTHER_PROCESSING;
}

/* A packet the established-flow fast path may take: TCP without a lone SYN, UDP; whole, no ICMP error. */
static __always_inline int xlb_fast_candidate(const struct xlb_pkt *pkt)
{
	if (pkt->frag || pkt->icmp_err)
		return 0;
	if (pkt->flow.proto == IPPROTO_UDP)
		return 1;
	return pkt->flow.proto == IPPROTO_TCP && (pkt->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) != TCP_FLAG_SYN;
}

static __always_inline int xlb_process(struct xdp_md *ctx, struct xlb_pkt *pkt)
{
	const struct xlb_config *cfg;
	__u32 zero = 0;
	int ret, addr;

	ret = xlb_parse(ctx, pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	addr = xlb_filter_vip_addr(pkt);
	if (addr == XLB_NOT_VIP_ADDR)
		return pkt->frag ? -XLB_PASS_FRAGMENT : -XLB_PASS_NOT_VIP;
	if (pkt->flow.proto == IPPROTO_ICMP || pkt->flow.proto == IPPROTO_ICMPV6) {
		if (!xlb_enable_icmp)
			return -XLB_PASS_ICMP_OTHER;
		ret = xlb_handle_icmp(ctx, pkt);
		if (ret != FURTHER_PROCESSING) {
			if (ret == XDP_TX)
				xlb_count_event(XLB_EV_ICMP_ECHO);
			return ret;
		}
	}
	cfg = bpf_map_lookup_elem(&xlb_config, &zero);
	if (!cfg)
		return -XLB_DROP_NO_CONFIG;
	if (pkt->frag == XLB_FRAG_LATER) {
		ret = xlb_frag_follow(pkt, cfg);
		if (ret == FURTHER_PROCESSING)
			xlb_count_vip(pkt->vip.vip_num, pkt->frame_len);
	} else if (addr == XLB_MAYBE_FAST_ADDR && xlb_fast_candidate(pkt) && xlb_conn_fast(pkt, cfg)) {
		xlb_count_vip(pkt->vip.vip_num, pkt->frame_len);
		ret = FURTHER_PROCESSING;
	} else {
		/* here, not in xlb_balance(): host traffic passes without a call */
		ret = xlb_lookup_vip(pkt);
		if (ret == FURTHER_PROCESSING)
			ret = xlb_balance(ctx, pkt, cfg);
	}
	if (ret != FURTHER_PROCESSING)
		return ret;
	return xlb_forward(ctx, pkt, cfg);
}

SEC("xdp")
int xlb_balancer(struct xdp_md *ctx)
{
	struct xlb_pkt pkt = {};
	int ret;

	ret = xlb_process(ctx, &pkt);
	if (ret >= 0)
		return ret;
	xlb_count_reason(-ret, pkt.frame_len);
	return xlb_xdp_verdict(-ret);
}
