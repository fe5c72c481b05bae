// SPDX-License-Identifier: MIT
/*
 * A stand-in for a future balancer build whose xlb_vips map changed its
 * layout (the VIP's value grew by 8 bytes): the balancer as it is, its own
 * VIP map renamed out of the way, and an xlb_vips of the new layout.  xlbd
 * must refuse to replace the running program with it, before touching
 * anything (it_upgrade.sh).
 */
#define xlb_vips xlb_vips_renamed
#include "balancer.bpf.c"
#undef xlb_vips

struct xlb_vip_meta_grown {
	struct xlb_vip_meta meta;
	__u64 added;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct xlb_vip_key);
	__type(value, struct xlb_vip_meta_grown);
	__uint(max_entries, XLB_MAX_VIPS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} xlb_vips SEC(".maps");
