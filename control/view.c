// SPDX-License-Identifier: MIT
/*
 * How xlbd shows its objects to the API, the logs and the metrics: VIP
 * names, VIP lookups by key object, and VIPs and reals as JSON with their
 * health and ring membership.
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>

#include "xlbd.h"

const char *xlbd_vip_str(const struct xlb_vip_cfg *v, char *buf, size_t len)
{
	char a[64];

	snprintf(buf, len, "%s%s%s:%u/%s", v->addr.family == AF_INET6 ? "[" : "",
		 xlb_addr_str(&v->addr, a, sizeof(a)), v->addr.family == AF_INET6 ? "]" : "", v->port,
		 xlb_proto_name(v->proto));
	return buf;
}

int xlbd_find_vip(const json_t *key, const struct xlb_state *st, struct xlb_vip_cfg **ret,
		  struct xlb_err *err)
{
	struct xlb_ip a;
	uint16_t port;
	uint8_t proto;
	char buf[64];
	int r;

	r = xlb_vip_key_from_json(key, &a, &port, &proto, err);
	if (r)
		return r;
	*ret = xlb_state_find_vip(st, &a, port, proto);
	if (!*ret)
		return xlb_err_set(err, -ENOENT, "no VIP %s:%u/%s", xlb_addr_str(&a, buf, sizeof(buf)),
				   port, xlb_proto_name(proto));
	return 0;
}

json_t *xlbd_real_json(const struct daemon *d, const struct xlb_vip_cfg *v,
		       const struct xlb_real_cfg *r)
{
	json_t *j = xlb_real_to_json(r);
	const struct real_health *h = &d->health[r->id];

	json_object_set_new(j, "health",
			    json_string(v->hc.type == XLB_HC_NONE ? "unchecked" :
								    xlbd_health_name(h->state)));
	json_object_set_new(j, "in_ring", json_boolean(xlbd_real_in_ring(d, v, r)));
	return j;
}

json_t *xlbd_vip_full_json(const struct daemon *d, const struct xlb_vip_cfg *v)
{
	json_t *j = xlb_vip_to_json(v, false), *reals = json_array();
	size_t in_ring = 0;

	for (size_t i = 0; i < v->real_cnt; i++) {
		json_array_append_new(reals, xlbd_real_json(d, v, &v->reals[i]));
		in_ring += xlbd_real_in_ring(d, v, &v->reals[i]);
	}
	json_object_set_new(j, "reals", reals);
	json_object_set_new(j, "reals_in_ring", json_integer((json_int_t)in_ring));
	return j;
}
