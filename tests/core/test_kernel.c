// SPDX-License-Identifier: MIT
/*
 * test_kernel.c - the kernel is the reference (suite 'kernel', native only).
 *
 * Tiny programs call one helper with constant arguments and return its
 * result; the kernel runs them with BPF_PROG_TEST_RUN, we call the same
 * helper with the same arguments on a context built from the same test-run
 * options, and both results (return value, data_out, ctx_out, sizes,
 * errors) must agree.  Context fields are compared by programs that return
 * one __sk_buff / xdp_md field.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include "insn.h"
#include "testutil.h"
#include "xbpf.h"

/* Test programs are built as xbpf_insn, which has the kernel's layout. */
_Static_assert(sizeof(struct xbpf_insn) == sizeof(struct bpf_insn), "insn layout");

/* Load a test program; `may_fail` for probes of fields a type may not read. */
static int prog_load_opt(enum bpf_prog_type type, const struct xbpf_insn *xinsns, size_t cnt,
			 bool may_fail)
{
	const struct bpf_insn *insns = (const struct bpf_insn *)xinsns;
	char log[4096];
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 0);
	int fd = bpf_prog_load(type, "xbpf_c2_t", "GPL", insns, cnt, &o);

	if (fd < 0 && !may_fail) {
		o.log_level = 1;
		fd = bpf_prog_load(type, "xbpf_c2_t", "GPL", insns, cnt, &o);
		fprintf(stderr, "kernel refused the test program: %s\n%s\n", strerror(errno), log);
	}
	return fd;
}

static int prog_load(enum bpf_prog_type type, const struct xbpf_insn *insns, size_t cnt)
{
	return prog_load_opt(type, insns, cnt, false);
}

struct run {
	int err;
	uint32_t retval;
	uint8_t data[4096];
	uint32_t data_size;
	uint8_t ctx[sizeof(struct __sk_buff)];
	uint32_t ctx_size;
};

static void kernel_run(int fd, const void *pkt, uint32_t len, const void *ctx_in, uint32_t ctx_len,
		       uint32_t out_cap, struct run *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .data_out = r->data,
		    .data_size_out = out_cap, .ctx_in = ctx_in, .ctx_size_in = ctx_len,
		    .ctx_out = ctx_len ? r->ctx : NULL, .ctx_size_out = ctx_len ? ctx_len : 0);

	memset(r, 0, sizeof(*r));
	r->err = bpf_prog_test_run_opts(fd, &o) ? -errno : 0;
	r->retval = o.retval;
	r->data_size = o.data_size_out;
	r->ctx_size = o.ctx_size_out;
}

/* Ours: build the context, call the helper with (ctx, a2..a5), finish. */
static void user_run(enum xbpf_prog_type type, int helper, uint64_t a2, uint64_t a3, uint64_t a4,
		     uint64_t a5, const void *pkt, uint32_t len, const void *ctx_in, uint32_t ctx_len,
		     uint32_t out_cap, struct run *r)
{
	XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .data_out = r->data,
		  .data_size_out = out_cap, .ctx_in = ctx_in, .ctx_size_in = ctx_len,
		  .ctx_out = ctx_len ? r->ctx : NULL, .ctx_size_out = ctx_len ? ctx_len : 0);
	struct xbpf_run_ctx *ctx;
	void *r1;

	memset(r, 0, sizeof(*r));
	r->err = xbpf_run_ctx__new(type, &o, &ctx);
	if (r->err) {
		/* libbpf reports the sizes it passed in when the kernel fails early */
		r->data_size = out_cap;
		r->ctx_size = ctx_len;
		return;
	}
	r1 = xbpf_run_ctx__r1(ctx);
	r->retval = (uint32_t)xbpf_helper_impl(helper)((uintptr_t)r1, a2, a3, a4, a5);
	r->err = xbpf_run_ctx__finish(ctx, &o);
	r->data_size = o.data_size_out;
	r->ctx_size = o.ctx_size_out;
	xbpf_run_ctx__free(ctx);
}

