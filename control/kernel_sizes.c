// SPDX-License-Identifier: MIT
/*
 * The kernel backend, the maps' names and the dataplane's sizes (xlb_shared.h,
 * "Sizes").
 *
 * max-vips, max-reals, ring-size and lru-size are load-time settings: the
 * balancer is loaded with its maps' max_entries and its rodata bounds
 * (xlb_max_vips, xlb_max_reals, xlb_ring_size) set from them.  Pinned maps
 * keep the size they were created with, so a start whose settings differ
 * from the pinned dataplane is refused before anything is touched, with the
 * two sets of sizes and the ways out in the message: start with the pinned
 * sizes (the running dataplane is kept), or --resize-dataplane (it is
 * detached and unpinned, then loaded at the new sizes and filled from the
 * store; the connection table starts empty).  Never a partial state: libbpf
 * would otherwise re-use the maps that match and create the others.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"

#include <bpf/btf.h>

const char *const kernel_map_names[KM_CNT] = {
	[KM_VIPS] = "xlb_vips",
	[KM_VIP_ADDRS] = "xlb_vip_addrs",
	[KM_REALS] = "xlb_reals",
	[KM_RINGS] = "xlb_rings",
	[KM_CONNS] = "xlb_conns",
	[KM_CONFIG] = "xlb_config",
	[KM_VIP_STATS] = "xlb_vip_stats",
	[KM_REAL_STATS] = "xlb_real_stats",
	[KM_REASON_STATS] = "xlb_reason_stats",
	[KM_EVENT_STATS] = "xlb_event_stats",
	[KM_IFACES] = "xlb_ifaces",
	[KM_VIP_FILTER] = "xlb_vip_filter",
	[KM_SERVER_IDS] = "xlb_server_ids",
	[KM_ALLOW] = "xlb_allow",
	[KM_AFFINITY] = "xlb_affinity",
	[KM_FRAGS] = "xlb_frags",
	[KM_VIP_FAST] = "xlb_vip_fast",
};

/* Which setting sizes a map. */
enum size_kind { SZ_VIPS, SZ_REALS, SZ_RINGS, SZ_LRU };

static const struct {
	enum kmap map;
	enum size_kind kind;
} sized_maps[] = {
	{ KM_VIPS, SZ_VIPS },	    { KM_VIP_ADDRS, SZ_VIPS },	 { KM_VIP_STATS, SZ_VIPS },
	{ KM_VIP_FAST, SZ_VIPS },
	{ KM_REALS, SZ_REALS },	    { KM_REAL_STATS, SZ_REALS }, { KM_RINGS, SZ_RINGS },
	{ KM_CONNS, SZ_LRU },
};

#define NR_SIZED (sizeof(sized_maps) / sizeof(sized_maps[0]))

/* The max_entries the settings give a map. */
static uint32_t wanted(const struct xlb_settings *set, enum size_kind kind)
{
	switch (kind) {
	case SZ_VIPS:
		return set->max_vips;
	case SZ_REALS:
		return set->max_reals;
	case SZ_RINGS:
		return set->max_vips * XLB_RING_HALVES * set->ring_size;
	case SZ_LRU:
		return set->lru_size ? set->lru_size : XLB_LRU_SIZE;
	}
	return 0;
}

/* Set a 32-bit global variable in the object's .rodata before load. */
static int rodata_set(struct bpf_object *obj, const char *var, uint32_t value)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	const void *init;
	size_t size = 0;
	int id, ret = -ENOENT;

	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);

		if (bpf_map__is_internal(map) && strlen(n) > 7 && !strcmp(n + strlen(n) - 7, ".rodata"))
			break;
	}
	id = btf && map ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	init = id >= 0 ? bpf_map__initial_value(map, &size) : NULL;
	if (!init)
		return -ENOENT;
	sec = btf__type_by_id(btf, (__u32)id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, vs->type)->name_off);
		uint8_t *data;

		if (!name || strcmp(name, var))
			continue;
		if (vs->size != sizeof(value) || vs->offset + sizeof(value) > size)
			return -EINVAL;
		data = malloc(size);
		if (!data)
			return -ENOMEM;
		memcpy(data, init, size);
		memcpy(data + vs->offset, &value, sizeof(value));
		ret = bpf_map__set_initial_value(map, data, size);
		free(data);
		return ret;
	}
	return ret;
}

int kernel_sizes_apply(struct kernel *k, struct xlb_err *err)
{
	const struct xlb_settings *set = k->opts.settings;
	static const char *const vars[] = { "xlb_max_vips", "xlb_max_reals", "xlb_ring_size" };
	const uint32_t vals[] = { set->max_vips, set->max_reals, set->ring_size };
	int ret;

	for (size_t i = 0; i < NR_SIZED; i++) {
		const char *name = kernel_map_names[sized_maps[i].map];
		struct bpf_map *map = bpf_object__find_map_by_name(k->obj, name);

		ret = map ? bpf_map__set_max_entries(map, wanted(set, sized_maps[i].kind)) : -ENOENT;
		if (ret)
			return xlb_err_set(err, ret, "%s: cannot size map %s: %s", k->opts.obj_path,
					   name, strerror(-ret));
	}
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		ret = rodata_set(k->obj, vars[i], vals[i]);
		if (ret)
			return xlb_err_set(err, ret, "%s: no 32-bit rodata variable %s (an older "
					   "balancer object?)", k->opts.obj_path, vars[i]);
	}
	return 0;
}

/* max_entries of a map by fd, 0 if unknown. */
static uint32_t fd_max_entries(int fd)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

/*
 * Compare the pinned maps with the settings.  0: every pinned map has its
 * wanted size (missing pins are created at load); 1: some differ, described
 * in msg.
 */
static int compare(struct kernel *k, char *msg, size_t len)
{
	const struct xlb_settings *set = k->opts.settings;
	uint32_t have[NR_SIZED] = { 0 };
	bool differ = false;
	char path[PATH_MAX];

	for (size_t i = 0; i < NR_SIZED; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root,
			 kernel_map_names[sized_maps[i].map]);
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			have[i] = fd_max_entries(fd);
			close(fd);
		}
		if (have[i] && have[i] != wanted(set, sized_maps[i].kind))
			differ = true;
	}
	if (!differ)
		return 0;
	/* The pinned sizes as settings (from xlb_vips, xlb_reals, xlb_rings, xlb_conns). */
	snprintf(msg, len,
		 "pinned dataplane has max-vips %u max-reals %u ring-size %u lru-size %u, settings "
		 "ask %u/%u/%u/%u: start with its sizes, or --resize-dataplane",
		 have[0], have[3], have[0] ? have[5] / (XLB_RING_HALVES * have[0]) : 0, have[6],
		 set->max_vips, set->max_reals, set->ring_size, wanted(set, SZ_LRU));
	return 1;
}

int kernel_sizes_check(struct kernel *k, bool *ret_resize, struct xlb_err *err)
{
	char msg[sizeof(err->msg)];

	*ret_resize = false;
	if (!compare(k, msg, sizeof(msg)))
		return 0;
	if (!k->opts.resize) {
		klog(k, LOG_ERR, "the maps under %s/maps were created with other sizes; starting "
		     "with the sizes they have keeps the running dataplane (and its connections); "
		     "--resize-dataplane replaces it: detached, loaded at the new sizes, refilled "
		     "from the store, with an empty connection table (established flows may move)",
		     k->pin_root);
		return xlb_err_set(err, -EEXIST, "%s", msg);
	}
	klog(k, LOG_WARNING, "--resize-dataplane: %s; replacing it", msg);
	*ret_resize = true;
	return 0;
}
