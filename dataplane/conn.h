/* SPDX-License-Identifier: MIT */
/*
 * conn.h - the connection table (xlb_conns) and session affinity
 * (xlb_affinity); the rules are in xlb_shared.h.
 *
 * Why one shared table.  A per-CPU table remembers a flow only on the CPU
 * that saw its first packet: after a ring change, a packet of an
 * established flow that lands on another CPU (RSS indirection change, IRQ
 * move, the sender's CPU on veth) misses and is re-hashed to another real,
 * and a reused 5-tuple can live on two CPUs with two reals.  xlb_conns is
 * one LRU hash for all CPUs with per-CPU LRU lists (BPF_F_NO_COMMON_LRU):
 * a lookup is the same lock-free bucket walk as in a per-CPU table (and the
 * kernel inlines it, which it does not for the per-CPU LRU), an insert
 * takes its CPU's list lock and one bucket lock, never a global lock.  The
 * entry is written only on insert and when its TCP state changes (UDP:
 * its time on each packet), so CPUs do not fight over its cache line.
 *
 * Established flows of most VIPs are forwarded from their entry before any
 * VIP lookup (xlb_conn_fast(); the rules: xlb_shared.h, "Established-flow
 * fast path"): one hash lookup a packet instead of two.
 */
#ifndef XLB_CONN_H
#define XLB_CONN_H

#include "stats.h"
#include "parse.h"

/* The entry's TCP state after this packet of the client. */
static __always_inline __u8 xlb_conn_next_state(const struct xlb_pkt *pkt, __u8 state)
{
	if (pkt->icmp_err)
		return state;
	if (pkt->flow.proto != IPPROTO_TCP)
		return XLB_CONN_ESTABLISHED;
	if (pkt->tcp_flags & (TCP_FLAG_FIN | TCP_FLAG_RST))
		return XLB_CONN_CLOSED;
	if (state == XLB_CONN_NEW && !(pkt->tcp_flags & TCP_FLAG_SYN))
		return XLB_CONN_ESTABLISHED;
	return state;
}

/* What xlb_conn_lookup() found for the packet's flow. */
enum xlb_conn_found {
	XLB_FOUND_NONE = 0,  /* no entry: an insert needs no lookup first */
	XLB_FOUND_HIT = 1,   /* pkt->real_num and pkt->hash set */
	XLB_FOUND_STALE = 2, /* an entry without a real, or an expired UDP one */
};

/* A UDP entry older than the configured timeout no longer holds its flow. */
static __always_inline int xlb_conn_expired(const struct xlb_config *cfg, const struct xlb_conn *conn,
					    __u64 now)
{
	__u64 timeout = cfg->udp_timeout_ns ? cfg->udp_timeout_ns : XLB_UDP_TIMEOUT_NS_DEFAULT;

	return now - conn->atime_ns > timeout;
}

/* A hit: the flow's real and hash into pkt; the entry's TCP state or UDP time kept. */
static __always_inline void xlb_conn_hit(struct xlb_pkt *pkt, struct xlb_conn *conn, __u64 now)
{
	__u8 state;

	if (pkt->flow.proto == IPPROTO_UDP)
		conn->atime_ns = now;
	state = xlb_conn_next_state(pkt, conn->state);
	if (state != conn->state) {
		conn->state = state;
		if (state == XLB_CONN_CLOSED)
			xlb_count_event(XLB_EV_CONN_CLOSED);
	}
	pkt->real_num = conn->real_num;
	pkt->hash = conn->hash;
	xlb_count_event(XLB_EV_LRU_HIT);
}

/*
 * The epoch an entry is stamped with by a packet that read its VIP's meta
 * (xlb_shared.h, "Established-flow fast path"): 0 for a VIP whose packets
 * need more than the table, whatever its meta says.
 */
static __always_inline __u32 xlb_vip_epoch(const struct xlb_vip_meta *vip)
{
	if ((vip->flags & XLB_VIP_F_FAST_BLOCKERS) || vip->affinity_s || vip->vip_num > 0xffff)
		return 0;
	return vip->epoch;
}

