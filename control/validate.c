// SPDX-License-Identifier: MIT
/*
 * Validation and dataplane ids.  Every change is validated as a whole state
 * before it reaches the store or the maps (xlb_state_validate): limits,
 * unique ids and keys, addresses that can serve.  `apply` gets a state
 * without ids; xlb_state_assign_ids carries over the ids of what both
 * states share and hands out the others.
 *
 * Scale: states of thousands of VIPs and tens of thousands of reals are
 * checked in linear time (bitmaps of ids, a sorted list of VIP addresses),
 * not by comparing every pair.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "state_impl.h"

static bool vip_id_used(const struct xlb_state *st, uint32_t id)
{
	for (size_t i = 0; i < st->vip_cnt; i++)
		if (st->vips[i].id == id)
			return true;
	return false;
}

static bool real_id_used(const struct xlb_state *st, uint32_t id)
{
	for (size_t i = 0; i < st->vip_cnt; i++)
		for (size_t j = 0; j < st->vips[i].real_cnt; j++)
			if (st->vips[i].reals[j].id == id)
				return true;
	return false;
}

int xlb__alloc_vip_id(const struct xlb_state *st, const struct xlb_settings *set, uint32_t *ret)
{
	for (uint32_t id = 0; id < set->max_vips; id++)
		if (!vip_id_used(st, id)) {
			*ret = id;
			return 0;
		}
	return -ENOSPC;
}

/* Real ids run from 1 (0 means "no real" to the dataplane), round robin. */
int xlb__alloc_real_id(struct xlb_state *st, const struct xlb_settings *set, uint32_t *ret)
{
	uint32_t span = set->max_reals > 1 ? set->max_reals - 1 : 0;
	uint32_t id = st->next_real_id;

	for (uint32_t k = 0; k < span; k++) {
		if (id < 1 || id >= set->max_reals)
			id = 1;
		if (!real_id_used(st, id)) {
			*ret = id;
			st->next_real_id = id + 1 >= set->max_reals ? 1 : id + 1;
			return 0;
		}
		id++;
	}
	return -ENOSPC;
}

int xlb__check_vip(const struct xlb_vip_cfg *v, struct xlb_err *err)
{
	const char *why;
	char buf[64];

	if (v->addr.family != AF_INET && v->addr.family != AF_INET6)
		return xlb_err_set(err, -EINVAL, "VIP address family must be IPv4 or IPv6");
	why = xlb_addr_unusable(&v->addr);
	if (why)
		return xlb_err_set(err, -EINVAL, "VIP %s is %s: no packet can be balanced to it",
				   xlb_addr_str(&v->addr, buf, sizeof(buf)), why);
	if (v->proto != IPPROTO_TCP && v->proto != IPPROTO_UDP)
		return xlb_err_set(err, -EINVAL, "VIP protocol must be tcp or udp");
	if (v->flags & ~(uint32_t)XLB_VIP_F_ALL)
		return xlb_err_set(err, -EINVAL, "unknown VIP flag bits 0x%x", v->flags);
	if (v->encap != XLB_ENCAP_IP && v->encap != XLB_ENCAP_GUE)
		return xlb_err_set(err, -EINVAL, "unknown encapsulation");
	if (v->hc.type > XLB_HC_HTTP)
		return xlb_err_set(err, -EINVAL, "unknown health check type");
	if (v->allow_cnt > XLB_ALLOW_PER_VIP)
		return xlb_err_set(err, -E2BIG, "at most %d allow prefixes per VIP", XLB_ALLOW_PER_VIP);
	for (size_t i = 0; i < v->allow_cnt; i++) {
		char b[80];

		if (v->allow[i].addr.family != v->addr.family)
			return xlb_err_set(err, -EINVAL, "allow prefix %s is not of the VIP's family",
					   xlb_prefix_str(&v->allow[i], b, sizeof(b)));
		for (size_t k = 0; k < i; k++)
			if (v->allow[k].plen == v->allow[i].plen &&
			    xlb_addr_eq(&v->allow[k].addr, &v->allow[i].addr))
				return xlb_err_set(err, -EEXIST, "allow prefix %s given twice",
						   xlb_prefix_str(&v->allow[i], b, sizeof(b)));
	}
	if (v->hc.type != XLB_HC_NONE) {
		if (v->hc.interval_ms < 10 || v->hc.interval_ms > 3600000)
			return xlb_err_set(err, -EINVAL, "health check interval must be 10 ms..1 h");
		if (v->hc.timeout_ms < 1 || v->hc.timeout_ms > v->hc.interval_ms)
			return xlb_err_set(err, -EINVAL,
					   "health check timeout must be 1 ms..interval");
		if (!v->hc.rise || !v->hc.fall)
			return xlb_err_set(err, -EINVAL, "health check rise and fall must be >= 1");
		if (v->hc.path[0] != '/' || memchr(v->hc.path, '\0', sizeof(v->hc.path)) == NULL ||
		    strpbrk(v->hc.path, " \r\n\t"))
			return xlb_err_set(err, -EINVAL,
					   "health check path must start with / and have no blanks");
	}
	return 0;
}

