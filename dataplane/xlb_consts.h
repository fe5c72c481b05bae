/* SPDX-License-Identifier: MIT */
/*
 * xlb_consts.h - BPF-side constants and tiny helpers shared by the balancer,
 * decap and healthcheck programs.  No libc headers: memory helpers are the
 * compiler builtins.
 */
#ifndef XLB_CONSTS_H
#define XLB_CONSTS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xlb_shared.h"

#ifndef __noinline
#define __noinline __attribute__((noinline))
#endif

/*
 * Return from a void subprogram with R0 written.  The kernel does not
 * require R0 at a subprogram's exit, but xlb's verifier does, and clang
 * turns unused int returns of static functions back into void.
 */
#define XLB_RETURN_VOID                                     \
	do {                                                \
		asm volatile("r0 = 0" ::: "r0", "memory"); \
		return;                                     \
	} while (0)

/*
 * Hide a value from the optimizer so that the bounds check that follows is
 * kept on the very register used for packet access: verifiers that do not
 * link bounds across register copies (xlb's) then see it bounded.
 */
#define XLB_OPAQUE(x) asm volatile("" : "+r"(x))

/* "Keep going": a step found nothing final to say about the packet. */
#define FURTHER_PROCESSING (-1000)

#define ETH_ALEN 6
#define ETH_HLEN 14
#define VLAN_HLEN 4
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8

#define IPPROTO_ICMP 1
#define IPPROTO_IPIP 4
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define IPPROTO_IPV6 41
#define IPPROTO_ICMPV6 58

#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define UDP_HLEN 8
#define TCP_HLEN 20
#define ICMP_HLEN 8

#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff

#define ICMP_ECHOREPLY 0
#define ICMP_DEST_UNREACH 3
#define ICMP_FRAG_NEEDED 4
#define ICMP_ECHO 8
#define ICMPV6_PKT_TOOBIG 2
#define ICMPV6_ECHO_REQUEST 128
#define ICMPV6_ECHO_REPLY 129

#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

#define IP_DF 0x4000
#define IPPROTO_FRAGMENT 44

#define TC_ACT_UNSPEC (-1)
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7

/* Largest L2 header we accept: Ethernet + one 802.1Q tag. */
#define XLB_MAX_L2 (ETH_HLEN + VLAN_HLEN)
#define XLB_NS_PER_SEC 1000000000ull

struct xlb_ethhdr {
	__u8 dst[ETH_ALEN];
	__u8 src[ETH_ALEN];
	__be16 proto;
};

struct xlb_vlanhdr {
	__be16 tci;
	__be16 proto;
};

struct xlb_iphdr {
	__u8 ver_ihl;
	__u8 tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;
	__u8 ttl;
	__u8 protocol;
	__sum16 check;
	__be32 saddr;
	__be32 daddr;
};

struct xlb_ipv6hdr {
	__be32 ver_tc_flow;
	__be16 payload_len;
	__u8 nexthdr;
	__u8 hop_limit;
	__be32 saddr[4];
	__be32 daddr[4];
};

struct xlb_udphdr {
	__be16 source;
	__be16 dest;
	__be16 len;
	__sum16 check;
};

struct xlb_tcphdr {
	__be16 source;
	__be16 dest;
	__be32 seq;
	__be32 ack_seq;
	__u8 doff_res;
	__u8 flags;
	__be16 window;
	__sum16 check;
	__be16 urg_ptr;
};

struct xlb_icmphdr {
	__u8 type;
	__u8 code;
	__sum16 check;
	__be32 rest;
};

