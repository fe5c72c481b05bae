// SPDX-License-Identifier: MIT
/*
 * Prometheus text exposition (version 0.0.4) on a loopback HTTP port,
 * served by libmicrohttpd's own thread: per VIP and per real packets and
 * bytes, reals' health and ring membership, LRU hits/misses and hit ratio,
 * new flows, every drop/pass reason by the dataplane's name for it, and
 * the ports and worker lcores of a backend that has its own (DPDK).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlbd.h"

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

struct buf {
	char *p;
	size_t len, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (b->p && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap ? b->cap * 2 : 16384) + (size_t)n;
			char *np = realloc(b->p, cap);

			if (!np)
				return;
			b->p = np;
			b->cap = cap;
		}
	}
}

/* The ports and worker lcores of a backend that has its own (the userspace backend's). */
static void render_io(struct daemon *d, struct buf *b)
{
	struct xlb_dp_io *io;

	if (!d->be.ops->io_stats || !(io = calloc(1, sizeof(*io))))
		return;
	if (d->be.ops->io_stats(&d->be, io)) {
		free(io);
		return;
	}
	for (int c = 0; c < XLB_PORT_CTR_CNT; c++) {
		bprintf(b, "# HELP xlb_port_%s_total %s\n# TYPE xlb_port_%s_total counter\n",
			xlb_port_counter_names[c], xlb_port_counter_docs[c], xlb_port_counter_names[c]);
		for (size_t i = 0; i < io->port_cnt; i++)
			bprintf(b, "xlb_port_%s_total{port=\"%s\",role=\"%s\"} %llu\n",
				xlb_port_counter_names[c], io->port[i].name, io->port[i].role,
				(unsigned long long)io->port[i].ctr[c]);
	}
	for (int c = 0; c < XLB_LCORE_CTR_CNT; c++) {
		bprintf(b, "# HELP xlb_lcore_%s_total %s\n# TYPE xlb_lcore_%s_total counter\n",
			xlb_lcore_counter_names[c], xlb_lcore_counter_docs[c],
			xlb_lcore_counter_names[c]);
		for (size_t i = 0; i < io->lcore_cnt; i++)
			bprintf(b, "xlb_lcore_%s_total{lcore=\"%u\",cpu=\"%u\"} %llu\n",
				xlb_lcore_counter_names[c], io->lcore[i].lcore, io->lcore[i].index,
				(unsigned long long)io->lcore[i].ctr[c]);
	}
	bprintf(b, "# HELP xlb_lcore_load Busy share of a worker lcore over the last second.\n"
		   "# TYPE xlb_lcore_load gauge\n");
	for (size_t i = 0; i < io->lcore_cnt; i++)
		bprintf(b, "xlb_lcore_load{lcore=\"%u\",cpu=\"%u\"} %.3f\n", io->lcore[i].lcore,
			io->lcore[i].index, io->lcore[i].load);
	free(io);
}

