/* SPDX-License-Identifier: MIT */
/*
 * frag.h - fragments to VIPs (xlb_shared.h, "Fragments").  The first
 * fragment carries the ports: it is balanced like any packet and leaves a
 * record (addresses, protocol, IP id) -> (real, hash, VIP) in xlb_frags;
 * the later ones carry no ports and follow the record.  Only TCP and UDP
 * are balanced this way; other protocols' fragments pass to the stack.
 */
#ifndef XLB_FRAG_H
#define XLB_FRAG_H

#include "stats.h"
#include "vip.h"

static __always_inline void xlb_frag_key_of(const struct xlb_pkt *pkt, struct xlb_frag_key *key)
{
	key->src = pkt->flow.src;
	key->dst = pkt->flow.dst;
	key->id = pkt->frag_id;
	key->proto = pkt->flow.proto;
	key->family = pkt->flow.family;
}

/* A first fragment was balanced: its datagram's later fragments follow it. */
static __noinline void xlb_frag_remember(struct xlb_pkt *pkt)
{
	struct xlb_frag_key key = {};
	struct xlb_frag val = {};

	xlb_frag_key_of(pkt, &key);
	val.real_num = pkt->real_num;
	val.hash = pkt->hash;
	val.vip_num = pkt->vip.vip_num;
	val.encap = pkt->vip.encap;
	if (!bpf_map_update_elem(&xlb_frags, &key, &val, BPF_ANY))
		xlb_count_event(XLB_EV_FRAG_TRACKED);
	XLB_RETURN_VOID;
}

/* A later fragment: the real, hash and VIP of its first fragment, or -reason. */
static __noinline int xlb_frag_follow(struct xlb_pkt *pkt, const struct xlb_config *cfg)
{
	struct xlb_frag_key key = {};
	struct xlb_frag *f;

	if (!xlb_is_vip_addr(pkt))
		return -XLB_PASS_FRAGMENT;
	if (cfg->flags & XLB_CFG_F_FRAG_DROP)
		return -XLB_DROP_FRAGMENT;
	xlb_frag_key_of(pkt, &key);
	f = bpf_map_lookup_elem(&xlb_frags, &key);
	if (!f || f->vip_num >= xlb_max_vips)
		return -XLB_DROP_FRAG_UNMATCHED;
	pkt->real_num = f->real_num;
	pkt->hash = f->hash;
	pkt->vip.vip_num = f->vip_num;
	pkt->vip.encap = f->encap;
	xlb_count_event(XLB_EV_FRAG_FOLLOW);
	return FURTHER_PROCESSING;
}

#endif /* XLB_FRAG_H */
