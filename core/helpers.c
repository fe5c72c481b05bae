// SPDX-License-Identifier: MIT
/*
 * helpers.c - the implementations of the BPF helpers the runtime provides,
 * with the kernel's behaviour (net/core/filter.c, kernel/bpf/helpers.c),
 * including the errors they return.  Their prototypes, which the verifier
 * reads, are in helper_protos.c; only the engines link this file.
 *
 * Helpers taking the context receive R1 pointing at the UAPI image, which
 * is the first member of struct xbpf_run_ctx; the frame bounds live behind
 * it.  Map arguments arrive as struct xbpf_map pointers, as
 * xbpf_prog__resolve_maps() wrote them into the program.
 */
#include <stdio.h>
#include <time.h>

#include "core_impl.h"

#define XDP_ABORTED 0
#define XDP_REDIRECT 4
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7
#define ENOTSUPP_KERNEL 524 /* the kernel's internal ENOTSUPP, as programs see it */

static struct xbpf_run_ctx *run_ctx(uint64_t r1)
{
	return (struct xbpf_run_ctx *)(uintptr_t)r1;
}

/* ---- maps ------------------------------------------------------------------ */

static uint64_t h_map_lookup_elem(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_map *m = (struct xbpf_map *)(uintptr_t)map;

	/* arrays straight here: the same result as the front end, one call less */
	if (m && key && m->ops == &__xbpf_array_ops) {
		uint8_t *raw = __xbpf_array_elem(m, (const void *)(uintptr_t)key);

		if (raw && m->percpu)
			raw += (size_t)__xbpf_map_cpu(m) * m->stride;
		return (uintptr_t)raw;
	}
	return (uintptr_t)xbpf_map__lookup_elem(m, (const void *)(uintptr_t)key);
}

static uint64_t h_map_update_elem(uint64_t map, uint64_t key, uint64_t value, uint64_t flags,
				  uint64_t a5)
{
	return (uint64_t)(int64_t)__xbpf_map_update_prog((struct xbpf_map *)(uintptr_t)map,
							 (const void *)(uintptr_t)key,
							 (const void *)(uintptr_t)value, flags);
}

static uint64_t h_map_delete_elem(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return (uint64_t)(int64_t)__xbpf_map_delete_prog((struct xbpf_map *)(uintptr_t)map,
							 (const void *)(uintptr_t)key);
}

static uint64_t h_ringbuf_output(uint64_t map, uint64_t data, uint64_t size, uint64_t flags,
				 uint64_t a5)
{
	return (uint64_t)(int64_t)__xbpf_ringbuf_output((struct xbpf_map *)(uintptr_t)map,
							(const void *)(uintptr_t)data, size, flags);
}

static uint64_t h_ringbuf_reserve(uint64_t map, uint64_t size, uint64_t flags, uint64_t a4,
				  uint64_t a5)
{
	return (uintptr_t)__xbpf_ringbuf_reserve((struct xbpf_map *)(uintptr_t)map, size, flags);
}

/* The flags only choose when the kernel wakes its consumer: nothing to do here. */
static uint64_t h_ringbuf_submit(uint64_t sample, uint64_t flags, uint64_t a3, uint64_t a4,
				 uint64_t a5)
{
	__xbpf_ringbuf_commit((void *)(uintptr_t)sample, false);
	return 0;
}

static uint64_t h_ringbuf_discard(uint64_t sample, uint64_t flags, uint64_t a3, uint64_t a4,
				  uint64_t a5)
{
	__xbpf_ringbuf_commit((void *)(uintptr_t)sample, true);
	return 0;
}

static uint64_t h_ringbuf_query(uint64_t map, uint64_t flags, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return __xbpf_ringbuf_query((struct xbpf_map *)(uintptr_t)map, flags);
}

/* ---- callbacks (bpf_loop, for_each_map_elem) ---------------------------------- */

uint64_t __xbpf_loop(uint64_t nr_loops, uint64_t fn, uint64_t ctx, uint64_t flags,
		     xbpf_callback_call_fn call, void *priv)
{
	uint32_t n = (uint32_t)nr_loops, i;

	if (flags)
		return (uint64_t)-EINVAL;
	if (n > XBPF_MAX_LOOPS)
		return (uint64_t)-E2BIG;
	for (i = 0; i < n; i++)
		if (call(priv, fn, i, ctx, 0, 0)) /* 1: stop */
			return i + 1;
	return i;
}

/*
 * Arrays in index order; hashes in their key order (the kernel's is its
 * buckets'), each element once at most.  The callback gets a copy of the
 * key (it may only read it) and the calling CPU's value.  Returns the
 * elements visited.
 */
