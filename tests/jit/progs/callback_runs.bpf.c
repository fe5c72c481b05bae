// SPDX-License-Identifier: MIT
/*
 * callback_runs.bpf.c - XDP programs whose helpers call back into them
 * (bpf_loop, bpf_for_each_map_elem), for test_helper_runs: each returns
 * what its callbacks computed, and some write ring buffer records, so the
 * engines and the kernel can be compared on the same packet and maps.
 * The test fills values[k] = 7k + 1 and table[k * 3] = k + 100 (k < 5).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct bpf_map;

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

struct acc {
	__u64 total;
	__u32 seen;
	__u32 limit;
};

static long add_index(__u64 index, void *data)
{
	struct acc *a = data;

	a->total += index;
	a->seen++;
	return 0;
}

static long stop_at_limit(__u64 index, void *data)
{
	struct acc *a = data;

	if (index >= a->limit)
		return 1;
	a->total += index * 3 + 1;
	return 0;
}

static long nothing(__u64 index, void *data)
{
	return 0;
}

static long inner(__u64 index, void *data)
{
	bpf_loop(4, add_index, data, 0);
	return 0;
}

static long record_square(__u64 index, void *data)
{
	__u64 *rec = bpf_ringbuf_reserve(&ring, 16, 0);

	if (!rec)
		return 1;
	rec[0] = index * index;
	rec[1] = index | 0xabc000;
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

static long sum_elem(struct bpf_map *map, __u32 *key, __u64 *value, struct acc *a)
{
	a->total += *value * 10 + *key;
	a->seen++;
	return 0;
}

static long sum_until_limit(struct bpf_map *map, __u32 *key, __u64 *value, struct acc *a)
{
	if (*key >= a->limit)
		return 1;
	a->total += *value;
	return 0;
}

static long bump_value(struct bpf_map *map, __u32 *key, __u64 *value, struct acc *a)
{
	*value += *key + 1;
	return 0;
}

SEC("xdp")
int loop_sum(struct xdp_md *ctx)
{
	struct acc a = {};
	long n = bpf_loop(10, add_index, &a, 0);

	return (int)(a.total * 100 + a.seen * 10 + n);
}

SEC("xdp")
int loop_stops(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct acc a = {};
	long n;

	if (data + 1 > end)
		return 0;
	a.limit = data[0] & 15;
	n = bpf_loop(100, stop_at_limit, &a, 0);
	return (int)(n * 1000 + a.total);
}

SEC("xdp")
int loop_count_from_packet(struct xdp_md *ctx)
{
	struct acc a = {};
	__u32 n = ctx->data_end - ctx->data;

	bpf_loop(n, add_index, &a, 0);
	return (int)a.total;
}

SEC("xdp")
int loop_bad_flags(struct xdp_md *ctx)
{
	return (int)bpf_loop(3, nothing, 0, 1);
}

SEC("xdp")
int loop_too_many(struct xdp_md *ctx)
{
	return (int)bpf_loop(8 * 1024 * 1024 + 1, nothing, 0, 0);
}

SEC("xdp")
int loop_nested(struct xdp_md *ctx)
{
	struct acc a = {};

	bpf_loop(3, inner, &a, 0);
	return (int)(a.seen * 1000 + a.total);
}

SEC("xdp")
int loop_records(struct xdp_md *ctx)
{
	return (int)bpf_loop(6, record_square, 0, 0);
}

SEC("xdp")
int for_each_array(struct xdp_md *ctx)
{
	struct acc a = {};
	long n = bpf_for_each_map_elem(&values, sum_elem, &a, 0);

	return (int)(n * 100000 + a.total * 10 + a.seen);
}

SEC("xdp")
int for_each_array_stops(struct xdp_md *ctx)
{
	struct acc a = { .limit = 3 };
	long n = bpf_for_each_map_elem(&values, sum_until_limit, &a, 0);

	return (int)(n * 1000 + a.total);
}

SEC("xdp")
int for_each_hash(struct xdp_md *ctx)
{
	struct acc a = {};
	long n = bpf_for_each_map_elem(&table, sum_elem, &a, 0);

	return (int)(n * 100000 + a.total * 10 + a.seen);
}

SEC("xdp")
int for_each_writes_values(struct xdp_md *ctx)
{
	struct acc a = {};
	__u32 key = 5;
	__u64 *v;

	bpf_for_each_map_elem(&values, bump_value, &a, 0);
	v = bpf_map_lookup_elem(&values, &key);
	return v ? (int)*v : -1;
}

SEC("xdp")
int for_each_bad_flags(struct xdp_md *ctx)
{
	struct acc a = {};

	return (int)bpf_for_each_map_elem(&values, sum_elem, &a, 2);
}

char LICENSE[] SEC("license") = "GPL";
