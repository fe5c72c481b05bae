/* SPDX-License-Identifier: MIT */
/*
 * userspace.h - private to the userspace backend (backend_userspace.c and
 * userspace_stats.c): xlbd driving xlb-dpdk (dpdk/) through the shared
 * maps in xlb-dpdk's runtime directory.
 *
 * xlb-dpdk is its own process: it opens balancer.bpf.o with every map a
 * file under <run dir>/maps (core/map_shm.c, a userspace bpffs) and runs
 * it on xlb's engines; xlbd attaches to the same files.  The maps are
 * programmed and read by the kernel backend's code (kernel_maps.c,
 * kernel_stats.c, kernel_conn.c) through kernel_mapio.c, which takes
 * xlb's shared maps where the kernel backend has bpf(2) fds: one code for
 * both dataplanes, rules and all (rings double-buffered with a grace
 * period, VIP filter, allow-lists, server ids, drain flags).  Either
 * process can restart, even after kill -9, and find the maps as they were.
 *
 *   backend_userspace.c  open (wait for the maps, check their layouts, the
 *                        verifier gate, one xlbd per run dir), close, ops
 *   userspace_stats.c    xlb-dpdk's status, ports and lcores
 */
#ifndef XLB_USERSPACE_H
#define XLB_USERSPACE_H

#include "kernel.h"
#include "xlb_dpdk_shared.h"

enum udmap {
	UD_STATUS,
	UD_PORTS,
	UD_LCORES,
	UD_CNT,
};

struct userspace {
	struct kernel k; /* first: the maps code takes be->priv as its struct kernel */
	char run_dir[256];
	char maps_dir[300];
	struct xbpf_map *dpdk[UD_CNT]; /* what xlb-dpdk publishes beside the program's maps */
	/* The xlb-dpdk (pid, start) whose exception port the healthcheck program was set up on. */
	uint32_t hc_pid;
	uint64_t hc_start_ns;
};

#define ulog(u, lvl, ...) klog(&(u)->k, lvl, __VA_ARGS__)

/* userspace_stats.c */
/* xlb-dpdk's status entry; false when it never ran over these maps. */
bool userspace_dpdk_status(struct userspace *u, struct xlb_dpdk_status *ret);
/* Is the xlb-dpdk that wrote st alive (its pid exists and its heartbeat is fresh)? */
bool userspace_dpdk_alive(const struct xlb_dpdk_status *st);
int userspace_io_stats(struct xlb_backend *be, struct xlb_dp_io *ret);
json_t *userspace_status(struct xlb_backend *be);

#endif /* XLB_USERSPACE_H */
