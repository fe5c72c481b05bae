/* SPDX-License-Identifier: MIT */
/*
 * bench_jit.c - xbpf-bench-jit: ns per packet of the JIT against the
 * interpreter and the kernel's JIT (BPF_PROG_TEST_RUN with repeat), on the
 * seeds' two LB programs (their harness's packets) and on xlb's balancer
 * (one VIP, one real, TCP flow), all measured in one run; prints JIT/interp
 * and JIT/kernel ratios.  Userspace figures exclude the packet restore
 * before each run (timed separately), as the kernel's exclude its setup.
 *
 * With --like-kernel every engine is timed as the kernel is: one test_run
 * with repeat, the packet not restored between runs, integer ns per run;
 * then a program that rewrites its packet is timed on the same path in
 * every column.
 *
 * usage: xbpf-bench-jit [--seeds-dir DIR] [--workdir DIR] [--balancer OBJ]
 *                       [--repeat N] [--rounds R] [--like-kernel]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "testbed.h"
#include "xlb_shared.h"

#ifndef XLB_SEEDS_DIR
#define XLB_SEEDS_DIR "../shared/seeds"
#endif
#ifndef XLB_SEED_SCRIPT
#define XLB_SEED_SCRIPT "testbed/build-seed-progs.py"
#endif
#ifndef XLB_BALANCER_OBJ
#define XLB_BALANCER_OBJ "dataplane/balancer.bpf.o"
#endif

enum { E_INTERP, E_JIT, E_KERNEL, E_CNT };
static const enum testbed_engine_kind kinds[E_CNT] = { TESTBED_ENGINE_INTERP, TESTBED_ENGINE_JIT, TESTBED_ENGINE_KERNEL };

static int repeat = 2000, rounds = 60; /* many short rounds: the best one escapes a busy host */
static bool like_kernel; /* time every engine by test_run with repeat, as the kernel */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Kernel (or, like_kernel, any engine): lowest test_run mean of `rounds` runs (least disturbed). */
static double measure_kernel(struct testbed_engine *e, const uint8_t *pkt, uint32_t len, uint32_t *ret_retval)
{
	double best = -1;

	for (int r = 0; r < rounds; r++) {
		uint8_t out[512];
		XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = pkt, .data_size_in = len, .data_out = out,
			  .data_size_out = sizeof(out), .repeat = repeat);

		if (testbed_engine__test_run(e, &opts))
			return -1;
		*ret_retval = opts.retval;
		if (best < 0 || opts.duration < best)
			best = opts.duration;
	}
	return best;
}

/*
 * Userspace engines: the packet must be restored before every run (the LB
 * programs encapsulate it), so time restore+run and restore alone, best of
 * `rounds` each, and report the difference, in fractional ns.
 */
static double measure_user(struct testbed_engine *e, enum xbpf_prog_type type, const uint8_t *pkt, uint32_t len,
			   uint32_t *ret_retval)
{
	struct xbpf_vm *vm = testbed_engine__vm(e);
	XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = pkt, .data_size_in = len);
	struct xbpf_run_ctx *ctx = NULL;
	double best_both = -1, best_reset = -1;
	uint64_t r0 = 0;

	if (!vm)
		return -1;
	{
		/* One checked run first: a program that stops early (missing helper) is not timed. */
		uint8_t out[512];
		XBPF_OPTS(xbpf_test_run_opts, check, .data_in = pkt, .data_size_in = len, .data_out = out,
			  .data_size_out = sizeof(out), .repeat = 1);

		if (testbed_engine__test_run(e, &check))
			return -1;
	}
	if (xbpf_run_ctx__new(type, &opts, &ctx))
		return -1;
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns(), t1;

		for (int i = 0; i < repeat; i++)
			xbpf_run_ctx__reset(ctx);
		t1 = now_ns() - t0;
		if (best_reset < 0 || t1 < best_reset)
			best_reset = t1;
		t0 = now_ns();
		for (int i = 0; i < repeat; i++) {
			xbpf_run_ctx__reset(ctx);
			r0 = xbpf_vm__exec(vm, xbpf_run_ctx__r1(ctx), xbpf_run_ctx__r2(ctx));
		}
		t1 = now_ns() - t0;
		if (best_both < 0 || t1 < best_both)
			best_both = t1;
	}
	xbpf_run_ctx__free(ctx);
	*ret_retval = (uint32_t)r0;
	return best_both > best_reset ? (best_both - best_reset) / repeat : 0;
}

