/* SPDX-License-Identifier: MIT */
/*
 * stats.h - the balancer's counters.  Each helper names its map at the call
 * site (never a map chosen at run time), so the kernel inlines the per-CPU
 * array lookup instead of calling the generic helper through a retpoline.
 * They are __always_inline: a few instructions each, on every packet.
 */
#ifndef XLB_STATS_H
#define XLB_STATS_H

#include "xlb_maps.h"

static __always_inline void xlb_count_event(__u32 event)
{
	struct xlb_counter *c = bpf_map_lookup_elem(&xlb_event_stats, &event);

	if (c)
		c->packets++;
}

static __always_inline void xlb_count_reason(__u32 reason, __u32 bytes)
{
	xlb_counter_add(bpf_map_lookup_elem(&xlb_reason_stats, &reason), bytes);
}

static __always_inline void xlb_count_vip(__u32 vip_num, __u32 bytes)
{
	struct xlb_lb_counter *c = bpf_map_lookup_elem(&xlb_vip_stats, &vip_num);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

static __always_inline void xlb_count_real(__u32 real_num, __u32 bytes)
{
	struct xlb_lb_counter *c = bpf_map_lookup_elem(&xlb_real_stats, &real_num);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

/* A flow entered the connection table: count it for its VIP and its real. */
static __always_inline void xlb_count_new_flow(__u32 vip_num, __u32 real_num)
{
	struct xlb_lb_counter *c;

	c = bpf_map_lookup_elem(&xlb_vip_stats, &vip_num);
	if (c)
		c->new_flows++;
	c = bpf_map_lookup_elem(&xlb_real_stats, &real_num);
	if (c)
		c->new_flows++;
}

#endif /* XLB_STATS_H */
