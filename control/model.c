// SPDX-License-Identifier: MIT
/*
 * The desired-state model's basics: errors, defaults, copies and lookups,
 * addresses (which ones can serve at all) and the names of the enums (the
 * VIP flags' and encapsulations' from xlb_shared.h).
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

const char *xlb_addr_unusable(const struct xlb_ip *a)
{
	const uint8_t *b = a->bytes;

	if (a->family == AF_INET) {
		if (b[0] == 0)
			return "an unspecified (0.0.0.0/8) address";
		if (b[0] == 127)
			return "a loopback address";
		if (b[0] == 169 && b[1] == 254)
			return "a link-local address";
		if (b[0] >= 224 && b[0] <= 239)
			return "a multicast address";
		if (b[0] >= 240)
			return b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255 ?
				       "the broadcast address" :
				       "a reserved (240.0.0.0/4) address";
		return NULL;
	}
	if (a->family == AF_INET6) {
		static const uint8_t zero[16], loop[16] = { [15] = 1 };
		static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

		if (!memcmp(b, zero, 16))
			return "the unspecified address ::";
		if (!memcmp(b, loop, 16))
			return "the loopback address ::1";
		if (b[0] == 0xff)
			return "a multicast address";
		if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
			return "a link-local address";
		if (!memcmp(b, mapped, 12))
			return "an IPv4-mapped address (write the IPv4 address)";
		return NULL;
	}
	return "an address of no known family";
}

