// SPDX-License-Identifier: MIT
/*
 * xlb-bench-balancer - ns per packet of the XDP balancer on its three paths
 * (established flow: LRU hit before any VIP lookup, the fast path; TCP
 * SYN: ring pick + LRU insert; non-VIP: XDP_PASS), next to the seeds'
 * test_xdp_noinline on its harness packet,
 * under the kernel, then under xlb's interpreter and JIT next to the kernel.
 *
 * Every figure is BPF_PROG_TEST_RUN with repeat through bench_path
 * (bench/lib): each run sees the named packet (the frame is restored
 * before it, the restore's cost subtracted), and the program's own counters
 * must prove the path (LRU hits, new flows, the non-VIP pass reason, the
 * seed's VIP packet counter), or the row says so instead of a figure.  The
 * cases run interleaved (A B C D A B C D ...) for --rounds rounds; each
 * ratio is taken within a round, and min / median / max are printed.
 *
 * Pinned to the CPU it starts on, on purpose: the LRU is per CPU, and an
 * established flow is only met again on the CPU that inserted it.
 *
 *   xlb-bench-balancer --balancer OBJ --pristine OBJ [--seed-script PY
 *       --seeds-dir DIR --workdir DIR] [--repeat N] [--rounds R]
 *       [--engines LIST] [--json FILE]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_path.h"
#include "bench_report.h"
#include "testbed.h"
#include "xlb_shared.h"

enum { CASE_SEED, CASE_EST, CASE_SYN, CASE_NONVIP, CASE_CNT };

static const char *const case_names[CASE_CNT] = {
	"seed test_xdp_noinline (pkt_v4: LRU miss, ring pick)",
	"established flow (LRU hit, fast path)",
	"TCP SYN (ring pick + LRU insert)",
	"non-VIP (XDP_PASS)",
};

struct pkt4 {
	uint8_t dst[6], src[6];
	uint16_t proto;
	uint8_t ver_ihl, tos;
	uint16_t tot_len, id, frag;
	uint8_t ttl, protocol;
	uint16_t check;
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t doff, flags;
	uint16_t win, csum, urg;
} __attribute__((packed));

static void tcp4(struct pkt4 *p, const char *dst, uint16_t dport, uint8_t flags)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dst, "\x02\0\0\0\0\x01", 6);
	memcpy(p->src, "\x02\0\0\0\0\x02", 6);
	p->proto = htons(0x0800);
	p->ver_ihl = 0x45;
	p->tot_len = htons(40);
	p->ttl = 64;
	p->protocol = 6;
	p->saddr = inet_addr("198.51.100.7");
	p->daddr = inet_addr(dst);
	p->sport = htons(40001);
	p->dport = htons(dport);
	p->doff = 5 << 4;
	p->flags = flags;
}

/* The non-VIP row's destination: on the VIP's subnet, not a VIP. */
#define NONVIP_ADDR "192.0.2.99"

/*
 * One VIP 192.0.2.10:80/tcp over three IPv4 reals, IPIP out, outer source
 * from config, in the maps as xlbd writes them (control/kernel_maps.c): the
 * VIP, its address in xlb_vip_addrs and the VIP address filter with its
 * bit set and enabled, so the non-VIP row times what an xlbd host does.
 */