static double measure(int engine, struct testbed_engine *e, enum xbpf_prog_type type, const uint8_t *pkt,
		      uint32_t len, uint32_t *ret_retval)
{
	if (engine == E_KERNEL || like_kernel)
		return measure_kernel(e, pkt, len, ret_retval);
	return measure_user(e, type, pkt, len, ret_retval);
}

static void print_header(void)
{
	printf("%-22s %-8s %9s %9s %9s %11s %11s\n", "program", "packet", "interp", "jit", "kernel",
	       "jit/interp", "jit/kernel");
}

static void print_row(const char *prog, const char *pkt, struct testbed_engine *const eng[E_CNT],
		      enum xbpf_prog_type type, const uint8_t *data, uint32_t len)
{
	double ns[E_CNT];
	uint32_t rv[E_CNT] = { 0 };
	char cell[E_CNT][16], r1[16] = "-", r2[16] = "-";

	for (int e = 0; e < E_CNT; e++) {
		ns[e] = eng[e] ? measure(e, eng[e], type, data, len, &rv[e]) : -1;
		if (ns[e] < 0)
			snprintf(cell[e], sizeof(cell[e]), "-");
		else
			snprintf(cell[e], sizeof(cell[e]), "%.1f", ns[e]);
	}
	if (ns[E_JIT] > 0 && ns[E_INTERP] > 0)
		snprintf(r1, sizeof(r1), "%.3f", ns[E_JIT] / ns[E_INTERP]);
	if (ns[E_JIT] > 0 && ns[E_KERNEL] > 0)
		snprintf(r2, sizeof(r2), "%.3f", ns[E_JIT] / ns[E_KERNEL]);
	printf("%-22s %-8s %9s %9s %9s %11s %11s\n", prog, pkt, cell[E_INTERP], cell[E_JIT], cell[E_KERNEL],
	       r1, r2);
	if (ns[E_KERNEL] >= 0 && !like_kernel) {
		/*
		 * BPF_PROG_TEST_RUN with repeat runs on the packet the previous
		 * iteration left: a program that rewrites it (encapsulation) is
		 * timed on a different path after the first run (like_kernel:
		 * in every column alike).
		 */
		uint8_t out[512];
		XBPF_OPTS(xbpf_test_run_opts, once, .data_in = data, .data_size_in = len, .data_out = out,
			  .data_size_out = sizeof(out), .repeat = 1);

		if (!testbed_engine__test_run(eng[E_KERNEL], &once) && once.retval != rv[E_KERNEL]) {
			double best = -1;

			/* time single runs instead, each on the original packet */
			for (int i = 0; i < rounds * 50; i++) {
				once.data_size_out = sizeof(out);
				if (!testbed_engine__test_run(eng[E_KERNEL], &once) && (best < 0 || once.duration < best))
					best = once.duration;
			}
			printf("  (kernel: first run returns %u, repeated runs %u as they see the packet the run "
			       "before rewrote: the kernel column times another path.  Best single kernel run, "
			       "setup included, so an upper bound: %.1f ns; jit/that: %.3f)\n",
			       once.retval, rv[E_KERNEL], best, best > 0 ? ns[E_JIT] / best : 0);
			rv[E_KERNEL] = once.retval;
		}
	}
	for (int e = 0; e < E_CNT; e++)
		if (ns[e] >= 0 && ns[E_JIT] >= 0 && rv[e] != rv[E_JIT])
			printf("  (warning: %s returned %u, the JIT %u)\n", testbed_engine_kind_name(kinds[e]), rv[e],
			       rv[E_JIT]);
}

