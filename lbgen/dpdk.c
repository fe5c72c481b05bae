// SPDX-License-Identifier: MIT
/*
 * dpdk.c - lbgen's DPDK TX transport: EAL from --dpdk "ARGS" (here e.g.
 * --no-huge -m 512 --no-pci --file-prefix=NAME --vdev=net_null0 or
 * net_ring/net_pcap/net_af_xdp), port 0, one TX queue per thread; each mbuf
 * is written for its flow before rte_eth_tx_burst().  Errors: the port's
 * oerrors.  Built only when meson finds libdpdk (the stand-in says so).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbgen.h"

#ifdef LBGEN_HAVE_DPDK
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#define DPDK_BURST 32
#define DPDK_ARGS_MAX 32

struct dpdk_state {
	struct lbgen_config cfg;
	uint32_t size;
	uint16_t port;
	struct rte_mempool *pool;
	uint8_t frame[LBGEN_FRAME_MAX];
	uint64_t next_flow[LBGEN_THREADS_MAX], rng[LBGEN_THREADS_MAX];
	bool registered[LBGEN_THREADS_MAX];
};

static int dpdk_open(const struct lbgen_opts *o, const struct lbgen_config *cfg, const uint8_t *frame,
		     void **ret_state)
{
	static char args[1024];
	char *argv[DPDK_ARGS_MAX] = { "lbgen" }, *tok, *save = NULL;
	struct rte_eth_conf conf = { 0 };
	struct dpdk_state *s;
	int argc = 1, err;

	if (!o->dpdk_args) {
		fprintf(stderr, "lbgen: --transport dpdk needs --dpdk \"EAL ARGS\"\n");
		return -EINVAL;
	}
	snprintf(args, sizeof(args), "%s", o->dpdk_args);
	for (tok = strtok_r(args, " ", &save); tok && argc < DPDK_ARGS_MAX - 1; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "lbgen: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	if (!rte_eth_dev_count_avail()) {
		fprintf(stderr, "lbgen: DPDK has no port (give a --vdev)\n");
		return -ENODEV;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->size = o->size;
	s->port = 0;
	memcpy(s->frame, frame, o->size);
	s->pool = rte_pktmbuf_pool_create("lbgen", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (!s->pool) {
		err = -rte_errno;
		goto err;
	}
	err = rte_eth_dev_configure(s->port, 1, (uint16_t)o->threads, &conf);
	err = err ?: rte_eth_rx_queue_setup(s->port, 0, 256, (unsigned int)rte_eth_dev_socket_id(s->port), NULL,
					    s->pool);
	for (int t = 0; !err && t < o->threads; t++) {
		err = rte_eth_tx_queue_setup(s->port, (uint16_t)t, 512, (unsigned int)rte_eth_dev_socket_id(s->port),
					     NULL);
		s->next_flow[t] = (uint64_t)cfg->flows * (uint64_t)t / (uint64_t)o->threads;
		s->rng[t] = 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1);
	}
	err = err ?: rte_eth_dev_start(s->port);
	if (err) {
		fprintf(stderr, "lbgen: DPDK port 0: %s\n", rte_strerror(-err));
		goto err;
	}
	*ret_state = s;
	return 0;
err:
	free(s);
	return err;
}

static int dpdk_send(void *state, int t, uint64_t n, uint64_t *ret_sent, uint64_t *ret_errors)
{
	struct dpdk_state *s = state;
	struct rte_mbuf *m[DPDK_BURST];

	*ret_sent = *ret_errors = 0;
	if (!s->registered[t]) {
		rte_thread_register(); /* a per-lcore mempool cache for this sender */
		s->registered[t] = true;
	}
	while (n) {
		uint16_t want = n < DPDK_BURST ? (uint16_t)n : DPDK_BURST, sent;

		if (rte_pktmbuf_alloc_bulk(s->pool, m, want))
			continue; /* all mbufs in flight: the driver frees them as it sends */
		for (uint16_t i = 0; i < want; i++) {
			uint8_t *p = (uint8_t *)rte_pktmbuf_append(m[i], (uint16_t)s->size);
			uint32_t flow, k = lbgen_pick(&s->cfg, &s->rng[t], &s->next_flow[t], &flow);
			memcpy(p, s->frame, s->size);
			lbgen_frame_for_flow(&s->cfg.tmpl[k], p, flow);
		}
		sent = rte_eth_tx_burst(s->port, (uint16_t)t, m, want);
		for (uint16_t i = sent; i < want; i++)
			rte_pktmbuf_free(m[i]);
		*ret_sent += sent;
		n -= sent;
	}
	return 0;
}

static uint64_t dpdk_errors(void *state)
{
	struct dpdk_state *s = state;
	struct rte_eth_stats st;

	return rte_eth_stats_get(s->port, &st) ? 0 : st.oerrors;
}

static void dpdk_close(void *state)
{
	struct dpdk_state *s = state;

	if (!s)
		return;
	rte_eth_dev_stop(s->port);
	rte_eth_dev_close(s->port);
	rte_eal_cleanup();
	free(s);
}

const struct lbgen_transport lbgen_dpdk = {
	.name = "dpdk",
	.open = dpdk_open,
	.send = dpdk_send,
	.errors = dpdk_errors,
	.close = dpdk_close,
	.min_call_s = 0.001,
};
#else
static int dpdk_none(const struct lbgen_opts *o, const struct lbgen_config *cfg, const uint8_t *frame,
		     void **ret_state)
{
	fprintf(stderr, "lbgen: built without DPDK (meson found no libdpdk)\n");
	return -EOPNOTSUPP;
}

const struct lbgen_transport lbgen_dpdk = { .name = "dpdk", .open = dpdk_none };
#endif
