/* SPDX-License-Identifier: MIT */
/*
 * parse.h - bounds-checked packet parsing shared by the XDP and tc programs.
 *
 * Functions take the packet as (data, data_end) so XDP and tc callers share
 * them, and record offsets (never pointers) in struct xlb_pkt: every later
 * step rebuilds its pointer from the context and a bounded offset, which is
 * what both the kernel's and xlb's verifier prove safe most easily.
 *
 * Defined actions for what the balancer does not balance (counted reasons):
 *  - non-IP ethertypes (ARP, ...), a second VLAN tag, 802.1ad: XDP_PASS
 *    (XLB_PASS_NOT_IP), packet untouched;
 *  - fragments (IPv4 MF or offset, an IPv6 fragment header right after the
 *    IPv6 header): recorded in pkt->frag (first: L4 header present; later:
 *    none) for the balancer's fragment handling (frag.h); the decap and
 *    healthcheck programs pass them untouched (XLB_PASS_FRAGMENT);
 *  - IPv4 options: balanced normally, options carried inside the
 *    encapsulation (event XLB_EV_IP_OPTIONS);
 *  - other IPv6 extension headers: XDP_PASS (XLB_PASS_IPV6_EXT);
 *  - a header cut short by the end of the packet (Ethernet/VLAN, IP, TCP/
 *    UDP, or IP's length field past the end): XDP_DROP (XLB_DROP_TRUNC_*);
 *    a wrong IP version or header length: XDP_DROP (XLB_DROP_BAD_IP).
 */
#ifndef XLB_PARSE_H
#define XLB_PARSE_H

#include "xlb_consts.h"

/*
 * The parse steps are bpf-to-bpf subprograms in the healthcheck program.
 * The balancer and the reals' decap, which meet every packet their host
 * receives, define XLB_PARSE_INLINE before including this header: there
 * they are inlined into their callers, sparing a call's prologue, epilogue
 * and return thunk per step and packet.
 */
#ifdef XLB_PARSE_INLINE
#define XLB_PARSE_STEP static __always_inline
#else
#define XLB_PARSE_STEP static __noinline
#endif

/* Upper bounds that keep offsets provably small. */
#define XLB_MAX_L3_OFF XLB_MAX_L2
#define XLB_MAX_L4_OFF (XLB_MAX_L2 + 60) /* IPv4 options, or an IPv6 fragment header */

/* What the parser learned about one packet; lives on the entry's stack. */
struct xlb_pkt {
	struct xlb_flow_key flow; /* as received (or reversed for ICMP errors) */
	struct xlb_vip_meta vip;
	__u32 l3_off;	 /* IP header offset from data */
	__u32 l4_off;	 /* L4 header offset from data */
	__u32 l3_len;	 /* bytes from the IP header to the end of the frame */
	__u32 frame_len; /* whole frame as received */
	__u32 hash;	 /* flow hash after the VIP's hash flags */
	__u32 real_num;
	__u16 l3_proto;	 /* ethertype, host order */
	__be16 vlan_tci;
	__u8 has_vlan;
	__u8 tcp_flags;
	__u8 tos;	 /* IPv4 TOS / IPv6 traffic class */
	__u8 icmp_err;	 /* flow taken from an ICMP error's embedded headers */
	__u8 frag;	 /* enum xlb_frag_kind */
	__u8 df;	 /* IPv4 "don't fragment" */
	__u8 conn_absent; /* the fast path found no table entry: no second lookup */
	__u8 pad;
	__u32 frag_id;	 /* IPv4 identification / IPv6 fragment id, host order */
};

enum xlb_frag_kind {
	XLB_FRAG_NONE = 0,
	XLB_FRAG_FIRST = 1, /* offset 0, more to come: carries the L4 header */
	XLB_FRAG_LATER = 2, /* offset > 0: no L4 header */
};

