// SPDX-License-Identifier: MIT
/*
 * xlbd - the xlb daemon.  It owns the desired state (VIPs and their reals),
 * keeps it in the store, programs the dataplane through a backend, serves the
 * JSON API on a UNIX socket, runs health checks and exports metrics.
 *
 * A change is one transaction: the new state is saved in an open store
 * transaction, the dataplane is reconciled to it, and only then is the
 * transaction committed.  If programming the dataplane fails, the dataplane
 * is reconciled back to the previous state and the transaction rolled back;
 * if the commit fails, the dataplane is reconciled back too.  Reconciling
 * works from a shadow of what was last pushed, so undoing a half-applied
 * change pushes exactly the parts that changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "xlbd.h"

#ifndef XLB_DATADIR
#define XLB_DATADIR "/usr/share/xlb"
#endif
#ifndef XLB_VERSION
#define XLB_VERSION "0.1.0"
#endif

#define MAX_CLIENTS 64

static int log_max_level = LOG_INFO;

void xlbd_log(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* "<N>" prefixes are read by journald as the syslog level of the line. */
	fprintf(stderr, "<%d>xlbd: %s\n", level, buf);
}

uint64_t xlbd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *xlbd_health_name(enum health_state s)
{
	return s == HEALTH_UP ? "up" : s == HEALTH_DOWN ? "down" : "unknown";
}

/* ---- reconcile ----------------------------------------------------------- */

bool xlbd_real_in_ring(const struct daemon *d, const struct xlb_vip_cfg *vip,
		       const struct xlb_real_cfg *r)
{
	if (r->state != XLB_REAL_ACTIVE || !r->weight)
		return false;
	if (vip->hc.type != XLB_HC_NONE && r->id < d->settings.max_reals &&
	    d->health[r->id].state == HEALTH_DOWN)
		return false;
	return true;
}

static int build_ring(struct daemon *d, const struct xlb_vip_cfg *vip, uint32_t *ring)
{
	struct xlb_maglev_real mr[vip->real_cnt ? vip->real_cnt : 1];
	uint32_t size = d->settings.ring_size;
	int ret;

	for (size_t i = 0; i < vip->real_cnt; i++) {
		const struct xlb_real_cfg *r = &vip->reals[i];

		mr[i].id = r->addr.bytes;
		mr[i].id_len = r->addr.family == AF_INET ? 4 : 16;
		mr[i].weight = xlbd_real_in_ring(d, vip, r) ? r->weight : 0;
	}
	ret = xlb_maglev_build(mr, vip->real_cnt, ring, size);
	if (ret)
		return ret;
	for (uint32_t s = 0; s < size; s++)
		ring[s] = ring[s] == XLB_RING_EMPTY ? 0 : vip->reals[ring[s]].id;
	return 0;
}

/*
 * A VIP's ring depends only on its reals' ids, addresses and effective
 * weights, in order: when those did not change since the last push, the
 * ring is not rebuilt (a Maglev build costs ~1-2 ms per VIP).
 */
static uint64_t ring_signature(const struct daemon *d, const struct xlb_vip_cfg *vip)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ vip->real_cnt;

	for (size_t i = 0; i < vip->real_cnt; i++) {
		const struct xlb_real_cfg *r = &vip->reals[i];
		uint32_t w = xlbd_real_in_ring(d, vip, r) ? r->weight : 0;
		const uint8_t *parts[3] = { (const uint8_t *)&r->id, r->addr.bytes, (const uint8_t *)&w };
		size_t lens[3] = { sizeof(r->id), sizeof(r->addr.bytes), sizeof(w) };

		for (int p = 0; p < 3; p++)
			for (size_t k = 0; k < lens[p]; k++) {
				h ^= parts[p][k];
				h *= 0x100000001b3ULL;
			}
	}
	return h;
}

static bool real_in_state(const struct xlb_state *st, uint32_t id, struct xlb_ip *ret_addr)
{
	for (size_t i = 0; i < st->vip_cnt; i++)
		for (size_t j = 0; j < st->vips[i].real_cnt; j++)
			if (st->vips[i].reals[j].id == id) {
				*ret_addr = st->vips[i].reals[j].addr;
				return true;
			}
	return false;
}

int xlbd_reconcile(struct daemon *d, const struct xlb_state *target, struct xlb_err *err)
{
	const struct xlb_backend_ops *ops = d->be.ops;
	uint32_t size = d->settings.ring_size;
	int ret;

	/* 1. Reals first, so no ring ever names a real the dataplane lacks. */
	for (size_t i = 0; i < target->vip_cnt; i++)
		for (size_t j = 0; j < target->vips[i].real_cnt; j++) {
			const struct xlb_real_cfg *r = &target->vips[i].reals[j];
			struct shadow_real *s = &d->sreals[r->id];

			if (s->present && xlb_addr_eq(&s->addr, &r->addr))
				continue;
			ret = ops->real_put(&d->be, r->id, &r->addr, err);
			if (ret)
				return ret;
			s->present = true;
			s->addr = r->addr;
		}

	/* 2. VIPs: a slot taken by another VIP is freed, then meta and ring pushed. */
	for (size_t i = 0; i < target->vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &target->vips[i];
		struct shadow_vip *s = &d->svips[v->id];
		bool same_key, meta_same, ring_same;
		uint64_t sig;

		same_key = s->present && s->port == v->port && s->proto == v->proto &&
			   xlb_addr_eq(&s->addr, &v->addr);
		if (s->present && !same_key) {
			ret = ops->vip_del(&d->be, &s->addr, s->port, s->proto, v->id, err);
			if (ret)
				return ret;
			s->present = false;
			s->ring_known = false;
		}
		sig = ring_signature(d, v);
		meta_same = s->present && s->flags == v->flags && s->encap == v->encap;
		if (meta_same && s->ring_known && s->ring_sig == sig)
			continue;
		ret = build_ring(d, v, d->scratch_ring);
		if (ret)
			return xlb_err_set(err, ret, "Maglev build failed: %s", strerror(-ret));
		if (!s->ring) {
			s->ring = malloc(size * sizeof(uint32_t));
			if (!s->ring)
				return xlb_err_set(err, -ENOMEM, "out of memory");
		}
		ring_same = s->present && s->ring_known &&
			    !memcmp(s->ring, d->scratch_ring, size * sizeof(uint32_t));
		if (meta_same && ring_same) {
			s->ring_sig = sig;
			continue;
		}
		ret = ops->vip_put(&d->be, v, ring_same ? NULL : d->scratch_ring, err);
		if (ret)
			return ret;
		s->present = true;
		s->addr = v->addr;
		s->port = v->port;
		s->proto = v->proto;
		s->flags = v->flags;
		s->encap = v->encap;
		memcpy(s->ring, d->scratch_ring, size * sizeof(uint32_t));
		s->ring_known = true;
		s->ring_sig = sig;
	}

	/* 3. VIPs that left. */
	for (uint32_t id = 0; id < d->settings.max_vips; id++) {
		struct shadow_vip *s = &d->svips[id];
		bool keep = false;

		if (!s->present)
			continue;
		for (size_t i = 0; i < target->vip_cnt && !keep; i++)
			keep = target->vips[i].id == id;
		if (keep)
			continue;
		/* The key may live on under another id: then it was overwritten, not left. */
		if (xlb_state_find_vip(target, &s->addr, s->port, s->proto)) {
			s->present = false;
			s->ring_known = false;
			continue;
		}
		ret = ops->vip_del(&d->be, &s->addr, s->port, s->proto, id, err);
		if (ret)
			return ret;
		s->present = false;
		s->ring_known = false;
	}

	/* 4. Reals that left, after no ring names them any more. */
	for (uint32_t id = 1; id < d->settings.max_reals; id++) {
		struct shadow_real *s = &d->sreals[id];
		struct xlb_ip a;

		if (!s->present || real_in_state(target, id, &a))
			continue;
		ret = ops->real_put(&d->be, id, NULL, err);
		if (ret)
			return ret;
		if (ops->hc_real_put)
			ops->hc_real_put(&d->be, XLB_HC_MARK(id), NULL, XLB_ENC_IPIP, NULL);
		s->present = false;
		memset(&d->health[id], 0, sizeof(d->health[id]));
	}
	return 0;
}

