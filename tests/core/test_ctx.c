// SPDX-License-Identifier: MIT
/*
 * test_ctx.c - contexts and packet helpers: BPF_PROG_TEST_RUN semantics,
 * frame bounds of adjust_head/meta/tail, checksum helpers against a
 * from-scratch checksum, map resolution.  Helpers are called the way an
 * engine calls them: fn(r1..r5) with R1 = the context.
 */
#include <linux/bpf.h>

#include "xbpf.h"
#include "testutil.h"

static uint64_t call(int id, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	xbpf_helper_fn fn = xbpf_helper_impl(id);

	if (!fn) {
		fprintf(stderr, "helper %d missing\n", id);
		test_failures++;
		return 0;
	}
	return fn(r1, r2, r3, r4, r5);
}

static void fill_pkt(uint8_t *pkt, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		pkt[i] = (uint8_t)(i * 13 + 1);
	/* dst MAC 02:..., IPv4 ethertype */
	pkt[0] = 0x02;
	pkt[12] = 0x08;
	pkt[13] = 0x00;
}

static void test_xdp_roundtrip(void)
{
	uint8_t pkt[64], out[128];
	struct xbpf_run_ctx *ctx;
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt), .data_out = out,
		  .data_size_out = sizeof(out));
	struct xdp_md *md;

	fill_pkt(pkt, sizeof(pkt));
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), 0);
	md = xbpf_run_ctx__r1(ctx);
	CHECK(md != NULL);
	/* packet addresses fit the 32-bit fields: the frame is below 4 GiB */
	CHECK(md->data_end - md->data == sizeof(pkt));
	CHECK(!memcmp((void *)(uintptr_t)md->data, pkt, sizeof(pkt)));
	CHECK_EQ(md->data_meta, md->data);
	CHECK_EQ(md->ingress_ifindex, 1);
	CHECK_EQ(xbpf_run_ctx__r2(ctx), 0);

	/* head: the floor is hard_start + sizeof(xdp_frame), the ceiling data_end - ETH_HLEN */
	CHECK_EQ((int64_t)call(44, (uintptr_t)md, (uint64_t)-256, 0, 0, 0), -EINVAL);
	CHECK_EQ((int64_t)call(44, (uintptr_t)md, (uint64_t)-217, 0, 0, 0), -EINVAL);
	CHECK_EQ((int64_t)call(44, (uintptr_t)md, (uint64_t)-216, 0, 0, 0), 0);
	CHECK_EQ(md->data_end - md->data, sizeof(pkt) + 216);
	CHECK_EQ((int64_t)call(44, (uintptr_t)md, 216 + 64 - 13, 0, 0, 0), -EINVAL);
	CHECK_EQ((int64_t)call(44, (uintptr_t)md, 216 + 64 - 14, 0, 0, 0), 0);
	CHECK_EQ(md->data_end - md->data, 14);
	CHECK_EQ(xbpf_run_ctx__reset(ctx), 0);
	CHECK_EQ(md->data_end - md->data, sizeof(pkt));

	/* tail: shrink to ETH_HLEN, grow to the frame end (4096 - 320 - 256 bytes of data) */
	CHECK_EQ((int64_t)call(65, (uintptr_t)md, (uint64_t)(14 - 64 - 1), 0, 0, 0), -EINVAL);
	CHECK_EQ((int64_t)call(65, (uintptr_t)md, (uint64_t)(14 - 64), 0, 0, 0), 0);
	CHECK_EQ((int64_t)call(65, (uintptr_t)md, 3520 - 14 + 1, 0, 0, 0), -EINVAL);
	CHECK_EQ((int64_t)call(65, (uintptr_t)md, 3520 - 14, 0, 0, 0), 0);
	CHECK_EQ(md->data_end - md->data, 3520);
	/* grown bytes are zeroed */
	CHECK_EQ(((uint8_t *)(uintptr_t)md->data)[100], 0);
	o.data_size_out = sizeof(out);
	CHECK_EQ(xbpf_run_ctx__finish(ctx, &o), -ENOSPC);
	CHECK_EQ(o.data_size_out, 3520);
	CHECK(!memcmp(out, pkt, 14));

	/* meta: 4-byte multiples up to 32, not below the xdp_frame */
	CHECK_EQ(xbpf_run_ctx__reset(ctx), 0);
	CHECK_EQ((int64_t)call(54, (uintptr_t)md, (uint64_t)-3, 0, 0, 0), -EACCES);
	CHECK_EQ((int64_t)call(54, (uintptr_t)md, (uint64_t)-6, 0, 0, 0), -EACCES);
	CHECK_EQ((int64_t)call(54, (uintptr_t)md, 4, 0, 0, 0), -EINVAL);
	CHECK_EQ((int64_t)call(54, (uintptr_t)md, (uint64_t)-8, 0, 0, 0), 0);
	CHECK_EQ(md->data - md->data_meta, 8);
	memset((void *)(uintptr_t)md->data_meta, 0xab, 8);
	/* head moves carry the metadata along */
	CHECK_EQ((int64_t)call(44, (uintptr_t)md, 4, 0, 0, 0), 0);
	CHECK_EQ(md->data - md->data_meta, 8);
	CHECK_EQ(((uint8_t *)(uintptr_t)md->data_meta)[7], 0xab);
	{
		struct xdp_md ctx_out;

		o.ctx_out = &ctx_out;
		o.ctx_size_out = sizeof(ctx_out);
		o.data_size_out = sizeof(out);
		CHECK_EQ(xbpf_run_ctx__finish(ctx, &o), 0);
		/* output starts at the metadata, ctx_out says where data begins */
		CHECK_EQ(o.data_size_out, 8 + 60);
		CHECK_EQ(out[0], 0xab);
		CHECK(!memcmp(out + 8, pkt + 4, 60));
		CHECK_EQ(ctx_out.data, 8);
		CHECK_EQ(ctx_out.data_end, 68);
		o.ctx_out = NULL;
	}
	xbpf_run_ctx__free(ctx);
}

