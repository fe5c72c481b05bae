// SPDX-License-Identifier: MIT
/*
 * A call-free program DPDK's librte_bpf can load as well as xlb's engines:
 * no bpf-to-bpf call, no map, no helper.  It classifies a frame the way
 * the balancer's first steps do (Ethernet, one VLAN tag, IPv4/IPv6,
 * TCP/UDP ports) and hashes the flow, returning hash << 8 | class.
 *
 * Its context is plain memory both sides understand: a tracepoint-style
 * record (8 bytes of header, then the first 128 bytes of a frame and its
 * length), which xlb's verifier bounds as a tracepoint context and
 * librte_bpf as an RTE_BPF_ARG_PTR of that size.  Every load is a byte,
 * so no alignment rule of either verifier is in play.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define FRAME_MAX 128

struct frame_rec {
	unsigned long long common; /* the tracepoint header neither side reads */
	unsigned char b[FRAME_MAX];
	unsigned char len_lo, len_hi; /* frame length, little endian */
};

enum { C_SHORT = 1, C_NOT_IP, C_VLAN, C_V4, C_V6, C_V4_FRAG, C_V4_OPTS, C_OTHER_L4 };

/*
 * Context loads at constant offsets only (both verifiers refuse a moved
 * context pointer); volatile keeps clang from merging the IPv4 and IPv6
 * paths' loads into one load through a selected pointer.
 */
#define B(o) ((unsigned int)*(volatile const unsigned char *)&f->b[(o)])
#define U16(o) ((B(o) << 8) | B((o) + 1))

static __always_inline unsigned long long mix(unsigned long long h, unsigned int v)
{
	h ^= v;
	h *= 0x100000001b3ull; /* FNV-1a's prime, on words */
	return h;
}

/*
 * The end of one family's path: ports hashed, the class below the hash.
 * Each path returns on its own, with its own offsets and its own order,
 * so no tail is shared (clang would merge the two paths' port loads into
 * one load through a selected pointer, which both verifiers refuse).
 */
#define L4_RETURN(FIRST, SECOND, CLS)                                  \
	do {                                                           \
		if (proto != 6 && proto != 17)                         \
			return (h << 8) | C_OTHER_L4;                  \
		h = mix(mix(mix(h, proto), U16(FIRST)), U16(SECOND)); \
		return (h << 8) | (CLS);                               \
	} while (0)

SEC("tracepoint/xlb/classify")
unsigned long long xlb_classify(struct frame_rec *f)
{
	unsigned int len = f->len_lo | ((unsigned int)f->len_hi << 8), eth, proto, i;
	unsigned long long h = 0xcbf29ce484222325ull;

	if (len > FRAME_MAX)
		len = FRAME_MAX;
	if (len < 14)
		return C_SHORT;
	eth = U16(12);
	if (eth == 0x0800) {
		if (len < 34)
			return C_SHORT;
		if ((B(14) & 0xf) != 5)
			return C_V4_OPTS;
		if (U16(20) & 0x3fff)
			return C_V4_FRAG;
		proto = B(23);
#pragma unroll
		for (i = 26; i < 34; i++)
			h = mix(h, B(i));
		if (len < 38 && (proto == 6 || proto == 17))
			return C_SHORT;
		L4_RETURN(34, 36, C_V4); /* source port, then destination */
	}
	if (eth == 0x86dd) {
		if (len < 54)
			return C_SHORT;
		proto = B(20);
#pragma unroll
		for (i = 22; i < 54; i++)
			h = mix(h, B(i));
		if (len < 58 && (proto == 6 || proto == 17))
			return C_SHORT;
		L4_RETURN(56, 54, C_V6); /* destination port, then source */
	}
	return eth == 0x8100 ? C_VLAN : C_NOT_IP;
}

char _license[] SEC("license") = "GPL";