static int setup_xlb(struct testbed_engine *e)
{
	struct xlb_vip_key vk = { .port = htons(80), .proto = 6, .family = XLB_FAMILY_V4 };
	struct xlb_vip_meta vm = { .vip_num = 0, .ring_half = 0 };
	struct xlb_config cfg = { .gw_mac = { 2, 0, 0, 0, 0, 0xfe }, .src4_plen = 16 };
	struct xlb_addr_key ak = { .family = XLB_FAMILY_V4 };
	static struct xlb_vip_filter filter = { .enabled = 1 };
	uint32_t i, val, zero = 0, bit;
	int err = 0;

	vk.addr.v4 = inet_addr("192.0.2.10");
	ak.addr = vk.addr;
	bit = xlb_vip_filter_bit(&vk.addr);
	filter.bits[bit / 64] |= 1ull << (bit % 64);
	{
		union xlb_addr other = { .v4 = inet_addr(NONVIP_ADDR) };

		/* else the non-VIP packet would pass the filter and time the VIP lookup */
		if (xlb_vip_filter_bit(&other) == bit) {
			fprintf(stderr, "bench: %s shares the VIP's filter bit\n", NONVIP_ADDR);
			return -EINVAL;
		}
	}
	err = testbed_engine__map_update(e, "xlb_vip_addrs", &ak, &vm.vip_num);
	cfg.src4 = inet_addr("10.255.0.0");
	for (i = 0; !err && i < XLB_RING_SIZE; i++) {
		val = 1 + i % 3;
		err = testbed_engine__map_update(e, "xlb_rings", &i, &val);
	}
	for (i = 1; !err && i <= 3; i++) {
		struct xlb_real r = { .family = XLB_FAMILY_V4 };

		r.addr.v4 = htonl(0x0a000000 + i);
		err = testbed_engine__map_update(e, "xlb_reals", &i, &r);
	}
	/* the VIP's established-flow fast path, as xlbd sets it: an epoch in the meta and in xlb_vip_fast */
	vm.epoch = 1;
	filter.fast_bits[bit / 64] |= 1ull << (bit % 64);
	err = err ?: testbed_engine__map_update(e, "xlb_vip_filter", &zero, &filter);
	err = err ?: testbed_engine__map_update(e, "xlb_vips", &vk, &vm);
	if (!err) {
		int cnt = testbed_engine__map_value_cnt(e, "xlb_vip_fast");
		struct xlb_vip_fast fast[cnt > 0 ? cnt : 1];

		for (int c = 0; c < cnt; c++)
			fast[c] = (struct xlb_vip_fast){ .epoch = vm.epoch, .encap = vm.encap };
		err = cnt > 0 ? testbed_engine__map_update(e, "xlb_vip_fast", &vm.vip_num, fast) : -EINVAL;
	}
	return err ?: testbed_engine__map_update(e, "xlb_config", &zero, &cfg);
}

#define EVENT(ev, n) { "xlb_event_stats", ev, offsetof(struct xlb_counter, packets), n }
#define REASON(r, n) { "xlb_reason_stats", r, offsetof(struct xlb_counter, packets), n }
/*
 * The seed's struct lb_stats { u64 v2; u64 v1; }: [vip].v1 packets to the
 * VIP, [512].v2 reals picked from the ring, [513].v2 TCP LRU misses.  Its
 * connection-rate guard never lets it insert a flow, so its harness packet
 * misses the LRU at every run: that is the seed's path, and the one checked.
 */
#define SEED_V1(key, n) { "stats", key, 8, n }
#define SEED_V2(key, n) { "stats", key, 0, n }

struct engine_cases {
	struct testbed_engine *xlb, *seed;
	struct bench_case c[CASE_CNT];
};

static struct pkt4 pkt_est, pkt_syn, pkt_nonvip;

/* The four cases on one engine kind; a program that cannot open leaves its cases' engine NULL. */
static void open_cases(enum testbed_engine_kind kind, const char *balancer, const char *seed_obj,
		       struct engine_cases *ec)
{
	struct testbed_prog_src xsrc = { .path = balancer, .prog_name = "xlb_balancer" };
	struct testbed_prog_src ssrc = { .path = seed_obj, .prog_name = "balancer_ingress" };
	struct testbed_engine_opts o = { 0 };
	const struct seed_lb_packet *pkts;