/* Open prog in every engine; an engine missing or refusing it leaves NULL (and says why). */
static void open_all(const char *label, const struct testbed_prog_src *src, struct testbed_engine *eng[E_CNT])
{
	for (int e = 0; e < E_CNT; e++) {
		struct testbed_engine_opts o = { 0 };
		int err = testbed_engine__open(kinds[e], src, &o, &eng[e]);

		if (err == -EACCES || err == -EINVAL) {
			/* measure the engine even where our verifier still disagrees */
			o.skip_verify = true;
			err = testbed_engine__open(kinds[e], src, &o, &eng[e]);
			if (!err)
				printf("(%s: %s runs unverified: our verifier rejects it)\n", label,
				       testbed_engine_kind_name(kinds[e]));
		}
		if (err) {
			printf("(%s: no %s engine: %s)\n", label, testbed_engine_kind_name(kinds[e]), strerror(-err));
			eng[e] = NULL;
			continue;
		}
		if (kinds[e] == TESTBED_ENGINE_JIT && xbpf_vm__engine(testbed_engine__vm(eng[e])) != XBPF_ENGINE_JIT) {
			printf("(%s: the JIT fell back to the interpreter)\n", label);
			eng[e] = testbed_engine__close(eng[e]);
		}
	}
}

static void bench_seeds(const char *seeds_dir, const char *workdir)
{
	int status = seed_lb_build(XLB_SEED_SCRIPT, seeds_dir, workdir);
	const struct seed_lb_packet *pkts;

	if (status) {
		printf("(seeds' LB programs: %s)\n", status == 77 ? "seeds absent, skipped" : "build failed");
		return;
	}
	seed_lb_packets(&pkts);
	for (size_t i = 0; i < seed_lb_prog_cnt; i++) {
		const struct seed_lb_prog *sp = &seed_lb_progs[i];
		struct testbed_engine *eng[E_CNT];
		struct testbed_prog_src src = { 0 };
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s.o", workdir, sp->name);
		src.path = path;
		src.prog_name = sp->prog;
		open_all(sp->name, &src, eng);
		for (int e = 0; e < E_CNT; e++)
			if (eng[e] && seed_lb_setup(eng[e])) {
				printf("(%s: %s map setup failed)\n", sp->name, testbed_engine_kind_name(kinds[e]));
				eng[e] = testbed_engine__close(eng[e]);
			}
		for (int p = 0; p < 2; p++)
			print_row(sp->name, p ? "pkt_v6" : "pkt_v4", eng, sp->type, pkts[p].data, pkts[p].len);
		for (int e = 0; e < E_CNT; e++)
			testbed_engine__close(eng[e]);
	}
}

/* One VIP 10.0.0.1:80/tcp, one real 10.1.0.1 in every ring slot, IPIP out. */
static int balancer_setup(struct testbed_engine *e)
{
	struct xlb_vip_key vk = { .port = htons(80), .proto = 6, .family = XLB_FAMILY_V4 };
	struct xlb_vip_meta vm = { .vip_num = 0 };
	struct xlb_real real = { .family = XLB_FAMILY_V4 };
	struct xlb_config cfg = { .gw_mac = { 2, 0, 0, 0, 0, 1 }, .src4_plen = 16 };
	uint32_t key = 1, zero = 0;
	int err;

	vk.addr.v4 = inet_addr("10.0.0.1");
	real.addr.v4 = inet_addr("10.1.0.1");
	cfg.src4 = inet_addr("10.255.0.0");
	err = testbed_engine__map_update(e, "xlb_vips", &vk, &vm);
	err = err ?: testbed_engine__map_update(e, "xlb_reals", &key, &real);
	err = err ?: testbed_engine__map_update(e, "xlb_config", &zero, &cfg);
	for (uint32_t slot = 0; slot < XLB_RING_SIZE && !err; slot++)
		err = testbed_engine__map_update(e, "xlb_rings", &slot, &key); /* VIP 0, half 0 */
	return err;
}

