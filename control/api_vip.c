// SPDX-License-Identifier: MIT
/*
 * API handlers for VIPs and their reals: vip.add/del/set/list/show and
 * real.add/del/set/list.  Each change builds the next state on a copy of
 * the current one and hands it to xlbd_commit(), which applies it as one
 * transaction or not at all.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "xlbd.h"

static int op_vip_add(struct xlbd_req *c)
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
	snprintf(what, sizeof(what), "vip add %s", xlbd_vip_str(&v, vs, sizeof(vs)));
	r = xlbd_commit(c->d, &next, c->peer, what, c->err);
	if (!r)
		c->result = xlb_vip_to_json(xlb_state_find_vip(&c->d->state, &v.addr, v.port, v.proto),
					    false);
	return r;
}

static int op_vip_del(struct xlbd_req *c)
{
	struct xlb_vip_cfg *v;
	struct xlb_state next;
	char what[160], vs[80];
	int r;

	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = xlbd_find_vip(c->args, &next, &v, c->err);
	if (!r) {
		snprintf(what, sizeof(what), "vip del %s", xlbd_vip_str(v, vs, sizeof(vs)));
		r = xlb_state_vip_del(&next, &v->addr, v->port, v->proto, c->err);
	}
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	return xlbd_commit(c->d, &next, c->peer, what, c->err);
}

static int op_vip_set(struct xlbd_req *c)
{
	struct xlb_vip_cfg *v, upd;
	struct xlb_state next;
	char what[3200], vs[80], before[1500], after[1500];
	int r;

	/* The same object as vip.add: fields given replace the VIP's. */
	r = xlb_vip_from_json(c->args, &upd, false, c->err);
	if (r)
		return r;
	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = xlbd_find_vip(c->args, &next, &v, c->err);
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	xlbd_vip_summary(v, before, sizeof(before));
	if (json_object_get(c->args, "encap"))
		v->encap = upd.encap;
	if (json_object_get(c->args, "flags"))
		v->flags = upd.flags;
	if (json_object_get(c->args, "healthcheck"))
		v->hc = upd.hc;
	if (json_object_get(c->args, "affinity"))
		v->affinity_s = upd.affinity_s;
	if (json_object_get(c->args, "allow")) {
		v->allow_cnt = upd.allow_cnt;
		memcpy(v->allow, upd.allow, sizeof(v->allow));
	}
	xlbd_vip_summary(v, after, sizeof(after));
	/* The audit log says what changed: old -> new. */
	snprintf(what, sizeof(what), "vip set %s: %s -> %s", xlbd_vip_str(v, vs, sizeof(vs)), before,
		 after);
	r = xlbd_commit(c->d, &next, c->peer, what, c->err);
	if (!r)
		c->result = xlb_vip_to_json(
			xlb_state_find_vip(&c->d->state, &upd.addr, upd.port, upd.proto), false);
	return r;
}

static int op_vip_list(struct xlbd_req *c)
{
	json_t *vips = json_array();

	for (size_t i = 0; i < c->d->state.vip_cnt; i++)
		json_array_append_new(vips, xlbd_vip_full_json(c->d, &c->d->state.vips[i]));
	c->result = json_pack("{s:o}", "vips", vips);
	return 0;
}

static int op_vip_show(struct xlbd_req *c)
{
	struct xlb_vip_cfg *v;
	int r = xlbd_find_vip(c->args, &c->d->state, &v, c->err);

	if (r)
		return r;
	c->result = xlbd_vip_full_json(c->d, v);
	return 0;
}

/* real.* requests name their VIP in "vip". */
static int real_target(struct xlbd_req *c, struct xlb_state *st, struct xlb_vip_cfg **ret_vip,
		       struct xlb_real_cfg *ret_real)
{
	const json_t *vj = json_object_get(c->args, "vip");
	json_t *rest;
	int r;

