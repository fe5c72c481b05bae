// SPDX-License-Identifier: MIT
/*
 * ctx.c - program contexts with BPF_PROG_TEST_RUN semantics, over frames in
 * an arena below 4 GiB.
 *
 * The UAPI contexts (struct xdp_md, struct __sk_buff) carry packet pointers
 * in 32-bit fields.  The kernel rewrites those loads into 64-bit ones; we
 * run the program image unchanged, so the frames must live at addresses
 * that fit in 32 bits.  x86-64 has MAP_32BIT; elsewhere (arm64, also under
 * qemu-user) we probe low hint addresses with MAP_FIXED_NOREPLACE.
 *
 * What the kernel's test_run does and we mirror (net/bpf/test_run.c):
 * - XDP: 256 bytes headroom, a PAGE_SIZE frame whose last
 *   SKB_DATA_ALIGN(sizeof(skb_shared_info)) bytes are not data, metadata
 *   given as the first ctx_in->data bytes of data_in, output from data_meta;
 * - skb: eth_type_trans() sets protocol and pkt_type and pulls the
 *   Ethernet header; tc programs see it pushed back, socket filters do not
 *   (and get it zeroed in data_out); only mark, priority, ingress_ifindex,
 *   ifindex, cb, tstamp, wire_len, gso_segs, gso_size, hwtstamp may be set
 *   in ctx_in;
 * - data_out: copy what fits, report the full size, fail with -ENOSPC.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "core_impl.h"

/* ---- thread state --------------------------------------------------------- */

static __thread struct xbpf_thread_state thread_state;

struct xbpf_thread_state *__xbpf_thread(void)
{
	return &thread_state;
}

void xbpf_set_cpu(int cpu)
{
	thread_state.cpu = cpu < 0 ? 0 : cpu;
}

int xbpf_get_cpu(void)
{
	return thread_state.cpu;
}

void xbpf_last_redirect(struct xbpf_redirect *ret_redirect)
{
	if (ret_redirect)
		*ret_redirect = thread_state.redirect;
}

/* ---- low arena -------------------------------------------------------------- */

#define ARENA_CHUNK (2u << 20)
#define ARENA_MAX_CHUNKS 512 /* 1 GiB of frames */

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static void *arena_free_head;
static unsigned int arena_chunks;
static uintptr_t arena_hint = 0x10000000; /* above the usual program text */

static void *low_mmap(size_t size)
{
	void *p;

#if defined(__x86_64__)
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (p != MAP_FAILED)
		return p;
#endif
	/* probe hints below 4 GiB; keep only what the kernel really put there */
	while (arena_hint + size <= (1ull << 32)) {
		uintptr_t hint = arena_hint;

		arena_hint += size;
		p = mmap((void *)hint, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if ((uintptr_t)p + size <= (1ull << 32))
			return p;
		/* old kernels ignore FIXED_NOREPLACE and treat it as a hint */
		munmap(p, size);
	}
	return NULL;
}

void *__xbpf_frame_alloc(void)
{
	void *frame;

	pthread_mutex_lock(&arena_lock);
	if (!arena_free_head && arena_chunks < ARENA_MAX_CHUNKS) {
		uint8_t *chunk = low_mmap(ARENA_CHUNK);
		size_t i, n = ARENA_CHUNK / XBPF_FRAME_SLOT;

		if (chunk) {
			arena_chunks++;
			for (i = n; i-- > 0;) {
				void **slot = (void **)(chunk + i * XBPF_FRAME_SLOT);

				*slot = arena_free_head;
				arena_free_head = slot;
			}
		}
	}
	frame = arena_free_head;
	if (frame)
		arena_free_head = *(void **)frame;
	pthread_mutex_unlock(&arena_lock);
	return frame;
}

void __xbpf_frame_free(void *frame)
{
	if (!frame)
		return;
	pthread_mutex_lock(&arena_lock);
	*(void **)frame = arena_free_head;
	arena_free_head = frame;
	pthread_mutex_unlock(&arena_lock);
}

/* ---- run contexts ------------------------------------------------------------- */

#define XDP_MAX_DATA (XBPF_PAGE_SIZE - XBPF_FRAME_HEADROOM - XBPF_SKB_SHINFO_SIZE)
#define SKB_MAX_DATA (XBPF_PAGE_SIZE - XBPF_SKB_HEADROOM - XBPF_SKB_SHINFO_SIZE)
#define GSO_LEGACY_MAX_SIZE 65536
#define GSO_MAX_SEGS 65535

static bool range_is_zero(const void *buf, size_t from, size_t to)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = from; i < to; i++)
		if (p[i])
			return false;
	return true;
}

