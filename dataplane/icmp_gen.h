/* SPDX-License-Identifier: MIT */
/*
 * icmp_gen.h - ICMP the balancer sends itself: "fragmentation needed"
 * (ICMPv4 type 3 code 4) and "packet too big" (ICMPv6 type 2) to a client
 * whose packet would not fit the egress once encapsulated (xlb_shared.h,
 * "Too big").  Built in place from the received frame, sent back out of
 * the receiving interface (XDP_TX):
 *
 *   Ethernet: destination = the received source MAC, source = the received
 *             destination MAC, a received 802.1Q tag kept
 *   IPv4:     0x45, TOS (received TOS & 0x1e) | 0xc0 (internetwork
 *             control, as Linux), total length 28 + quote, id 0, no flags,
 *             TTL 64, protocol 1, source = the VIP (the packet's
 *             destination), destination = the client, checksum
 *   ICMPv4:   type 3, code 4, checksum, unused 0 (16 bits), next-hop MTU
 *             (16 bits); quote = the received IP header with its options
 *             and the first 8 bytes of its payload (RFC 792, RFC 1191)
 *   IPv6:     version 6, traffic class 0, flow label 0, payload length
 *             8 + quote, next header 58, hop limit 64, source = the VIP,
 *             destination = the client
 *   ICMPv6:   type 2, code 0, checksum (with the pseudo-header), MTU (32
 *             bits); quote = the received IPv6 header and 8 bytes of
 *             payload (RFC 4443 3.2; the ports are what the client needs)
 */
#ifndef XLB_ICMP_GEN_H
#define XLB_ICMP_GEN_H

#include "parse.h"

#define XLB_ICMP4_QUOTE_MAX (60 + 8)
#define XLB_ICMP6_QUOTE (IPV6_HLEN + 8)
/* ICMP header + the longest quote, in 16-bit words. */
#define XLB_ICMP_CSUM_WORDS ((ICMP_HLEN + XLB_ICMP4_QUOTE_MAX) / 2)

/*
 * Ones' complement sum of the 16-bit words from p to the end of the frame
 * (a subprogram: the caller keeps its own, checked pointer to p).
 */
static __noinline __u32 xlb_csum_to_end(__u32 sum, __u16 *p, void *data_end)
{
#pragma unroll
	for (int i = 0; i < XLB_ICMP_CSUM_WORDS; i++) {
		if ((void *)(p + i + 1) > data_end)
			return sum;
		sum += p[i];
	}
	return sum;
}

static __always_inline __u32 xlb_csum_addr(__u32 sum, const union xlb_addr *a)
{
#pragma unroll
	for (int i = 0; i < 8; i++)
		sum += ((const __u16 *)a->bytes)[i];
	return sum;
}

/* The new IP + ICMP header in front of the quote, on the stack first. */
struct xlb_icmp_gen {
	union {
		struct {
			struct xlb_iphdr ip;
			struct xlb_icmphdr icmp;
		} v4;
		struct {
			struct xlb_ipv6hdr ip;
			struct xlb_icmphdr icmp;
		} v6;
	};
};

static __always_inline __u32 xlb_icmp_gen_fill(struct xlb_icmp_gen *h, const struct xlb_pkt *pkt,
					       __u32 quote, __u32 mtu)
{
	if (pkt->flow.family == XLB_FAMILY_V6) {
		h->v6.ip.ver_tc_flow = bpf_htonl(6u << 28);
		h->v6.ip.payload_len = bpf_htons(ICMP_HLEN + quote);
		h->v6.ip.nexthdr = IPPROTO_ICMPV6;
		h->v6.ip.hop_limit = XLB_OUTER_TTL;
		__builtin_memcpy(h->v6.ip.saddr, pkt->flow.dst.v6, 16);
		__builtin_memcpy(h->v6.ip.daddr, pkt->flow.src.v6, 16);
		h->v6.icmp.type = ICMPV6_PKT_TOOBIG;
		h->v6.icmp.rest = bpf_htonl(mtu);
		return IPV6_HLEN + ICMP_HLEN;
	}
	h->v4.ip.tos = (pkt->tos & 0x1e) | 0xc0;
	h->v4.ip.protocol = IPPROTO_ICMP;
	h->v4.ip.saddr = pkt->flow.dst.v4;
	h->v4.ip.daddr = pkt->flow.src.v4;
	xlb_ipv4_finish(&h->v4.ip, IPV4_HLEN + ICMP_HLEN + quote);
	h->v4.icmp.type = ICMP_DEST_UNREACH;
	h->v4.icmp.code = ICMP_FRAG_NEEDED;
	h->v4.icmp.rest = bpf_htonl(mtu & 0xffff);
	return IPV4_HLEN + ICMP_HLEN;
}