/* IPv6 fragment header (RFC 8200 4.5). */
struct xlb_frag6hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 off_m; /* offset << 3 | M */
	__be32 id;
};

/*
 * Bytes from `from` to `to`, subtracted as 64-bit pointers.  The barrier
 * keeps clang from narrowing the subtraction to 32-bit ALU on pointers,
 * which only a privileged kernel verifier accepts.
 */
static __always_inline __u32 xlb_span(void *from, void *to)
{
	__u64 len = (__u64)to - (__u64)from;

	asm volatile("" : "+r"(len));
	return len;
}

/* Ethernet and at most one 802.1Q tag. */
XLB_PARSE_STEP int xlb_parse_l2(void *data, void *data_end, struct xlb_pkt *pkt)
{
	struct xlb_ethhdr *eth = data;
	struct xlb_vlanhdr *vlan;
	__u16 proto;

	if ((void *)(eth + 1) > data_end)
		return -XLB_DROP_TRUNC_L2;
	pkt->frame_len = xlb_span(data, data_end);
	proto = bpf_ntohs(eth->proto);
	pkt->l3_off = ETH_HLEN;
	if (proto == ETH_P_8021Q) {
		vlan = (void *)(eth + 1);
		if ((void *)(vlan + 1) > data_end)
			return -XLB_DROP_TRUNC_L2;
		pkt->has_vlan = 1;
		pkt->vlan_tci = vlan->tci;
		proto = bpf_ntohs(vlan->proto);
		pkt->l3_off = ETH_HLEN + VLAN_HLEN;
	}
	pkt->l3_proto = proto;
	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return -XLB_PASS_NOT_IP;
	return FURTHER_PROCESSING;
}

XLB_PARSE_STEP int xlb_parse_ipv4(void *data, void *data_end, struct xlb_pkt *pkt)
{
	__u32 off = pkt->l3_off, ihl, tot_len, avail;
	struct xlb_iphdr *iph;

	if (off > XLB_MAX_L3_OFF)
		return -XLB_DROP_BAD_IP;
	iph = data + off;
	if ((void *)(iph + 1) > data_end)
		return -XLB_DROP_TRUNC_L3;
	if ((iph->ver_ihl >> 4) != 4)
		return -XLB_DROP_BAD_IP;
	ihl = (iph->ver_ihl & 0xf) * 4;
	if (ihl < IPV4_HLEN)
		return -XLB_DROP_BAD_IP;
	avail = xlb_span(iph, data_end);
	tot_len = bpf_ntohs(iph->tot_len);
	if (ihl > avail || tot_len > avail)
		return -XLB_DROP_TRUNC_L3;
	if (tot_len < ihl)
		return -XLB_DROP_BAD_IP;
	if (iph->frag_off & bpf_htons(IP_OFFMASK))
		pkt->frag = XLB_FRAG_LATER;
	else if (iph->frag_off & bpf_htons(IP_MF))
		pkt->frag = XLB_FRAG_FIRST;
	pkt->df = !!(iph->frag_off & bpf_htons(IP_DF));
	pkt->frag_id = bpf_ntohs(iph->id);
	pkt->flow.family = XLB_FAMILY_V4;
	pkt->flow.proto = iph->protocol;
	pkt->flow.src.v4 = iph->saddr;
	pkt->flow.dst.v4 = iph->daddr;
	pkt->tos = iph->tos;
	pkt->l4_off = off + ihl;
	pkt->l3_len = avail;
	return ihl > IPV4_HLEN ? 1 : 0;
}

static __always_inline int xlb_ipv6_is_ext(__u8 nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51 || nh == 60 ||
	       nh == 135 || nh == 139 || nh == 140 || nh == 253 || nh == 254;
}

/*
 * A fragment header right after the IPv6 header: the L4 header (first
 * fragment) or the data (later ones) follows it.  An atomic fragment
 * (offset 0, no M, RFC 6946) is a whole datagram.
 */