struct peer {
	uid_t uid;
	pid_t pid;
};

/* Apply `next` as one transaction; takes ownership of next. Lock held. */
static int commit_change(struct daemon *d, struct xlb_state *next, const struct peer *p,
			 const char *what, struct xlb_err *err)
{
	uint64_t t0 = xlbd_now_ns();
	struct xlb_err undo;
	int ret;

	ret = xlb_state_validate(next, &d->settings, err);
	if (ret)
		goto out_free;
	ret = xlb_store__begin(d->store, err);
	if (ret)
		goto out_free;
	ret = xlb_store__save(d->store, next, err);
	if (ret)
		goto out_rollback;
	ret = xlbd_reconcile(d, next, err);
	if (ret)
		goto out_undo;
	ret = xlb_store__commit(d->store, err);
	if (ret)
		goto out_undo_committed;
	xlb_state_free(&d->state);
	d->state = *next;
	d->changes++;
	xlbd_log(LOG_NOTICE, "uid %u pid %d: %s (%.1f ms)", (unsigned)p->uid, (int)p->pid, what,
		 (double)(xlbd_now_ns() - t0) / 1e6);
	return 0;

out_undo:
	xlb_store__rollback(d->store);
out_undo_committed:
	if (xlbd_reconcile(d, &d->state, &undo))
		xlbd_log(LOG_ERR, "undoing a failed change failed too: %s", undo.msg);
	xlbd_log(LOG_WARNING, "uid %u pid %d: %s failed: %s; rolled back", (unsigned)p->uid,
		 (int)p->pid, what, err->msg);
	goto out_free;
out_rollback:
	xlb_store__rollback(d->store);
out_free:
	xlb_state_free(next);
	return ret;
}

/* ---- API handlers -------------------------------------------------------- */

struct req_ctx {
	struct daemon *d;
	const json_t *args;
	const struct peer *peer;
	json_t *result;
	struct xlb_err *err;
};

static int find_vip_arg(struct req_ctx *c, const json_t *j, struct xlb_state *st,
			struct xlb_vip_cfg **ret)
{
	struct xlb_ip a;
	uint16_t port;
	uint8_t proto;
	char buf[64];
	int r;

	r = xlb_vip_key_from_json(j, &a, &port, &proto, c->err);
	if (r)
		return r;
	*ret = xlb_state_find_vip(st, &a, port, proto);
	if (!*ret)
		return xlb_err_set(c->err, -ENOENT, "no VIP %s:%u/%s", xlb_addr_str(&a, buf, sizeof(buf)),
				   port, xlb_proto_name(proto));
	return 0;
}

static const char *vip_str(const struct xlb_vip_cfg *v, char *buf, size_t len)
{
	char a[64];

	snprintf(buf, len, "%s%s%s:%u/%s", v->addr.family == AF_INET6 ? "[" : "",
		 xlb_addr_str(&v->addr, a, sizeof(a)), v->addr.family == AF_INET6 ? "]" : "", v->port,
		 xlb_proto_name(v->proto));
	return buf;
}

static int op_vip_add(struct req_ctx *c)
{
	struct xlb_vip_cfg v;
	struct xlb_state next;
	char what[160], vs[80];
	int r;

	r = xlb_vip_from_json(c->args, &v, false, c->err);
	if (r)
		return r;
	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = xlb_state_vip_add(&next, &c->d->settings, &v, c->err);
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	snprintf(what, sizeof(what), "vip add %s", vip_str(&v, vs, sizeof(vs)));
	r = commit_change(c->d, &next, c->peer, what, c->err);
	if (!r)
		c->result = xlb_vip_to_json(xlb_state_find_vip(&c->d->state, &v.addr, v.port, v.proto),
					    false);
	return r;
}

static int op_vip_del(struct req_ctx *c)
{
	struct xlb_vip_cfg *v;
	struct xlb_state next;
	char what[160], vs[80];
	int r;

	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = find_vip_arg(c, c->args, &next, &v);
	if (!r) {
		snprintf(what, sizeof(what), "vip del %s", vip_str(v, vs, sizeof(vs)));
		r = xlb_state_vip_del(&next, &v->addr, v->port, v->proto, c->err);
	}
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	return commit_change(c->d, &next, c->peer, what, c->err);
}

static int op_vip_set(struct req_ctx *c)
{
	struct xlb_vip_cfg *v, upd;
	struct xlb_state next;
	char what[160], vs[80];
	int r;

	/* The same object as vip.add: fields given replace the VIP's. */
	r = xlb_vip_from_json(c->args, &upd, false, c->err);
	if (r)
		return r;
	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = find_vip_arg(c, c->args, &next, &v);
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	if (json_object_get(c->args, "encap"))
		v->encap = upd.encap;
	if (json_object_get(c->args, "flags"))
		v->flags = upd.flags;
	if (json_object_get(c->args, "healthcheck"))
		v->hc = upd.hc;
	snprintf(what, sizeof(what), "vip set %s", vip_str(v, vs, sizeof(vs)));
	r = commit_change(c->d, &next, c->peer, what, c->err);
	if (!r)
		c->result = xlb_vip_to_json(
			xlb_state_find_vip(&c->d->state, &upd.addr, upd.port, upd.proto), false);
	return r;
}