int xlb__check_real(const struct xlb_real_cfg *r, struct xlb_err *err)
{
	const char *why;
	char buf[64];

	if (r->addr.family != AF_INET && r->addr.family != AF_INET6)
		return xlb_err_set(err, -EINVAL, "real address family must be IPv4 or IPv6");
	why = xlb_addr_unusable(&r->addr);
	if (why)
		return xlb_err_set(err, -EINVAL,
				   "real %s is %s: packets encapsulated to it cannot arrive",
				   xlb_addr_str(&r->addr, buf, sizeof(buf)), why);
	if (r->weight > 1000000)
		return xlb_err_set(err, -EINVAL, "real weight must be 0..1000000");
	if (r->state > XLB_REAL_DOWN)
		return xlb_err_set(err, -EINVAL, "unknown real state");
	if (r->server_id > XLB_SERVER_ID_MAX)
		return xlb_err_set(err, -ERANGE, "server id %u is over %u", r->server_id,
				   XLB_SERVER_ID_MAX);
	return 0;
}

/* QUIC server ids, sorted: one id names one server (several VIPs may share it). */
struct sid_ref {
	uint32_t sid;
	const struct xlb_ip *addr;
};

static int sid_cmp(const void *a, const void *b)
{
	const struct sid_ref *x = a, *y = b;

	return x->sid < y->sid ? -1 : x->sid > y->sid;
}

static int check_server_ids(const struct xlb_state *st, struct xlb_err *err)
{
	struct sid_ref *refs;
	size_t n = 0, cap = 0;
	char buf[64];
	int ret = 0;

	for (size_t i = 0; i < st->vip_cnt; i++)
		cap += st->vips[i].real_cnt;
	refs = calloc(cap ? cap : 1, sizeof(*refs));
	if (!refs)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < st->vip_cnt; i++)
		for (size_t j = 0; j < st->vips[i].real_cnt; j++)
			if (st->vips[i].reals[j].server_id)
				refs[n++] = (struct sid_ref){ st->vips[i].reals[j].server_id,
							      &st->vips[i].reals[j].addr };
	qsort(refs, n, sizeof(*refs), sid_cmp);
	for (size_t i = 1; i < n && !ret; i++)
		if (refs[i].sid == refs[i - 1].sid && !xlb_addr_eq(refs[i].addr, refs[i - 1].addr))
			ret = xlb_err_set(err, -EEXIST, "server id %u is already %s's", refs[i].sid,
					  xlb_addr_str(refs[i - 1].addr, buf, sizeof(buf)));
	free(refs);
	return ret;
}

/* A VIP's address as a real sends the balanced packets back to the balancer. */
/* The real/VIP address checks of a whole state, by sorted VIP addresses. */
static int addr_cmp(const void *a, const void *b)
{
	const struct xlb_ip *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->bytes, y->bytes, x->family == AF_INET ? 4 : 16);
}

