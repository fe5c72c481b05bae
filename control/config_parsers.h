/* SPDX-License-Identifier: MIT */
/*
 * config_parsers.h - private to config.c: the parsers of its CUSTOM rows
 * (xlb_cli_opt.parse), in config_parsers.c.
 */
#ifndef XLB_CONFIG_PARSERS_H
#define XLB_CONFIG_PARSERS_H

#include <stdbool.h>
#include <stddef.h>

#include "xlb_cli.h"

/* A per-interface list row: its entries with their count right behind (asserted in config_parsers.c). */
#define IFACE_LIST(FIELD)                                                            \
	.offset = offsetof(struct xlbd_config, set.FIELD),                           \
	.size = sizeof(((struct xlb_settings *)0)->FIELD) + sizeof(size_t)

#define CUSTOM_PARSER(name)                                                                     \
	int name(const struct xlb_cli_opt *o, void *field, const char *val, bool first, char *err, \
		 size_t errlen)

CUSTOM_PARSER(parse_iface);
CUSTOM_PARSER(parse_mac);
CUSTOM_PARSER(parse_src4);
CUSTOM_PARSER(parse_src6);
CUSTOM_PARSER(parse_egress);
CUSTOM_PARSER(parse_mtu);
CUSTOM_PARSER(parse_iface_mac);
CUSTOM_PARSER(parse_addr4);

#endif /* XLB_CONFIG_PARSERS_H */