	memset(ec, 0, sizeof(*ec));
	if (testbed_engine__open(kind, &xsrc, &o, &ec->xlb) || setup_xlb(ec->xlb))
		ec->xlb = testbed_engine__close(ec->xlb);
	if (seed_obj) {
		/* our verifier may still disagree with the 2017 program: time it unverified then */
		int err = testbed_engine__open(kind, &ssrc, &o, &ec->seed);

		if (err == -EACCES || err == -EINVAL) {
			o.skip_verify = true;
			err = testbed_engine__open(kind, &ssrc, &o, &ec->seed);
		}
		if (err || seed_lb_setup(ec->seed))
			ec->seed = testbed_engine__close(ec->seed);
	}
	seed_lb_packets(&pkts);
	ec->c[CASE_SEED] = (struct bench_case){ .name = case_names[CASE_SEED], .engine = ec->seed,
		.pkt = pkts[0].data, .len = pkts[0].len, .retval = 1 /* XDP_DROP, as the seed ends */,
		.counters = { SEED_V1(SEED_VIP_NUM, 1), SEED_V2(512, 1), SEED_V2(513, 1) } };
	ec->c[CASE_EST] = (struct bench_case){ .name = case_names[CASE_EST], .engine = ec->xlb,
		.pkt = (uint8_t *)&pkt_est, .len = sizeof(pkt_est), .retval = 3 /* XDP_TX */,
		.counters = { EVENT(XLB_EV_LRU_HIT, 1), EVENT(XLB_EV_LRU_HIT_FAST, 1), EVENT(XLB_EV_NEW_FLOW, 0),
			      EVENT(XLB_EV_TX, 1) } };
	ec->c[CASE_SYN] = (struct bench_case){ .name = case_names[CASE_SYN], .engine = ec->xlb,
		.pkt = (uint8_t *)&pkt_syn, .len = sizeof(pkt_syn), .retval = 3,
		.counters = { EVENT(XLB_EV_NEW_FLOW, 1), EVENT(XLB_EV_LRU_HIT, 0), EVENT(XLB_EV_LRU_HIT_FAST, 0),
			      EVENT(XLB_EV_TX, 1) } };
	ec->c[CASE_NONVIP] = (struct bench_case){ .name = case_names[CASE_NONVIP], .engine = ec->xlb,
		.pkt = (uint8_t *)&pkt_nonvip, .len = sizeof(pkt_nonvip), .retval = 2 /* XDP_PASS */,
		.counters = { REASON(XLB_PASS_NOT_VIP, 1), EVENT(XLB_EV_TX, 0) } };
}

static void close_cases(struct engine_cases *ec)
{
	testbed_engine__close(ec->xlb);
	testbed_engine__close(ec->seed);
}