/* One's complement fold of a 32-bit partial sum. */
static __always_inline __u16 xlb_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/*
 * RFC 1624 incremental update (eqn. 3, HC' = ~(~HC + ~m + m')) of a
 * checksum for one 16-bit word change.
 *
 * Where it can go wrong, and where it cannot.  In ones' complement 0x0000
 * and 0xffff are the same number, and eqn. 3 yields a sum that is ones'-
 * complement zero as 0xffff, so the checksum it writes is 0x0000.  A sum
 * computed from scratch is 0x0000 only when every covered word is zero,
 * and then the checksum must be 0xffff (Linux verifies that the words plus
 * the checksum fold to 0xffff): eqn. 3 writes 0x0000 instead.  That can
 * only happen to an ICMPv4 message (type 0, code 0, id 0, seq 0, zero
 * payload: the echo reply to an all-zero request); the IPv4 header
 * (version 4) and ICMPv6, TCP and UDP (their pseudo-header holds the
 * addresses) never sum to zero.  So ICMPv4 updates go through
 * xlb_csum_replace2_icmp4(), which never writes 0x0000: when the sum is
 * 0xffff both 0x0000 and 0xffff verify, and when the message is all zero
 * only 0xffff does.  The balancer's other checksums are computed whole
 * (the outer IPv4 header: xlb_ipv4_finish(); generated ICMP errors) or
 * left 0 (the outer GUE/UDP checksum, RFC 6935/6936 for IPv6).
 */
static __always_inline __u16 xlb_csum_update(__u16 check, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~check;

	sum += (__u16)~old;
	sum += new;
	return xlb_csum_fold(sum);
}

static __always_inline void xlb_csum_replace2(__sum16 *check, __u16 old, __u16 new)
{
	*check = xlb_csum_update(*check, old, new);
}

static __always_inline void xlb_csum_replace2_icmp4(__sum16 *check, __u16 old, __u16 new)
{
	__u16 c = xlb_csum_update(*check, old, new);

	*check = c ? c : 0xffff;
}

/*
 * The verdict a final reason meets (xlb_shared.h's X-macro: "pass",
 * "drop" or "tx"), as constant bit masks: the balancer gets XDP_PASS,
 * XDP_DROP or XDP_TX, the tc programs TC_ACT_UNSPEC or TC_ACT_SHOT (they
 * have no "tx" reasons).
 */
#define XLB_REASON_PASS_BIT(sym, val, name, action) | (action[0] == 'p' ? 1ull << (val) : 0)
#define XLB_REASON_TX_BIT(sym, val, name, action) | (action[0] == 't' ? 1ull << (val) : 0)
#define XLB_REASON_PASS_MASK (0 XLB_REASONS(XLB_REASON_PASS_BIT))
#define XLB_REASON_TX_MASK (0 XLB_REASONS(XLB_REASON_TX_BIT))

_Static_assert(XLB_REASON_MAX <= 64, "reasons must fit the masks");

static __always_inline int xlb_reason_verdict(__u32 reason, int pass, int drop)
{
	return reason < 64 && ((XLB_REASON_PASS_MASK >> reason) & 1) ? pass : drop;
}

static __always_inline int xlb_xdp_verdict(__u32 reason)
{
	if (reason < 64 && ((XLB_REASON_TX_MASK >> reason) & 1))
		return XDP_TX;
	return xlb_reason_verdict(reason, XDP_PASS, XDP_DROP);
}

/*
 * One packet of @bytes on the counter a lookup returned (NULL: nothing).
 * Callers pass bpf_map_lookup_elem(&their_map, ...) with the map named at
 * the call site, so the kernel inlines the per-CPU array lookup.
 */
static __always_inline void xlb_counter_add(struct xlb_counter *c, __u32 bytes)
{
	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

static __always_inline int xlb_addr_is_zero(const union xlb_addr *a)
{
	return !(a->v6[0] | a->v6[1] | a->v6[2] | a->v6[3]);
}

/*
 * MACs as three 16-bit words: every MAC field in xlb's maps and in the
 * Ethernet header sits at an even offset, so this is 3 loads instead of 6.
 */
static __always_inline int xlb_mac_is_set(const __u8 *mac)
{
	const __u16 *m = (const __u16 *)mac;

	return m[0] | m[1] | m[2];
}

static __always_inline void xlb_mac_copy(__u8 *dst, const __u8 *src)
{
	__u16 *d = (__u16 *)dst;
	const __u16 *s = (const __u16 *)src;

	d[0] = s[0];
	d[1] = s[1];
	d[2] = s[2];
}

#endif /* XLB_CONSTS_H */
