/* SPDX-License-Identifier: MIT */
/* A small XDP program with one subprogram and one map, for the xbpf CLI tests. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 4);
} counters SEC(".maps");

/* 1: IPv4, 2: anything else, 0: runt. */
static __attribute__((noinline)) int classify(void *data, void *data_end)
{
	unsigned char *p = data;

	if (p + 14 > (unsigned char *)data_end)
		return 0;
	return p[12] == 0x08 && p[13] == 0x00 ? 1 : 2;
}

SEC("xdp")
int cli_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	unsigned char *first = data;
	__u32 key = classify(data, data_end);
	__u64 *count = bpf_map_lookup_elem(&counters, &key);

	if (count)
		__sync_fetch_and_add(count, 1);
	/* Touch the packet so the CLI tests can compare output bytes. */
	if (first + 1 <= (unsigned char *)data_end)
		first[0] ^= 0xff;
	return key == 1 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