/* Copy a user ctx image: bytes past what we know must be zero (E2BIG). */
static int ctx_image_in(const struct xbpf_test_run_opts *opts, void *img, size_t max)
{
	size_t n;

	memset(img, 0, max);
	if (!opts->ctx_in)
		return 0;
	if (opts->ctx_size_in > max && !range_is_zero(opts->ctx_in, max, opts->ctx_size_in))
		return -E2BIG;
	n = opts->ctx_size_in < max ? opts->ctx_size_in : max;
	memcpy(img, opts->ctx_in, n);
	return 0;
}

#define SKB_OFFEND(f) offsetofend(struct __sk_buff, f)
#define SKB_OFF(f) offsetof(struct __sk_buff, f)

/* The kernel's convert___skb_to_skb() checks: only some fields may be set. */
static int check_skb_ctx_in(const struct __sk_buff *s)
{
	if (!range_is_zero(s, 0, SKB_OFF(mark)) ||
	    !range_is_zero(s, SKB_OFFEND(mark), SKB_OFF(priority)) ||
	    !range_is_zero(s, SKB_OFFEND(ifindex), SKB_OFF(cb)) ||
	    !range_is_zero(s, SKB_OFFEND(cb), SKB_OFF(tstamp)) ||
	    !range_is_zero(s, SKB_OFFEND(gso_segs), SKB_OFF(gso_size)) ||
	    !range_is_zero(s, SKB_OFFEND(gso_size), SKB_OFF(hwtstamp)) ||
	    !range_is_zero(s, SKB_OFFEND(hwtstamp), sizeof(*s)))
		return -EINVAL;
	if (s->gso_segs > GSO_MAX_SEGS)
		return -EINVAL;
	return 0;
}

