/* SPDX-License-Identifier: MIT */
/*
 * tx.h - how a balanced packet leaves: the receiving interface's entry in
 * xlb_ifaces (outer MACs, egress port, the egress's largest packet), the
 * too-big check, the outer headers (encap.h builders), XDP_TX or
 * XDP_REDIRECT through the devmap.
 */
#ifndef XLB_TX_H
#define XLB_TX_H

#include "stats.h"
#include "parse.h"
#include "encap.h"
#include "icmp_gen.h"

/* The receiving interface's settings; NULL past XLB_MAX_IFINDEX (defaults). */
static __always_inline const struct xlb_iface *xlb_iface_of(struct xdp_md *ctx)
{
	__u32 ifindex = ctx->ingress_ifindex;

	return bpf_map_lookup_elem(&xlb_ifaces, &ifindex);
}

/*
 * The outer IPv4 header, written field by field into the packet (typed
 * stores, no stack copy).  The checksum is summed from the values as five
 * 32-bit words: ver/ihl, TOS, total length | id, flags (0) | TTL, protocol,
 * checksum (0) | source | destination.
 */
static __always_inline void xlb_outer4(struct xlb_iphdr *iph, __u8 tos, __u8 proto, __be32 saddr,
				       __be32 daddr, __u32 tot_len)
{
	__be16 len = bpf_htons(tot_len);
	__u64 sum;

	iph->ver_ihl = 0x45;
	iph->tos = tos;
	iph->tot_len = len;
	iph->id = 0;
	iph->frag_off = 0;
	iph->ttl = XLB_OUTER_TTL;
	iph->protocol = proto;
	iph->saddr = saddr;
	iph->daddr = daddr;
	sum = (__u64)(0x45 | (__u32)tos << 8 | (__u32)len << 16) + (XLB_OUTER_TTL | (__u32)proto << 8) +
	      saddr + daddr;
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	iph->check = xlb_csum_fold((__u32)sum);
}

static __always_inline void xlb_outer6(struct xlb_ipv6hdr *ip6h, const struct xlb_pkt *pkt,
				       const struct xlb_config *cfg, const struct xlb_real *real,
				       __u8 proto, __u32 payload_len)
{
	ip6h->ver_tc_flow = bpf_htonl((6u << 28) | ((__u32)pkt->tos << 20) | (pkt->hash & 0xfffff));
	ip6h->payload_len = bpf_htons(payload_len);
	ip6h->nexthdr = proto;
	ip6h->hop_limit = XLB_OUTER_TTL;
	ip6h->saddr[0] = cfg->src6.v6[0];
	ip6h->saddr[1] = cfg->src6.v6[1];
	ip6h->saddr[2] = cfg->src6.v6[2];
	ip6h->saddr[3] = xlb_outer_src6_low(cfg->src6.v6[3], cfg->src6_plen, pkt->hash);
	ip6h->daddr[0] = real->addr.v6[0];
	ip6h->daddr[1] = real->addr.v6[1];
	ip6h->daddr[2] = real->addr.v6[2];
	ip6h->daddr[3] = real->addr.v6[3];
}

/*
 * Push the outer IP (+ UDP for GUE) header in front of the inner IP header
 * and write the outer Ethernet header (+ the received 802.1Q tag).  The
 * inner packet (from its IP header to the end of the frame) is left as
 * received; it may be as short as 21 bytes (a last fragment).
 */
