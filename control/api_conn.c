// SPDX-License-Identifier: MIT
/*
 * API handlers for the connection table: conn.lookup (which real a flow is
 * on, or would go to), conn.list (a VIP's entries) and conn.flush (forget a
 * VIP's entries, or one real's: their flows follow the ring again).
 *
 * "Would go to" is what a new flow meets: the flow hash of xlb_shared.h
 * (xlb_flow_hash_words, with the VIP's hash flags) over the ring xlbd last
 * published for the VIP.  QUIC server ids and session affinity, which
 * depend on the packet and on other flows, are not part of the answer.
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xlbd.h"

#define CONN_LIST_MAX 10000

static const char *const conn_state_names[] = { "new", "established", "closed" };

static const struct xlb_real_cfg *real_by_id(const struct xlb_vip_cfg *v, uint32_t id)
{
	for (size_t i = 0; i < v->real_cnt; i++)
		if (v->reals[i].id == id)
			return &v->reals[i];
	return NULL;
}

static json_t *conn_json(const struct xlb_vip_cfg *v, const struct xlb_dp_conn *c, uint64_t now)
{
	const struct xlb_real_cfg *r = real_by_id(v, c->real_id);
	char cs[64], rs[64];
	json_t *j;

	j = json_pack("{s:s, s:I, s:s, s:I, s:s}", "client", xlb_addr_str(&c->client, cs, sizeof(cs)),
		      "port", (json_int_t)c->cport, "real",
		      r ? xlb_addr_str(&r->addr, rs, sizeof(rs)) : "(gone)", "real_id",
		      (json_int_t)c->real_id, "state",
		      c->state < 3 ? conn_state_names[c->state] : "unknown");
	if (j && c->proto == IPPROTO_UDP && c->atime_ns)
		json_object_set_new(j, "idle_s", json_real((double)(now - c->atime_ns) / 1e9));
	if (j && c->vport != v->port)
		json_object_set_new(j, "vport", json_integer(c->vport));
	return j;
}

/* The VIP named by args.vip, and the real args.real names (0: none given). */
static int conn_target(struct xlbd_req *c, struct xlb_vip_cfg **ret_vip, uint32_t *ret_real)
{
	const json_t *vj = json_object_get(c->args, "vip"), *rj = json_object_get(c->args, "real");
	struct xlb_real_cfg *r;
	struct xlb_ip a;
	int ret;

	if (!vj)
		return xlb_err_set(c->err, -EINVAL, "missing field \"vip\"");
	ret = xlbd_find_vip(vj, &c->d->state, ret_vip, c->err);
	if (ret)
		return ret;
	*ret_real = 0;
	if (!rj)
		return 0;
	if (!json_is_string(rj) || xlb_addr_parse(json_string_value(rj), &a))
		return xlb_err_set(c->err, -EINVAL, "\"real\" must be an address");
	r = xlb_vip_find_real(*ret_vip, &a);
	if (!r)
		return xlb_err_set(c->err, -ENOENT, "no real %s in the VIP", json_string_value(rj));
	*ret_real = r->id;
	return 0;
}