uint64_t __xbpf_for_each_map_elem(uint64_t map, uint64_t fn, uint64_t ctx, uint64_t flags,
				  xbpf_callback_call_fn call, void *priv)
{
	struct xbpf_map *m = (struct xbpf_map *)(uintptr_t)map;
	uint8_t at[XBPF_STACK_SIZE], next[XBPF_STACK_SIZE];
	uint64_t visited = 0, steps = 0;
	const void *prev = NULL;

	if (flags)
		return (uint64_t)-EINVAL;
	if (!m || m->spec.key_size > XBPF_STACK_SIZE)
		return (uint64_t)-EINVAL;
	if (m->ops == &__xbpf_array_ops) {
		for (uint32_t i = 0; i < m->spec.max_entries; i++) {
			uint32_t k = i;
			void *value = xbpf_map__lookup_elem(m, &k);

			visited++;
			if (call(priv, fn, map, (uintptr_t)&k, (uintptr_t)value, ctx))
				break;
		}
		return visited;
	}
	if (m->ops != &__xbpf_htab_ops)
		return (uint64_t)-EINVAL;
	/* The step bound holds even if the callback deletes the key the walk stands on. */
	while (steps++ < 2ull * m->spec.max_entries && !xbpf_map__get_next_key(m, prev, next)) {
		void *value;

		memcpy(at, next, m->spec.key_size);
		prev = at;
		value = xbpf_map__lookup_elem(m, at);
		if (!value)
			continue;
		visited++;
		if (call(priv, fn, map, (uintptr_t)next, (uintptr_t)value, ctx))
			break;
	}
	return visited;
}

/* The JITs' callback values are native functions (their C-ABI entries). */
static uint64_t call_native(void *priv, uint64_t fn, uint64_t r1, uint64_t r2, uint64_t r3,
			    uint64_t r4)
{
	return ((xbpf_helper_fn)(uintptr_t)fn)(r1, r2, r3, r4, 0);
}

static uint64_t h_loop(uint64_t nr_loops, uint64_t fn, uint64_t ctx, uint64_t flags, uint64_t a5)
{
	return __xbpf_loop(nr_loops, fn, ctx, flags, call_native, NULL);
}

static uint64_t h_for_each_map_elem(uint64_t map, uint64_t fn, uint64_t ctx, uint64_t flags,
				    uint64_t a5)
{
	return __xbpf_for_each_map_elem(map, fn, ctx, flags, call_native, NULL);
}

/* ---- time, random, cpu ------------------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t h_ktime_get_ns(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t h_ktime_get_boot_ns(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return clock_ns(CLOCK_BOOTTIME);
}

static uint64_t h_get_prandom_u32(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_thread_state *ts = __xbpf_thread();
	uint64_t x = ts->prandom;

	if (!x)
		x = clock_ns(CLOCK_MONOTONIC) ^ (uintptr_t)ts ^ 0x9e3779b97f4a7c15ull;
	/* xorshift64*: cheap, per thread, good enough for load spreading */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ts->prandom = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

static uint64_t h_get_smp_processor_id(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
				       uint64_t a5)
{
	return (uint32_t)xbpf_get_cpu();
}

/*
 * bpf_trace_printk: the kernel's restricted format (%d %i %u %x %ld %lu %lx
 * %lld %llu %llx %p %c %%, at most three arguments).  %s is not followed:
 * without probe_read we cannot tell a string pointer from junk.
 */
static uint64_t h_trace_printk(uint64_t fmt_p, uint64_t fmt_size, uint64_t a3, uint64_t a4,
			       uint64_t a5)
{
	const char *fmt = (const char *)(uintptr_t)fmt_p;
	uint64_t args[3] = { a3, a4, a5 };
	char out[512];
	size_t o = 0, i;
	int argi = 0;

	if (!fmt || !fmt_size || fmt[fmt_size - 1] != '\0')
		return (uint64_t)-EINVAL;
	for (i = 0; fmt[i] && o < sizeof(out) - 1; i++) {
		char spec[8] = "%";
		int n = 0, longs = 0;
		size_t s = 1;

		if (fmt[i] != '%') {
			out[o++] = fmt[i];
			continue;
		}
		if (fmt[i + 1] == '%') {
			out[o++] = '%';
			i++;
			continue;
		}
		while (fmt[i + 1] == 'l' && longs < 2) {
			longs++;
			i++;
		}
		if (argi >= 3 || !strchr("diuxpc", fmt[i + 1]) || !fmt[i + 1])
			return (uint64_t)-EINVAL;
		i++;
		switch (fmt[i]) {
		case 'p':
			n = snprintf(out + o, sizeof(out) - o, "0x%llx", (unsigned long long)args[argi]);
			break;
		case 'c':
			n = snprintf(out + o, sizeof(out) - o, "%c", (char)args[argi]);
			break;
		default:
			spec[s++] = 'l';
			spec[s++] = 'l';
			spec[s++] = fmt[i];
			spec[s] = '\0';
			if (fmt[i] == 'd' || fmt[i] == 'i') {
				int64_t v = longs ? (int64_t)args[argi] : (int64_t)(int32_t)args[argi];

				n = snprintf(out + o, sizeof(out) - o, spec, (long long)v);
			} else {
				uint64_t v = longs ? args[argi] : (uint32_t)args[argi];

				n = snprintf(out + o, sizeof(out) - o, spec, (unsigned long long)v);
			}
		}
		argi++;
		if (n < 0)
			return (uint64_t)-EINVAL;
		o += (size_t)n < sizeof(out) - o ? (size_t)n : sizeof(out) - 1 - o;
	}
	out[o] = '\0';
	__xbpf_pr(XBPF_DEBUG, "%s", out);
	return o;
}

/* ---- checksums (lib/checksum.c and x86-64's csum_partial) ----------------------- */

