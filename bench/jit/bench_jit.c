/* SPDX-License-Identifier: MIT */
/*
 * bench_jit.c - xbpf-bench-jit: ns per packet of xlb's interpreter and JIT
 * against the kernel's JIT, on a synthetic compute-bound program, the
 * seeds' two LB programs (their harness's packets) and xlb's balancer (an
 * established flow), all in one run; prints jit/kernel, interp/kernel and
 * jit/interp ratios, each taken within a round and given as min / median /
 * max over the rounds.
 *
 * Every engine is timed through bench_path (bench/lib): each run sees the
 * named packet (XDP frames restored before every run, the restore and a
 * null program's entry subtracted alike on every engine; the tc program
 * leaves its packet as it is and is timed by test_run with repeat), the
 * three engines interleaved round by round, and the programs' own counters
 * must prove the path (the seeds' VIP packet and LRU-miss counters, the
 * balancer's LRU hits), or the row says what went wrong instead of a
 * figure.  --like-kernel is accepted for older scripts: every engine is
 * now timed the kernel's way (the wrapper's semantics) by default.
 *
 * Pinned to the CPU it starts on, on purpose: per-CPU LRUs and counters.
 *
 * usage: xbpf-bench-jit [--seeds-dir DIR] [--workdir DIR] [--balancer OBJ]
 *                       [--pristine OBJ] [--repeat N] [--rounds R] [--json FILE]
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

#include "bench_path.h"
#include "bench_report.h"
#include "testbed.h"
#include "xlb_shared.h"

#ifndef XLB_SEEDS_DIR
#define XLB_SEEDS_DIR "../shared/seeds"
#endif
#ifndef XLB_SEED_SCRIPT
#define XLB_SEED_SCRIPT "testbed/build-seed-progs.py"
#endif
#ifndef XLB_PRISTINE_OBJ
#define XLB_PRISTINE_OBJ "bench/lib/pristine.bpf.o"
#endif
#ifndef XLB_BALANCER_OBJ
#define XLB_BALANCER_OBJ "dataplane/balancer.bpf.o"
#endif

enum { E_INTERP, E_JIT, E_KERNEL, E_CNT };
static const enum testbed_engine_kind kinds[E_CNT] = { TESTBED_ENGINE_INTERP, TESTBED_ENGINE_JIT, TESTBED_ENGINE_KERNEL };

static int repeat = 4000, rounds = 15;
static struct bench_path *bp;
static FILE *json;

/* the seeds' struct lb_stats / vip_stats: packets at byte 8, the LRU-miss and ring-pick counters at 0 */
#define SEED_VIP_PKTS { "stats", SEED_VIP_NUM, 8, 1 }

static void print_header(void)
{
	printf("%-20s %-8s %9s %9s %9s  %-23s %-23s %s\n", "program", "packet", "interp", "jit", "kernel",
	       "jit/kernel min/med/max", "interp/kernel", "jit/interp");
}

static void ratio_cell(char *buf, size_t len, const struct bench_stats *s)
{
	if (s->n)
		snprintf(buf, len, "%.3f/%.3f/%.3f", s->min, s->median, s->max);
	else
		snprintf(buf, len, "-");
}

/*
 * One row: the three engines interleaved round by round on one case (the
 * engines differ, the packet, expected action and counters do not).
 */
