/* SPDX-License-Identifier: MIT */
/*
 * xlb_dpdk_shared.h - what xlb-dpdk publishes beside the program's maps in
 * its runtime directory (<run dir>/maps/, shared maps: core/map_shm.c), for
 * xlbd's userspace backend and the tests: its status, and per-port and
 * per-lcore counters.  Each entry has one writer (the lcore, or the main
 * thread for ports and status); readers copy them with xbpf_map__lookup().
 */
#ifndef XLB_DPDK_SHARED_H
#define XLB_DPDK_SHARED_H

#include <stdint.h>

/*
 * The default run directory: its own (not under xlbd's /run/xlb, which
 * systemd removes when xlbd stops), kept across restarts of xlb-dpdk.
 */
#define XLB_DPDK_RUN_DIR "/run/xlb-dpdk"
#define XLB_DPDK_STATUS_MAP "xlb_dpdk_status"
#define XLB_DPDK_PORT_MAP "xlb_dpdk_port_stats"
#define XLB_DPDK_LCORE_MAP "xlb_dpdk_lcore_stats"
#define XLB_DPDK_MAX_PORTS 32
#define XLB_DPDK_MAX_LCORES 128

enum xlb_dpdk_port_role {
	XLB_DPDK_PORT_DATA = 0,	     /* RX into the program, TX / redirect out */
	XLB_DPDK_PORT_EXCEPTION = 1, /* XDP_PASS to the host stack, and back out */
};

struct xlb_dpdk_status {
	uint32_t pid;
	uint32_t nr_ports;
	uint32_t nr_lcores; /* worker lcores = CPUs of the per-CPU maps */
	uint32_t running;   /* 1 while the lcores run, 0 once stopped */
	uint64_t start_ns;  /* CLOCK_REALTIME */
	uint64_t heartbeat_ns; /* CLOCK_MONOTONIC, refreshed by the main thread */
	char engine[16];    /* "jit" or "interp": what really runs */
	char program[64];
	char object[192];
};

struct xlb_dpdk_port_stats {
	char name[48]; /* DPDK device name (vdev or PCI address) */
	uint32_t port_id;
	uint32_t ifindex; /* what programs see as ingress_ifindex and devmap values */
	uint32_t role;	  /* enum xlb_dpdk_port_role */
	uint32_t rx_queues;
	uint64_t rx_packets, rx_bytes, rx_missed, rx_errors;
	uint64_t tx_packets, tx_bytes, tx_errors;
};

/* Verdict counters of one worker lcore (array index: lcore index = CPU of the maps). */
struct xlb_dpdk_lcore_stats {
	uint32_t lcore_id; /* the EAL lcore */
	uint32_t nr_queues;
	uint64_t rx;
	uint64_t tx;	   /* XDP_TX sent */
	uint64_t redirect; /* XDP_REDIRECT sent */
	uint64_t pass;	   /* XDP_PASS sent to the exception port */
	uint64_t drop;	   /* XDP_DROP */
	uint64_t aborted;  /* XDP_ABORTED and unknown verdicts */
	uint64_t tx_failed; /* verdict given, but no room (TX ring full, no such port, no exception port) */
	uint64_t bad_mbuf;  /* chained or out-of-range mbufs, dropped before the program */
	uint64_t busy_cycles, total_cycles; /* TSC cycles with packets / in all */
	uint64_t tsc_hz;
	uint32_t load_permille; /* busy share of the last second (the main thread computes it) */
	uint32_t pad;
	uint64_t cpu_ns; /* CPU time the lcore's thread got (CLOCK_THREAD_CPUTIME_ID, ~10 ms fresh) */
};

#endif /* XLB_DPDK_SHARED_H */