static uint32_t from64to32(uint64_t x)
{
	x = (x & 0xffffffff) + (x >> 32);
	x = (x & 0xffffffff) + (x >> 32);
	return (uint32_t)x;
}

static uint32_t csum_add(uint32_t a, uint32_t b)
{
	a += b;
	return a + (a < b);
}

static uint32_t csum_sub(uint32_t a, uint32_t b)
{
	return csum_add(a, ~b);
}

static uint16_t csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint16_t csum_fold16(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* csum_partial over whole 32-bit words (ones' complement, end-around carry). */
static uint32_t csum_words(const uint32_t *w, size_t n, uint32_t seed)
{
	uint64_t acc = seed;
	size_t i;

	for (i = 0; i < n; i++)
		acc += w[i];
	return from64to32(acc);
}

/*
 * bpf_csum_diff(from, from_size, to, to_size, seed): sum of ~from words and
 * to words, both sizes multiples of 4, 512 bytes together at most, folded
 * to 16 bits (not complemented) as the kernel returns it.
 */
static uint64_t h_csum_diff(uint64_t from_p, uint64_t from_size, uint64_t to_p, uint64_t to_size,
			    uint64_t seed)
{
	const uint8_t *from = (const uint8_t *)(uintptr_t)from_p, *to = (const uint8_t *)(uintptr_t)to_p;
	uint32_t diff[128];
	size_t i, n = 0;

	if (((from_size | to_size) & 3) || from_size + to_size > sizeof(diff) ||
	    from_size > sizeof(diff) || to_size > sizeof(diff))
		return (uint64_t)-EINVAL;
	for (i = 0; i < from_size; i += 4) {
		uint32_t w;

		memcpy(&w, from + i, 4);
		diff[n++] = ~w;
	}
	for (i = 0; i < to_size; i += 4)
		memcpy(&diff[n++], to + i, 4);
	/* kernels since 6.12 fold the result to 16 bits on every architecture */
	return csum_fold16(csum_words(diff, n, (uint32_t)seed));
}

/* Pointer to `len` writable bytes at `offset` in the skb's linear data, or NULL. */
static uint8_t *skb_ptr(struct xbpf_run_ctx *ctx, uint64_t offset, uint64_t len)
{
	uint8_t *data = xbpf_u32_ptr(ctx->md.skb.data);

	if (offset > 0xffff || len > ctx->md.skb.len || offset > ctx->md.skb.len - len)
		return NULL;
	return data + offset;
}

static uint64_t h_l3_csum_replace(uint64_t r1, uint64_t offset, uint64_t from, uint64_t to,
				  uint64_t flags)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	uint16_t sum;
	uint8_t *p;

	if (flags & ~(uint64_t)BPF_F_HDR_FIELD_MASK)
		return (uint64_t)-EINVAL;
	if (offset & 1)
		return (uint64_t)-EFAULT;
	p = skb_ptr(ctx, offset, sizeof(sum));
	if (!p)
		return (uint64_t)-EFAULT;
	memcpy(&sum, p, sizeof(sum));
	switch (flags & BPF_F_HDR_FIELD_MASK) {
	case 0:
		if (from)
			return (uint64_t)-EINVAL;
		sum = csum_fold(csum_add((uint32_t)to, ~(uint32_t)sum));
		break;
	case 2: {
		/* csum_replace2: RFC 1624 in 16 bits */
		uint32_t s = (uint16_t)~sum;

		s += (uint16_t)~(uint16_t)from;
		s += (uint16_t)to;
		s = (s & 0xffff) + (s >> 16);
		s = (s & 0xffff) + (s >> 16);
		sum = (uint16_t)~s;
		break;
	}
	case 4:
		sum = csum_fold(csum_add(csum_sub(~(uint32_t)sum, (uint32_t)from), (uint32_t)to));
		break;
	default:
		return (uint64_t)-EINVAL;
	}
	memcpy(p, &sum, sizeof(sum));
	return 0;
}

static uint64_t h_l4_csum_replace(uint64_t r1, uint64_t offset, uint64_t from, uint64_t to,
				  uint64_t flags)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	bool mangled_0 = flags & BPF_F_MARK_MANGLED_0;
	bool enforce = flags & BPF_F_MARK_ENFORCE;
	uint16_t sum;
	uint8_t *p;

	if (flags & ~(uint64_t)(BPF_F_MARK_MANGLED_0 | BPF_F_MARK_ENFORCE | BPF_F_PSEUDO_HDR |
				BPF_F_HDR_FIELD_MASK | (1ull << 7) /* BPF_F_IPV6 */))
		return (uint64_t)-EINVAL;
	if (offset & 1)
		return (uint64_t)-EFAULT;
	p = skb_ptr(ctx, offset, sizeof(sum));
	if (!p)
		return (uint64_t)-EFAULT;
	memcpy(&sum, p, sizeof(sum));
	if (mangled_0 && !enforce && !sum)
		return 0;
	/* test_run skbs are CHECKSUM_NONE: the pseudo-header flag changes nothing */
	switch (flags & BPF_F_HDR_FIELD_MASK) {
	case 0:
		if (from)
			return (uint64_t)-EINVAL;
		sum = csum_fold(csum_add((uint32_t)to, ~(uint32_t)sum));
		break;
	case 2:
		sum = csum_fold(csum_add(csum_sub(~(uint32_t)sum, (uint16_t)from), (uint16_t)to));
		break;
	case 4:
		sum = csum_fold(csum_add(csum_sub(~(uint32_t)sum, (uint32_t)from), (uint32_t)to));
		break;
	default:
		return (uint64_t)-EINVAL;
	}
	if (mangled_0 && !sum)
		sum = 0xffff; /* CSUM_MANGLED_0 */
	memcpy(p, &sum, sizeof(sum));
	return 0;
}