static json_t *real_json(struct daemon *d, const struct xlb_vip_cfg *v, const struct xlb_real_cfg *r)
{
	json_t *j = xlb_real_to_json(r);
	struct real_health *h = &d->health[r->id];

	json_object_set_new(j, "health",
			    json_string(v->hc.type == XLB_HC_NONE ? "unchecked" :
								    xlbd_health_name(h->state)));
	json_object_set_new(j, "in_ring", json_boolean(xlbd_real_in_ring(d, v, r)));
	return j;
}

static json_t *vip_full_json(struct daemon *d, const struct xlb_vip_cfg *v)
{
	json_t *j = xlb_vip_to_json(v, false), *reals = json_array();
	size_t in_ring = 0;

	for (size_t i = 0; i < v->real_cnt; i++) {
		json_array_append_new(reals, real_json(d, v, &v->reals[i]));
		in_ring += xlbd_real_in_ring(d, v, &v->reals[i]);
	}
	json_object_set_new(j, "reals", reals);
	json_object_set_new(j, "reals_in_ring", json_integer((json_int_t)in_ring));
	return j;
}

static int op_vip_list(struct req_ctx *c)
{
	json_t *vips = json_array();

	for (size_t i = 0; i < c->d->state.vip_cnt; i++)
		json_array_append_new(vips, vip_full_json(c->d, &c->d->state.vips[i]));
	c->result = json_pack("{s:o}", "vips", vips);
	return 0;
}

static int op_vip_show(struct req_ctx *c)
{
	struct xlb_vip_cfg *v;
	int r = find_vip_arg(c, c->args, &c->d->state, &v);

	if (r)
		return r;
	c->result = vip_full_json(c->d, v);
	return 0;
}

/* real.* requests name their VIP in "vip". */
static int real_target(struct req_ctx *c, struct xlb_state *st, struct xlb_vip_cfg **ret_vip,
		       struct xlb_real_cfg *ret_real)
{
	const json_t *vj = json_object_get(c->args, "vip");
	json_t *rest;
	int r;

	if (!vj)
		return xlb_err_set(c->err, -EINVAL, "missing field \"vip\"");
	r = find_vip_arg(c, vj, st, ret_vip);
	if (r)
		return r;
	rest = json_deep_copy(c->args);
	json_object_del(rest, "vip");
	r = xlb_real_from_json(rest, ret_real, c->err);
	json_decref(rest);
	return r;
}

static int op_real_add(struct req_ctx *c)
{
	struct xlb_vip_cfg *v;
	struct xlb_real_cfg real;
	struct xlb_state next;
	char what[200], vs[80], rs[64];
	int r;

	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = real_target(c, &next, &v, &real);
	r = r ?: xlb_state_real_add(&next, &c->d->settings, v, &real, c->err);
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	snprintf(what, sizeof(what), "real add %s %s weight %u", vip_str(v, vs, sizeof(vs)),
		 xlb_addr_str(&real.addr, rs, sizeof(rs)), real.weight);
	return commit_change(c->d, &next, c->peer, what, c->err);
}

static int op_real_del(struct req_ctx *c)
{
	struct xlb_vip_cfg *v;
	struct xlb_real_cfg real;
	struct xlb_state next;
	char what[200], vs[80], rs[64];
	int r;

	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = real_target(c, &next, &v, &real);
	r = r ?: xlb_state_real_del(&next, v, &real.addr, c->err);
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	snprintf(what, sizeof(what), "real del %s %s", vip_str(v, vs, sizeof(vs)),
		 xlb_addr_str(&real.addr, rs, sizeof(rs)));
	return commit_change(c->d, &next, c->peer, what, c->err);
}

static int op_real_set(struct req_ctx *c)
{
	struct xlb_vip_cfg *v;
	struct xlb_real_cfg real, *cur;
	struct xlb_state next;
	char what[200], vs[80], rs[64];
	int r;

	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = real_target(c, &next, &v, &real);
	if (!r && !(cur = xlb_vip_find_real(v, &real.addr)))
		r = xlb_err_set(c->err, -ENOENT, "no real %s",
				xlb_addr_str(&real.addr, rs, sizeof(rs)));
	if (!r && !json_object_get(c->args, "weight") && !json_object_get(c->args, "state"))
		r = xlb_err_set(c->err, -EINVAL, "real.set needs \"weight\" or \"state\"");
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	if (json_object_get(c->args, "weight"))
		cur->weight = real.weight;
	if (json_object_get(c->args, "state"))
		cur->state = real.state;
	snprintf(what, sizeof(what), "real set %s %s weight %u state %s", vip_str(v, vs, sizeof(vs)),
		 xlb_addr_str(&real.addr, rs, sizeof(rs)), cur->weight, xlb_real_state_name(cur->state));
	return commit_change(c->d, &next, c->peer, what, c->err);
}

static int op_real_list(struct req_ctx *c)
{
	const json_t *vj = json_object_get(c->args, "vip");
	struct xlb_vip_cfg *v;
	json_t *reals;
	int r;

	if (!vj)
		return xlb_err_set(c->err, -EINVAL, "missing field \"vip\"");
	r = find_vip_arg(c, vj, &c->d->state, &v);
	if (r)
		return r;
	reals = json_array();
	for (size_t i = 0; i < v->real_cnt; i++)
		json_array_append_new(reals, real_json(c->d, v, &v->reals[i]));
	c->result = json_pack("{s:o}", "reals", reals);
	return 0;
}

static json_t *counters_json(const struct xlb_counters *k)
{
	return json_pack("{s:I, s:I, s:I}", "packets", (json_int_t)k->packets, "bytes",
			 (json_int_t)k->bytes, "new_flows", (json_int_t)k->new_flows);
}

static int op_stats(struct req_ctx *c)
{
	struct daemon *d = c->d;
	const struct xlb_backend_ops *ops = d->be.ops;
	struct xlb_dp_stats *st = calloc(1, sizeof(*st));
	json_t *vips = json_array(), *reasons = json_object(), *events = json_object();
	double ratio;

	if (!st)
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	ops->stats(&d->be, st);
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		struct xlb_counters k;
		json_t *vj, *reals = json_array();
		char vs[80];

		ops->vip_counters(&d->be, v->id, &k);
		vj = json_pack("{s:s, s:I, s:o}", "vip", vip_str(v, vs, sizeof(vs)), "id",
			       (json_int_t)v->id, "counters", counters_json(&k));
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			char rs[64];

			ops->real_counters(&d->be, r->id, &k);
			json_array_append_new(reals,
					      json_pack("{s:s, s:I, s:s, s:o}", "address",
							xlb_addr_str(&r->addr, rs, sizeof(rs)), "id",
							(json_int_t)r->id, "state",
							xlb_real_state_name(r->state), "counters",
							counters_json(&k)));
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
	return 0;
}