static void render(struct daemon *d, struct buf *b)
{
	const struct xlb_backend_ops *ops = d->be.ops;
	struct xlb_dp_stats *st = calloc(1, sizeof(*st));
	uint32_t *active;
	char vs[64], rs[64];

	if (!st)
		return;
	ops->stats(&d->be, st);
	bprintf(b, "# HELP xlb_vip_packets_total Packets balanced for a VIP.\n"
		   "# TYPE xlb_vip_packets_total counter\n");
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		struct xlb_counters k;

		ops->vip_counters(&d->be, v->id, &k);
		bprintf(b, "xlb_vip_packets_total{vip=\"%s\",port=\"%u\",proto=\"%s\"} %llu\n",
			xlb_addr_str(&v->addr, vs, sizeof(vs)), v->port, xlb_proto_name(v->proto),
			(unsigned long long)k.packets);
	}
	bprintf(b, "# HELP xlb_vip_bytes_total Bytes balanced for a VIP.\n"
		   "# TYPE xlb_vip_bytes_total counter\n");
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		struct xlb_counters k;

		ops->vip_counters(&d->be, v->id, &k);
		bprintf(b, "xlb_vip_bytes_total{vip=\"%s\",port=\"%u\",proto=\"%s\"} %llu\n",
			xlb_addr_str(&v->addr, vs, sizeof(vs)), v->port, xlb_proto_name(v->proto),
			(unsigned long long)k.bytes);
	}
	bprintf(b, "# HELP xlb_vip_new_flows_total New flows (connection table inserts) of a VIP.\n"
		   "# TYPE xlb_vip_new_flows_total counter\n");
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		struct xlb_counters k;

		ops->vip_counters(&d->be, v->id, &k);
		bprintf(b, "xlb_vip_new_flows_total{vip=\"%s\",port=\"%u\",proto=\"%s\"} %llu\n",
			xlb_addr_str(&v->addr, vs, sizeof(vs)), v->port, xlb_proto_name(v->proto),
			(unsigned long long)k.new_flows);
	}
	bprintf(b, "# HELP xlb_real_packets_total Packets sent to a real.\n"
		   "# TYPE xlb_real_packets_total counter\n"
		   "# HELP xlb_real_bytes_total Bytes sent to a real.\n"
		   "# TYPE xlb_real_bytes_total counter\n"
		   "# HELP xlb_real_new_flows_total New flows (connection table inserts) to a real.\n"
		   "# TYPE xlb_real_new_flows_total counter\n"
		   "# HELP xlb_real_up Health of a real (1 up or unchecked, 0 down).\n"
		   "# TYPE xlb_real_up gauge\n"
		   "# HELP xlb_real_in_ring Whether a real holds slots of its VIP's Maglev ring.\n"
		   "# TYPE xlb_real_in_ring gauge\n"
		   "# HELP xlb_real_ring_slots Slots a real holds in its VIP's Maglev ring.\n"
		   "# TYPE xlb_real_ring_slots gauge\n"
		   "# HELP xlb_real_weight Configured weight of a real.\n"
		   "# TYPE xlb_real_weight gauge\n"
		   "# HELP xlb_real_active_flows Connection-table entries of a real that are active "
		   "(TCP established and not closed by the client, UDP within its timeout).\n"
		   "# TYPE xlb_real_active_flows gauge\n");
	active = calloc(d->settings.max_reals, sizeof(*active));
	if (active && (!ops->conn_active ||
		       ops->conn_active(&d->be, active, d->settings.max_reals, 0) < 0)) {
		free(active);
		active = NULL;
	}
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		uint32_t slots[v->real_cnt ? v->real_cnt : 1];

		xlbd_ring_slots(d, v, slots);
		xlb_addr_str(&v->addr, vs, sizeof(vs));
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			struct xlb_counters k;
			char lbl[200];

			ops->real_counters(&d->be, r->id, &k);
			snprintf(lbl, sizeof(lbl), "vip=\"%s\",port=\"%u\",proto=\"%s\",real=\"%s\",state=\"%s\"",
				 vs, v->port, xlb_proto_name(v->proto),
				 xlb_addr_str(&r->addr, rs, sizeof(rs)), xlb_real_state_name(r->state));
			bprintf(b, "xlb_real_packets_total{%s} %llu\n", lbl, (unsigned long long)k.packets);
			bprintf(b, "xlb_real_bytes_total{%s} %llu\n", lbl, (unsigned long long)k.bytes);
			bprintf(b, "xlb_real_new_flows_total{%s} %llu\n", lbl,
				(unsigned long long)k.new_flows);
			bprintf(b, "xlb_real_up{%s} %d\n", lbl,
				!strcmp(xlbd_health_str(d, v, r), "up") ||
					!strcmp(xlbd_health_str(d, v, r), "unchecked") ||
					!strcmp(xlbd_health_str(d, v, r), "unknown"));
			bprintf(b, "xlb_real_in_ring{%s} %d\n", lbl, slots[j] > 0);
			bprintf(b, "xlb_real_ring_slots{%s} %u\n", lbl, slots[j]);
			bprintf(b, "xlb_real_weight{%s} %u\n", lbl, r->weight);
			if (active && r->id < d->settings.max_reals)
				bprintf(b, "xlb_real_active_flows{%s} %u\n", lbl, active[r->id]);
		}
	}
	free(active);
	bprintf(b, "# HELP xlb_reason_packets_total Packets by final verdict reason of the dataplane.\n"
		   "# TYPE xlb_reason_packets_total counter\n");
	for (size_t r = 1; r < st->reason_cnt; r++)
		bprintf(b, "xlb_reason_packets_total{reason=\"%s\"} %llu\n", st->reason_name[r],
			(unsigned long long)st->reason[r].packets);
	bprintf(b, "# HELP xlb_event_total Dataplane events (LRU hits and misses, new flows, ...).\n"
		   "# TYPE xlb_event_total counter\n");
	for (size_t e = 0; e < st->event_cnt; e++)
		bprintf(b, "xlb_event_total{event=\"%s\"} %llu\n", st->event_name[e],
			(unsigned long long)st->event[e].packets);
	bprintf(b,
		"# HELP xlb_lru_hit_ratio Connection-table hits over lookups since load.\n"
		"# TYPE xlb_lru_hit_ratio gauge\n"
		"xlb_lru_hit_ratio %.6f\n"
		"# HELP xlb_new_flows_total Flows inserted in the connection table.\n"
		"# TYPE xlb_new_flows_total counter\n"
		"xlb_new_flows_total %llu\n"
		"# HELP xlb_changes_total Changes applied through the API since start.\n"
		"# TYPE xlb_changes_total counter\n"
		"xlb_changes_total %llu\n",
		st->lru_hits + st->lru_misses ?
			(double)st->lru_hits / (double)(st->lru_hits + st->lru_misses) :
			0.0,
		(unsigned long long)st->new_flows, (unsigned long long)d->changes);
	free(st);
	render_io(d, b);
}

