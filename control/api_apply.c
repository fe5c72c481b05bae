// SPDX-License-Identifier: MIT
/*
 * The apply op: make the desired state that of a whole config ({"vips":
 * [...]}), as one transaction.  The new state gets the ids of the VIPs and
 * reals it shares with the current one (so their rings and flows stay),
 * the answer lists the changes as diff lines, and dry_run only computes
 * them.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "xlbd.h"

/* The changes between two states, for apply's answer (and --dry-run). */
static json_t *state_diff(const struct xlb_state *cur, const struct xlb_state *next)
{
	json_t *out = json_array();
	char vs[80], rs[64], line[256];

	for (size_t i = 0; i < next->vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &next->vips[i];
		const struct xlb_vip_cfg *o = xlb_state_find_vip(cur, &v->addr, v->port, v->proto);

		if (!o) {
			snprintf(line, sizeof(line), "+ vip %s", xlbd_vip_str(v, vs, sizeof(vs)));
			json_array_append_new(out, json_string(line));
		} else if (o->flags != v->flags || o->encap != v->encap ||
			   memcmp(&o->hc, &v->hc, sizeof(o->hc))) {
			snprintf(line, sizeof(line), "~ vip %s", xlbd_vip_str(v, vs, sizeof(vs)));
			json_array_append_new(out, json_string(line));
		}
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			const struct xlb_real_cfg *p = o ? xlb_vip_find_real(o, &r->addr) : NULL;

			if (!p)
				snprintf(line, sizeof(line), "+ real %s %s weight %u %s",
					 xlbd_vip_str(v, vs, sizeof(vs)), xlb_addr_str(&r->addr, rs, sizeof(rs)),
					 r->weight, xlb_real_state_name(r->state));
			else if (p->weight != r->weight || p->state != r->state)
				snprintf(line, sizeof(line), "~ real %s %s weight %u->%u %s->%s",
					 xlbd_vip_str(v, vs, sizeof(vs)), xlb_addr_str(&r->addr, rs, sizeof(rs)),
					 p->weight, r->weight, xlb_real_state_name(p->state),
					 xlb_real_state_name(r->state));
			else
				continue;
			json_array_append_new(out, json_string(line));
		}
		if (o)
			for (size_t j = 0; j < o->real_cnt; j++)
				if (!xlb_vip_find_real(v, &o->reals[j].addr)) {
					snprintf(line, sizeof(line), "- real %s %s", xlbd_vip_str(v, vs, sizeof(vs)),
						 xlb_addr_str(&o->reals[j].addr, rs, sizeof(rs)));
					json_array_append_new(out, json_string(line));
				}
	}
	for (size_t i = 0; i < cur->vip_cnt; i++) {
		const struct xlb_vip_cfg *o = &cur->vips[i];

		if (!xlb_state_find_vip(next, &o->addr, o->port, o->proto)) {
			snprintf(line, sizeof(line), "- vip %s", xlbd_vip_str(o, vs, sizeof(vs)));
			json_array_append_new(out, json_string(line));
		}
	}
	return out;
}

static int op_apply(struct xlbd_req *c)
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
		r = xlbd_commit(c->d, &next, c->peer, what, c->err);
	}
	if (r) {
		json_decref(diff);
		return r;
	}
	c->result = json_pack("{s:o, s:b}", "changes", diff, "applied", 1);
	return 0;
}

const struct xlbd_op xlbd_ops_apply[] = {
	{ "apply", op_apply },
	{ NULL, NULL },
};