/*
 * Reset restores a fresh frame (zeroes around the packet, as the kernel's
 * test_run allocates) even where an earlier run grew the tail, wrote and
 * shrank it again, or moved the head down, wrote and moved it back.
 */
static void test_xdp_reset_clears_frame(void)
{
	uint8_t pkt[64];
	struct xbpf_run_ctx *ctx;
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
	struct xdp_md *md;
	uint8_t *p;
	size_t i;

	fill_pkt(pkt, sizeof(pkt));
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), 0);
	md = xbpf_run_ctx__r1(ctx);
	for (int round = 0; round < 3; round++) {
		CHECK_EQ((int64_t)call(65, (uintptr_t)md, 1000, 0, 0, 0), 0);
		CHECK_EQ((int64_t)call(44, (uintptr_t)md, (uint64_t)-200, 0, 0, 0), 0);
		memset((void *)(uintptr_t)md->data, 0xcd, md->data_end - md->data);
		CHECK_EQ((int64_t)call(65, (uintptr_t)md, (uint64_t)-1000, 0, 0, 0), 0);
		if (round)
			CHECK_EQ((int64_t)call(44, (uintptr_t)md, 200, 0, 0, 0), 0); /* back where it was */
		CHECK_EQ(xbpf_run_ctx__reset(ctx), 0);
		p = (uint8_t *)(uintptr_t)md->data;
		CHECK_EQ(md->data_end - md->data, sizeof(pkt));
		CHECK(!memcmp(p, pkt, sizeof(pkt)));
		for (i = 1; i <= 200; i++)
			CHECK_EQ(p[-(ptrdiff_t)i], 0);
		for (i = sizeof(pkt); i < sizeof(pkt) + 1000; i++)
			CHECK_EQ(p[i], 0);
	}
	xbpf_run_ctx__free(ctx);
}

