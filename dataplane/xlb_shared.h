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
 *  xlb_vip_filter   ARRAY               __u32 0               struct xlb_vip_filter 1
 *  xlb_vip_fast     PERCPU_ARRAY        __u32 vip_num         struct xlb_vip_fast   XLB_MAX_VIPS
 *  xlb_reals        ARRAY               __u32 real_num        struct xlb_real       XLB_MAX_REALS
 *  xlb_rings        ARRAY               __u32 (see below)     __u32 real_num        XLB_RING_MAP_SIZE
 *  xlb_conns        LRU_HASH (NO_COMMON_LRU) struct xlb_flow_key struct xlb_conn    XLB_LRU_SIZE
 *  xlb_affinity     LRU_HASH (NO_COMMON_LRU) struct xlb_affinity_key struct xlb_affinity XLB_AFFINITY_SIZE
 *  xlb_frags        LRU_HASH (NO_COMMON_LRU) struct xlb_frag_key struct xlb_frag   XLB_FRAG_SIZE
 *  xlb_allow        LPM_TRIE (NO_PREALLOC) struct xlb_allow_key __u32 (1)          XLB_ALLOW_SIZE
 *  xlb_config       ARRAY               __u32 0               struct xlb_config     1
 *  xlb_ifaces       ARRAY               __u32 ifindex         struct xlb_iface      XLB_MAX_IFINDEX
 *  xlb_flood        PERCPU_ARRAY        __u32 0               struct xlb_flood_state 1   (BPF private)
 *  xlb_server_ids   HASH                __u32 server id       __u32 real_num        XLB_MAX_SERVER_IDS
 *  xlb_tx_ports     DEVMAP              __u32 port            __u32 ifindex         XLB_MAX_TX_PORTS
 *  xlb_vip_stats    PERCPU_ARRAY        __u32 vip_num         struct xlb_lb_counter XLB_MAX_VIPS
 *  xlb_real_stats   PERCPU_ARRAY        __u32 real_num        struct xlb_lb_counter XLB_MAX_REALS
 *  xlb_reason_stats PERCPU_ARRAY        __u32 reason (>0)     struct xlb_counter    XLB_STAT_SLOTS
 *  xlb_event_stats  PERCPU_ARRAY        __u32 event           struct xlb_counter    XLB_STAT_SLOTS
 *
 * VIPs.  A packet's VIP is looked up as (daddr, dport, proto); if absent, as
 * (daddr, 0, proto), the "any port" VIP.  vip_num (0 .. XLB_MAX_VIPS-1) is
 * chosen by control, unique per VIP; it indexes the rings and the VIP stats.
 * xlb_vip_addrs holds every VIP address (port 0, proto 0 key) so that ICMP
 * echo requests, ICMP errors and non-first fragments can be recognised as
 * "for a VIP address"; control inserts an address when its first VIP
 * appears and removes it with the last one.
 *
 * VIP address filter.  Most packets an edge host receives are not for a VIP;
 * xlb_vip_filter answers "certainly not a VIP address" without hashing a
 * key: bit xlb_vip_filter_bit(address) of xlb_vip_filter.bits is set for
 * every VIP address (control sets them, and .enabled once they are all
 * in; a clear bit sends the packet to the stack as XLB_PASS_NOT_VIP, or
 * XLB_PASS_FRAGMENT for a fragment); a set bit (a VIP address, or another
 * address sharing its bit) goes on to the VIP lookup.  With .enabled 0 the
 * filter is not consulted.  Control rebuilds the filter when a VIP address
 * goes away: set bits first and clear stale ones after, so a VIP address
 * never reads as clear.  .fast_bits, at the same bit, says that some VIP
 * of the address has the established-flow fast path (below): only then do
 * its packets look the connection table up before the VIP.  It is a hint:
 * either answer leads to the same verdict, a wrong one costs a lookup.
 *
 * Established-flow fast path.  A packet of an established flow (TCP
 * without SYN, UDP; no fragment, no ICMP error) to an address with a fast
 * bit looks its 5-tuple up in xlb_conns first; when the entry holds a
 * real and its (vip_num, vip_epoch) match xlb_vip_fast[vip_num] (the
 * current CPU's copy), the packet is forwarded with that entry's real and
 * hash and xlb_vip_fast's encapsulation, without the VIP lookup: one hash
 * lookup instead of two (XLB_EV_LRU_HIT and XLB_EV_LRU_HIT_FAST).  Anything
 * else takes the VIP lookup as before, which also rewrites a stale stamp.
 * Epochs are what make this safe: control gives a VIP a new epoch
 * (xlb_vip_meta.epoch, never reused, never 0) whenever its vip_num, flags,
 * encapsulation or affinity change, and epoch 0 to a VIP whose packets
 * need more than the table (XLB_VIP_F_FAST_BLOCKERS, session affinity);
 * a packet that inserts or hits an entry through the VIP lookup stamps it
 * with the epoch of the meta it read (0 for such a VIP, whatever the meta
 * says).  Order of control's writes: xlb_vip_fast[vip_num] to epoch 0
 * before a VIP's settings change or it goes away, the new meta, then
 * xlb_vip_fast[vip_num] = { epoch, encap } (all CPUs) once the meta is in;
 * a ring flip keeps the epoch.  A per-CPU array because the kernel copies
 * per-CPU values in whole 8-byte words: an entry is read whole.  An epoch
 * is never handed out twice while entries may carry it: control keeps the
 * highest one it gave in xlb_vip_filter.epoch_hwm, beside the maps that
 * hold the entries, and a restarted control continues above it.
 *
 * Reals.  real_num 0 is reserved: "no real" (an empty ring slot).  Control
 * uses 1 .. XLB_MAX_REALS-1.  XLB_REAL_F_DRAIN marks a real that takes no
 * new clients: session affinity skips it (its ring slots are already gone);
 * established flows and QUIC connection ids stay.
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
 * (XLB_DROP_NO_REAL).  Control builds rings of exactly the loaded ring
 * size (below).
 *
 * Sizes.  XLB_MAX_VIPS, XLB_MAX_REALS and XLB_RING_SIZE are the object's
 * built-in sizes: what a loader that sets nothing gets (the tests).  A
 * loader sets its own at load, always all of them together (xlbd from its
 * max-vips / max-reals / ring-size settings, xlb-dpdk from its options):
 * the balancer's rodata xlb_max_vips, xlb_max_reals, xlb_ring_size (a
 * prime) and the max_entries of
 *     xlb_vips, xlb_vip_addrs, xlb_vip_fast,
 *     xlb_vip_stats                               max_vips
 *     xlb_reals, xlb_real_stats                   max_reals
 *     xlb_rings                                   max_vips * 2 * ring_size
 *     xlb_hc_reals (healthcheck.bpf.o)            max_reals
 * In the formulas above read max_vips / max_reals / ring_size for
 * XLB_MAX_VIPS / XLB_MAX_REALS / XLB_RING_SIZE.  A running dataplane's
 * sizes are those of its maps (ring size = xlb_rings / (2 * xlb_vips)).
 *
 * Connection table.  xlb_conns is ONE table shared by all CPUs (an LRU hash
 * with per-CPU LRU lists, BPF_F_NO_COMMON_LRU: lookups take no lock, an
 * insert takes only its CPU's list lock and its bucket's), keyed by the
 * 5-tuple as received (struct xlb_flow_key, before any hash flag is
 * applied).  Whatever CPU a packet meets, it finds the entry any other CPU
 * wrote, so an established flow keeps its real across ring changes even
 * when RSS, IRQ affinity or the sender's CPU (veth) move it; a reused
 * 5-tuple has one entry, rewritten by its SYN.  Value: the real, the flow
 * hash (the outer source and flow label need it: a hit does not rehash),
 * the time of the last packet (UDP only: TCP packets read no clock), the TCP
 * state the client's packets show (XLB_CONN_*: "established" after the
 * first packet without SYN, "closed" after a FIN or RST; written only when
 * it changes), from which control counts active flows per real, and the
 * VIP and settings epoch the entry is stamped for (the established-flow
 * fast path, above).
 *  - TCP SYN (without ACK) always consults the ring and rewrites the entry
 *    (in place when the 5-tuple is already there).
 *  - Other TCP packets and UDP use the entry when present: established flows
 *    keep their real when the ring changes.
 *  - UDP entries older than xlb_config.udp_timeout_ns count as misses.
 *  - Flood guard: each CPU inserts at most xlb_config.max_new_flows_per_sec
 *    new entries per one-second window (0 = unlimited); beyond that new
 *    flows are still forwarded by the ring but not remembered
 *    (XLB_EV_FLOOD_SKIP).
 *  - VIPs with XLB_VIP_F_NO_LRU bypass the table entirely.
 * Each CPU's LRU list holds max_entries / nr_cpus entries: size the table
 * for the flows of the busiest CPU.
 *
 * Session affinity.  A VIP with xlb_vip_meta.affinity_s > 0 sends a
 * client address (struct xlb_affinity_key: vip_num + source address) to
 * the same real for affinity_s seconds after its last packet, across
 * connections (IPVS persistence, Cilium's sessionAffinity): a new flow
 * (SYN or table miss) takes the recorded real when it is younger than the
 * timeout and the real is neither gone nor draining, else the ring; every
 * packet of the VIP refreshes the record at most once a second.
 *
 * Source allow-lists.  A VIP with XLB_VIP_F_ALLOWLIST accepts only sources
 * with a prefix in xlb_allow (struct xlb_allow_key: vip_num then the
 * address, prefixlen = 32 + address bits); others are dropped
 * (XLB_DROP_NOT_ALLOWED), every packet checked.
 *
 * Fragments.  A first fragment (IPv4 MF without offset, IPv6 fragment
 * header with offset 0) is balanced on its L4 ports like any packet and
 * records (addresses, protocol, IP id) -> (real, hash, vip) in xlb_frags;
 * later fragments to a VIP address take that real (XLB_EV_FRAG_FOLLOW),
 * or are dropped when no first fragment was seen (XLB_DROP_FRAG_UNMATCHED:
 * out-of-order arrival or an evicted record).  XLB_CFG_F_FRAG_DROP drops
 * every fragment to a VIP address instead (XLB_DROP_FRAGMENT).  Fragments
 * to other addresses pass (XLB_PASS_FRAGMENT).  The real reassembles.
 *
 * Flow hash.  The balancer hashes struct xlb_flow_key after the VIP's hash
 * flags are applied (see xlb_vip_flags) with XLB_HASH_SEED; the hash picks
 * the ring position, the outer source address/port and the IPv6 flow label.
 * The exact function is xlb_flow_hash_words() below, shared with control
 * (which answers "which real would this flow get").
 *
 * Encapsulation.  Per VIP (xlb_vip_meta.encap): XLB_ENCAP_IP picks by address
 * families IPIP (4 in 4, proto 4), IP6IP6 (6 in 6, next header 41),
 * IPv4-in-IPv6 (next header 4) or IPv6-in-IPv4 (proto 41); XLB_ENCAP_GUE puts
 * the inner IP packet directly in UDP (GUE variant 1, RFC draft-ietf-intarea-
 * gue, no GUE header) to xlb_config.gue_port, outer UDP checksum 0.  The outer
 * source is xlb_config.src4/src6 with the host bits (below the prefix length)
 * taken from the flow hash; GUE's source port is 0xc000 | (hash & 0x3fff).
 *
 * Interfaces and egress.  xlb_ifaces[ingress ifindex] (struct xlb_iface; an
 * all-zero entry means "defaults") says how a packet that arrived on an
 * interface leaves: gw_mac/src_mac for the outer Ethernet header (zero:
 * xlb_config.gw_mac, and for the source xlb_config.src_mac, else the
 * received destination MAC); tx_port 0: XDP_TX back out of the receiving
 * interface; n > 0: XDP_REDIRECT through xlb_tx_ports[n - 1] (a devmap slot
 * holding the egress ifindex); max_pkt: the largest L3 packet the egress
 * carries (its MTU; 0: no check).  A received 802.1Q tag is kept.
 *
 * Too big.  A VIP packet whose encapsulated size exceeds max_pkt is not
 * sent into the driver's silent drop: IPv4 with DF is answered with ICMP
 * "fragmentation needed" (next-hop MTU = max_pkt - outer header), IPv6
 * with ICMPv6 "packet too big" (same MTU), both built in place and sent
 * back out of the receiving interface (XDP_TX, reasons
 * XLB_TX_ICMP_FRAG_NEEDED / XLB_TX_ICMP6_TOO_BIG); IPv4 without DF (and
 * ICMP errors, and fragments) are dropped (XLB_DROP_TOO_BIG_NO_DF): the
 * path to the reals must carry them, or the clients' MSS be clamped.
 * Layout of the generated messages: icmp_gen.h.
 *
 * QUIC.  UDP VIPs with XLB_VIP_F_QUIC route by the destination connection ID
 * of short-header packets and long-header Handshake/Retry packets (DCID of
 * at least XLB_QUIC_CID_MIN_LEN bytes); Initial and 0-RTT carry a client-
 * chosen CID and use the flow.  The CID layouts are Katran's, so servers
 * that mint CIDs for Katran work unchanged (bits numbered from the most
 * significant bit of CID byte 0):
 *   version 1: byte 0 = 01ssssss, byte 1 = ssssssss, byte 2 = ss......
 *              server id = the 16 bits s (bits 2..17): 0 .. 65535
 *   version 2: byte 0 = 10......, bytes 1-3 = server id (big endian, 24 bits)
 * Other versions (00, 11) and unknown ids fall back to the connection
 * table and the ring; an id keeps naming its real while it drains (the CID
 * names the server holding the connection).  xlb_server_ids[server id] = real.
 * ---------------------------------------------------------------------------
 *
 * Decap (decap.bpf.o, on the reals): xlb_decap_addrs HASH struct xlb_addr_key
 * -> __u32 (unused, 1) lists the host addresses whose IPIP/IP6IP6/4in6/6in4/
 * GUE packets are stripped; xlb_decap_config ARRAY[1] struct
 * xlb_decap_config; xlb_decap_stats PERCPU_ARRAY XLB_STAT_SLOTS.
 *
 * Healthcheck (healthcheck.bpf.o, tc egress): xlb_hc_reals HASH __u32 skb mark
 * -> struct xlb_hc_real; xlb_hc_config ARRAY[1] struct xlb_hc_config (outer
 * source MAC and addresses, gateway MAC, the probe mark range, an optional
 * egress interface); xlb_hc_stats PERCPU_ARRAY XLB_STAT_SLOTS.
 *
 * tc return codes (decap tc and healthcheck, direct-action cls_bpf):
 * TC_ACT_UNSPEC (-1) for a packet that is not the program's business (not
 * encapsulation for this host, a mark outside the probe range), so the
 * filters after it still see it; TC_ACT_OK (0) for a packet the program
 * finished (stripped, or a probe encapsulated to leave by this interface);
 * TC_ACT_REDIRECT (7, via bpf_redirect) for a probe sent to
 * xlb_hc_config.ifindex; TC_ACT_SHOT (2) for a drop reason.
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