static void print_row(const char *prog, const char *pkt, struct testbed_engine *const eng[E_CNT],
		      const struct bench_case *tmpl)
{
	struct bench_case cases[E_CNT];
	double ns[E_CNT * rounds];
	int errs[E_CNT];
	char whys[E_CNT][BENCH_WHY_MAX], name[64], cells[E_CNT][16], rc[3][32];
	struct bench_row rows[E_CNT] = { 0 };
	struct bench_stats med[E_CNT] = { 0 };

	snprintf(name, sizeof(name), "%s %s", prog, pkt);
	for (int e = 0; e < E_CNT; e++) {
		cases[e] = *tmpl;
		cases[e].name = name;
		cases[e].engine = eng[e];
	}
	bench_path__interleave(bp, cases, E_CNT, rounds, repeat, ns, errs, whys);
	for (int e = 0; e < E_CNT; e++) {
		rows[e] = (struct bench_row){ .bench = "engines", .name = name, .unit = "ns/pkt",
					      .engine = testbed_engine_kind_name(kinds[e]) };
		if (errs[e]) {
			rows[e].error = whys[e];
			snprintf(cells[e], sizeof(cells[e]), "-");
			continue;
		}
		bench_stats_of(&ns[e * rounds], rounds, &med[e]);
		snprintf(cells[e], sizeof(cells[e]), "%.1f", med[e].median);
		if (e != E_KERNEL && !errs[E_KERNEL]) {
			rows[e].ref = "kernel";
			bench_row_fill(&rows[e], &ns[e * rounds], &ns[E_KERNEL * rounds], rounds);
		} else {
			bench_row_fill(&rows[e], &ns[e * rounds], NULL, rounds);
		}
	}
	{
		struct bench_row ji = { 0 };

		if (!errs[E_JIT] && !errs[E_INTERP])
			bench_row_fill(&ji, &ns[E_JIT * rounds], &ns[E_INTERP * rounds], rounds);
		ratio_cell(rc[0], sizeof(rc[0]), &rows[E_JIT].ratio);
		ratio_cell(rc[1], sizeof(rc[1]), &rows[E_INTERP].ratio);
		ratio_cell(rc[2], sizeof(rc[2]), &ji.ratio);
	}
	printf("%-20s %-8s %9s %9s %9s  %-23s %-23s %s\n", prog, pkt, cells[E_INTERP], cells[E_JIT],
	       cells[E_KERNEL], rc[0], rc[1], rc[2]);
	for (int e = 0; e < E_CNT; e++) {
		if (errs[e] && eng[e])
			printf("  (%s not measured: %s)\n", testbed_engine_kind_name(kinds[e]), whys[e]);
		if (json && eng[e])
			bench_report_row(NULL, json, &rows[e]);
	}
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
		for (int p = 0; p < 2; p++) {
			/* the seeds' path: the VIP counted, the LRU missed, a real picked from the ring */
			struct bench_case c = { .pkt = pkts[p].data, .len = pkts[p].len, .retval = sp->expect_retval,
						.type = sp->type, .counters = { SEED_VIP_PKTS } };

			if (sp->type == XBPF_PROG_XDP) {
				c.counters[1] = (struct bench_counter){ "stats", 512, 0, 1 };
				c.counters[2] = (struct bench_counter){ "stats", 513, 0, 1 };
			}
			print_row(sp->name, p ? "pkt_v6" : "pkt_v4", eng, &c);
		}
		for (int e = 0; e < E_CNT; e++)
			testbed_engine__close(eng[e]);
	}
}

/*
 * One VIP 10.0.0.1:80/tcp, one real 10.1.0.1 in every ring slot, IPIP out,
 * with the established-flow fast path as xlbd sets it (an epoch in the
 * meta and in xlb_vip_fast).
 */
