// SPDX-License-Identifier: MIT
/*
 * config_parsers.c - the parsers of config.c's CUSTOM rows (interfaces,
 * MACs, prefixes, per-interface EGRESS / MTU / MAC pairs, IPv4 addresses):
 * each takes one value, from the command line or the config file alike, and
 * says what is wrong with it in err.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_parsers.h"
#include "xlbd.h"
#include "xlb_shared.h"

int parse_iface(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		       char *err, size_t errlen)
{
	/* The row's field is the settings' ifaces[] and the count right behind it. */
	char (*ifaces)[XLB_IFNAME_LEN] = field;
	size_t *cnt = (size_t *)((char *)field + sizeof(((struct xlb_settings *)0)->ifaces));

	if (first)
		*cnt = 0;
	if (!val || !*val || strlen(val) >= XLB_IFNAME_LEN || strchr(val, '/')) {
		snprintf(err, errlen, "'%.32s' is not an interface name", val ? val : "");
		return -EINVAL;
	}
	if (*cnt >= XLB_MAX_IFACES) {
		snprintf(err, errlen, "at most %d interfaces", XLB_MAX_IFACES);
		return -E2BIG;
	}
	for (size_t i = 0; i < *cnt; i++)
		if (!strcmp(ifaces[i], val)) {
			snprintf(err, errlen, "%s given twice", val);
			return -EINVAL;
		}
	strcpy(ifaces[(*cnt)++], val);
	return 0;
}

int parse_mac(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		     char *err, size_t errlen)
{
	if (!xlb_mac_parse(val, field))
		return 0;
	snprintf(err, errlen, "'%.32s' is not a MAC address (xx:xx:xx:xx:xx:xx)", val ? val : "");
	return -EINVAL;
}

/* ADDR[/PLEN] into an address and the prefix length stored right behind it. */
static int parse_prefix(void *field, const char *val, int family, char *err, size_t errlen)
{
	struct xlb_ip *addr = field;
	uint8_t *plen = (uint8_t *)field + sizeof(struct xlb_ip);
	char buf[80], *slash;
	uint64_t n;

	snprintf(buf, sizeof(buf), "%s", val ? val : "");
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (xlb_addr_parse(buf, addr) || addr->family != family) {
		snprintf(err, errlen, "'%.64s' is not an IPv%d address", val ? val : "",
			 family == AF_INET ? 4 : 6);
		return -EINVAL;
	}
	*plen = family == AF_INET ? 32 : 128;
	if (slash) {
		if (xlb_cli_parse_u64(slash + 1, 0, *plen, &n)) {
			snprintf(err, errlen, "prefix length '%.8s' is not 0..%u", slash + 1, *plen);
			return -ERANGE;
		}
		*plen = (uint8_t)n;
	}
	return 0;
}

int parse_src4(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		      char *err, size_t errlen)
{
	return parse_prefix(field, val, AF_INET, err, errlen);
}

int parse_src6(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		      char *err, size_t errlen)
{
	return parse_prefix(field, val, AF_INET6, err, errlen);
}

/*
 * "IFACE=VALUE" rows: the row's field is an array of entries whose first
 * member is the interface name, with its count right behind the array (the
 * row's size covers both).  The entry for IFACE is replaced if given twice
 * on one source; `first` (the first value from a source) empties the list,
 * so the command line replaces the config file's entries.
 */
