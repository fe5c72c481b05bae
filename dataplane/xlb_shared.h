/* SPDX-License-Identifier: MIT */
/*
 * xlb_shared.h - everything the BPF programs and the control plane must agree
 * on: map names and layouts, key/value structs, per-VIP flags, encapsulation
 * kinds, the config struct, stats, and the drop/pass reasons with their names.
 *
 * Included by BPF C (clang -target bpf) and by userspace C (gcc/clang).  All
 * types are fixed width, hold no pointers, and carry explicit padding so both
 * sides see the same bytes.  Addresses and ports are in network byte order
 * (as on the wire) unless a field says "host order".
 *
 * ---------------------------------------------------------------------------
 * Maps of the balancer (balancer.bpf.o).  Names are the BTF map names, as
 * bpf_object__find_map_by_name() / bpftool see them.
 *
 *  name             type                key                   value                 max_entries
 *  xlb_vips         HASH (NO_PREALLOC)  struct xlb_vip_key    struct xlb_vip_meta   XLB_MAX_VIPS
 *  xlb_vip_addrs    HASH                struct xlb_addr_key   __u32 (vip_num)       XLB_MAX_VIPS
 *  xlb_reals        ARRAY               __u32 real_num        struct xlb_real       XLB_MAX_REALS
 *  xlb_rings        ARRAY               __u32 (see below)     __u32 real_num        XLB_RING_MAP_SIZE
 *  xlb_conns        LRU_PERCPU_HASH     struct xlb_flow_key   struct xlb_conn       XLB_LRU_SIZE
 *  xlb_config       ARRAY               __u32 0               struct xlb_config     1
 *  xlb_flood        PERCPU_ARRAY        __u32 0               struct xlb_flood_state 1   (BPF private)
 *  xlb_server_ids   ARRAY               __u32 server id       __u32 real_num        XLB_MAX_SERVER_IDS
 *  xlb_tx_ports     DEVMAP              __u32 0               __u32 ifindex         XLB_MAX_TX_PORTS
 *  xlb_vip_stats    PERCPU_ARRAY        __u32 vip_num         struct xlb_lb_counter XLB_MAX_VIPS
 *  xlb_real_stats   PERCPU_ARRAY        __u32 real_num        struct xlb_lb_counter XLB_MAX_REALS
 *  xlb_reason_stats PERCPU_ARRAY        __u32 reason (>0)     struct xlb_counter    XLB_REASON_MAX
 *  xlb_event_stats  PERCPU_ARRAY        __u32 event           struct xlb_counter    XLB_EVENT_MAX
 *
 * VIPs.  A packet's VIP is looked up as (daddr, dport, proto); if absent, as
 * (daddr, 0, proto), the "any port" VIP.  vip_num (0 .. XLB_MAX_VIPS-1) is
 * chosen by control, unique per VIP; it indexes the rings and the VIP stats.
 * xlb_vip_addrs holds every VIP address (port 0, proto 0 key) so that ICMP
 * echo requests and ICMP errors can be recognised as "for a VIP address";
 * control inserts an address when its first VIP appears and removes it with
 * the last one.
 *
 * Reals.  real_num 0 is reserved: "no real" (an empty ring slot, a zeroed
 * per-CPU LRU value).  Control uses 1 .. XLB_MAX_REALS-1.
 *
 * Maglev rings, double-buffered per VIP.  xlb_rings is one flat array holding,
 * for every VIP slot, two halves of XLB_RING_SIZE entries (a prime, 65537):
 *
 *     index(vip_num, half, pos) = (vip_num * 2 + half) * XLB_RING_SIZE + pos
 *
 * Each entry is a real_num.  The packet path reads xlb_vip_meta.ring_half
 * (0 or 1) from the VIP's hash entry and indexes only that half, with
 * pos = flow_hash % XLB_RING_SIZE.  Control never writes the active half:
 * it fills the inactive half entry by entry, then replaces the VIP's
 * xlb_vip_meta with ring_half flipped in ONE bpf_map_update_elem (a hash
 * update links a new element in place of the old one, and with
 * BPF_F_NO_PREALLOC the old one is freed only after an RCU grace period, so
 * a packet sees either the old meta and the old, untouched half, or the new
 * meta and the completed half; never a half-written ring).  After a flip, control must wait for an RCU
 * grace period (e.g. a synchronize via a dummy map-in-map update, or simply
 * a few ms) before rewriting the now inactive half again.
 * An empty slot (real_num 0, or any value >= XLB_MAX_REALS such as
 * UINT32_MAX) or a real without an address drops the packet
 * (XLB_DROP_NO_REAL).  The ring size is fixed at XLB_RING_SIZE in the
 * programs; control must build rings of exactly that size.
 *
 * Connection table.  xlb_conns is a per-CPU LRU hash keyed by the 5-tuple
 * (struct xlb_flow_key as received, before any hash flag is applied).  Value:
 * the real chosen and the last time the flow was seen (bpf_ktime_get_ns).
 *  - TCP SYN (without ACK) always consults the ring and rewrites the entry.
 *  - Other TCP packets and UDP use the entry when present: established flows
 *    keep their real when the ring changes.
 *  - UDP entries older than xlb_config.udp_timeout_ns count as misses.
 *  - A value with real_num 0 (the zero-filled value another CPU sees for a
 *    key it never wrote) is a miss.
 *  - Flood guard: each CPU inserts at most xlb_config.max_new_flows_per_sec
 *    new entries per one-second window (0 = unlimited); beyond that new
 *    flows are still forwarded by the ring but not remembered
 *    (XLB_EV_FLOOD_SKIP).
 *  - VIPs with XLB_VIP_F_NO_LRU bypass the table entirely.
 *
 * Flow hash.  The balancer hashes struct xlb_flow_key after the VIP's hash
 * flags are applied (see xlb_vip_flags) with XLB_HASH_SEED; the hash picks
 * the ring position, the outer source address/port and the IPv6 flow label.
 * The exact function is specified in dataplane/hash.h so tests can recompute
 * it independently.
 *
 * Encapsulation.  Per VIP (xlb_vip_meta.encap): XLB_ENCAP_IP picks by address
 * families IPIP (4 in 4, proto 4), IP6IP6 (6 in 6, next header 41),
 * IPv4-in-IPv6 (next header 4) or IPv6-in-IPv4 (proto 41); XLB_ENCAP_GUE puts
 * the inner IP packet directly in UDP (GUE variant 1, RFC draft-ietf-intarea-
 * gue, no GUE header) to xlb_config.gue_port, outer UDP checksum 0.  The outer
 * source is xlb_config.src4/src6 with the host bits (below the prefix length)
 * taken from the flow hash; GUE's source port is 0xc000 | (hash & 0x3fff).
 * Outer Ethernet: destination xlb_config.gw_mac, source xlb_config.src_mac
 * (if all zero: the received packet's destination MAC); a received 802.1Q
 * tag is kept.  The packet leaves by XDP_TX, or by XDP_REDIRECT through
 * xlb_tx_ports[0] when xlb_config.egress_ifindex is set and differs from the
 * receiving interface.
 *
 * QUIC.  UDP VIPs with XLB_VIP_F_QUIC route by the destination connection ID:
 * short-header packets and long-header Handshake/Retry packets carry a CID
 * whose first byte has XLB_QUIC_CID_VERSION in its two top bits and whose
 * bytes 1-2 hold the server id (big endian); xlb_server_ids[server id] gives
 * the real.  Unknown ids, other CID versions and Initial/0-RTT packets fall
 * back to the ring (and the LRU).
 *
 * Decap (decap.bpf.o, on the reals): xlb_decap_addrs HASH struct xlb_addr_key
 * -> __u32 (unused, 1) lists the host addresses whose IPIP/IP6IP6/4in6/6in4/
 * GUE packets are stripped; xlb_decap_config ARRAY[1] struct
 * xlb_decap_config; xlb_decap_stats PERCPU_ARRAY XLB_REASON_MAX.
 *
 * Healthcheck (healthcheck.bpf.o, tc egress): xlb_hc_reals HASH __u32 skb mark
 * -> struct xlb_hc_real; xlb_hc_config ARRAY[1] struct xlb_hc_config;
 * xlb_hc_stats PERCPU_ARRAY XLB_REASON_MAX.
 * ---------------------------------------------------------------------------
 */
