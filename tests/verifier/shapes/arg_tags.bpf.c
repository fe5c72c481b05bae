// SPDX-License-Identifier: MIT
/*
 * arg_tags.bpf.c - global functions whose arguments carry the kernel's
 * "arg:" BTF decl tags (btf_prepare_func_args): arg:ctx makes any pointer
 * the program's context, arg:nonnull makes memory that is never NULL.
 * Names tell the verdict both verifiers must reach: ok_* accepted, bad_*
 * rejected (with the kernel's message in xlb's log).  Built at test time.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define GLOBAL __attribute__((noinline))
#define ARG_CTX __attribute__((btf_decl_tag("arg:ctx")))
#define ARG_NONNULL __attribute__((btf_decl_tag("arg:nonnull")))

struct pair {
	__u32 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct pair);
} pairs SEC(".maps");

/* An untyped context: the tag, not the type, says what it is. */
GLOBAL int ctx_first_byte(void *ctx ARG_CTX)
{
	struct xdp_md *x = ctx;
	unsigned char *data = (void *)(long)x->data, *end = (void *)(long)x->data_end;

	if (data + 1 > end)
		return -1;
	return data[0];
}

GLOBAL int skb_ctx_len(void *ctx ARG_CTX)
{
	return ((struct __sk_buff *)ctx)->len;
}

/* Never NULL: no check needed before the access. */
GLOBAL int pair_first(struct pair *p ARG_NONNULL)
{
	return p->a;
}

GLOBAL int pair_past_end(struct pair *p ARG_NONNULL)
{
	return ((__u32 *)p)[2];
}

GLOBAL int unknown_tag(struct pair *p __attribute__((btf_decl_tag("arg:sometimes"))))
{
	return p ? p->a : 0;
}

GLOBAL int tagged_scalar(int x ARG_NONNULL)
{
	return x + 1;
}

GLOBAL int ctx_and_nonnull(void *ctx ARG_CTX ARG_NONNULL)
{
	return ((struct xdp_md *)ctx)->rx_queue_index;
}

GLOBAL int pair_as_ctx(struct pair *p ARG_CTX)
{
	return p->a;
}

/* Static: verified in its caller's context, so its tags do not type anything. */
static __attribute__((noinline)) int static_tagged(struct pair *p ARG_NONNULL)
{
	return p ? p->b : 0;
}

SEC("xdp")
int ok_static_arg_tag(struct xdp_md *ctx)
{
	struct pair p = { 1, ctx->rx_queue_index };

	return static_tagged(&p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_arg_ctx_void(struct xdp_md *ctx)
{
	return ctx_first_byte(ctx) == 0x45 ? XDP_DROP : XDP_PASS;
}

SEC("tc")
int ok_arg_ctx_void_skb(struct __sk_buff *skb)
{
	return skb_ctx_len(skb) > 100;
}

SEC("xdp")
int bad_arg_ctx_not_ctx(struct xdp_md *ctx)
{
	__u32 word = 0;

	return ctx_first_byte(&word) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_arg_nonnull_stack(struct xdp_md *ctx)
{
	struct pair p = { .a = ctx->rx_queue_index, .b = 2 };

	return pair_first(&p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_arg_nonnull_checked_value(struct xdp_md *ctx)
{
	__u32 key = 1;
	struct pair *p = bpf_map_lookup_elem(&pairs, &key);

	if (!p)
		return XDP_PASS;
	return pair_first(p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_arg_nonnull_maybe_null(struct xdp_md *ctx)
{
	__u32 key = 1;

	return pair_first(bpf_map_lookup_elem(&pairs, &key)) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_arg_nonnull_literal_null(struct xdp_md *ctx)
{
	return pair_first(0) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_arg_nonnull_overread(struct xdp_md *ctx)
{
	struct pair p = { 1, 2 };

	return pair_past_end(&p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_arg_unknown_tag(struct xdp_md *ctx)
{
	struct pair p = { 1, 2 };

	return unknown_tag(&p) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_arg_tag_on_scalar(struct xdp_md *ctx)
{
	return tagged_scalar(ctx->rx_queue_index) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_arg_ctx_and_nonnull(struct xdp_md *ctx)
{
	return ctx_and_nonnull(ctx) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int bad_arg_ctx_on_struct(struct xdp_md *ctx)
{
	return pair_as_ctx((struct pair *)ctx) ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
