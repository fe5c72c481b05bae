// SPDX-License-Identifier: MIT
/*
 * minlb.bpf.c - the least an L4 load balancer tier can do, as a reference
 * for http_vs_ecmp.sh: IPv4 TCP/UDP to the VIP is hashed on its source
 * address and ports to one of the reals, encapsulated in IPIP toward it and
 * sent back out (XDP_TX); everything else goes to the stack.  No
 * connection table, no health, no stats beyond one counter, no IPv6.
 *
 * Through it a request takes the same path as through xlb (router, LB
 * host, router again, the real's decap), so "xlb vs ECMP" splits into what
 * the LB tier's extra hops cost in this topology ("minimal LB vs ECMP") and
 * what xlb's own work costs on top ("xlb vs the minimal LB").
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MINLB_MAX_REALS 8

/* Filled by http_vs_ecmp.sh after the program is attached. */
struct minlb_config {
	__be32 vip;
	__be32 src; /* the outer source: this LB's address */
	__u32 nreals;
	__be32 reals[MINLB_MAX_REALS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct minlb_config);
} minlb_config SEC(".maps");

/* Frames sent toward a real, per CPU: the benchmark checks its path with it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} minlb_sent SEC(".maps");

/* The header checksum of a 20-byte IPv4 header whose check field is 0. */
static __always_inline __u16 minlb_ipv4_csum(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < (int)(sizeof(*ip) / 2); i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

SEC("xdp")
int minlb(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data, *outer_eth;
	struct iphdr *ip = (void *)(eth + 1), *outer;
	__u8 dmac[ETH_ALEN], smac[ETH_ALEN];
	const struct minlb_config *cfg;
	__u32 zero = 0, ports, hash, pick;
	__be32 real;
	__u16 tot_len;
	__u64 *sent;
	__u8 tos;

	if ((void *)(ip + 1) + sizeof(ports) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP))
		return XDP_PASS;
	cfg = bpf_map_lookup_elem(&minlb_config, &zero);
	if (!cfg || ip->daddr != cfg->vip || !cfg->nreals || cfg->nreals > MINLB_MAX_REALS)
		return XDP_PASS;
	ports = *(__u32 *)(ip + 1);
	hash = (ip->saddr ^ ports) * 0x9e3779b1u;
	pick = (hash >> 16) % cfg->nreals;
	/* below nreals <= MINLB_MAX_REALS already, but the verifier cannot follow a modulo */
	asm volatile("" : "+r"(pick));
	if (pick >= MINLB_MAX_REALS)
		return XDP_PASS;
	real = cfg->reals[pick];
	/* back where it came from: the router's port is the next hop */
	__builtin_memcpy(dmac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(smac, eth->h_dest, ETH_ALEN);
	tot_len = bpf_ntohs(ip->tot_len);
	tos = ip->tos;
	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(*outer)))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	outer_eth = data;
	outer = (void *)(outer_eth + 1);
	if ((void *)(outer + 1) > end)
		return XDP_DROP;
	__builtin_memcpy(outer_eth->h_dest, dmac, ETH_ALEN);
	__builtin_memcpy(outer_eth->h_source, smac, ETH_ALEN);
	outer_eth->h_proto = bpf_htons(ETH_P_IP);
	outer->version = 4;
	outer->ihl = 5;
	outer->tos = tos;
	outer->tot_len = bpf_htons(tot_len + sizeof(*outer));
	outer->id = 0;
	outer->frag_off = 0;
	outer->ttl = 64;
	outer->protocol = IPPROTO_IPIP;
	outer->check = 0;
	outer->saddr = cfg->src;
	outer->daddr = real;
	outer->check = minlb_ipv4_csum(outer);
	sent = bpf_map_lookup_elem(&minlb_sent, &zero);
	if (sent)
		(*sent)++;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
