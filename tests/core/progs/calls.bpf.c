// SPDX-License-Identifier: GPL-2.0
/* calls.bpf.c - loader test object: noinline calls, global data, BTF maps of many types. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct lpm_v4 {
	__u32 prefixlen;
	__u32 addr;
};

struct inner_arr {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} inner0 SEC(".maps"), inner1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, struct lpm_v4);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64[3]);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__uint(key_size, 12);
	__uint(value_size, 4);
} lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 16);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_v4);
	__type(value, __u32);
} prefixes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 3);
	__type(key, __u32);
	__array(values, struct inner_arr);
} outer SEC(".maps") = {
	.values = { [0] = &inner0, [2] = &inner1 },
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct inner_arr);
} houter SEC(".maps");

__u32 counter = 7;
const volatile __u32 factor = 3;
/* second in .rodata (offset 4): the loader's globals option must find it by symbol */
const volatile __u32 factor2 = 5;
__u64 scratch[4];

static __attribute__((noinline)) __u32 mix(__u32 a, __u32 b)
{
	return (a * factor) ^ (b + counter);
}

__attribute__((noinline)) int global_helper(__u32 x)
{
	__u32 k = x & 7;
	__u64 *v = bpf_map_lookup_elem(&stats, &k);

	if (v)
		*v += mix(x, 1);
	return (int)mix(x, 2);
}

static __attribute__((noinline)) int leaf(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 14 > end)
		return 0;
	scratch[1] = end - data;
	return global_helper((__u32)(end - data));
}

static __attribute__((noinline)) int middle(struct xdp_md *ctx, __u32 y)
{
	__u32 key = y;
	struct lpm_v4 *f = bpf_map_lookup_elem(&flows, &key);

	counter++;
	if (f)
		return leaf(ctx) + f->addr;
	return leaf(ctx) + mix(y, 3);
}

SEC("xdp")
int xdp_main(struct xdp_md *ctx)
{
	__u32 k = 0;
	void *inner = bpf_map_lookup_elem(&outer, &k);

	if (inner)
		bpf_map_lookup_elem(inner, &k);
	if (middle(ctx, 5) == 12345)
		return bpf_redirect_map(&ports, 0, XDP_PASS);
	return XDP_PASS;
}

SEC("tc")
int tc_main(struct __sk_buff *skb)
{
	struct lpm_v4 key = { 32, skb->mark };
	__u32 *v = bpf_map_lookup_elem(&prefixes, &key);
	__u8 lkey[12] = {};

	if (v)
		return *v;
	if (bpf_map_lookup_elem(&lru, lkey))
		return 1;
	bpf_ringbuf_output(&events, &key, sizeof(key), 0);
	return global_helper(skb->len) & 1;
}

SEC("socket")
int sock_main(struct __sk_buff *skb)
{
	__u32 k = 1;

	if (bpf_map_lookup_elem(&houter, &k))
		return 0;
	return skb->len;
}

char _license[] SEC("license") = "GPL";