/* ---- skb data ----------------------------------------------------------------- */

static uint64_t h_skb_store_bytes(uint64_t r1, uint64_t offset, uint64_t from, uint64_t len,
				  uint64_t flags)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	uint8_t *p;

	if (flags & ~(uint64_t)(BPF_F_RECOMPUTE_CSUM | BPF_F_INVALIDATE_HASH))
		return (uint64_t)-EINVAL;
	p = skb_ptr(ctx, offset, len);
	if (!p)
		return (uint64_t)-EFAULT;
	memmove(p, (const void *)(uintptr_t)from, len);
	if (flags & BPF_F_INVALIDATE_HASH)
		ctx->md.skb.hash = 0;
	return 0;
}

static uint64_t h_skb_load_bytes(uint64_t r1, uint64_t offset, uint64_t to, uint64_t len, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	uint8_t *p = skb_ptr(ctx, offset, len);

	if (!p) {
		memset((void *)(uintptr_t)to, 0, len);
		return (uint64_t)-EFAULT;
	}
	memcpy((void *)(uintptr_t)to, p, len);
	return 0;
}

/* bpf_skb_pull_data: test_run skbs are linear; only a length past the end fails. */
static uint64_t h_skb_pull_data(uint64_t r1, uint64_t len, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);

	return (uint32_t)len > ctx->md.skb.len ? (uint64_t)-ENOMEM : 0;
}

#define ADJ_FIXED_GSO (1ull << 0)
#define ADJ_ENCAP_L3_IPV4 (1ull << 1)
#define ADJ_ENCAP_L3_IPV6 (1ull << 2)
#define ADJ_ENCAP_L4_GRE (1ull << 3)
#define ADJ_ENCAP_L4_UDP (1ull << 4)
#define ADJ_NO_CSUM_RESET (1ull << 5)
#define ADJ_ENCAP_L2_ETH (1ull << 6)
#define ADJ_DECAP_L3_IPV4 (1ull << 7)
#define ADJ_DECAP_L3_IPV6 (1ull << 8)
#define ADJ_ENCAP_L2_MASK (0xffull << 56)
#define ADJ_ENCAP_L3_MASK (ADJ_ENCAP_L3_IPV4 | ADJ_ENCAP_L3_IPV6)
#define ADJ_DECAP_L3_MASK (ADJ_DECAP_L3_IPV4 | ADJ_DECAP_L3_IPV6)
#define ADJ_MASK                                                                                    \
	(ADJ_FIXED_GSO | ADJ_ENCAP_L3_MASK | ADJ_ENCAP_L4_GRE | ADJ_ENCAP_L4_UDP | ADJ_ENCAP_L2_ETH | \
	 ADJ_ENCAP_L2_MASK | ADJ_DECAP_L3_MASK)
#define PROTO_IP 0x0008	  /* htons(ETH_P_IP) as __sk_buff.protocol holds it */
#define PROTO_IPV6 0xdd86 /* htons(ETH_P_IPV6) */
#define SKB_MAX_LEN 0xffff

/*
 * bpf_skb_adjust_room(skb, len_diff, mode, flags) for tc programs on
 * test_run skbs (linear, not GSO, not encapsulated, the network header
 * ETH_HLEN after the MAC header): room is made or removed at the MAC
 * header's end (BPF_ADJ_ROOM_MAC) or after the base network header
 * (BPF_ADJ_ROOM_NET), the bytes in front are moved, new room is zeroed.
 */