/*
 * Turn the frame into the ICMP error and return its "tx" reason.  The
 * frame is cut after the quote, the new headers are pushed in front of the
 * received IP header (which becomes the start of the quote).
 */
static __noinline int xlb_icmp_too_big(struct xdp_md *ctx, struct xlb_pkt *pkt, __u32 mtu)
{
	int v6 = pkt->flow.family == XLB_FAMILY_V6;
	__u32 l3 = pkt->l3_off, quote, hl, keep;
	struct xlb_icmp_gen h = {};
	struct xlb_icmphdr *icmp;
	__u8 macs[2 * ETH_ALEN];
	struct xlb_ethhdr *eth;
	void *data, *data_end;
	__u32 sum = 0;

	quote = v6 ? XLB_ICMP6_QUOTE : pkt->l4_off - l3 + 8;
	if (l3 > XLB_MAX_L3_OFF || quote > XLB_ICMP4_QUOTE_MAX || pkt->l3_len < quote)
		return -XLB_DROP_TOO_BIG_NO_DF;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + sizeof(macs) > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	__builtin_memcpy(macs, data, sizeof(macs));
	hl = xlb_icmp_gen_fill(&h, pkt, quote, mtu);

	keep = l3 + quote;
	if (bpf_xdp_adjust_tail(ctx, (int)keep - (int)pkt->frame_len))
		return -XLB_DROP_ENCAP_FAIL;
	if (bpf_xdp_adjust_head(ctx, -(int)hl))
		return -XLB_DROP_ENCAP_FAIL;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end || data + l3 + sizeof(h) > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	__builtin_memcpy(eth->dst, macs + ETH_ALEN, ETH_ALEN);
	__builtin_memcpy(eth->src, macs, ETH_ALEN);
	if (pkt->has_vlan) {
		struct xlb_vlanhdr *vlan = (void *)(eth + 1);

		if ((void *)(vlan + 1) > data_end)
			return -XLB_DROP_ENCAP_FAIL;
		eth->proto = bpf_htons(ETH_P_8021Q);
		vlan->tci = pkt->vlan_tci;
		vlan->proto = bpf_htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	} else {
		eth->proto = bpf_htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	}
	if (v6) {
		__builtin_memcpy(data + l3, &h.v6, sizeof(h.v6));
		icmp = data + l3 + IPV6_HLEN;
		sum = xlb_csum_addr(sum, &pkt->flow.src);
		sum = xlb_csum_addr(sum, &pkt->flow.dst);
		sum += bpf_htons(ICMP_HLEN + quote) + bpf_htons(IPPROTO_ICMPV6);
	} else {
		__builtin_memcpy(data + l3, &h.v4, sizeof(h.v4));
		icmp = data + l3 + IPV4_HLEN;
	}
	if ((void *)(icmp + 1) > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	sum = xlb_csum_to_end(sum, (__u16 *)icmp, data_end);
	icmp->check = xlb_csum_fold(sum);
	return v6 ? -XLB_TX_ICMP6_TOO_BIG : -XLB_TX_ICMP_FRAG_NEEDED;
}

#endif /* XLB_ICMP_GEN_H */