static uint32_t balancer_packet(uint8_t *p)
{
	static const uint8_t l2[14] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 3, 0x08, 0x00 };
	uint8_t *ip = p + 14, *tcp = ip + 20;
	uint32_t len = 14 + 20 + 20 + 16;
	uint32_t sum = 0;

	memset(p, 0, len);
	memcpy(p, l2, sizeof(l2));
	ip[0] = 0x45;
	ip[2] = (uint8_t)((len - 14) >> 8);
	ip[3] = (uint8_t)(len - 14);
	ip[8] = 64;
	ip[9] = 6;
	*(uint32_t *)(ip + 12) = inet_addr("192.168.1.2");
	*(uint32_t *)(ip + 16) = inet_addr("10.0.0.1");
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
	tcp[0] = 12345 >> 8;
	tcp[1] = 12345 & 0xff;
	tcp[3] = 80;
	tcp[12] = 5 << 4;
	tcp[13] = 0x10; /* ACK: an established flow */
	return len;
}

#define I(c, d, s, o, i) ((struct xbpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/*
 * A compute-bound XDP program without helpers, so that the figures show the
 * generated code rather than the runtime's helpers: main checks 64 bytes of
 * packet, then four noinline calls each mix 16 bytes into an FNV/xorshift
 * hash (mul, shifts, xor, add, one div per word).
 */
static size_t synthetic_prog(struct xbpf_insn *p)
{
	size_t n = 0, call_at[4], check_at;
	uint64_t fnv = 0xcbf29ce484222325ULL;

	p[n++] = I(XBPF_LDX | XBPF_MEM | XBPF_W, 2, 1, 0, 0);
	p[n++] = I(XBPF_LDX | XBPF_MEM | XBPF_W, 3, 1, 4, 0);
	p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 4, 2, 0, 0);
	p[n++] = I(XBPF_ALU64 | XBPF_ADD | XBPF_K, 4, 0, 0, 64);
	check_at = n;
	p[n++] = I(XBPF_JMP | XBPF_JGT | XBPF_X, 4, 3, 0, 0);
	p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 6, 2, 0, 0);
	p[n++] = I(XBPF_LD | XBPF_DW | XBPF_IMM, 7, 0, 0, (int32_t)(uint32_t)fnv);
	p[n++] = I(0, 0, 0, 0, (int32_t)(uint32_t)(fnv >> 32));
	for (int k = 0; k < 4; k++) {
		p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 1, 6, 0, 0);
		p[n++] = I(XBPF_ALU64 | XBPF_ADD | XBPF_K, 1, 0, 0, 16 * k);
		p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 2, 7, 0, 0);
		call_at[k] = n;
		p[n++] = I(XBPF_JMP | XBPF_CALL, 0, XBPF_PSEUDO_CALL, 0, 0);
		p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 7, 0, 0, 0);
	}
	p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 0, 7, 0, 0);
	p[n++] = I(XBPF_ALU64 | XBPF_AND | XBPF_K, 0, 0, 0, 3);
	p[n++] = I(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0);
	p[check_at].off = (int16_t)(n - check_at - 1);
	p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_K, 0, 0, 0, 1); /* drop */
	p[n++] = I(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0);
	/* hash16(r1 = packet + 16k, r2 = h) */
	for (int k = 0; k < 4; k++)
		p[call_at[k]].imm = (int32_t)(n - call_at[k] - 1);
	p[n++] = I(XBPF_LD | XBPF_DW | XBPF_IMM, 4, 0, 0, 0x1b3);
	p[n++] = I(0, 0, 0, 0, 0x100);
	for (int w = 0; w < 2; w++) {
		p[n++] = I(XBPF_LDX | XBPF_MEM | XBPF_DW, 3, 1, (int16_t)(8 * w), 0);
		for (int round = 0; round < 8; round++) {
			p[n++] = I(XBPF_ALU64 | XBPF_XOR | XBPF_X, 2, 3, 0, 0);
			p[n++] = I(XBPF_ALU64 | XBPF_MUL | XBPF_X, 2, 4, 0, 0);
			p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 5, 2, 0, 0);
			p[n++] = I(XBPF_ALU64 | XBPF_RSH | XBPF_K, 5, 0, 0, 29 + round);
			p[n++] = I(XBPF_ALU64 | XBPF_XOR | XBPF_X, 2, 5, 0, 0);
			p[n++] = I(XBPF_ALU64 | XBPF_ADD | XBPF_K, 2, 0, 0, 0x9e3779b9 + round);
			p[n++] = I(XBPF_ALU | XBPF_MOV | XBPF_X, 3, 2, 0, 0);
			p[n++] = I(XBPF_ALU | XBPF_LSH | XBPF_K, 3, 0, 0, 7 + round);
		}
		p[n++] = I(XBPF_ALU64 | XBPF_DIV | XBPF_K, 2, 0, 0, 7 + w); /* one division per word */
	}
	p[n++] = I(XBPF_ALU64 | XBPF_MOV | XBPF_X, 0, 2, 0, 0);
	p[n++] = I(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0);
	return n;
}

