// SPDX-License-Identifier: MIT
/*
 * router.bpf.c - an XDP router for the benchmark topology's router
 * namespace (http_vs_ecmp.sh ROUTER, topology.sh TOPO_ROUTER_OBJ).
 *
 * In production the router between clients, LB and reals is a switch ASIC:
 * its per-packet cost is no one's CPU.  In the netns topology it is the
 * kernel's forwarding path on the same two cores as everything else, and
 * every packet that goes through the LB crosses it twice (client -> LB,
 * LB -> real), so a kernel-stack router charges the LB tier a second
 * router pass that the real network does not.  This program forwards in
 * XDP with the kernel's own FIB (bpf_fib_lookup: routes, ECMP by L4 hash
 * as with fib_multipath_hash_policy=1, neighbours) and redirects; anything
 * it cannot forward (no neighbour yet, TTL running out, fragments, ARP,
 * local traffic) goes to the kernel stack as before.  Both modes of the
 * benchmark run over the same router.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* Frames forwarded in XDP and frames given to the stack, per CPU: the
 * benchmark checks that its router forwarded what it says. */
struct router_counts {
	__u64 forwarded;
	__u64 passed;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct router_counts);
} xlb_router_cnt SEC(".maps");

static __always_inline int router_count(int verdict)
{
	__u32 key = 0;
	struct router_counts *c = bpf_map_lookup_elem(&xlb_router_cnt, &key);

	if (c) {
		if (verdict == XDP_REDIRECT)
			c->forwarded++;
		else
			c->passed++;
	}
	return verdict;
}

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

struct router_ports {
	__be16 source;
	__be16 dest;
};

/* The ports of a TCP or UDP header at @l4, for the ECMP hash (0 if absent). */
static __always_inline void router_ports(struct bpf_fib_lookup *fib, __u8 proto,
					 void *l4, void *end)
{
	struct router_ports *p = l4;

	if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP) || (void *)(p + 1) > end)
		return;
	fib->sport = p->source;
	fib->dport = p->dest;
}

/* RFC 1624 update of the IPv4 checksum for a TTL one lower (the kernel's
 * ip_decrease_ttl). */
static __always_inline void router_ipv4_ttl(struct iphdr *ip)
{
	__u32 check = ip->check;

	check += bpf_htons(0x0100);
	ip->check = (__u16)(check + (check >= 0xFFFF));
	ip->ttl--;
}

static __always_inline int router_forward(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib = {};
	struct ethhdr *eth = data;
	long rc;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	fib.ifindex = ctx->ingress_ifindex;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		/* options, fragments, a bad header or a TTL running out: the stack */
		if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->ttl <= 1 ||
		    (ip->frag_off & bpf_htons(0x3fff)))
			return XDP_PASS;
		fib.family = AF_INET;
		fib.tos = ip->tos;
		fib.l4_protocol = ip->protocol;
		fib.tot_len = bpf_ntohs(ip->tot_len);
		fib.ipv4_src = ip->saddr;
		fib.ipv4_dst = ip->daddr;
		router_ports(&fib, ip->protocol, ip + 1, end);
		rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			return XDP_PASS;
		router_ipv4_ttl(ip);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->hop_limit <= 1)
			return XDP_PASS;
		fib.family = AF_INET6;
		fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		fib.l4_protocol = ip6->nexthdr;
		fib.tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6); /* for the MTU check */
		__builtin_memcpy(fib.ipv6_src, &ip6->saddr, sizeof(fib.ipv6_src));
		__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, sizeof(fib.ipv6_dst));
		router_ports(&fib, ip6->nexthdr, ip6 + 1, end);
		rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			return XDP_PASS;
		ip6->hop_limit--;
	} else {
		return XDP_PASS;
	}
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	return bpf_redirect(fib.ifindex, 0);
}

SEC("xdp")
int xlb_router(struct xdp_md *ctx)
{
	return router_count(router_forward(ctx));
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
