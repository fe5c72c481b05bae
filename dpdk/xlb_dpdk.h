/* SPDX-License-Identifier: MIT */
/*
 * xlb_dpdk.h - private to xlb-dpdk: options, ports, workers and the
 * program, shared by main.c, ports.c, prog.c and worker.c.
 */
#ifndef XLB_DPDK_H
#define XLB_DPDK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "xbpf_engine.h"
#include "xlb_dpdk_shared.h"

#define XLB_DPDK_MAX_BURST 64

struct xlb_dpdk_opts {
	const char *obj_path;
	const char *prog_name;	  /* NULL: the object's first XDP program */
	const char *run_dir;	  /* maps under <run_dir>/maps */
	enum xbpf_engine_kind engine;
	int exception_port;	  /* -1: none (XDP_PASS is dropped and counted) */
	int exception_out;	  /* data port that host traffic leaves by; -1: the first */
	uint32_t ifindex[XLB_DPDK_MAX_PORTS]; /* 0: default */
	unsigned int burst;
	unsigned int mbufs;
	unsigned int rx_desc, tx_desc;
	unsigned int idle_us; /* sleep this long when the queues stay empty; 0: busy-poll */
	bool quiet;
};

struct xlb_port {
	uint16_t port_id;
	uint32_t ifindex;
	enum xlb_dpdk_port_role role;
	uint16_t rx_queues, tx_queues;
	char name[48];
};

/* One RX queue a worker polls. */
struct xlb_rxq {
	uint16_t port; /* index into xlb_dp.ports */
	uint16_t queue;
};

struct xlb_tx_buf {
	uint16_t n;
	struct rte_mbuf *pkts[XLB_DPDK_MAX_BURST];
};

struct xlb_worker {
	unsigned int index;   /* CPU of the per-CPU maps, bpf_get_smp_processor_id() */
	unsigned int lcore_id;
	struct xlb_rxq rxq[XLB_DPDK_MAX_PORTS];
	unsigned int nr_rxq;
	uint16_t txq; /* the TX queue this worker owns on every port */
	struct xbpf_run_ctx *ctx;
	struct xlb_dpdk_lcore_stats *stats; /* this lcore's entry in the shared map */
	struct xlb_tx_buf tx[XLB_DPDK_MAX_PORTS];
	uint64_t load_busy0, load_total0; /* the cycle counters when load was last computed */
};

struct xlb_dp {
	struct xlb_dpdk_opts opts;
	struct xlb_port ports[XLB_DPDK_MAX_PORTS];
	unsigned int nr_ports;
	int exc;	 /* index of the exception port, -1 */
	int exc_out;	 /* index of the data port host traffic leaves by, -1 */
	uint16_t main_txq; /* TX queue of the main lcore on data ports; UINT16_MAX: none */
	struct rte_mempool *pool;
	struct xlb_worker workers[XLB_DPDK_MAX_LCORES];
	unsigned int nr_workers;

	struct xbpf_object *obj;
	struct xbpf_vm *vm;
	struct xbpf_map *status_map, *port_map, *lcore_map;
	volatile bool stop;
	bool watchdog; /* systemd's watchdog is on: xlb_publish() feeds it */
};

/* ports.c */
int xlb_ports_setup(struct xlb_dp *dp);
void xlb_ports_close(struct xlb_dp *dp);
/* Port index of a devmap/redirect ifindex, -1 if none. */
int xlb_port_by_ifindex(const struct xlb_dp *dp, uint32_t ifindex);
/* Port counters, each lcore's load and the status heartbeat into the shared maps. */
void xlb_publish(struct xlb_dp *dp);

/* prog.c */
int xlb_prog_load(struct xlb_dp *dp);
void xlb_prog_unload(struct xlb_dp *dp);

/* worker.c */
int xlb_worker_main(void *arg);
/* Main lcore: host traffic from the exception port back to the wire. */
void xlb_exception_poll(struct xlb_dp *dp);

/* main.c: a state to systemd (sd_notify), when it started us with Type=notify. */
void xlb_notify(const char *state);

extern struct xlb_dp *xlb_dp;

#endif /* XLB_DPDK_H */