#ifndef XLB_SHARED_H
#define XLB_SHARED_H

#ifdef __bpf__
#include <linux/types.h>
#else
#include <linux/types.h>
#include <stddef.h>
#endif

#define XLB_MAX_VIPS 64
#define XLB_MAX_REALS 4096
#define XLB_RING_SIZE 65537 /* prime: Maglev table size M */
#define XLB_RING_HALVES 2
#define XLB_RING_MAP_SIZE (XLB_MAX_VIPS * XLB_RING_HALVES * XLB_RING_SIZE)
#define XLB_LRU_SIZE 65536
#define XLB_MAX_SERVER_IDS 65536
#define XLB_MAX_TX_PORTS 4
#define XLB_HASH_SEED 0x5a17c0deu
#define XLB_GUE_PORT_DEFAULT 6080
#define XLB_QUIC_CID_VERSION 1
#define XLB_QUIC_CID_MIN_LEN 8
#define XLB_UDP_TIMEOUT_NS_DEFAULT (30ull * 1000000000ull)
#define XLB_OUTER_TTL 64

/* Address families as stored in keys (not AF_* to stay libc-free in BPF). */
#define XLB_FAMILY_V4 4
#define XLB_FAMILY_V6 6

/*
 * Per-VIP flags, xlb_vip_meta.flags: X(symbol, bit, name, doc).  The names
 * are the API's, lbctl's and the config files' (control builds its tables
 * from this list, so a flag added here is known everywhere).
 */