int xlb__check_real_not_vip(const struct xlb_state *st, const struct xlb_real_cfg *r,
			      struct xlb_err *err)
{
	char buf[64];

	for (size_t i = 0; i < st->vip_cnt; i++)
		if (xlb_addr_eq(&st->vips[i].addr, &r->addr))
			return xlb_err_set(err, -EINVAL,
					   "real %s is a VIP address: its packets would come back to "
					   "the balancer",
					   xlb_addr_str(&r->addr, buf, sizeof(buf)));
	return 0;
}


int xlb_state_validate(const struct xlb_state *st, const struct xlb_settings *set,
		       struct xlb_err *err)
{
	uint8_t *vip_ids = calloc(set->max_vips ? set->max_vips : 1, 1);
	uint8_t *real_ids = calloc(set->max_reals ? set->max_reals : 1, 1);
	struct xlb_ip *addrs = calloc(st->vip_cnt ? st->vip_cnt : 1, sizeof(*addrs));
	char buf[64];
	int ret = 0;

	if (!vip_ids || !real_ids || !addrs) {
		ret = xlb_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < st->vip_cnt && !ret; i++) {
		const struct xlb_vip_cfg *v = &st->vips[i];

		ret = xlb__check_vip(v, err);
		if (ret)
			break;
		if (v->id >= set->max_vips) {
			ret = xlb_err_set(err, -ERANGE, "VIP id %u out of range (max_vips %u)", v->id,
					  set->max_vips);
			break;
		}
		if (vip_ids[v->id]++) {
			ret = xlb_err_set(err, -EINVAL, "duplicate VIP id %u", v->id);
			break;
		}
		for (size_t k = 0; k < i; k++) {
			const struct xlb_vip_cfg *o = &st->vips[k];

			if (o->port == v->port && o->proto == v->proto &&
			    xlb_addr_eq(&o->addr, &v->addr)) {
				ret = xlb_err_set(err, -EEXIST, "duplicate VIP %s:%u/%s",
						  xlb_addr_str(&v->addr, buf, sizeof(buf)), v->port,
						  xlb_proto_name(v->proto));
				break;
			}
		}
		addrs[i] = v->addr;
	}
	if (ret)
		goto out;
	qsort(addrs, st->vip_cnt, sizeof(*addrs), addr_cmp);
	for (size_t i = 0; i < st->vip_cnt && !ret; i++) {
		const struct xlb_vip_cfg *v = &st->vips[i];

		for (size_t j = 0; j < v->real_cnt && !ret; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];

			ret = xlb__check_real(r, err);
			if (ret)
				break;
			if (bsearch(&r->addr, addrs, st->vip_cnt, sizeof(*addrs), addr_cmp)) {
				ret = xlb__check_real_not_vip(st, r, err);
				break;
			}
			if (r->id < 1 || r->id >= set->max_reals) {
				ret = xlb_err_set(err, -ERANGE, "real id %u out of range (max_reals %u)",
						  r->id, set->max_reals);
				break;
			}
			/* Real ids are unique across VIPs: a real id is one dataplane slot. */
			if (real_ids[r->id]++) {
				ret = xlb_err_set(err, -EINVAL, "duplicate real id %u", r->id);
				break;
			}
			for (size_t k = 0; k < j; k++)
				if (xlb_addr_eq(&v->reals[k].addr, &r->addr)) {
					ret = xlb_err_set(err, -EEXIST, "duplicate real %s",
							  xlb_addr_str(&r->addr, buf, sizeof(buf)));
					break;
				}
		}
	}
	if (!ret)
		ret = check_server_ids(st, err);
out:
	free(vip_ids);
	free(real_ids);
	free(addrs);
	return ret;
}

