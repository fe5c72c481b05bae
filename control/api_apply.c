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

/* How many VIPs and reals `next` adds to and removes from `cur`. */
static json_t *change_counts(const struct xlb_state *cur, const struct xlb_state *next)
{
	size_t n[2][2] = { { 0 } }; /* [removed/added][vips/reals] */

	for (int dir = 0; dir < 2; dir++) {
		const struct xlb_state *a = dir ? next : cur, *b = dir ? cur : next;

		for (size_t i = 0; i < a->vip_cnt; i++) {
			const struct xlb_vip_cfg *v = &a->vips[i];
			const struct xlb_vip_cfg *o = xlb_state_find_vip(b, &v->addr, v->port, v->proto);

			n[dir][0] += !o;
			for (size_t j = 0; j < v->real_cnt; j++)
				n[dir][1] += !o || !xlb_vip_find_real(o, &v->reals[j].addr);
		}
	}
	return json_pack("{s:{s:I, s:I}, s:{s:I, s:I}}", "removed", "vips", (json_int_t)n[0][0],
			 "reals", (json_int_t)n[0][1], "added", "vips", (json_int_t)n[1][0], "reals",
			 (json_int_t)n[1][1]);
}

static int op_apply(struct xlbd_req *c)
{
	const json_t *cfg = json_object_get(c->args, "config");
	const json_t *dry = json_object_get(c->args, "dry_run");
	const json_t *allow = json_object_get(c->args, "allow_empty");
	struct xlb_state next;
	json_t *diff, *counts;
	int r;

	if (!cfg)
		return xlb_err_set(c->err, -EINVAL, "missing field \"config\"");
	if (dry && !json_is_boolean(dry))
		return xlb_err_set(c->err, -EINVAL, "\"dry_run\" must be a boolean");
	if (allow && !json_is_boolean(allow))
		return xlb_err_set(c->err, -EINVAL, "\"allow_empty\" must be a boolean");
	r = xlb_config_check_apply(cfg, json_is_true(allow), c->err);
	if (r)
		return r;
	r = xlb_state_from_json(cfg, &next, c->err);
	if (r)
		return r;
	r = xlb_state_assign_ids(&next, &c->d->state, &c->d->settings, c->err);
	if (r) {
		xlb_state_free(&next);
		return r;
	}
	diff = state_diff(&c->d->state, &next);
	counts = change_counts(&c->d->state, &next);
	if (json_is_true(dry) || !json_array_size(diff)) {
		xlb_state_free(&next);
		c->result = json_pack("{s:o, s:b, s:o}", "changes", diff, "applied", 0, "counts", counts);
		return 0;
	}
	{
		char what[4096];

		/* The audit log gets the diff itself. */
		size_t n = (size_t)snprintf(what, sizeof(what), "apply (%zu changes):",
					    json_array_size(diff));
		json_t *l;
		size_t k;

		json_array_foreach(diff, k, l) {
			if (n + 2 >= sizeof(what))
				break;
			n += (size_t)snprintf(what + n, sizeof(what) - n, "%s %s", k ? ";" : "",
					      json_string_value(l));
		}
		r = xlbd_commit(c->d, &next, c->peer, what, c->err);
	}
	if (r) {
		json_decref(diff);
		json_decref(counts);
		return r;
	}
	c->result = json_pack("{s:o, s:b, s:o}", "changes", diff, "applied", 1, "counts", counts);
	return 0;
}

const struct xlbd_op xlbd_ops_apply[] = {
	{ "apply", op_apply },
	{ NULL, NULL },
};
