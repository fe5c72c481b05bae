// SPDX-License-Identifier: MIT
/*
 * The desired-state model: VIPs with their reals, names of enums, address
 * parsing, edits that validate and allocate dataplane ids.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xlb_control.h"

int xlb_err_set(struct xlb_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

void xlb_settings_default(struct xlb_settings *set)
{
	memset(set, 0, sizeof(*set));
	set->ring_size = XLB_RING_SIZE_DEFAULT;
	set->lru_size = 65536;
	set->max_vips = 512;
	set->max_reals = 4096;
	set->hc_mark_base = XLB_HC_MARK_BASE_DEFAULT;
}

void xlb_hc_default(struct xlb_hc *hc)
{
	memset(hc, 0, sizeof(*hc));
	hc->type = XLB_HC_NONE;
	strcpy(hc->path, "/");
	hc->interval_ms = 1000;
	hc->timeout_ms = 500;
	hc->rise = 2;
	hc->fall = 2;
}

void xlb_state_init(struct xlb_state *st)
{
	memset(st, 0, sizeof(*st));
	st->next_real_id = 1;
}

void xlb_state_free(struct xlb_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->vip_cnt; i++)
		free(st->vips[i].reals);
	free(st->vips);
	st->vips = NULL;
	st->vip_cnt = 0;
}

int xlb_state_copy(struct xlb_state *dst, const struct xlb_state *src)
{
	struct xlb_state tmp = *src;

	tmp.vips = calloc(src->vip_cnt ? src->vip_cnt : 1, sizeof(*tmp.vips));
	if (!tmp.vips)
		return -ENOMEM;
	for (size_t i = 0; i < src->vip_cnt; i++) {
		tmp.vips[i] = src->vips[i];
		tmp.vips[i].reals = calloc(src->vips[i].real_cnt ? src->vips[i].real_cnt : 1,
					   sizeof(struct xlb_real_cfg));
		if (!tmp.vips[i].reals) {
			tmp.vip_cnt = i;
			xlb_state_free(&tmp);
			return -ENOMEM;
		}
		if (src->vips[i].real_cnt) /* reals may be NULL then */
			memcpy(tmp.vips[i].reals, src->vips[i].reals,
			       src->vips[i].real_cnt * sizeof(struct xlb_real_cfg));
	}
	*dst = tmp;
	return 0;
}

int xlb_addr_parse(const char *s, struct xlb_ip *ret_addr)
{
	struct xlb_ip a = { 0 };

	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, a.bytes) == 1)
		a.family = AF_INET;
	else if (inet_pton(AF_INET6, s, a.bytes) == 1)
		a.family = AF_INET6;
	else
		return -EINVAL;
	*ret_addr = a;
	return 0;
}