static void test_xdp_ctx_in(void)
{
	uint8_t pkt[64], out[128];
	struct xdp_md in = { .data = 8, .data_end = sizeof(pkt), .ingress_ifindex = 5,
			     .rx_queue_index = 2 };
	struct xbpf_run_ctx *ctx;
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt), .data_out = out,
		  .data_size_out = sizeof(out), .ctx_in = &in, .ctx_size_in = sizeof(in));
	struct xdp_md *md;

	fill_pkt(pkt, sizeof(pkt));
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), 0);
	md = xbpf_run_ctx__r1(ctx);
	CHECK_EQ(md->data - md->data_meta, 8);
	CHECK_EQ(md->data_end - md->data, 56);
	CHECK_EQ(md->ingress_ifindex, 5);
	CHECK_EQ(md->rx_queue_index, 2);
	CHECK(!memcmp((void *)(uintptr_t)md->data_meta, pkt, 8));
	xbpf_run_ctx__free(ctx);

	/* the kernel's checks on ctx_in */
	struct xdp_md bad;
	bad = in;
	bad.data_end = 10;
	o.ctx_in = &bad;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	bad = in;
	bad.data = 6;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	bad = in;
	bad.data_meta = 1;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	bad = in;
	bad.egress_ifindex = 1;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	bad = in;
	bad.ingress_ifindex = 0;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	/* bytes past the struct must be zero */
	{
		uint8_t big[sizeof(in) + 8] = { 0 };

		memcpy(big, &in, sizeof(in));
		o.ctx_in = big;
		o.ctx_size_in = sizeof(big);
		CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), 0);
		xbpf_run_ctx__free(ctx);
		big[sizeof(in) + 3] = 1;
		CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -E2BIG);
	}
	/* too short, too long, options with junk */
	o.ctx_in = NULL;
	o.ctx_size_in = 0;
	o.data_size_in = 13;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	o.data_size_in = 4000;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	o.data_size_in = sizeof(pkt);
	o.flags = 1;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), -EINVAL);
	o.flags = 0;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_TRACEPOINT, &o, &ctx), -EOPNOTSUPP);
}

