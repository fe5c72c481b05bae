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
 *
 * Established-flow fast path.  A VIP whose packets need only the
 * connection table (no flag of XLB_VIP_F_FAST_BLOCKERS, no affinity) gets
 * an epoch, kept while its id, flags, encapsulation and affinity stay, new
 * (from next_epoch, above every epoch the maps hold) when they change;
 * xlb_vip_fast[id] goes to epoch 0 before the meta changes and to the new
 * epoch once it is in (xlb_shared.h).  An entry stamped with an older
 * epoch takes the VIP lookup again, which sees the new settings.
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
	if (km_update(k, KM_CONFIG, &zero, &cfg, BPF_ANY))
		return kernel_map_err(err, "update xlb_config", errno);
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

/* May the VIP's established flows skip the VIP lookup (xlb_vip_epoch() in dataplane/conn.h)? */
static bool vip_fast_eligible(const struct xlb_vip_meta *m)
{
	return !(m->flags & XLB_VIP_F_FAST_BLOCKERS) && !m->affinity_s && m->vip_num <= 0xffff;
}

/* xlb_vip_fast[id] on every CPU: what the fast path knows of the VIP (epoch 0: nothing). */
static int vip_fast_put(struct kernel *k, uint32_t id, uint32_t epoch, __u8 encap, struct xlb_err *err)
{
	struct xlb_vip_fast vals[k->ncpus > 0 ? k->ncpus : 1];

	for (int c = 0; c < k->ncpus; c++)
		vals[c] = (struct xlb_vip_fast){ .epoch = epoch, .encap = encap };
	if (km_update(k, KM_VIP_FAST, &id, vals, BPF_ANY))
		return kernel_map_err(err, "update xlb_vip_fast", errno);
	k->vip_fast[id] = epoch != 0;
	return 0;
}

/* The epoch xlb_vip_fast holds for a VIP id (CPU 0's copy; 0 when it cannot be read). */
static uint32_t vip_fast_epoch(struct kernel *k, uint32_t id)
{
	struct xlb_vip_fast vals[k->ncpus > 0 ? k->ncpus : 1];

	if (k->ncpus <= 0 || km_lookup(k, KM_VIP_FAST, &id, vals))
		return 0;
	return vals[0].epoch;
}

static int vip_filter_put(struct kernel *k, struct xlb_err *err);

/* A settings epoch never handed out before; 0 (no fast path) once all 2^32 - 1 are used. */
static uint32_t new_epoch(struct kernel *k)
{
	return k->next_epoch ? k->next_epoch++ : 0;
}

