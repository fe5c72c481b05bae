// SPDX-License-Identifier: MIT
/*
 * pkt_helpers.bpf.c - one program per packet helper family, for
 * test_pkt_helpers.c: the arguments come from the packet (after its
 * Ethernet header, or at ARGS_OFF for the VLAN program, whose frames may
 * carry tags), every helper's return value and what it changed go into
 * out[0], so that the kernel's BPF_PROG_TEST_RUN and xlb's engines can be
 * compared on the map, the return value and the packet.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define ARGS_OFF 30 /* the VLAN program's arguments: past two tags */

struct result {
	__s64 ret[4];
	__u32 mtu;
	__u32 len;
	__u32 vlan_present, vlan_tci, vlan_proto, protocol;
	__u64 buff_len;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct result);
} out SEC(".maps");

struct mtu_args {
	__u32 ifindex;
	__u32 mtu_len;
	__s32 len_diff;
	__u32 flags;
};

static __attribute__((always_inline)) struct result *result(void)
{
	__u32 zero = 0;
	struct result *r = bpf_map_lookup_elem(&out, &zero);

	if (r)
		__builtin_memset(r, 0, sizeof(*r));
	return r;
}

/* args: offset (2 bytes), op; op bit 0: load 8 bytes at offset and store them at 20, else store there. */
SEC("xdp")
int xdp_bytes(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u8 buf[8] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7 };
	struct result *r = result();
	__u8 *a = data + 14;
	__u32 off;

	if (!r || (void *)(a + 3) > end)
		return XDP_ABORTED;
	off = a[0] | (__u32)a[1] << 8;
	if (a[2] & 1) {
		r->ret[0] = bpf_xdp_load_bytes(ctx, off, buf, sizeof(buf));
		if (!r->ret[0])
			r->ret[1] = bpf_xdp_store_bytes(ctx, 20, buf, sizeof(buf));
	} else {
		r->ret[0] = bpf_xdp_store_bytes(ctx, off, buf, sizeof(buf));
	}
	r->buff_len = bpf_xdp_get_buff_len(ctx);
	return XDP_PASS;
}

SEC("xdp")
int xdp_mtu(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct mtu_args *a = data + 14;
	struct result *r = result();
	__u32 mtu;

	if (!r || (void *)(a + 1) > end)
		return XDP_ABORTED;
	mtu = a->mtu_len;
	r->ret[0] = bpf_check_mtu(ctx, a->ifindex, &mtu, a->len_diff, a->flags);
	r->mtu = mtu;
	return XDP_PASS;
}

SEC("tc")
int tc_mtu(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct mtu_args *a = data + 14;
	struct result *r = result();
	__u32 mtu;

	if (!r || (void *)(a + 1) > end)
		return TC_ACT_SHOT;
	mtu = a->mtu_len;
	r->ret[0] = bpf_check_mtu(skb, a->ifindex, &mtu, a->len_diff, a->flags);
	r->mtu = mtu;
	r->len = skb->len;
	return TC_ACT_OK;
}

/*
 * Up to four VLAN operations, one argument byte each: 1 push 802.1Q, 2 push
 * 802.1ad, 3 push an unknown type (the kernel takes 802.1Q), 4 pop, 0 end.
 */
SEC("tc")
int tc_vlan(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	__u8 *a = data + ARGS_OFF, ops[4];
	struct result *r = result();

	if (!r || (void *)(a + 4) > end)
		return TC_ACT_SHOT;
	__builtin_memcpy(ops, a, sizeof(ops));
	for (int i = 0; i < 4; i++) {
		__u16 tci = 0x100 + 0x11 * i;

		if (ops[i] == 1)
			r->ret[i] = bpf_skb_vlan_push(skb, __builtin_bswap16(0x8100), tci);
		else if (ops[i] == 2)
			r->ret[i] = bpf_skb_vlan_push(skb, __builtin_bswap16(0x88a8), tci);
		else if (ops[i] == 3)
			r->ret[i] = bpf_skb_vlan_push(skb, __builtin_bswap16(0x1234), tci);
		else if (ops[i] == 4)
			r->ret[i] = bpf_skb_vlan_pop(skb);
		else
			break;
	}
	r->vlan_present = skb->vlan_present;
	r->vlan_tci = skb->vlan_tci;
	r->vlan_proto = skb->vlan_proto;
	r->protocol = skb->protocol;
	r->len = skb->len;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