/*
 * Handing out ids in [lo, max) that `next` does not use.  Ids the old state
 * `cur` used are taken only when no other is left, so an apply needs the
 * capacity of its result, not of the old and the new state together, while
 * ids are still not reused soon when there is room (a flow left in the LRU
 * must not land on a newcomer that took a deleted real's id).  The cursor
 * goes round once per kind of id, so a whole apply is linear.
 */
struct id_picker {
	const uint8_t *used_cur;
	uint8_t *used_next;
	uint32_t lo, max, cursor;
	bool fresh_gone; /* no id is free in both any more */
};

static int pick_id(struct id_picker *p, uint32_t *ret)
{
	uint32_t span = p->max > p->lo ? p->max - p->lo : 0;

	for (int pass = p->fresh_gone; pass < 2; pass++) {
		for (uint32_t k = 0, id = p->cursor; k < span; k++, id++) {
			if (id < p->lo || id >= p->max)
				id = p->lo;
			if (!p->used_next[id] && (pass || !p->used_cur[id])) {
				p->used_next[id] = 1;
				p->cursor = id + 1;
				*ret = id;
				return 0;
			}
		}
		p->fresh_gone = true;
	}
	return -ENOSPC;
}

int xlb_state_assign_ids(struct xlb_state *next, const struct xlb_state *cur,
			 const struct xlb_settings *set, struct xlb_err *err)
{
	uint32_t nv = set->max_vips ? set->max_vips : 1, nr = set->max_reals ? set->max_reals : 1;
	uint8_t *vn = calloc(nv, 1), *vc = calloc(nv, 1), *rn = calloc(nr, 1), *rc = calloc(nr, 1);
	int ret = 0;

	if (!vn || !vc || !rn || !rc) {
		ret = xlb_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < cur->vip_cnt; i++) {
		if (cur->vips[i].id < nv)
			vc[cur->vips[i].id] = 1;
		for (size_t j = 0; j < cur->vips[i].real_cnt; j++)
			if (cur->vips[i].reals[j].id < nr)
				rc[cur->vips[i].reals[j].id] = 1;
	}
	/* 1. What exists in both keeps its ids. */
	for (size_t i = 0; i < next->vip_cnt; i++) {
		struct xlb_vip_cfg *v = &next->vips[i];
		const struct xlb_vip_cfg *o = xlb_state_find_vip(cur, &v->addr, v->port, v->proto);

		v->id = o && o->id < nv ? o->id : UINT32_MAX;
		if (v->id != UINT32_MAX)
			vn[v->id] = 1;
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = o ? xlb_vip_find_real(o, &v->reals[j].addr) : NULL;

			v->reals[j].id = r && r->id < nr ? r->id : 0;
			if (v->reals[j].id)
				rn[v->reals[j].id] = 1;
		}
	}
	/* 2. The rest get free ids, the ones the old state used last. */
	struct id_picker vp = { .used_cur = vc, .used_next = vn, .lo = 0, .max = nv };
	struct id_picker rp = { .used_cur = rc, .used_next = rn, .lo = 1, .max = nr,
				.cursor = cur->next_real_id };

	for (size_t i = 0; i < next->vip_cnt && !ret; i++) {
		struct xlb_vip_cfg *v = &next->vips[i];

		if (v->id == UINT32_MAX && pick_id(&vp, &v->id)) {
			ret = xlb_err_set(err, -ENOSPC, "no free VIP slot (max_vips %u)", set->max_vips);
			break;
		}
		for (size_t j = 0; j < v->real_cnt; j++)
			if (!v->reals[j].id && pick_id(&rp, &v->reals[j].id)) {
				ret = xlb_err_set(err, -ENOSPC, "no free real slot (max_reals %u)",
						  set->max_reals);
				break;
			}
	}
	if (!ret) {
		next->next_real_id = rp.cursor >= nr ? 1 : rp.cursor;
		ret = xlb_state_validate(next, set, err);
	}
out:
	free(vn);
	free(vc);
	free(rn);
	free(rc);
	return ret;
}
