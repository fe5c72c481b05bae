// SPDX-License-Identifier: MIT
/*
 * healthcheck.bpf.c - tc egress on the balancer host.  Health-check probes
 * carry an skb mark registered in xlb_hc_reals (mark -> real); they leave
 * encapsulated toward that real exactly like production traffic (same outer
 * headers as the balancer: encap.h), so a probe tests the real path through
 * the real's decap program and its VIP on loopback.
 *
 *   tc qdisc add dev X clsact
 *   tc filter add dev X egress bpf da obj healthcheck.bpf.o sec tc
 *
 * Probe marks are xlb_hc_config.mark_min..mark_max (both 0: any mark).  A
 * packet without a mark or with a mark outside the range is not a probe:
 * untouched, TC_ACT_UNSPEC (XLB_PASS_NO_HC_MARK), so later filters see it.
 * A mark in the range that names no real is a probe for a real that is
 * gone: dropped (XLB_DROP_HC_UNKNOWN_MARK), it must not reach the VIP by
 * another path.  (Without a range an unknown mark passes, as unmarked.)
 * Outer headers: source MAC xlb_hc_config.src_mac, destination
 * xlb_hc_config.gw_mac (zero: the packet's own), source address src4/src6
 * (the host's address); GUE source port and IPv6 flow label from the
 * probe's flow hash (hash.h, flags 0).  An encapsulated probe leaves by
 * its interface (TC_ACT_OK) or, with xlb_hc_config.ifindex set to another
 * interface, is redirected there (bpf_redirect, TC_ACT_REDIRECT).
 */
#include "xlb_consts.h"
#include "parse.h"
#include "hash.h"
#include "encap.h"

#ifndef BPF_F_ADJ_ROOM_ENCAP_L3_IPV4
#define BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 (1ULL << 1)
#define BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 (1ULL << 2)
#define BPF_F_ADJ_ROOM_ENCAP_L4_UDP (1ULL << 4)
#endif

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct xlb_hc_real);
	__uint(max_entries, XLB_MAX_REALS);
} xlb_hc_reals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_hc_config);
	__uint(max_entries, 1);
} xlb_hc_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_counter);
	__uint(max_entries, XLB_STAT_SLOTS);
} xlb_hc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_counter);
	__uint(max_entries, XLB_STAT_SLOTS);
} xlb_hc_events SEC(".maps");

/*
 * Counters, each on a map fixed at its call site (as the balancer's
 * stats.h): a map chosen at run time would cost a helper call on every
 * packet the host sends.
 */
static __always_inline void xlb_hc_count_reason(__u32 reason, __u32 bytes)
{
	xlb_counter_add(bpf_map_lookup_elem(&xlb_hc_stats, &reason), bytes);
}

static __always_inline void xlb_hc_count_event(__u32 event, __u32 bytes)
{
	xlb_counter_add(bpf_map_lookup_elem(&xlb_hc_events, &event), bytes);
}

/* Parse the probe (Ethernet, IPv4/IPv6, TCP/UDP ports) into pkt. */
static __noinline int xlb_hc_parse(struct __sk_buff *skb, struct xlb_pkt *pkt)
{
	void *data, *data_end;
	int ret;

	bpf_skb_pull_data(skb, skb->len < 128 ? skb->len : 128);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	ret = xlb_parse_l2(data, data_end, pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->l3_proto == ETH_P_IP)
		ret = xlb_parse_ipv4(data, data_end, pkt);
	else
		ret = xlb_parse_ipv6(data, data_end, pkt);
	if (ret < 0)
		return ret;
	if (pkt->frag)
		return -XLB_PASS_FRAGMENT;
	if (pkt->flow.proto == IPPROTO_TCP || pkt->flow.proto == IPPROTO_UDP)
		return xlb_parse_l4(data, data_end, pkt);
	return FURTHER_PROCESSING;
}

