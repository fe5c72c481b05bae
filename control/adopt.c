// SPDX-License-Identifier: MIT
/*
 * What xlbd finds in the dataplane at start, and what it may do with it.
 *
 * A restarted xlbd (the normal case) finds the VIPs its store holds: the
 * first reconcile pushes the store's state, which for an unchanged state
 * rewrites identical rings (packets see no difference) and keeps the LRU;
 * VIPs the store does not know are removed.
 *
 * An EMPTY store over a dataplane that holds VIPs is refused: it means a
 * lost or mistyped state directory, and reconciling would wipe the live
 * dataplane.  The operator says what they want:
 *  --adopt-dataplane  import what the maps hold into the store: each VIP's
 *                     key, flags and encapsulation, and as its reals the
 *                     reals its ring names, each weighted by the slots it
 *                     holds.  The rings are kept as they are (the shadow is
 *                     seeded with them), so no packet is moved.  What maps
 *                     do not hold is lost: health checks, drained or
 *                     weight-0 reals, exact weights.
 *  --reset            remove them: start from the empty store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlbd.h"

static void shadow_present(struct daemon *d, const struct xlb_dp_vip *f)
{
	struct shadow_vip *s = &d->svips[f->id];

	s->present = true;
	s->addr = f->addr;
	s->port = f->port;
	s->proto = f->proto;
	s->flags = UINT32_MAX; /* unknown: forces a meta push */
	s->ring_known = false;
}

/* One VIP of the dataplane as a VIP of the store, its reals from its ring. */
static int import_vip(struct daemon *d, const struct xlb_dp_vip *f, uint32_t *ring,
		      uint32_t *slots, struct xlb_vip_cfg *ret)
{
	const struct xlb_backend_ops *ops = d->be.ops;
	uint32_t n = 0;
	int r;

	*ret = (struct xlb_vip_cfg){ .id = f->id, .addr = f->addr, .port = f->port,
				     .proto = f->proto, .flags = f->flags & XLB_VIP_F_ALL,
				     .encap = f->encap };
	xlb_hc_default(&ret->hc);
	if (!ops->ring_get || !ops->real_get)
		return -EOPNOTSUPP;
	r = ops->ring_get(&d->be, f->id, f->ring_half, ring);
	if (r)
		return r;
	memset(slots, 0, d->settings.max_reals * sizeof(*slots));
	for (uint32_t i = 0; i < d->settings.ring_size; i++)
		if (ring[i] && ring[i] < d->settings.max_reals && !slots[ring[i]]++)
			n++;
	ret->reals = calloc(n ? n : 1, sizeof(*ret->reals));
	if (!ret->reals)
		return -ENOMEM;
	for (uint32_t id = 1; id < d->settings.max_reals; id++) {
		struct xlb_real_cfg *rc = &ret->reals[ret->real_cnt];

		if (!slots[id] || ops->real_get(&d->be, id, &rc->addr))
			continue;
		rc->id = id;
		rc->weight = slots[id];
		rc->state = XLB_REAL_ACTIVE;
		ret->real_cnt++;
	}
	return 0;
}

static int import_dataplane(struct daemon *d, const struct xlb_dp_vip *found, int n)
{
	struct xlbd_peer self = { .uid = getuid(), .pid = getpid() };
	uint32_t *ring = malloc(d->settings.ring_size * sizeof(uint32_t));
	uint32_t *slots = calloc(d->settings.max_reals, sizeof(uint32_t));
	struct xlb_state next;
	struct xlb_err err = { 0 };
	size_t reals = 0;
	char what[96];
	int r = 0;

	xlb_state_init(&next);
	next.vips = calloc((size_t)n, sizeof(*next.vips));
	if (!ring || !slots || !next.vips) {
		r = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n && !r; i++) {
		r = import_vip(d, &found[i], ring, slots, &next.vips[i]);
		if (r)
			break;
		next.vip_cnt++;
		reals += next.vips[i].real_cnt;
		for (size_t j = 0; j < next.vips[i].real_cnt; j++)
			if (next.vips[i].reals[j].id >= next.next_real_id)
				next.next_real_id = next.vips[i].reals[j].id + 1;
		/* The ring stays as it is: seed the shadow with it. */
		xlbd_shadow_seed(d, &next.vips[i], ring);
	}
	if (r) {
		xlbd_log(LOG_ERR, "cannot read the dataplane to adopt it: %s", strerror(-r));
		goto out;
	}
	snprintf(what, sizeof(what), "adopted from the dataplane: %zu VIP(s), %zu real(s)",
		 next.vip_cnt, reals);
	d->no_gate = true; /* these reals are serving already */
	r = xlbd_commit(d, &next, &self, what, &err);
	d->no_gate = false;
	if (r)
		xlbd_log(LOG_ERR, "cannot adopt the dataplane: %s", err.msg);
	free(ring);
	free(slots);
	return r;
out:
	xlb_state_free(&next);
	free(ring);
	free(slots);
	return r;
}

int xlbd_adopt(struct daemon *d)
{
	const struct xlbd_config *c = &d->cfg;
	struct xlb_dp_vip *found;
	int n, r = 0;

	if (!d->be.ops->vip_list)
		return 0;
	found = calloc(d->settings.max_vips, sizeof(*found));
	if (!found)
		return -ENOMEM;
	n = d->be.ops->vip_list(&d->be, found, d->settings.max_vips);
	if (n > (int)d->settings.max_vips)
		n = (int)d->settings.max_vips;
	if (c->adopt && d->state.vip_cnt) {
		xlbd_log(LOG_ERR, "--adopt-dataplane: the store in %s already holds %zu VIP(s); "
			 "adopting is for an empty store", c->state_dir, d->state.vip_cnt);
		r = -EEXIST;
		goto out;
	}
	if (n > 0 && !d->state.vip_cnt) {
		if (c->reset) {
			xlbd_log(LOG_WARNING, "--reset: removing the %d VIP(s) the dataplane holds", n);
		} else if (c->adopt) {
			r = import_dataplane(d, found, n);
			goto out;
		} else {
			xlbd_log(LOG_ERR,
				 "the store in %s is empty but the dataplane pinned at %s holds %d "
				 "VIP(s): refusing to wipe it.  Start with --adopt-dataplane to import "
				 "them into the store, or --reset to remove them",
				 c->state_dir, c->pin_root, n);
			r = -ENOTEMPTY;
			goto out;
		}
	}
	for (int i = 0; i < n; i++)
		if (found[i].id < d->settings.max_vips)
			shadow_present(d, &found[i]);
	if (n > 0)
		xlbd_log(LOG_INFO, "dataplane holds %d VIP(s); reconciling with the store", n);
out:
	free(found);
	return r;
}
