// SPDX-License-Identifier: MIT
/*
 * How xlbd shows its objects to the API, the logs and the metrics: VIP
 * names, VIP lookups by key object, VIPs and reals as JSON with their
 * health and ring membership, and the dataplane's own ports and lcores.
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

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

const char *xlbd_health_str(const struct daemon *d, const struct xlb_vip_cfg *v,
			    const struct xlb_real_cfg *r)
{
	const struct real_health *h = &d->health[r->id];

	if (v->hc.type == XLB_HC_NONE)
		return "unchecked";
	if (h->gated && h->state == HEALTH_UNKNOWN)
		return "waiting";
	return xlbd_health_name(h->state);
}

int xlbd_ring_slots(struct daemon *d, const struct xlb_vip_cfg *v, uint32_t *ret_slots)
{
	const struct shadow_vip *s = &d->svips[v->id];
	uint32_t *count = d->slot_count;

	/* Only this VIP's reals can appear in its ring: zero theirs, count, read back. */
	for (size_t i = 0; i < v->real_cnt; i++)
		count[v->reals[i].id] = 0;
	if (s->present && s->ring_known)
		for (uint32_t i = 0; i < d->settings.ring_size; i++)
			if (s->ring[i] < d->settings.max_reals)
				count[s->ring[i]]++;
	for (size_t i = 0; i < v->real_cnt; i++)
		ret_slots[i] = count[v->reals[i].id];
	return 0;
}

json_t *xlbd_real_json(const struct daemon *d, const struct xlb_vip_cfg *v,
		       const struct xlb_real_cfg *r, uint32_t slots)
{
	json_t *j = xlb_real_to_json(r);
	json_object_set_new(j, "health", json_string(xlbd_health_str(d, v, r)));
	/* What the dataplane's ring holds now, not what the weights would give. */
	json_object_set_new(j, "slots", json_integer(slots));
	json_object_set_new(j, "share", json_real((double)slots / d->settings.ring_size));
	json_object_set_new(j, "in_ring", json_boolean(slots > 0));
	return j;
}

json_t *xlbd_vip_full_json(struct daemon *d, const struct xlb_vip_cfg *v)
{
	json_t *j = xlb_vip_to_json(v, false), *reals = json_array();
	uint32_t slots[v->real_cnt ? v->real_cnt : 1];
	size_t in_ring = 0;

	xlbd_ring_slots(d, v, slots);
	for (size_t i = 0; i < v->real_cnt; i++) {
		json_array_append_new(reals, xlbd_real_json(d, v, &v->reals[i], slots[i]));
		in_ring += slots[i] > 0;
	}
	json_object_set_new(j, "reals", reals);
	json_object_set_new(j, "reals_in_ring", json_integer((json_int_t)in_ring));
	return j;
}

const char *xlbd_vip_summary(const struct xlb_vip_cfg *v, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "encap %s flags", xlb_encap_name(v->encap));

	if (!v->flags)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " -");
	for (uint32_t bit = 1; bit & XLB_VIP_F_ALL; bit <<= 1)
		if (v->flags & bit)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s",
					      n && buf[n - 1] == 's' ? " " : ",", xlb_vip_flag_name(bit));
	if (v->hc.type == XLB_HC_NONE)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " check none");
	else
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0,
				      " check %s port %u every %u ms rise %u fall %u via %s",
				      xlb_hc_type_name(v->hc.type), v->hc.port, v->hc.interval_ms,
				      v->hc.rise, v->hc.fall, v->hc.via_encap ? "encap" : "direct");
	n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " affinity %u allow", v->affinity_s);
	for (size_t i = 0; i < v->allow_cnt; i++) {
		char p[80];

		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? "," : " ",
				      xlb_prefix_str(&v->allow[i], p, sizeof(p)));
	}
	if (!v->allow_cnt)
		snprintf(buf + n, n < len ? len - n : 0, " -");
	return buf;
}

json_t *xlbd_io_json(struct daemon *d)
{
	struct xlb_dp_io *io;
	json_t *ports, *lcores;

	if (!d->be.ops->io_stats || !(io = calloc(1, sizeof(*io))))
		return NULL;
	if (d->be.ops->io_stats(&d->be, io)) {
		free(io);
		return NULL;
	}
	ports = json_array();
	lcores = json_array();
	for (size_t i = 0; i < io->port_cnt; i++) {
		json_t *p = json_pack("{s:s, s:s, s:I}", "name", io->port[i].name, "role",
				      io->port[i].role, "ifindex", (json_int_t)io->port[i].ifindex);

		for (int c = 0; c < XLB_PORT_CTR_CNT; c++)
			json_object_set_new(p, xlb_port_counter_names[c],
					    json_integer((json_int_t)io->port[i].ctr[c]));
		json_array_append_new(ports, p);
	}
	for (size_t i = 0; i < io->lcore_cnt; i++) {
		json_t *l = json_pack("{s:I, s:I, s:f}", "index", (json_int_t)io->lcore[i].index,
				      "lcore", (json_int_t)io->lcore[i].lcore, "load", io->lcore[i].load);

		for (int c = 0; c < XLB_LCORE_CTR_CNT; c++)
			json_object_set_new(l, xlb_lcore_counter_names[c],
					    json_integer((json_int_t)io->lcore[i].ctr[c]));
		json_array_append_new(lcores, l);
	}
	free(io);
	return json_pack("{s:o, s:o}", "ports", ports, "lcores", lcores);
}
