// SPDX-License-Identifier: MIT
/*
 * balancer.bpf.c - the xlb XDP balancer.  Parses the packet, finds its VIP,
 * picks a real (QUIC connection ID, per-CPU connection table, or the VIP's
 * Maglev ring), encapsulates toward the real and transmits; everything that
 * is not for a VIP passes to the stack untouched.  Built as many static
 * __noinline subprograms (bpf-to-bpf calls).  Maps: xlb_maps.h; layouts and
 * update rules: xlb_shared.h.
 */
#include "xlb_consts.h"
#include "xlb_maps.h"
#include "parse.h"
#include "hash.h"
#include "encap.h"
#include "icmp.h"

/* Feature switches, set in .rodata before load. */
const volatile __u8 xlb_enable_quic = 1;
const volatile __u8 xlb_enable_icmp = 1;

char LICENSE[] SEC("license") = "Dual MIT/GPL";

static __noinline void xlb_count_event(__u32 event)
{
	struct xlb_counter *c = bpf_map_lookup_elem(&xlb_event_stats, &event);

	if (c)
		c->packets++;
	XLB_RETURN_VOID;
}

static __noinline void xlb_count_reason(__u32 reason, __u32 bytes)
{
	struct xlb_counter *c = bpf_map_lookup_elem(&xlb_reason_stats, &reason);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
	XLB_RETURN_VOID;
}

/* Per-VIP or per-real packets/bytes (is_real selects the map). */
static __noinline void xlb_count_traffic(__u32 idx, __u32 bytes, int is_real)
{
	struct xlb_lb_counter *c;

	c = is_real ? bpf_map_lookup_elem(&xlb_real_stats, &idx) :
		      bpf_map_lookup_elem(&xlb_vip_stats, &idx);
	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
	XLB_RETURN_VOID;
}

/* A flow entered the LRU: count it for its VIP and its real. */
static __noinline void xlb_count_new_flow(__u32 vip_num, __u32 real_num)
{
	struct xlb_lb_counter *c;

	c = bpf_map_lookup_elem(&xlb_vip_stats, &vip_num);
	if (c)
		c->new_flows++;
	c = bpf_map_lookup_elem(&xlb_real_stats, &real_num);
	if (c)
		c->new_flows++;
	XLB_RETURN_VOID;
}

/* (daddr, dport, proto), then the any-port VIP (daddr, 0, proto). */
static __noinline int xlb_lookup_vip(struct xlb_pkt *pkt)
{
	struct xlb_vip_key key = {};
	struct xlb_vip_meta *meta;

	key.addr = pkt->flow.dst;
	key.port = pkt->flow.dport;
	key.proto = pkt->flow.proto;
	key.family = pkt->flow.family;
	meta = bpf_map_lookup_elem(&xlb_vips, &key);
	if (!meta) {
		key.port = 0;
		meta = bpf_map_lookup_elem(&xlb_vips, &key);
		if (!meta)
			return -XLB_PASS_NOT_VIP;
	}
	pkt->vip = *meta;
	if (pkt->vip.vip_num >= XLB_MAX_VIPS)
		return -XLB_PASS_NOT_VIP;
	return FURTHER_PROCESSING;
}

/* Index the VIP's active ring half; returns a real_num or -reason. */
static __noinline int xlb_ring_pick(struct xlb_pkt *pkt)
{
	__u32 vip = pkt->vip.vip_num, half = pkt->vip.ring_half & 1, key;
	__u32 *real;

	if (vip >= XLB_MAX_VIPS)
		return -XLB_DROP_NO_REAL;
	key = (vip * XLB_RING_HALVES + half) * XLB_RING_SIZE + pkt->hash % XLB_RING_SIZE;
	real = bpf_map_lookup_elem(&xlb_rings, &key);
	if (!real || !*real || *real >= XLB_MAX_REALS)
		return -XLB_DROP_NO_REAL;
	return *real;
}

