// SPDX-License-Identifier: MIT
/*
 * callbacks.bpf.c - programs passing a static function to bpf_loop() or
 * bpf_for_each_map_elem(): the verifier walks the callback as called from
 * the helper, again each time it returns, until its states converge.  Names
 * tell the verdict both verifiers must reach: ok_* accepted, bad_* rejected
 * (with the kernel's message in xlb's log).  Built at test time.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} values SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ring SEC(".maps");

struct bpf_map;

struct sum {
	__u64 total;
	__u32 seen;
	__u32 limit;
};

static long add_index(__u64 index, void *data)
{
	struct sum *s = data;

	s->total += index;
	s->seen++;
	return 0;
}

static long stop_at_limit(__u64 index, void *data)
{
	struct sum *s = data;

	if (index >= s->limit)
		return 1;
	s->total += index * 3;
	return 0;
}

static long no_ctx(__u64 index, void *data)
{
	return 0;
}

static long returns_two(__u64 index, void *data)
{
	return 2;
}

static long returns_index(__u64 index, void *data)
{
	return index;
}

static long sum_value(struct bpf_map *map, __u32 *key, __u64 *value, struct sum *s)
{
	s->total += *value + *key;
	s->seen++;
	return 0;
}

static long read_past_value(struct bpf_map *map, __u32 *key, __u64 *value, struct sum *s)
{
	s->total += value[1];
	return 0;
}

static long read_past_key(struct bpf_map *map, __u32 *key, __u64 *value, struct sum *s)
{
	s->total += key[1];
	return 0;
}

/* The key as another map's key: the callback looks the same key up in the hash. */
static long lookup_key(struct bpf_map *map, __u32 *key, __u64 *value, struct sum *s)
{
	__u64 *other = bpf_map_lookup_elem(&table, key);

	if (other)
		s->total += *other;
	return 0;
}

static long write_past_ctx(__u64 index, void *data)
{
	struct sum *s = data;

	((__u64 *)s)[2] = index;
	return 0;
}

