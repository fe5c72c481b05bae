// SPDX-License-Identifier: MIT
/*
 * The userspace backend, the maps: config, reals, VIPs and their Maglev
 * rings, written into xlb-dpdk's shared maps while its lcores run the
 * balancer over them.
 *
 * The rules are the kernel backend's (xlb_shared.h, "Maglev rings"): a new
 * ring goes into the half the VIP's meta does not point at, then the meta
 * is replaced with ring_half flipped in one hash update; a half is
 * rewritten only XLB_US_RING_GRACE_NS after the flip that retired it.  In
 * userspace there is no RCU: a replaced hash element is recycled last
 * (core/map_hash.c's FIFO free list) and an lcore reads a meta for well
 * under a microsecond, so the same grace covers a reader in xlb-dpdk.
 * Every write checks its index against the map before touching it: a bad
 * id is refused with nothing written.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "userspace.h"

#define XLB_US_RING_GRACE_NS (20ull * 1000 * 1000)

/* The maps xlbd attaches to, with the layouts it was built for. */
#define WANT(NAME, TYPE, K, V) { NAME, XBPF_MAP_##TYPE, sizeof(K), sizeof(V) }
const struct umap_want userspace_maps[UM_CNT] = {
	[UM_VIPS] = WANT("xlb_vips", HASH, struct xlb_vip_key, struct xlb_vip_meta),
	[UM_VIP_ADDRS] = WANT("xlb_vip_addrs", HASH, struct xlb_addr_key, __u32),
	[UM_REALS] = WANT("xlb_reals", ARRAY, __u32, struct xlb_real),
	[UM_RINGS] = WANT("xlb_rings", ARRAY, __u32, __u32),
	[UM_CONNS] = WANT("xlb_conns", LRU_HASH, struct xlb_flow_key, struct xlb_conn),
	[UM_CONFIG] = WANT("xlb_config", ARRAY, __u32, struct xlb_config),
	[UM_VIP_STATS] = WANT("xlb_vip_stats", PERCPU_ARRAY, __u32, struct xlb_lb_counter),
	[UM_REAL_STATS] = WANT("xlb_real_stats", PERCPU_ARRAY, __u32, struct xlb_lb_counter),
	[UM_REASON_STATS] = WANT("xlb_reason_stats", PERCPU_ARRAY, __u32, struct xlb_counter),
	[UM_EVENT_STATS] = WANT("xlb_event_stats", PERCPU_ARRAY, __u32, struct xlb_counter),
	[UM_VIP_FILTER] = WANT("xlb_vip_filter", ARRAY, __u32, struct xlb_vip_filter),
	[UM_DPDK_STATUS] = WANT(XLB_DPDK_STATUS_MAP, ARRAY, __u32, struct xlb_dpdk_status),
	[UM_DPDK_PORTS] = WANT(XLB_DPDK_PORT_MAP, ARRAY, __u32, struct xlb_dpdk_port_stats),
	[UM_DPDK_LCORES] = WANT(XLB_DPDK_LCORE_MAP, ARRAY, __u32, struct xlb_dpdk_lcore_stats),
};
#undef WANT

uint64_t userspace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An address as the dataplane keys it: family byte, 16 bytes, IPv4 in the first 4. */
static void dp_addr(const struct xlb_ip *a, union xlb_addr *ret, __u8 *ret_family)
{
	bool v4 = a->family == AF_INET;

	memset(ret, 0, sizeof(*ret));
	memcpy(ret->bytes, a->bytes, v4 ? 4 : 16);
	*ret_family = v4 ? XLB_FAMILY_V4 : XLB_FAMILY_V6;
}

static int map_err(struct xlb_err *err, enum umap m, const char *what, int ret)
{
	return xlb_err_set(err, ret, "dataplane: %s %s: %s", what, userspace_maps[m].name,
			   strerror(-ret));
}

int userspace_config_put(struct xlb_backend *be, const struct xlb_settings *set,
			 struct xlb_err *err)
{
	struct userspace *u = be->priv;
	struct xlb_config cfg = { 0 };
	__u32 zero = 0;
	__u8 fam;
	int ret;

	memcpy(cfg.gw_mac, set->gw_mac, sizeof(cfg.gw_mac));
	if (set->src4.family == AF_INET) {
		memcpy(&cfg.src4, set->src4.bytes, sizeof(cfg.src4));
		cfg.src4_plen = set->src4_plen;
	}
	if (set->src6.family == AF_INET6) {
		dp_addr(&set->src6, &cfg.src6, &fam);
		cfg.src6_plen = set->src6_plen;
	}
	cfg.gue_port = set->gue_port;
	cfg.max_new_flows_per_sec = set->max_new_flows_per_sec;
	if (set->frag_policy)
		cfg.flags |= XLB_CFG_F_FRAG_DROP;
	ret = xbpf_map__update(u->map[UM_CONFIG], &zero, &cfg, XBPF_ANY);
	return ret ? map_err(err, UM_CONFIG, "update", ret) : 0;
}