static const char *usage =
	"usage: xlb-bench-balancer --balancer OBJ --pristine OBJ [--seed-script PY --seeds-dir DIR\n"
	"                          --workdir DIR] [--repeat N] [--rounds R] [--engines kernel,interp,jit]\n"
	"                          [--json FILE]\n";

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "balancer", required_argument, NULL, 'b' }, { "pristine", required_argument, NULL, 'p' },
		{ "seed-script", required_argument, NULL, 's' }, { "seeds-dir", required_argument, NULL, 'd' },
		{ "workdir", required_argument, NULL, 'w' },	  { "repeat", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'n' },	  { "engines", required_argument, NULL, 'e' },
		{ "json", required_argument, NULL, 'j' },	  {},
	};
	const char *balancer = NULL, *pristine = NULL, *script = NULL, *seeds = NULL, *workdir = NULL;
	const char *engines = "kernel,interp,jit", *json_path = NULL;
	int repeat = 20000, rounds = 7, c, status = 0, cpu;
	struct engine_cases kern, user;
	struct bench_path *bp = NULL;
	char seed_obj[4096] = "";
	bool seeds_absent = false; /* no ../shared/seeds: its row skipped, as the tests skip */
	FILE *json;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case 'b': balancer = optarg; break;
		case 'p': pristine = optarg; break;
		case 's': script = optarg; break;
		case 'd': seeds = optarg; break;
		case 'w': workdir = optarg; break;
		case 'r': repeat = atoi(optarg); break;
		case 'n': rounds = atoi(optarg); break;
		case 'e': engines = optarg; break;
		case 'j': json_path = optarg; break;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (!balancer || !pristine || repeat < 1 || rounds < 1 || rounds > 1000) {
		fputs(usage, stderr);
		return 2;
	}
	cpu = bench_path_pin_cpu();
	if (bench_path__open(pristine, &bp)) {
		printf("SKIP: cannot load %s (root and a BPF-capable kernel needed)\n", pristine);
		return 77;
	}
	if (script && seeds && workdir) {
		int st = seed_lb_build(script, seeds, workdir);

		if (!st)
			snprintf(seed_obj, sizeof(seed_obj), "%s/test_xdp_noinline.o", workdir);
		else
			printf("(seed program not built: %s)\n", st == 77 ? "seeds absent" : "build failed");
		seeds_absent = st == 77;
	}
	tcp4(&pkt_est, "192.0.2.10", 80, 0x10);
	tcp4(&pkt_syn, "192.0.2.10", 80, 0x02);
	tcp4(&pkt_nonvip, NONVIP_ADDR, 80, 0x10);
	json = bench_report_json_open(json_path);

	printf("xlb-bench-balancer: BPF_PROG_TEST_RUN, %d rounds x %d runs, each on the named packet "
	       "(restore subtracted), path checked by counters; CPU %d; cases interleaved\n",
	       rounds, repeat, cpu);
	open_cases(TESTBED_ENGINE_KERNEL, balancer, seed_obj[0] ? seed_obj : NULL, &kern);
	if (!kern.xlb) {
		printf("SKIP: cannot load or set up %s in the kernel\n", balancer);
		bench_path__close(bp);
		return 77;
	}
	{
		double ns[CASE_CNT * rounds];
		int errs[CASE_CNT];
		char whys[CASE_CNT][BENCH_WHY_MAX];

		bench_path__interleave(bp, kern.c, CASE_CNT, rounds, repeat, ns, errs, whys);
		bench_report_header(stdout);
		for (int i = 0; i < CASE_CNT; i++) {
			struct bench_row row = { .bench = "balancer", .name = case_names[i], .unit = "ns/pkt",
						 .engine = "kernel" };

			if (errs[i] && i == CASE_SEED && seeds_absent)
				continue;
			if (errs[i]) {
				row.error = whys[i];
				status = status ?: (i == CASE_SEED ? 0 : 1);
			} else {
				int with_ref = i != CASE_SEED && !errs[CASE_SEED];

				row.ref = with_ref ? "kernel seed test_xdp_noinline" : NULL;
				bench_row_fill(&row, &ns[i * rounds], with_ref ? &ns[CASE_SEED * rounds] : NULL,
					       rounds);
			}
			bench_report_row(stdout, json, &row);
		}
		/* userspace engines, each interleaved case by case with the kernel */
		for (int k = TESTBED_ENGINE_INTERP; k <= TESTBED_ENGINE_JIT; k++) {
			const char *kname = testbed_engine_kind_name(k);

			if (!strstr(engines, kname))
				continue;
			open_cases(k, balancer, seed_obj[0] ? seed_obj : NULL, &user);
			for (int i = 0; i < CASE_CNT; i++) {
				struct bench_case pair[2] = { kern.c[i], user.c[i] };
				struct bench_row row = { .bench = "balancer", .name = case_names[i], .unit = "ns/pkt",
							 .engine = kname, .ref = "kernel" };
				double pns[2 * rounds];
				int perr[2];
				char pwhy[2][BENCH_WHY_MAX];

				if (!pair[0].engine || !pair[1].engine)
					continue;
				/* fewer rounds for the slow interpreter would bias nothing: same count */
				bench_path__interleave(bp, pair, 2, rounds, k == TESTBED_ENGINE_INTERP ? repeat / 8 + 1 : repeat,
						       pns, perr, pwhy);
				if (perr[0] || perr[1])
					row.error = perr[1] ? pwhy[1] : pwhy[0];
				else
					bench_row_fill(&row, &pns[rounds], &pns[0], rounds);
				bench_report_row(stdout, json, &row);
				if (row.error && i != CASE_SEED)
					status = 1;
			}
			close_cases(&user);
		}
	}
	close_cases(&kern);
	bench_path__close(bp);
	if (json)
		fclose(json);
	return status;
}