static uint64_t h_skb_adjust_room(uint64_t r1, uint64_t diff_arg, uint64_t mode, uint64_t flags,
				  uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	struct __sk_buff *s = &ctx->md.skb;
	int32_t len_diff = (int32_t)diff_arg;
	uint32_t abs_diff = len_diff < 0 ? 0u - (uint32_t)len_diff : (uint32_t)len_diff;
	bool shrink = len_diff < 0;
	uint32_t base, len_min, len_cur, off;
	uint8_t *data = xbpf_u32_ptr(s->data);

	if (flags & ~(ADJ_MASK | ADJ_NO_CSUM_RESET))
		return (uint64_t)-EINVAL;
	if (abs_diff > 0xfff)
		return (uint64_t)-EFAULT;
	if (s->protocol != PROTO_IP && s->protocol != PROTO_IPV6)
		return (uint64_t)-ENOTSUPP_KERNEL;
	base = s->protocol == PROTO_IP ? 20 : 40;
	len_min = base;
	off = XBPF_ETH_HLEN;
	switch ((uint32_t)mode) {
	case BPF_ADJ_ROOM_NET:
		off += base;
		break;
	case BPF_ADJ_ROOM_MAC:
		break;
	default:
		return (uint64_t)-ENOTSUPP_KERNEL;
	}
	if (flags & ADJ_DECAP_L3_MASK) {
		if (!shrink)
			return (uint64_t)-EINVAL;
		switch (flags & ADJ_DECAP_L3_MASK) {
		case ADJ_DECAP_L3_IPV4:
			len_min = 20;
			break;
		case ADJ_DECAP_L3_IPV6:
			len_min = 40;
			break;
		default:
			return (uint64_t)-EINVAL;
		}
	}
	len_cur = s->len - XBPF_ETH_HLEN;
	if ((shrink && (abs_diff >= len_cur || len_cur - abs_diff < len_min)) ||
	    (!shrink && s->len + abs_diff > SKB_MAX_LEN))
		return (uint64_t)-ENOTSUPP_KERNEL;

	if (shrink) {
		if (flags & ~(ADJ_FIXED_GSO | ADJ_DECAP_L3_MASK | ADJ_NO_CSUM_RESET))
			return (uint64_t)-EINVAL;
		if (off + abs_diff > s->len)
			return (uint64_t)-ENOMEM;
		memmove(data + abs_diff, data, off);
		data += abs_diff;
		if (s->protocol == PROTO_IP && (flags & ADJ_DECAP_L3_IPV6))
			s->protocol = PROTO_IPV6;
		else if (s->protocol == PROTO_IPV6 && (flags & ADJ_DECAP_L3_IPV4))
			s->protocol = PROTO_IP;
		s->len -= abs_diff;
	} else {
		uint32_t inner_mac_len = (uint32_t)(flags >> 56);

		if (flags & ADJ_ENCAP_L3_MASK) {
			if ((flags & ADJ_ENCAP_L3_MASK) == ADJ_ENCAP_L3_MASK ||
			    ((flags & ADJ_ENCAP_L4_GRE) && (flags & ADJ_ENCAP_L4_UDP)) ||
			    ((flags & ADJ_ENCAP_L2_ETH) && inner_mac_len != XBPF_ETH_HLEN) ||
			    inner_mac_len > abs_diff)
				return (uint64_t)-EINVAL;
		}
		if (off > s->len)
			return (uint64_t)-ENOMEM;
		if (data - abs_diff < ctx->frame) {
			/* no headroom left: move the packet back, if the frame holds it */
			uint32_t shift = (uint32_t)(ctx->frame + abs_diff - data);

			if (data + s->len + shift > ctx->frame + XBPF_FRAME_SLOT)
				return (uint64_t)-ENOMEM;
			memmove(data + shift, data, s->len);
			data += shift;
		}
		data -= abs_diff;
		memmove(data, data + abs_diff, off);
		memset(data + off, 0, abs_diff);
		if (flags & ADJ_ENCAP_L3_MASK) {
			if (s->protocol == PROTO_IP && (flags & ADJ_ENCAP_L3_IPV6))
				s->protocol = PROTO_IPV6;
			else if (s->protocol == PROTO_IPV6 && (flags & ADJ_ENCAP_L3_IPV4))
				s->protocol = PROTO_IP;
		}
		s->len += abs_diff;
	}
	s->data = xbpf_ptr_u32(data);
	s->data_meta = s->data;
	s->data_end = xbpf_ptr_u32(data + s->len);
	return 0;
}

/* bpf_get_hash_recalc: the flow hash; ours is a hash of the packet's bytes up to L4 ports. */
static uint64_t h_get_hash_recalc(uint64_t r1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	const uint8_t *p = xbpf_u32_ptr(ctx->md.skb.data);
	uint32_t len = ctx->md.skb.len, h = 0x811c9dc5, i;

	if (ctx->md.skb.hash)
		return ctx->md.skb.hash;
	for (i = 0; i < len && i < 64; i++)
		h = (h ^ p[i]) * 0x01000193;
	ctx->md.skb.hash = h ? h : 1;
	return ctx->md.skb.hash;
}

/* ---- redirect ---------------------------------------------------------------- */

/*
 * bpf_spin_lock()/unlock(): the struct bpf_spin_lock word of a map value is
 * a real lock, the one the runtime's writers use (the owner's pid: a map
 * shared between processes survives one killed holding it).
 */
static uint64_t h_spin_lock(uint64_t lock, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	xbpf_spin_lock((xbpf_spinlock_t *)(uintptr_t)lock);
	return 0;
}

static uint64_t h_spin_unlock(uint64_t lock, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	xbpf_spin_unlock((xbpf_spinlock_t *)(uintptr_t)lock);
	return 0;
}

static uint64_t h_redirect(uint64_t ifindex, uint64_t flags, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_thread_state *ts = __xbpf_thread();

	if (ts->prog_type == XBPF_PROG_XDP) {
		if (flags)
			return XDP_ABORTED;
		ts->redirect = (struct xbpf_redirect){ .ifindex = (uint32_t)ifindex };
		return XDP_REDIRECT;
	}
	if (flags & ~(uint64_t)BPF_F_INGRESS)
		return TC_ACT_SHOT;
	ts->redirect = (struct xbpf_redirect){ .ifindex = (uint32_t)ifindex, .flags = flags };
	return TC_ACT_REDIRECT;
}