/* Connection-table lookup; 0 on a miss. */
static __noinline __u32 xlb_conn_lookup(struct xlb_pkt *pkt, const struct xlb_config *cfg)
{
	struct xlb_conn *conn;
	__u64 now, timeout;

	conn = bpf_map_lookup_elem(&xlb_conns, &pkt->flow);
	if (!conn || !conn->real_num) {
		xlb_count_event(XLB_EV_LRU_MISS);
		return 0;
	}
	if (pkt->flow.proto == IPPROTO_UDP) {
		now = bpf_ktime_get_ns();
		timeout = cfg->udp_timeout_ns ? cfg->udp_timeout_ns : XLB_UDP_TIMEOUT_NS_DEFAULT;
		if (now - conn->atime_ns > timeout) {
			xlb_count_event(XLB_EV_UDP_EXPIRED);
			xlb_count_event(XLB_EV_LRU_MISS);
			return 0;
		}
		conn->atime_ns = now;
	}
	xlb_count_event(XLB_EV_LRU_HIT);
	return conn->real_num;
}

/* Remember a new flow, at most max_new_flows_per_sec per CPU. */
static __noinline void xlb_conn_insert(struct xlb_pkt *pkt, const struct xlb_config *cfg)
{
	struct xlb_conn conn = {};
	struct xlb_flood_state *fs;
	__u32 zero = 0;
	__u64 now = bpf_ktime_get_ns();

	fs = bpf_map_lookup_elem(&xlb_flood, &zero);
	if (!fs)
		XLB_RETURN_VOID;
	if (now - fs->window_start_ns >= XLB_NS_PER_SEC) {
		fs->window_start_ns = now;
		fs->inserts = 0;
	}
	if (cfg->max_new_flows_per_sec && fs->inserts >= cfg->max_new_flows_per_sec) {
		xlb_count_event(XLB_EV_FLOOD_SKIP);
		XLB_RETURN_VOID;
	}
	fs->inserts++;
	conn.real_num = pkt->real_num;
	conn.atime_ns = now;
	if (!bpf_map_update_elem(&xlb_conns, &pkt->flow, &conn, BPF_ANY)) {
		xlb_count_event(XLB_EV_NEW_FLOW);
		xlb_count_new_flow(pkt->vip.vip_num, pkt->real_num);
	}
	XLB_RETURN_VOID;
}

/* QUIC: real from the server id in the destination connection ID, or 0. */
static __noinline __u32 xlb_quic_real(void *data, void *data_end, struct xlb_pkt *pkt)
{
	__u32 off = pkt->l4_off + UDP_HLEN, sid, *real;
	__u8 *quic, *cid;

	if (off > XLB_MAX_L4_OFF + UDP_HLEN)
		return 0;
	quic = data + off;
	if ((void *)(quic + 7) > data_end)
		return 0;
	if (quic[0] & 0x80) {
		/* Long header: Initial and 0-RTT carry a client-chosen CID. */
		if (((quic[0] >> 4) & 3) < 2 || quic[5] < XLB_QUIC_CID_MIN_LEN)
			return 0;
		cid = quic + 6;
	} else {
		cid = quic + 1;
	}
	if ((void *)(cid + XLB_QUIC_CID_MIN_LEN) > data_end)
		return 0;
	if ((cid[0] >> 6) != XLB_QUIC_CID_VERSION)
		return 0;
	sid = ((__u32)cid[1] << 8) | cid[2];
	real = bpf_map_lookup_elem(&xlb_server_ids, &sid);
	if (!real || !*real || *real >= XLB_MAX_REALS) {
		xlb_count_event(XLB_EV_QUIC_CID_MISS);
		return 0;
	}
	xlb_count_event(XLB_EV_QUIC_CID_HIT);
	return *real;
}

/*
 * Choose the real: QUIC CID, then the connection table (never for a SYN),
 * then the ring.  Sets pkt->hash and pkt->real_num.
 */
static __noinline int xlb_select_real(struct xdp_md *ctx, struct xlb_pkt *pkt,
				      const struct xlb_config *cfg)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	int use_lru = !(pkt->vip.flags & XLB_VIP_F_NO_LRU);
	int syn = pkt->flow.proto == IPPROTO_TCP &&
		  (pkt->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN;
	__u32 real = 0;
	int ret;

	pkt->hash = xlb_flow_hash(&pkt->flow, pkt->vip.flags);
	if (xlb_enable_quic && (pkt->vip.flags & XLB_VIP_F_QUIC) &&
	    pkt->flow.proto == IPPROTO_UDP && !pkt->icmp_err)
		real = xlb_quic_real(data, data_end, pkt);
	if (!real && use_lru && !syn)
		real = xlb_conn_lookup(pkt, cfg);
	if (!real) {
		ret = xlb_ring_pick(pkt);
		if (ret < 0)
			return ret;
		real = ret;
		pkt->real_num = real;
		if (use_lru && !pkt->icmp_err)
			xlb_conn_insert(pkt, cfg);
	}
	pkt->real_num = real;
	return FURTHER_PROCESSING;
}