static __always_inline int xlb_parse_frag6(void *data, void *data_end, struct xlb_pkt *pkt)
{
	__u32 off = pkt->l4_off;
	struct xlb_frag6hdr *fh;
	__u16 off_m;

	if (off > XLB_MAX_L3_OFF + IPV6_HLEN)
		return -XLB_DROP_BAD_IP;
	fh = data + off;
	if ((void *)(fh + 1) > data_end)
		return -XLB_DROP_TRUNC_L3;
	if (xlb_ipv6_is_ext(fh->nexthdr))
		return -XLB_PASS_IPV6_EXT;
	off_m = bpf_ntohs(fh->off_m);
	if (off_m & 0xfff8)
		pkt->frag = XLB_FRAG_LATER;
	else if (off_m & 1)
		pkt->frag = XLB_FRAG_FIRST;
	pkt->frag_id = bpf_ntohl(fh->id);
	pkt->flow.proto = fh->nexthdr;
	pkt->l4_off = off + sizeof(*fh);
	return 0;
}

XLB_PARSE_STEP int xlb_parse_ipv6(void *data, void *data_end, struct xlb_pkt *pkt)
{
	__u32 off = pkt->l3_off, avail;
	struct xlb_ipv6hdr *ip6h;
	__u32 first;

	if (off > XLB_MAX_L3_OFF)
		return -XLB_DROP_BAD_IP;
	ip6h = data + off;
	if ((void *)(ip6h + 1) > data_end)
		return -XLB_DROP_TRUNC_L3;
	first = bpf_ntohl(ip6h->ver_tc_flow);
	if ((first >> 28) != 6)
		return -XLB_DROP_BAD_IP;
	avail = xlb_span(ip6h, data_end);
	if ((__u32)bpf_ntohs(ip6h->payload_len) + IPV6_HLEN > avail)
		return -XLB_DROP_TRUNC_L3;
	pkt->flow.family = XLB_FAMILY_V6;
	pkt->flow.proto = ip6h->nexthdr;
	__builtin_memcpy(pkt->flow.src.v6, ip6h->saddr, 16);
	__builtin_memcpy(pkt->flow.dst.v6, ip6h->daddr, 16);
	pkt->tos = (first >> 20) & 0xff;
	pkt->l4_off = off + IPV6_HLEN;
	pkt->l3_len = avail;
	if (ip6h->nexthdr == IPPROTO_FRAGMENT)
		return xlb_parse_frag6(data, data_end, pkt);
	if (xlb_ipv6_is_ext(ip6h->nexthdr))
		return -XLB_PASS_IPV6_EXT;
	return 0;
}

/* TCP and UDP ports (and TCP flags); ICMP is left to icmp.h. */
XLB_PARSE_STEP __attribute__((unused)) int xlb_parse_l4(void *data, void *data_end, struct xlb_pkt *pkt)
{
	__u32 off = pkt->l4_off;
	struct xlb_tcphdr *th;
	struct xlb_udphdr *uh;

	if (off > XLB_MAX_L4_OFF)
		return -XLB_DROP_BAD_IP;
	switch (pkt->flow.proto) {
	case IPPROTO_TCP:
		th = data + off;
		if ((void *)(th + 1) > data_end)
			return -XLB_DROP_TRUNC_L4;
		pkt->flow.sport = th->source;
		pkt->flow.dport = th->dest;
		pkt->tcp_flags = th->flags;
		return FURTHER_PROCESSING;
	case IPPROTO_UDP:
		uh = data + off;
		if ((void *)(uh + 1) > data_end)
			return -XLB_DROP_TRUNC_L4;
		pkt->flow.sport = uh->source;
		pkt->flow.dport = uh->dest;
		return FURTHER_PROCESSING;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return FURTHER_PROCESSING;
	}
	return -XLB_PASS_L4_OTHER;
}

#endif /* XLB_PARSE_H */