static void *iface_entry(const struct xlb_cli_opt *o, void *field, size_t esize, const char *val,
			 bool first, const char **ret_value, char *err, size_t errlen)
{
	size_t cap = (o->size - sizeof(size_t)) / esize, *cnt = (size_t *)((char *)field + cap * esize);
	const char *eq = val ? strchr(val, '=') : NULL;
	size_t nlen = eq ? (size_t)(eq - val) : 0;
	char *e;

	if (first)
		*cnt = 0;
	if (!eq || !nlen || nlen >= XLB_IFNAME_LEN || memchr(val, '/', nlen)) {
		snprintf(err, errlen, "'%.40s' is not IFACE=%s", val ? val : "", o->metavar + 6);
		return NULL;
	}
	*ret_value = eq + 1;
	for (size_t i = 0; i < *cnt; i++) {
		e = (char *)field + i * esize;
		if (strlen(e) == nlen && !memcmp(e, val, nlen))
			return e;
	}
	if (*cnt >= cap) {
		snprintf(err, errlen, "at most %zu interfaces", cap);
		return NULL;
	}
	e = (char *)field + (*cnt)++ * esize;
	memset(e, 0, esize);
	memcpy(e, val, nlen);
	return e;
}

int parse_egress(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
			char *err, size_t errlen)
{
	struct xlb_iface_egress *e;
	const char *v;

	e = iface_entry(o, field, sizeof(*e), val, first, &v, err, errlen);
	if (!e)
		return -EINVAL;
	if (!*v || strlen(v) >= XLB_IFNAME_LEN || strchr(v, '/')) {
		snprintf(err, errlen, "'%.32s' is not an interface name", v);
		return -EINVAL;
	}
	snprintf(e->egress, sizeof(e->egress), "%s", v);
	return 0;
}

int parse_mtu(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		     char *err, size_t errlen)
{
	struct xlb_iface_mtu *e;
	const char *v;
	uint64_t n;

	e = iface_entry(o, field, sizeof(*e), val, first, &v, err, errlen);
	if (!e)
		return -EINVAL;
	if (xlb_cli_parse_u64(v, XLB_MIN_PKT, 65535, &n)) {
		snprintf(err, errlen, "MTU '%.16s' is not %u..65535", v, XLB_MIN_PKT);
		return -ERANGE;
	}
	e->mtu = (uint16_t)n;
	return 0;
}

int parse_iface_mac(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
			   char *err, size_t errlen)
{
	struct xlb_iface_mac *e;
	const char *v;

	e = iface_entry(o, field, sizeof(*e), val, first, &v, err, errlen);
	if (!e)
		return -EINVAL;
	if (xlb_mac_parse(v, e->mac)) {
		snprintf(err, errlen, "'%.32s' is not a MAC address (xx:xx:xx:xx:xx:xx)", v);
		return -EINVAL;
	}
	return 0;
}

int parse_addr4(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		       char *err, size_t errlen)
{
	struct xlb_ip *a = field;

	if (!xlb_addr_parse(val ? val : "", a) && a->family == (o->min ? AF_INET6 : AF_INET))
		return 0;
	snprintf(err, errlen, "'%.64s' is not an IPv%d address", val ? val : "", o->min ? 6 : 4);
	return -EINVAL;
}

_Static_assert(offsetof(struct xlb_settings, egress_cnt) ==
		       offsetof(struct xlb_settings, egress) + sizeof(((struct xlb_settings *)0)->egress) &&
	       offsetof(struct xlb_settings, mtu_cnt) ==
		       offsetof(struct xlb_settings, mtu) + sizeof(((struct xlb_settings *)0)->mtu) &&
	       offsetof(struct xlb_settings, egress_gw_cnt) ==
		       offsetof(struct xlb_settings, egress_gw) +
			       sizeof(((struct xlb_settings *)0)->egress_gw),
	       "iface_entry() keeps each count right behind its entries");

_Static_assert(offsetof(struct xlb_settings, iface_cnt) ==
		       offsetof(struct xlb_settings, ifaces) +
			       sizeof(((struct xlb_settings *)0)->ifaces),
	       "parse_iface() keeps the count right behind the names");
_Static_assert(offsetof(struct xlb_settings, src4_plen) ==
		       offsetof(struct xlb_settings, src4) + sizeof(struct xlb_ip) &&
	       offsetof(struct xlb_settings, src6_plen) ==
		       offsetof(struct xlb_settings, src6) + sizeof(struct xlb_ip),
	       "parse_prefix() stores the prefix length behind the address");

