// SPDX-License-Identifier: MIT
/*
 * An XDP program xlb's verifier (and the kernel's) rejects: it reads the
 * packet without checking it is long enough.  xlb-dpdk must refuse it
 * before any lcore starts, and xlbd's userspace backend under
 * --verify enforce must refuse to drive it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xlb_unchecked(struct xdp_md *ctx)
{
	unsigned char *data = (unsigned char *)(long)ctx->data;

	return data[12] == 0x08 ? XDP_PASS : XDP_DROP; /* no data_end check */
}

char _license[] SEC("license") = "GPL";