/* Outer Ethernet (+ the received 802.1Q tag) at the new packet start. */
static __noinline int xlb_write_l2(struct xdp_md *ctx, struct xlb_pkt *pkt,
				   const struct xlb_config *cfg, const __u8 *rx_dst_mac,
				   __u16 outer_proto)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct xlb_ethhdr *eth = data;
	struct xlb_vlanhdr *vlan;

	if ((void *)(eth + 1) > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	__builtin_memcpy(eth->dst, cfg->gw_mac, ETH_ALEN);
	if (xlb_mac_is_set(cfg->src_mac))
		__builtin_memcpy(eth->src, cfg->src_mac, ETH_ALEN);
	else
		__builtin_memcpy(eth->src, rx_dst_mac, ETH_ALEN);
	if (!pkt->has_vlan) {
		eth->proto = bpf_htons(outer_proto);
		return FURTHER_PROCESSING;
	}
	vlan = (void *)(eth + 1);
	if ((void *)(vlan + 1) > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	eth->proto = bpf_htons(ETH_P_8021Q);
	vlan->tci = pkt->vlan_tci;
	vlan->proto = bpf_htons(outer_proto);
	return FURTHER_PROCESSING;
}

/*
 * Push the outer IP (+ UDP for GUE) header in front of the inner IP header
 * and rewrite L2.  The inner packet (from its IP header to the end of the
 * frame) is left as received.
 */
static __noinline int xlb_encap(struct xdp_md *ctx, struct xlb_pkt *pkt,
				const struct xlb_real *real, const struct xlb_config *cfg)
{
	__u8 encap = pkt->vip.encap == XLB_ENCAP_GUE ? XLB_ENCAP_GUE : XLB_ENCAP_IP;
	__u32 olen = xlb_outer_len(real->family, encap), l3 = pkt->l3_off;
	__u32 inner_len = pkt->l3_len, iplen;
	__u8 proto = xlb_outer_proto(pkt->flow.family, encap);
	struct {
		union {
			struct xlb_iphdr v4;
			struct xlb_ipv6hdr v6;
		};
		struct xlb_udphdr udp;
	} hdr = {};
	__u8 rx_dst_mac[ETH_ALEN];
	void *data, *data_end;
	int ret;

	if (inner_len + olen > 0xffff)
		return -XLB_DROP_TOO_BIG;
	if (l3 > XLB_MAX_L3_OFF)
		return -XLB_DROP_ENCAP_FAIL;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + ETH_ALEN > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	__builtin_memcpy(rx_dst_mac, data, ETH_ALEN);

	if (real->family == XLB_FAMILY_V6) {
		if (xlb_addr_is_zero(&cfg->src6))
			return -XLB_DROP_NO_CONFIG;
		iplen = IPV6_HLEN;
		xlb_ipv6_fill(&hdr.v6, pkt->tos, pkt->hash, inner_len + olen - IPV6_HLEN, proto);
		hdr.v6.saddr[0] = cfg->src6.v6[0];
		hdr.v6.saddr[1] = cfg->src6.v6[1];
		hdr.v6.saddr[2] = cfg->src6.v6[2];
		hdr.v6.saddr[3] = xlb_outer_src6_low(cfg->src6.v6[3], cfg->src6_plen, pkt->hash);
		__builtin_memcpy(hdr.v6.daddr, real->addr.v6, 16);
	} else {
		if (!cfg->src4)
			return -XLB_DROP_NO_CONFIG;
		iplen = IPV4_HLEN;
		hdr.v4.tos = pkt->tos;
		hdr.v4.protocol = proto;
		hdr.v4.saddr = xlb_outer_src4(cfg->src4, cfg->src4_plen, pkt->hash);
		hdr.v4.daddr = real->addr.v4;
		xlb_ipv4_finish(&hdr.v4, inner_len + olen);
	}
	if (encap == XLB_ENCAP_GUE)
		xlb_udp_fill(&hdr.udp, pkt->hash, cfg->gue_port, inner_len + UDP_HLEN);

	if (bpf_xdp_adjust_head(ctx, -(int)olen))
		return -XLB_DROP_ENCAP_FAIL;
	ret = xlb_write_l2(ctx, pkt, cfg, rx_dst_mac,
			   real->family == XLB_FAMILY_V6 ? ETH_P_IPV6 : ETH_P_IP);
	if (ret != FURTHER_PROCESSING)
		return ret;

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + l3 + sizeof(hdr) > data_end)
		return -XLB_DROP_ENCAP_FAIL;
	if (iplen == IPV6_HLEN) {
		__builtin_memcpy(data + l3, &hdr.v6, IPV6_HLEN);
		if (encap == XLB_ENCAP_GUE)
			__builtin_memcpy(data + l3 + IPV6_HLEN, &hdr.udp, UDP_HLEN);
	} else {
		__builtin_memcpy(data + l3, &hdr.v4, IPV4_HLEN);
		if (encap == XLB_ENCAP_GUE)
			__builtin_memcpy(data + l3 + IPV4_HLEN, &hdr.udp, UDP_HLEN);
	}
	return FURTHER_PROCESSING;
}

