/* SPDX-License-Identifier: MIT */
/*
 * callfree.h - the context of callfree.bpf.c and frames for it, shared by
 * the librte_bpf test (rte_bpf_compare.c) and its benchmark
 * (bench/dpdk/bench_rte_bpf.c).
 */
#ifndef XLB_CALLFREE_H
#define XLB_CALLFREE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_MAX 128

/* callfree.bpf.c's context: a tracepoint-style header, a frame, its length */
struct frame_rec {
	uint64_t common;
	uint8_t b[FRAME_MAX];
	uint8_t len_lo, len_hi;
};

/* callfree.bpf.c's classes (the low byte of its result) */
enum { C_SHORT = 1, C_NOT_IP, C_VLAN, C_V4, C_V6, C_V4_FRAG, C_V4_OPTS, C_OTHER_L4, C_MAX };

static inline void frame_set(struct frame_rec *f, const uint8_t *b, unsigned int len)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->b, b, len > FRAME_MAX ? FRAME_MAX : len);
	f->len_lo = (uint8_t)len;
	f->len_hi = (uint8_t)(len >> 8);
}

/* A valid frame of kind % 5 (IPv4 TCP/UDP, IPv6 TCP/UDP, 802.1Q), random addresses and ports. */
static inline unsigned int frame_valid(uint8_t *b, int kind)
{
	for (int i = 0; i < FRAME_MAX; i++)
		b[i] = (uint8_t)rand();
	switch (kind % 5) {
	case 0:
	case 1:
		b[12] = 0x08, b[13] = 0x00, b[14] = 0x45, b[20] = 0x40, b[21] = 0;
		b[23] = kind % 5 ? 17 : 6;
		return 54;
	case 2:
	case 3:
		b[12] = 0x86, b[13] = 0xdd, b[14] = 0x60;
		b[20] = kind % 5 == 2 ? 6 : 17;
		return 74;
	default:
		b[12] = 0x81, b[13] = 0x00;
		return 64;
	}
}

/* A few bytes of the headers changed, a quarter of the time the length too. */
static inline unsigned int frame_mutate(uint8_t *b, unsigned int len)
{
	for (int k = rand() % 4; k >= 0; k--)
		b[rand() % 60] = (uint8_t)rand();
	if (rand() % 4 == 0)
		len = (unsigned int)rand() % (FRAME_MAX + 40);
	return len;
}

#endif /* XLB_CALLFREE_H */