#define XLB_VIP_FLAGS(X)                                                                   \
	X(XLB_VIP_F_NO_SPORT, 0, "no-sport", "hash without the source port (client affinity)") \
	X(XLB_VIP_F_DPORT_ONLY, 1, "dport-only", "hash on dst address + dst port only")        \
	X(XLB_VIP_F_NO_LRU, 2, "no-lru", "bypass the connection table")                        \
	X(XLB_VIP_F_LOCAL, 3, "local", "deliver to this host: XDP_PASS")                      \
	X(XLB_VIP_F_QUIC, 4, "quic", "UDP: route by QUIC connection ID")

enum xlb_vip_flags {
#define XLB_VIP_FLAG_ENUM(sym, bit, name, doc) sym = 1u << (bit),
#define XLB_VIP_FLAG_OR(sym, bit, name, doc) | (1u << (bit))
	XLB_VIP_FLAGS(XLB_VIP_FLAG_ENUM)
	XLB_VIP_F_ALL = 0 XLB_VIP_FLAGS(XLB_VIP_FLAG_OR),
#undef XLB_VIP_FLAG_OR
#undef XLB_VIP_FLAG_ENUM
};

/* Encapsulation kinds, xlb_vip_meta.encap and xlb_hc_real.encap: X(symbol, value, name, doc). */
#define XLB_ENCAPS(X)                                                                     \
	X(XLB_ENCAP_IP, 0, "ipip", "IPIP / IP6IP6 / 4in6 / 6in4 by address families")          \
	X(XLB_ENCAP_GUE, 1, "gue", "IP in UDP to xlb_config.gue_port")

enum xlb_encap {
#define XLB_ENCAP_ENUM(sym, val, name, doc) sym = val,
	XLB_ENCAPS(XLB_ENCAP_ENUM)
#undef XLB_ENCAP_ENUM
	XLB_ENCAP_MAX,
};

/* An address: IPv4 in addr[0] (network order), the rest zero. */
union xlb_addr {
	__be32 v4;
	__be32 v6[4];
	__u8 bytes[16];
};

struct xlb_vip_key {
	union xlb_addr addr;
	__be16 port; /* 0: any port */
	__u8 proto;  /* IPPROTO_TCP / IPPROTO_UDP */
	__u8 family; /* XLB_FAMILY_V4 / _V6 */
};

struct xlb_vip_meta {
	__u32 vip_num;	 /* 0 .. XLB_MAX_VIPS-1 */
	__u32 flags;	 /* enum xlb_vip_flags */
	__u8 ring_half;	 /* active half of the VIP's ring: 0 or 1 */
	__u8 encap;	 /* enum xlb_encap */
	__u8 pad[2];
};

/* Key of xlb_vip_addrs and xlb_decap_addrs. */
struct xlb_addr_key {
	union xlb_addr addr;
	__u8 family;
	__u8 pad[3];
};

struct xlb_real {
	union xlb_addr addr; /* all zero: slot unused */
	__u8 family;	     /* XLB_FAMILY_V4 / _V6 */
	__u8 flags;	     /* reserved, 0 */
	__u8 pad[2];
};

/* Connection-table key: the 5-tuple as received. */
struct xlb_flow_key {
	union xlb_addr src;
	union xlb_addr dst;
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 family;
	__u8 pad[2];
};

struct xlb_conn {
	__u32 real_num;
	__u32 pad;
	__u64 atime_ns; /* bpf_ktime_get_ns() when last seen (UDP aging) */
};