/* QUIC server ids are not pushed here yet (the kernel backend's kernel_real_put does). */
int userspace_real_put(struct xlb_backend *be, uint32_t id, const struct xlb_real_cfg *real,
		       struct xlb_err *err)
{
	struct userspace *u = be->priv;
	struct xlb_real r = { 0 };
	int ret;

	if (id == 0 || id >= XLB_MAX_REALS)
		return xlb_err_set(err, -ERANGE, "real id %u out of range 1..%u", id,
				   XLB_MAX_REALS - 1);
	if (real) {
		dp_addr(&real->addr, &r.addr, &r.family);
		if (real->state == XLB_REAL_DRAINING)
			r.flags |= XLB_REAL_F_DRAIN;
	}
	ret = xbpf_map__update(u->map[UM_REALS], &id, &r, XBPF_ANY);
	return ret ? map_err(err, UM_REALS, "update", ret) : 0;
}

static void vip_key(const struct xlb_ip *addr, uint16_t port, uint8_t proto,
		    struct xlb_vip_key *key)
{
	memset(key, 0, sizeof(*key));
	dp_addr(addr, &key->addr, &key->family);
	key->port = htons(port);
	key->proto = proto;
}

/* Fill one half of a VIP's ring, after the grace of its last retirement. */
static int ring_fill(struct userspace *u, uint32_t vip_id, unsigned int half, const uint32_t *ring,
		     struct xlb_err *err)
{
	uint32_t base = (vip_id * XLB_RING_HALVES + half) * XLB_RING_SIZE;
	uint64_t since = userspace_now_ns() - u->retired_ns[vip_id];

	if (u->retired_ns[vip_id] && since < XLB_US_RING_GRACE_NS) {
		struct timespec ts = { 0, (long)(XLB_US_RING_GRACE_NS - since) };

		nanosleep(&ts, NULL);
	}
	for (uint32_t pos = 0; pos < XLB_RING_SIZE; pos++) {
		uint32_t idx = base + pos;
		int ret = xbpf_map__update(u->map[UM_RINGS], &idx, &ring[pos], XBPF_ANY);

		if (ret)
			return map_err(err, UM_RINGS, "update", ret);
	}
	return 0;
}

/*
 * The VIP address filter (xlb_shared.h) from the VIP addresses in the map,
 * plus `extra` about to be one: bits of addresses that stay are set before
 * and after, so no reader sees a VIP address as "certainly not a VIP".
 */
static int vip_filter_put(struct xlb_backend *be, const struct xlb_ip *extra, struct xlb_err *err)
{
	static struct xlb_dp_vip vips[XLB_MAX_VIPS + 1];
	struct userspace *u = be->priv;
	struct xlb_vip_filter f = { .enabled = 1 };
	int n = userspace_vip_list(be, vips, XLB_MAX_VIPS), ret;
	__u32 zero = 0;

	if (n < 0)
		return map_err(err, UM_VIPS, "list", n);
	if (n > XLB_MAX_VIPS)
		n = XLB_MAX_VIPS;
	if (extra)
		vips[n++].addr = *extra;
	for (int i = 0; i < n; i++) {
		union xlb_addr a;
		__u32 bit;
		__u8 fam;

		dp_addr(&vips[i].addr, &a, &fam);
		bit = xlb_vip_filter_bit(&a);
		f.bits[bit / 64] |= 1ull << (bit % 64);
	}
	ret = xbpf_map__update(u->map[UM_VIP_FILTER], &zero, &f, XBPF_ANY);
	return ret ? map_err(err, UM_VIP_FILTER, "update", ret) : 0;
}

int userspace_vip_put(struct xlb_backend *be, const struct xlb_vip_cfg *vip, const uint32_t *ring,
		      struct xlb_err *err)
{
	struct userspace *u = be->priv;
	struct xlb_vip_meta meta = { .vip_num = vip->id, .flags = vip->flags,
				     .encap = (__u8)vip->encap };
	struct xlb_vip_meta old;
	struct xlb_addr_key akey = { 0 };
	struct xlb_vip_key key;
	bool same;
	int ret;

