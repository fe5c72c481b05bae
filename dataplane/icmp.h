/* SPDX-License-Identifier: MIT */
/*
 * icmp.h - ICMP for VIP addresses: echo requests are answered (XDP_TX back
 * out of the receiving interface), ICMPv4 "fragmentation needed" and ICMPv6
 * "packet too big" are sent to the real owning the flow, which is found from
 * the embedded headers (the real's reply, VIP -> client, reversed).  The
 * ICMP the balancer generates itself (too big) is in icmp_gen.h.  Other
 * ICMP to a VIP address: XDP_PASS (XLB_PASS_ICMP_OTHER); ICMP to other
 * addresses: XDP_PASS (XLB_PASS_NOT_VIP).
 */
#ifndef XLB_ICMP_H
#define XLB_ICMP_H

#include "vip.h"

static __always_inline void xlb_swap_macs(struct xlb_ethhdr *eth)
{
	__u8 tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->dst, ETH_ALEN);
	__builtin_memcpy(eth->dst, eth->src, ETH_ALEN);
	__builtin_memcpy(eth->src, tmp, ETH_ALEN);
}

/* Echo reply in place: swap MACs and addresses, TTL 64, type 8 -> 0. */
static __noinline int xlb_icmp4_echo(struct xdp_md *ctx, struct xlb_pkt *pkt)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 l3 = pkt->l3_off, l4 = pkt->l4_off;
	struct xlb_icmphdr *icmp;
	struct xlb_iphdr *iph;
	__u16 old, new;
	__be32 tmp;

	if (l3 > XLB_MAX_L3_OFF || l4 > XLB_MAX_L4_OFF)
		return -XLB_DROP_BAD_IP;
	iph = data + l3;
	icmp = data + l4;
	if (data + ETH_HLEN > data_end || (void *)(iph + 1) > data_end ||
	    (void *)(icmp + 1) > data_end)
		return -XLB_DROP_TRUNC_L4;
	xlb_swap_macs(data);
	tmp = iph->saddr;
	iph->saddr = iph->daddr;
	iph->daddr = tmp;
	old = *(__u16 *)&iph->ttl;
	iph->ttl = XLB_OUTER_TTL;
	new = *(__u16 *)&iph->ttl;
	xlb_csum_replace2(&iph->check, old, new);
	old = *(__u16 *)icmp;
	icmp->type = ICMP_ECHOREPLY;
	new = *(__u16 *)icmp;
	xlb_csum_replace2_icmp4(&icmp->check, old, new);
	return XDP_TX;
}

static __noinline int xlb_icmp6_echo(struct xdp_md *ctx, struct xlb_pkt *pkt)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 l3 = pkt->l3_off, l4 = pkt->l4_off;
	struct xlb_icmphdr *icmp;
	struct xlb_ipv6hdr *ip6h;
	__be32 tmp[4];
	__u16 old, new;

	if (l3 > XLB_MAX_L3_OFF || l4 > XLB_MAX_L4_OFF)
		return -XLB_DROP_BAD_IP;
	ip6h = data + l3;
	icmp = data + l4;
	if (data + ETH_HLEN > data_end || (void *)(ip6h + 1) > data_end ||
	    (void *)(icmp + 1) > data_end)
		return -XLB_DROP_TRUNC_L4;
	xlb_swap_macs(data);
	__builtin_memcpy(tmp, ip6h->saddr, 16);
	__builtin_memcpy(ip6h->saddr, ip6h->daddr, 16);
	__builtin_memcpy(ip6h->daddr, tmp, 16);
	ip6h->hop_limit = XLB_OUTER_TTL;
	old = *(__u16 *)icmp;
	icmp->type = ICMPV6_ECHO_REPLY;
	new = *(__u16 *)icmp;
	xlb_csum_replace2(&icmp->check, old, new);
	return XDP_TX;
}

/*
 * The embedded packet is the real's reply (VIP:vport -> client:cport).
 * Rewrite pkt->flow as the client's flow (client -> VIP) so the VIP, LRU
 * and ring lookups find the real that owns it.
 */
static __noinline int xlb_icmp_embedded(void *data, void *data_end, struct xlb_pkt *pkt)
{
	__u32 off = pkt->l4_off + ICMP_HLEN, ihl;
	struct xlb_ipv6hdr *ip6h;
	struct xlb_iphdr *iph;
	__be16 *ports;

	if (off > XLB_MAX_L4_OFF + ICMP_HLEN)
		return -XLB_DROP_BAD_IP;
	if (pkt->flow.family == XLB_FAMILY_V4) {
		iph = data + off;
		if ((void *)(iph + 1) > data_end)
			return -XLB_DROP_ICMP_TRUNC;
		ihl = (iph->ver_ihl & 0xf) * 4;
		if (ihl < IPV4_HLEN)
			return -XLB_DROP_ICMP_TRUNC;
		pkt->flow.proto = iph->protocol;
		pkt->flow.src.v4 = iph->daddr;
		pkt->flow.dst.v4 = iph->saddr;
		off += ihl;
	} else {
		ip6h = data + off;
		if ((void *)(ip6h + 1) > data_end)
			return -XLB_DROP_ICMP_TRUNC;
		pkt->flow.proto = ip6h->nexthdr;
		__builtin_memcpy(pkt->flow.src.v6, ip6h->daddr, 16);
		__builtin_memcpy(pkt->flow.dst.v6, ip6h->saddr, 16);
		off += IPV6_HLEN;
	}
	if (pkt->flow.proto != IPPROTO_TCP && pkt->flow.proto != IPPROTO_UDP)
		return -XLB_PASS_ICMP_OTHER;
	XLB_OPAQUE(off);
	if (off > XLB_MAX_L4_OFF + ICMP_HLEN + 60)
		return -XLB_DROP_ICMP_TRUNC;
	ports = data + off;
	if ((void *)(ports + 2) > data_end)
		return -XLB_DROP_ICMP_TRUNC;
	pkt->flow.sport = ports[1];
	pkt->flow.dport = ports[0];
	pkt->icmp_err = 1;
	return FURTHER_PROCESSING;
}

/*
 * ICMP / ICMPv6 toward a VIP address.  Returns XDP_TX for an answered echo,
 * FURTHER_PROCESSING when pkt->flow now names the flow an ICMP error belongs
 * to, or -reason.
 */
static __noinline int xlb_handle_icmp(struct xdp_md *ctx, struct xlb_pkt *pkt)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 off = pkt->l4_off;
	struct xlb_icmphdr *icmp;
	int v6 = pkt->flow.family == XLB_FAMILY_V6;

	if (off > XLB_MAX_L4_OFF)
		return -XLB_DROP_BAD_IP;
	if (pkt->flow.proto != (v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP))
		return -XLB_PASS_L4_OTHER;
	if (!xlb_is_vip_addr(pkt))
		return -XLB_PASS_NOT_VIP;
	icmp = data + off;
	if ((void *)(icmp + 1) > data_end)
		return -XLB_DROP_TRUNC_L4;
	if (!v6 && icmp->type == ICMP_ECHO)
		return xlb_icmp4_echo(ctx, pkt);
	if (v6 && icmp->type == ICMPV6_ECHO_REQUEST)
		return xlb_icmp6_echo(ctx, pkt);
	if ((!v6 && icmp->type == ICMP_DEST_UNREACH && icmp->code == ICMP_FRAG_NEEDED) ||
	    (v6 && icmp->type == ICMPV6_PKT_TOOBIG))
		return xlb_icmp_embedded(data, data_end, pkt);
	return -XLB_PASS_ICMP_OTHER;
}

#endif /* XLB_ICMP_H */