static void test_skb(void)
{
	uint8_t pkt[60], out[60];
	struct __sk_buff in = { .mark = 7, .priority = 3, .cb = { 1, 2, 3, 4, 5 } }, ctx_out;
	struct xbpf_run_ctx *ctx;
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt), .data_out = out,
		  .data_size_out = sizeof(out), .ctx_in = &in, .ctx_size_in = sizeof(in),
		  .ctx_out = &ctx_out, .ctx_size_out = sizeof(ctx_out));
	struct __sk_buff *s;

	fill_pkt(pkt, sizeof(pkt));
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_SCHED_CLS, &o, &ctx), 0);
	s = xbpf_run_ctx__r1(ctx);
	CHECK_EQ(s->len, 60);
	CHECK_EQ(s->protocol, 0x0008); /* htons(ETH_P_IP) */
	CHECK_EQ(s->pkt_type, 3);	/* PACKET_OTHERHOST: not lo's address */
	CHECK_EQ(s->mark, 7);
	CHECK_EQ(s->cb[4], 5);
	CHECK_EQ(s->ifindex, 1);
	CHECK_EQ(s->data_end - s->data, 60);
	CHECK_EQ(s->wire_len, 60);

	/* skb_load_bytes / store_bytes bounds */
	uint8_t buf[8];
	CHECK_EQ((int64_t)call(26, (uintptr_t)s, 52, (uintptr_t)buf, 8, 0), 0);
	CHECK(!memcmp(buf, pkt + 52, 8));
	CHECK_EQ((int64_t)call(26, (uintptr_t)s, 53, (uintptr_t)buf, 8, 0), -EFAULT);
	CHECK_EQ(buf[0], 0); /* zeroed on failure */
	memset(buf, 0xee, sizeof(buf));
	CHECK_EQ((int64_t)call(9, (uintptr_t)s, 20, (uintptr_t)buf, 8, 0), 0);
	CHECK_EQ((int64_t)call(9, (uintptr_t)s, 20, (uintptr_t)buf, 8, 4), -EINVAL);
	CHECK_EQ((int64_t)call(9, (uintptr_t)s, 53, (uintptr_t)buf, 8, 0), -EFAULT);
	s->mark = 99;
	s->cb[0] = 42;
	CHECK_EQ(xbpf_run_ctx__finish(ctx, &o), 0);
	CHECK_EQ(out[20], 0xee);
	CHECK_EQ(out[19], pkt[19]);
	CHECK_EQ(ctx_out.mark, 99);
	CHECK_EQ(ctx_out.cb[0], 42);
	CHECK_EQ(ctx_out.wire_len, 60);
	CHECK_EQ(ctx_out.len, 0); /* not copied back, as in the kernel */
	xbpf_run_ctx__free(ctx);

	/* fields test_run refuses in ctx_in */
	struct __sk_buff bad = in;
	bad.len = 5;
	o.ctx_in = &bad;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_SCHED_CLS, &o, &ctx), -EINVAL);
	bad = in;
	bad.tc_index = 1;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_SCHED_CLS, &o, &ctx), -EINVAL);
	bad = in;
	bad.wire_len = 59;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_SCHED_CLS, &o, &ctx), -EINVAL);

	/* socket filters start at the network header; data_out has a zeroed MAC header */
	o.ctx_in = NULL;
	o.ctx_out = NULL;
	pkt[0] = 0xff;
	memset(pkt, 0xff, 6);
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_SOCKET_FILTER, &o, &ctx), 0);
	s = xbpf_run_ctx__r1(ctx);
	CHECK_EQ(s->len, 46);
	CHECK_EQ(s->pkt_type, 2); /* multicast: lo has no broadcast address */
	CHECK_EQ((int64_t)call(26, (uintptr_t)s, 0, (uintptr_t)buf, 4, 0), 0);
	CHECK(!memcmp(buf, pkt + 14, 4));
	CHECK_EQ(xbpf_run_ctx__finish(ctx, &o), 0);
	CHECK_EQ(o.data_size_out, 60);
	CHECK_EQ(out[0], 0);
	CHECK_EQ(out[14], pkt[14]);
	xbpf_run_ctx__free(ctx);
}