int kernel_maps_init(struct kernel *k, struct xlb_err *err)
{
	struct xlb_dp_vip *vips;
	int n, adopted = 0;

	k->keys = malloc(k->ring_size * sizeof(*k->keys));
	k->ring_half = calloc(k->max_vips, sizeof(*k->ring_half));
	k->vip_present = calloc(k->max_vips, sizeof(*k->vip_present));
	k->vip_fast = calloc(k->max_vips, sizeof(*k->vip_fast));
	k->retired_ns = calloc(k->max_vips, sizeof(*k->retired_ns));
	k->vip_addr = calloc(k->max_vips, sizeof(*k->vip_addr));
	k->server_id = calloc(k->max_reals, sizeof(*k->server_id));
	vips = calloc(k->max_vips, sizeof(*vips));
	if (!k->keys || !k->ring_half || !k->vip_present || !k->vip_fast || !k->retired_ns ||
	    !k->vip_addr || !k->server_id || !vips) {
		free(vips);
		return xlb_err_set(err, -ENOMEM, "out of memory");
	}
	/*
	 * What an adopted dataplane holds already counts for the VIP filter,
	 * and its epochs are never handed out again: neither those its metas
	 * hold nor any handed out before (entries may carry them), which the
	 * filter keeps (xlb_shared.h).
	 */
	{
		struct xlb_vip_filter f;
		__u32 zero = 0;

		k->next_epoch = km_lookup(k, KM_VIP_FILTER, &zero, &f) ? 1 : f.epoch_hwm + 1;
	}
	n = kernel_vip_list(&(struct xlb_backend){ .priv = k }, vips, k->max_vips);
	for (int i = 0; i < n && i < (int)k->max_vips; i++) {
		if (k->next_epoch && vips[i].epoch >= k->next_epoch)
			k->next_epoch = vips[i].epoch + 1; /* 0 after the last: exhausted */
		if (vips[i].id >= k->max_vips)
			continue;
		k->vip_present[vips[i].id] = true;
		k->vip_fast[vips[i].id] = vips[i].epoch != 0;
		/* a daemon stopped between a VIP's meta and xlb_vip_fast: finish the put */
		if (vips[i].epoch && vip_fast_epoch(k, vips[i].id) != vips[i].epoch) {
			int ret = vip_fast_put(k, vips[i].id, vips[i].epoch, (__u8)vips[i].encap, err);

			if (ret) {
				free(vips);
				return ret;
			}
		}
		k->vip_addr[vips[i].id] = vips[i].addr;
		k->ring_half[vips[i].id] = vips[i].ring_half;
	}
	/*
	 * Metas without an epoch (carried over from a build before the fast
	 * path: the value grew, zero-extended) get one, as a put would give,
	 * and their addresses their fast bits.
	 */
	for (int i = 0; i < n && i < (int)k->max_vips; i++) {
		struct xlb_vip_key key;
		struct xlb_vip_meta meta;
		int ret;

		if (vips[i].epoch || vips[i].id >= k->max_vips)
			continue;
		vip_key_of(&vips[i].addr, vips[i].port, vips[i].proto, &key);
		if (km_lookup(k, KM_VIPS, &key, &meta) || !vip_fast_eligible(&meta))
			continue;
		meta.epoch = new_epoch(k);
		if (!meta.epoch)
			continue;
		if (km_update(k, KM_VIPS, &key, &meta, BPF_EXIST)) {
			free(vips);
			return kernel_map_err(err, "update xlb_vips", errno);
		}
		ret = vip_fast_put(k, meta.vip_num, meta.epoch, meta.encap, err);
		if (ret) {
			free(vips);
			return ret;
		}
		adopted++;
	}
	free(vips);
	if (adopted)
		return vip_filter_put(k, err);
	return n < 0 ? xlb_err_set(err, n, "cannot list the dataplane's VIPs") : 0;
}

void kernel_maps_free(struct kernel *k)
{
	free(k->keys);
	free(k->ring_half);
	free(k->vip_present);
	free(k->vip_fast);
	free(k->retired_ns);
	free(k->vip_addr);
	free(k->server_id);
}

/*
 * The VIP address filter from the VIP addresses the dataplane holds (as
 * this daemon wrote them, k->vip_addr: no map walk, so a put stays cheap at
 * thousands of VIPs).  Bits of addresses that stay are set in the old value
 * and the new one alike, so a reader never sees them clear while the value
 * is rewritten in place.
 */