const char *xlb_addr_str(const struct xlb_ip *a, char *buf, size_t len)
{
	if (!inet_ntop(a->family == AF_INET6 ? AF_INET6 : AF_INET, a->bytes, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

bool xlb_addr_eq(const struct xlb_ip *a, const struct xlb_ip *b)
{
	return a->family == b->family &&
	       !memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16);
}

int xlb_prefix_parse(const char *s, struct xlb_prefix *ret)
{
	char buf[80], *slash;
	struct xlb_prefix p;
	unsigned long n;
	char *end;
	int max;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (xlb_addr_parse(buf, &p.addr))
		return -EINVAL;
	max = p.addr.family == AF_INET ? 32 : 128;
	p.plen = (uint8_t)max;
	if (slash) {
		errno = 0;
		n = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || errno || n > (unsigned long)max || slash[1] == '-')
			return -EINVAL;
		p.plen = (uint8_t)n;
	}
	for (int bit = p.plen; bit < max; bit++)
		if (p.addr.bytes[bit / 8] & (0x80 >> (bit % 8)))
			return -EINVAL; /* host bits set: a typo, not a prefix */
	*ret = p;
	return 0;
}

const char *xlb_prefix_str(const struct xlb_prefix *p, char *buf, size_t len)
{
	char a[64];

	snprintf(buf, len, "%s/%u", xlb_addr_str(&p->addr, a, sizeof(a)), p->plen);
	return buf;
}

int xlb_mac_parse(const char *s, uint8_t ret_mac[6])
{
	unsigned int m[6];
	char tail;

	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
			 &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		ret_mac[i] = (uint8_t)m[i];
	return 0;
}

const char *xlb_proto_name(uint8_t proto)
{
	return proto == IPPROTO_TCP ? "tcp" : proto == IPPROTO_UDP ? "udp" : "?";
}

int xlb_proto_parse(const char *s, uint8_t *ret_proto)
{
	if (!s)
		return -EINVAL;
	if (!strcasecmp(s, "tcp"))
		*ret_proto = IPPROTO_TCP;
	else if (!strcasecmp(s, "udp"))
		*ret_proto = IPPROTO_UDP;
	else
		return -EINVAL;
	return 0;
}

const char *const xlb_encap_names[] = {
#define ENCAP_NAME(sym, val, name, doc) [val] = name,
	XLB_ENCAPS(ENCAP_NAME)
#undef ENCAP_NAME
	[XLB_ENCAP_MAX] = NULL,
};
const char *const xlb_real_state_names[] = {
	[XLB_REAL_ACTIVE] = "active",
	[XLB_REAL_DRAINING] = "draining",
	[XLB_REAL_DOWN] = "down",
	NULL,
};
const char *const xlb_hc_type_names[] = {
	[XLB_HC_NONE] = "none",
	[XLB_HC_TCP] = "tcp",
	[XLB_HC_HTTP] = "http",
	NULL,
};
const char *const xlb_hc_via_names[] = { "direct", "encap", NULL };
const char *const xlb_vip_flag_names[] = {
#define FLAG_NAME(sym, bit, name, doc) [bit] = name,
	XLB_VIP_FLAGS(FLAG_NAME)
#undef FLAG_NAME
	NULL,
};

/* Names without their NULL end. */
#define NAMES(a) (sizeof(a) / sizeof((a)[0]) - 1)

static int name_lookup(const char *const *names, size_t n, const char *s)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return (int)i;
	return -EINVAL;
}

const char *xlb_encap_name(enum xlb_encap e)
{
	return (size_t)e < NAMES(xlb_encap_names) ? xlb_encap_names[e] : "?";
}

int xlb_encap_parse(const char *s, enum xlb_encap *ret)
{
	int i = name_lookup(xlb_encap_names, NAMES(xlb_encap_names), s);

	if (i < 0)
		return i;
	*ret = (enum xlb_encap)i;
	return 0;
}

const char *xlb_real_state_name(enum xlb_real_state s)
{
	return (size_t)s < NAMES(xlb_real_state_names) ? xlb_real_state_names[s] : "?";
}

int xlb_real_state_parse(const char *s, enum xlb_real_state *ret)
{
	int i = name_lookup(xlb_real_state_names, NAMES(xlb_real_state_names), s);

	if (i < 0)
		return i;
	*ret = (enum xlb_real_state)i;
	return 0;
}

const char *xlb_hc_type_name(enum xlb_hc_type t)
{
	return (size_t)t < NAMES(xlb_hc_type_names) ? xlb_hc_type_names[t] : "?";
}

int xlb_hc_type_parse(const char *s, enum xlb_hc_type *ret)
{
	int i = name_lookup(xlb_hc_type_names, NAMES(xlb_hc_type_names), s);

	if (i < 0)
		return i;
	*ret = (enum xlb_hc_type)i;
	return 0;
}

const char *xlb_vip_flag_name(uint32_t bit)
{
	for (size_t i = 0; i < NAMES(xlb_vip_flag_names); i++)
		if (bit == (1u << i))
			return xlb_vip_flag_names[i];
	return NULL;
}

int xlb_vip_flag_parse(const char *s, uint32_t *ret_bit)
{
	int i = name_lookup(xlb_vip_flag_names, NAMES(xlb_vip_flag_names), s);

	if (i < 0)
		return i;
	*ret_bit = 1u << i;
	return 0;
}

struct xlb_vip_cfg *xlb_state_find_vip(const struct xlb_state *st, const struct xlb_ip *addr,
				   uint16_t port, uint8_t proto)
{
	for (size_t i = 0; i < st->vip_cnt; i++) {
		struct xlb_vip_cfg *v = &st->vips[i];

		if (v->port == port && v->proto == proto && xlb_addr_eq(&v->addr, addr))
			return v;
	}
	return NULL;
}