/* RFC 1071 checksum of an IPv4 header, from scratch. */
static uint16_t ip_csum(const uint8_t *h, size_t len)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i < len; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void test_csum(void)
{
	uint8_t pkt[60];
	struct xbpf_run_ctx *ctx;
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
	struct __sk_buff *s;
	uint8_t *ip;
	uint16_t c;
	uint32_t old_addr, new_addr = 0x0a0b0c0d;
	int i;

	fill_pkt(pkt, sizeof(pkt));
	ip = pkt + 14;
	ip[0] = 0x45;
	ip[10] = ip[11] = 0;
	c = ip_csum(ip, 20);
	ip[10] = c >> 8;
	ip[11] = c & 0xff;
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_SCHED_CLS, &o, &ctx), 0);
	s = xbpf_run_ctx__r1(ctx);
	ip = (uint8_t *)(uintptr_t)s->data + 14;
	for (i = 0; i < 50; i++) {
		/* rewrite daddr, fix the checksum with l3_csum_replace(size 4) */
		memcpy(&old_addr, ip + 16, 4);
		new_addr = new_addr * 2654435761u + (uint32_t)i;
		memcpy(ip + 16, &new_addr, 4);
		CHECK_EQ((int64_t)call(10, (uintptr_t)s, 14 + 10, old_addr, new_addr, 4), 0);
		CHECK_EQ(ip_csum(ip, 20), 0);
		/* and the TTL (16-bit word at 8) with size 2, l4 variant on the same field */
		uint16_t old16, new16;
		memcpy(&old16, ip + 8, 2);
		new16 = (uint16_t)(old16 + 0x1f3 * (i + 1));
		memcpy(ip + 8, &new16, 2);
		CHECK_EQ((int64_t)call(i & 1 ? 11 : 10, (uintptr_t)s, 14 + 10, old16, new16, 2), 0);
		CHECK_EQ(ip_csum(ip, 20), 0);
	}
	/* by-diff form: csum_diff of the old and new words, then replace with size 0 */
	{
		uint32_t from = 0, to = 0x01020304, d;

		memcpy(&from, ip + 12, 4);
		d = (uint32_t)call(28, (uintptr_t)&from, 4, (uintptr_t)&to, 4, 0);
		memcpy(ip + 12, &to, 4);
		CHECK_EQ((int64_t)call(10, (uintptr_t)s, 14 + 10, 0, d, 0), 0);
		CHECK_EQ(ip_csum(ip, 20), 0);
		CHECK_EQ((int64_t)call(10, (uintptr_t)s, 14 + 10, 1, d, 0), -EINVAL);
	}
	CHECK_EQ((int64_t)call(10, (uintptr_t)s, 14 + 10, 0, 0, 3), -EINVAL);
	CHECK_EQ((int64_t)call(10, (uintptr_t)s, 14 + 10, 0, 0, 0x10), -EINVAL);
	CHECK_EQ((int64_t)call(10, (uintptr_t)s, 59, 0, 0, 2), -EFAULT);
	CHECK_EQ((int64_t)call(10, (uintptr_t)s, 0x10000, 0, 0, 2), -EFAULT);
	/* l4 MANGLED_0: a zero checksum stays untouched */
	ip[10] = ip[11] = 0;
	CHECK_EQ((int64_t)call(11, (uintptr_t)s, 14 + 10, 1, 2, 2 | BPF_F_MARK_MANGLED_0), 0);
	CHECK_EQ(ip[10] | ip[11], 0);
	xbpf_run_ctx__free(ctx);

	/* csum_diff: folds to the RFC 1071 difference; size rules */
	{
		uint8_t a[40], b[40];
		uint32_t r;
		uint64_t fold;

		for (i = 0; i < 40; i++) {
			a[i] = (uint8_t)(i * 7);
			b[i] = (uint8_t)(i * 11 + 3);
		}
		r = (uint32_t)call(28, 0, 0, (uintptr_t)b, 40, 0);
		fold = r;
		while (fold >> 16)
			fold = (fold & 0xffff) + (fold >> 16);
		/* byte order: the sum of little-endian words equals the byte-swapped BE sum */
		c = (uint16_t)~ip_csum(b, 40);
		CHECK_EQ((uint16_t)fold, (uint16_t)((c >> 8) | (c << 8)));
		r = (uint32_t)call(28, (uintptr_t)a, 40, (uintptr_t)a, 40, 0);
		fold = r;
		while (fold >> 16)
			fold = (fold & 0xffff) + (fold >> 16);
		CHECK_EQ(fold, 0xffff); /* x - x is negative zero in ones' complement */
		CHECK_EQ((int64_t)call(28, (uintptr_t)a, 2, 0, 0, 0), -EINVAL);
		CHECK_EQ((int64_t)call(28, (uintptr_t)a, 512, (uintptr_t)a, 4, 0), -EINVAL);
		CHECK_EQ(call(28, 0, 0, 0, 0, 0x1234), 0x1234);
	}
}

static void test_raw_mem(void)
{
	uint8_t mem[16] = { 1, 2, 3 }, out[16];
	struct xbpf_run_ctx *ctx;
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = mem, .data_size_in = sizeof(mem), .data_out = out,
		  .data_size_out = sizeof(out));
	uint8_t *p;

	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_RAW_MEM, &o, &ctx), 0);
	p = xbpf_run_ctx__r1(ctx);
	CHECK(p && p != mem && p[2] == 3);
	CHECK_EQ(xbpf_run_ctx__r2(ctx), 16);
	p[0] = 9;
	CHECK_EQ(xbpf_run_ctx__finish(ctx, &o), 0);
	CHECK_EQ(out[0], 9);
	CHECK_EQ(xbpf_run_ctx__reset(ctx), 0);
	CHECK_EQ(p[0], 1);
	xbpf_run_ctx__free(ctx);
}

