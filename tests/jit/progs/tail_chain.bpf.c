// SPDX-License-Identifier: MIT
/*
 * tail_chain.bpf.c - XDP programs that tail call each other through one
 * prog_array, for test_tail_calls.c: the packet's first byte picks the
 * slot `entry` jumps to; every program counts its runs in runs[0].
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 8);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} jmp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} runs SEC(".maps");

static __attribute__((always_inline)) void count(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&runs, &zero);

	if (n)
		*n += 1;
}

SEC("xdp")
int entry(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	count();
	if (data + 2 > end)
		return XDP_ABORTED;
	bpf_tail_call(ctx, &jmp, data[0]);
	return 100 + data[0]; /* the slot was empty */
}

/* Slot 0: marks the packet, goes on to slot 1. */
SEC("xdp")
int mark(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	count();
	if (data + 2 > end)
		return XDP_ABORTED;
	data[1] = 0xaa;
	bpf_tail_call(ctx, &jmp, 1);
	return 200;
}

/* Slot 1: the end of a chain; no tail call, so the JIT may run it. */
SEC("xdp")
int finish(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;

	count();
	if (data + 2 > end)
		return XDP_ABORTED;
	return 3 + data[1];
}

/* Slot 2: itself again, until the 33-tail-call limit makes the call fail. */
SEC("xdp")
int again(struct xdp_md *ctx)
{
	count();
	bpf_tail_call(ctx, &jmp, 2);
	return 44;
}

static __attribute__((noinline)) int sub_tail(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &jmp, 1);
	return 9;
}

/* Slot 3: a tail call from a subprogram: slot 1's return value comes back to this frame. */
SEC("xdp")
int from_sub(struct xdp_md *ctx)
{
	volatile int below = 5; /* stack of the frame below the tail call */

	count();
	return sub_tail(ctx) + 1000 + below;
}

char _license[] SEC("license") = "GPL";
