// SPDX-License-Identifier: MIT
/*
 * API handlers that read: ping, stats (dataplane counters per VIP and real,
 * reasons, events, LRU; ports and lcores where the backend has its own), status (backend, interfaces, verifier, settings),
 * health (probe state of every real) and export (the desired state in
 * apply's format).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xlbd.h"

static json_t *counters_json(const struct xlb_counters *k)
{
	return json_pack("{s:I, s:I, s:I}", "packets", (json_int_t)k->packets, "bytes",
			 (json_int_t)k->bytes, "new_flows", (json_int_t)k->new_flows);
}

static int op_stats(struct xlbd_req *c)
{
	struct daemon *d = c->d;
	const struct xlb_backend_ops *ops = d->be.ops;
	struct xlb_dp_stats *st = calloc(1, sizeof(*st));
	json_t *vips = json_array(), *reasons = json_object(), *events = json_object();
	double ratio;

	uint32_t *active = calloc(d->settings.max_reals, sizeof(*active));

	if (!st || !active) {
		free(st);
		free(active);
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	}
	ops->stats(&d->be, st);
	/* Active flows per real: a walk of the connection table. */
	if (!ops->conn_active || ops->conn_active(&d->be, active, d->settings.max_reals, 0) < 0)
		memset(active, 0, d->settings.max_reals * sizeof(*active));
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		uint32_t slots[v->real_cnt ? v->real_cnt : 1];
		struct xlb_counters k;
		json_t *vj, *reals = json_array();
		char vs[80];

		xlbd_ring_slots(d, v, slots);
		ops->vip_counters(&d->be, v->id, &k);
		vj = json_pack("{s:s, s:I, s:o}", "vip", xlbd_vip_str(v, vs, sizeof(vs)), "id",
			       (json_int_t)v->id, "counters", counters_json(&k));
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			char rs[64];

			ops->real_counters(&d->be, r->id, &k);
			json_array_append_new(
				reals,
				json_pack("{s:s, s:I, s:s, s:s, s:I, s:o, s:I}", "address",
					  xlb_addr_str(&r->addr, rs, sizeof(rs)), "id", (json_int_t)r->id,
					  "state", xlb_real_state_name(r->state), "health",
					  xlbd_health_str(d, v, r),
					  "slots", (json_int_t)slots[j], "counters", counters_json(&k),
					  "active_flows",
					  (json_int_t)(r->id < d->settings.max_reals ? active[r->id] : 0)));
		}
		json_object_set_new(vj, "reals", reals);
		json_array_append_new(vips, vj);
	}
	for (size_t r = 1; r < st->reason_cnt; r++)
		json_object_set_new(reasons, st->reason_name[r], json_integer((json_int_t)st->reason[r].packets));
	for (size_t e = 0; e < st->event_cnt; e++)
		json_object_set_new(events, st->event_name[e], json_integer((json_int_t)st->event[e].packets));
	ratio = st->lru_hits + st->lru_misses ?
			(double)st->lru_hits / (double)(st->lru_hits + st->lru_misses) :
			0.0;
	c->result = json_pack("{s:o, s:o, s:o, s:{s:I, s:I, s:f}, s:I}", "vips", vips, "reasons",
			      reasons, "events", events, "lru", "hits", (json_int_t)st->lru_hits,
			      "misses", (json_int_t)st->lru_misses, "hit_ratio", ratio, "new_flows",
			      (json_int_t)st->new_flows);
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		json_object_set_new(c->result, "time_ns",
				    json_integer((json_int_t)ts.tv_sec * 1000000000 + ts.tv_nsec));
	}
	free(st);
	free(active);
	{
		json_t *io = xlbd_io_json(d);

		if (io)
			json_object_update_new(c->result, io);
	}
	return 0;
}

static int op_status(struct xlbd_req *c)
{
	struct daemon *d = c->d;
	json_t *ifaces = json_array();
	size_t nreals = 0;
	char a[64];

	for (size_t i = 0; i < d->settings.iface_cnt; i++)
		json_array_append_new(ifaces, json_string(d->settings.ifaces[i]));
	for (size_t i = 0; i < d->state.vip_cnt; i++)
		nreals += d->state.vips[i].real_cnt;
	c->result = json_pack(
		"{s:s, s:I, s:I, s:I, s:I, s:o, s:{s:o, s:s, s:I, s:I, s:I, s:I, s:s, s:s}}", "version",
		XLB_VERSION, "uptime_s", (json_int_t)((xlbd_now_ns() - d->started_ns) / 1000000000ull),
		"vips", (json_int_t)d->state.vip_cnt, "reals", (json_int_t)nreals, "changes",
		(json_int_t)d->changes, "dataplane", d->be.ops->status(&d->be), "settings",
		"interfaces", ifaces, "gateway_mac",
		(snprintf(a, sizeof(a), "%02x:%02x:%02x:%02x:%02x:%02x", d->settings.gw_mac[0],
			  d->settings.gw_mac[1], d->settings.gw_mac[2], d->settings.gw_mac[3],
			  d->settings.gw_mac[4], d->settings.gw_mac[5]),
		 a),
		"max_vips", (json_int_t)d->settings.max_vips, "max_reals",
		(json_int_t)d->settings.max_reals, "ring_size", (json_int_t)d->settings.ring_size, "lru_size",
		(json_int_t)d->settings.lru_size, "metrics",
		d->metrics_port ? d->metrics_addr : "off", "socket", d->sock_path);
	if (d->metrics_port)
		json_object_set_new(json_object_get(c->result, "settings"), "metrics_port",
				    json_integer(d->metrics_port));
	return 0;
}

static int op_health(struct xlbd_req *c)
{
	struct daemon *d = c->d;
	json_t *out = json_array();

	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		uint32_t slots[v->real_cnt ? v->real_cnt : 1];
		char vs[80];

		xlbd_ring_slots(d, v, slots);
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			struct real_health *h = &d->health[r->id];
			char rs[64];

			json_array_append_new(
				out, json_pack("{s:s, s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:s}", "vip",
					       xlbd_vip_str(v, vs, sizeof(vs)), "real",
					       xlb_addr_str(&r->addr, rs, sizeof(rs)), "check",
					       xlb_hc_type_name(v->hc.type), "health",
					       xlbd_health_str(d, v, r),
					       "in_ring", slots[j] > 0, "slots", (json_int_t)slots[j], "probes",
					       (json_int_t)h->probes, "failures",
					       (json_int_t)h->failures, "last_error", h->last_error));
		}
	}
	c->result = json_pack("{s:o}", "reals", out);
	return 0;
}

static int op_export(struct xlbd_req *c)
{
	c->result = xlb_state_to_json(&c->d->state, false);
	return 0;
}

static int op_ping(struct xlbd_req *c)
{
	c->result = json_pack("{s:s}", "version", XLB_VERSION);
	return 0;
}

const struct xlbd_op xlbd_ops_info[] = {
	{ "ping", op_ping },	 { "stats", op_stats },	  { "status", op_status },
	{ "health", op_health }, { "export", op_export }, { NULL, NULL },
};
