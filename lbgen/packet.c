// SPDX-License-Identifier: MIT
/*
 * packet.c - lbgen's packet templates: Ethernet + IPv4/IPv6 + TCP (SYN or
 * ACK), UDP, or QUIC-like UDP (long or short header), for flow 0 of the
 * flow space (lbgen_shared.h), with their checksums.  The BPF builder and
 * the userspace transports patch them per flow the same way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "lbgen.h"

enum { ETH = 14, IP4 = 20, IP6 = 40, TCP = 20, UDP = 8 };

/* one's complement sum of len bytes, as stored (network order words) */
static uint32_t sum16(const uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * One frame of o->size bytes into frame; the template records where the
 * flow's fields are.  kind: 0 TCP ACK, 1 TCP SYN, 2 UDP, 3 QUIC long, 4
 * QUIC short.
 */
static int build_one(const struct lbgen_opts *o, int kind, uint8_t *frame, struct lbgen_template *tp)
{
	bool v6 = o->family == AF_INET6, tcp = kind <= 1;
	uint32_t l3 = v6 ? IP6 : IP4, l4_len = o->size - ETH - l3, hdr;
	uint8_t *ip = frame + ETH, *l4 = ip + l3, *payload = l4 + (tcp ? TCP : UDP);
	uint32_t s;

	hdr = ETH + l3 + (tcp ? TCP : UDP) + (kind == 3 ? 16 : kind == 4 ? 9 : 0);
	if (o->size < hdr || o->size > LBGEN_FRAME_MAX)
		return -EINVAL;
	memset(frame, 0, o->size);
	memset(tp, 0, sizeof(*tp));
	memcpy(frame, o->dst_mac, 6);
	memcpy(frame + 6, o->src_mac, 6);
	put16(frame + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)l4_len);
		ip[6] = tcp ? IPPROTO_TCP : IPPROTO_UDP;
		ip[7] = 64;
		memcpy(ip + 8, &o->src, 16);
		memcpy(ip + 24, &o->dst, 16);
		tp->saddr_off = ETH + 8 + 12;
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(o->size - ETH));
		ip[6] = 0x40; /* DF */
		ip[8] = 64;
		ip[9] = tcp ? IPPROTO_TCP : IPPROTO_UDP;
		memcpy(ip + 12, &o->src, 4);
		memcpy(ip + 16, &o->dst, 4);
		put16(ip + 10, fold(sum16(ip, IP4, 0)));
		tp->saddr_off = ETH + 12;
		tp->ip4_csum_off = ETH + 10;
	}
	put16(l4, LBGEN_SPORT_MIN);
	put16(l4 + 2, o->dport);
	tp->sport_off = (uint16_t)(ETH + l3);
	if (tcp) {
		put16(l4 + 4, 0x1000); /* seq */
		if (kind == 0)
			put16(l4 + 8, 0x2000); /* ack */
		l4[12] = 5 << 4;
		l4[13] = kind == 1 ? 0x02 : 0x10;
		put16(l4 + 14, 0xffff);
	} else {
		put16(l4 + 4, (uint16_t)l4_len);
		tp->udp = 1;
		if (kind == 3) {
			/* QUIC v1 long header (Initial): form+fixed bits, version, DCID len 8, DCID, SCID len 0 */
			payload[0] = 0xc3;
			payload[4] = 1;
			payload[5] = 8;
			memcpy(payload + 6, "lbgen-ci", 8);
		} else if (kind == 4) {
			/* short header: fixed bit, then the 8-byte DCID */
			payload[0] = 0x43;
			memcpy(payload + 1, "lbgen-ci", 8);
		}
	}
	/* L4 checksum over the pseudo header and the whole segment */
	s = v6 ? sum16(ip + 8, 32, 0) : sum16(ip + 12, 8, 0);
	s += (tcp ? IPPROTO_TCP : IPPROTO_UDP) + l4_len;
	s = sum16(l4, l4_len, s);
	{
		uint16_t c = fold(s);
		uint32_t off = ETH + l3 + (tcp ? 16 : 6);

		put16(frame + off, !tcp && !c ? 0xffff : c);
		tp->l4_csum_off = (uint16_t)off;
	}
	{
		uint32_t a;

		memcpy(&a, frame + tp->saddr_off, 4);
		tp->saddr_base = ntohl(a);
	}
	tp->len = (uint16_t)((hdr + 7) / 8 * 8);
	if (tp->len > o->size)
		tp->len = (uint16_t)(o->size / 8 * 8); /* the tail word stays as data_in left it */
	if (tp->len > LBGEN_HDR_MAX)
		return -E2BIG;
	memcpy(tp->words, frame, tp->len);
	return 0;
}

