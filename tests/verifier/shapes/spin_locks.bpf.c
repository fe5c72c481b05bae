// SPDX-License-Identifier: MIT
/*
 * spin_locks.bpf.c - bpf_spin_lock()/bpf_spin_unlock() shapes: a lock in a
 * map value (BTF), one held at a time, only the unlock called under it,
 * released before exit, never touched by loads and stores.  ok_* accepted,
 * bad_* rejected.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct counter {
	__u64 packets;
	struct bpf_spin_lock lock;
	__u32 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct counter);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct counter);
} by_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} plain SEC(".maps");

static __attribute__((noinline)) int bump(struct counter *c)
{
	c->packets++;
	return 0;
}

__attribute__((noinline)) int global_bump(int x)
{
	return x + 1;
}

static __attribute__((always_inline)) struct counter *get(struct xdp_md *ctx)
{
	__u32 key = ctx->rx_queue_index & 3;

	return bpf_map_lookup_elem(&counters, &key);
}

SEC("xdp")
int ok_lock_update(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	bpf_spin_lock(&c->lock);
	c->packets++;
	c->bytes += ctx->data_end - ctx->data;
	bpf_spin_unlock(&c->lock);
	return XDP_PASS;
}

SEC("xdp")
int ok_lock_hash(struct xdp_md *ctx)
{
	__u32 key = 7;
	struct counter *c = bpf_map_lookup_elem(&by_hash, &key);

	if (!c)
		return XDP_PASS;
	bpf_spin_lock(&c->lock);
	c->bytes = 1;
	bpf_spin_unlock(&c->lock);
	return XDP_DROP;
}

SEC("xdp")
int ok_static_call_under_lock(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	bpf_spin_lock(&c->lock);
	bump(c);
	bpf_spin_unlock(&c->lock);
	return XDP_PASS;
}

SEC("xdp")
int bad_exit_locked(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	bpf_spin_lock(&c->lock);
	c->packets++;
	return XDP_PASS;
}

SEC("xdp")
int bad_helper_under_lock(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	bpf_spin_lock(&c->lock);
	c->packets = bpf_ktime_get_ns();
	bpf_spin_unlock(&c->lock);
	return XDP_PASS;
}

SEC("xdp")
int bad_global_call_under_lock(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	bpf_spin_lock(&c->lock);
	c->bytes = global_bump(c->bytes);
	bpf_spin_unlock(&c->lock);
	return XDP_PASS;
}

SEC("xdp")
int bad_two_locks(struct xdp_md *ctx)
{
	__u32 k0 = 0, k1 = 1;
	struct counter *a = bpf_map_lookup_elem(&counters, &k0);
	struct counter *b = bpf_map_lookup_elem(&by_hash, &k1);

	if (!a || !b)
		return XDP_PASS;
	bpf_spin_lock(&a->lock);
	bpf_spin_lock(&b->lock);
	bpf_spin_unlock(&b->lock);
	bpf_spin_unlock(&a->lock);
	return XDP_PASS;
}

SEC("xdp")
int bad_unlock_unlocked(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	bpf_spin_unlock(&c->lock);
	return XDP_PASS;
}

SEC("xdp")
int bad_unlock_other(struct xdp_md *ctx)
{
	__u32 k0 = 0, k1 = 1;
	struct counter *a = bpf_map_lookup_elem(&counters, &k0);
	struct counter *b = bpf_map_lookup_elem(&by_hash, &k1);

	if (!a || !b)
		return XDP_PASS;
	bpf_spin_lock(&a->lock);
	bpf_spin_unlock(&b->lock);
	return XDP_PASS;
}

SEC("xdp")
int bad_lock_wrong_offset(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	bpf_spin_lock((struct bpf_spin_lock *)&c->bytes);
	bpf_spin_unlock((struct bpf_spin_lock *)&c->bytes);
	return XDP_PASS;
}

SEC("xdp")
int bad_lock_read_directly(struct xdp_md *ctx)
{
	struct counter *c = get(ctx);

	if (!c)
		return XDP_PASS;
	return *(volatile __u32 *)&c->lock ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int bad_lock_without_lock_field(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&plain, &key);

	if (!v)
		return XDP_PASS;
	bpf_spin_lock((struct bpf_spin_lock *)v);
	bpf_spin_unlock((struct bpf_spin_lock *)v);
	return XDP_PASS;
}

SEC("xdp")
int bad_lock_stack(struct xdp_md *ctx)
{
	struct bpf_spin_lock l = {};

	bpf_spin_lock(&l);
	bpf_spin_unlock(&l);
	return XDP_PASS;
}

SEC("socket")
int bad_socket_filter_lock(struct __sk_buff *skb)
{
	__u32 key = 0;
	struct counter *c = bpf_map_lookup_elem(&counters, &key);

	if (!c)
		return 0;
	bpf_spin_lock(&c->lock);
	c->packets++;
	bpf_spin_unlock(&c->lock);
	return 0;
}

char _license[] SEC("license") = "GPL";