static __always_inline int xlb_encap(struct xdp_md *ctx, struct xlb_pkt *pkt,
				     const struct xlb_real *real, const struct xlb_config *cfg,
				     const struct xlb_iface *ifc)
{
	int gue = pkt->vip.encap == XLB_ENCAP_GUE, v6 = real->family == XLB_FAMILY_V6;
	__u32 olen = xlb_outer_len(real->family, gue ? XLB_ENCAP_GUE : XLB_ENCAP_IP);
	__u32 l3 = pkt->l3_off, inner_len = pkt->l3_len;
	__u8 proto = xlb_outer_proto(pkt->flow.family, gue ? XLB_ENCAP_GUE : XLB_ENCAP_IP);
	__u16 eth_proto = v6 ? ETH_P_IPV6 : ETH_P_IP;
	const __u8 *gw = cfg->gw_mac, *smac = NULL;
	__u16 rx_dst[3];
	struct xlb_ethhdr *eth;
	struct xlb_udphdr *uh;
	void *data, *data_end, *out;

	if (v6 ? xlb_addr_is_zero(&cfg->src6) : !cfg->src4)
		return -XLB_DROP_NO_CONFIG;
	if (ifc && xlb_mac_is_set(ifc->gw_mac))
		gw = ifc->gw_mac;
	if (ifc && xlb_mac_is_set(ifc->src_mac))
		smac = ifc->src_mac;
	else if (xlb_mac_is_set(cfg->src_mac))
		smac = cfg->src_mac;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	xlb_mac_copy((__u8 *)rx_dst, data);

	if (bpf_xdp_adjust_head(ctx, -(int)olen))
		return -XLB_DROP_ENCAP_FAIL;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + XLB_MAX_L2 > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	eth = data;
	xlb_mac_copy(eth->dst, gw);
	xlb_mac_copy(eth->src, smac ? smac : (const __u8 *)rx_dst);
	if (pkt->has_vlan) {
		struct xlb_vlanhdr *vlan = (void *)(eth + 1);

		eth->proto = bpf_htons(ETH_P_8021Q);
		vlan->tci = pkt->vlan_tci;
		vlan->proto = bpf_htons(eth_proto);
	} else {
		eth->proto = bpf_htons(eth_proto);
	}
	/* Bound l3 on the register the pointer is built from (XLB_OPAQUE). */
	XLB_OPAQUE(l3);
	if (l3 > XLB_MAX_L3_OFF)
		return -XLB_DROP_ENCAP_FAIL;
	out = data + l3;
	if (v6) {
		if (out + IPV6_HLEN + UDP_HLEN > data_end)
			return -XLB_DROP_ENCAP_FAIL;
		xlb_outer6(out, pkt, cfg, real, proto, inner_len + olen - IPV6_HLEN);
		uh = out + IPV6_HLEN;
	} else {
		if (out + IPV4_HLEN + UDP_HLEN > data_end)
			return -XLB_DROP_ENCAP_FAIL;
		xlb_outer4(out, pkt->tos, proto, xlb_outer_src4(cfg->src4, cfg->src4_plen, pkt->hash),
			   real->addr.v4, inner_len + olen);
		uh = out + IPV4_HLEN;
	}
	if (gue)
		xlb_udp_fill(uh, pkt->hash, cfg->gue_port, inner_len + UDP_HLEN);
	return FURTHER_PROCESSING;
}

/* Out of the receiving interface, or through the devmap port of the interface. */
static __always_inline int xlb_transmit(const struct xlb_iface *ifc)
{
	if (ifc && ifc->tx_port) {
		if (bpf_redirect_map(&xlb_tx_ports, ifc->tx_port - 1, 0) != XDP_REDIRECT)
			return -XLB_DROP_REDIRECT;
		xlb_count_event(XLB_EV_REDIRECT);
		return XDP_REDIRECT;
	}
	xlb_count_event(XLB_EV_TX);
	return XDP_TX;
}

/*
 * The encapsulated packet would exceed the egress's max_pkt: tell the
 * client (ICMP / ICMPv6, next-hop MTU = what fits before encapsulation)
 * when it can react, else drop it, counted.
 */
static __always_inline int xlb_too_big(struct xdp_md *ctx, struct xlb_pkt *pkt, __u32 mtu)
{
	if (pkt->icmp_err || pkt->frag || (pkt->flow.family == XLB_FAMILY_V4 && !pkt->df))
		return -XLB_DROP_TOO_BIG_NO_DF;
	return xlb_icmp_too_big(ctx, pkt, mtu);
}

/*
 * The chosen real's headers, the size check, the encapsulation, out.
 * Inlined into the entry (its one call site): an established flow's packet
 * then makes no bpf-to-bpf call at all (a call and its return thunk cost
 * ~10 ns a packet here, measured with bpf_stats).
 */
static __always_inline int xlb_forward(struct xdp_md *ctx, struct xlb_pkt *pkt, const struct xlb_config *cfg)
{
	const struct xlb_iface *ifc = xlb_iface_of(ctx);
	const struct xlb_real *real;
	__u32 olen;
	int ret;

	real = bpf_map_lookup_elem(&xlb_reals, &pkt->real_num);
	if (!real || xlb_addr_is_zero(&real->addr))
		return -XLB_DROP_NO_REAL;
	olen = xlb_outer_len(real->family, pkt->vip.encap == XLB_ENCAP_GUE ? XLB_ENCAP_GUE : XLB_ENCAP_IP);
	if (pkt->l3_len + olen > 0xffff)
		return -XLB_DROP_TOO_BIG;
	if (ifc && ifc->max_pkt && pkt->l3_len + olen > ifc->max_pkt)
		return xlb_too_big(ctx, pkt, ifc->max_pkt > olen ? ifc->max_pkt - olen : 0);
	xlb_count_real(pkt->real_num, pkt->frame_len);
	ret = xlb_encap(ctx, pkt, real, cfg, ifc);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->icmp_err)
		xlb_count_event(XLB_EV_ICMP_TOO_BIG);
	return xlb_transmit(ifc);
}

#endif /* XLB_TX_H */