/* Out of the receiving interface, or through the devmap when egress differs. */
static __noinline int xlb_transmit(struct xdp_md *ctx, const struct xlb_config *cfg)
{
	long ret;

	if (!cfg->egress_ifindex || cfg->egress_ifindex == ctx->ingress_ifindex) {
		xlb_count_event(XLB_EV_TX);
		return XDP_TX;
	}
	ret = bpf_redirect_map(&xlb_tx_ports, 0, 0);
	if (ret != XDP_REDIRECT)
		return -XLB_DROP_REDIRECT;
	xlb_count_event(XLB_EV_REDIRECT);
	return XDP_REDIRECT;
}

static __noinline int xlb_process(struct xdp_md *ctx, struct xlb_pkt *pkt)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	const struct xlb_config *cfg;
	struct xlb_real real;
	struct xlb_real *rp;
	__u32 zero = 0;
	int ret;

	ret = xlb_parse_l2(data, data_end, pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->l3_proto == ETH_P_IP)
		ret = xlb_parse_ipv4(data, data_end, pkt);
	else
		ret = xlb_parse_ipv6(data, data_end, pkt);
	if (ret < 0)
		return ret;
	if (ret > 0)
		xlb_count_event(XLB_EV_IP_OPTIONS);
	ret = xlb_parse_l4(data, data_end, pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->flow.proto == IPPROTO_ICMP || pkt->flow.proto == IPPROTO_ICMPV6) {
		if (!xlb_enable_icmp)
			return -XLB_PASS_ICMP_OTHER;
		ret = xlb_handle_icmp(ctx, pkt);
		if (ret != FURTHER_PROCESSING) {
			if (ret == XDP_TX)
				xlb_count_event(XLB_EV_ICMP_ECHO);
			return ret;
		}
	}
	ret = xlb_lookup_vip(pkt);
	if (ret != FURTHER_PROCESSING)
		return ret;
	xlb_count_traffic(pkt->vip.vip_num, pkt->frame_len, 0);
	if (pkt->vip.flags & XLB_VIP_F_LOCAL)
		return -XLB_PASS_LOCAL_VIP;

	cfg = bpf_map_lookup_elem(&xlb_config, &zero);
	if (!cfg)
		return -XLB_DROP_NO_CONFIG;
	ret = xlb_select_real(ctx, pkt, cfg);
	if (ret != FURTHER_PROCESSING)
		return ret;
	rp = bpf_map_lookup_elem(&xlb_reals, &pkt->real_num);
	if (!rp || xlb_addr_is_zero(&rp->addr))
		return -XLB_DROP_NO_REAL;
	real = *rp;
	xlb_count_traffic(pkt->real_num, pkt->frame_len, 1);
	ret = xlb_encap(ctx, pkt, &real, cfg);
	if (ret != FURTHER_PROCESSING)
		return ret;
	if (pkt->icmp_err)
		xlb_count_event(XLB_EV_ICMP_TOO_BIG);
	return xlb_transmit(ctx, cfg);
}

SEC("xdp")
int xlb_balancer(struct xdp_md *ctx)
{
	struct xlb_pkt pkt = {};
	int ret;

	ret = xlb_process(ctx, &pkt);
	if (ret >= 0)
		return ret;
	xlb_count_reason(-ret, pkt.frame_len);
	return xlb_reason_verdict(-ret, XDP_PASS, XDP_DROP);
}
