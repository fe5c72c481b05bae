/* SPDX-License-Identifier: MIT */
/*
 * seed_lb_test.c - external-fixture test: the seeds' two L4 LB programs,
 * built from the seed patches at test time, set up as the seeds' harness set
 * them up, run under the kernel (BPF_PROG_TEST_RUN) and under a userspace
 * engine: both must give the harness's expected results, and identical
 * return values, output packets and stats map contents.
 *
 * usage: seed_lb_test --script PY --seeds-dir DIR --workdir DIR
 *                     [--engine interp|jit|kernel] [--skip-verify] [--iter N]
 *                     [--prog test_l4lb_noinline|test_xdp_noinline]
 *
 * --engine kernel compares the kernel with itself: it checks the harness
 * setup and expectations alone, before a userspace engine is involved.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed.h"

#define SKIP 77

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL: " __VA_ARGS__);                                              \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

/* The end of a verifier log: where it stopped and why. */
static void print_log_tail(const char *log, int lines)
{
	const char *p;

	if (!log)
		return;
	p = log + strlen(log);
	while (p > log && lines >= 0) {
		p--;
		if (*p == '\n')
			lines--;
	}
	printf("  ... verifier log, last lines:\n%s\n", p == log ? p : p + 1);
}

static void hexdump(const char *label, const uint8_t *p, uint32_t len)
{
	uint32_t i;

	printf("  %-8s", label);
	for (i = 0; i < len && i < SEED_PKT_MAX; i++)
		printf("%02x%s", p[i], (i + 1) % 32 ? "" : "\n          ");
	printf("\n");
}

/* Every stats entry, summed over CPUs, must be equal on both engines. */
static void compare_stats(const struct seed_lb_prog *sp, struct testbed_engine *kern,
			  struct testbed_engine *user)
{
	struct xbpf_map_spec spec;
	uint64_t kb, kp, ub, up;
	uint32_t key;
	int nonzero = 0;

	if (testbed_engine__map_spec(kern, "stats", &spec)) {
		CHECK(0, "%s: no stats map", sp->name);
		return;
	}
	for (key = 0; key < spec.max_entries; key++) {
		int kerr = seed_lb_stats(kern, key, &kb, &kp);
		int uerr = seed_lb_stats(user, key, &ub, &up);

		CHECK(!kerr && !uerr, "%s: stats[%u] lookup: kernel %d, user %d", sp->name, key,
		      kerr, uerr);
		CHECK(kb == ub && kp == up,
		      "%s: stats[%u] kernel {%llu, %llu} vs user {%llu, %llu}", sp->name, key,
		      (unsigned long long)kb, (unsigned long long)kp, (unsigned long long)ub,
		      (unsigned long long)up);
		nonzero += kb || kp;
	}
	printf("  stats: %u entries compared, %d non-zero\n", spec.max_entries, nonzero);
}