static int balancer_setup(struct testbed_engine *e)
{
	struct xlb_vip_key vk = { .port = htons(80), .proto = 6, .family = XLB_FAMILY_V4 };
	struct xlb_vip_meta vm = { .vip_num = 0, .epoch = 1 };
	int cnt = testbed_engine__map_value_cnt(e, "xlb_vip_fast");
	struct xlb_vip_fast fast[cnt > 0 ? cnt : 1];
	struct xlb_real real = { .family = XLB_FAMILY_V4 };
	struct xlb_config cfg = { .gw_mac = { 2, 0, 0, 0, 0, 1 }, .src4_plen = 16 };
	uint32_t key = 1, zero = 0;
	int err;

	vk.addr.v4 = inet_addr("10.0.0.1");
	real.addr.v4 = inet_addr("10.1.0.1");
	cfg.src4 = inet_addr("10.255.0.0");
	for (int c = 0; c < cnt; c++)
		fast[c] = (struct xlb_vip_fast){ .epoch = vm.epoch, .encap = vm.encap };
	err = cnt > 0 ? testbed_engine__map_update(e, "xlb_vip_fast", &vm.vip_num, fast) : -EINVAL;
	err = err ?: testbed_engine__map_update(e, "xlb_vips", &vk, &vm);
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

/* What synthetic_prog returns for pkt, computed in C from the same definition. */
static uint32_t synthetic_result(const uint8_t *pkt)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int k = 0; k < 4; k++) {
		for (int w = 0; w < 2; w++) {
			uint64_t r3;

			memcpy(&r3, pkt + 16 * k + 8 * w, sizeof(r3));
			for (int round = 0; round < 8; round++) {
				h ^= r3;
				h *= 0x100000001b3ULL;
				h ^= h >> (29 + round);
				h += (uint64_t)(int64_t)(int32_t)(0x9e3779b9u + (uint32_t)round);
				r3 = (uint32_t)((uint32_t)h << (7 + round));
			}
			h /= (uint64_t)(7 + w);
		}
	}
	return (uint32_t)(h & 3);
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
	{
		/* no maps: the path is proven by the hash it returns (computed here from the same bytes) */
		struct bench_case c = { .pkt = pkt, .len = sizeof(pkt), .retval = synthetic_result(pkt) };

		print_row("synthetic-hash", "128B", eng, &c);
	}
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
	{
		/* an established flow: an LRU hit, no new flow, XDP_TX */
		struct bench_case c = { .pkt = pkt, .len = len, .retval = 3,
			.counters = { { "xlb_event_stats", XLB_EV_LRU_HIT, offsetof(struct xlb_counter, packets), 1 },
				      { "xlb_event_stats", XLB_EV_NEW_FLOW, offsetof(struct xlb_counter, packets), 0 },
				      { "xlb_event_stats", XLB_EV_TX, offsetof(struct xlb_counter, packets), 1 } } };

		print_row("xlb_balancer", "est_v4", eng, &c);
	}
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
		{ "pristine", required_argument, NULL, 'p' },
		{ "json", required_argument, NULL, 'j' },
		{ "like-kernel", no_argument, NULL, 'k' },
		{},
	};
	const char *seeds_dir = XLB_SEEDS_DIR, *workdir = "/tmp/xbpf-bench-jit", *balancer = XLB_BALANCER_OBJ;
	const char *pristine = XLB_PRISTINE_OBJ, *json_path = NULL;
	int c, cpu;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd': seeds_dir = optarg; break;
		case 'w': workdir = optarg; break;
		case 'b': balancer = optarg; break;
		case 'r': repeat = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		case 'p': pristine = optarg; break;
		case 'j': json_path = optarg; break;
		case 'k': break; /* the default now (see the top) */
		default:
			fprintf(stderr, "usage: xbpf-bench-jit [--seeds-dir DIR] [--workdir DIR] [--balancer OBJ] "
					"[--pristine OBJ] [--repeat N] [--rounds R] [--json FILE]\n");
			return 2;
		}
	}
	if (repeat < 1 || rounds < 1)
		return 2;
	cpu = bench_path_pin_cpu();
	if (bench_path__open(pristine, &bp))
		printf("(cannot load the wrapper %s: kernel column empty)\n", pristine);
	json = bench_report_json_open(json_path);
	printf("xbpf-bench-jit: median ns/packet of %d interleaved rounds x %d runs, each run on the named packet, "
	       "path checked by counters; CPU %d; ratios round by round\n", rounds, repeat, cpu);
	print_header();
	if (mkdir(workdir, 0755) && errno != EEXIST)
		fprintf(stderr, "mkdir %s: %s\n", workdir, strerror(errno));
	bench_synthetic(workdir);
	bench_seeds(seeds_dir, workdir);
	bench_balancer(balancer);
	bench_path__close(bp);
	if (json)
		fclose(json);
	return 0;
}