static int op_status(struct req_ctx *c)
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
		"{s:s, s:I, s:I, s:I, s:I, s:o, s:{s:o, s:s, s:I, s:I, s:s, s:s}}", "version",
		XLB_VERSION, "uptime_s", (json_int_t)((xlbd_now_ns() - d->started_ns) / 1000000000ull),
		"vips", (json_int_t)d->state.vip_cnt, "reals", (json_int_t)nreals, "changes",
		(json_int_t)d->changes, "dataplane", d->be.ops->status(&d->be), "settings",
		"interfaces", ifaces, "gateway_mac",
		(snprintf(a, sizeof(a), "%02x:%02x:%02x:%02x:%02x:%02x", d->settings.gw_mac[0],
			  d->settings.gw_mac[1], d->settings.gw_mac[2], d->settings.gw_mac[3],
			  d->settings.gw_mac[4], d->settings.gw_mac[5]),
		 a),
		"ring_size", (json_int_t)d->settings.ring_size, "lru_size",
		(json_int_t)d->settings.lru_size, "metrics",
		d->metrics_port ? d->metrics_addr : "off", "socket", d->sock_path);
	if (d->metrics_port)
		json_object_set_new(json_object_get(c->result, "settings"), "metrics_port",
				    json_integer(d->metrics_port));
	return 0;
}

static int op_health(struct req_ctx *c)
{
	struct daemon *d = c->d;
	json_t *out = json_array();

	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		char vs[80];

		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			struct real_health *h = &d->health[r->id];
			char rs[64];

			json_array_append_new(
				out, json_pack("{s:s, s:s, s:s, s:s, s:b, s:I, s:I, s:s}", "vip",
					       vip_str(v, vs, sizeof(vs)), "real",
					       xlb_addr_str(&r->addr, rs, sizeof(rs)), "check",
					       xlb_hc_type_name(v->hc.type), "health",
					       v->hc.type == XLB_HC_NONE ? "unchecked" :
									   xlbd_health_name(h->state),
					       "in_ring", xlbd_real_in_ring(d, v, r), "probes",
					       (json_int_t)h->probes, "failures",
					       (json_int_t)h->failures, "last_error", h->last_error));
		}
	}
	c->result = json_pack("{s:o}", "reals", out);
	return 0;
}

static int op_export(struct req_ctx *c)
{
	c->result = xlb_state_to_json(&c->d->state, false);
	return 0;
}

/* The changes between two states, for apply's answer (and --dry-run). */
static json_t *state_diff(const struct xlb_state *cur, const struct xlb_state *next)
{
	json_t *out = json_array();
	char vs[80], rs[64], line[256];

	for (size_t i = 0; i < next->vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &next->vips[i];
		const struct xlb_vip_cfg *o = xlb_state_find_vip(cur, &v->addr, v->port, v->proto);

		if (!o) {
			snprintf(line, sizeof(line), "+ vip %s", vip_str(v, vs, sizeof(vs)));
			json_array_append_new(out, json_string(line));
		} else if (o->flags != v->flags || o->encap != v->encap ||
			   memcmp(&o->hc, &v->hc, sizeof(o->hc))) {
			snprintf(line, sizeof(line), "~ vip %s", vip_str(v, vs, sizeof(vs)));
			json_array_append_new(out, json_string(line));
		}
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			const struct xlb_real_cfg *p = o ? xlb_vip_find_real(o, &r->addr) : NULL;

			if (!p)
				snprintf(line, sizeof(line), "+ real %s %s weight %u %s",
					 vip_str(v, vs, sizeof(vs)), xlb_addr_str(&r->addr, rs, sizeof(rs)),
					 r->weight, xlb_real_state_name(r->state));
			else if (p->weight != r->weight || p->state != r->state)
				snprintf(line, sizeof(line), "~ real %s %s weight %u->%u %s->%s",
					 vip_str(v, vs, sizeof(vs)), xlb_addr_str(&r->addr, rs, sizeof(rs)),
					 p->weight, r->weight, xlb_real_state_name(p->state),
					 xlb_real_state_name(r->state));
			else
				continue;
			json_array_append_new(out, json_string(line));
		}
		if (o)
			for (size_t j = 0; j < o->real_cnt; j++)
				if (!xlb_vip_find_real(v, &o->reals[j].addr)) {
					snprintf(line, sizeof(line), "- real %s %s", vip_str(v, vs, sizeof(vs)),
						 xlb_addr_str(&o->reals[j].addr, rs, sizeof(rs)));
					json_array_append_new(out, json_string(line));
				}
	}
	for (size_t i = 0; i < cur->vip_cnt; i++) {
		const struct xlb_vip_cfg *o = &cur->vips[i];

		if (!xlb_state_find_vip(next, &o->addr, o->port, o->proto)) {
			snprintf(line, sizeof(line), "- vip %s", vip_str(o, vs, sizeof(vs)));
			json_array_append_new(out, json_string(line));
		}
	}
	return out;
}

static int op_apply(struct req_ctx *c)
{
	const json_t *cfg = json_object_get(c->args, "config");
	const json_t *dry = json_object_get(c->args, "dry_run");
	struct xlb_state next;
	json_t *diff;
	int r;

	if (!cfg)
		return xlb_err_set(c->err, -EINVAL, "missing field \"config\"");
	if (dry && !json_is_boolean(dry))
		return xlb_err_set(c->err, -EINVAL, "\"dry_run\" must be a boolean");
	r = xlb_state_from_json(cfg, &next, c->err);
	if (r)
		return r;
	r = xlb_state_assign_ids(&next, &c->d->state, &c->d->settings, c->err);
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	diff = state_diff(&c->d->state, &next);
	if (json_is_true(dry) || !json_array_size(diff)) {
		xlb_state_free(&next);
		c->result = json_pack("{s:o, s:b}", "changes", diff, "applied", 0);
		return 0;
	}
	{
		char what[64];

		snprintf(what, sizeof(what), "apply (%zu changes)", json_array_size(diff));
		r = commit_change(c->d, &next, c->peer, what, c->err);
	}
	if (r) {
		json_decref(diff);
		return r;
	}
	c->result = json_pack("{s:o, s:b}", "changes", diff, "applied", 1);
	return 0;
}

static int op_ping(struct req_ctx *c)
{
	c->result = json_pack("{s:s}", "version", XLB_VERSION);
	return 0;
}

static const struct {
	const char *op;
	int (*fn)(struct req_ctx *c);
} ops_table[] = {
	{ "ping", op_ping },	       { "vip.add", op_vip_add },   { "vip.del", op_vip_del },
	{ "vip.set", op_vip_set },     { "vip.list", op_vip_list }, { "vip.show", op_vip_show },
	{ "real.add", op_real_add },   { "real.del", op_real_del }, { "real.set", op_real_set },
	{ "real.list", op_real_list }, { "stats", op_stats },	    { "status", op_status },
	{ "health", op_health },       { "export", op_export },	    { "apply", op_apply },
};

