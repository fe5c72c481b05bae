// SPDX-License-Identifier: MIT
/*
 * Reconcile and transactions: making the dataplane hold a desired state.
 *
 * A change is one transaction (xlbd_commit):
 *  1. the new state is validated (limits, unique keys and ids);
 *  2. BEGIN IMMEDIATE, and the new state is saved in the open transaction;
 *  3. the dataplane is reconciled to the new state;
 *  4. COMMIT.
 * If step 3 fails, the dataplane is reconciled back to the previous state
 * and the transaction rolled back; if step 4 fails, the dataplane is
 * reconciled back too.  So a change is in the maps and the store, or in
 * neither.
 *
 * Reconciling works from a shadow of what was last pushed (per VIP id: key,
 * flags, encap, affinity, allow-list, ring and the signature of its inputs;
 * per real id: address, draining, QUIC server id),
 * so it pushes only what differs, and undoing a half-applied change pushes
 * exactly the parts it had changed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "xlbd.h"

bool xlbd_health_out(const struct real_health *h)
{
	return h->state == HEALTH_DOWN || (h->gated && h->state != HEALTH_UP);
}

bool xlbd_real_in_ring(const struct daemon *d, const struct xlb_vip_cfg *vip,
		       const struct xlb_real_cfg *r)
{
	if (r->state != XLB_REAL_ACTIVE || !r->weight)
		return false;
	if (vip->hc.type != XLB_HC_NONE && r->id < d->settings.max_reals) {
		const struct real_health *h = &d->health[r->id];

		/* With the site's health policy the site's verdict counts, so every host's ring agrees. */
		if (d->site_health ? h->site_down : xlbd_health_out(h))
			return false;
	}
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

void xlbd_shadow_seed(struct daemon *d, const struct xlb_vip_cfg *v, const uint32_t *ring)
{
	struct shadow_vip *s = &d->svips[v->id];

	s->present = true;
	s->addr = v->addr;
	s->port = v->port;
	s->proto = v->proto;
	s->flags = v->flags;
	s->encap = v->encap;
	s->ring_known = false;
	if (!s->ring)
		s->ring = malloc(d->settings.ring_size * sizeof(uint32_t));
	if (ring && s->ring) {
		memcpy(s->ring, ring, d->settings.ring_size * sizeof(uint32_t));
		s->ring_known = true;
		s->ring_sig = ring_signature(d, v);
	}
	for (size_t i = 0; i < v->real_cnt; i++) {
		d->sreals[v->reals[i].id].present = true;
		d->sreals[v->reals[i].id].addr = v->reals[i].addr;
	}
}

/* The ids a state uses (reals or VIPs), one byte per id below max: NULL on ENOMEM. */
static uint8_t *ids_in_state(const struct xlb_state *st, uint32_t max, bool reals)
{
	uint8_t *in = calloc(max ? max : 1, 1);

	for (size_t i = 0; in && i < st->vip_cnt; i++) {
		if (!reals && st->vips[i].id < max)
			in[st->vips[i].id] = 1;
		for (size_t j = 0; reals && j < st->vips[i].real_cnt; j++)
			if (st->vips[i].reals[j].id < max)
				in[st->vips[i].reals[j].id] = 1;
	}
	return in;
}

/* Steps 3 and 4 of a reconcile: what the target no longer has leaves. */
static int remove_left(struct daemon *d, const struct xlb_state *target, const uint8_t *vips_in,
		       const uint8_t *reals_in, struct xlb_err *err);

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

			if (s->present && xlb_addr_eq(&s->addr, &r->addr) &&
			    s->draining == (r->state == XLB_REAL_DRAINING) && s->server_id == r->server_id)
				continue;
			ret = ops->real_put(&d->be, r->id, r, err);
			if (ret)
				return ret;
			s->present = true;
			s->addr = r->addr;
			s->draining = r->state == XLB_REAL_DRAINING;
			s->server_id = r->server_id;
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
		meta_same = s->present && s->flags == v->flags && s->encap == v->encap &&
			    s->affinity_s == v->affinity_s && s->allow_cnt == v->allow_cnt &&
			    !memcmp(s->allow, v->allow, v->allow_cnt * sizeof(v->allow[0]));
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
		s->affinity_s = v->affinity_s;
		s->allow_cnt = v->allow_cnt;
		memcpy(s->allow, v->allow, sizeof(s->allow));
		memcpy(s->ring, d->scratch_ring, size * sizeof(uint32_t));
		s->ring_known = true;
		s->ring_sig = sig;
	}

	{
		uint8_t *vips_in = ids_in_state(target, d->settings.max_vips, false);
		uint8_t *reals_in = ids_in_state(target, d->settings.max_reals, true);

		ret = vips_in && reals_in ? remove_left(d, target, vips_in, reals_in, err)
					  : xlb_err_set(err, -ENOMEM, "out of memory");
		free(vips_in);
		free(reals_in);
		if (ret)
			return ret;
	}
	return 0;
}