/* Outer IP (+UDP) for the probe, written after room was made. */
static __noinline int xlb_hc_write(struct __sk_buff *skb, struct xlb_pkt *pkt,
				   const struct xlb_hc_real *real, const struct xlb_hc_config *cfg)
{
	__u8 encap = real->encap == XLB_ENCAP_GUE ? XLB_ENCAP_GUE : XLB_ENCAP_IP;
	__u32 olen = xlb_outer_len(real->family, encap), l3 = pkt->l3_off;
	__u32 inner_len = pkt->l3_len, iplen;
	__u8 proto = xlb_outer_proto(pkt->flow.family, encap);
	struct {
		union {
			struct xlb_iphdr v4;
			struct xlb_ipv6hdr v6;
		};
		struct xlb_udphdr udp;
	} hdr = {};
	__be16 eth_proto;

	if (l3 > XLB_MAX_L3_OFF)
		return -XLB_DROP_ENCAP_FAIL;
	if (real->family == XLB_FAMILY_V6) {
		iplen = IPV6_HLEN;
		xlb_ipv6_fill(&hdr.v6, pkt->tos, pkt->hash, inner_len + olen - IPV6_HLEN, proto);
		__builtin_memcpy(hdr.v6.saddr, cfg->src6.v6, 16);
		__builtin_memcpy(hdr.v6.daddr, real->addr.v6, 16);
		eth_proto = bpf_htons(ETH_P_IPV6);
		if (bpf_skb_store_bytes(skb, l3, &hdr.v6, IPV6_HLEN, 0))
			return -XLB_DROP_ENCAP_FAIL;
	} else {
		iplen = IPV4_HLEN;
		hdr.v4.tos = pkt->tos;
		hdr.v4.protocol = proto;
		hdr.v4.saddr = cfg->src4;
		hdr.v4.daddr = real->addr.v4;
		xlb_ipv4_finish(&hdr.v4, inner_len + olen);
		eth_proto = bpf_htons(ETH_P_IP);
		if (bpf_skb_store_bytes(skb, l3, &hdr.v4, IPV4_HLEN, 0))
			return -XLB_DROP_ENCAP_FAIL;
	}
	if (encap == XLB_ENCAP_GUE) {
		xlb_udp_fill(&hdr.udp, pkt->hash, cfg->gue_port, inner_len + UDP_HLEN);
		if (bpf_skb_store_bytes(skb, l3 + iplen, &hdr.udp, UDP_HLEN, 0))
			return -XLB_DROP_ENCAP_FAIL;
	}
	if (bpf_skb_store_bytes(skb, l3 - 2, &eth_proto, sizeof(eth_proto), 0))
		return -XLB_DROP_ENCAP_FAIL;
	if (xlb_mac_is_set(cfg->gw_mac) &&
	    bpf_skb_store_bytes(skb, 0, cfg->gw_mac, ETH_ALEN, 0))
		return -XLB_DROP_ENCAP_FAIL;
	if (xlb_mac_is_set(cfg->src_mac) &&
	    bpf_skb_store_bytes(skb, ETH_ALEN, cfg->src_mac, ETH_ALEN, 0))
		return -XLB_DROP_ENCAP_FAIL;
	return FURTHER_PROCESSING;
}

static __noinline int xlb_hc_encap(struct __sk_buff *skb, struct xlb_pkt *pkt)
{
	const struct xlb_hc_config *cfg;
	struct xlb_hc_real *rp, real;
	__u32 mark = skb->mark, zero = 0, olen;
	__u64 flags = BPF_F_ADJ_ROOM_FIXED_GSO;
	int ret, ranged;

	cfg = bpf_map_lookup_elem(&xlb_hc_config, &zero);
	if (!mark)
		return -XLB_PASS_NO_HC_MARK;
	if (!cfg)
		return -XLB_DROP_NO_CONFIG;
	ranged = cfg->mark_min || cfg->mark_max;
	if (ranged && (mark < cfg->mark_min || mark > cfg->mark_max))
		return -XLB_PASS_NO_HC_MARK;
	rp = bpf_map_lookup_elem(&xlb_hc_reals, &mark);
	if (!rp)
		return ranged ? -XLB_DROP_HC_UNKNOWN_MARK : -XLB_PASS_NO_HC_MARK;
	real = *rp;
	ret = xlb_hc_parse(skb, pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	/* The whole probe, not just the part pulled into the linear area. */
	if (skb->len < pkt->l3_off)
		return -XLB_DROP_TRUNC_L3;
	pkt->l3_len = skb->len - pkt->l3_off;
	pkt->hash = xlb_flow_hash(&pkt->flow, 0);
	olen = xlb_outer_len(real.family, real.encap);
	flags |= real.family == XLB_FAMILY_V6 ? BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 :
						BPF_F_ADJ_ROOM_ENCAP_L3_IPV4;
	if (real.encap == XLB_ENCAP_GUE)
		flags |= BPF_F_ADJ_ROOM_ENCAP_L4_UDP;
	if (bpf_skb_adjust_room(skb, olen, BPF_ADJ_ROOM_MAC, flags))
		return -XLB_DROP_ENCAP_FAIL;
	ret = xlb_hc_write(skb, pkt, &real, cfg);
	if (ret != FURTHER_PROCESSING)
		return ret;
	xlb_hc_count_event(XLB_EV_HC_ENCAP, pkt->frame_len);
	if (cfg->ifindex && cfg->ifindex != skb->ifindex)
		return bpf_redirect(cfg->ifindex, 0);
	return TC_ACT_OK;
}

SEC("tc")
int xlb_healthcheck(struct __sk_buff *skb)
{
	struct xlb_pkt pkt = {};
	int ret;

	ret = xlb_hc_encap(skb, &pkt);
	if (ret >= 0)
		return ret;
	xlb_hc_count_reason(-ret, pkt.frame_len);
	return xlb_reason_verdict(-ret, TC_ACT_UNSPEC, TC_ACT_SHOT);
}
