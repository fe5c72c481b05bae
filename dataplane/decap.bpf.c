// SPDX-License-Identifier: MIT
/*
 * decap.bpf.c - runs on the reals.  Strips IPIP (4in4, 6in4), IP6IP6 (6in6,
 * 4in6) and GUE (IP directly in UDP to the GUE port) encapsulation addressed
 * to one of this host's addresses (xlb_decap_addrs) and hands the inner
 * packet to the stack, so a real with the VIP on its loopback answers the
 * client directly.  Two entries: XDP (bpf_xdp_adjust_head, Ethernet header
 * moved and its ethertype fixed) and tc ingress (bpf_skb_adjust_room).
 *
 * Defined actions: not encapsulated / not to a host address / fragments:
 * pass untouched (XLB_PASS_NOT_ENCAP, XLB_PASS_FRAGMENT, XLB_PASS_NOT_IP;
 * the tc entry returns TC_ACT_UNSPEC for them, TC_ACT_OK for a stripped
 * packet: xlb_shared.h, "tc return codes");
 * cut headers: drop (XLB_DROP_TRUNC_*); an inner packet whose IP version
 * does not match the outer protocol: drop (XLB_DROP_DECAP_BAD).  The tc
 * variant passes frames with an in-band 802.1Q tag untouched
 * (XLB_PASS_NOT_ENCAP): the kernel's bpf_skb_adjust_room() takes IPv4/IPv6
 * skbs only (tags are normally offloaded to skb->vlan_tci before tc).
 */
/*
 * A real runs this on every packet it receives, encapsulated or not: the
 * parse steps are inlined (parse.h), the decap steps stay subprograms.
 * Pass-through TCP under BPF_PROG_TEST_RUN: 93 ns with the parse steps and
 * the counters as calls, 54 ns now.
 */
#define XLB_PARSE_INLINE
#include "xlb_consts.h"
#include "parse.h"

#ifndef BPF_F_ADJ_ROOM_DECAP_L3_IPV4
#define BPF_F_ADJ_ROOM_DECAP_L3_IPV4 (1ULL << 7)
#define BPF_F_ADJ_ROOM_DECAP_L3_IPV6 (1ULL << 8)
#endif

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct xlb_addr_key);
	__type(value, __u32);
	__uint(max_entries, 64);
} xlb_decap_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_decap_config);
	__uint(max_entries, 1);
} xlb_decap_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_counter);
	__uint(max_entries, XLB_STAT_SLOTS);
} xlb_decap_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_counter);
	__uint(max_entries, XLB_STAT_SLOTS);
} xlb_decap_events SEC(".maps");

/* What to strip: filled by xlb_decap_classify(). */
struct xlb_decap {
	__u32 outer_len;   /* bytes between L2 and the inner IP header */
	__u16 inner_proto; /* ethertype of the inner packet, host order */
	__u16 pad;
};

/*
 * Counters, each on a map fixed at its call site (as the balancer's
 * stats.h): a map chosen at run time would cost a helper call through a
 * retpoline on every packet the real receives.
 */
static __always_inline void xlb_decap_count_reason(__u32 reason, __u32 bytes)
{
	xlb_counter_add(bpf_map_lookup_elem(&xlb_decap_stats, &reason), bytes);
}

static __always_inline void xlb_decap_count_event(__u32 event, __u32 bytes)
{
	xlb_counter_add(bpf_map_lookup_elem(&xlb_decap_events, &event), bytes);
}

static __noinline int xlb_decap_is_host(struct xlb_pkt *pkt)
{
	struct xlb_addr_key key = {};

	key.addr = pkt->flow.dst;
	key.family = pkt->flow.family;
	return bpf_map_lookup_elem(&xlb_decap_addrs, &key) != NULL;
}

/*
 * Decide whether the packet is encapsulation for this host; fill *d.
 * Returns FURTHER_PROCESSING to strip, or -reason.
 */
static __noinline int xlb_decap_classify(void *data, void *data_end, struct xlb_pkt *pkt,
					 struct xlb_decap *d)
{
	__u32 zero = 0, l4 = 0, inner_off;
	struct xlb_decap_config *cfg;
	struct xlb_udphdr *uh;
	__u16 gue_port;
	__u8 *inner, ver;
	int ret;

	ret = xlb_parse_l2(data, data_end, pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->l3_proto == ETH_P_IP)
		ret = xlb_parse_ipv4(data, data_end, pkt);
	else
		ret = xlb_parse_ipv6(data, data_end, pkt);
	if (ret < 0)
		return ret == -XLB_PASS_IPV6_EXT ? -XLB_PASS_NOT_ENCAP : ret;
	if (pkt->frag)
		return -XLB_PASS_FRAGMENT;
	l4 = pkt->l4_off;
	if (l4 > XLB_MAX_L4_OFF)
		return -XLB_DROP_BAD_IP;
	inner_off = l4;
	if (pkt->flow.proto == IPPROTO_UDP) {
		cfg = bpf_map_lookup_elem(&xlb_decap_config, &zero);
		gue_port = cfg && cfg->gue_port ? cfg->gue_port : XLB_GUE_PORT_DEFAULT;
		uh = data + l4;
		if ((void *)(uh + 1) > data_end)
			return -XLB_DROP_TRUNC_L4;
		if (uh->dest != bpf_htons(gue_port))
			return -XLB_PASS_NOT_ENCAP;
		inner_off = l4 + UDP_HLEN;
	} else if (pkt->flow.proto != IPPROTO_IPIP && pkt->flow.proto != IPPROTO_IPV6) {
		return -XLB_PASS_NOT_ENCAP;
	}
	if (!xlb_decap_is_host(pkt))
		return -XLB_PASS_NOT_ENCAP;
	if (inner_off > XLB_MAX_L4_OFF + UDP_HLEN)
		return -XLB_DROP_BAD_IP;
	inner = data + inner_off;
	if ((void *)(inner + 1) > data_end)
		return -XLB_DROP_DECAP_BAD;
	ver = inner[0] >> 4;
	if ((pkt->flow.proto == IPPROTO_IPIP && ver != 4) ||
	    (pkt->flow.proto == IPPROTO_IPV6 && ver != 6) || (ver != 4 && ver != 6))
		return -XLB_DROP_DECAP_BAD;
	d->inner_proto = ver == 4 ? ETH_P_IP : ETH_P_IPV6;
	d->outer_len = inner_off - pkt->l3_off;
	return FURTHER_PROCESSING;
}

