/* SPDX-License-Identifier: MIT */
/*
 * xlb_maps.h - the balancer's BTF-defined maps.  Layouts and the rules for
 * updating them are documented in xlb_shared.h.
 */
#ifndef XLB_MAPS_H
#define XLB_MAPS_H

#include "xlb_consts.h"

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
	__type(value, struct xlb_real);
	__uint(max_entries, XLB_MAX_REALS);
} xlb_reals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XLB_RING_MAP_SIZE);
} xlb_rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__type(key, struct xlb_flow_key);
	__type(value, struct xlb_conn);
	__uint(max_entries, XLB_LRU_SIZE);
} xlb_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_config);
	__uint(max_entries, 1);
} xlb_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_flood_state);
	__uint(max_entries, 1);
} xlb_flood SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
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
	__uint(max_entries, XLB_REASON_MAX);
} xlb_reason_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xlb_counter);
	__uint(max_entries, XLB_EVENT_MAX);
} xlb_event_stats SEC(".maps");

#endif /* XLB_MAPS_H */