static void test_redirect_and_misc(void)
{
	uint8_t pkt[64];
	struct xbpf_run_ctx *ctx;
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
	struct xbpf_redirect r;

	fill_pkt(pkt, sizeof(pkt));
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx), 0);
	xbpf_run_ctx__r1(ctx);
	CHECK_EQ(call(23, 9, 0, 0, 0, 0), 4);
	xbpf_last_redirect(&r);
	CHECK_EQ(r.ifindex, 9);
	CHECK_EQ(call(23, 9, 1, 0, 0, 0), 0); /* XDP: any flag aborts */
	xbpf_run_ctx__free(ctx);
	CHECK_EQ(xbpf_run_ctx__new(XBPF_PROG_SCHED_CLS, &o, &ctx), 0);
	xbpf_run_ctx__r1(ctx);
	CHECK_EQ(call(23, 9, 1, 0, 0, 0), 7); /* TC_ACT_REDIRECT, ingress */
	CHECK_EQ(call(23, 9, 2, 0, 0, 0), 2); /* TC_ACT_SHOT */
	xbpf_run_ctx__free(ctx);

	xbpf_set_cpu(3);
	CHECK_EQ(call(8, 0, 0, 0, 0, 0), 3);
	xbpf_set_cpu(0);
	CHECK(call(5, 0, 0, 0, 0, 0) > 0);
	CHECK(call(7, 0, 0, 0, 0, 0) != call(7, 0, 0, 0, 0, 0) ||
	      call(7, 0, 0, 0, 0, 0) != call(7, 0, 0, 0, 0, 0));
	CHECK_EQ(call(6, (uintptr_t)"x=%d y=%llx\n", 13, (uint64_t)-5, 0xab, 0), 10);
	CHECK_EQ((int64_t)call(6, (uintptr_t)"bad %s\n", 8, 0, 0, 0), -EINVAL);
	CHECK_EQ((int64_t)call(6, (uintptr_t)"no nul", 3, 0, 0, 0), -EINVAL);
	CHECK(!xbpf_helper_proto(12345));
	CHECK(xbpf_helper_proto(44)->changes_pkt_data);
	CHECK(xbpf_helper_proto(44)->prog_types == XBPF_PROG_BIT(XBPF_PROG_XDP));
	CHECK(xbpf_helper_proto(1)->ret == XBPF_RET_PTR_TO_MAP_VALUE_OR_NULL);
}