static int compare(const char *what, long arg, const struct run *k, const struct run *u)
{
	int bad = 0;

	if (k->err != u->err || k->retval != u->retval || k->data_size != u->data_size ||
	    k->ctx_size != u->ctx_size)
		bad = 1;
	else if (!k->err && memcmp(k->data, u->data, k->data_size < 4096 ? k->data_size : 4096))
		bad = 1;
	else if (!k->err && memcmp(k->ctx, u->ctx, k->ctx_size))
		bad = 1;
	if (bad) {
		fprintf(stderr,
			"%s(%ld): kernel err %d ret %d size %u ctx %u / ours err %d ret %d size %u ctx %u\n",
			what, arg, k->err, (int32_t)k->retval, k->data_size, k->ctx_size, u->err,
			(int32_t)u->retval, u->data_size, u->ctx_size);
		test_failures++;
	}
	return bad;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* xdp_adjust_head/meta/tail(ctx, delta) for a grid of deltas and packet sizes. */
static void test_xdp_adjust(void)
{
	static const int helpers[] = { BPF_FUNC_xdp_adjust_head, BPF_FUNC_xdp_adjust_meta,
				       BPF_FUNC_xdp_adjust_tail };
	static const int deltas[] = { -4000, -300, -257, -256, -224, -217, -216, -215, -100, -36,
				      -32,   -28,  -8,   -4,   -3,   -1,   0,    1,    4,    14,
				      45,    46,   50,   51,   100,  1000, 3456, 3457, 3506, 3507 };
	static const uint32_t sizes[] = { 14, 64, 1500, 3520 };
	uint8_t pkt[3520];
	struct run k, u;
	size_t h, d, s;

	fill(pkt, sizeof(pkt), 1);
	for (h = 0; h < 3; h++) {
		for (d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
			struct xbpf_insn prog[] = {
				MOV64K(BPF_REG_2, deltas[d]),
				CALL_HELPER(helpers[h]),
				EXIT(),
			};
			int fd = prog_load(BPF_PROG_TYPE_XDP, prog, 3);

			if (fd < 0) {
				test_failures++;
				return;
			}
			for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				kernel_run(fd, pkt, sizes[s], NULL, 0, sizeof(k.data), &k);
				user_run(XBPF_PROG_XDP, helpers[h], (uint64_t)(int64_t)deltas[d], 0, 0, 0, pkt,
					 sizes[s], NULL, 0, sizeof(u.data), &u);
				compare(h == 0 ? "adjust_head" : h == 1 ? "adjust_meta" : "adjust_tail",
					deltas[d], &k, &u);
			}
			close(fd);
		}
	}
}

/* xdp ctx_in with metadata and data_out truncation (-ENOSPC). */
static void test_xdp_ctx(void)
{
	struct xbpf_insn prog[] = {
		MOV64K(BPF_REG_2, -4),
		CALL_HELPER(BPF_FUNC_xdp_adjust_meta),
		EXIT(),
	};
	struct xdp_md in = { .data = 8, .data_end = 100 };
	uint8_t pkt[100];
	struct run k, u;
	int fd = prog_load(BPF_PROG_TYPE_XDP, prog, 3);
	uint32_t caps[] = { 0, 10, 99, 100, 104, 200 };
	size_t c;

	if (fd < 0) {
		test_failures++;
		return;
	}
	fill(pkt, sizeof(pkt), 2);
	for (c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		kernel_run(fd, pkt, 100, &in, sizeof(in), caps[c], &k);
		user_run(XBPF_PROG_XDP, BPF_FUNC_xdp_adjust_meta, (uint64_t)-4, 0, 0, 0, pkt, 100, &in,
			 sizeof(in), caps[c], &u);
		compare("xdp meta ctx, data_size_out", caps[c], &k, &u);
	}
	in.data = 6;
	kernel_run(fd, pkt, 100, &in, sizeof(in), 200, &k);
	user_run(XBPF_PROG_XDP, BPF_FUNC_xdp_adjust_meta, (uint64_t)-4, 0, 0, 0, pkt, 100, &in,
		 sizeof(in), 200, &u);
	compare("xdp bad meta", 6, &k, &u);
	kernel_run(fd, pkt, 13, NULL, 0, 200, &k);
	user_run(XBPF_PROG_XDP, BPF_FUNC_xdp_adjust_meta, (uint64_t)-4, 0, 0, 0, pkt, 13, NULL, 0, 200,
		 &u);
	compare("xdp short packet", 13, &k, &u);
	close(fd);
}