struct xlb_real_cfg *xlb_vip_find_real(const struct xlb_vip_cfg *vip, const struct xlb_ip *addr)
{
	for (size_t i = 0; i < vip->real_cnt; i++)
		if (xlb_addr_eq(&vip->reals[i].addr, addr))
			return &vip->reals[i];
	return NULL;
}

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

static int alloc_vip_id(const struct xlb_state *st, const struct xlb_settings *set, uint32_t *ret)
{
	for (uint32_t id = 0; id < set->max_vips; id++)
		if (!vip_id_used(st, id)) {
			*ret = id;
			return 0;
		}
	return -ENOSPC;
}

/* Real ids run from 1 (0 means "no real" to the dataplane), round robin. */
static int alloc_real_id(struct xlb_state *st, const struct xlb_settings *set, uint32_t *ret)
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

static int check_vip(const struct xlb_vip_cfg *v, struct xlb_err *err)
{
	if (v->addr.family != AF_INET && v->addr.family != AF_INET6)
		return xlb_err_set(err, -EINVAL, "VIP address family must be IPv4 or IPv6");
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

static int check_real(const struct xlb_real_cfg *r, struct xlb_err *err)
{
	if (r->addr.family != AF_INET && r->addr.family != AF_INET6)
		return xlb_err_set(err, -EINVAL, "real address family must be IPv4 or IPv6");
	if (r->weight > 1000000)
		return xlb_err_set(err, -EINVAL, "real weight must be 0..1000000");
	if (r->state > XLB_REAL_DOWN)
		return xlb_err_set(err, -EINVAL, "unknown real state");
	if (r->server_id > XLB_SERVER_ID_MAX)
		return xlb_err_set(err, -ERANGE, "server id %u is over %u", r->server_id,
				   XLB_SERVER_ID_MAX);
	return 0;
}

int xlb_state_vip_add(struct xlb_state *st, const struct xlb_settings *set,
		      const struct xlb_vip_cfg *vip, struct xlb_err *err)
{
	char buf[64];
	struct xlb_vip_cfg *vips, v = *vip;
	int ret;

	ret = check_vip(&v, err);
	if (ret)
		return ret;
	if (xlb_state_find_vip(st, &v.addr, v.port, v.proto))
		return xlb_err_set(err, -EEXIST, "VIP %s:%u/%s exists",
				   xlb_addr_str(&v.addr, buf, sizeof(buf)), v.port,
				   xlb_proto_name(v.proto));
	if (alloc_vip_id(st, set, &v.id))
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

	ret = check_real(&r, err);
	if (ret)
		return ret;
	if (xlb_vip_find_real(vip, &r.addr))
		return xlb_err_set(err, -EEXIST, "real %s exists",
				   xlb_addr_str(&r.addr, buf, sizeof(buf)));
	if (alloc_real_id(st, set, &r.id))
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

int xlb_state_validate(const struct xlb_state *st, const struct xlb_settings *set,
		       struct xlb_err *err)
{
	char buf[64];
	int ret;

	for (size_t i = 0; i < st->vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &st->vips[i];

		ret = check_vip(v, err);
		if (ret)
			return ret;
		if (v->id >= set->max_vips)
			return xlb_err_set(err, -ERANGE, "VIP id %u out of range", v->id);
		for (size_t k = 0; k < i; k++) {
			const struct xlb_vip_cfg *o = &st->vips[k];

			if (o->id == v->id)
				return xlb_err_set(err, -EINVAL, "duplicate VIP id %u", v->id);
			if (o->port == v->port && o->proto == v->proto &&
			    xlb_addr_eq(&o->addr, &v->addr))
				return xlb_err_set(err, -EEXIST, "duplicate VIP %s:%u/%s",
						   xlb_addr_str(&v->addr, buf, sizeof(buf)),
						   v->port, xlb_proto_name(v->proto));
		}
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];

			ret = check_real(r, err);
			if (ret)
				return ret;
			if (r->id < 1 || r->id >= set->max_reals)
				return xlb_err_set(err, -ERANGE, "real id %u out of range", r->id);
			for (size_t k = 0; k < j; k++)
				if (xlb_addr_eq(&v->reals[k].addr, &r->addr))
					return xlb_err_set(err, -EEXIST, "duplicate real %s",
							   xlb_addr_str(&r->addr, buf,
									sizeof(buf)));
		}
	}
	/* Real ids are unique across VIPs (quadratic, but states are small). */
	for (size_t i = 0; i < st->vip_cnt; i++)
		for (size_t j = 0; j < st->vips[i].real_cnt; j++) {
			uint32_t id = st->vips[i].reals[j].id;

			for (size_t k = 0; k <= i; k++)
				for (size_t l = 0; l < (k == i ? j : st->vips[k].real_cnt); l++)
					if (st->vips[k].reals[l].id == id)
						return xlb_err_set(err, -EINVAL,
								   "duplicate real id %u", id);
		}
	/* A QUIC server id names one server (the same address in several VIPs is fine). */
	for (size_t i = 0; i < st->vip_cnt; i++)
		for (size_t j = 0; j < st->vips[i].real_cnt; j++) {
			const struct xlb_real_cfg *r = &st->vips[i].reals[j];

			for (size_t k = 0; r->server_id && k <= i; k++)
				for (size_t l = 0; l < (k == i ? j : st->vips[k].real_cnt); l++) {
					const struct xlb_real_cfg *o = &st->vips[k].reals[l];

					if (o->server_id == r->server_id && !xlb_addr_eq(&o->addr, &r->addr))
						return xlb_err_set(err, -EEXIST,
								   "server id %u is already %s's",
								   r->server_id,
								   xlb_addr_str(&o->addr, buf, sizeof(buf)));
				}
		}
	return 0;
}