	if (vip->id >= XLB_MAX_VIPS)
		return xlb_err_set(err, -ERANGE, "VIP id %u out of range 0..%u", vip->id,
				   XLB_MAX_VIPS - 1);
	vip_key(&vip->addr, vip->port, vip->proto, &key);
	/* The same VIP already in the map: keep its half, or flip it for a new ring. */
	same = !xbpf_map__lookup(u->map[UM_VIPS], &key, &old) && old.vip_num == vip->id;
	meta.ring_half = same ? old.ring_half : 0;
	if (ring) {
		meta.ring_half = same ? !old.ring_half : 0;
		ret = ring_fill(u, vip->id, meta.ring_half, ring, err);
		if (ret)
			return ret;
	}
	ret = xbpf_map__update(u->map[UM_VIPS], &key, &meta, XBPF_ANY);
	if (ret)
		return map_err(err, UM_VIPS, "update", ret);
	if (ring && same)
		u->retired_ns[vip->id] = userspace_now_ns();
	dp_addr(&vip->addr, &akey.addr, &akey.family);
	ret = xbpf_map__update(u->map[UM_VIP_ADDRS], &akey, &meta.vip_num, XBPF_ANY);
	if (ret)
		return map_err(err, UM_VIP_ADDRS, "update", ret);
	return vip_filter_put(be, &vip->addr, err);
}

int userspace_vip_list(struct xlb_backend *be, struct xlb_dp_vip *ret, size_t max)
{
	struct userspace *u = be->priv;
	struct xlb_vip_key key, next;
	struct xlb_vip_meta meta;
	size_t n = 0;
	int r;

	for (r = xbpf_map__get_next_key(u->map[UM_VIPS], NULL, &next); !r;
	     r = xbpf_map__get_next_key(u->map[UM_VIPS], &key, &next)) {
		key = next;
		if (xbpf_map__lookup(u->map[UM_VIPS], &key, &meta))
			continue;
		if (n < max) {
			struct xlb_dp_vip *v = &ret[n];

			memset(v, 0, sizeof(*v));
			v->addr.family = key.family == XLB_FAMILY_V4 ? AF_INET : AF_INET6;
			memcpy(v->addr.bytes, key.addr.bytes, key.family == XLB_FAMILY_V4 ? 4 : 16);
			v->port = ntohs(key.port);
			v->proto = key.proto;
			v->id = meta.vip_num;
			v->flags = meta.flags;
			v->encap = (enum xlb_encap)meta.encap;
			v->ring_half = meta.ring_half & 1;
		}
		n++;
	}
	return r == -ENOENT ? (int)n : r;
}

int userspace_ring_get(struct xlb_backend *be, uint32_t vip_id, unsigned int half,
		       uint32_t *ret_ring)
{
	struct userspace *u = be->priv;
	uint32_t base = (vip_id * XLB_RING_HALVES + half) * XLB_RING_SIZE;

	for (uint32_t pos = 0; pos < XLB_RING_SIZE; pos++) {
		uint32_t idx = base + pos;
		int ret = xbpf_map__lookup(u->map[UM_RINGS], &idx, &ret_ring[pos]);

		if (ret)
			return ret;
	}
	return 0;
}

int userspace_real_get(struct xlb_backend *be, uint32_t id, struct xlb_ip *ret_addr)
{
	struct userspace *u = be->priv;
	struct xlb_real r;
	int ret = xbpf_map__lookup(u->map[UM_REALS], &id, &r);

	if (ret)
		return ret;
	if (r.family != XLB_FAMILY_V4 && r.family != XLB_FAMILY_V6)
		return -ENOENT;
	memset(ret_addr, 0, sizeof(*ret_addr));
	ret_addr->family = r.family == XLB_FAMILY_V4 ? AF_INET : AF_INET6;
	memcpy(ret_addr->bytes, r.addr.bytes, r.family == XLB_FAMILY_V4 ? 4 : 16);
	return 0;
}

/* Is addr still the address of a VIP in the map? */
static bool addr_in_use(struct xlb_backend *be, const struct xlb_ip *addr)
{
	struct xlb_dp_vip vips[XLB_MAX_VIPS];
	int n = userspace_vip_list(be, vips, XLB_MAX_VIPS);

	for (int i = 0; i < n && i < XLB_MAX_VIPS; i++)
		if (xlb_addr_eq(&vips[i].addr, addr))
			return true;
	return false;
}

int userspace_vip_del(struct xlb_backend *be, const struct xlb_ip *addr, uint16_t port,
		      uint8_t proto, uint32_t id, struct xlb_err *err)
{
	struct userspace *u = be->priv;
	struct xlb_addr_key akey = { 0 };
	struct xlb_vip_key key;
	int ret;

	vip_key(addr, port, proto, &key);
	ret = xbpf_map__delete(u->map[UM_VIPS], &key);
	if (ret && ret != -ENOENT)
		return map_err(err, UM_VIPS, "delete from", ret);
	if (id < XLB_MAX_VIPS)
		u->retired_ns[id] = userspace_now_ns();
	/* The address leaves xlb_vip_addrs with its last VIP. */
	if (addr_in_use(be, addr))
		return 0;
	dp_addr(addr, &akey.addr, &akey.family);
	ret = xbpf_map__delete(u->map[UM_VIP_ADDRS], &akey);
	if (ret && ret != -ENOENT)
		return map_err(err, UM_VIP_ADDRS, "delete from", ret);
	return vip_filter_put(be, NULL, err);
}
