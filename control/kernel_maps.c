// SPDX-License-Identifier: MIT
/*
 * The kernel backend, the maps: config, reals, VIPs and their Maglev rings.
 *
 * Rings.  xlb_rings holds two halves per VIP (xlb_shared.h).  A new ring is
 * written to the half the VIP's meta does not point at, with one batched
 * update, then the meta is replaced with ring_half flipped in one hash
 * update: a packet sees the old ring or the new one, never a mix.  A half is
 * rewritten only after XLB_RING_GRACE_NS since the flip that retired it, so
 * a packet still holding the old meta (programs run under RCU, for
 * microseconds) never sees it change.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kernel.h"

uint64_t kernel_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void kernel_to_dp_addr(const struct xlb_ip *a, union xlb_addr *ret, __u8 *ret_family)
{
	memset(ret, 0, sizeof(*ret));
	if (a->family == AF_INET) {
		memcpy(ret->bytes, a->bytes, 4);
		*ret_family = XLB_FAMILY_V4;
	} else {
		memcpy(ret->bytes, a->bytes, 16);
		*ret_family = XLB_FAMILY_V6;
	}
}

static void kernel_from_dp_addr(const union xlb_addr *a, __u8 family, struct xlb_ip *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->family = family == XLB_FAMILY_V4 ? AF_INET : AF_INET6;
	memcpy(ret->bytes, a->bytes, family == XLB_FAMILY_V4 ? 4 : 16);
}

int kernel_map_err(struct xlb_err *err, const char *what, int e)
{
	return xlb_err_set(err, -e, "dataplane: %s: %s", what, strerror(e));
}

int kernel_config_put(struct xlb_backend *be, const struct xlb_settings *set,
			     struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_config cfg = { 0 };
	__u32 zero = 0;
	__u8 fam;

	memcpy(cfg.gw_mac, set->gw_mac, 6);
	if (set->src4.family == AF_INET) {
		memcpy(&cfg.src4, set->src4.bytes, 4);
		cfg.src4_plen = set->src4_plen;
	}
	if (set->src6.family == AF_INET6) {
		kernel_to_dp_addr(&set->src6, &cfg.src6, &fam);
		cfg.src6_plen = set->src6_plen;
	}
	cfg.gue_port = set->gue_port;
	cfg.max_new_flows_per_sec = set->max_new_flows_per_sec;
	if (set->frag_policy)
		cfg.flags |= XLB_CFG_F_FRAG_DROP;
	if (bpf_map_update_elem(k->fd[KM_CONFIG], &zero, &cfg, BPF_ANY))
		return kernel_map_err(err, "update xlb_config", errno);
	return 0;
}

/*
 * The VIP address filter from the VIP addresses the dataplane holds (plus
 * `extra`, about to be one).  Bits of addresses that stay are set in the
 * old value and the new one alike, so a reader never sees them clear while
 * the value is rewritten in place.
 */
static int vip_filter_put(struct kernel *k, const struct xlb_ip *extra, struct xlb_err *err)
{
	static struct xlb_dp_vip vips[XLB_MAX_VIPS];
	struct xlb_vip_filter f = { .enabled = 1 };
	union xlb_addr a;
	__u32 zero = 0, bit;
	__u8 fam;
	int n;

	n = kernel_vip_list(&(struct xlb_backend){ .priv = k }, vips, XLB_MAX_VIPS);
	if (n < 0)
		return xlb_err_set(err, n, "cannot list the dataplane's VIPs");
	for (int i = 0; i <= n && i <= XLB_MAX_VIPS; i++) {
		const struct xlb_ip *ip = i < n && i < XLB_MAX_VIPS ? &vips[i].addr : extra;

		if (!ip)
			continue;
		kernel_to_dp_addr(ip, &a, &fam);
		bit = xlb_vip_filter_bit(&a);
		f.bits[bit / 64] |= 1ull << (bit % 64);
	}
	if (bpf_map_update_elem(k->fd[KM_VIP_FILTER], &zero, &f, BPF_ANY))
		return kernel_map_err(err, "update xlb_vip_filter", errno);
	return 0;
}

/*
 * A real slot, then its QUIC server id: a new id is linked once the slot
 * holds the real; an id the slot no longer has is unlinked first (only if
 * it still names this slot: another real may have taken it meanwhile).
 */
int kernel_real_put(struct xlb_backend *be, uint32_t id, const struct xlb_real_cfg *real,
			   struct xlb_err *err)
{
	struct kernel *k = be->priv;
	uint32_t sid = real ? real->server_id : 0, old, cur;
	struct xlb_real r = { 0 };