struct xlb_config {
	__u8 gw_mac[6];			/* outer Ethernet destination */
	__u8 src_mac[6];		/* outer Ethernet source; zero: received dst MAC */
	__u32 egress_ifindex;		/* 0 or the receiving ifindex: XDP_TX; else redirect */
	__u32 max_new_flows_per_sec;	/* per CPU; 0: unlimited */
	__be32 src4;			/* outer IPv4 source prefix (required for v4 reals) */
	__u64 udp_timeout_ns;		/* 0: XLB_UDP_TIMEOUT_NS_DEFAULT */
	__u8 src4_plen;			/* prefix length 0..32 */
	__u8 src6_plen;			/* prefix length 96..128 (host bits: low 32 at most) */
	__u16 gue_port;			/* host order; 0: XLB_GUE_PORT_DEFAULT */
	union xlb_addr src6;		/* outer IPv6 source prefix (required for v6 reals) */
	__u32 flags;			/* reserved, 0 */
	__u32 pad[2];
};

/* BPF-private flood-guard window per CPU. */
struct xlb_flood_state {
	__u64 window_start_ns;
	__u64 inserts;
};

struct xlb_counter {
	__u64 packets;
	__u64 bytes;
};

/* Per-VIP and per-real counters: traffic plus flows inserted in the LRU. */
struct xlb_lb_counter {
	__u64 packets;
	__u64 bytes;
	__u64 new_flows;
};

/* Decap program config. */
struct xlb_decap_config {
	__u16 gue_port; /* host order; 0: XLB_GUE_PORT_DEFAULT */
	__u8 pad[6];
};

/* Healthcheck: skb mark -> real, encapsulated like production traffic. */
struct xlb_hc_real {
	union xlb_addr addr;
	__u8 family;
	__u8 encap; /* enum xlb_encap */
	__u8 pad[2];
};

struct xlb_hc_config {
	union xlb_addr src6; /* outer IPv6 source */
	__be32 src4;	     /* outer IPv4 source */
	__u16 gue_port;	     /* host order; 0: XLB_GUE_PORT_DEFAULT */
	__u8 gw_mac[6];	     /* outer Ethernet destination; zero: keep */
	__u8 src_mac[6];     /* outer Ethernet source; zero: keep */
	__u8 pad[2];
};

/*
 * Drop and pass reasons.  Dataplane functions return an XDP/TC action or
 * -reason (STYLE §3); every final reason is counted in xlb_reason_stats at
 * index `reason`.  X(symbol, value, name, action) where action is what the
 * packet meets: "drop" or "pass".
 */
#define XLB_REASONS(X)                                                              \
	X(XLB_PASS_NOT_IP, 1, "pass_not_ip", "pass")	/* ARP, LLDP, ... */         \
	X(XLB_PASS_NOT_VIP, 2, "pass_not_vip", "pass")	/* host traffic */           \
	X(XLB_PASS_LOCAL_VIP, 3, "pass_local_vip", "pass") /* XLB_VIP_F_LOCAL */     \
	X(XLB_PASS_FRAGMENT, 4, "pass_fragment", "pass") /* IPv4 fragment */         \
	X(XLB_PASS_IPV6_EXT, 5, "pass_ipv6_ext", "pass") /* IPv6 extension hdr */   \
	X(XLB_PASS_L4_OTHER, 6, "pass_l4_other", "pass") /* not TCP/UDP/ICMP */      \
	X(XLB_PASS_ICMP_OTHER, 7, "pass_icmp_other", "pass") /* ICMP not handled */ \
	X(XLB_DROP_TRUNC_L2, 8, "drop_trunc_l2", "drop")			      \
	X(XLB_DROP_TRUNC_L3, 9, "drop_trunc_l3", "drop")			      \
	X(XLB_DROP_TRUNC_L4, 10, "drop_trunc_l4", "drop")		      \
	X(XLB_DROP_BAD_IP, 11, "drop_bad_ip", "drop")	/* version/ihl/len */        \
	X(XLB_DROP_NO_REAL, 12, "drop_no_real", "drop") /* empty ring slot */        \
	X(XLB_DROP_NO_CONFIG, 13, "drop_no_config", "drop")		      \
	X(XLB_DROP_ENCAP_FAIL, 14, "drop_encap_fail", "drop") /* adjust_head */      \
	X(XLB_DROP_TOO_BIG, 15, "drop_too_big", "drop") /* no room to encap */       \
	X(XLB_DROP_ICMP_TRUNC, 16, "drop_icmp_trunc", "drop") /* embedded hdrs */   \
	X(XLB_DROP_REDIRECT, 17, "drop_redirect", "drop") /* devmap slot empty */  \
	X(XLB_DROP_DECAP_BAD, 18, "drop_decap_bad", "drop") /* bad inner pkt */     \
	X(XLB_PASS_NOT_ENCAP, 19, "pass_not_encap", "pass") /* decap: not ours */  \
	X(XLB_PASS_NO_HC_MARK, 20, "pass_no_hc_mark", "pass") /* hc: mark unknown */

