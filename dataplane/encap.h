/* SPDX-License-Identifier: MIT */
/*
 * encap.h - outer headers toward a real: IPIP, IP6IP6, IPv4-in-IPv6,
 * IPv6-in-IPv4 and GUE (IP directly in UDP).  Builders fill a stack copy of
 * the outer header; callers push room (bpf_xdp_adjust_head in XDP,
 * bpf_skb_adjust_room in tc) and copy it into the packet.
 *
 * Outer fields (tests recompute them): IPv4 ver/ihl 0x45, TOS = inner TOS,
 * id 0, no flags, TTL XLB_OUTER_TTL, protocol 4/41/17, checksum; IPv6
 * traffic class = inner TOS, flow label = hash & 0xfffff, hop limit
 * XLB_OUTER_TTL, next header 4/41/17; UDP source 0xc000 | (hash & 0x3fff),
 * destination the GUE port, checksum 0.
 */
#ifndef XLB_ENCAP_H
#define XLB_ENCAP_H

#include "xlb_consts.h"

/* Room an encapsulation needs in front of the inner IP header. */
static __always_inline __u32 xlb_outer_len(__u8 outer_family, __u8 encap)
{
	return (outer_family == XLB_FAMILY_V6 ? IPV6_HLEN : IPV4_HLEN) +
	       (encap == XLB_ENCAP_GUE ? UDP_HLEN : 0);
}

/* Protocol number announcing the inner packet (or UDP for GUE). */
static __always_inline __u8 xlb_outer_proto(__u8 inner_family, __u8 encap)
{
	if (encap == XLB_ENCAP_GUE)
		return IPPROTO_UDP;
	return inner_family == XLB_FAMILY_V6 ? IPPROTO_IPV6 : IPPROTO_IPIP;
}

static __always_inline __u16 xlb_gue_sport(__u32 hash)
{
	return 0xc000 | (hash & 0x3fff);
}

/* Outer IPv4 source: the configured prefix, host bits from the hash. */
static __always_inline __be32 xlb_outer_src4(__be32 prefix, __u8 plen, __u32 hash)
{
	__u32 mask = plen >= 32 ? 0 : 0xffffffffu >> plen;

	return bpf_htonl((bpf_ntohl(prefix) & ~mask) | (hash & mask));
}

/* Outer IPv6 source: the prefix, up to 32 low host bits from the hash. */
static __always_inline __be32 xlb_outer_src6_low(__be32 prefix_low, __u8 plen, __u32 hash)
{
	__u32 mask;

	if (plen < 96)
		plen = 96;
	mask = plen >= 128 ? 0 : 0xffffffffu >> (plen - 96);
	return bpf_htonl((bpf_ntohl(prefix_low) & ~mask) | (hash & mask));
}

/*
 * Fill the remaining IPv4 fields and the header checksum, summed as five
 * 32-bit words (the ones' complement sum does not care how the words are
 * grouped; the header is 4-byte aligned on the stack).
 */
static __always_inline void xlb_ipv4_finish(struct xlb_iphdr *iph, __u32 tot_len)
{
	const __u32 *w = (const __u32 *)iph;
	__u64 sum;

	iph->ver_ihl = 0x45;
	iph->tot_len = bpf_htons(tot_len);
	iph->id = 0;
	iph->frag_off = 0;
	iph->ttl = XLB_OUTER_TTL;
	iph->check = 0;
	sum = (__u64)w[0] + w[1] + w[2] + w[3] + w[4];
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	iph->check = xlb_csum_fold((__u32)sum);
}

static __always_inline void xlb_ipv6_fill(struct xlb_ipv6hdr *ip6h, __u8 tos, __u32 hash,
					  __u32 payload_len, __u8 nexthdr)
{
	ip6h->ver_tc_flow = bpf_htonl((6u << 28) | ((__u32)tos << 20) | (hash & 0xfffff));
	ip6h->payload_len = bpf_htons(payload_len);
	ip6h->nexthdr = nexthdr;
	ip6h->hop_limit = XLB_OUTER_TTL;
}

static __always_inline void xlb_udp_fill(struct xlb_udphdr *uh, __u32 hash, __u16 port, __u32 len)
{
	uh->source = bpf_htons(xlb_gue_sport(hash));
	uh->dest = bpf_htons(port ? port : XLB_GUE_PORT_DEFAULT);
	uh->len = bpf_htons(len);
	uh->check = 0;
}

#endif /* XLB_ENCAP_H */