/* csum_diff over stack words: random sizes and contents. */
static void test_csum_diff(void)
{
	uint32_t seed = 99;
	int i;

	for (i = 0; i < 40; i++) {
		struct xbpf_insn prog[64];
		uint32_t from[6], to[6];
		int n = 0, j, fs, ts, fd;
		uint32_t seedv;
		uint64_t ours;
		struct run k;
		uint8_t pkt[64] = { 0 };

		seed = seed * 1103515245 + 12345;
		fs = (int)((seed >> 16) % 4) * 4;
		seed = seed * 1103515245 + 12345;
		ts = (int)((seed >> 16) % 4) * 4 + (i == 0 ? 12 : 0);
		seed = seed * 1103515245 + 12345;
		seedv = i % 3 ? seed : 0;
		fill((uint8_t *)from, sizeof(from), seed + 1);
		fill((uint8_t *)to, sizeof(to), seed + 2);
		if (i == 1) {
			memset(from, 0xff, sizeof(from));
			memset(to, 0, sizeof(to));
		}
		for (j = 0; j < 6; j++) {
			prog[n++] = I(ST(W, BPF_REG_10, -24 + 4 * j, (int32_t)from[j]));
			prog[n++] = I(ST(W, BPF_REG_10, -48 + 4 * j, (int32_t)to[j]));
		}
		prog[n++] = I(MOV64X(BPF_REG_1, BPF_REG_10));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, -24));
		prog[n++] = I(MOV64K(BPF_REG_2, fs));
		prog[n++] = I(MOV64X(BPF_REG_3, BPF_REG_10));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -48));
		prog[n++] = I(MOV64K(BPF_REG_4, ts));
		prog[n++] = I(INSN(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_5, 0, 0, (int32_t)seedv));
		prog[n++] = I(CALL_HELPER(BPF_FUNC_csum_diff));
		prog[n++] = I(EXIT());
		if (!fs) {
			prog[n - 9] = I(MOV64K(BPF_REG_1, 0)); /* NULL from, size 0 */
			prog[n - 8] = I(MOV64K(BPF_REG_1, 0));
		}
		fd = prog_load(BPF_PROG_TYPE_SCHED_CLS, prog, (size_t)n);
		if (fd < 0) {
			test_failures++;
			return;
		}
		kernel_run(fd, pkt, sizeof(pkt), NULL, 0, sizeof(k.data), &k);
		ours = xbpf_helper_impl(BPF_FUNC_csum_diff)(fs ? (uintptr_t)from : 0, (uint64_t)fs,
								  (uintptr_t)to, (uint64_t)ts, seedv);
		if (k.err || k.retval != (uint32_t)ours) {
			fprintf(stderr, "csum_diff(%d, %d, seed %#x): kernel %#x, ours %#x\n", fs, ts, seedv,
				k.retval, (uint32_t)ours);
			test_failures++;
		}
		close(fd);
	}
}

/* l3/l4_csum_replace and skb_store/load_bytes bounds and flags. */
static void test_skb_helpers(void)
{
	static const struct {
		int helper;
		int off;
		uint32_t from, to;
		uint64_t flags;
	} cases[] = {
		{ BPF_FUNC_l3_csum_replace, 24, 0x1234, 0x4321, 2 },
		{ BPF_FUNC_l3_csum_replace, 24, 0x12345678, 0x87654321, 4 },
		{ BPF_FUNC_l3_csum_replace, 24, 0, 0xdeadbeef, 0 },
		{ BPF_FUNC_l3_csum_replace, 24, 1, 0xdeadbeef, 0 },
		{ BPF_FUNC_l3_csum_replace, 25, 0x1234, 0x4321, 2 },
		{ BPF_FUNC_l3_csum_replace, 58, 0x1234, 0x4321, 2 },
		{ BPF_FUNC_l3_csum_replace, 59, 0x1234, 0x4321, 2 },
		{ BPF_FUNC_l3_csum_replace, 60, 0x1234, 0x4321, 2 },
		{ BPF_FUNC_l3_csum_replace, 24, 0x1234, 0x4321, 3 },
		{ BPF_FUNC_l3_csum_replace, 24, 0x1234, 0x4321, 0x12 },
		{ BPF_FUNC_l4_csum_replace, 50, 0x1234, 0x4321, 2 },
		{ BPF_FUNC_l4_csum_replace, 50, 0x12345678, 0x87654321, 4 | BPF_F_PSEUDO_HDR },
		{ BPF_FUNC_l4_csum_replace, 50, 0x1234, 0x4321, 2 | BPF_F_MARK_MANGLED_0 },
		{ BPF_FUNC_l4_csum_replace, 52, 0x1234, 0x4321, 2 | BPF_F_MARK_MANGLED_0 },
		{ BPF_FUNC_l4_csum_replace, 52, 0xffff, 0x0000, 2 | BPF_F_MARK_MANGLED_0 | BPF_F_MARK_ENFORCE },
		{ BPF_FUNC_l4_csum_replace, 51, 0x1234, 0x4321, 2 },
		{ BPF_FUNC_l4_csum_replace, 50, 0x1234, 0x4321, 2 | (1 << 8) },
		{ BPF_FUNC_l4_csum_replace, 50, 0, 0x4321, 0 },
	};
	uint8_t pkt[60];
	struct run k, u;
	size_t c;

	fill(pkt, sizeof(pkt), 3);
	pkt[12] = 0x08;
	pkt[13] = 0x00;
	pkt[52] = pkt[53] = 0; /* a zero checksum for MANGLED_0 */
	/* a field whose replacement makes the checksum zero */
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct xbpf_insn prog[] = {
			MOV64K(BPF_REG_2, cases[c].off),
			INSN(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, (int32_t)cases[c].from),
			INSN(BPF_ALU | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, (int32_t)cases[c].to),
			MOV64K(BPF_REG_5, (int32_t)cases[c].flags),
			CALL_HELPER(cases[c].helper),
			EXIT(),
		};
		int fd = prog_load(BPF_PROG_TYPE_SCHED_CLS, prog, 6);

		if (fd < 0) {
			test_failures++;
			return;
		}
		kernel_run(fd, pkt, sizeof(pkt), NULL, 0, sizeof(k.data), &k);
		user_run(XBPF_PROG_SCHED_CLS, cases[c].helper, (uint64_t)cases[c].off, cases[c].from,
			 cases[c].to, cases[c].flags, pkt, sizeof(pkt), NULL, 0, sizeof(u.data), &u);
		compare(cases[c].helper == BPF_FUNC_l3_csum_replace ? "l3_csum_replace" : "l4_csum_replace",
			(long)c, &k, &u);
		close(fd);
	}
}

