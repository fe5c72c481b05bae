// SPDX-License-Identifier: MIT
/*
 * Edits of the desired state (the API's vip.* and real.* ops): each one
 * validates what it adds, allocates dataplane ids within the settings'
 * limits, and leaves the state untouched on error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state_impl.h"

int xlb_state_vip_add(struct xlb_state *st, const struct xlb_settings *set,
		      const struct xlb_vip_cfg *vip, struct xlb_err *err)
{
	char buf[64];
	struct xlb_vip_cfg *vips, v = *vip;
	int ret;

	ret = xlb__check_vip(&v, err);
	if (ret)
		return ret;
	if (xlb_state_find_vip(st, &v.addr, v.port, v.proto))
		return xlb_err_set(err, -EEXIST, "VIP %s:%u/%s exists",
				   xlb_addr_str(&v.addr, buf, sizeof(buf)), v.port,
				   xlb_proto_name(v.proto));
	if (xlb__alloc_vip_id(st, set, &v.id))
		return xlb_err_set(err, -ENOSPC, "no free VIP slot (max_vips %u)", set->max_vips);
	vips = realloc(st->vips, (st->vip_cnt + 1) * sizeof(*vips));
	if (!vips)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	st->vips = vips;
	v.reals = NULL;
	v.real_cnt = 0;
	st->vips[st->vip_cnt++] = v;
	return 0;
}

int xlb_state_vip_del(struct xlb_state *st, const struct xlb_ip *addr, uint16_t port,
		      uint8_t proto, struct xlb_err *err)
{
	struct xlb_vip_cfg *v = xlb_state_find_vip(st, addr, port, proto);
	char buf[64];
	size_t i;

	if (!v)
		return xlb_err_set(err, -ENOENT, "no VIP %s:%u/%s", xlb_addr_str(addr, buf, sizeof(buf)),
				   port, xlb_proto_name(proto));
	i = (size_t)(v - st->vips);
	free(v->reals);
	memmove(&st->vips[i], &st->vips[i + 1], (st->vip_cnt - i - 1) * sizeof(*v));
	st->vip_cnt--;
	return 0;
}

int xlb_state_real_add(struct xlb_state *st, const struct xlb_settings *set, struct xlb_vip_cfg *vip,
		       const struct xlb_real_cfg *real, struct xlb_err *err)
{
	struct xlb_real_cfg r = *real, *reals;
	char buf[64];
	int ret;

	ret = xlb__check_real(&r, err);
	if (ret)
		return ret;
	ret = xlb__check_real_not_vip(st, &r, err);
	if (ret)
		return ret;
	if (xlb_vip_find_real(vip, &r.addr))
		return xlb_err_set(err, -EEXIST, "real %s exists",
				   xlb_addr_str(&r.addr, buf, sizeof(buf)));
	if (xlb__alloc_real_id(st, set, &r.id))
		return xlb_err_set(err, -ENOSPC, "no free real slot (max_reals %u)",
				   set->max_reals);
	reals = realloc(vip->reals, (vip->real_cnt + 1) * sizeof(*reals));
	if (!reals)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	vip->reals = reals;
	vip->reals[vip->real_cnt++] = r;
	return 0;
}

int xlb_state_real_del(struct xlb_state *st, struct xlb_vip_cfg *vip, const struct xlb_ip *addr,
		       struct xlb_err *err)
{
	struct xlb_real_cfg *r = xlb_vip_find_real(vip, addr);
	char buf[64];
	size_t i;

	if (!r)
		return xlb_err_set(err, -ENOENT, "no real %s", xlb_addr_str(addr, buf, sizeof(buf)));
	i = (size_t)(r - vip->reals);
	memmove(&vip->reals[i], &vip->reals[i + 1], (vip->real_cnt - i - 1) * sizeof(*r));
	vip->real_cnt--;
	return 0;
}