static long reserve_submit(__u64 index, void *data)
{
	__u64 *rec = bpf_ringbuf_reserve(&ring, 8, 0);

	if (!rec)
		return 1;
	*rec = index;
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

static long reserve_leak(__u64 index, void *data)
{
	__u64 *rec = bpf_ringbuf_reserve(&ring, 8, 0);

	if (!rec)
		return 1;
	*rec = index;
	return 0;
}

static long inner_loop(__u64 index, void *data)
{
	bpf_loop(4, add_index, data, 0);
	return 0;
}

/* What a callback leaves in its caller's stack: a record to release, a count, a pointer. */
struct hold {
	__u64 *rec;
	__u64 *val;
	__u32 seen;
	__u32 pad;
};

/* Releases a record the caller reserved (references belong to the path, not the frame). */
static long submit_held(__u64 index, void *data)
{
	struct hold *h = data;

	if (h->rec) {
		bpf_ringbuf_submit(h->rec, 0);
		h->rec = 0;
	}
	return 0;
}

static long count(__u64 index, void *data)
{
	struct hold *h = data;

	h->seen++;
	return 0;
}

/* Leaves a map value pointer, maybe NULL, in the caller's stack. */
static long grab(__u64 index, void *data)
{
	struct hold *h = data;
	__u32 k = index & 7;

	h->val = bpf_map_lookup_elem(&values, &k);
	return 0;
}

static long loop_in_each(struct bpf_map *map, __u32 *key, __u64 *value, struct hold *h)
{
	bpf_loop(2, count, h, 0);
	return 0;
}

__attribute__((noinline)) long global_cb(__u64 index, void *data)
{
	return 0;
}

SEC("xdp")
int ok_loop_sum(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_loop(10, add_index, &s, 0);
	return s.total == 45 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_loop_stops(struct xdp_md *ctx)
{
	struct sum s = { .limit = 5 };

	bpf_loop(100, stop_at_limit, &s, 0);
	return s.total > 10 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_loop_count_from_packet(struct xdp_md *ctx)
{
	struct sum s = {};
	__u32 n = ctx->data_end - ctx->data;

	bpf_loop(n, add_index, &s, 0);
	return s.total & 1 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_loop_null_ctx(struct xdp_md *ctx)
{
	return bpf_loop(3, no_ctx, 0, 0) == 3 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_loop_nested(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_loop(3, inner_loop, &s, 0);
	return s.seen == 12 ? XDP_PASS : XDP_DROP;
}

SEC("tc")
int ok_loop_in_tc(struct __sk_buff *skb)
{
	struct sum s = { .limit = 2 };

	bpf_loop(skb->len & 31, stop_at_limit, &s, 0);
	return s.total & 1;
}

SEC("xdp")
int ok_for_each_array(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_for_each_map_elem(&values, sum_value, &s, 0);
	return s.total > 100 ? XDP_PASS : XDP_DROP;
}

/* The count is decided on: each walk's count differs, the walks never converge. */
SEC("xdp")
int bad_for_each_counted(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_for_each_map_elem(&values, sum_value, &s, 0);
	return s.seen == 8 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_for_each_hash(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_for_each_map_elem(&table, sum_value, &s, 0);
	return s.total & 1 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_for_each_key_as_lookup_key(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_for_each_map_elem(&values, lookup_key, &s, 0);
	return s.total > 7 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_ringbuf_in_callback(struct xdp_md *ctx)
{
	bpf_loop(4, reserve_submit, 0, 0);
	return XDP_PASS;
}

SEC("xdp")
int bad_callback_returns_two(struct xdp_md *ctx)
{
	bpf_loop(3, returns_two, 0, 0);
	return XDP_PASS;
}

SEC("xdp")
int bad_callback_returns_index(struct xdp_md *ctx)
{
	bpf_loop(3, returns_index, 0, 0);
	return XDP_PASS;
}

SEC("xdp")
int bad_for_each_past_value(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_for_each_map_elem(&values, read_past_value, &s, 0);
	return s.total & 1;
}

SEC("xdp")
int bad_for_each_past_key(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_for_each_map_elem(&values, read_past_key, &s, 0);
	return s.total & 1;
}

SEC("xdp")
int bad_callback_past_ctx(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_loop(2, write_past_ctx, &s, 0);
	return s.total & 1;
}

SEC("xdp")
int bad_for_each_ringbuf(struct xdp_md *ctx)
{
	struct sum s = {};

	bpf_for_each_map_elem(&ring, sum_value, &s, 0);
	return XDP_PASS;
}

SEC("xdp")
int bad_ringbuf_leak_in_callback(struct xdp_md *ctx)
{
	bpf_loop(2, reserve_leak, 0, 0);
	return XDP_PASS;
}

SEC("xdp")
int bad_global_callback(struct xdp_md *ctx)
{
	bpf_loop(2, global_cb, 0, 0);
	return XDP_PASS;
}

SEC("xdp")
int ok_caller_record_released_by_callback(struct xdp_md *ctx)
{
	struct hold h = {};

	h.rec = bpf_ringbuf_reserve(&ring, 8, 0);
	if (!h.rec)
		return XDP_PASS;
	*h.rec = 1;
	bpf_loop(1, submit_held, &h, 0);
	if (h.rec)
		bpf_ringbuf_discard(h.rec, 0);
	return XDP_PASS;
}

/* A constant count: the walks are unrolled, so the exact count is known after. */
SEC("xdp")
int ok_loop_count_known_after(struct xdp_md *ctx)
{
	struct hold h = {};

	bpf_loop(3, count, &h, 0);
	return h.seen == 3 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int ok_loop_in_for_each(struct xdp_md *ctx)
{
	struct hold h = {};

	bpf_for_each_map_elem(&values, loop_in_each, &h, 0);
	return h.seen & 1;
}

SEC("xdp")
int ok_pointer_left_by_callback(struct xdp_md *ctx)
{
	struct hold h = {};

	bpf_loop(2, grab, &h, 0);
	return h.val ? *h.val & 1 : 0;
}

SEC("xdp")
int bad_pointer_left_by_callback_unchecked(struct xdp_md *ctx)
{
	struct hold h = {};

	bpf_loop(2, grab, &h, 0);
	return *h.val & 1;
}

char LICENSE[] SEC("license") = "GPL";