int lbgen_build_templates(const struct lbgen_opts *o, struct lbgen_config *cfg, uint8_t *frame)
{
	uint8_t scratch[LBGEN_FRAME_MAX];
	int kinds[2], n = 0, err;
	double share[2];

	memset(cfg, 0, sizeof(*cfg));
	cfg->flows = o->flows ? o->flows : 1;
	cfg->random = o->random_flows;
	switch (o->proto) {
	case LBGEN_TCP:
		if (o->syn_ratio < 1) {
			kinds[n] = 0;
			share[n++] = 1 - o->syn_ratio;
		}
		if (o->syn_ratio > 0) {
			kinds[n] = 1;
			share[n++] = o->syn_ratio;
		}
		break;
	case LBGEN_UDP:
		kinds[n] = 2;
		share[n++] = 1;
		break;
	case LBGEN_QUIC:
		if (o->quic_long_ratio < 1) {
			kinds[n] = 4;
			share[n++] = 1 - o->quic_long_ratio;
		}
		if (o->quic_long_ratio > 0) {
			kinds[n] = 3;
			share[n++] = o->quic_long_ratio;
		}
		break;
	}
	{
		double cum = 0;

		for (int i = 0; i < n; i++) {
			err = build_one(o, kinds[i], i ? scratch : frame, &cfg->tmpl[i]);
			if (err)
				return err;
			cum += share[i];
			cfg->tmpl[i].weight_cum = i == n - 1 ? UINT32_MAX : (uint32_t)(cum * 4294967295.0);
		}
	}
	cfg->tmpl_cnt = (uint32_t)n;
	return 0;
}

/* RFC 1624 over stored 16-bit words, as lbgen.bpf.c's csum_replace. */
static uint16_t csum_replace(uint16_t hc, uint32_t old, uint32_t new)
{
	uint32_t s = (uint16_t)~hc;

	s += (uint16_t)~old + (uint16_t)~(old >> 16) + (uint16_t)new + (uint16_t)(new >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

void lbgen_frame_for_flow(const struct lbgen_template *tp, uint8_t *frame, uint32_t flow)
{
	uint32_t old_addr, new_addr = htonl(tp->saddr_base + flow / LBGEN_SPORT_SPAN);
	uint16_t old_port, new_port = htons((uint16_t)(LBGEN_SPORT_MIN + flow % LBGEN_SPORT_SPAN)), c;

	memcpy(frame, tp->words, tp->len);
	if (!flow)
		return;
	memcpy(&old_addr, frame + tp->saddr_off, 4);
	memcpy(&old_port, frame + tp->sport_off, 2);
	memcpy(frame + tp->saddr_off, &new_addr, 4);
	memcpy(frame + tp->sport_off, &new_port, 2);
	if (tp->ip4_csum_off) {
		memcpy(&c, frame + tp->ip4_csum_off, 2);
		c = csum_replace(c, old_addr, new_addr);
		memcpy(frame + tp->ip4_csum_off, &c, 2);
	}
	if (tp->l4_csum_off) {
		memcpy(&c, frame + tp->l4_csum_off, 2);
		c = csum_replace(csum_replace(c, old_addr, new_addr), old_port, new_port);
		if (tp->udp && !c)
			c = 0xffff;
		memcpy(frame + tp->l4_csum_off, &c, 2);
	}
}

static uint32_t xorshift(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return (uint32_t)(*r >> 32);
}

uint32_t lbgen_pick(const struct lbgen_config *cfg, uint64_t *rng, uint64_t *next_flow, uint32_t *ret_flow)
{
	uint32_t r = xorshift(rng), k = 0;

	while (k + 1 < cfg->tmpl_cnt && r >= cfg->tmpl[k].weight_cum)
		k++;
	*ret_flow = cfg->random ? xorshift(rng) % cfg->flows : (uint32_t)((*next_flow)++ % cfg->flows);
	return k;
}