static int op_conn_lookup(struct xlbd_req *c)
{
	struct daemon *d = c->d;
	const json_t *cj = json_object_get(c->args, "client");
	struct xlb_dp_conn key = { 0 }, ent;
	struct xlb_flow_key fk = { 0 };
	const struct xlb_real_cfg *r;
	struct shadow_vip *s;
	struct xlb_vip_cfg *v;
	uint32_t real_id, slot;
	uint64_t port = 0;
	char rs[64];
	int ret;

	ret = conn_target(c, &v, &real_id);
	if (ret)
		return ret;
	if (!cj || !json_is_string(cj) || xlb_addr_parse(json_string_value(cj), &key.client) ||
	    key.client.family != v->addr.family)
		return xlb_err_set(c->err, -EINVAL, "\"client\" must be an address of the VIP's family");
	if (!json_is_integer(json_object_get(c->args, "port")) ||
	    (port = (uint64_t)json_integer_value(json_object_get(c->args, "port"))) > 65535)
		return xlb_err_set(c->err, -EINVAL, "\"port\" must be the client's port, 0..65535");
	key.cport = (uint16_t)port;
	key.vip = v->addr;
	key.vport = v->port;
	if (json_is_integer(json_object_get(c->args, "vport")))
		key.vport = (uint16_t)json_integer_value(json_object_get(c->args, "vport"));
	key.proto = v->proto;
	if (!d->be.ops->conn_lookup)
		return xlb_err_set(c->err, -EOPNOTSUPP, "the %s backend has no connection table",
				   d->be.ops->name);
	ret = d->be.ops->conn_lookup(&d->be, &key, &ent);
	if (ret < 0)
		return xlb_err_set(c->err, ret, "connection table lookup: %s", strerror(-ret));
	if (ret == 1 && !(v->flags & XLB_VIP_F_NO_LRU)) {
		c->result = conn_json(v, &ent, xlbd_now_ns());
		json_object_set_new(c->result, "from", json_string("table"));
		json_object_set_new(c->result, "hash", json_integer(ent.hash));
		return 0;
	}
	/* Not in the table: what a new flow gets from the published ring. */
	s = &d->svips[v->id];
	if (!s->present || !s->ring_known)
		return xlb_err_set(c->err, -ENOENT, "the VIP's ring is not published yet");
	memcpy(fk.src.bytes, key.client.bytes, key.client.family == AF_INET ? 4 : 16);
	memcpy(fk.dst.bytes, v->addr.bytes, v->addr.family == AF_INET ? 4 : 16);
	fk.sport = htons(key.cport);
	fk.dport = htons(key.vport);
	fk.proto = v->proto;
	fk.family = v->addr.family == AF_INET ? XLB_FAMILY_V4 : XLB_FAMILY_V6;
	ent.hash = xlb_flow_hash_words(&fk, v->flags);
	slot = ent.hash % d->settings.ring_size;
	r = real_by_id(v, s->ring[slot]);
	c->result = json_pack("{s:s, s:I, s:s, s:I, s:s, s:I, s:I}", "client", json_string_value(cj),
			      "port", (json_int_t)key.cport, "real",
			      r ? xlb_addr_str(&r->addr, rs, sizeof(rs)) : "(none: empty ring)",
			      "real_id", (json_int_t)s->ring[slot], "from", "ring", "hash",
			      (json_int_t)ent.hash, "slot", (json_int_t)slot);
	return 0;
}

static int op_conn_list(struct xlbd_req *c)
{
	struct daemon *d = c->d;
	struct xlb_conn_filter f = { 0 };
	struct xlb_dp_conn *ents;
	struct xlb_vip_cfg *v;
	uint64_t now = xlbd_now_ns();
	json_t *list;
	int n, ret;

	ret = conn_target(c, &v, &f.real_id);
	if (ret)
		return ret;
	if (!d->be.ops->conn_list)
		return xlb_err_set(c->err, -EOPNOTSUPP, "the %s backend has no connection table",
				   d->be.ops->name);
	f.vip = v->addr;
	f.vport = v->port;
	f.proto = v->proto;
	ents = calloc(CONN_LIST_MAX, sizeof(*ents));
	if (!ents)
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	n = d->be.ops->conn_list(&d->be, &f, ents, CONN_LIST_MAX);
	if (n < 0) {
		free(ents);
		return xlb_err_set(c->err, n, "connection table walk: %s", strerror(-n));
	}
	list = json_array();
	for (int i = 0; i < n && i < CONN_LIST_MAX; i++)
		json_array_append_new(list, conn_json(v, &ents[i], now));
	free(ents);
	c->result = json_pack("{s:o, s:i, s:b}", "conns", list, "count", n, "truncated",
			      n > CONN_LIST_MAX);
	return 0;
}

static int op_conn_flush(struct xlbd_req *c)
{
	struct daemon *d = c->d;
	struct xlb_conn_filter f = { 0 };
	struct xlb_vip_cfg *v;
	char vs[80];
	int n, ret;

	ret = conn_target(c, &v, &f.real_id);
	if (ret)
		return ret;
	if (!d->be.ops->conn_flush)
		return xlb_err_set(c->err, -EOPNOTSUPP, "the %s backend has no connection table",
				   d->be.ops->name);
	f.vip = v->addr;
	f.vport = v->port;
	f.proto = v->proto;
	n = d->be.ops->conn_flush(&d->be, &f);
	if (n < 0)
		return xlb_err_set(c->err, n, "connection table flush: %s", strerror(-n));
	xlbd_log(LOG_NOTICE, "uid %u pid %d: conn flush %s%s%s: %d entries", (unsigned)c->peer->uid,
		 (int)c->peer->pid, xlbd_vip_str(v, vs, sizeof(vs)), f.real_id ? " real " : "",
		 f.real_id ? json_string_value(json_object_get(c->args, "real")) : "", n);
	c->result = json_pack("{s:i}", "flushed", n);
	return 0;
}

const struct xlbd_op xlbd_ops_conn[] = {
	{ "conn.lookup", op_conn_lookup },
	{ "conn.list", op_conn_list },
	{ "conn.flush", op_conn_flush },
	{ NULL, NULL },
};
