/* SPDX-License-Identifier: MIT */
/*
 * vip.h - is this packet for a VIP, and may its source use it: the VIP
 * address filter (no hashing for host traffic), the VIP lookup (exact
 * port, then the any-port VIP), the VIP-address test (ICMP, later
 * fragments), the per-VIP source allow-list.
 */
#ifndef XLB_VIP_H
#define XLB_VIP_H

#include "xlb_maps.h"
#include "parse.h"

/* What the VIP address filter says of the destination. */
enum xlb_filter_answer {
	XLB_NOT_VIP_ADDR = 0,	 /* certainly no VIP address */
	XLB_MAYBE_VIP_ADDR = 1,	 /* maybe: look the VIP up */
	XLB_MAYBE_FAST_ADDR = 2, /* maybe, with fast-path VIPs: the table first */
};

static __always_inline int xlb_filter_vip_addr(const struct xlb_pkt *pkt)
{
	const struct xlb_vip_filter *f;
	__u32 zero = 0, bit, word, shift;

	f = bpf_map_lookup_elem(&xlb_vip_filter, &zero);
	if (!f || !f->enabled)
		return XLB_MAYBE_FAST_ADDR; /* no hint: the table first is never wrong */
	bit = xlb_vip_filter_bit(&pkt->flow.dst);
	word = (bit >> 6) & (XLB_VIP_FILTER_BITS / 64 - 1);
	shift = bit & 63;
	if (!((f->bits[word] >> shift) & 1))
		return XLB_NOT_VIP_ADDR;
	return ((f->fast_bits[word] >> shift) & 1) ? XLB_MAYBE_FAST_ADDR : XLB_MAYBE_VIP_ADDR;
}

static __always_inline int xlb_is_vip_addr(const struct xlb_pkt *pkt)
{
	struct xlb_addr_key key = {};

	key.addr = pkt->flow.dst;
	key.family = pkt->flow.family;
	return bpf_map_lookup_elem(&xlb_vip_addrs, &key) != NULL;
}

/* (daddr, dport, proto), then the any-port VIP (daddr, 0, proto): pkt->vip. */
static __always_inline int xlb_lookup_vip(struct xlb_pkt *pkt)
{
	struct xlb_vip_key key = {};
	struct xlb_vip_meta *meta;

	key.addr = pkt->flow.dst;
	key.port = pkt->flow.dport;
	key.proto = pkt->flow.proto;
	key.family = pkt->flow.family;
	meta = bpf_map_lookup_elem(&xlb_vips, &key);
	if (!meta) {
		key.port = 0;
		meta = bpf_map_lookup_elem(&xlb_vips, &key);
		if (!meta)
			return -XLB_PASS_NOT_VIP;
	}
	pkt->vip = *meta;
	if (pkt->vip.vip_num >= xlb_max_vips)
		return -XLB_PASS_NOT_VIP;
	return FURTHER_PROCESSING;
}

/* XLB_VIP_F_ALLOWLIST: the source must match a prefix listed for the VIP. */
static __noinline int xlb_src_allowed(struct xlb_pkt *pkt)
{
	struct xlb_allow_key key = {};

	key.prefixlen = 32 + (pkt->flow.family == XLB_FAMILY_V6 ? 128 : 32);
	key.vip_num = bpf_htonl(pkt->vip.vip_num);
	key.addr = pkt->flow.src;
	if (!bpf_map_lookup_elem(&xlb_allow, &key))
		return -XLB_DROP_NOT_ALLOWED;
	return FURTHER_PROCESSING;
}

#endif /* XLB_VIP_H */