/* skb_adjust_room and skb_pull_data on IPv4, IPv6 and ARP frames. */
static void test_skb_room(void)
{
	static const struct {
		int32_t diff;
		uint32_t mode;
		uint64_t flags;
	} cases[] = {
		{ -20, BPF_ADJ_ROOM_MAC, 0 },
		{ -20, BPF_ADJ_ROOM_MAC, 1ull << 7 /* DECAP_L3_IPV4 */ },
		{ -40, BPF_ADJ_ROOM_MAC, 1ull << 8 /* DECAP_L3_IPV6 */ },
		{ -40, BPF_ADJ_ROOM_MAC, 3ull << 7 },
		{ -8, BPF_ADJ_ROOM_NET, 0 },
		{ -30, BPF_ADJ_ROOM_NET, 0 },
		{ -60, BPF_ADJ_ROOM_MAC, 0 },
		{ -45, BPF_ADJ_ROOM_MAC, 0 },
		{ 20, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 },
		{ 40, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 },
		{ 28, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L4_UDP },
		{ 28, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 },
		{ 28, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L4_GRE | BPF_F_ADJ_ROOM_ENCAP_L4_UDP },
		{ 8, BPF_ADJ_ROOM_NET, 0 },
		{ 20, BPF_ADJ_ROOM_MAC, 1ull << 7 },
		{ 300, BPF_ADJ_ROOM_MAC, 0 },
		{ 4095, BPF_ADJ_ROOM_MAC, 0 },
		{ 4096, BPF_ADJ_ROOM_MAC, 0 },
		{ 10, 7, 0 },
		{ 10, BPF_ADJ_ROOM_MAC, 1ull << 9 },
	};
	static const uint16_t protos[] = { 0x0800, 0x86dd, 0x0806 };
	static const uint32_t lens[] = { 60, 100 };
	uint8_t pkt[100];
	struct run k, u;
	size_t c, p, l;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct xbpf_insn prog[] = {
			MOV64K(BPF_REG_2, cases[c].diff),
			MOV64K(BPF_REG_3, (int32_t)cases[c].mode),
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_4, 0, 0, (int32_t)cases[c].flags),
			INSN(0, 0, 0, 0, (int32_t)(cases[c].flags >> 32)),
			CALL_HELPER(BPF_FUNC_skb_adjust_room),
			EXIT(),
		};
		int fd = prog_load(BPF_PROG_TYPE_SCHED_CLS, prog, 6);

		if (fd < 0) {
			test_failures++;
			return;
		}
		for (p = 0; p < 3; p++) {
			for (l = 0; l < 2; l++) {
				fill(pkt, sizeof(pkt), (uint32_t)(c * 7 + p));
				pkt[12] = protos[p] >> 8;
				pkt[13] = protos[p] & 0xff;
				kernel_run(fd, pkt, lens[l], NULL, 0, sizeof(k.data), &k);
				user_run(XBPF_PROG_SCHED_CLS, BPF_FUNC_skb_adjust_room,
					 (uint64_t)(int64_t)cases[c].diff, cases[c].mode, cases[c].flags, 0,
					 pkt, lens[l], NULL, 0, sizeof(u.data), &u);
				compare("skb_adjust_room", (long)(c * 100 + p * 10 + l), &k, &u);
			}
		}
		close(fd);
	}
	/* which frame lengths test_run accepts, per ethertype */
	{
		static const uint16_t ethertypes[] = { 0x0800, 0x86dd, 0x0806, 0x8100, 0x0100 };
		struct xbpf_insn prog[] = { MOV64K(BPF_REG_0, 0), EXIT() };
		int fd = prog_load(BPF_PROG_TYPE_SCHED_CLS, prog, 2);
		uint32_t len;

		for (p = 0; p < sizeof(ethertypes) / sizeof(ethertypes[0]) && fd >= 0; p++) {
			for (len = 10; len <= 60; len++) {
				fill(pkt, sizeof(pkt), len);
				pkt[12] = ethertypes[p] >> 8;
				pkt[13] = ethertypes[p] & 0xff;
				kernel_run(fd, pkt, len, NULL, 0, sizeof(k.data), &k);
				user_run(XBPF_PROG_SCHED_CLS, BPF_FUNC_get_smp_processor_id, 0, 0, 0, 0, pkt,
					 len, NULL, 0, sizeof(u.data), &u);
				u.retval = k.retval;
				compare("skb frame length", (long)(ethertypes[p] << 8 | len), &k, &u);
			}
		}
		if (fd >= 0)
			close(fd);
	}
	for (c = 0; c < 4; c++) {
		static const int32_t pulls[] = { 0, 60, 61, 100000 };
		struct xbpf_insn prog[] = {
			MOV64K(BPF_REG_2, pulls[c]),
			CALL_HELPER(BPF_FUNC_skb_pull_data),
			EXIT(),
		};
		int fd = prog_load(BPF_PROG_TYPE_SCHED_CLS, prog, 3);

		if (fd < 0) {
			test_failures++;
			return;
		}
		kernel_run(fd, pkt, 60, NULL, 0, sizeof(k.data), &k);
		user_run(XBPF_PROG_SCHED_CLS, BPF_FUNC_skb_pull_data, (uint64_t)pulls[c], 0, 0, 0, pkt, 60,
			 NULL, 0, sizeof(u.data), &u);
		compare("skb_pull_data", pulls[c], &k, &u);
		close(fd);
	}
}