static mhd_result handle(void *cls, struct MHD_Connection *conn, const char *url,
			 const char *method, const char *version, const char *upload_data,
			 size_t *upload_data_size, void **con_cls)
{
	struct daemon *d = cls;
	struct MHD_Response *resp;
	struct buf b = { 0 };
	unsigned int status = MHD_HTTP_OK;
	mhd_result ret;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		bprintf(&b, "method not allowed\n");
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (strcmp(url, "/metrics")) {
		bprintf(&b, "xlbd: metrics are at /metrics\n");
		status = MHD_HTTP_NOT_FOUND;
	} else {
		pthread_mutex_lock(&d->lock);
		render(d, &b);
		pthread_mutex_unlock(&d->lock);
	}
	resp = MHD_create_response_from_buffer(b.len, b.p ? b.p : (char *)"", MHD_RESPMEM_MUST_COPY);
	free(b.p);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

int xlbd_metrics_start(struct daemon *d)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(d->metrics_port) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(d->metrics_port) };
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	const struct sockaddr *sa = (const struct sockaddr *)&sin;

	if (inet_pton(AF_INET6, d->metrics_addr, &sin6.sin6_addr) == 1) {
		flags |= MHD_USE_IPv6;
		sa = (const struct sockaddr *)&sin6;
	} else if (inet_pton(AF_INET, d->metrics_addr, &sin.sin_addr) != 1) {
		return -EINVAL;
	}
	d->mhd = MHD_start_daemon(flags, d->metrics_port, NULL, NULL, handle, d, MHD_OPTION_SOCK_ADDR,
				  sa, MHD_OPTION_CONNECTION_LIMIT, 16U, MHD_OPTION_CONNECTION_TIMEOUT,
				  5U, MHD_OPTION_END);
	return d->mhd ? 0 : -EADDRINUSE;
}

void xlbd_metrics_stop(struct daemon *d)
{
	if (d->mhd) {
		MHD_stop_daemon(d->mhd);
		d->mhd = NULL;
	}
}