static int vip_filter_put(struct kernel *k, struct xlb_err *err)
{
	struct xlb_vip_filter f = { .enabled = 1, .epoch_hwm = k->next_epoch - 1 };
	union xlb_addr a;
	__u32 zero = 0, bit;
	__u8 fam;

	for (uint32_t id = 0; id < k->max_vips; id++) {
		if (!k->vip_present[id])
			continue;
		kernel_to_dp_addr(&k->vip_addr[id], &a, &fam);
		bit = xlb_vip_filter_bit(&a);
		f.bits[bit / 64] |= 1ull << (bit % 64);
		if (k->vip_fast[id])
			f.fast_bits[bit / 64] |= 1ull << (bit % 64);
	}
	if (km_update(k, KM_VIP_FILTER, &zero, &f, BPF_ANY))
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

	if (id == 0 || id >= be->max_reals)
		return xlb_err_set(err, -ERANGE, "real id %u out of range", id);
	old = k->server_id[id];
	if (old && old != sid && !km_lookup(k, KM_SERVER_IDS, &old, &cur) &&
	    cur == id && km_delete(k, KM_SERVER_IDS, &old) && errno != ENOENT)
		return kernel_map_err(err, "delete from xlb_server_ids", errno);
	k->server_id[id] = 0;
	if (real) {
		kernel_to_dp_addr(&real->addr, &r.addr, &r.family);
		if (real->state == XLB_REAL_DRAINING)
			r.flags |= XLB_REAL_F_DRAIN;
	}
	if (km_update(k, KM_REALS, &id, &r, BPF_ANY))
		return kernel_map_err(err, "update xlb_reals", errno);
	if (sid) {
		if (km_update(k, KM_SERVER_IDS, &sid, &id, BPF_ANY))
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

	while (!km_next_key(k, KM_ALLOW, prev, &next)) {
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
			if (km_delete(k, KM_ALLOW, &key) && errno != ENOENT)
				return kernel_map_err(err, "delete from xlb_allow", errno);
			prev = NULL; /* the walk restarts: the trie changed under it */
		}
	}
	for (size_t i = 0; i < vip->allow_cnt; i++) {
		memset(&key, 0, sizeof(key));
		key.prefixlen = 32u + vip->allow[i].plen;
		key.vip_num = htonl(vip->id);
		kernel_to_dp_addr(&vip->allow[i].addr, &key.addr, &fam);
		if (km_update(k, KM_ALLOW, &key, &one, BPF_ANY))
			return kernel_map_err(err, "update xlb_allow", errno);
	}
	return 0;
}

static int write_half(struct kernel *k, uint32_t vip_id, unsigned int half, const uint32_t *ring,
		      struct xlb_err *err)
{
	uint32_t size = k->ring_size, base = (vip_id * XLB_RING_HALVES + half) * size;
	uint64_t since = kernel_now_ns() - k->retired_ns[vip_id];
	__u32 count = size;

	if (k->retired_ns[vip_id] && since < XLB_RING_GRACE_NS) {
		uint64_t wait = XLB_RING_GRACE_NS - since;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)wait };

		nanosleep(&ts, NULL);
	}
	for (uint32_t i = 0; i < size; i++)
		k->keys[i] = base + i;
	if (!km_update_batch(k, KM_RINGS, k->keys, ring, &count))
		return 0;
	if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
		return kernel_map_err(err, "batch update xlb_rings", errno);
	for (uint32_t i = 0; i < size; i++)
		if (km_update(k, KM_RINGS, &k->keys[i], &ring[i], BPF_ANY))
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

	if (vip->id >= be->max_vips)
		return xlb_err_set(err, -ERANGE, "VIP id %u out of range", vip->id);
	vip_key_of(&vip->addr, vip->port, vip->proto, &key);
	exists = !km_lookup(k, KM_VIPS, &key, &old);
	meta.vip_num = vip->id;
	meta.flags = vip->flags | (vip->allow_cnt ? XLB_VIP_F_ALLOWLIST : 0);
	meta.encap = (__u8)vip->encap;
	meta.affinity_s = vip->affinity_s;
	meta.ring_half = exists && old.vip_num == vip->id ? old.ring_half : 0;
	if (vip_fast_eligible(&meta)) {
		bool same = exists && old.epoch && old.vip_num == meta.vip_num && old.flags == meta.flags &&
			    old.encap == meta.encap && old.affinity_s == meta.affinity_s;

		meta.epoch = same ? old.epoch : new_epoch(k);
	}
	/* Established flows stop skipping the VIP lookup before its settings change. */
	if (exists && old.epoch && old.epoch != meta.epoch && old.vip_num < be->max_vips) {
		ret = vip_fast_put(k, old.vip_num, 0, 0, err);
		if (ret)
			return ret;
	}
	/* The list next: a VIP that becomes allow-listed never passes an unlisted source. */
	ret = allow_put(k, vip, err);
	if (ret)
		return ret;
	if (ring) {
		unsigned int half = exists && old.vip_num == vip->id ? !old.ring_half : 0;

		ret = write_half(k, vip->id, half, ring, err);
		if (ret)
			return ret;
		meta.ring_half = (__u8)half;
	}
	if (km_update(k, KM_VIPS, &key, &meta, BPF_ANY))
		return kernel_map_err(err, "update xlb_vips", errno);
	if (!exists || meta.epoch != old.epoch || k->vip_fast[vip->id] != (meta.epoch != 0)) {
		ret = vip_fast_put(k, vip->id, meta.epoch, meta.encap, err);
		if (ret)
			return ret;
	}
	if (ring && exists)
		k->retired_ns[vip->id] = kernel_now_ns();
	/* The key moved to another id: the old id no longer holds it. */
	if (exists && old.vip_num != vip->id && old.vip_num < be->max_vips)
		k->vip_present[old.vip_num] = false;
	k->ring_half[vip->id] = meta.ring_half;
	k->vip_present[vip->id] = true;
	k->vip_addr[vip->id] = vip->addr;
	kernel_to_dp_addr(&vip->addr, &akey.addr, &akey.family);
	if (km_update(k, KM_VIP_ADDRS, &akey, &meta.vip_num, BPF_ANY))
		return kernel_map_err(err, "update xlb_vip_addrs", errno);
	return vip_filter_put(k, err);
}