/* __sk_buff and xdp_md fields as programs read them after test_run set them up. */
static void test_ctx_fields(void)
{
	static const struct {
		int off;
		const char *name;
	} skb_fields[] = {
		{ offsetof(struct __sk_buff, len), "len" },
		{ offsetof(struct __sk_buff, pkt_type), "pkt_type" },
		{ offsetof(struct __sk_buff, mark), "mark" },
		{ offsetof(struct __sk_buff, queue_mapping), "queue_mapping" },
		{ offsetof(struct __sk_buff, protocol), "protocol" },
		{ offsetof(struct __sk_buff, vlan_present), "vlan_present" },
		{ offsetof(struct __sk_buff, priority), "priority" },
		{ offsetof(struct __sk_buff, ingress_ifindex), "ingress_ifindex" },
		{ offsetof(struct __sk_buff, ifindex), "ifindex" },
		{ offsetof(struct __sk_buff, tc_index), "tc_index" },
		{ offsetof(struct __sk_buff, cb[2]), "cb[2]" },
		{ offsetof(struct __sk_buff, hash), "hash" },
		{ offsetof(struct __sk_buff, tc_classid), "tc_classid" },
		{ offsetof(struct __sk_buff, napi_id), "napi_id" },
		{ offsetof(struct __sk_buff, wire_len), "wire_len" },
		{ offsetof(struct __sk_buff, gso_segs), "gso_segs" },
		{ offsetof(struct __sk_buff, gso_size), "gso_size" },
	};
	static const uint8_t dsts[][6] = {
		{ 0, 0, 0, 0, 0, 0 },
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		{ 0x01, 0x00, 0x5e, 0, 0, 1 },
		{ 0x02, 1, 2, 3, 4, 5 },
	};
	static const uint16_t protos[] = { 0x0800, 0x86dd, 0x0806, 0x0100, 0x05ff, 0x0600 };
	struct __sk_buff in = { .mark = 17, .priority = 5, .cb = { 1, 2, 3, 4, 5 }, .gso_segs = 3,
				.gso_size = 1400, .wire_len = 80, .ingress_ifindex = 1 };
	uint8_t pkt[64];
	size_t f, d, p, t;

	for (t = 0; t < 2; t++) {
		enum bpf_prog_type kt = t ? BPF_PROG_TYPE_SOCKET_FILTER : BPF_PROG_TYPE_SCHED_CLS;

		for (f = 0; f < sizeof(skb_fields) / sizeof(skb_fields[0]); f++) {
			struct xbpf_insn prog[] = {
				LDX(W, BPF_REG_0, BPF_REG_1, skb_fields[f].off),
				EXIT(),
			};
			int fd = prog_load_opt(kt, prog, 2, true);

			if (fd < 0)
				continue; /* a field this program type may not read */
			for (d = 0; d < 4; d++) {
				for (p = 0; p < sizeof(protos) / sizeof(protos[0]); p++) {
					XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = 64,
						  .ctx_in = &in, .ctx_size_in = sizeof(in));
					struct xbpf_run_ctx *ctx;
					struct run k;
					uint32_t ours;

					fill(pkt, sizeof(pkt), 4);
					memcpy(pkt, dsts[d], 6);
					pkt[12] = protos[p] >> 8;
					pkt[13] = protos[p] & 0xff;
					kernel_run(fd, pkt, 64, &in, sizeof(in), sizeof(k.data), &k);
					if (xbpf_run_ctx__new(t ? XBPF_PROG_SOCKET_FILTER : XBPF_PROG_SCHED_CLS,
							      &o, &ctx)) {
						test_failures++;
						continue;
					}
					memcpy(&ours, (uint8_t *)xbpf_run_ctx__r1(ctx) + skb_fields[f].off, 4);
					if (k.err || k.retval != ours) {
						fprintf(stderr,
							"%s: __sk_buff.%s (dst %zu, proto %#x): kernel %u (err %d), ours %u\n",
							t ? "socket" : "tc", skb_fields[f].name, d, protos[p],
							k.retval, k.err, ours);
						test_failures++;
					}
					xbpf_run_ctx__free(ctx);
				}
			}
			close(fd);
		}
	}
	/* ctx_out and data_out of an skb run, ENOSPC included */
	{
		struct xbpf_insn prog[] = { MOV64K(BPF_REG_0, 0), EXIT() };
		int fd = prog_load(BPF_PROG_TYPE_SCHED_CLS, prog, 2);
		int sfd = prog_load(BPF_PROG_TYPE_SOCKET_FILTER, prog, 2);
		uint32_t caps[] = { 0, 20, 64 };
		struct run k, u;
		size_t c;

		fill(pkt, sizeof(pkt), 5);
		for (c = 0; c < 3 && fd >= 0 && sfd >= 0; c++) {
			kernel_run(fd, pkt, 64, &in, sizeof(in), caps[c], &k);
			user_run(XBPF_PROG_SCHED_CLS, BPF_FUNC_get_smp_processor_id, 0, 0, 0, 0, pkt, 64, &in,
				 sizeof(in), caps[c], &u);
			u.retval = k.retval; /* the programs differ; only the context matters here */
			compare("tc ctx_out", caps[c], &k, &u);
			kernel_run(sfd, pkt, 64, &in, sizeof(in), caps[c], &k);
			user_run(XBPF_PROG_SOCKET_FILTER, BPF_FUNC_get_smp_processor_id, 0, 0, 0, 0, pkt, 64,
				 &in, sizeof(in), caps[c], &u);
			u.retval = k.retval;
			compare("socket ctx_out", caps[c], &k, &u);
		}
		{
			struct __sk_buff bad = in;

			bad.tc_index = 1;
			kernel_run(fd, pkt, 64, &bad, sizeof(bad), 64, &k);
			user_run(XBPF_PROG_SCHED_CLS, BPF_FUNC_get_smp_processor_id, 0, 0, 0, 0, pkt, 64,
				 &bad, sizeof(bad), 64, &u);
			compare("tc bad ctx_in", 0, &k, &u);
		}
		if (fd >= 0)
			close(fd);
		if (sfd >= 0)
			close(sfd);
	}
	/* xdp_md fields */
	{
		static const int offs[] = { offsetof(struct xdp_md, ingress_ifindex),
					    offsetof(struct xdp_md, rx_queue_index),
					    offsetof(struct xdp_md, egress_ifindex) };

		for (f = 0; f < 3; f++) {
			struct xbpf_insn prog[] = { LDX(W, BPF_REG_0, BPF_REG_1, offs[f]), EXIT() };
			int fd = prog_load_opt(BPF_PROG_TYPE_XDP, prog, 2, f == 2);
			XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = 64);
			struct xbpf_run_ctx *ctx;
			struct run k;
			uint32_t ours;

			if (fd < 0) {
				/* egress_ifindex is for devmap programs only */
				test_failures += f != 2;
				continue;
			}
			kernel_run(fd, pkt, 64, NULL, 0, sizeof(k.data), &k);
			if (!xbpf_run_ctx__new(XBPF_PROG_XDP, &o, &ctx)) {
				memcpy(&ours, (uint8_t *)xbpf_run_ctx__r1(ctx) + offs[f], 4);
				if (k.err || k.retval != ours) {
					fprintf(stderr, "xdp_md field at %d: kernel %u, ours %u\n", offs[f],
						k.retval, ours);
					test_failures++;
				}
				xbpf_run_ctx__free(ctx);
			}
			close(fd);
		}
	}
}