static void test_resolve_maps(void)
{
	struct xbpf_map_spec specs[2] = {
		{ .name = "h", .type = XBPF_MAP_HASH, .key_size = 4, .value_size = 4, .max_entries = 4 },
		{ .name = ".data", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 16,
		  .max_entries = 1 },
	};
	struct xbpf_insn insns[] = {
		{ .code = XBPF_LD | XBPF_DW | XBPF_IMM, .dst_reg = 1, .src_reg = XBPF_PSEUDO_MAP_FD, .imm = 0 },
		{ 0 },
		{ .code = XBPF_LD | XBPF_DW | XBPF_IMM, .dst_reg = 2, .src_reg = XBPF_PSEUDO_MAP_VALUE, .imm = 1 },
		{ .imm = 8 },
		{ .code = XBPF_LD | XBPF_DW | XBPF_IMM, .dst_reg = 3, .imm = 0x1234 },
		{ .imm = 0x5678 },
		{ .code = XBPF_ALU64 | XBPF_MOV | XBPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = XBPF_JMP | XBPF_EXIT },
	};
	struct xbpf_object *obj = xbpf_object__open_raw(insns, 8, XBPF_PROG_XDP, specs, 2, NULL);
	struct xbpf_prog *prog;
	struct xbpf_insn *out;
	size_t cnt;
	uint32_t zero = 0;

	CHECK(obj);
	if (!obj)
		return;
	prog = xbpf_object__next_prog(obj, NULL);
	CHECK(prog && xbpf_prog__type(prog) == XBPF_PROG_XDP && xbpf_prog__insn_cnt(prog) == 8);
	CHECK(xbpf_object__find_map(obj, ".data") == xbpf_object__map(obj, 1));
	CHECK_EQ(xbpf_prog__resolve_maps(prog, &out, &cnt), 0);
	CHECK_EQ(cnt, 8);
	CHECK_EQ(out[0].src_reg, 0);
	CHECK_EQ((uint64_t)(uint32_t)out[0].imm | (uint64_t)(uint32_t)out[1].imm << 32,
		 (uintptr_t)xbpf_object__map(obj, 0));
	CHECK_EQ((uint64_t)(uint32_t)out[2].imm | (uint64_t)(uint32_t)out[3].imm << 32,
		 (uintptr_t)xbpf_map__lookup_elem(xbpf_object__map(obj, 1), &zero) + 8);
	CHECK_EQ(out[4].imm, 0x1234);
	CHECK_EQ(out[5].imm, 0x5678);
	free(out);
	xbpf_object__close(obj);

	/* unknown index, offset past the value */
	insns[0].imm = 2;
	obj = xbpf_object__open_raw(insns, 8, XBPF_PROG_XDP, specs, 2, NULL);
	CHECK_EQ(xbpf_prog__resolve_maps(xbpf_object__next_prog(obj, NULL), &out, &cnt), -EINVAL);
	xbpf_object__close(obj);
	insns[0].imm = 0;
	insns[3].imm = 16;
	obj = xbpf_object__open_raw(insns, 8, XBPF_PROG_XDP, specs, 2, NULL);
	CHECK_EQ(xbpf_prog__resolve_maps(xbpf_object__next_prog(obj, NULL), &out, &cnt), -EINVAL);
	xbpf_object__close(obj);
	/* truncated ld_imm64 */
	insns[3].imm = 0;
	obj = xbpf_object__open_raw(insns, 5, XBPF_PROG_XDP, specs, 2, NULL);
	CHECK_EQ(xbpf_prog__resolve_maps(xbpf_object__next_prog(obj, NULL), &out, &cnt), -EINVAL);
	xbpf_object__close(obj);
	CHECK(!xbpf_object__open_raw(insns, 0, XBPF_PROG_XDP, NULL, 0, NULL) && errno == EINVAL);

	/* raw programs: functions start at 0 and at each bpf-to-bpf call target */
	{
		struct xbpf_insn calls[] = {
			{ .code = XBPF_JMP | XBPF_CALL, .src_reg = XBPF_PSEUDO_CALL, .imm = 2 },
			{ .code = XBPF_JMP | XBPF_CALL, .src_reg = XBPF_PSEUDO_CALL, .imm = 1 },
			{ .code = XBPF_JMP | XBPF_EXIT },
			{ .code = XBPF_JMP | XBPF_CALL, .src_reg = XBPF_PSEUDO_CALL, .imm = 100 },
			{ .code = XBPF_JMP | XBPF_EXIT },
		};
		struct xbpf_func_desc f;

		obj = xbpf_object__open_raw(calls, 5, XBPF_PROG_RAW_MEM, NULL, 0, NULL);
		prog = xbpf_object__next_prog(obj, NULL);
		CHECK_EQ(xbpf_prog__func_cnt(prog), 2);
		CHECK_EQ(xbpf_prog__func(prog, 1, &f), 0);
		CHECK(f.start == 3 && f.len == 2 && !strcmp(f.name, "sub_3"));
		CHECK_EQ(xbpf_prog__func(prog, 0, &f), 0);
		CHECK(f.start == 0 && f.len == 3 && !strcmp(f.name, "raw"));
		xbpf_object__close(obj);
	}
}

static int quiet(enum xbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(void)
{
	xbpf_set_print(quiet);
	test_xdp_roundtrip();
	test_xdp_reset_clears_frame();
	test_xdp_ctx_in();
	test_skb();
	test_csum();
	test_raw_mem();
	test_redirect_and_misc();
	test_resolve_maps();
	TEST_DONE();
}
