/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the flow hash as a subprogram, for the healthcheck program.
 * The function itself is xlb_flow_hash_words() in xlb_shared.h, specified
 * there exactly so tests and control recompute it; the balancer inlines
 * it where a flow has no connection-table entry (the entry keeps the hash
 * for the outer headers).
 */
#ifndef XLB_HASH_H
#define XLB_HASH_H

#include "xlb_consts.h"

static __noinline __u32 xlb_flow_hash(const struct xlb_flow_key *flow, __u32 vip_flags)
{
	return xlb_flow_hash_words(flow, vip_flags);
}

#endif /* XLB_HASH_H */
