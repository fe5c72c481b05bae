// SPDX-License-Identifier: GPL-2.0
/*
 * nested.bpf.c - loader test object: two programs in one section sharing
 * subprograms, static and global callees calling each other inside .text,
 * string literals (.rodata.str1.1), .data/.bss at non-zero offsets.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 32);
	__type(key, __u64);
	__type(value, __u64);
} counts SEC(".maps");

__u64 pad_data[3] = { 1, 2, 3 };
__u32 hits = 11;
__u64 pad_bss[5];
__u32 last_len;

static __attribute__((noinline)) __u64 bump(__u64 key)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &key), one = 1;

	if (v) {
		*v += 1;
		return *v;
	}
	bpf_map_update_elem(&counts, &key, &one, BPF_ANY);
	return 1;
}

static __attribute__((noinline)) __u64 level3(__u64 x)
{
	hits++;
	return bump(x ^ hits) + pad_data[2];
}

__attribute__((noinline)) __u64 level2(__u64 x)
{
	if (x > 100)
		return level3(x - 1);
	return level3(x + 1) * 2;
}

static __attribute__((noinline)) __u64 level1(__u64 x)
{
	pad_bss[4] = x;
	return level2(x) + level3(x);
}

__attribute__((noinline)) int log_len(__u32 len)
{
	last_len = len;
	bpf_printk("len %u", len);
	return 0;
}

SEC("xdp")
int xdp_first(struct xdp_md *ctx)
{
	__u32 len = ctx->data_end - ctx->data;

	log_len(len);
	return level1(len) & 1 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int xdp_second(struct xdp_md *ctx)
{
	return level2(ctx->rx_queue_index) ? XDP_PASS : XDP_TX;
}

SEC("classifier")
int cls(struct __sk_buff *skb)
{
	return (int)level3(skb->len) + log_len(skb->len);
}

char _license[] SEC("license") = "GPL";