int kernel_vip_list(struct xlb_backend *be, struct xlb_dp_vip *ret, size_t max)
{
	struct kernel *k = be->priv;
	struct xlb_vip_key key, next;
	struct xlb_vip_meta meta;
	size_t n = 0;
	void *prev = NULL;

	while (!km_next_key(k, KM_VIPS, prev, &next)) {
		key = next;
		prev = &key;
		if (km_lookup(k, KM_VIPS, &key, &meta))
			continue;
		if (n < max) {
			kernel_from_dp_addr(&key.addr, key.family, &ret[n].addr);
			ret[n].port = ntohs(key.port);
			ret[n].proto = key.proto;
			ret[n].id = meta.vip_num;
			ret[n].flags = meta.flags;
			ret[n].encap = (enum xlb_encap)meta.encap;
			ret[n].ring_half = meta.ring_half & 1;
			ret[n].epoch = meta.epoch;
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

		if (km_lookup(k, KM_RINGS, &key, &ret_ring[i]))
			return -errno;
	}
	return 0;
}

int kernel_real_get(struct xlb_backend *be, uint32_t id, struct xlb_ip *ret_addr)
{
	struct kernel *k = be->priv;
	struct xlb_real r;

	if (km_lookup(k, KM_REALS, &id, &r))
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
	bool addr_used = false;

	vip_key_of(addr, port, proto, &key);
	/* Its established flows take the VIP lookup (and pass) from now on. */
	if (id < be->max_vips) {
		int ret = vip_fast_put(k, id, 0, 0, err);

		if (ret)
			return ret;
	}
	if (km_delete(k, KM_VIPS, &key) && errno != ENOENT)
		return kernel_map_err(err, "delete from xlb_vips", errno);
	if (id < be->max_vips) {
		/* Its allow-list goes with it (a VIP taking the id starts clean). */
		static struct xlb_vip_cfg none;
		int ret;

		none.id = id;
		ret = allow_put(k, &none, err);
		if (ret)
			return ret;
	}
	if (id < be->max_vips) {
		k->vip_present[id] = false;
		k->retired_ns[id] = kernel_now_ns();
	}
	/* The address leaves xlb_vip_addrs with its last VIP. */
	for (uint32_t i = 0; i < be->max_vips; i++)
		if (k->vip_present[i] && xlb_addr_eq(&k->vip_addr[i], addr))
			addr_used = true;
	if (!addr_used) {
		kernel_to_dp_addr(addr, &akey.addr, &akey.family);
		if (km_delete(k, KM_VIP_ADDRS, &akey) && errno != ENOENT)
			return kernel_map_err(err, "delete from xlb_vip_addrs", errno);
	}
	return vip_filter_put(k, err);
}