enum xlb_reason {
#define XLB_REASON_ENUM(sym, val, name, action) sym = val,
	XLB_REASONS(XLB_REASON_ENUM)
#undef XLB_REASON_ENUM
	XLB_REASON_MAX = 21,
};

/* Events counted in xlb_event_stats (not final verdicts). */
#define XLB_EVENTS(X)                                             \
	X(XLB_EV_LRU_HIT, 0, "lru_hit")				  \
	X(XLB_EV_LRU_MISS, 1, "lru_miss")			  \
	X(XLB_EV_NEW_FLOW, 2, "new_flow")  /* LRU insert */	  \
	X(XLB_EV_FLOOD_SKIP, 3, "flood_skip")			  \
	X(XLB_EV_UDP_EXPIRED, 4, "udp_expired")			  \
	X(XLB_EV_QUIC_CID_HIT, 5, "quic_cid_hit")		  \
	X(XLB_EV_QUIC_CID_MISS, 6, "quic_cid_miss")		  \
	X(XLB_EV_ICMP_ECHO, 7, "icmp_echo_reply")		  \
	X(XLB_EV_ICMP_TOO_BIG, 8, "icmp_too_big_fwd")		  \
	X(XLB_EV_IP_OPTIONS, 9, "ipv4_options")	/* balanced */	  \
	X(XLB_EV_TX, 10, "xdp_tx")				  \
	X(XLB_EV_REDIRECT, 11, "xdp_redirect")			  \
	X(XLB_EV_DECAP, 12, "decap")				  \
	X(XLB_EV_HC_ENCAP, 13, "hc_encap")

enum xlb_event {
#define XLB_EVENT_ENUM(sym, val, name) sym = val,
	XLB_EVENTS(XLB_EVENT_ENUM)
#undef XLB_EVENT_ENUM
	XLB_EVENT_MAX = 14,
};

/* Userspace name tables, e.g. xlb_reason_name(-ret). */
#ifndef __bpf__
static inline const char *xlb_reason_name(unsigned int reason)
{
	switch (reason) {
#define XLB_REASON_CASE(sym, val, name, action) case val: return name;
	XLB_REASONS(XLB_REASON_CASE)
#undef XLB_REASON_CASE
	}
	return "unknown";
}

static inline const char *xlb_reason_action(unsigned int reason)
{
	switch (reason) {
#define XLB_REASON_CASE(sym, val, name, action) case val: return action;
	XLB_REASONS(XLB_REASON_CASE)
#undef XLB_REASON_CASE
	}
	return "unknown";
}

static inline const char *xlb_event_name(unsigned int event)
{
	switch (event) {
#define XLB_EVENT_CASE(sym, val, name) case val: return name;
	XLB_EVENTS(XLB_EVENT_CASE)
#undef XLB_EVENT_CASE
	}
	return "unknown";
}
#endif

/* Layout checks: BPF and userspace must agree byte for byte. */
_Static_assert(sizeof(union xlb_addr) == 16, "xlb_addr");
_Static_assert(sizeof(struct xlb_vip_key) == 20, "xlb_vip_key");
_Static_assert(sizeof(struct xlb_vip_meta) == 12, "xlb_vip_meta");
_Static_assert(sizeof(struct xlb_addr_key) == 20, "xlb_addr_key");
_Static_assert(sizeof(struct xlb_real) == 20, "xlb_real");
_Static_assert(sizeof(struct xlb_flow_key) == 40, "xlb_flow_key");
_Static_assert(sizeof(struct xlb_conn) == 16, "xlb_conn");
_Static_assert(sizeof(struct xlb_config) == 64, "xlb_config");
_Static_assert(sizeof(struct xlb_counter) == 16, "xlb_counter");
_Static_assert(sizeof(struct xlb_lb_counter) == 24, "xlb_lb_counter");
_Static_assert(sizeof(struct xlb_hc_real) == 20, "xlb_hc_real");
_Static_assert(sizeof(struct xlb_hc_config) == 36, "xlb_hc_config");
_Static_assert(XLB_REASON_MAX == 21, "bump XLB_REASON_MAX with the list");

#endif /* XLB_SHARED_H */