static void bench_synthetic(const char *workdir)
{
	struct xbpf_insn insns[512];
	size_t n = synthetic_prog(insns);
	char path[4096];
	struct testbed_prog_src src = { .path = path, .raw_type = XBPF_PROG_XDP };
	struct testbed_engine *eng[E_CNT];
	uint8_t pkt[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/synthetic-hash.bin", workdir);
	f = fopen(path, "wb");
	if (!f || fwrite(insns, sizeof(insns[0]), n, f) != n) {
		printf("(synthetic: cannot write %s)\n", path);
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 37 + 11);
	open_all("synthetic-hash", &src, eng);
	print_row("synthetic-hash", "128B", eng, XBPF_PROG_XDP, pkt, sizeof(pkt));
	for (int e = 0; e < E_CNT; e++)
		testbed_engine__close(eng[e]);
}

static void bench_balancer(const char *obj)
{
	struct testbed_prog_src src = { .path = obj, .prog_name = "xlb_balancer" };
	struct testbed_engine *eng[E_CNT];
	uint8_t pkt[128];
	uint32_t len;
	FILE *f = fopen(obj, "rb");

	if (!f) {
		printf("(xlb balancer: %s absent, skipped)\n", obj);
		return;
	}
	fclose(f);
	open_all("xlb_balancer", &src, eng);
	for (int e = 0; e < E_CNT; e++)
		if (eng[e] && balancer_setup(eng[e])) {
			printf("(xlb_balancer: %s map setup failed)\n", testbed_engine_kind_name(kinds[e]));
			eng[e] = testbed_engine__close(eng[e]);
		}
	len = balancer_packet(pkt);
	print_row("xlb_balancer", "tcp_v4", eng, XBPF_PROG_XDP, pkt, len);
	for (int e = 0; e < E_CNT; e++)
		testbed_engine__close(eng[e]);
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "seeds-dir", required_argument, NULL, 'd' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "balancer", required_argument, NULL, 'b' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "like-kernel", no_argument, NULL, 'k' },
		{},
	};
	const char *seeds_dir = XLB_SEEDS_DIR, *workdir = "/tmp/xbpf-bench-jit", *balancer = XLB_BALANCER_OBJ;
	int c;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd': seeds_dir = optarg; break;
		case 'w': workdir = optarg; break;
		case 'b': balancer = optarg; break;
		case 'r': repeat = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		case 'k': like_kernel = true; break;
		default:
			fprintf(stderr, "usage: xbpf-bench-jit [--seeds-dir DIR] [--workdir DIR] [--balancer OBJ] "
					"[--repeat N] [--rounds R] [--like-kernel]\n");
			return 2;
		}
	}
	if (repeat < 1 || rounds < 1)
		return 2;
	if (!testbed_kernel_available())
		printf("(no kernel engine in this build: kernel column empty)\n");
	printf("xbpf-bench-jit: ns/packet, best of %d rounds x %d runs; ratios from this run%s\n", rounds, repeat,
	       like_kernel ? "; every engine timed as the kernel (test_run repeat, no restore)" : "");
	print_header();
	if (mkdir(workdir, 0755) && errno != EEXIST)
		fprintf(stderr, "mkdir %s: %s\n", workdir, strerror(errno));
	bench_synthetic(workdir);
	bench_seeds(seeds_dir, workdir);
	bench_balancer(balancer);
	return 0;
}
