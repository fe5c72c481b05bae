/* SPDX-License-Identifier: MIT */
/*
 * userspace.h - private to the userspace backend (backend_userspace.c and
 * its userspace_*.c parts): xlbd driving xlb-dpdk (dpdk/) through the
 * shared maps in xlb-dpdk's runtime directory.
 *
 * xlb-dpdk is its own process: it opens balancer.bpf.o with every map a
 * file under <run dir>/maps (core/map_shm.c, a userspace bpffs) and runs
 * it on xlb's engines; xlbd attaches to the same files and programs them
 * with the kernel backend's rules (rings double-buffered, a grace period
 * before a retired half is rewritten).  Either process can restart, even
 * after kill -9, and find the maps as they were.
 *
 *   backend_userspace.c  open (wait for the maps, check their layouts, the
 *                        verifier gate, one xlbd per run dir), close, ops
 *   userspace_maps.c     config, reals, VIPs and their rings
 *   userspace_stats.c    counters, stats, ports and lcores, status
 */
#ifndef XLB_USERSPACE_H
#define XLB_USERSPACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "backend.h"
#include "xbpf.h"
#include "xlb_dpdk_shared.h"
#include "xlb_shared.h"

enum umap {
	UM_VIPS,
	UM_VIP_ADDRS,
	UM_REALS,
	UM_RINGS,
	UM_CONNS,
	UM_CONFIG,
	UM_VIP_STATS,
	UM_REAL_STATS,
	UM_REASON_STATS,
	UM_EVENT_STATS,
	UM_VIP_FILTER,
	UM_DPDK_STATUS,
	UM_DPDK_PORTS,
	UM_DPDK_LCORES,
	UM_CNT,
};

/* What a map must be for this xlbd to program it (xlb_shared.h, xlb_dpdk_shared.h). */
struct umap_want {
	const char *name;
	enum xbpf_map_type type;
	uint32_t key_size, value_size;
};

extern const struct umap_want userspace_maps[UM_CNT];

struct userspace {
	struct xlb_backend_opts opts;
	char run_dir[256];
	char maps_dir[300];
	int lock_fd; /* flock on the run dir: one xlbd per dataplane */
	struct xbpf_map *map[UM_CNT];
	int verify_result; /* 0, -EACCES, -ENOTSUP, or 1: not run */
	char verify_msg[240];
	json_t *verify_json;
	uint64_t retired_ns[XLB_MAX_VIPS];
};

#define ulog(u, lvl, ...) ((u)->opts.log ? (u)->opts.log(lvl, __VA_ARGS__) : (void)0)

/* userspace_maps.c */
uint64_t userspace_now_ns(void);
int userspace_config_put(struct xlb_backend *be, const struct xlb_settings *set,
			 struct xlb_err *err);
int userspace_real_put(struct xlb_backend *be, uint32_t id, const struct xlb_real_cfg *real,
		       struct xlb_err *err);
int userspace_vip_put(struct xlb_backend *be, const struct xlb_vip_cfg *vip, const uint32_t *ring,
		      struct xlb_err *err);
int userspace_vip_del(struct xlb_backend *be, const struct xlb_ip *addr, uint16_t port,
		      uint8_t proto, uint32_t id, struct xlb_err *err);
int userspace_vip_list(struct xlb_backend *be, struct xlb_dp_vip *ret, size_t max);
int userspace_ring_get(struct xlb_backend *be, uint32_t vip_id, unsigned int half,
		       uint32_t *ret_ring);
int userspace_real_get(struct xlb_backend *be, uint32_t id, struct xlb_ip *ret_addr);

/* userspace_stats.c */
/* xlb-dpdk's status entry; false when it never ran over these maps. */
bool userspace_dpdk_status(struct userspace *u, struct xlb_dpdk_status *ret);
/* Is the xlb-dpdk that wrote st alive (its pid exists and its heartbeat is fresh)? */
bool userspace_dpdk_alive(const struct xlb_dpdk_status *st);
int userspace_vip_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret);
int userspace_real_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret);
int userspace_stats(struct xlb_backend *be, struct xlb_dp_stats *ret);
int userspace_io_stats(struct xlb_backend *be, struct xlb_dp_io *ret);
json_t *userspace_status(struct xlb_backend *be);

#endif /* XLB_USERSPACE_H */