/* Built-in sizes of the objects (see "Sizes" above: loaders set their own). */
#define XLB_MAX_VIPS 64
#define XLB_MAX_REALS 4096
#define XLB_RING_SIZE 65537 /* prime: Maglev table size M */
#define XLB_RING_HALVES 2
#define XLB_RING_MAP_SIZE (XLB_MAX_VIPS * XLB_RING_HALVES * XLB_RING_SIZE)
#define XLB_LRU_SIZE 65536
#define XLB_AFFINITY_SIZE 65536
#define XLB_FRAG_SIZE 4096
#define XLB_ALLOW_SIZE 16384
#define XLB_MAX_SERVER_IDS 65536
#define XLB_MAX_TX_PORTS 64
#define XLB_MAX_IFINDEX 4096	/* xlb_ifaces covers ifindex 0 .. XLB_MAX_IFINDEX-1 */
#define XLB_STAT_SLOTS 64	/* reason/event map size: room to add names */
#define XLB_HASH_SEED 0x5a17c0deu
#define XLB_GUE_PORT_DEFAULT 6080
#define XLB_QUIC_CID_MIN_LEN 8
#define XLB_UDP_TIMEOUT_NS_DEFAULT (30ull * 1000000000ull)
#define XLB_OUTER_TTL 64
#define XLB_MIN_PKT 576		/* smallest max_pkt control accepts (RFC 791) */