/*
 * skb_set_tunnel_key's flag and size checks, and what skb_get_tunnel_key
 * reads back in the same run: the program sets a key, gets it into a
 * zeroed buffer, stores that buffer over the packet's first 44 bytes and
 * returns (get's result << 16) | set's result, both truncated to 16 bits.
 */
static void test_tunnel_key(void)
{
	static const struct {
		uint32_t ssize;
		uint64_t sflags;
		uint32_t label;
		uint16_t ext;
		uint32_t gsize;
		uint64_t gflags;
	} cases[] = {
		{ 44, 0, 0, 0, 44, 0 },
		{ 44, 0, 0, 0, 44, BPF_F_TUNINFO_FLAGS },
		{ 44, BPF_F_TUNINFO_IPV6, 0xabcdef12, 0, 44, BPF_F_TUNINFO_IPV6 | BPF_F_TUNINFO_FLAGS },
		{ 44, BPF_F_TUNINFO_IPV6, 0, 0, 44, 0 },
		{ 44, 0, 0, 0, 44, BPF_F_TUNINFO_IPV6 },
		{ 44, 2 | 4 | 8, 0, 0, 44, BPF_F_TUNINFO_FLAGS },
		{ 44, 16, 0, 0, 44, BPF_F_TUNINFO_FLAGS },
		{ 44, 1 | 2 | 4 | 8 | 16, 0x12345, 0, 44, 1 | BPF_F_TUNINFO_FLAGS },
		{ 44, 32, 0, 0, 44, 0 },
		{ 44, 1ull << 40, 0, 0, 44, 0 },
		{ 44, 0, 7, 0, 44, 0 },
		{ 44, 0, 0, 1, 44, 0 },
		{ 44, BPF_F_TUNINFO_IPV6, 0, 0x100, 44, BPF_F_TUNINFO_IPV6 },
		{ 40, 0, 0, 0, 44, 0 },
		{ 40, BPF_F_TUNINFO_IPV6, 0, 0, 40, BPF_F_TUNINFO_IPV6 },
		{ 28, 0, 0, 0, 28, 0 },
		{ 28, BPF_F_TUNINFO_IPV6, 0x99, 0, 28, BPF_F_TUNINFO_IPV6 },
		{ 24, 0, 0, 0, 24, 0 },
		{ 22, 0, 0, 0, 22, 0 },
		{ 22, 0, 0, 0, 8, 0 },
		{ 22, BPF_F_TUNINFO_IPV6, 0, 0, 8, BPF_F_TUNINFO_IPV6 },
		{ 8, 0, 0, 0, 44, 0 },
		{ 8, BPF_F_TUNINFO_IPV6, 0, 0, 44, BPF_F_TUNINFO_IPV6 },
		{ 12, 0, 0, 0, 44, 0 },
		{ 4, 0, 0, 0, 44, 0 },
		{ 20, 0, 0, 0, 44, 0 },
		{ 21, 0, 0, 0, 44, 0 },
		{ 30, 0, 0, 0, 44, 0 },
		{ 46, 0, 0, 0, 44, 0 },
		{ 44, 0, 0, 0, 12, 0 },
		{ 44, 0, 0, 0, 44, 4 },
	};
	uint8_t pkt[64];
	struct run k, u;
	size_t c;

	fill(pkt, sizeof(pkt), 5);
	pkt[12] = 0x08;
	pkt[13] = 0x00;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint8_t key[48], got[44];
		struct xbpf_insn prog[64];
		int n = 0, j, fd;

		fill(key, sizeof(key), (uint32_t)c + 11);
		memcpy(key + 22, &cases[c].ext, 2);
		memcpy(key + 24, &cases[c].label, 4);
		prog[n++] = I(MOV64X(BPF_REG_6, BPF_REG_1));
		for (j = 0; j < 12; j++) {
			uint32_t w;

			memcpy(&w, key + 4 * j, 4);
			prog[n++] = I(ST(W, BPF_REG_10, -48 + 4 * j, (int32_t)w));
			if (j < 11)
				prog[n++] = I(ST(W, BPF_REG_10, -96 + 4 * j, 0));
		}
		prog[n++] = I(MOV64X(BPF_REG_1, BPF_REG_6));
		prog[n++] = I(MOV64X(BPF_REG_2, BPF_REG_10));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -48));
		prog[n++] = I(MOV64K(BPF_REG_3, (int32_t)cases[c].ssize));
		prog[n++] = I(INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_4, 0, 0, (int32_t)cases[c].sflags));
		prog[n++] = I(INSN(0, 0, 0, 0, (int32_t)(cases[c].sflags >> 32)));
		prog[n++] = I(CALL_HELPER(BPF_FUNC_skb_set_tunnel_key));
		prog[n++] = I(MOV64X(BPF_REG_7, BPF_REG_0));
		prog[n++] = I(MOV64X(BPF_REG_1, BPF_REG_6));
		prog[n++] = I(MOV64X(BPF_REG_2, BPF_REG_10));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -96));
		prog[n++] = I(MOV64K(BPF_REG_3, (int32_t)cases[c].gsize));
		prog[n++] = I(MOV64K(BPF_REG_4, (int32_t)cases[c].gflags));
		prog[n++] = I(CALL_HELPER(BPF_FUNC_skb_get_tunnel_key));
		prog[n++] = I(MOV64X(BPF_REG_8, BPF_REG_0));
		prog[n++] = I(MOV64X(BPF_REG_1, BPF_REG_6));
		prog[n++] = I(MOV64K(BPF_REG_2, 0));
		prog[n++] = I(MOV64X(BPF_REG_3, BPF_REG_10));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -96));
		prog[n++] = I(MOV64K(BPF_REG_4, 44));
		prog[n++] = I(MOV64K(BPF_REG_5, 0));
		prog[n++] = I(CALL_HELPER(BPF_FUNC_skb_store_bytes));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_7, 0, 0, 0xffff));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_8, 0, 0, 0xffff));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_8, 0, 0, 16));
		prog[n++] = I(MOV64X(BPF_REG_0, BPF_REG_7));
		prog[n++] = I(INSN(BPF_ALU64 | BPF_OR | BPF_X, BPF_REG_0, BPF_REG_8, 0, 0));
		prog[n++] = I(EXIT());
		fd = prog_load(BPF_PROG_TYPE_SCHED_CLS, prog, (size_t)n);
		if (fd < 0) {
			test_failures++;
			return;
		}
		kernel_run(fd, pkt, sizeof(pkt), NULL, 0, sizeof(k.data), &k);
		close(fd);

		/* ours: the same three helper calls on a context from the same options */
		{
			XBPF_OPTS(xbpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
				  .data_out = u.data, .data_size_out = sizeof(u.data));
			struct xbpf_run_ctx *ctx;
			uint64_t sret, gret;
			void *r1;

			memset(&u, 0, sizeof(u));
			memset(got, 0, sizeof(got));
			u.err = xbpf_run_ctx__new(XBPF_PROG_SCHED_CLS, &o, &ctx);
			if (!u.err) {
				r1 = xbpf_run_ctx__r1(ctx);
				sret = xbpf_helper_impl(BPF_FUNC_skb_set_tunnel_key)
					       ((uintptr_t)r1, (uintptr_t)key, cases[c].ssize,
						    cases[c].sflags, 0);
				gret = xbpf_helper_impl(BPF_FUNC_skb_get_tunnel_key)
					       ((uintptr_t)r1, (uintptr_t)got, cases[c].gsize,
						    cases[c].gflags, 0);
				xbpf_helper_impl(BPF_FUNC_skb_store_bytes)
					((uintptr_t)r1, 0, (uintptr_t)got, sizeof(got), 0);
				u.retval = (uint32_t)(((gret & 0xffff) << 16) | (sret & 0xffff));
				u.err = xbpf_run_ctx__finish(ctx, &o);
				u.data_size = o.data_size_out;
				xbpf_run_ctx__free(ctx);
			}
		}
		if (compare("tunnel_key", (long)c, &k, &u)) {
			for (j = 0; j < 44; j++)
				fprintf(stderr, "%02x%s", k.data[j], j == 43 ? " kernel\n" : "");
			for (j = 0; j < 44; j++)
				fprintf(stderr, "%02x%s", u.data[j], j == 43 ? " ours\n" : "");
		}
	}
}

static int quiet(enum xbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(void)
{
	struct bpf_insn probe[] = { MOV64K(BPF_REG_0, 2), EXIT() };
	int fd;

	xbpf_set_print(quiet);
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xbpf_c2_probe", "GPL", probe, 2, NULL);
	if (fd < 0) {
		printf("SKIP: cannot load BPF programs here (%s)\n", strerror(errno));
		return 77;
	}
	close(fd);
	test_xdp_adjust();
	test_xdp_ctx();
	test_csum_diff();
	test_skb_helpers();
	test_skb_room();
	test_ctx_fields();
	test_tunnel_key();
	TEST_DONE();
}
