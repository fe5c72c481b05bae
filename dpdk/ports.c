// SPDX-License-Identifier: MIT
/*
 * ports.c - the DPDK ports of xlb-dpdk: data ports (one RX queue per worker
 * lcore, spread by RSS; one TX queue per worker, plus one for host traffic
 * when the port has it) and the exception port (a net_tap or virtio-user
 * port into the host stack: XDP_PASS goes there, and what the host sends
 * there goes back out of a data port).
 *
 * Packet memory must lie below 4 GiB: programs see packet addresses in the
 * 32-bit fields of struct xdp_md, as the engines run the program image the
 * kernel would (core/ctx.c).  main.c asks the EAL for low addresses
 * (--base-virtaddr); the pool is checked here, and xlb-dpdk refuses to start
 * on memory above 4 GiB rather than fault later.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "xlb_dpdk.h"

static void mem_below_4g(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *memhdr,
			 unsigned int idx)
{
	bool *ok = opaque;

	if ((uint64_t)(uintptr_t)memhdr->addr + memhdr->len > (1ull << 32))
		*ok = false;
}

static int pool_create(struct xlb_dp *dp)
{
	unsigned int n = dp->opts.mbufs, cache = n / 8 > 256 ? 256 : n / 8;
	bool ok = true;

	dp->pool = rte_pktmbuf_pool_create("xlb_mbufs", n, cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   (int)rte_socket_id());
	if (!dp->pool) {
		fprintf(stderr, "xlb-dpdk: cannot create a pool of %u mbufs: %s (lower --mbufs or give the EAL more memory)\n",
			n, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	rte_mempool_mem_iter(dp->pool, mem_below_4g, &ok);
	if (!ok) {
		fprintf(stderr, "xlb-dpdk: packet memory lies above 4 GiB; xlb's engines address packets "
				"through 32-bit context fields.  Pass the EAL a low --base-virtaddr (the "
				"default is 0x40000000) and at most ~3 GiB of memory (-m / --socket-mem, "
				"--legacy-mem with hugepages)\n");
		return -ERANGE;
	}
	return 0;
}

static uint32_t default_ifindex(const struct rte_eth_dev_info *info, uint16_t port_id)
{
	/* af_packet, af_xdp and tap report the kernel interface they sit on */
	return info->if_index ? info->if_index : 1000u + port_id;
}

static int port_configure(struct xlb_dp *dp, struct xlb_port *p, const struct rte_eth_dev_info *info)
{
	struct rte_eth_conf conf = {};
	unsigned int q;
	int err;

	if (p->rx_queues > 1) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			info->flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
	}
	err = rte_eth_dev_configure(p->port_id, p->rx_queues, p->tx_queues, &conf);
	if (err)
		goto fail;
	for (q = 0; q < p->rx_queues; q++) {
		err = rte_eth_rx_queue_setup(p->port_id, q, (uint16_t)dp->opts.rx_desc,
					     rte_eth_dev_socket_id(p->port_id), NULL, dp->pool);
		if (err)
			goto fail;
	}
	for (q = 0; q < p->tx_queues; q++) {
		err = rte_eth_tx_queue_setup(p->port_id, q, (uint16_t)dp->opts.tx_desc,
					     rte_eth_dev_socket_id(p->port_id), NULL);
		if (err)
			goto fail;
	}
	err = rte_eth_dev_start(p->port_id);
	if (err)
		goto fail;
	rte_eth_promiscuous_enable(p->port_id); /* not every PMD can; nothing depends on it */
	return 0;
fail:
	fprintf(stderr, "xlb-dpdk: port %u (%s): cannot configure %u RX / %u TX queues: %s\n",
		p->port_id, p->name, p->rx_queues, p->tx_queues, rte_strerror(-err));
	return err;
}