/* Handle one request line; returns the response (never NULL). */
static json_t *handle_request(struct daemon *d, const char *buf, size_t len, const struct peer *p)
{
	struct xlb_request req;
	struct xlb_err err = { 0 };
	struct req_ctx c = { .d = d, .peer = p, .err = &err };
	json_t *resp;
	int r;

	r = xlb_request_parse(buf, len, &req, &err);
	if (r) {
		xlbd_log(LOG_INFO, "uid %u pid %d: bad request: %s", (unsigned)p->uid, (int)p->pid,
			 err.msg);
		return xlb_response_error(&err);
	}
	c.args = req.args;
	r = -EOPNOTSUPP;
	xlb_err_set(&err, r, "unknown op \"%s\"", req.op);
	for (size_t i = 0; i < sizeof(ops_table) / sizeof(ops_table[0]); i++)
		if (!strcmp(ops_table[i].op, req.op)) {
			pthread_mutex_lock(&d->lock);
			r = ops_table[i].fn(&c);
			pthread_mutex_unlock(&d->lock);
			break;
		}
	if (r) {
		json_decref(c.result);
		resp = xlb_response_error(&err);
	} else {
		resp = xlb_response_ok(c.result);
	}
	{
		json_t *id = json_object_get(req.root, "id");

		if (id)
			json_object_set(resp, "id", id);
	}
	json_decref(req.root);
	return resp;
}

/* ---- socket loop --------------------------------------------------------- */

struct client {
	int fd;
	struct peer peer;
	char *buf;
	size_t len;
};

static int send_resp(struct client *cl, json_t *resp)
{
	char *text = json_dumps(resp, JSON_COMPACT);
	size_t n, off = 0;

	json_decref(resp);
	if (!text)
		return -ENOMEM;
	n = strlen(text);
	text[n] = '\n'; /* json_dumps' NUL becomes the line end */
	n++;
	while (off < n) {
		ssize_t w = send(cl->fd, text + off, n - off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			free(text);
			return -errno; /* includes a peer that does not read (SO_SNDTIMEO) */
		}
		off += (size_t)w;
	}
	free(text);
	return 0;
}

static void client_close(struct client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	free(cl->buf);
	cl->fd = -1;
	cl->buf = NULL;
	cl->len = 0;
}

/* Read what is there; answer every complete line.  Returns false to drop the client. */
static bool client_readable(struct daemon *d, struct client *cl)
{
	ssize_t r;

	if (!cl->buf) {
		cl->buf = malloc(XLB_API_MAX_REQUEST + 2);
		if (!cl->buf)
			return false;
	}
	r = recv(cl->fd, cl->buf + cl->len, XLB_API_MAX_REQUEST + 1 - cl->len, MSG_DONTWAIT);
	if (r < 0)
		return errno == EAGAIN || errno == EINTR;
	if (r == 0)
		return false;
	cl->len += (size_t)r;
	for (;;) {
		char *nl = memchr(cl->buf, '\n', cl->len);
		size_t line;

		if (!nl)
			break;
		line = (size_t)(nl - cl->buf);
		if (line && send_resp(cl, handle_request(d, cl->buf, line, &cl->peer)))
			return false;
		memmove(cl->buf, nl + 1, cl->len - line - 1);
		cl->len -= line + 1;
	}
	if (cl->len > XLB_API_MAX_REQUEST) {
		struct xlb_err err;

		xlb_err_set(&err, -E2BIG, "request larger than %d bytes without a newline; closing",
			    XLB_API_MAX_REQUEST);
		xlbd_log(LOG_WARNING, "uid %u pid %d: %s", (unsigned)cl->peer.uid, (int)cl->peer.pid,
			 err.msg);
		send_resp(cl, xlb_response_error(&err));
		return false;
	}
	return true;
}

