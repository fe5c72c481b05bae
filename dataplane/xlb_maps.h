/* SPDX-License-Identifier: MIT */
/*
 * xlb_maps.h - the balancer's BTF-defined maps.  Layouts and the rules for
 * updating them are documented in xlb_shared.h.
 */
#ifndef XLB_MAPS_H
#define XLB_MAPS_H

#include "xlb_consts.h"

/*
 * The sizes, set in .rodata before load together with the maps' max_entries
 * (xlb_shared.h, "Sizes"); the defaults are the object's built-in sizes.
 */
const volatile __u32 xlb_max_vips = XLB_MAX_VIPS;
const volatile __u32 xlb_max_reals = XLB_MAX_REALS;
const volatile __u32 xlb_ring_size = XLB_RING_SIZE;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct xlb_vip_key);
	__type(value, struct xlb_vip_meta);
	__uint(max_entries, XLB_MAX_VIPS);
	/* Replaced elements are freed after an RCU grace period, never reused
	 * under a reader: a packet copies either the old or the new meta. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
} xlb_vips SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct xlb_addr_key);
	__type(value, __u32);
	__uint(max_entries, XLB_MAX_VIPS);
} xlb_vip_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_vip_filter);
	__uint(max_entries, 1);
} xlb_vip_filter SEC(".maps");

/* The established-flow fast path's view of each VIP (xlb_shared.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_vip_fast);
	__uint(max_entries, XLB_MAX_VIPS);
} xlb_vip_fast SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_real);
	__uint(max_entries, XLB_MAX_REALS);
} xlb_reals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XLB_RING_MAP_SIZE);
} xlb_rings SEC(".maps");

/* One table for every CPU, LRU lists per CPU (xlb_shared.h, "Connection table"). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct xlb_flow_key);
	__type(value, struct xlb_conn);
	__uint(max_entries, XLB_LRU_SIZE);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
} xlb_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct xlb_affinity_key);
	__type(value, struct xlb_affinity);
	__uint(max_entries, XLB_AFFINITY_SIZE);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
} xlb_affinity SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct xlb_frag_key);
	__type(value, struct xlb_frag);
	__uint(max_entries, XLB_FRAG_SIZE);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
} xlb_frags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct xlb_allow_key);
	__type(value, __u32);
	__uint(max_entries, XLB_ALLOW_SIZE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} xlb_allow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_config);
	__uint(max_entries, 1);
} xlb_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_iface);
	__uint(max_entries, XLB_MAX_IFINDEX);
} xlb_ifaces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_flood_state);
	__uint(max_entries, 1);
} xlb_flood SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XLB_MAX_SERVER_IDS);
} xlb_server_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XLB_MAX_TX_PORTS);
} xlb_tx_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_lb_counter);
	__uint(max_entries, XLB_MAX_VIPS);
} xlb_vip_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_lb_counter);
	__uint(max_entries, XLB_MAX_REALS);
} xlb_real_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_counter);
	__uint(max_entries, XLB_STAT_SLOTS);
} xlb_reason_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_counter);
	__uint(max_entries, XLB_STAT_SLOTS);
} xlb_event_stats SEC(".maps");

#endif /* XLB_MAPS_H */