/* Queue counts of one port, from its role and what the device offers. */
static int plan_queues(struct xlb_dp *dp, struct xlb_port *p, const struct rte_eth_dev_info *info)
{
	unsigned int w = dp->nr_workers;

	if (p->role == XLB_DPDK_PORT_EXCEPTION) {
		p->rx_queues = info->max_rx_queues ? 1 : 0;
		p->tx_queues = (uint16_t)w;
	} else {
		p->rx_queues = (uint16_t)(info->max_rx_queues < w ? info->max_rx_queues : w);
		/* the main lcore's queue for host traffic, where the device has one more */
		p->tx_queues = (uint16_t)(info->max_tx_queues > w ? w + 1 : w);
	}
	if (info->max_tx_queues < w) {
		fprintf(stderr, "xlb-dpdk: port %u (%s) has %u TX queues; each of the %u worker lcores needs its own\n",
			p->port_id, p->name, info->max_tx_queues, w);
		return -EINVAL;
	}
	return 0;
}

/*
 * The host stack behind the exception port answers for the wire: it gets
 * the MAC of the data port its traffic leaves by, so ARP and ND answers
 * name the address the wire sends to (net_tap sets its kernel interface's).
 */
static void exception_mac(struct xlb_dp *dp)
{
	struct rte_ether_addr mac;
	int err;

	if (dp->exc < 0 || dp->exc_out < 0 ||
	    rte_eth_macaddr_get(dp->ports[dp->exc_out].port_id, &mac))
		return;
	err = rte_eth_dev_default_mac_addr_set(dp->ports[dp->exc].port_id, &mac);
	if (err && !dp->opts.quiet)
		fprintf(stderr, "xlb-dpdk: note: exception port %s keeps its own MAC (%s); give the "
				"host interface the MAC of %s\n",
			dp->ports[dp->exc].name, rte_strerror(-err), dp->ports[dp->exc_out].name);
}

int xlb_ports_setup(struct xlb_dp *dp)
{
	unsigned int i, w, nr_rx = 0;
	uint16_t port_id;
	int err;

	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, "xlb-dpdk: no ports (give the EAL a PCI device or a --vdev)\n");
		return -ENODEV;
	}
	err = pool_create(dp);
	if (err)
		return err;
	dp->exc = dp->exc_out = -1;
	dp->main_txq = UINT16_MAX;
	RTE_ETH_FOREACH_DEV(port_id) {
		struct xlb_port *p = &dp->ports[dp->nr_ports];
		struct rte_eth_dev_info info;

		if (dp->nr_ports == XLB_DPDK_MAX_PORTS) {
			fprintf(stderr, "xlb-dpdk: more than %d ports\n", XLB_DPDK_MAX_PORTS);
			return -E2BIG;
		}
		err = rte_eth_dev_info_get(port_id, &info);
		if (err)
			return err;
		p->port_id = port_id;
		rte_eth_dev_get_name_by_port(port_id, p->name);
		p->name[sizeof(p->name) - 1] = '\0';
		p->role = (int)dp->nr_ports == dp->opts.exception_port ? XLB_DPDK_PORT_EXCEPTION
								       : XLB_DPDK_PORT_DATA;
		p->ifindex = dp->opts.ifindex[dp->nr_ports] ?: default_ifindex(&info, port_id);
		err = plan_queues(dp, p, &info);
		if (err)
			return err;
		if (p->role == XLB_DPDK_PORT_EXCEPTION)
			dp->exc = (int)dp->nr_ports;
		else if (dp->exc_out < 0 || (int)dp->nr_ports == dp->opts.exception_out)
			dp->exc_out = (int)dp->nr_ports;
		dp->nr_ports++;
	}
	if (dp->opts.exception_port >= (int)dp->nr_ports) {
		fprintf(stderr, "xlb-dpdk: no port %d for the exception port\n", dp->opts.exception_port);
		return -EINVAL;
	}
	for (i = 0; i < dp->nr_ports; i++) {
		struct rte_eth_dev_info info;

		rte_eth_dev_info_get(dp->ports[i].port_id, &info);
		err = port_configure(dp, &dp->ports[i], &info);
		if (err)
			return err;
	}
	/* worker w polls queue w of every data port that has one, and sends on TX queue w */
	for (w = 0; w < dp->nr_workers; w++) {
		struct xlb_worker *wk = &dp->workers[w];

		wk->txq = (uint16_t)w;
		for (i = 0; i < dp->nr_ports; i++) {
			if (dp->ports[i].role != XLB_DPDK_PORT_DATA || w >= dp->ports[i].rx_queues)
				continue;
			wk->rxq[wk->nr_rxq++] = (struct xlb_rxq){ .port = (uint16_t)i, .queue = (uint16_t)w };
			nr_rx++;
		}
	}
	if (!nr_rx) {
		fprintf(stderr, "xlb-dpdk: no data port can receive\n");
		return -EINVAL;
	}
	if (dp->exc_out >= 0 && dp->ports[dp->exc_out].tx_queues > dp->nr_workers)
		dp->main_txq = (uint16_t)dp->nr_workers;
	else if (dp->exc_out >= 0 && dp->workers[0].lcore_id == rte_get_main_lcore())
		dp->main_txq = dp->workers[0].txq; /* one lcore does both: its queue is free here */
	else if (dp->exc >= 0 && dp->ports[dp->exc].rx_queues)
		fprintf(stderr, "xlb-dpdk: warning: port %s has no spare TX queue: host traffic from the exception port is dropped\n",
			dp->exc_out >= 0 ? dp->ports[dp->exc_out].name : "-");
	exception_mac(dp);
	return 0;
}

