// SPDX-License-Identifier: MIT
/*
 * xsk.c - lbgen's AF_XDP TX transport (libxdp's xsk API): one socket per
 * thread on queue t of -i DEV, TX ring only, copy mode (XDP_COPY: the mode
 * veth offers), no XDP program loaded (lbgen only sends).  Each frame is
 * written into its UMEM slot for its flow just before it is queued.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "lbgen.h"

#define XSK_FRAMES 4096
#define XSK_FRAME_SIZE 2048
#define XSK_BATCH 64

struct xsk_thread {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod tx, fill;
	struct xsk_ring_cons comp, rx;
	void *area;
	uint64_t free_addrs[XSK_FRAMES];
	uint32_t free_cnt;
	uint64_t next_flow, rng;
};

struct xsk_state {
	struct lbgen_config cfg;
	uint32_t size;
	int threads;
	struct xsk_thread t[LBGEN_THREADS_MAX];
};

static void thread_close(struct xsk_thread *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, (size_t)XSK_FRAMES * XSK_FRAME_SIZE);
	memset(x, 0, sizeof(*x));
}

static int thread_open(struct xsk_thread *x, const char *dev, int queue, const uint8_t *frame, uint32_t size)
{
	struct xsk_socket_config scfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = XDP_FLAGS_SKB_MODE,
		.bind_flags = XDP_COPY,
	};
	size_t len = (size_t)XSK_FRAMES * XSK_FRAME_SIZE;
	int err;

	x->area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		return -errno;
	}
	err = xsk_umem__create(&x->umem, x->area, len, &x->fill, &x->comp, NULL);
	if (err)
		return err;
	err = xsk_socket__create(&x->xsk, dev, (uint32_t)queue, x->umem, NULL, &x->tx, &scfg);
	if (err)
		return err;
	for (uint32_t i = 0; i < XSK_FRAMES; i++) {
		x->free_addrs[i] = (uint64_t)i * XSK_FRAME_SIZE;
		memcpy((uint8_t *)x->area + x->free_addrs[i], frame, size); /* payload once; headers per frame */
	}
	x->free_cnt = XSK_FRAMES;
	return 0;
}

static int xsk_open(const struct lbgen_opts *o, const struct lbgen_config *cfg, const uint8_t *frame,
		    void **ret_state)
{
	struct xsk_state *s = calloc(1, sizeof(*s));
	int err = 0;

	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->size = o->size;
	s->threads = o->threads;
	for (int t = 0; t < o->threads && !err; t++) {
		err = thread_open(&s->t[t], o->dev, t, frame, o->size);
		if (err)
			fprintf(stderr, "lbgen: AF_XDP socket on %s queue %d: %s (the device needs %d TX queues)\n",
				o->dev, t, strerror(-err), o->threads);
		s->t[t].next_flow = (uint64_t)cfg->flows * (uint64_t)t / (uint64_t)o->threads;
		s->t[t].rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1);
	}
	if (err) {
		for (int t = 0; t < o->threads; t++)
			thread_close(&s->t[t]);
		free(s);
		return err;
	}
	*ret_state = s;
	return 0;
}

static void reclaim(struct xsk_thread *x)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->comp, XSK_FRAMES, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->free_addrs[x->free_cnt++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	xsk_ring_cons__release(&x->comp, n);
}

static int xsk_send(void *state, int t, uint64_t n, uint64_t *ret_sent, uint64_t *ret_errors)
{
	struct xsk_state *s = state;
	struct xsk_thread *x = &s->t[t];

	*ret_sent = *ret_errors = 0;
	while (n) {
		uint32_t want = n < XSK_BATCH ? (uint32_t)n : XSK_BATCH, idx, got;

		reclaim(x);
		if (want > x->free_cnt)
			want = x->free_cnt;
		got = want ? xsk_ring_prod__reserve(&x->tx, want, &idx) : 0;
		for (uint32_t i = 0; i < got; i++) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);
			uint32_t flow, k = lbgen_pick(&s->cfg, &x->rng, &x->next_flow, &flow);
			d->addr = x->free_addrs[--x->free_cnt];
			d->len = s->size;
			lbgen_frame_for_flow(&s->cfg.tmpl[k], (uint8_t *)x->area + d->addr, flow);
		}
		if (got)
			xsk_ring_prod__submit(&x->tx, got);
		if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != EBUSY && errno != ENOBUFS)
			return -errno;
		*ret_sent += got;
		n -= got;
		if (!got) {
			struct pollfd p = { xsk_socket__fd(x->xsk), POLLOUT, 0 };

			poll(&p, 1, 1);
		}
	}
	return 0;
}

static void xsk_close(void *state)
{
	struct xsk_state *s = state;

	if (!s)
		return;
	for (int t = 0; t < s->threads; t++)
		thread_close(&s->t[t]);
	free(s);
}

const struct lbgen_transport lbgen_xsk = {
	.name = "xsk",
	.open = xsk_open,
	.send = xsk_send,
	.close = xsk_close,
	.min_call_s = 0.001,
};
