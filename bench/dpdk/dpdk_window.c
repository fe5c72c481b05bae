// SPDX-License-Identifier: MIT
/*
 * xlb-bench-dpdk-window - what a running xlb-dpdk did over a window, from
 * its shared maps: the packets its worker lcore received per second of
 * that lcore's time, and the counters that say which path they took.
 *
 *   xlb-bench-dpdk-window MAPS_DIR SECONDS VIP_ID
 *
 * Prints one JSON object: engine, rx, tx, vip (the VIP's packets in the
 * program's per-CPU stats), lru_hit (the connection-table hits), seconds
 * (worker 0's TSC time over the window), busy (its busy share), mpps;
 * cpu_seconds and mpps_cpu: the same over the CPU time the lcore's thread
 * got (less than the TSC's when the host is shared).
 * The path check: every packet received in the window was balanced for
 * the VIP, hit the connection table and left by XDP_TX (within one burst
 * of slack for packets in flight at either end); exit 1 when it fails, so
 * the figure is never of another path than "established flow, XDP_TX".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xbpf.h"
#include "xlb_dpdk_shared.h"
#include "xlb_shared.h"

#define SLACK 64 /* one burst */

struct sample {
	struct xlb_dpdk_lcore_stats l;
	uint64_t vip, lru_hit;
};

static struct xbpf_map *attach(const char *dir, const char *name)
{
	char path[4096];
	struct xbpf_map *m;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	m = xbpf_map__open_shared(path, NULL, 0);
	if (!m) {
		fprintf(stderr, "cannot attach to %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return m;
}

/* Sum field 0 (packets) of a per-CPU counter entry over the CPUs. */
static uint64_t percpu_packets(struct xbpf_map *m, uint32_t idx)
{
	size_t stride = (xbpf_map__spec(m)->value_size + 7) / 8 * 8;
	int cpus = xbpf_map__nr_cpus(m);
	uint8_t *v = calloc((size_t)cpus, stride);
	uint64_t sum = 0;

	if (v && !xbpf_map__lookup(m, &idx, v))
		for (int c = 0; c < cpus; c++)
			sum += *(uint64_t *)(v + (size_t)c * stride);
	free(v);
	return sum;
}

int main(int argc, char **argv)
{
	struct xbpf_map *lc, *st, *vs, *ev;
	struct xlb_dpdk_status status;
	struct sample a, b;
	uint32_t zero = 0, vip;
	double secs, mpps, busy, cpu_s;
	uint64_t rx, tx, dv, dh;
	struct timespec ts;
	int bad = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: xlb-bench-dpdk-window MAPS_DIR SECONDS VIP_ID\n");
		return 2;
	}
	lc = attach(argv[1], XLB_DPDK_LCORE_MAP);
	st = attach(argv[1], XLB_DPDK_STATUS_MAP);
	vs = attach(argv[1], "xlb_vip_stats");
	ev = attach(argv[1], "xlb_event_stats");
	vip = (uint32_t)strtoul(argv[3], NULL, 0);
	secs = strtod(argv[2], NULL);
	if (xbpf_map__lookup(st, &zero, &status) || !status.running) {
		fprintf(stderr, "xlb-dpdk is not running over %s\n", argv[1]);
		return 2;
	}
	xbpf_map__lookup(lc, &zero, &a.l);
	a.vip = percpu_packets(vs, vip);
	a.lru_hit = percpu_packets(ev, XLB_EV_LRU_HIT);
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	xbpf_map__lookup(lc, &zero, &b.l);
	b.vip = percpu_packets(vs, vip);
	b.lru_hit = percpu_packets(ev, XLB_EV_LRU_HIT);

	rx = b.l.rx - a.l.rx;
	tx = b.l.tx - a.l.tx;
	dv = b.vip - a.vip;
	dh = b.lru_hit - a.lru_hit;
	secs = b.l.tsc_hz ? (double)(b.l.total_cycles - a.l.total_cycles) / (double)b.l.tsc_hz : 0;
	busy = b.l.total_cycles > a.l.total_cycles ?
		       (double)(b.l.busy_cycles - a.l.busy_cycles) /
			       (double)(b.l.total_cycles - a.l.total_cycles) :
		       0;
	mpps = secs > 0 ? (double)rx / secs / 1e6 : 0;
	cpu_s = (double)(b.l.cpu_ns - a.l.cpu_ns) / 1e9;
	status.engine[sizeof(status.engine) - 1] = '\0';
	printf("{\"engine\": \"%s\", \"lcores\": %u, \"rx\": %llu, \"tx\": %llu, \"vip\": %llu, "
	       "\"lru_hit\": %llu, \"seconds\": %.4f, \"busy\": %.4f, \"mpps\": %.4f, "
	       "\"cpu_seconds\": %.4f, \"mpps_cpu\": %.4f}\n",
	       status.engine, status.nr_lcores, (unsigned long long)rx, (unsigned long long)tx,
	       (unsigned long long)dv, (unsigned long long)dh, secs, busy, mpps, cpu_s,
	       cpu_s > 0 ? (double)rx / cpu_s / 1e6 : 0);
	if (status.nr_lcores != 1) {
		fprintf(stderr, "path check: %u worker lcores; this figure is per lcore of one\n",
			status.nr_lcores);
		bad = 1;
	}
	if (!rx || (tx > rx ? tx - rx : rx - tx) > SLACK) {
		fprintf(stderr, "path check: %llu received, %llu XDP_TX\n", (unsigned long long)rx,
			(unsigned long long)tx);
		bad = 1;
	}
	if ((dv > rx ? dv - rx : rx - dv) > SLACK || dh + SLACK < rx) {
		fprintf(stderr, "path check: %llu received, %llu balanced for VIP %u, %llu LRU hits\n",
			(unsigned long long)rx, (unsigned long long)dv, vip, (unsigned long long)dh);
		bad = 1;
	}
	return bad;
}
