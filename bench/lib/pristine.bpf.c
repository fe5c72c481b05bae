// SPDX-License-Identifier: MIT
/*
 * pristine.bpf.c - let BPF_PROG_TEST_RUN with repeat time the packet it
 * names, at every iteration.
 *
 * The kernel's bpf_test_run() runs an XDP program `repeat` times over one
 * xdp_buff and never restores it: a balancer that encapsulates re-runs on
 * its own output after the first iteration (and takes a cheaper path).
 * bench_pristine puts the frame back first - the head where it was, then the
 * bytes from bench_frame - and tail-calls the program under test in
 * bench_target[0].  The harness (bench_path.c) times the same wrapper with
 * bench_null in that slot and subtracts: what remains is the program's own
 * time on the named packet.
 *
 * The restore assumes the program moved only the head (bpf_xdp_adjust_head),
 * as every encapsulation does; a frame it cannot put back ends in
 * XDP_ABORTED, which the harness refuses as a wrong path.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bench_frame.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_frame);
} bench_frame SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_target SEC(".maps");

SEC("xdp")
int bench_pristine(struct xdp_md *ctx)
{
	__u32 zero = 0, flen, i, last;
	struct bench_frame *f = bpf_map_lookup_elem(&bench_frame, &zero);
	void *data, *data_end;
	long len;

	if (!f)
		return XDP_ABORTED;
	flen = f->len;
	if (flen < 8 || flen > BENCH_FRAME_MAX)
		return XDP_ABORTED;
	len = (long)ctx->data_end - (long)ctx->data;
	if (len != flen && bpf_xdp_adjust_head(ctx, (int)(len - (long)flen)))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + flen != data_end)
		return XDP_ABORTED;
	for (i = 0; i < BENCH_FRAME_MAX / 8; i++) {
		if ((i + 1) * 8 > flen)
			break;
		if (data + (i + 1) * 8 > data_end)
			return XDP_ABORTED;
		*(__u64 *)(data + i * 8) = f->words[i];
	}
	/* a length not a multiple of 8: the frame's last 8 bytes, overlapping */
	last = flen - 8;
	if (data + last + 8 > data_end)
		return XDP_ABORTED;
	*(__u64 *)(data + last) = *(__u64 *)((__u8 *)f->words + last);
	bpf_tail_call(ctx, &bench_target, 0);
	return XDP_ABORTED;
}

/* The subtracted reference: the wrapper's restore and tail call, nothing else. */
SEC("xdp")
int bench_null(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