	if (id == 0 || id >= XLB_MAX_REALS)
		return xlb_err_set(err, -ERANGE, "real id %u out of range", id);
	old = k->server_id[id];
	if (old && old != sid && !bpf_map_lookup_elem(k->fd[KM_SERVER_IDS], &old, &cur) &&
	    cur == id && bpf_map_delete_elem(k->fd[KM_SERVER_IDS], &old) && errno != ENOENT)
		return kernel_map_err(err, "delete from xlb_server_ids", errno);
	k->server_id[id] = 0;
	if (real) {
		kernel_to_dp_addr(&real->addr, &r.addr, &r.family);
		if (real->state == XLB_REAL_DRAINING)
			r.flags |= XLB_REAL_F_DRAIN;
	}
	if (bpf_map_update_elem(k->fd[KM_REALS], &id, &r, BPF_ANY))
		return kernel_map_err(err, "update xlb_reals", errno);
	if (sid) {
		if (bpf_map_update_elem(k->fd[KM_SERVER_IDS], &sid, &id, BPF_ANY))
			return kernel_map_err(err, "update xlb_server_ids", errno);
		k->server_id[id] = sid;
	}
	return 0;
}

/*
 * A VIP's allow-list in xlb_allow: its entries (vip_num, prefix) are made
 * exactly the list's; entries of other VIPs are left alone.
 */
static int allow_put(struct kernel *k, const struct xlb_vip_cfg *vip, struct xlb_err *err)
{
	struct xlb_allow_key key, next, *prev = NULL;
	__u32 one = 1;
	__u8 fam;

	while (!bpf_map_get_next_key(k->fd[KM_ALLOW], prev, &next)) {
		bool keep = false;

		key = next;
		prev = &key;
		if (ntohl(key.vip_num) != vip->id)
			continue;
		for (size_t i = 0; i < vip->allow_cnt && !keep; i++) {
			union xlb_addr a;

			kernel_to_dp_addr(&vip->allow[i].addr, &a, &fam);
			keep = key.prefixlen == 32u + vip->allow[i].plen && !memcmp(&a, &key.addr, sizeof(a));
		}
		if (!keep) {
			if (bpf_map_delete_elem(k->fd[KM_ALLOW], &key) && errno != ENOENT)
				return kernel_map_err(err, "delete from xlb_allow", errno);
			prev = NULL; /* the walk restarts: the trie changed under it */
		}
	}
	for (size_t i = 0; i < vip->allow_cnt; i++) {
		memset(&key, 0, sizeof(key));
		key.prefixlen = 32u + vip->allow[i].plen;
		key.vip_num = htonl(vip->id);
		kernel_to_dp_addr(&vip->allow[i].addr, &key.addr, &fam);
		if (bpf_map_update_elem(k->fd[KM_ALLOW], &key, &one, BPF_ANY))
			return kernel_map_err(err, "update xlb_allow", errno);
	}
	return 0;
}

static void vip_key_of(const struct xlb_ip *addr, uint16_t port, uint8_t proto,
		       struct xlb_vip_key *key)
{
	memset(key, 0, sizeof(*key));
	kernel_to_dp_addr(addr, &key->addr, &key->family);
	key->port = htons(port);
	key->proto = proto;
}

static int write_half(struct kernel *k, uint32_t vip_id, unsigned int half, const uint32_t *ring,
		      struct xlb_err *err)
{
	uint32_t base = (vip_id * XLB_RING_HALVES + half) * XLB_RING_SIZE;
	uint64_t since = kernel_now_ns() - k->retired_ns[vip_id];
	__u32 count = XLB_RING_SIZE;
	LIBBPF_OPTS(bpf_map_batch_opts, bopts);

	if (k->retired_ns[vip_id] && since < XLB_RING_GRACE_NS) {
		uint64_t wait = XLB_RING_GRACE_NS - since;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)wait };

		nanosleep(&ts, NULL);
	}
	for (uint32_t i = 0; i < XLB_RING_SIZE; i++)
		k->keys[i] = base + i;
	if (!bpf_map_update_batch(k->fd[KM_RINGS], k->keys, ring, &count, &bopts))
		return 0;
	if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
		return kernel_map_err(err, "batch update xlb_rings", errno);
	for (uint32_t i = 0; i < XLB_RING_SIZE; i++)
		if (bpf_map_update_elem(k->fd[KM_RINGS], &k->keys[i], &ring[i], BPF_ANY))
			return kernel_map_err(err, "update xlb_rings", errno);
	return 0;
}