static uint64_t h_redirect_map(uint64_t map_p, uint64_t key, uint64_t flags, uint64_t a4, uint64_t a5)
{
	struct xbpf_map *map = (struct xbpf_map *)(uintptr_t)map_p;
	struct xbpf_thread_state *ts = __xbpf_thread();
	uint64_t action = flags & 3; /* returned when the lookup fails */
	uint32_t k = (uint32_t)key, *val;

	/* BPF_F_BROADCAST / EXCLUDE_INGRESS need real devices: not supported */
	if (flags & ~(uint64_t)3)
		return XDP_ABORTED;
	if (!map || map->spec.type != XBPF_MAP_DEVMAP)
		return action;
	val = xbpf_map__lookup_elem(map, &k);
	if (!val)
		return action;
	ts->redirect = (struct xbpf_redirect){ .ifindex = *val, .flags = flags, .map = map };
	return XDP_REDIRECT;
}

/* ---- XDP frame ----------------------------------------------------------------- */

static uint64_t h_xdp_adjust_head(uint64_t r1, uint64_t delta, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	struct xdp_md *md = &ctx->md.xdp;
	int64_t off = (int32_t)delta;
	uint8_t *meta = xbpf_u32_ptr(md->data_meta), *data = xbpf_u32_ptr(md->data);
	uint8_t *end = xbpf_u32_ptr(md->data_end);
	uintptr_t metalen = ctx->meta_valid ? (uintptr_t)(data - meta) : 0;
	uint8_t *start = ctx->frame + XBPF_XDP_FRAME_SIZE + metalen;

	if ((intptr_t)(uintptr_t)data + off < (intptr_t)(uintptr_t)start ||
	    (intptr_t)(uintptr_t)data + off > (intptr_t)(uintptr_t)end - XBPF_ETH_HLEN)
		return (uint64_t)-EINVAL;
	if (metalen)
		memmove(meta + off, meta, metalen);
	md->data_meta = xbpf_ptr_u32(meta + off);
	md->data = xbpf_ptr_u32(data + off);
	if (meta + off < ctx->dirty_lo)
		ctx->dirty_lo = meta + off; /* reset clears down to here */
	if (data + off < ctx->dirty_lo)
		ctx->dirty_lo = data + off;
	return 0;
}

static uint64_t h_xdp_adjust_meta(uint64_t r1, uint64_t delta, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	struct xdp_md *md = &ctx->md.xdp;
	int64_t off = (int32_t)delta;
	intptr_t meta = (intptr_t)(uintptr_t)md->data_meta + off;
	intptr_t data = (intptr_t)(uintptr_t)md->data;
	intptr_t metalen = data - meta;

	if (!ctx->meta_valid)
		return (uint64_t)-ENOTSUPP_KERNEL;
	if (meta < (intptr_t)(uintptr_t)(ctx->frame + XBPF_XDP_FRAME_SIZE) || meta > data)
		return (uint64_t)-EINVAL;
	/* skb_shared_info.meta_len is a u8: 4-byte multiples up to 252 */
	if ((metalen & 3) || metalen > 255)
		return (uint64_t)-EACCES;
	md->data_meta = (uint32_t)meta;
	if ((uint8_t *)(uintptr_t)meta < ctx->dirty_lo)
		ctx->dirty_lo = (uint8_t *)(uintptr_t)meta; /* reset clears down to here */
	return 0;
}

static uint64_t h_xdp_adjust_tail(uint64_t r1, uint64_t delta, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	struct xdp_md *md = &ctx->md.xdp;
	int64_t off = (int32_t)delta;
	intptr_t end = (intptr_t)(uintptr_t)md->data_end + off;

	if (end > (intptr_t)(uintptr_t)(ctx->frame + ctx->frame_size))
		return (uint64_t)-EINVAL;
	if (end < (intptr_t)(uintptr_t)md->data + XBPF_ETH_HLEN)
		return (uint64_t)-EINVAL;
	if (off > 0)
		memset(xbpf_u32_ptr(md->data_end), 0, (size_t)off);
	md->data_end = (uint32_t)end;
	if ((uint8_t *)xbpf_u32_ptr(md->data_end) > ctx->dirty_hi)
		ctx->dirty_hi = xbpf_u32_ptr(md->data_end); /* reset clears up to here */
	return 0;
}

/* ---- perf_event_output ---------------------------------------------------------- */

/*
 * bpf_perf_event_output(ctx, map, flags, data, size): without perf buffers
 * we take a ring buffer map as the sink, which the control thread drains
 * with xbpf_map__ringbuf_consume().  Other maps: -EINVAL.
 */
static uint64_t h_perf_event_output(uint64_t r1, uint64_t map_p, uint64_t flags, uint64_t data,
				    uint64_t size)
{
	struct xbpf_map *map = (struct xbpf_map *)(uintptr_t)map_p;
	uint64_t index = flags & 0xffffffffull;

	if (!map || map->spec.type != XBPF_MAP_RINGBUF)
		return (uint64_t)-EINVAL;
	if ((flags & ~(0xffffffffull | (0xfffffull << 32))) ||
	    (index != 0xffffffffull && index != (uint64_t)xbpf_get_cpu()))
		return (uint64_t)-EINVAL;
	if (flags >> 32)
		return (uint64_t)-EOPNOTSUPP; /* packet payload appending (BPF_F_CTXLEN_MASK) */
	return (uint64_t)(int64_t)__xbpf_ringbuf_output(map, (const void *)(uintptr_t)data, size, 0);
}