static int run_ctx_check(struct xbpf_run_ctx *ctx, const struct xbpf_test_run_opts *opts)
{
	int err;

	/*
	 * The kernel refuses flags for XDP and skb runs; `cpu` is ours: the
	 * engines run on the CPU it names (per-CPU maps), no flag needed.
	 */
	if (opts->flags || opts->cpu >= XBPF_MAX_CPUS)
		return -EINVAL;
	if (opts->data_size_in && !opts->data_in)
		return -EINVAL;
	switch (ctx->type) {
	case XBPF_PROG_XDP: {
		struct xdp_md *md = &ctx->md_in.xdp;

		err = ctx_image_in(opts, md, sizeof(*md));
		if (err)
			return err;
		ctx->has_ctx_in = opts->ctx_in || opts->ctx_out;
		if (ctx->has_ctx_in) {
			/* metadata comes first in data_in; nothing before it */
			if (md->data_meta || md->data_end != opts->data_size_in || md->data > md->data_end ||
			    (md->data & 3) || md->data > 255)
				return -EINVAL;
			if (md->egress_ifindex || (!md->ingress_ifindex && md->rx_queue_index))
				return -EINVAL;
		}
		ctx->meta_len_in = ctx->has_ctx_in ? md->data : 0;
		if (opts->data_size_in - ctx->meta_len_in < XBPF_ETH_HLEN ||
		    opts->data_size_in - ctx->meta_len_in > XDP_MAX_DATA)
			return -EINVAL; /* no multi-buffer frames */
		ctx->ctx_size = sizeof(struct xdp_md);
		return 0;
	}
	case XBPF_PROG_SCHED_CLS:
	case XBPF_PROG_SCHED_ACT:
	case XBPF_PROG_SOCKET_FILTER: {
		struct __sk_buff *s = &ctx->md_in.skb;
		uint32_t len;

		if (opts->data_size_in < XBPF_ETH_HLEN || opts->data_size_in > SKB_MAX_DATA)
			return -EINVAL;
		{
			/* test_run wants a whole base IPv4/IPv6 header behind those ethertypes */
			const uint8_t *eth = opts->data_in;
			uint16_t proto = (uint16_t)(eth[12] << 8 | eth[13]);

			if ((proto == 0x0800 && opts->data_size_in < XBPF_ETH_HLEN + 20) ||
			    (proto == 0x86dd && opts->data_size_in < XBPF_ETH_HLEN + 40))
				return -EINVAL;
		}
		err = ctx_image_in(opts, s, sizeof(*s));
		if (err)
			return err;
		ctx->has_ctx_in = opts->ctx_in || opts->ctx_out;
		err = check_skb_ctx_in(s);
		if (err)
			return err;
		len = opts->data_size_in - (ctx->type == XBPF_PROG_SOCKET_FILTER ? XBPF_ETH_HLEN : 0);
		if (s->wire_len && (s->wire_len < len || s->wire_len > GSO_LEGACY_MAX_SIZE))
			return -EINVAL;
		ctx->ctx_size = sizeof(struct __sk_buff);
		return 0;
	}
	case XBPF_PROG_RAW_MEM:
		if (opts->ctx_in || opts->ctx_out)
			return -EINVAL;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

int xbpf_run_ctx__new(enum xbpf_prog_type type, const struct xbpf_test_run_opts *opts,
		      struct xbpf_run_ctx **ret_ctx)
{
	struct xbpf_run_ctx *ctx;
	int err;

	if (!ret_ctx || !opts || !OPTS_VALID(opts, xbpf_test_run_opts))
		return xbpf_err(-EINVAL);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return xbpf_err(-ENOMEM);
	ctx->type = type;
	err = run_ctx_check(ctx, opts);
	if (err)
		goto err_free;
	ctx->data_size_in = opts->data_size_in;
	if (opts->data_size_in) {
		ctx->data_in = malloc(opts->data_size_in);
		if (!ctx->data_in) {
			err = -ENOMEM;
			goto err_free;
		}
		memcpy(ctx->data_in, opts->data_in, opts->data_size_in);
	}
	if (type == XBPF_PROG_RAW_MEM) {
		if (opts->data_size_in) {
			ctx->raw = malloc(opts->data_size_in);
			if (!ctx->raw) {
				err = -ENOMEM;
				goto err_free;
			}
		}
	} else {
		ctx->frame = __xbpf_frame_alloc();
		if (!ctx->frame) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	err = xbpf_run_ctx__reset(ctx);
	if (err)
		goto err_free;
	*ret_ctx = ctx;
	return 0;
err_free:
	xbpf_run_ctx__free(ctx);
	return xbpf_err(err);
}

int xbpf_run_ctx__new_xdp_buf(struct xbpf_run_ctx **ret_ctx)
{
	struct xbpf_run_ctx *ctx;

	if (!ret_ctx)
		return xbpf_err(-EINVAL);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return xbpf_err(-ENOMEM);
	ctx->type = XBPF_PROG_XDP;
	ctx->external = true;
	*ret_ctx = ctx;
	return 0;
}

int xbpf_run_ctx__set_xdp_buf(struct xbpf_run_ctx *ctx, void *hard_start, uint32_t frame_size,
			      uint32_t data_off, uint32_t len, uint32_t ingress_ifindex,
			      uint32_t rx_queue_index)
{
	struct xbpf_thread_state *ts = __xbpf_thread();
	uint8_t *start = hard_start, *data = start + data_off;
	struct xdp_md *md = &ctx->md.xdp;

	if ((uint64_t)(uintptr_t)start + frame_size > (1ull << 32))
		return -ERANGE;
	/* no driver hands XDP a frame shorter than an Ethernet header, nor does test_run */
	if (data_off < XBPF_XDP_FRAME_SIZE || len < XBPF_ETH_HLEN || (uint64_t)data_off + len > frame_size)
		return -EINVAL;
	ctx->frame = start;
	ctx->frame_size = frame_size;
	ctx->meta_valid = true;
	md->data = md->data_meta = xbpf_ptr_u32(data);
	md->data_end = xbpf_ptr_u32(data + len);
	md->ingress_ifindex = ingress_ifindex;
	md->rx_queue_index = rx_queue_index;
	md->egress_ifindex = 0;
	ts->prog_type = XBPF_PROG_XDP;
	ts->redirect.ifindex = 0;
	ts->redirect.map = NULL;
	return 0;
}

void xbpf_run_ctx__xdp_buf(const struct xbpf_run_ctx *ctx, uint32_t *ret_data_off, uint32_t *ret_len)
{
	const struct xdp_md *md = &ctx->md.xdp;

	*ret_data_off = (uint32_t)((uint8_t *)xbpf_u32_ptr(md->data) - ctx->frame);
	*ret_len = md->data_end - md->data;
}

struct xbpf_run_ctx *xbpf_run_ctx__free(struct xbpf_run_ctx *ctx)
{
	if (!ctx)
		return NULL;
	if (!ctx->external)
		__xbpf_frame_free(ctx->frame);
	free(ctx->data_in);
	free(ctx->raw);
	free(ctx);
	return NULL;
}

/* eth_type_trans() on a device whose address is all zeroes (loopback). */
static void skb_eth_type_trans(struct __sk_buff *s, const uint8_t *eth)
{
	static const uint8_t zero[6];
	uint16_t proto = (uint16_t)(eth[12] << 8 | eth[13]);

	if (memcmp(eth, zero, 6)) {
		/* lo's broadcast address is all zeroes too: ff:ff:.. is just multicast */
		if (eth[0] & 1)
			s->pkt_type = 2; /* PACKET_MULTICAST */
		else
			s->pkt_type = 3; /* OTHERHOST */
	}
	if (proto >= 0x0600)
		s->protocol = (uint32_t)eth[12] | (uint32_t)eth[13] << 8; /* __be16 as stored */
	else if (eth[14] == 0xff && eth[15] == 0xff)
		s->protocol = 0x0100; /* htons(ETH_P_802_3) */
	else
		s->protocol = 0x0400; /* htons(ETH_P_802_2) */
}

int xbpf_run_ctx__reset(struct xbpf_run_ctx *ctx)
{
	struct xbpf_thread_state *ts = __xbpf_thread();

	if (!ctx || ctx->external)
		return xbpf_err(-EINVAL);
	memset(&ts->redirect, 0, sizeof(ts->redirect));
	switch (ctx->type) {
	case XBPF_PROG_XDP: {
		struct xdp_md *md = &ctx->md.xdp;
		uint8_t *meta = ctx->frame + XBPF_FRAME_HEADROOM - ctx->meta_len_in;

		uint8_t *end = meta + ctx->data_size_in;
		uint8_t *lo = ctx->dirty_lo, *hi = ctx->dirty_hi;
		uint8_t *cur_lo = xbpf_u32_ptr(md->data_meta), *cur_data = xbpf_u32_ptr(md->data);
		uint8_t *cur_hi = xbpf_u32_ptr(md->data_end);

		/* an unverified program may have moved the bounds itself: trust them only inside the frame */
		if (cur_data < cur_lo)
			cur_lo = cur_data;
		if (hi && cur_lo < lo)
			lo = cur_lo;
		if (hi && cur_hi > hi)
			hi = cur_hi;
		if (hi && lo >= ctx->frame && hi <= ctx->frame + XBPF_FRAME_SLOT) {
			if (lo < meta)
				memset(lo, 0, (size_t)(meta - lo));
			if (hi > end)
				memset(end, 0, (size_t)(hi - end));
		} else {
			memset(ctx->frame, 0, XBPF_FRAME_SLOT);
		}
		memcpy(meta, ctx->data_in, ctx->data_size_in);
		ctx->dirty_lo = meta;
		ctx->dirty_hi = end;
		ctx->md.xdp = ctx->md_in.xdp;
		md->data_meta = xbpf_ptr_u32(meta);
		md->data = xbpf_ptr_u32(ctx->frame + XBPF_FRAME_HEADROOM);
		md->data_end = xbpf_ptr_u32(meta + ctx->data_size_in);
		if (!md->ingress_ifindex)
			md->ingress_ifindex = 1; /* the loopback device test_run uses */
		ctx->frame_size = XBPF_PAGE_SIZE - XBPF_SKB_SHINFO_SIZE;
		ctx->meta_valid = true;
		return 0;
	}
	case XBPF_PROG_SCHED_CLS:
	case XBPF_PROG_SCHED_ACT:
	case XBPF_PROG_SOCKET_FILTER: {
		struct __sk_buff *s = &ctx->md.skb;
		uint8_t *data = ctx->frame + XBPF_FRAME_HEADROOM;

		memset(ctx->frame, 0, XBPF_FRAME_SLOT);
		memcpy(data, ctx->data_in, ctx->data_size_in);
		memset(s, 0, sizeof(*s));
		s->mark = ctx->md_in.skb.mark;
		s->priority = ctx->md_in.skb.priority;
		s->ingress_ifindex = ctx->md_in.skb.ingress_ifindex;
		/* test_run looks ifindex > 1 up; we have no devices, so take it as given */
		s->ifindex = ctx->md_in.skb.ifindex > 1 ? ctx->md_in.skb.ifindex : 1;
		memcpy(s->cb, ctx->md_in.skb.cb, sizeof(s->cb));
		s->tstamp = ctx->md_in.skb.tstamp;
		s->gso_segs = ctx->md_in.skb.gso_segs;
		s->gso_size = ctx->md_in.skb.gso_size;
		s->hwtstamp = ctx->md_in.skb.hwtstamp;
		skb_eth_type_trans(s, data);
		ctx->l2_pulled = 0;
		if (ctx->type == XBPF_PROG_SOCKET_FILTER) {
			data += XBPF_ETH_HLEN;
			ctx->l2_pulled = XBPF_ETH_HLEN;
		}
		s->len = ctx->data_size_in - ctx->l2_pulled;
		s->wire_len = ctx->md_in.skb.wire_len ? ctx->md_in.skb.wire_len : s->len;
		s->data = xbpf_ptr_u32(data);
		s->data_meta = s->data;
		s->data_end = xbpf_ptr_u32(data + s->len);
		ctx->frame_size = XBPF_FRAME_HEADROOM + SKB_MAX_DATA;
		return 0;
	}
	case XBPF_PROG_RAW_MEM:
		if (ctx->data_size_in)
			memcpy(ctx->raw, ctx->data_in, ctx->data_size_in);
		return 0;
	default:
		return xbpf_err(-EOPNOTSUPP);
	}
}

void *xbpf_run_ctx__r1(struct xbpf_run_ctx *ctx)
{
	struct xbpf_thread_state *ts = __xbpf_thread();

	if (!ctx)
		return NULL;
	ts->prog_type = ctx->type;
	memset(&ts->redirect, 0, sizeof(ts->redirect));
	memset(&ts->tunnel, 0, sizeof(ts->tunnel));
	if (ctx->type == XBPF_PROG_RAW_MEM)
		return ctx->raw;
	return ctx;
}

uint64_t xbpf_run_ctx__r2(struct xbpf_run_ctx *ctx)
{
	if (ctx && ctx->type == XBPF_PROG_RAW_MEM)
		return ctx->data_size_in;
	return 0;
}

/* bpf_test_finish(): copy what fits, report the full size. */
static int data_finish(struct xbpf_test_run_opts *opts, const void *data, uint32_t size)
{
	uint32_t copy = size;
	int err = 0;

	if (opts->data_size_out && copy > opts->data_size_out) {
		copy = opts->data_size_out;
		err = -ENOSPC;
	}
	if (opts->data_out && copy)
		memcpy(opts->data_out, data, copy);
	opts->data_size_out = size;
	return err;
}

static int ctx_finish(struct xbpf_test_run_opts *opts, const void *img, uint32_t size)
{
	uint32_t copy = size;
	int err = 0;

	if (!opts->ctx_out)
		return 0;
	if (copy > opts->ctx_size_out) {
		copy = opts->ctx_size_out;
		err = -ENOSPC;
	}
	memcpy(opts->ctx_out, img, copy);
	opts->ctx_size_out = size;
	return err;
}

int xbpf_run_ctx__finish(struct xbpf_run_ctx *ctx, struct xbpf_test_run_opts *opts)
{
	int err;

	if (!ctx || !opts || !OPTS_VALID(opts, xbpf_test_run_opts))
		return xbpf_err(-EINVAL);
	switch (ctx->type) {
	case XBPF_PROG_XDP: {
		struct xdp_md out = ctx->md_in.xdp;
		uint8_t *meta = xbpf_u32_ptr(ctx->md.xdp.data_meta);
		uint8_t *data = xbpf_u32_ptr(ctx->md.xdp.data);
		uint8_t *end = xbpf_u32_ptr(ctx->md.xdp.data_end);
		uint8_t *lo = ctx->frame, *hi = ctx->frame + ctx->frame_size;

		/* a program without a verifier may have scribbled on its ctx */
		if (meta < lo || meta > data || data > end || end > hi)
			return xbpf_err(-EFAULT);
		err = data_finish(opts, meta, (uint32_t)(end - meta));
		if (err)
			return xbpf_err(err);
		out.data = (uint32_t)(data - meta);
		out.data_end = (uint32_t)(end - meta);
		out.data_meta = 0;
		return xbpf_err(ctx_finish(opts, &out, sizeof(out)));
	}
	case XBPF_PROG_SCHED_CLS:
	case XBPF_PROG_SCHED_ACT:
	case XBPF_PROG_SOCKET_FILTER: {
		struct __sk_buff out = ctx->md_in.skb;
		const struct __sk_buff *s = &ctx->md.skb;
		uint8_t *data = (uint8_t *)xbpf_u32_ptr(s->data) - ctx->l2_pulled;
		uint32_t len = s->len + ctx->l2_pulled;

		/* helpers move data and len; a program without a verifier may scribble */
		if (data < ctx->frame || len > XBPF_FRAME_SLOT ||
		    data + len > ctx->frame + XBPF_FRAME_SLOT)
			return xbpf_err(-EFAULT);
		if (ctx->type == XBPF_PROG_SOCKET_FILTER)
			memset(data, 0, XBPF_ETH_HLEN); /* test_run pushes a zeroed header */
		err = data_finish(opts, data, len);
		if (err)
			return xbpf_err(err);
		out.mark = s->mark;
		out.priority = s->priority;
		out.ingress_ifindex = s->ingress_ifindex;
		out.ifindex = s->ifindex;
		out.tstamp = s->tstamp;
		memcpy(out.cb, s->cb, sizeof(out.cb));
		out.wire_len = s->wire_len;
		out.gso_segs = s->gso_segs;
		out.hwtstamp = s->hwtstamp;
		return xbpf_err(ctx_finish(opts, &out, sizeof(out)));
	}
	case XBPF_PROG_RAW_MEM:
		return xbpf_err(data_finish(opts, ctx->raw, ctx->data_size_in));
	default:
		return xbpf_err(-EOPNOTSUPP);
	}
}