static int listen_socket(const char *path, const char *group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	{
		char dir[sizeof(sa.sun_path)], *slash;

		strcpy(dir, path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			mkdir(dir, 0755);
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		int e = -errno;

		umask(old);
		close(fd);
		return e;
	}
	umask(old);
	if (group && *group) {
		struct group *g = getgrnam(group);

		if (!g || chown(path, (uid_t)-1, g->gr_gid))
			xlbd_log(LOG_WARNING, "cannot give socket to group %s, ignoring", group);
	}
	return fd;
}

/* ---- configuration ------------------------------------------------------- */

struct options {
	const char *config;
	const char *state_dir;
	const char *sock;
	const char *sock_group;
	const char *pin_root;
	const char *object;
	const char *backend;
	const char *metrics_addr;
	int metrics_port;
	enum xlb_verify_policy verify;
	enum xlb_xdp_mode xdp_mode;
	bool skb_mode;
	bool cleanup;
	struct xlb_settings set;
	bool set_given;
	json_t *initial; /* "vips" of the config file: applied when the store is empty */
};

static int parse_src(const char *s, struct xlb_ip *addr, uint8_t *plen)
{
	char buf[80], *slash;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (xlb_addr_parse(buf, addr))
		return -EINVAL;
	*plen = addr->family == AF_INET ? 32 : 128;
	if (slash) {
		char *end;
		long n = strtol(slash + 1, &end, 10);

		if (*end || n < 0 || n > *plen)
			return -EINVAL;
		*plen = (uint8_t)n;
	}
	return 0;
}

static int parse_enum(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static const char *const verify_names[] = { "enforce", "warn", "off" };
static const char *const xdp_mode_names[] = { "auto", "dispatcher", "single" };

static int add_iface(struct options *o, const char *name)
{
	if (o->set.iface_cnt >= XLB_MAX_IFACES || strlen(name) >= XLB_IFNAME_LEN)
		return -EINVAL;
	strcpy(o->set.ifaces[o->set.iface_cnt++], name);
	o->set_given = true;
	return 0;
}

/* The daemon's config file: settings plus an optional initial "vips" list. */
static int load_config_file(struct options *o, struct xlb_err *err)
{
	static const char *const keys[] = { "interfaces", "gateway_mac", "src4", "src6", "gue_port",
					    "lru_size", "max_new_flows_per_sec", "backend",
					    "object", "pin_root", "state_dir", "socket",
					    "socket_group", "metrics_address", "metrics_port",
					    "verify", "xdp_mode", "skb_mode", "vips", NULL };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	json_t *j, *v;
	const char *key;

	f = fopen(o->config, "r");
	if (!f)
		return xlb_err_set(err, -errno, "cannot open %s: %s", o->config, strerror(errno));
	text = malloc(1024 * 1024 + 1);
	if (text)
		len = fread(text, 1, 1024 * 1024 + 1, f);
	fclose(f);
	if (!text)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	j = xlb_config_parse(text, len, err);
	free(text);
	if (!j)
		return err->code;
	if (!json_is_object(j)) {
		json_decref(j);
		return xlb_err_set(err, -EINVAL, "%s: must be a mapping", o->config);
	}
	json_object_foreach(j, key, v) {
		const char *const *k;
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;
		int bad = 0;

		for (k = keys; *k && strcmp(*k, key); k++)
			;
		if (!*k) {
			json_decref(j);
			return xlb_err_set(err, -EINVAL, "%s: unknown setting \"%.40s\"", o->config, key);
		}
		if (!strcmp(key, "interfaces")) {
			size_t i;
			json_t *e;

			if (!json_is_array(v))
				bad = 1;
			o->set.iface_cnt = 0;
			json_array_foreach(v, i, e)
				if (!json_is_string(e) || add_iface(o, json_string_value(e)))
					bad = 1;
		} else if (!strcmp(key, "gateway_mac")) {
			bad = !s || xlb_mac_parse(s, o->set.gw_mac);
		} else if (!strcmp(key, "src4")) {
			bad = !s || parse_src(s, &o->set.src4, &o->set.src4_plen) ||
			      o->set.src4.family != AF_INET;
		} else if (!strcmp(key, "src6")) {
			bad = !s || parse_src(s, &o->set.src6, &o->set.src6_plen) ||
			      o->set.src6.family != AF_INET6;
		} else if (!strcmp(key, "gue_port")) {
			bad = !json_is_integer(v) || json_integer_value(v) < 0 ||
			      json_integer_value(v) > 65535;
			o->set.gue_port = (uint16_t)json_integer_value(v);
		} else if (!strcmp(key, "lru_size")) {
			bad = !json_is_integer(v) || json_integer_value(v) < 1 ||
			      json_integer_value(v) > 100000000;
			o->set.lru_size = (uint32_t)json_integer_value(v);
		} else if (!strcmp(key, "max_new_flows_per_sec")) {
			bad = !json_is_integer(v) || json_integer_value(v) < 0 ||
			      json_integer_value(v) > UINT32_MAX;
			o->set.max_new_flows_per_sec = (uint32_t)json_integer_value(v);
		} else if (!strcmp(key, "metrics_port")) {
			bad = !json_is_integer(v) || json_integer_value(v) < 0 ||
			      json_integer_value(v) > 65535;
			o->metrics_port = (int)json_integer_value(v);
		} else if (!strcmp(key, "skb_mode")) {
			bad = !json_is_boolean(v);
			o->skb_mode = json_is_true(v);
		} else if (!strcmp(key, "verify")) {
			int n = s ? parse_enum(s, verify_names, 3) : -1;

			bad = n < 0;
			o->verify = (enum xlb_verify_policy)(n < 0 ? 0 : n);
		} else if (!strcmp(key, "xdp_mode")) {
			int n = s ? parse_enum(s, xdp_mode_names, 3) : -1;

			bad = n < 0;
			o->xdp_mode = (enum xlb_xdp_mode)(n < 0 ? 0 : n);
		} else if (!strcmp(key, "vips")) {
			o->initial = json_pack("{s:O}", "vips", v);
		} else {
			/* string settings: keep them alive by leaking the parsed JSON (small, once) */
			if (!s)
				bad = 1;
			else if (!strcmp(key, "backend"))
				o->backend = strdup(s);
			else if (!strcmp(key, "object"))
				o->object = strdup(s);
			else if (!strcmp(key, "pin_root"))
				o->pin_root = strdup(s);
			else if (!strcmp(key, "state_dir"))
				o->state_dir = strdup(s);
			else if (!strcmp(key, "socket"))
				o->sock = strdup(s);
			else if (!strcmp(key, "socket_group"))
				o->sock_group = strdup(s);
			else if (!strcmp(key, "metrics_address"))
				o->metrics_addr = strdup(s);
		}
		if (bad) {
			json_decref(j);
			return xlb_err_set(err, -EINVAL, "%s: bad value for \"%s\"", o->config, key);
		}
		if (strcmp(key, "vips") && strcmp(key, "backend") && strcmp(key, "object") &&
		    strcmp(key, "pin_root") && strcmp(key, "state_dir") && strcmp(key, "socket") &&
		    strcmp(key, "socket_group") && strcmp(key, "metrics_address") &&
		    strcmp(key, "metrics_port") && strcmp(key, "verify") && strcmp(key, "xdp_mode") &&
		    strcmp(key, "skb_mode"))
			o->set_given = true;
	}
	json_decref(j);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xlbd [OPTIONS]\n"
		"  -c, --config FILE        YAML/JSON config (default /etc/xlb/xlbd.yaml if present)\n"
		"  -i, --interface IFACE    attach to IFACE (repeat for several)\n"
		"  -g, --gateway-mac MAC    outer destination MAC of encapsulated packets\n"
		"      --src4 ADDR[/PLEN]   outer IPv4 source prefix\n"
		"      --src6 ADDR[/PLEN]   outer IPv6 source prefix\n"
		"  -s, --socket PATH        API socket (default %s)\n"
		"      --socket-group NAME  group allowed to use the socket\n"
		"  -d, --state-dir DIR      store directory (default /var/lib/xlb)\n"
		"      --pin-root DIR       bpffs directory for pins (default /sys/fs/bpf/xlb)\n"
		"  -o, --object FILE        balancer object (default %s/balancer.bpf.o)\n"
		"      --backend NAME       kernel (default) or userspace\n"
		"      --verify POLICY      enforce (default), warn or off: xlb verifier pre-validation\n"
		"      --no-verify          same as --verify=off\n"
		"      --xdp-mode MODE      auto (default), dispatcher or single\n"
		"      --skb-mode           generic XDP only\n"
		"  -m, --metrics-port PORT  Prometheus metrics on 127.0.0.1:PORT (0: off, default 9100)\n"
		"      --metrics-address A  listen address for metrics (default 127.0.0.1)\n"
		"      --cleanup            detach the programs, remove the pins and exit\n"
		"  -v, --verbose            debug logging\n"
		"  -h, --help\n",
		XLB_SOCK_PATH_DEFAULT, XLB_DATADIR);
}

enum {
	OPT_SRC4 = 256,
	OPT_SRC6,
	OPT_SOCK_GROUP,
	OPT_PIN_ROOT,
	OPT_BACKEND,
	OPT_VERIFY,
	OPT_NO_VERIFY,
	OPT_XDP_MODE,
	OPT_SKB,
	OPT_METRICS_ADDR,
	OPT_CLEANUP,
};

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "interface", required_argument, NULL, 'i' },
		{ "gateway-mac", required_argument, NULL, 'g' },
		{ "src4", required_argument, NULL, OPT_SRC4 },
		{ "src6", required_argument, NULL, OPT_SRC6 },
		{ "socket", required_argument, NULL, 's' },
		{ "socket-group", required_argument, NULL, OPT_SOCK_GROUP },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "pin-root", required_argument, NULL, OPT_PIN_ROOT },
		{ "object", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "verify", required_argument, NULL, OPT_VERIFY },
		{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
		{ "xdp-mode", required_argument, NULL, OPT_XDP_MODE },
		{ "skb-mode", no_argument, NULL, OPT_SKB },
		{ "metrics-port", required_argument, NULL, 'm' },
		{ "metrics-address", required_argument, NULL, OPT_METRICS_ADDR },
		{ "cleanup", no_argument, NULL, OPT_CLEANUP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct xlb_err err;
	int c, n;

	/* A config file is read first; the command line overrides it. */
	for (int i = 1; i < argc - 1; i++)
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config"))
			o->config = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			o->config = argv[i] + 9;
	if (!o->config && !access("/etc/xlb/xlbd.yaml", R_OK))
		o->config = "/etc/xlb/xlbd.yaml";
	if (o->config && load_config_file(o, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		return -EINVAL;
	}
	while ((c = getopt_long(argc, argv, "c:i:g:s:d:o:m:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			break;
		case 'i':
			if (add_iface(o, optarg)) {
				xlbd_log(LOG_ERR, "bad interface %s", optarg);
				return -EINVAL;
			}
			break;
		case 'g':
			if (xlb_mac_parse(optarg, o->set.gw_mac)) {
				xlbd_log(LOG_ERR, "bad MAC %s", optarg);
				return -EINVAL;
			}
			o->set_given = true;
			break;
		case OPT_SRC4:
		case OPT_SRC6: {
			struct xlb_ip *a = c == OPT_SRC4 ? &o->set.src4 : &o->set.src6;
			uint8_t *p = c == OPT_SRC4 ? &o->set.src4_plen : &o->set.src6_plen;

			if (parse_src(optarg, a, p) ||
			    a->family != (c == OPT_SRC4 ? AF_INET : AF_INET6)) {
				xlbd_log(LOG_ERR, "bad source prefix %s", optarg);
				return -EINVAL;
			}
			o->set_given = true;
			break;
		}
		case 's':
			o->sock = optarg;
			break;
		case OPT_SOCK_GROUP:
			o->sock_group = optarg;
			break;
		case 'd':
			o->state_dir = optarg;
			break;
		case OPT_PIN_ROOT:
			o->pin_root = optarg;
			break;
		case 'o':
			o->object = optarg;
			break;
		case OPT_BACKEND:
			o->backend = optarg;
			break;
		case OPT_VERIFY:
			n = parse_enum(optarg, verify_names, 3);
			if (n < 0) {
				xlbd_log(LOG_ERR, "bad --verify %s (enforce, warn, off)", optarg);
				return -EINVAL;
			}
			o->verify = (enum xlb_verify_policy)n;
			break;
		case OPT_NO_VERIFY:
			o->verify = XLB_VERIFY_OFF;
			break;
		case OPT_XDP_MODE:
			n = parse_enum(optarg, xdp_mode_names, 3);
			if (n < 0) {
				xlbd_log(LOG_ERR, "bad --xdp-mode %s (auto, dispatcher, single)", optarg);
				return -EINVAL;
			}
			o->xdp_mode = (enum xlb_xdp_mode)n;
			break;
		case OPT_SKB:
			o->skb_mode = true;
			break;
		case 'm':
			o->metrics_port = atoi(optarg);
			break;
		case OPT_METRICS_ADDR:
			o->metrics_addr = optarg;
			break;
		case OPT_CLEANUP:
			o->cleanup = true;
			break;
		case 'v':
			log_max_level = LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		xlbd_log(LOG_ERR, "unexpected argument %s", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* ---- startup ------------------------------------------------------------- */

/*
 * Adopting a running dataplane: VIPs it holds that the store does not know
 * are removed by the first reconcile; everything the store holds is pushed,
 * which for an unchanged state rewrites identical rings (packets see no
 * difference) and keeps the LRU untouched.
 */
static int adopt_dataplane(struct daemon *d)
{
	struct xlb_dp_vip *found;
	int n;

	if (!d->be.ops->vip_list)
		return 0;
	found = calloc(d->settings.max_vips, sizeof(*found));
	if (!found)
		return -ENOMEM;
	n = d->be.ops->vip_list(&d->be, found, d->settings.max_vips);
	for (int i = 0; i < n && i < (int)d->settings.max_vips; i++) {
		struct shadow_vip *s = &d->svips[found[i].id < d->settings.max_vips ? found[i].id : 0];

		if (found[i].id >= d->settings.max_vips)
			continue;
		s->present = true;
		s->addr = found[i].addr;
		s->port = found[i].port;
		s->proto = found[i].proto;
		s->flags = UINT32_MAX; /* unknown: forces a meta push */
		s->ring_known = false;
	}
	if (n > 0)
		xlbd_log(LOG_INFO, "dataplane holds %d VIP(s); reconciling with the store", n);
	free(found);
	return 0;
}

static int apply_initial(struct daemon *d, json_t *initial)
{
	struct peer self = { .uid = getuid(), .pid = getpid() };
	struct xlb_state next;
	struct xlb_err err;
	int r;

	r = xlb_state_from_json(initial, &next, &err);
	r = r ?: xlb_state_assign_ids(&next, &d->state, &d->settings, &err);
	r = r ?: commit_change(d, &next, &self, "initial state from the config file", &err);
	if (r)
		xlbd_log(LOG_ERR, "config file vips: %s", err.msg);
	return r;
}

int main(int argc, char **argv)
{
	struct options o = {
		.state_dir = "/var/lib/xlb",
		.sock = XLB_SOCK_PATH_DEFAULT,
		.pin_root = "/sys/fs/bpf/xlb",
		.object = XLB_DATADIR "/balancer.bpf.o",
		.backend = "kernel",
		.metrics_addr = "127.0.0.1",
		.metrics_port = 9100,
	};
	static struct daemon dd;
	struct daemon *d = &dd;
	struct xlb_backend_opts bopts;
	struct client clients[MAX_CLIENTS];
	struct xlb_err err = { 0 };
	struct xlb_settings stored;
	uint64_t wd_usec = 0, next_wd = 0;
	int lfd = -1, sfd = -1, ret = 1;
	sigset_t mask;

	setvbuf(stderr, NULL, _IOLBF, 0);
	xlb_settings_default(&o.set);
	if (parse_args(argc, argv, &o))
		return 2;

	pthread_mutex_init(&d->lock, NULL);
	d->started_ns = xlbd_now_ns();
	xlb_state_init(&d->state);
	snprintf(d->sock_path, sizeof(d->sock_path), "%s", o.sock);

	d->store = xlb_store__open(o.state_dir, &err);
	if (!d->store) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		return 1;
	}
	/* Settings: the configured ones win and are stored; else the stored ones. */
	if (!xlb_store__load_settings(d->store, &stored, &err) && !o.set_given)
		o.set = stored;
	d->settings = o.set;

	d->be.ops = xlb_backend_find(o.backend);
	if (!d->be.ops) {
		xlbd_log(LOG_ERR, "unknown or unavailable backend \"%s\"", o.backend);
		goto out;
	}
	bopts = (struct xlb_backend_opts){
		.obj_path = o.object,
		.pin_root = o.pin_root,
		.verify = o.verify,
		.xdp_mode = o.xdp_mode,
		.skb_mode = o.skb_mode,
		.settings = &d->settings,
		.log = xlbd_log,
	};
	if (o.cleanup) {
		/* Open (adopting what runs), then close without keeping anything. */
		bopts.verify = XLB_VERIFY_OFF;
		if (d->be.ops->open(&d->be, &bopts, &err)) {
			xlbd_log(LOG_WARNING, "%s", err.msg);
			d->be.ops->close(&d->be, false);
			ret = 1;
		} else {
			d->be.ops->close(&d->be, false);
			xlbd_log(LOG_NOTICE, "detached and unpinned");
			ret = 0;
		}
		goto out;
	}
	if (d->be.ops->open(&d->be, &bopts, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		d->be.ops->close(&d->be, true);
		goto out;
	}
	d->be_open = true;
	/* The dataplane's limits bound the settings. */
	if (!d->settings.max_vips || d->settings.max_vips > d->be.max_vips)
		d->settings.max_vips = d->be.max_vips;
	if (!d->settings.max_reals || d->settings.max_reals > d->be.max_reals)
		d->settings.max_reals = d->be.max_reals;
	d->settings.ring_size = d->be.ring_size;
	if (xlb_store__save_settings(d->store, &d->settings, &err))
		xlbd_log(LOG_WARNING, "%s, ignoring", err.msg);

	d->svips = calloc(d->settings.max_vips, sizeof(*d->svips));
	d->sreals = calloc(d->settings.max_reals, sizeof(*d->sreals));
	d->health = calloc(d->settings.max_reals, sizeof(*d->health));
	d->scratch_ring = malloc(d->settings.ring_size * sizeof(uint32_t));
	if (!d->svips || !d->sreals || !d->health || !d->scratch_ring) {
		xlbd_log(LOG_ERR, "out of memory");
		goto out;
	}
	if (d->be.ops->config_put(&d->be, &d->settings, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		goto out;
	}
	if (xlb_store__load(d->store, &d->state, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		goto out;
	}
	if (xlb_state_validate(&d->state, &d->settings, &err)) {
		xlbd_log(LOG_ERR, "stored state does not fit this dataplane: %s", err.msg);
		goto out;
	}
	adopt_dataplane(d);
	if (xlbd_reconcile(d, &d->state, &err)) {
		xlbd_log(LOG_ERR, "cannot program the dataplane: %s", err.msg);
		goto out;
	}
	if (!d->state.vip_cnt && o.initial && apply_initial(d, o.initial))
		goto out;
	xlbd_log(LOG_INFO, "state: %zu VIP(s) from %s", d->state.vip_cnt, o.state_dir);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);

	lfd = listen_socket(o.sock, o.sock_group);
	if (lfd < 0) {
		xlbd_log(LOG_ERR, "cannot listen on %s: %s", o.sock, strerror(-lfd));
		goto out;
	}
	if (xlbd_health_start(d))
		xlbd_log(LOG_WARNING, "health checker did not start, ignoring");
	d->metrics_port = (uint16_t)o.metrics_port;
	snprintf(d->metrics_addr, sizeof(d->metrics_addr), "%s", o.metrics_addr);
	if (d->metrics_port && xlbd_metrics_start(d)) {
		xlbd_log(LOG_WARNING, "metrics server on %s:%u did not start, ignoring", d->metrics_addr,
			 d->metrics_port);
		d->metrics_port = 0;
	}

	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i] = (struct client){ .fd = -1 };
	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec)
		next_wd = xlbd_now_ns();
	sd_notifyf(0, "READY=1\nSTATUS=serving %zu VIP(s) on %s\nMAINPID=%d", d->state.vip_cnt,
		   o.sock, (int)getpid());
	xlbd_log(LOG_NOTICE, "ready: socket %s, backend %s", o.sock, d->be.ops->name);

	while (!d->stopping) {
		struct pollfd pfd[MAX_CLIENTS + 2];
		int map[MAX_CLIENTS + 2], n = 0, timeout = 1000;

		pfd[n] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		map[n++] = -2;
		pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		map[n++] = -1;
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (clients[i].fd >= 0) {
				pfd[n] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
				map[n++] = i;
			}
		if (wd_usec)
			timeout = (int)(wd_usec / 4000);
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (wd_usec && xlbd_now_ns() >= next_wd) {
			sd_notify(0, "WATCHDOG=1");
			next_wd = xlbd_now_ns() + wd_usec * 1000 / 2;
		}
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (map[k] == -2) {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGHUP)
					d->stopping = true;
			} else if (map[k] == -1) {
				int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
				struct ucred cred = { 0 };
				socklen_t cl = sizeof(cred);
				struct timeval tv = { .tv_sec = 2 };
				int slot = -1;

				if (cfd < 0)
					continue;
				getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl);
				setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
				for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
					if (clients[i].fd < 0)
						slot = i;
				if (slot < 0) {
					struct client tmp = { .fd = cfd };

					xlb_err_set(&err, -EMFILE, "too many clients");
					send_resp(&tmp, xlb_response_error(&err));
					close(cfd);
					continue;
				}
				clients[slot] = (struct client){ .fd = cfd,
								 .peer = { .uid = cred.uid,
									   .pid = cred.pid } };
			} else if (!client_readable(d, &clients[map[k]])) {
				client_close(&clients[map[k]]);
			}
		}
	}
	sd_notify(0, "STOPPING=1");
	xlbd_log(LOG_NOTICE, "stopping; programs stay attached and maps pinned");
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(&clients[i]);
	ret = 0;
out:
	xlbd_metrics_stop(d);
	xlbd_health_stop(d);
	if (lfd >= 0) {
		close(lfd);
		unlink(o.sock);
	}
	if (sfd >= 0)
		close(sfd);
	if (d->be_open)
		d->be.ops->close(&d->be, true);
	xlb_store__close(d->store);
	xlb_state_free(&d->state);
	if (d->svips)
		for (uint32_t i = 0; i < d->settings.max_vips; i++)
			free(d->svips[i].ring);
	free(d->svips);
	free(d->sreals);
	free(d->health);
	free(d->scratch_ring);
	json_decref(o.initial);
	return ret;
}