/* After the outer header is gone: L2 back in front, ethertype = inner's. */
static __noinline int xlb_decap_write_l2(struct xdp_md *ctx, const __u8 *l2, struct xlb_pkt *pkt,
					 __u16 inner_proto)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct xlb_ethhdr *eth = data;
	struct xlb_vlanhdr *vlan;

	if ((void *)(eth + 1) > data_end)
		return -XLB_DROP_DECAP_BAD;
	__builtin_memcpy(eth, l2, 2 * ETH_ALEN);
	if (!pkt->has_vlan) {
		eth->proto = bpf_htons(inner_proto);
		return FURTHER_PROCESSING;
	}
	vlan = (void *)(eth + 1);
	if ((void *)(vlan + 1) > data_end)
		return -XLB_DROP_DECAP_BAD;
	eth->proto = bpf_htons(ETH_P_8021Q);
	vlan->tci = pkt->vlan_tci;
	vlan->proto = bpf_htons(inner_proto);
	return FURTHER_PROCESSING;
}

static __noinline int xlb_decap_xdp_strip(struct xdp_md *ctx, struct xlb_pkt *pkt)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct xlb_decap d = {};
	__u8 l2[2 * ETH_ALEN];
	int ret;

	ret = xlb_decap_classify(data, data_end, pkt, &d);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (data + sizeof(l2) > data_end)
		return -XLB_DROP_TRUNC_L2;
	__builtin_memcpy(l2, data, sizeof(l2));
	if (d.outer_len > 128 || bpf_xdp_adjust_head(ctx, (int)d.outer_len))
		return -XLB_DROP_DECAP_BAD;
	ret = xlb_decap_write_l2(ctx, l2, pkt, d.inner_proto);
	if (ret != FURTHER_PROCESSING)
		return ret;
	xlb_decap_count_event(XLB_EV_DECAP, pkt->frame_len);
	return XDP_PASS;
}

SEC("xdp")
int xlb_decap_xdp(struct xdp_md *ctx)
{
	struct xlb_pkt pkt = {};
	int ret;

	ret = xlb_decap_xdp_strip(ctx, &pkt);
	if (ret >= 0)
		return ret;
	xlb_decap_count_reason(-ret, pkt.frame_len);
	return xlb_reason_verdict(-ret, XDP_PASS, XDP_DROP);
}

static __noinline int xlb_decap_tc_strip(struct __sk_buff *skb, struct xlb_pkt *pkt)
{
	struct xlb_decap d = {};
	__u64 flags = 0;
	__be16 proto;
	void *data, *data_end;
	int ret;

	/* Headers in the linear part: outer L2 + IP (+ options) + UDP + 1. */
	bpf_skb_pull_data(skb, skb->len < 128 ? skb->len : 128);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	ret = xlb_decap_classify(data, data_end, pkt, &d);
	if (ret != FURTHER_PROCESSING)
		return ret;
	/* bpf_skb_adjust_room() handles IPv4/IPv6 skbs only: in-band tags pass. */
	if (pkt->has_vlan)
		return -XLB_PASS_NOT_ENCAP;
	if (d.inner_proto != pkt->l3_proto)
		flags = d.inner_proto == ETH_P_IP ? BPF_F_ADJ_ROOM_DECAP_L3_IPV4 :
						    BPF_F_ADJ_ROOM_DECAP_L3_IPV6;
	if (bpf_skb_adjust_room(skb, -(__s32)d.outer_len, BPF_ADJ_ROOM_MAC, flags))
		return -XLB_DROP_DECAP_BAD;
	proto = bpf_htons(d.inner_proto);
	if (bpf_skb_store_bytes(skb, pkt->l3_off - 2, &proto, sizeof(proto), 0))
		return -XLB_DROP_DECAP_BAD;
	xlb_decap_count_event(XLB_EV_DECAP, pkt->frame_len);
	return TC_ACT_OK;
}

SEC("tc")
int xlb_decap_tc(struct __sk_buff *skb)
{
	struct xlb_pkt pkt = {};
	int ret;

	ret = xlb_decap_tc_strip(skb, &pkt);
	if (ret >= 0)
		return ret;
	xlb_decap_count_reason(-ret, pkt.frame_len);
	return xlb_reason_verdict(-ret, TC_ACT_UNSPEC, TC_ACT_SHOT);
}