static int test_prog(const struct seed_lb_prog *sp, const char *objdir, enum testbed_engine_kind kind,
		     bool skip_verify, int iter)
{
	struct testbed_engine_opts uopts = { .skip_verify = skip_verify, .log_level = 1 };
	struct testbed_engine *kern = NULL, *user = NULL;
	const struct seed_lb_packet *pkts;
	struct testbed_prog_src src = { 0 };
	char path[4096];
	size_t i, n;
	uint64_t bytes, pkts_cnt;
	int err;

	snprintf(path, sizeof(path), "%s/%s.o", objdir, sp->name);
	src.path = path;
	src.prog_name = sp->prog;
	printf("%s (%s, engine %s%s)\n", sp->name, xbpf_prog_type_name(sp->type),
	       testbed_engine_kind_name(kind), skip_verify ? ", verifier skipped" : "");

	err = testbed_engine__open(TESTBED_ENGINE_KERNEL, &src, NULL, &kern);
	if (err) {
		printf("SKIP: the kernel cannot load %s: %s\n%s", path, strerror(-err),
		       testbed_kobj_last_log());
		return SKIP;
	}
	uopts.log_size = 1 << 20;
	uopts.log_buf = calloc(1, uopts.log_size);
	err = testbed_engine__open(kind, &src, &uopts, &user);
	if (err) {
		CHECK(0, "%s: %s engine refuses the program: %s", sp->name,
		      testbed_engine_kind_name(kind), strerror(-err));
		print_log_tail(uopts.log_buf, 40);
		goto out;
	}
	if (kind == TESTBED_ENGINE_JIT && xbpf_vm__engine(testbed_engine__vm(user)) != XBPF_ENGINE_JIT) {
		printf("SKIP: no JIT for this host (the VM fell back to the interpreter)\n");
		err = SKIP;
		goto out;
	}
	err = seed_lb_setup(kern);
	CHECK(!err, "%s: kernel map setup: %s", sp->name, strerror(-err));
	err = seed_lb_setup(user);
	CHECK(!err, "%s: user map setup: %s", sp->name, strerror(-err));

	n = seed_lb_packets(&pkts);
	for (i = 0; i < n; i++) {
		struct seed_lb_run kr, ur;
		uint32_t magic;
		int repeat = pkts[i].harness ? iter : 1;

		seed_lb_run(kern, &pkts[i], repeat, &kr);
		seed_lb_run(user, &pkts[i], repeat, &ur);
		printf("  %-42s kernel %s/%u  %s %s/%u\n", pkts[i].desc,
		       kr.err ? strerror(-kr.err) : sp->action_name(kr.retval), kr.size,
		       testbed_engine_kind_name(kind),
		       ur.err ? strerror(-ur.err) : sp->action_name(ur.retval), ur.size);
		CHECK(!kr.err && !ur.err, "%s: %s: test run: kernel %d, user %d", sp->name,
		      pkts[i].desc, kr.err, ur.err);
		CHECK(kr.retval == ur.retval, "%s: %s: retval kernel %u vs user %u", sp->name,
		      pkts[i].desc, kr.retval, ur.retval);
		CHECK(kr.size == ur.size && !memcmp(kr.out, ur.out, kr.size),
		      "%s: %s: output packets differ (kernel %u bytes, user %u)", sp->name,
		      pkts[i].desc, kr.size, ur.size);
		if (kr.size != ur.size || memcmp(kr.out, ur.out, kr.size)) {
			hexdump("kernel", kr.out, kr.size);
			hexdump("user", ur.out, ur.size);
		}
		if (!pkts[i].harness)
			continue;
		/* The harness's own expectations, on both engines. */
		memcpy(&magic, ur.out, sizeof(magic));
		CHECK(ur.retval == sp->expect_retval && ur.size == pkts[i].len &&
			      magic == SEED_MAGIC_VAL,
		      "%s: %s: user retval %u size %u magic %x, harness expects %u %u %x", sp->name,
		      pkts[i].desc, ur.retval, ur.size, magic, sp->expect_retval, pkts[i].len,
		      SEED_MAGIC_VAL);
		memcpy(&magic, kr.out, sizeof(magic));
		CHECK(kr.retval == sp->expect_retval && kr.size == pkts[i].len &&
			      magic == SEED_MAGIC_VAL,
		      "%s: %s: kernel retval %u size %u magic %x, harness expects %u %u %x",
		      sp->name, pkts[i].desc, kr.retval, kr.size, magic, sp->expect_retval,
		      pkts[i].len, SEED_MAGIC_VAL);
		if (i == 1) {
			/* After pkt_v4 and pkt_v6, as the harness checks. */
			err = seed_lb_stats(user, SEED_VIP_NUM, &bytes, &pkts_cnt);
			CHECK(!err && bytes == (uint64_t)SEED_MAGIC_BYTES * iter * 2 &&
				      pkts_cnt == (uint64_t)iter * 2,
			      "%s: user stats[%d] = {%llu, %llu}, harness expects {%llu, %llu}",
			      sp->name, SEED_VIP_NUM, (unsigned long long)bytes,
			      (unsigned long long)pkts_cnt,
			      (unsigned long long)SEED_MAGIC_BYTES * iter * 2,
			      (unsigned long long)iter * 2);
			err = seed_lb_stats(kern, SEED_VIP_NUM, &bytes, &pkts_cnt);
			CHECK(!err && bytes == (uint64_t)SEED_MAGIC_BYTES * iter * 2 &&
				      pkts_cnt == (uint64_t)iter * 2,
			      "%s: kernel stats[%d] = {%llu, %llu}", sp->name, SEED_VIP_NUM,
			      (unsigned long long)bytes, (unsigned long long)pkts_cnt);
		}
	}
	compare_stats(sp, kern, user);
	err = 0;
out:
	free(uopts.log_buf);
	testbed_engine__close(user);
	testbed_engine__close(kern);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "script", required_argument, NULL, 's' },
		{ "seeds-dir", required_argument, NULL, 'd' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "engine", required_argument, NULL, 'e' },
		{ "skip-verify", no_argument, NULL, 'k' },
		{ "iter", required_argument, NULL, 'i' },
		{ "prog", required_argument, NULL, 'p' },
		{},
	};
	const char *script = NULL, *seeds_dir = NULL, *workdir = NULL, *only = NULL;
	enum testbed_engine_kind kind = TESTBED_ENGINE_INTERP;
	bool skip_verify = false;
	int iter = SEED_NUM_ITER;
	int c, status, skipped = 0, ran = 0;
	size_t i;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case 's': script = optarg; break;
		case 'd': seeds_dir = optarg; break;
		case 'w': workdir = optarg; break;
		case 'k': skip_verify = true; break;
		case 'i': iter = atoi(optarg); break;
		case 'p': only = optarg; break;
		case 'e':
			/* kernel: a second kernel instance, checks the harness alone */
			if (testbed_engine_kind_from_name(optarg, &kind)) {
				fprintf(stderr, "--engine: interp, jit or kernel\n");
				return 2;
			}
			break;
		default:
			return 2;
		}
	}
	if (!script || !seeds_dir || !workdir || iter < 1) {
		fprintf(stderr, "usage: %s --script PY --seeds-dir DIR --workdir DIR "
				"[--engine interp|jit|kernel] [--skip-verify] [--iter N] [--prog NAME]\n", argv[0]);
		return 2;
	}
	if (!testbed_kernel_available()) {
		printf("SKIP: this build has no kernel engine\n");
		return SKIP;
	}
	status = seed_lb_build(script, seeds_dir, workdir);
	if (status == SKIP) {
		printf("SKIP: seeds absent at %s\n", seeds_dir);
		return SKIP;
	}
	if (status) {
		printf("FAIL: building the seed programs failed (%d)\n", status);
		return 1;
	}
	for (i = 0; i < seed_lb_prog_cnt; i++) {
		if (only && strcmp(only, seed_lb_progs[i].name))
			continue;
		ran++;
		skipped += test_prog(&seed_lb_progs[i], workdir, kind, skip_verify, iter) == SKIP;
	}
	if (!ran) {
		fprintf(stderr, "--prog: no seed program %s\n", only);
		return 2;
	}
	if (failures) {
		printf("%d check(s) failed\n", failures);
		return 1;
	}
	if (skipped == ran)
		return SKIP;
	printf("PASS\n");
	return 0;
}