/* Address families as stored in keys (not AF_* to stay libc-free in BPF). */
#define XLB_FAMILY_V4 4
#define XLB_FAMILY_V6 6

#define XLB_VIP_FILTER_BITS 4096

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
	X(XLB_VIP_F_QUIC, 4, "quic", "UDP: route by QUIC connection ID")                     \
	X(XLB_VIP_F_ALLOWLIST, 5, "allowlist", "only sources listed in xlb_allow")

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

/* QUIC connection ID versions (the CID's two top bits), Katran's layouts. */
enum xlb_quic_cid_version {
	XLB_QUIC_CID_V1 = 1, /* 16-bit server id in bits 2..17 */
	XLB_QUIC_CID_V2 = 2, /* 24-bit server id in bytes 1..3 */
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
	__u32 vip_num;	  /* 0 .. XLB_MAX_VIPS-1 */
	__u32 flags;	  /* enum xlb_vip_flags */
	__u8 ring_half;	  /* active half of the VIP's ring: 0 or 1 */
	__u8 encap;	  /* enum xlb_encap */
	__u16 affinity_s; /* session affinity timeout, seconds; 0: none */
	__u32 epoch;	  /* established-flow fast path: the settings' epoch; 0: none */
};

/* What an established flow of the VIP needs, valid for flows stamped with epoch. */
struct xlb_vip_fast {
	__u32 epoch; /* 0: the VIP has no fast path */
	__u8 encap;  /* enum xlb_encap */
	__u8 pad[3];
};

