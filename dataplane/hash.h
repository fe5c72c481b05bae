/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the flow hash, specified exactly so tests and tools can recompute
 * it independently:
 *
 *   words = src[0..3], dst[0..3], sport | dport << 16, proto
 *           (each a 32-bit little-endian load of the key's bytes, after the
 *            VIP's hash flags zeroed what they exclude)
 *   h = XLB_HASH_SEED
 *   for w in words: h = rotl32((h ^ w) * 0x9e3779b1, 13)
 *   h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13; h *= 0xc2b2ae35; h ^= h >> 16
 *
 * The hash flags: XLB_VIP_F_NO_SPORT zeroes sport; XLB_VIP_F_DPORT_ONLY
 * zeroes src and sport.
 */
#ifndef XLB_HASH_H
#define XLB_HASH_H

#include "xlb_consts.h"

static __always_inline __u32 xlb_hash_mix(__u32 h, __u32 w)
{
	h = (h ^ w) * 0x9e3779b1u;
	return (h << 13) | (h >> 19);
}

static __noinline __u32 xlb_flow_hash(const struct xlb_flow_key *flow, __u32 vip_flags)
{
	__u32 h = XLB_HASH_SEED, sport = flow->sport;
	__u32 s0 = flow->src.v6[0], s1 = flow->src.v6[1];
	__u32 s2 = flow->src.v6[2], s3 = flow->src.v6[3];

	if (vip_flags & (XLB_VIP_F_NO_SPORT | XLB_VIP_F_DPORT_ONLY))
		sport = 0;
	if (vip_flags & XLB_VIP_F_DPORT_ONLY)
		s0 = s1 = s2 = s3 = 0;
	h = xlb_hash_mix(h, s0);
	h = xlb_hash_mix(h, s1);
	h = xlb_hash_mix(h, s2);
	h = xlb_hash_mix(h, s3);
	h = xlb_hash_mix(h, flow->dst.v6[0]);
	h = xlb_hash_mix(h, flow->dst.v6[1]);
	h = xlb_hash_mix(h, flow->dst.v6[2]);
	h = xlb_hash_mix(h, flow->dst.v6[3]);
	h = xlb_hash_mix(h, sport | ((__u32)flow->dport << 16));
	h = xlb_hash_mix(h, flow->proto);
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

#endif /* XLB_HASH_H */