/* Stamp a hit entry for the fast path; written only when it changes. */
static __always_inline void xlb_conn_stamp(const struct xlb_pkt *pkt, struct xlb_conn *conn)
{
	__u32 epoch = xlb_vip_epoch(&pkt->vip);

	if (conn->vip_epoch == epoch && conn->vip_num == (__u16)pkt->vip.vip_num)
		return;
	conn->vip_num = (__u16)pkt->vip.vip_num; /* above 0xffff the epoch is 0 */
	conn->vip_epoch = epoch;
}

/*
 * Connection-table lookup after the VIP lookup: on a hit, pkt->real_num
 * and pkt->hash.  None when the fast path already found no entry.
 */
static __always_inline int xlb_conn_lookup(struct xlb_pkt *pkt, const struct xlb_config *cfg)
{
	struct xlb_conn *conn = NULL;
	__u64 now = 0;

	if (!pkt->conn_absent)
		conn = bpf_map_lookup_elem(&xlb_conns, &pkt->flow);
	if (!conn || !conn->real_num) {
		xlb_count_event(XLB_EV_LRU_MISS);
		return conn ? XLB_FOUND_STALE : XLB_FOUND_NONE;
	}
	if (pkt->flow.proto == IPPROTO_UDP) {
		now = bpf_ktime_get_ns();
		if (xlb_conn_expired(cfg, conn, now)) {
			xlb_count_event(XLB_EV_UDP_EXPIRED);
			xlb_count_event(XLB_EV_LRU_MISS);
			return XLB_FOUND_STALE;
		}
	}
	xlb_conn_hit(pkt, conn, now);
	xlb_conn_stamp(pkt, conn);
	return XLB_FOUND_HIT;
}

/*
 * The established-flow fast path (xlb_shared.h), before any VIP lookup:
 * the flow's entry, stamped with the epoch xlb_vip_fast holds for its VIP,
 * gives the real, the hash and the VIP's encapsulation.  1: forward it
 * (pkt->vip.vip_num and .encap set); 0: take the VIP lookup, which finds
 * everything again (pkt->conn_absent when there was no entry at all).
 */
static __always_inline int xlb_conn_fast(struct xlb_pkt *pkt, const struct xlb_config *cfg)
{
	const struct xlb_vip_fast *vf;
	struct xlb_conn *conn;
	__u32 vip_num;
	__u64 now = 0;

	conn = bpf_map_lookup_elem(&xlb_conns, &pkt->flow);
	if (!conn) {
		pkt->conn_absent = 1;
		return 0;
	}
	if (!conn->real_num || !conn->vip_epoch)
		return 0;
	vip_num = conn->vip_num;
	vf = bpf_map_lookup_elem(&xlb_vip_fast, &vip_num);
	if (!vf || vf->epoch != conn->vip_epoch)
		return 0;
	if (pkt->flow.proto == IPPROTO_UDP) {
		now = bpf_ktime_get_ns();
		if (xlb_conn_expired(cfg, conn, now))
			return 0;
	}
	xlb_conn_hit(pkt, conn, now);
	pkt->vip.vip_num = vip_num;
	pkt->vip.encap = vf->encap;
	xlb_count_event(XLB_EV_LRU_HIT_FAST);
	return 1;
}

/* The flood guard: may this CPU insert one more flow in this second? */
static __always_inline int xlb_flood_ok(const struct xlb_config *cfg)
{
	struct xlb_flood_state *fs;
	__u32 zero = 0;
	__u64 now;

	if (!cfg->max_new_flows_per_sec)
		return 1;
	fs = bpf_map_lookup_elem(&xlb_flood, &zero);
	if (!fs)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - fs->window_start_ns >= XLB_NS_PER_SEC) {
		fs->window_start_ns = now;
		fs->inserts = 0;
	}
	if (fs->inserts >= cfg->max_new_flows_per_sec) {
		xlb_count_event(XLB_EV_FLOOD_SKIP);
		return 0;
	}
	fs->inserts++;
	return 1;
}