	if (!vj)
		return xlb_err_set(c->err, -EINVAL, "missing field \"vip\"");
	r = xlbd_find_vip(vj, st, ret_vip, c->err);
	if (r)
		return r;
	rest = json_deep_copy(c->args);
	json_object_del(rest, "vip");
	r = xlb_real_from_json(rest, ret_real, c->err);
	json_decref(rest);
	return r;
}

static int op_real_add(struct xlbd_req *c)
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
	snprintf(what, sizeof(what), "real add %s %s weight %u", xlbd_vip_str(v, vs, sizeof(vs)),
		 xlb_addr_str(&real.addr, rs, sizeof(rs)), real.weight);
	return xlbd_commit(c->d, &next, c->peer, what, c->err);
}

static int op_real_del(struct xlbd_req *c)
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
	snprintf(what, sizeof(what), "real del %s %s", xlbd_vip_str(v, vs, sizeof(vs)),
		 xlb_addr_str(&real.addr, rs, sizeof(rs)));
	return xlbd_commit(c->d, &next, c->peer, what, c->err);
}

static int op_real_set(struct xlbd_req *c)
{
	struct xlb_vip_cfg *v;
	struct xlb_real_cfg real, *cur, old;
	struct xlb_state next;
	char what[300], vs[80], rs[64];
	int r;

	if (xlb_state_copy(&next, &c->d->state))
		return xlb_err_set(c->err, -ENOMEM, "out of memory");
	r = real_target(c, &next, &v, &real);
	if (!r && !(cur = xlb_vip_find_real(v, &real.addr)))
		r = xlb_err_set(c->err, -ENOENT, "no real %s",
				xlb_addr_str(&real.addr, rs, sizeof(rs)));
	if (!r && !json_object_get(c->args, "weight") && !json_object_get(c->args, "state") &&
	    !json_object_get(c->args, "server_id"))
		r = xlb_err_set(c->err, -EINVAL, "real.set needs \"weight\", \"state\" or \"server_id\"");
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	old = *cur;
	if (json_object_get(c->args, "weight"))
		cur->weight = real.weight;
	if (json_object_get(c->args, "state"))
		cur->state = real.state;
	if (json_object_get(c->args, "server_id"))
		cur->server_id = real.server_id;
	snprintf(what, sizeof(what), "real set %s %s: weight %u -> %u, state %s -> %s, server id %u -> %u",
		 xlbd_vip_str(v, vs, sizeof(vs)), xlb_addr_str(&real.addr, rs, sizeof(rs)), old.weight,
		 cur->weight, xlb_real_state_name(old.state), xlb_real_state_name(cur->state),
		 old.server_id, cur->server_id);
	return xlbd_commit(c->d, &next, c->peer, what, c->err);
}

static int op_real_list(struct xlbd_req *c)
{
	const json_t *vj = json_object_get(c->args, "vip");
	struct xlb_vip_cfg *v;
	json_t *reals;
	int r;

	if (!vj)
		return xlb_err_set(c->err, -EINVAL, "missing field \"vip\"");
	r = xlbd_find_vip(vj, &c->d->state, &v, c->err);
	if (r)
		return r;
	reals = json_array();
	{
		uint32_t slots[v->real_cnt ? v->real_cnt : 1];

		xlbd_ring_slots(c->d, v, slots);
		for (size_t i = 0; i < v->real_cnt; i++)
			json_array_append_new(reals, xlbd_real_json(c->d, v, &v->reals[i], slots[i]));
	}
	c->result = json_pack("{s:o}", "reals", reals);
	return 0;
}

const struct xlbd_op xlbd_ops_vip[] = {
	{ "vip.add", op_vip_add },   { "vip.del", op_vip_del },	  { "vip.set", op_vip_set },
	{ "vip.list", op_vip_list }, { "vip.show", op_vip_show }, { "real.add", op_real_add },
	{ "real.del", op_real_del }, { "real.set", op_real_set }, { "real.list", op_real_list },
	{ NULL, NULL },
};
