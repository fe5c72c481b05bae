// SPDX-License-Identifier: MIT
/*
 * tail_calls.bpf.c - bpf_tail_call() shapes: from main, from subprograms
 * (allowed with BTF and the JIT), the 256-byte limit on the frames below a
 * tail call, the map it needs.  ok_* accepted, bad_* rejected.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} jmp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} plain SEC(".maps");

static __attribute__((noinline)) int tail_from_sub(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &jmp, 1);
	return 7;
}

static __attribute__((noinline)) void void_tail(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &jmp, 1);
}

__attribute__((noinline)) int global_tail(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &jmp, 2);
	return 3;
}

/* n bytes of stack in use (a store at fp-n), then the call. */
#define STACK_AND_CALL(n, call)                                                                    \
	asm volatile("r1 = 0; *(u64 *)(r10 - " #n ") = r1" ::: "r1", "memory");                  \
	return call

SEC("xdp")
int ok_tail_call_main(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &jmp, ctx->rx_queue_index);
	return XDP_PASS;
}

SEC("xdp")
int ok_tail_call_subprog(struct xdp_md *ctx)
{
	return tail_from_sub(ctx) == 7 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_tail_call_global(struct xdp_md *ctx)
{
	return global_tail(ctx) == 3 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_tail_call_240_below(struct xdp_md *ctx)
{
	STACK_AND_CALL(240, tail_from_sub(ctx));
}

SEC("xdp")
int bad_tail_call_256_below(struct xdp_md *ctx)
{
	STACK_AND_CALL(256, tail_from_sub(ctx));
}

SEC("xdp")
int bad_tail_call_void_subprog(struct xdp_md *ctx)
{
	void_tail(ctx);
	return XDP_PASS;
}

SEC("xdp")
int bad_tail_call_plain_array(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &plain, 0);
	return XDP_PASS;
}

SEC("xdp")
int bad_lookup_prog_array(struct xdp_md *ctx)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&jmp, &key) ? XDP_PASS : XDP_DROP;
}

/* A tail call that fails leaves the packet as it was: its pointers stay valid. */
SEC("xdp")
int ok_pkt_after_tail_call(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	if (data + 2 > end)
		return XDP_DROP;
	bpf_tail_call(ctx, &jmp, 0);
	return data[1];
}

/* A global function's tail call may have moved the packet. */
SEC("xdp")
int bad_pkt_after_global_tail(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	int r;

	if (data + 2 > end)
		return XDP_DROP;
	r = global_tail(ctx);
	return data[1] + r;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

SEC("xdp")
int bad_tail_call_holding_record(struct xdp_md *ctx)
{
	__u32 *rec = bpf_ringbuf_reserve(&events, 4, 0);

	if (!rec)
		return XDP_PASS;
	*rec = 1;
	bpf_tail_call(ctx, &jmp, 0);
	bpf_ringbuf_submit(rec, 0);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