/*
 * Remember a new flow (pkt->real_num, pkt->hash).  A SYN that reuses a
 * 5-tuple the table holds rewrites the entry in place (no new element: a
 * retransmitted SYN or a reused port costs a lookup, not an LRU insert);
 * a reader on another CPU meanwhile sees the old or the new real, both
 * whole words.  `found` is what xlb_conn_lookup() said (XLB_FOUND_STALE
 * when it was not asked, as for a SYN): after XLB_FOUND_NONE the entry
 * is inserted without a second lookup (hashing the 40-byte key and
 * walking its bucket again), and one another CPU inserted meanwhile is
 * kept (BPF_NOEXIST).  Flood guard: at most max_new_flows_per_sec
 * inserts per CPU.
 */
static __noinline void xlb_conn_insert(struct xlb_pkt *pkt, const struct xlb_config *cfg,
				       int found)
{
	struct xlb_conn conn = {}, *cur = NULL;

	conn.real_num = pkt->real_num;
	conn.hash = pkt->hash;
	conn.state = xlb_conn_next_state(pkt, XLB_CONN_NEW);
	conn.vip_num = (__u16)pkt->vip.vip_num;
	conn.vip_epoch = xlb_vip_epoch(&pkt->vip);
	if (pkt->flow.proto == IPPROTO_UDP)
		conn.atime_ns = bpf_ktime_get_ns();
	if (found != XLB_FOUND_NONE)
		cur = bpf_map_lookup_elem(&xlb_conns, &pkt->flow);
	if (cur) {
		cur->real_num = conn.real_num;
		cur->hash = conn.hash;
		cur->atime_ns = conn.atime_ns;
		cur->state = conn.state;
		cur->vip_num = conn.vip_num;
		cur->vip_epoch = conn.vip_epoch;
	} else if (!xlb_flood_ok(cfg) ||
		   bpf_map_update_elem(&xlb_conns, &pkt->flow, &conn, BPF_NOEXIST)) {
		XLB_RETURN_VOID;
	}
	xlb_count_event(XLB_EV_NEW_FLOW);
	xlb_count_new_flow(pkt->vip.vip_num, pkt->real_num);
	XLB_RETURN_VOID;
}

/*
 * A real that exists (present) and that may take a new client (present and
 * not draining).  QUIC server ids only need the first: the CID names the
 * server holding the connection, draining or not.
 */
static __always_inline int xlb_real_check(__u32 real_num, __u8 refuse_flags)
{
	struct xlb_real *r;

	if (!real_num || real_num >= xlb_max_reals)
		return 0;
	r = bpf_map_lookup_elem(&xlb_reals, &real_num);
	return r && !xlb_addr_is_zero(&r->addr) && !(r->flags & refuse_flags);
}

#define xlb_real_present(n) xlb_real_check(n, 0)
#define xlb_real_takes_new(n) xlb_real_check(n, XLB_REAL_F_DRAIN)

static __always_inline void xlb_affinity_key_of(const struct xlb_pkt *pkt,
						struct xlb_affinity_key *key)
{
	key->vip_num = pkt->vip.vip_num;
	key->family = pkt->flow.family;
	key->client = pkt->flow.src;
}

/*
 * Session affinity of the packet's client for its VIP: the recorded real
 * while it is younger than the VIP's timeout (and takes new clients), else
 * 0.  Refreshes the record's time at most once a second.
 */
static __noinline __u32 xlb_affinity_lookup(struct xlb_pkt *pkt)
{
	struct xlb_affinity_key key = {};
	struct xlb_affinity *a;
	__u64 now;

	xlb_affinity_key_of(pkt, &key);
	a = bpf_map_lookup_elem(&xlb_affinity, &key);
	if (!a)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - a->atime_ns > (__u64)pkt->vip.affinity_s * XLB_NS_PER_SEC ||
	    !xlb_real_takes_new(a->real_num))
		return 0;
	if (now - a->atime_ns > XLB_NS_PER_SEC)
		a->atime_ns = now;
	return a->real_num;
}

/* Record (or renew) the client's real for the VIP. */
static __noinline void xlb_affinity_update(struct xlb_pkt *pkt)
{
	struct xlb_affinity_key key = {};
	struct xlb_affinity val = {};

	xlb_affinity_key_of(pkt, &key);
	val.real_num = pkt->real_num;
	val.atime_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&xlb_affinity, &key, &val, BPF_ANY);
	XLB_RETURN_VOID;
}

#endif /* XLB_CONN_H */