void xlb_ports_close(struct xlb_dp *dp)
{
	unsigned int i;

	for (i = 0; i < dp->nr_ports; i++) {
		rte_eth_dev_stop(dp->ports[i].port_id);
		rte_eth_dev_close(dp->ports[i].port_id);
	}
}

int xlb_port_by_ifindex(const struct xlb_dp *dp, uint32_t ifindex)
{
	unsigned int i;

	for (i = 0; i < dp->nr_ports; i++)
		if (dp->ports[i].ifindex == ifindex && dp->ports[i].role == XLB_DPDK_PORT_DATA)
			return (int)i;
	return -1;
}

/* Port counters and the heartbeat into the shared maps (main thread). */
void xlb_publish(struct xlb_dp *dp)
{
	struct xlb_dpdk_status status;
	struct timespec ts;
	uint32_t zero = 0;
	unsigned int i;

	if (dp->watchdog)
		xlb_notify("WATCHDOG=1");
	if (!xbpf_map__lookup(dp->status_map, &zero, &status)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		status.running = !dp->stop;
		status.heartbeat_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		xbpf_map__update(dp->status_map, &zero, &status, XBPF_ANY);
	}
	for (i = 0; i < dp->nr_ports; i++) {
		struct xlb_port *p = &dp->ports[i];
		struct xlb_dpdk_port_stats ps = {};
		struct rte_eth_stats st = {};

		rte_eth_stats_get(p->port_id, &st);
		snprintf(ps.name, sizeof(ps.name), "%s", p->name);
		ps.port_id = p->port_id;
		ps.ifindex = p->ifindex;
		ps.role = p->role;
		ps.rx_queues = p->rx_queues;
		ps.rx_packets = st.ipackets;
		ps.rx_bytes = st.ibytes;
		ps.rx_missed = st.imissed;
		ps.rx_errors = st.ierrors;
		ps.tx_packets = st.opackets;
		ps.tx_bytes = st.obytes;
		ps.tx_errors = st.oerrors;
		xbpf_map__update(dp->port_map, &i, &ps, XBPF_ANY);
	}
	/* each lcore's load over the last second or so, from the cycles it counts */
	for (i = 0; i < dp->nr_workers; i++) {
		struct xlb_worker *wk = &dp->workers[i];
		uint64_t busy = wk->stats->busy_cycles, total = wk->stats->total_cycles;

		if (!wk->stats->tsc_hz || total - wk->load_total0 < wk->stats->tsc_hz)
			continue;
		wk->stats->load_permille =
			(uint32_t)((busy - wk->load_busy0) * 1000 / (total - wk->load_total0));
		wk->load_busy0 = busy;
		wk->load_total0 = total;
	}
}
