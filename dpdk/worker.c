// SPDX-License-Identifier: MIT
/*
 * worker.c - the packet loop of one worker lcore: RX burst, the program
 * over each mbuf in place, the verdicts acted on in bursts.
 *
 * Each mbuf becomes an XDP buffer without a copy: hard start = buf_addr,
 * data at data_off (RTE_PKTMBUF_HEADROOM, 128 bytes, of which the kernel's
 * 40-byte xdp_frame floor leaves 88 for bpf_xdp_adjust_head: every
 * encapsulation xlb writes fits), tailroom to the end of the buffer for
 * bpf_xdp_adjust_tail.  After the run the mbuf takes the packet's new start
 * and length.  Verdicts are counted when given (tx_failed counts those the
 * port did not take).  Verdicts: XDP_TX leaves by the RX port, XDP_REDIRECT by the
 * data port whose ifindex the devmap named, XDP_PASS by the exception port
 * (the host stack), anything else frees the mbuf.  Every outcome is
 * counted in this lcore's entry of the shared lcore map.
 *
 * The worker's index is the CPU of the per-CPU maps and what
 * bpf_get_smp_processor_id() returns; each worker owns TX queue `index` on
 * every port, so no TX queue is shared between lcores.
 */
#include <linux/bpf.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "xlb_dpdk.h"

static void tx_flush(struct xlb_dp *dp, struct xlb_worker *wk, unsigned int port)
{
	struct xlb_tx_buf *b = &wk->tx[port];
	uint16_t sent, i;

	if (!b->n)
		return;
	sent = rte_eth_tx_burst(dp->ports[port].port_id, wk->txq, b->pkts, b->n);
	for (i = sent; i < b->n; i++)
		rte_pktmbuf_free(b->pkts[i]);
	wk->stats->tx_failed += b->n - sent;
	b->n = 0;
}

/* Count the verdict, buffer the mbuf for `port` (-1: nowhere to send it). */
static inline void tx_queue(struct xlb_dp *dp, struct xlb_worker *wk, int port, struct rte_mbuf *m,
			    uint64_t *verdict_ctr)
{
	struct xlb_tx_buf *b;

	++*verdict_ctr;
	if (port < 0) {
		rte_pktmbuf_free(m);
		wk->stats->tx_failed++;
		return;
	}
	b = &wk->tx[port];
	if (b->n == XLB_DPDK_MAX_BURST)
		tx_flush(dp, wk, (unsigned int)port);
	m->ol_flags = 0;
	b->pkts[b->n++] = m;
}

static void run_burst(struct xlb_dp *dp, struct xlb_worker *wk, const struct xlb_rxq *rq,
		      struct rte_mbuf **pkts, uint16_t n, void *r1)
{
	const struct xlb_port *in = &dp->ports[rq->port];
	struct xlb_dpdk_lcore_stats *st = wk->stats;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct xbpf_redirect rd;
		uint32_t off, len;
		uint64_t verdict;

		if (m->nb_segs != 1 ||
		    xbpf_run_ctx__set_xdp_buf(wk->ctx, m->buf_addr, m->buf_len, m->data_off,
					      m->data_len, in->ifindex, rq->queue)) {
			st->bad_mbuf++;
			rte_pktmbuf_free(m);
			continue;
		}
		verdict = xbpf_vm__exec(dp->vm, r1, 0);
		xbpf_run_ctx__xdp_buf(wk->ctx, &off, &len);
		m->data_off = (uint16_t)off;
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
		switch (verdict) {
		case XDP_TX:
			tx_queue(dp, wk, rq->port, m, &st->tx);
			break;
		case XDP_REDIRECT:
			xbpf_last_redirect(&rd);
			tx_queue(dp, wk, xlb_port_by_ifindex(dp, rd.ifindex), m, &st->redirect);
			break;
		case XDP_PASS:
			tx_queue(dp, wk, dp->exc, m, &st->pass);
			break;
		case XDP_DROP:
			st->drop++;
			rte_pktmbuf_free(m);
			break;
		default:
			st->aborted++;
			rte_pktmbuf_free(m);
			break;
		}
	}
}

static void flush_all(struct xlb_dp *dp, struct xlb_worker *wk)
{
	unsigned int p;

	for (p = 0; p < dp->nr_ports; p++)
		tx_flush(dp, wk, p);
}

void xlb_exception_poll(struct xlb_dp *dp)
{
	struct rte_mbuf *pkts[XLB_DPDK_MAX_BURST];
	const struct xlb_port *exc, *out;
	uint16_t n, sent, i;

	if (dp->exc < 0 || dp->exc_out < 0 || !dp->ports[dp->exc].rx_queues)
		return;
	exc = &dp->ports[dp->exc];
	out = &dp->ports[dp->exc_out];
	n = rte_eth_rx_burst(exc->port_id, 0, pkts, XLB_DPDK_MAX_BURST);
	if (!n)
		return;
	sent = dp->main_txq == UINT16_MAX ? 0 : rte_eth_tx_burst(out->port_id, dp->main_txq, pkts, n);
	for (i = sent; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
}

int xlb_worker_main(void *arg)
{
	struct xlb_worker *wk = arg;
	struct xlb_dp *dp = xlb_dp;
	struct rte_mbuf *pkts[XLB_DPDK_MAX_BURST];
	bool main_duties = rte_lcore_id() == rte_get_main_lcore();
	uint64_t last = rte_rdtsc(), publish = 0, cpu_at = 0, hz = rte_get_tsc_hz();
	unsigned int burst = dp->opts.burst, idle_rounds = 0;
	void *r1;

	xbpf_set_cpu((int)wk->index);
	wk->stats->lcore_id = rte_lcore_id();
	wk->stats->nr_queues = wk->nr_rxq;
	wk->stats->tsc_hz = hz;
	r1 = xbpf_run_ctx__r1(wk->ctx);
	while (!dp->stop) {
		unsigned int q;
		bool busy = false;
		uint64_t now;

		for (q = 0; q < wk->nr_rxq; q++) {
			const struct xlb_rxq *rq = &wk->rxq[q];
			uint16_t n = rte_eth_rx_burst(dp->ports[rq->port].port_id, rq->queue, pkts,
						      (uint16_t)burst);

			if (!n)
				continue;
			busy = true;
			wk->stats->rx += n;
			run_burst(dp, wk, rq, pkts, n, r1);
			flush_all(dp, wk);
		}
		/*
		 * --idle-us: after a run of empty polls, sleep instead of spinning
		 * (hosts that share their CPUs; costs that much latency when idle).
		 */
		if (busy)
			idle_rounds = 0;
		else if (dp->opts.idle_us && ++idle_rounds > 64)
			rte_delay_us_sleep(dp->opts.idle_us);
		now = rte_rdtsc();
		if (busy)
			wk->stats->busy_cycles += now - last;
		wk->stats->total_cycles += now - last;
		last = now;
		/* the CPU time this thread got: on a shared host, less than the TSC's */
		if (now - cpu_at > hz / 100) {
			struct timespec ts;

			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
			wk->stats->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
			cpu_at = now;
		}
		if (main_duties) {
			/* a single-lcore process also does the main thread's work */
			xlb_exception_poll(dp);
			if (now - publish > hz / 10) {
				xlb_publish(dp);
				publish = now;
			}
		}
	}
	return 0;
}
