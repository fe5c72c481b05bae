// SPDX-License-Identifier: GPL-2.0
/*
 * rodata_const.bpf.c - a frozen .rodata value is a constant to the
 * verifier (the kernel's bpf_map_direct_read()): an offset read from it
 * bounds a map value access, while the same offset in writable .data is
 * unknown, and the access is "unbounded".
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} values SEC(".maps");

const volatile __u32 ro_off = 8;
__u32 rw_off = 8;

static __always_inline int read_at(__u32 off)
{
	__u32 zero = 0;
	__u8 *v = bpf_map_lookup_elem(&values, &zero);

	if (!v)
		return XDP_ABORTED;
	return *(__u64 *)(v + off) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int rodata_offset(struct xdp_md *ctx)
{
	return read_at(ro_off);
}

SEC("xdp")
int data_offset(struct xdp_md *ctx)
{
	return read_at(rw_off);
}

char LICENSE[] SEC("license") = "GPL";