/* ---- tunnel metadata (net/core/filter.c) ---------------------------------------- */

/* struct bpf_tunnel_key: its size and the offsets of the deprecated shorter layouts */
#define TKEY_SIZE 44
#define TKEY_OFF_REMOTE 4
#define TKEY_OFF_REMOTE_IPV6_1 8
#define TKEY_OFF_TOS 20
#define TKEY_OFF_TTL 21
#define TKEY_OFF_EXT 22
#define TKEY_OFF_LABEL 24
#define TKEY_OFF_LOCAL 28
#define TUNINFO_IPV6 (1ull << 0)
#define TUNINFO_FLAGS (1ull << 4) /* bpf_skb_get_tunnel_key */
#define TUN_ZERO_CSUM_TX (1ull << 1)
#define TUN_DONT_FRAGMENT (1ull << 2)
#define TUN_SEQ_NUMBER (1ull << 3)
#define TUN_NO_TUNNEL_KEY (1ull << 4)
#define TUN_CSUM_BIT 0
#define TUN_KEY_BIT 2
#define TUN_SEQ_BIT 3
#define TUN_DONT_FRAGMENT_BIT 8
#define TUN_NOCACHE_BIT 13

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void st32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/*
 * bpf_skb_set_tunnel_key(skb, key, size, flags): checks the flags and the
 * layout, then records the TX tunnel info the kernel would attach to the
 * skb's metadata dst.  Shorter deprecated layouts are zero-extended.
 */
static uint64_t h_skb_set_tunnel_key(uint64_t r1, uint64_t from_p, uint64_t size, uint64_t flags,
				     uint64_t a5)
{
	struct xbpf_tunnel_info *t = &__xbpf_thread()->tunnel;
	uint8_t key[TKEY_SIZE] = { 0 };
	uint16_t ext;
	int i;

	if (flags & ~(TUNINFO_IPV6 | TUN_ZERO_CSUM_TX | TUN_DONT_FRAGMENT | TUN_SEQ_NUMBER |
		      TUN_NO_TUNNEL_KEY))
		return (uint64_t)-EINVAL;
	switch ((uint32_t)size) {
	case TKEY_SIZE:
	case TKEY_OFF_LOCAL:
	case TKEY_OFF_LABEL:
	case TKEY_OFF_EXT:
	case TKEY_OFF_REMOTE_IPV6_1:
		memcpy(key, (const void *)(uintptr_t)from_p, (uint32_t)size);
		break;
	default:
		return (uint64_t)-EINVAL;
	}
	memcpy(&ext, key + TKEY_OFF_EXT, sizeof(ext));
	if ((!(flags & TUNINFO_IPV6) && ld32(key + TKEY_OFF_LABEL)) || ext)
		return (uint64_t)-EINVAL;

	memset(t, 0, sizeof(*t));
	t->set = true;
	t->ipv6 = flags & TUNINFO_IPV6;
	t->flags = 1u << TUN_NOCACHE_BIT;
	if (flags & TUN_DONT_FRAGMENT)
		t->flags |= 1u << TUN_DONT_FRAGMENT_BIT;
	if (!(flags & TUN_ZERO_CSUM_TX))
		t->flags |= 1u << TUN_CSUM_BIT;
	if (flags & TUN_SEQ_NUMBER)
		t->flags |= 1u << TUN_SEQ_BIT;
	if (!(flags & TUN_NO_TUNNEL_KEY))
		t->flags |= 1u << TUN_KEY_BIT;
	t->id = ld32(key);
	t->tos = key[TKEY_OFF_TOS];
	t->ttl = key[TKEY_OFF_TTL];
	if (t->ipv6) {
		for (i = 0; i < 4; i++) {
			t->dst[i] = ld32(key + TKEY_OFF_REMOTE + 4 * i);
			t->src[i] = ld32(key + TKEY_OFF_LOCAL + 4 * i);
		}
		t->label = ld32(key + TKEY_OFF_LABEL) & 0xfffff; /* IPV6_FLOWLABEL_MASK */
	} else {
		t->dst[0] = ld32(key + TKEY_OFF_REMOTE);
		t->src[0] = ld32(key + TKEY_OFF_LOCAL);
	}
	return 0;
}

/*
 * bpf_skb_get_tunnel_key(skb, key, size, flags): reads the tunnel info back
 * as a receiver sees it (remote = the info's source).  A test_run skb has
 * none unless the program set one: -EINVAL, and the buffer is cleared on
 * every error.
 */