static int remove_left(struct daemon *d, const struct xlb_state *target, const uint8_t *vips_in,
		       const uint8_t *reals_in, struct xlb_err *err)
{
	const struct xlb_backend_ops *ops = d->be.ops;
	int ret;

	/* 3. VIPs that left. */
	for (uint32_t id = 0; id < d->settings.max_vips; id++) {
		struct shadow_vip *s = &d->svips[id];

		if (!s->present || vips_in[id])
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

		if (!s->present || reals_in[id])
			continue;
		ret = ops->real_put(&d->be, id, NULL, err);
		if (ret)
			return ret;
		if (ops->hc_real_put)
			ops->hc_real_put(&d->be, XLB_HC_MARK(&d->settings, id), NULL, XLB_ENCAP_IP, NULL);
		s->present = false;
		memset(&d->health[id], 0, sizeof(d->health[id]));
		xlb_store__save_health(d->store, id, &s->addr, -1, NULL);
	}
	return 0;
}

/*
 * A real the change adds to a VIP with a health check starts "waiting": out
 * of the ring until its first probe passes (new-real-wait), so a new real
 * that is not ready takes no traffic.  Reals that were there keep their
 * verdict; an id now naming another address starts over.
 */
void xlbd_mark_new_reals(struct daemon *d, const struct xlb_state *next)
{
	for (size_t i = 0; i < next->vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &next->vips[i];
		const struct xlb_vip_cfg *o = xlb_state_find_vip(&d->state, &v->addr, v->port, v->proto);

		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			const struct xlb_real_cfg *was = o ? xlb_vip_find_real(o, &r->addr) : NULL;

			if (was && was->id == r->id)
				continue;
			memset(&d->health[r->id], 0, sizeof(d->health[r->id]));
			d->health[r->id].gated = !d->no_gate && d->cfg.new_real_wait == 0 &&
						 v->hc.type != XLB_HC_NONE;
			/* The site's verdict starts there too, until the hosts' reports come. */
			d->health[r->id].site_down = d->health[r->id].gated;
		}
	}
}

static void restore_one(void *ctx, uint32_t id, const struct xlb_ip *addr, int up)
{
	struct daemon *d = ctx;

	for (size_t i = 0; i < d->state.vip_cnt; i++)
		for (size_t j = 0; j < d->state.vips[i].real_cnt; j++) {
			const struct xlb_real_cfg *r = &d->state.vips[i].reals[j];

			if (r->id == id && xlb_addr_eq(&r->addr, addr) && id < d->settings.max_reals) {
				d->health[id].state = up ? HEALTH_UP : HEALTH_DOWN;
				return;
			}
		}
}

void xlbd_health_restore(struct daemon *d)
{
	struct xlb_err err;

	if (xlb_store__load_health(d->store, restore_one, d, &err))
		xlbd_log(LOG_WARNING, "%s, ignoring", err.msg);
}

void xlbd_health_save(struct daemon *d, const struct xlb_real_cfg *r)
{
	struct xlb_err err;
	const struct real_health *h = &d->health[r->id];

	if (h->state != HEALTH_UNKNOWN &&
	    xlb_store__save_health(d->store, r->id, &r->addr, h->state == HEALTH_UP, &err))
		xlbd_log(LOG_WARNING, "%s, ignoring", err.msg);
}

int xlbd_commit(struct daemon *d, struct xlb_state *next, const struct xlbd_peer *p,
		const char *what, struct xlb_err *err)
{
	uint64_t t0 = xlbd_now_ns();
	struct xlb_err undo;
	int ret;

	ret = xlb_state_validate(next, &d->settings, err);
	if (ret)
		goto out_free;
	xlbd_mark_new_reals(d, next);
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
	xlbd_audit(p, what, NULL, (double)(xlbd_now_ns() - t0) / 1e6);
	return 0;

out_undo:
	xlb_store__rollback(d->store);
out_undo_committed:
	if (xlbd_reconcile(d, &d->state, &undo))
		xlbd_log(LOG_ERR, "undoing a failed change failed too: %s", undo.msg);
	xlbd_audit(p, what, err->msg, (double)(xlbd_now_ns() - t0) / 1e6);
	goto out_free;
out_rollback:
	xlb_store__rollback(d->store);
out_free:
	xlb_state_free(next);
	return ret;
}