int kernel_vip_put(struct xlb_backend *be, const struct xlb_vip_cfg *vip,
			  const uint32_t *ring, struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_vip_key key;
	struct xlb_vip_meta meta = { 0 }, old;
	struct xlb_addr_key akey = { 0 };
	bool exists;
	int ret;

	if (vip->id >= XLB_MAX_VIPS)
		return xlb_err_set(err, -ERANGE, "VIP id %u out of range", vip->id);
	vip_key_of(&vip->addr, vip->port, vip->proto, &key);
	exists = !bpf_map_lookup_elem(k->fd[KM_VIPS], &key, &old);
	/* The list first: a VIP that becomes allow-listed never passes an unlisted source. */
	ret = allow_put(k, vip, err);
	if (ret)
		return ret;
	meta.vip_num = vip->id;
	meta.flags = vip->flags | (vip->allow_cnt ? XLB_VIP_F_ALLOWLIST : 0);
	meta.encap = (__u8)vip->encap;
	meta.affinity_s = vip->affinity_s;
	meta.ring_half = exists && old.vip_num == vip->id ? old.ring_half : 0;
	if (ring) {
		unsigned int half = exists && old.vip_num == vip->id ? !old.ring_half : 0;

		ret = write_half(k, vip->id, half, ring, err);
		if (ret)
			return ret;
		meta.ring_half = (__u8)half;
	}
	if (bpf_map_update_elem(k->fd[KM_VIPS], &key, &meta, BPF_ANY))
		return kernel_map_err(err, "update xlb_vips", errno);
	if (ring && exists)
		k->retired_ns[vip->id] = kernel_now_ns();
	k->ring_half[vip->id] = meta.ring_half;
	k->vip_present[vip->id] = true;
	kernel_to_dp_addr(&vip->addr, &akey.addr, &akey.family);
	if (bpf_map_update_elem(k->fd[KM_VIP_ADDRS], &akey, &meta.vip_num, BPF_ANY))
		return kernel_map_err(err, "update xlb_vip_addrs", errno);
	return vip_filter_put(k, &vip->addr, err);
}

int kernel_vip_list(struct xlb_backend *be, struct xlb_dp_vip *ret, size_t max)
{
	struct kernel *k = be->priv;
	struct xlb_vip_key key, next;
	struct xlb_vip_meta meta;
	size_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(k->fd[KM_VIPS], prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(k->fd[KM_VIPS], &key, &meta))
			continue;
		if (n < max) {
			kernel_from_dp_addr(&key.addr, key.family, &ret[n].addr);
			ret[n].port = ntohs(key.port);
			ret[n].proto = key.proto;
			ret[n].id = meta.vip_num;
			ret[n].flags = meta.flags;
			ret[n].encap = (enum xlb_encap)meta.encap;
			ret[n].ring_half = meta.ring_half & 1;
		}
		n++;
	}
	return (int)n;
}

int kernel_ring_get(struct xlb_backend *be, uint32_t vip_id, unsigned int half, uint32_t *ret_ring)
{
	struct kernel *k = be->priv;
	uint32_t base = (vip_id * XLB_RING_HALVES + half) * be->ring_size;

	for (uint32_t i = 0; i < be->ring_size; i++) {
		uint32_t key = base + i;

		if (bpf_map_lookup_elem(k->fd[KM_RINGS], &key, &ret_ring[i]))
			return -errno;
	}
	return 0;
}

int kernel_real_get(struct xlb_backend *be, uint32_t id, struct xlb_ip *ret_addr)
{
	struct kernel *k = be->priv;
	struct xlb_real r;

	if (bpf_map_lookup_elem(k->fd[KM_REALS], &id, &r))
		return -errno;
	if (r.family != XLB_FAMILY_V4 && r.family != XLB_FAMILY_V6)
		return -ENOENT;
	kernel_from_dp_addr(&r.addr, r.family, ret_addr);
	return 0;
}

int kernel_vip_del(struct xlb_backend *be, const struct xlb_ip *addr, uint16_t port,
			  uint8_t proto, uint32_t id, struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_vip_key key;
	struct xlb_addr_key akey = { 0 };
	struct xlb_dp_vip others[XLB_MAX_VIPS];
	bool addr_used = false;
	int n;

	vip_key_of(addr, port, proto, &key);
	if (bpf_map_delete_elem(k->fd[KM_VIPS], &key) && errno != ENOENT)
		return kernel_map_err(err, "delete from xlb_vips", errno);
	if (id < XLB_MAX_VIPS) {
		/* Its allow-list goes with it (a VIP taking the id starts clean). */
		static struct xlb_vip_cfg none;
		int ret;

		none.id = id;
		ret = allow_put(k, &none, err);
		if (ret)
			return ret;
	}
	if (id < XLB_MAX_VIPS) {
		k->vip_present[id] = false;
		k->retired_ns[id] = kernel_now_ns();
	}
	/* The address leaves xlb_vip_addrs with its last VIP. */
	n = kernel_vip_list(be, others, XLB_MAX_VIPS);
	for (int i = 0; i < n && i < XLB_MAX_VIPS; i++)
		if (xlb_addr_eq(&others[i].addr, addr))
			addr_used = true;
	if (!addr_used) {
		kernel_to_dp_addr(addr, &akey.addr, &akey.family);
		if (bpf_map_delete_elem(k->fd[KM_VIP_ADDRS], &akey) && errno != ENOENT)
			return kernel_map_err(err, "delete from xlb_vip_addrs", errno);
	}
	return addr_used ? 0 : vip_filter_put(k, NULL, err);
}