/* VIP flags whose packets need more than the connection table: no fast path. */
#define XLB_VIP_F_FAST_BLOCKERS (XLB_VIP_F_NO_LRU | XLB_VIP_F_LOCAL | XLB_VIP_F_QUIC | XLB_VIP_F_ALLOWLIST)

struct xlb_vip_filter {
	__u32 enabled;	 /* 0: not consulted */
	__u32 epoch_hwm; /* control's: the highest settings epoch handed out (not read by packets) */
	__u64 bits[XLB_VIP_FILTER_BITS / 64];
	__u64 fast_bits[XLB_VIP_FILTER_BITS / 64]; /* an address with a fast-path VIP */
};

/* Key of xlb_vip_addrs and xlb_decap_addrs. */
struct xlb_addr_key {
	union xlb_addr addr;
	__u8 family;
	__u8 pad[3];
};

/* Real flags, xlb_real.flags. */
enum xlb_real_flags {
	XLB_REAL_F_DRAIN = 1u << 0, /* no new clients by session affinity */
};

struct xlb_real {
	union xlb_addr addr; /* all zero: slot unused */
	__u8 family;	     /* XLB_FAMILY_V4 / _V6 */
	__u8 flags;	     /* enum xlb_real_flags */
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

/* TCP state of a connection-table entry, as the client's packets show it. */
enum xlb_conn_state {
	XLB_CONN_NEW = 0,	  /* only a SYN seen */
	XLB_CONN_ESTABLISHED = 1, /* a packet without SYN seen (UDP: always) */
	XLB_CONN_CLOSED = 2,	  /* FIN or RST from the client */
};

struct xlb_conn {
	__u32 real_num;
	__u32 hash;	/* flow hash after the VIP's flags */
	__u64 atime_ns; /* UDP: bpf_ktime_get_ns() of the last packet; TCP: 0 */
	__u8 state;	/* enum xlb_conn_state */
	__u8 pad;
	__u16 vip_num;	 /* the VIP the entry was stamped for (fast path) */
	__u32 vip_epoch; /* its epoch then; 0: no fast path */
};

struct xlb_affinity_key {
	__u32 vip_num;
	__u8 family;
	__u8 pad[3];
	union xlb_addr client;
};

struct xlb_affinity {
	__u32 real_num;
	__u32 pad;
	__u64 atime_ns; /* last packet of the client (at most 1 s stale) */
};

struct xlb_frag_key {
	union xlb_addr src;
	union xlb_addr dst;
	__u32 id; /* IPv4 identification (host order, 16 bits) / IPv6 fragment id */
	__u8 proto;
	__u8 family;
	__u8 pad[2];
};

struct xlb_frag {
	__u32 real_num;
	__u32 hash;
	__u32 vip_num;
	__u8 encap;
	__u8 pad[3];
};

/* LPM key of xlb_allow: prefixlen counts the 32 vip_num bits too. */
struct xlb_allow_key {
	__u32 prefixlen;
	__be32 vip_num; /* big endian: the trie matches bytes in order */
	union xlb_addr addr;
};

/* Global config flags, xlb_config.flags. */
enum xlb_config_flags {
	XLB_CFG_F_FRAG_DROP = 1u << 0, /* drop fragments to VIP addresses */
};

struct xlb_config {
	__u8 gw_mac[6];			/* outer Ethernet destination (default) */
	__u8 src_mac[6];		/* outer Ethernet source (default); zero: received dst MAC */
	__u32 reserved;			/* 0 (was the egress ifindex: see xlb_iface) */
	__u32 max_new_flows_per_sec;	/* per CPU; 0: unlimited */
	__be32 src4;			/* outer IPv4 source prefix (required for v4 reals) */
	__u64 udp_timeout_ns;		/* 0: XLB_UDP_TIMEOUT_NS_DEFAULT */
	__u8 src4_plen;			/* prefix length 0..32 */
	__u8 src6_plen;			/* prefix length 96..128 (host bits: low 32 at most) */
	__u16 gue_port;			/* host order; 0: XLB_GUE_PORT_DEFAULT */
	union xlb_addr src6;		/* outer IPv6 source prefix (required for v6 reals) */
	__u32 flags;			/* enum xlb_config_flags */
	__u32 pad[2];
};

/* Per receiving interface: how its balanced packets leave (see above). */
struct xlb_iface {
	__u8 gw_mac[6];	 /* zero: xlb_config.gw_mac */
	__u8 src_mac[6]; /* zero: xlb_config.src_mac, else the received dst MAC */
	__u16 max_pkt;	 /* largest L3 packet the egress carries; 0: no check */
	__u8 tx_port;	 /* 0: XDP_TX; n: XDP_REDIRECT via xlb_tx_ports[n - 1] */
	__u8 pad;
	__u32 reserved;
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
	__u32 mark_min;	     /* probes carry marks mark_min..mark_max; */
	__u32 mark_max;	     /* both 0: any mark registered in xlb_hc_reals */
	__u32 ifindex;	     /* 0: leave by the probe's interface; else redirect there */
	__u32 pad2;
};

/*
 * Final reasons.  Dataplane functions return an XDP/TC action or -reason
 * (STYLE §3); every final reason is counted in the reason stats map at
 * index `reason`.  X(symbol, value, name, action) where action is what the
 * packet meets: "drop", "pass", or "tx" (the balancer rewrote it into an
 * answer and sends it back: XDP_TX).  Values are stable (they index the
 * stats maps): add new reasons at the end.
 */
#define XLB_REASONS(X)                                                              \
	X(XLB_PASS_NOT_IP, 1, "pass_not_ip", "pass")	/* ARP, LLDP, ... */         \
	X(XLB_PASS_NOT_VIP, 2, "pass_not_vip", "pass")	/* host traffic */           \
	X(XLB_PASS_LOCAL_VIP, 3, "pass_local_vip", "pass") /* XLB_VIP_F_LOCAL */     \
	X(XLB_PASS_FRAGMENT, 4, "pass_fragment", "pass") /* not to a VIP address */  \
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
	X(XLB_DROP_TOO_BIG, 15, "drop_too_big", "drop") /* over 64 KiB encapsulated */ \
	X(XLB_DROP_ICMP_TRUNC, 16, "drop_icmp_trunc", "drop") /* embedded hdrs */   \
	X(XLB_DROP_REDIRECT, 17, "drop_redirect", "drop") /* devmap slot empty */  \
	X(XLB_DROP_DECAP_BAD, 18, "drop_decap_bad", "drop") /* bad inner pkt */     \
	X(XLB_PASS_NOT_ENCAP, 19, "pass_not_encap", "pass") /* decap: not ours */  \
	X(XLB_PASS_NO_HC_MARK, 20, "pass_no_hc_mark", "pass") /* hc: not a probe */ \
	X(XLB_TX_ICMP_FRAG_NEEDED, 21, "tx_icmp_frag_needed", "tx") /* too big, DF */ \
	X(XLB_TX_ICMP6_TOO_BIG, 22, "tx_icmp6_too_big", "tx") /* too big, IPv6 */   \
	X(XLB_DROP_TOO_BIG_NO_DF, 23, "drop_too_big_no_df", "drop") /* no ICMP */   \
	X(XLB_DROP_FRAGMENT, 24, "drop_fragment", "drop") /* XLB_CFG_F_FRAG_DROP */ \
	X(XLB_DROP_FRAG_UNMATCHED, 25, "drop_frag_unmatched", "drop")	      \
	X(XLB_DROP_NOT_ALLOWED, 26, "drop_not_allowed", "drop") /* allow-list */    \
	X(XLB_DROP_HC_UNKNOWN_MARK, 27, "drop_hc_unknown_mark", "drop") /* in range */

enum xlb_reason {
#define XLB_REASON_ENUM(sym, val, name, action) sym = val,
	XLB_REASONS(XLB_REASON_ENUM)
#undef XLB_REASON_ENUM
	XLB_REASON_MAX = 28,
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
	X(XLB_EV_HC_ENCAP, 13, "hc_encap")			  \
	X(XLB_EV_AFFINITY_HIT, 14, "affinity_hit")		  \
	X(XLB_EV_FRAG_TRACKED, 15, "frag_tracked") /* first */	  \
	X(XLB_EV_FRAG_FOLLOW, 16, "frag_follow")   /* later */	  \
	X(XLB_EV_CONN_CLOSED, 17, "conn_closed")   /* FIN/RST */	  \
	X(XLB_EV_LRU_HIT_FAST, 18, "lru_hit_fast") /* no VIP lookup */

enum xlb_event {
#define XLB_EVENT_ENUM(sym, val, name) sym = val,
	XLB_EVENTS(XLB_EVENT_ENUM)
#undef XLB_EVENT_ENUM
	XLB_EVENT_MAX = 19,
};

/*
 * The flow hash, exactly (tests and control recompute it): words are the
 * key's bytes as 32-bit little-endian loads, after the VIP's hash flags
 * zeroed what they exclude (XLB_VIP_F_NO_SPORT: sport; XLB_VIP_F_DPORT_ONLY:
 * src and sport):
 *   w = src[0..3], dst[0..3], sport | dport << 16, proto
 *   h = XLB_HASH_SEED; for w: h = rotl32((h ^ w) * 0x9e3779b1, 13)
 *   h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13; h *= 0xc2b2ae35; h ^= h >> 16
 * dataplane/hash.h wraps it in the balancer's subprogram.
 */
static inline __attribute__((always_inline)) __u32 xlb_hash_mix(__u32 h, __u32 w)
{
	h = (h ^ w) * 0x9e3779b1u;
	return (h << 13) | (h >> 19);
}

static inline __attribute__((always_inline)) __u32
xlb_flow_hash_words(const struct xlb_flow_key *flow, __u32 vip_flags)
{
	__u32 h = XLB_HASH_SEED, sport = flow->sport;
	__u32 s0 = flow->src.v6[0], s1 = flow->src.v6[1];
	__u32 s2 = flow->src.v6[2], s3 = flow->src.v6[3];

	if (vip_flags & (XLB_VIP_F_NO_SPORT | XLB_VIP_F_DPORT_ONLY))
		sport = 0;
	if (vip_flags & XLB_VIP_F_DPORT_ONLY)
		s0 = s1 = s2 = s3 = 0;
	h = xlb_hash_mix(h, s0);
	h = xlb_hash_mix(h, s1);
	h = xlb_hash_mix(h, s2);
	h = xlb_hash_mix(h, s3);
	h = xlb_hash_mix(h, flow->dst.v6[0]);
	h = xlb_hash_mix(h, flow->dst.v6[1]);
	h = xlb_hash_mix(h, flow->dst.v6[2]);
	h = xlb_hash_mix(h, flow->dst.v6[3]);
	h = xlb_hash_mix(h, sport | ((__u32)flow->dport << 16));
	h = xlb_hash_mix(h, flow->proto);
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* The filter bit of an address (IPv4 in a->v4, the rest zero). */
static inline __attribute__((always_inline)) __u32 xlb_vip_filter_bit(const union xlb_addr *a)
{
	__u32 x = a->v6[0] ^ a->v6[1] ^ a->v6[2] ^ a->v6[3];

	return (x * 0x9e3779b1u) >> 20; /* the top 12 bits: 0 .. 4095 */
}

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
_Static_assert(sizeof(struct xlb_vip_meta) == 16, "xlb_vip_meta");
_Static_assert(sizeof(struct xlb_vip_fast) == 8, "xlb_vip_fast");
_Static_assert(sizeof(struct xlb_addr_key) == 20, "xlb_addr_key");
_Static_assert(sizeof(struct xlb_real) == 20, "xlb_real");
_Static_assert(sizeof(struct xlb_flow_key) == 40, "xlb_flow_key");
_Static_assert(sizeof(struct xlb_conn) == 24, "xlb_conn");
_Static_assert(sizeof(struct xlb_affinity_key) == 24, "xlb_affinity_key");
_Static_assert(sizeof(struct xlb_affinity) == 16, "xlb_affinity");
_Static_assert(sizeof(struct xlb_frag_key) == 40, "xlb_frag_key");
_Static_assert(sizeof(struct xlb_frag) == 16, "xlb_frag");
_Static_assert(sizeof(struct xlb_allow_key) == 24, "xlb_allow_key");
_Static_assert(sizeof(struct xlb_vip_filter) == 8 + XLB_VIP_FILTER_BITS / 4, "xlb_vip_filter");
_Static_assert(sizeof(struct xlb_config) == 64, "xlb_config");
_Static_assert(sizeof(struct xlb_iface) == 20, "xlb_iface");
_Static_assert(sizeof(struct xlb_counter) == 16, "xlb_counter");
_Static_assert(sizeof(struct xlb_lb_counter) == 24, "xlb_lb_counter");
_Static_assert(sizeof(struct xlb_hc_real) == 20, "xlb_hc_real");
_Static_assert(sizeof(struct xlb_hc_config) == 52, "xlb_hc_config");
_Static_assert(XLB_REASON_MAX == 28, "bump XLB_REASON_MAX with the list");
_Static_assert(XLB_REASON_MAX <= XLB_STAT_SLOTS && XLB_EVENT_MAX <= XLB_STAT_SLOTS, "stat slots");

#endif /* XLB_SHARED_H */
