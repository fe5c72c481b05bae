/* SPDX-License-Identifier: MIT */
/*
 * lbgen_shared.h - what lbgen's userspace and its BPF generator
 * (lbgen.bpf.c) agree on: packet templates, the flow mapping, counters.
 *
 * A flow index f in [0, flows) names a 5-tuple: source port
 * LBGEN_SPORT_MIN + f % LBGEN_SPORT_SPAN, source address base + f /
 * LBGEN_SPORT_SPAN (IPv4: the address; IPv6: its last 32 bits).  Every
 * template is built for f = 0, with correct checksums; the generator
 * patches the source address and port and updates the checksums
 * incrementally (RFC 1624).
 */
#ifndef LBGEN_SHARED_H
#define LBGEN_SHARED_H

#include <linux/types.h>

#define LBGEN_HDR_MAX 128 /* header bytes a template rewrites; the payload stays */
#define LBGEN_TEMPLATES_MAX 4
#define LBGEN_SPORT_MIN 1024
#define LBGEN_SPORT_SPAN 64512 /* source ports 1024..65535 */

struct lbgen_template {
	__u16 len;	    /* header bytes to write (multiple of 8, <= LBGEN_HDR_MAX) */
	__u16 saddr_off;    /* the source address's last 4 bytes */
	__u16 sport_off;
	__u16 ip4_csum_off; /* 0: none (IPv6) */
	__u16 l4_csum_off;  /* 0: none (UDP over IPv4 without checksum) */
	__u8 udp;	    /* a zero UDP checksum is sent as 0xffff */
	__u8 pad;
	__u32 weight_cum;   /* pick this template when a random u32 < weight_cum */
	__u32 saddr_base;   /* host order, for f = 0 */
	__u64 words[LBGEN_HDR_MAX / 8];
};

struct lbgen_config {
	__u32 flows;	 /* >= 1 */
	__u32 random;	 /* 0: flows in sequence; 1: a random flow per packet */
	__u32 tmpl_cnt;
	__u32 pad;
	struct lbgen_template tmpl[LBGEN_TEMPLATES_MAX];
};

/* Per CPU: the next flow of a sequential run, and what was built. */
struct lbgen_cpu {
	__u64 next_flow;
	__u64 built;
	__u64 bad; /* frames the generator could not build (too short) */
	__u64 per_tmpl[LBGEN_TEMPLATES_MAX];
};

#endif /* LBGEN_SHARED_H */
