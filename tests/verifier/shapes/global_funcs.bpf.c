// SPDX-License-Identifier: MIT
/*
 * global_funcs.bpf.c - programs calling global functions (BTF linkage
 * global), each verified on its own from its BTF prototype.  Names tell the
 * verdict both verifiers must reach: ok_* accepted, bad_* rejected (with
 * the kernel's message in xlb's log).  Built at test time.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define GLOBAL __attribute__((noinline))

struct pair {
	__u32 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct pair);
} pairs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} words SEC(".maps");

GLOBAL int add_scalars(int a, int b)
{
	return a * 3 + b;
}

/* A context argument: packet bounds are checked inside. */
GLOBAL int first_byte(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 1 > end)
		return -1;
	return data[0];
}

GLOBAL int skb_len(struct __sk_buff *skb)
{
	return skb->len;
}

/* Memory of sizeof(struct pair), which may be NULL. */
GLOBAL int pair_sum(struct pair *p)
{
	if (!p)
		return 0;
	p->a += 1;
	return p->a + p->b;
}

GLOBAL int pair_first_unchecked(struct pair *p)
{
	return p->a;
}

GLOBAL int read_past_pair(struct pair *p)
{
	if (!p)
		return 0;
	return ((__u32 *)p)[2];
}

/* Calls a global function itself. */
GLOBAL int chained(int x)
{
	return add_scalars(x, 1) + 1;
}

/* Moves packet data: the caller's packet pointers are gone after a call. */
GLOBAL int grow_head(struct xdp_md *ctx)
{
	return bpf_xdp_adjust_head(ctx, -4);
}

GLOBAL int untyped(void *p)
{
	return p != 0;
}

/* Never called: not verified, its bug is never found. */
GLOBAL int dead_bug(int i)
{
	__u32 key = 0;
	struct pair *p = bpf_map_lookup_elem(&pairs, &key);

	return p ? ((__u32 *)p)[i] : 0;
}

GLOBAL int map_index(int i)
{
	__u32 key = 0;
	struct pair *p = bpf_map_lookup_elem(&pairs, &key);

	return p ? ((__u32 *)p)[i] : 0;
}

/* A global function must return a scalar: void is refused where it is called. */
GLOBAL void bump_void(struct pair *p)
{
	if (p)
		p->a++;
}

SEC("xdp")
int bad_void_global(struct xdp_md *ctx)
{
	__u32 key = 0;

	bump_void(bpf_map_lookup_elem(&pairs, &key));
	return XDP_PASS;
}

/* Another program type's context is just memory of its size, not this program's context. */
GLOBAL int skb_mark(struct __sk_buff *skb)
{
	return skb ? skb->mark : 0;
}

SEC("xdp")
int bad_other_ctx_type(struct xdp_md *ctx)
{
	return skb_mark((struct __sk_buff *)ctx) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_scalar_args(struct xdp_md *ctx)
{
	return add_scalars(ctx->ingress_ifindex, 2) > 5 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_ctx_arg(struct xdp_md *ctx)
{
	return first_byte(ctx) == 0x45 ? XDP_DROP : XDP_PASS;
}

SEC("tc")
int ok_skb_ctx_arg(struct __sk_buff *skb)
{
	return skb_len(skb) > 100;
}

SEC("xdp")
int ok_stack_mem_arg(struct xdp_md *ctx)
{
	struct pair p = { .a = ctx->rx_queue_index, .b = 2 };

	return pair_sum(&p) & 1 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_map_value_arg(struct xdp_md *ctx)
{
	__u32 key = 1;
	struct pair *p = bpf_map_lookup_elem(&pairs, &key);

	/* A map value that may be NULL is fine: the callee checks. */
	return pair_sum(p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_null_mem_arg(struct xdp_md *ctx)
{
	return pair_sum(0) ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int ok_chained_globals(struct xdp_md *ctx)
{
	return chained(ctx->rx_queue_index) == 4 ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int ok_dead_global(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int bad_unchecked_mem(struct xdp_md *ctx)
{
	struct pair p = { 1, 2 };

	return pair_first_unchecked(&p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_mem_overread(struct xdp_md *ctx)
{
	struct pair p = { 1, 2 };

	return read_past_pair(&p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_small_map_value_arg(struct xdp_md *ctx)
{
	__u32 key = 0, *v = bpf_map_lookup_elem(&words, &key);

	/* 4 bytes where the callee may use 8. */
	return pair_sum((struct pair *)v) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_ctx_arg_not_ctx(struct xdp_md *ctx)
{
	__u32 word = 0;

	return first_byte((struct xdp_md *)&word) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_ctx_arg_moved(struct xdp_md *ctx)
{
	return first_byte((struct xdp_md *)((char *)ctx + 4)) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_scalar_arg_pointer(struct xdp_md *ctx)
{
	return add_scalars((long)ctx, 1) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_pkt_after_global(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	int r;

	if (data + 2 > end)
		return XDP_DROP;
	r = grow_head(ctx);
	return data[1] + r ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_void_ptr_arg(struct xdp_md *ctx)
{
	return untyped(ctx) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_global_body(struct xdp_md *ctx)
{
	return map_index(ctx->rx_queue_index) ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