static uint64_t h_skb_get_tunnel_key(uint64_t r1, uint64_t to_p, uint64_t size, uint64_t flags,
				     uint64_t a5)
{
	const struct xbpf_tunnel_info *t = &__xbpf_thread()->tunnel;
	uint8_t *to = (uint8_t *)(uintptr_t)to_p, key[TKEY_SIZE] = { 0 };
	uint16_t tun_flags;
	int64_t err = -EINVAL;
	int i;

	if (!t->set || (flags & ~(TUNINFO_IPV6 | TUNINFO_FLAGS)))
		goto clear;
	if (t->ipv6 != !!(flags & TUNINFO_IPV6)) {
		err = -EPROTO;
		goto clear;
	}
	switch ((uint32_t)size) {
	case TKEY_SIZE:
	case TKEY_OFF_LOCAL:
	case TKEY_OFF_LABEL:
	case TKEY_OFF_EXT:
		break;
	case TKEY_OFF_REMOTE_IPV6_1:
		if (t->ipv6)
			goto clear;
		break;
	default:
		goto clear;
	}
	st32(key, t->id);
	key[TKEY_OFF_TOS] = t->tos;
	key[TKEY_OFF_TTL] = t->ttl;
	if (flags & TUNINFO_FLAGS) {
		tun_flags = (uint16_t)((t->flags >> 8) | (t->flags << 8)); /* cpu_to_be16 */
		memcpy(key + TKEY_OFF_EXT, &tun_flags, sizeof(tun_flags));
	}
	if (t->ipv6) {
		for (i = 0; i < 4; i++) {
			st32(key + TKEY_OFF_REMOTE + 4 * i, t->src[i]);
			st32(key + TKEY_OFF_LOCAL + 4 * i, t->dst[i]);
		}
		st32(key + TKEY_OFF_LABEL, t->label);
	} else {
		st32(key + TKEY_OFF_REMOTE, t->src[0]);
		st32(key + TKEY_OFF_LOCAL, t->dst[0]);
	}
	memcpy(to, key, (uint32_t)size);
	return 0;
clear:
	memset(to, 0, (uint32_t)size);
	return (uint64_t)err;
}

/* ---- the table -------------------------------------------------------------------- */

static const xbpf_helper_fn impls[] = {
	[BPF_FUNC_map_lookup_elem] = h_map_lookup_elem,
	[BPF_FUNC_map_update_elem] = h_map_update_elem,
	[BPF_FUNC_map_delete_elem] = h_map_delete_elem,
	[BPF_FUNC_spin_lock] = h_spin_lock,
	[BPF_FUNC_spin_unlock] = h_spin_unlock,
	[BPF_FUNC_ktime_get_ns] = h_ktime_get_ns,
	[BPF_FUNC_trace_printk] = h_trace_printk,
	[BPF_FUNC_get_prandom_u32] = h_get_prandom_u32,
	[BPF_FUNC_get_smp_processor_id] = h_get_smp_processor_id,
	[BPF_FUNC_skb_store_bytes] = h_skb_store_bytes,
	[BPF_FUNC_l3_csum_replace] = h_l3_csum_replace,
	[BPF_FUNC_l4_csum_replace] = h_l4_csum_replace,
	[BPF_FUNC_skb_get_tunnel_key] = h_skb_get_tunnel_key,
	[BPF_FUNC_skb_set_tunnel_key] = h_skb_set_tunnel_key,
	[BPF_FUNC_redirect] = h_redirect,
	[BPF_FUNC_perf_event_output] = h_perf_event_output,
	[BPF_FUNC_skb_load_bytes] = h_skb_load_bytes,
	[BPF_FUNC_csum_diff] = h_csum_diff,
	[BPF_FUNC_get_hash_recalc] = h_get_hash_recalc,
	[BPF_FUNC_skb_pull_data] = h_skb_pull_data,
	[BPF_FUNC_xdp_adjust_head] = h_xdp_adjust_head,
	[BPF_FUNC_skb_adjust_room] = h_skb_adjust_room,
	[BPF_FUNC_redirect_map] = h_redirect_map,
	[BPF_FUNC_xdp_adjust_meta] = h_xdp_adjust_meta,
	[BPF_FUNC_xdp_adjust_tail] = h_xdp_adjust_tail,
	[BPF_FUNC_ktime_get_boot_ns] = h_ktime_get_boot_ns,
	[BPF_FUNC_ringbuf_output] = h_ringbuf_output,
	[BPF_FUNC_ringbuf_reserve] = h_ringbuf_reserve,
	[BPF_FUNC_loop] = h_loop,
	[BPF_FUNC_for_each_map_elem] = h_for_each_map_elem,
	[BPF_FUNC_ringbuf_submit] = h_ringbuf_submit,
	[BPF_FUNC_ringbuf_discard] = h_ringbuf_discard,
	[BPF_FUNC_ringbuf_query] = h_ringbuf_query,
	/* helpers_net.c */
	[BPF_FUNC_xdp_get_buff_len] = __xbpf_h_xdp_get_buff_len,
	[BPF_FUNC_xdp_load_bytes] = __xbpf_h_xdp_load_bytes,
	[BPF_FUNC_xdp_store_bytes] = __xbpf_h_xdp_store_bytes,
	[BPF_FUNC_check_mtu] = __xbpf_h_check_mtu,
	[BPF_FUNC_skb_vlan_push] = __xbpf_h_skb_vlan_push,
	[BPF_FUNC_skb_vlan_pop] = __xbpf_h_skb_vlan_pop,
	[BPF_FUNC_ktime_get_coarse_ns] = __xbpf_h_ktime_get_coarse_ns,
	[BPF_FUNC_ktime_get_tai_ns] = __xbpf_h_ktime_get_tai_ns,
	[BPF_FUNC_get_numa_node_id] = __xbpf_h_get_numa_node_id,
};

xbpf_helper_fn xbpf_helper_impl(int32_t id)
{
	if (id < 0 || (size_t)id >= sizeof(impls) / sizeof(impls[0]))
		return NULL;
	return impls[id];
}