int xlb_state_assign_ids(struct xlb_state *next, const struct xlb_state *cur,
			 const struct xlb_settings *set, struct xlb_err *err)
{
	struct xlb_state tmp;

	/* Ids being allocated are looked up in `tmp`, which starts empty of ids. */
	xlb_state_init(&tmp);
	tmp.next_real_id = cur->next_real_id;
	for (size_t i = 0; i < next->vip_cnt; i++) {
		next->vips[i].id = UINT32_MAX;
		for (size_t j = 0; j < next->vips[i].real_cnt; j++)
			next->vips[i].reals[j].id = 0;
	}
	/* First keep the ids of what exists in both. */
	for (size_t i = 0; i < next->vip_cnt; i++) {
		struct xlb_vip_cfg *v = &next->vips[i];
		const struct xlb_vip_cfg *o = xlb_state_find_vip(cur, &v->addr, v->port, v->proto);

		if (!o)
			continue;
		v->id = o->id;
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = xlb_vip_find_real(o, &v->reals[j].addr);

			if (r)
				v->reals[j].id = r->id;
		}
	}
	/* Then hand out fresh ones, avoiding every id in use in either state. */
	for (size_t i = 0; i < next->vip_cnt; i++) {
		struct xlb_vip_cfg *v = &next->vips[i];

		if (v->id == UINT32_MAX) {
			uint32_t id;

			for (id = 0; id < set->max_vips; id++)
				if (!vip_id_used(next, id) && !vip_id_used(cur, id))
					break;
			if (id >= set->max_vips)
				return xlb_err_set(err, -ENOSPC, "no free VIP slot (max_vips %u)",
						   set->max_vips);
			v->id = id;
		}
		for (size_t j = 0; j < v->real_cnt; j++) {
			uint32_t id = tmp.next_real_id, k;

			if (v->reals[j].id)
				continue;
			for (k = 0; k < set->max_reals; k++, id++) {
				if (id < 1 || id >= set->max_reals)
					id = 1;
				if (!real_id_used(next, id) && !real_id_used(cur, id))
					break;
			}
			if (k >= set->max_reals)
				return xlb_err_set(err, -ENOSPC, "no free real slot (max_reals %u)",
						   set->max_reals);
			v->reals[j].id = id;
			tmp.next_real_id = id + 1 >= set->max_reals ? 1 : id + 1;
		}
	}
	next->next_real_id = tmp.next_real_id;
	return xlb_state_validate(next, set, err);
}
