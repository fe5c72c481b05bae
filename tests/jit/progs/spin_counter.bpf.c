// SPDX-License-Identifier: MIT
/*
 * spin_counter.bpf.c - an XDP program that counts packets and bytes in a
 * map value under its bpf_spin_lock, for test_spin_locks.c.  The critical
 * section reads, works, then writes, so updates made without the lock
 * would get lost.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct counter {
	__u64 packets;
	struct bpf_spin_lock lock;
	__u32 bytes;
	__u64 sum;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct counter);
} counters SEC(".maps");

SEC("xdp")
int count(struct xdp_md *ctx)
{
	__u32 key = 0, len = ctx->data_end - ctx->data;
	struct counter *c = bpf_map_lookup_elem(&counters, &key);
	__u64 packets, sum;

	if (!c)
		return XDP_ABORTED;
	bpf_spin_lock(&c->lock);
	packets = c->packets;
	sum = c->sum;
	for (int i = 0; i < 16; i++)
		sum += (packets + i) * len;
	c->sum = sum;
	c->bytes += len;
	c->packets = packets + 1;
	bpf_spin_unlock(&c->lock);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
