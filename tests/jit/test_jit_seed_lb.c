/* SPDX-License-Identifier: MIT */
/*
 * test_jit_seed_lb.c - the seeds' two L4 LB programs (noinline bpf-to-bpf
 * calls, seed patches 004/005), built at test time, on the host's JIT
 * against the interpreter: same return values, output packets and stats
 * maps, and the 2017 harness's own expectations on both.  Needs no kernel,
 * so it also runs in the arm64 cross build under qemu-aarch64, where it is
 * the arm64 JIT's test on real multi-function programs.
 *
 * usage: test-jit-seed-lb --script PY --seeds-dir DIR --workdir DIR [--iter N] [--prog NAME]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h" /* __xbpf_jit_host_arch: is there a back end at all? */
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

/* The harness's expectations for its own packets. */
static void check_harness(const struct seed_lb_prog *sp, const struct seed_lb_packet *pkt, const char *engine,
			  const struct seed_lb_run *r)
{
	uint32_t magic;

	memcpy(&magic, r->out, sizeof(magic));
	CHECK(r->retval == sp->expect_retval && r->size == pkt->len && magic == SEED_MAGIC_VAL,
	      "%s: %s: %s retval %u size %u magic %x, harness expects %u %u %x", sp->name, pkt->desc, engine,
	      r->retval, r->size, magic, sp->expect_retval, pkt->len, SEED_MAGIC_VAL);
}

static void compare_stats(const struct seed_lb_prog *sp, struct testbed_engine *ref, struct testbed_engine *jit,
			  int iter)
{
	struct xbpf_map_spec spec;
	uint64_t rb, rp, jb, jp;
	int nonzero = 0;

	if (testbed_engine__map_spec(ref, "stats", &spec)) {
		CHECK(0, "%s: no stats map", sp->name);
		return;
	}
	for (uint32_t key = 0; key < spec.max_entries; key++) {
		int rerr = seed_lb_stats(ref, key, &rb, &rp);
		int jerr = seed_lb_stats(jit, key, &jb, &jp);

		CHECK(!rerr && !jerr && rb == jb && rp == jp,
		      "%s: stats[%u]: interp {%llu, %llu} (%d) vs jit {%llu, %llu} (%d)", sp->name, key,
		      (unsigned long long)rb, (unsigned long long)rp, rerr, (unsigned long long)jb,
		      (unsigned long long)jp, jerr);
		nonzero += rb || rp;
	}
	/* As the harness checks: both of its packets, iter times each. */
	CHECK(!seed_lb_stats(jit, SEED_VIP_NUM, &jb, &jp) && jb == (uint64_t)SEED_MAGIC_BYTES * iter * 2 &&
		      jp == (uint64_t)iter * 2,
	      "%s: jit stats[%d] = {%llu, %llu}, harness expects {%llu, %llu}", sp->name, SEED_VIP_NUM,
	      (unsigned long long)jb, (unsigned long long)jp, (unsigned long long)SEED_MAGIC_BYTES * iter * 2,
	      (unsigned long long)iter * 2);
	printf("  stats: %u entries compared, %d non-zero\n", spec.max_entries, nonzero);
}

static void test_prog(const struct seed_lb_prog *sp, const char *objdir, bool skip_verify, int iter)
{
	struct testbed_engine_opts opts = { .skip_verify = skip_verify, .log_level = 1 };
	struct testbed_engine *ref = NULL, *jit = NULL;
	const struct seed_lb_packet *pkts;
	struct testbed_prog_src src = { 0 };
	char path[4096];
	size_t n;
	int err;

	snprintf(path, sizeof(path), "%s/%s.o", objdir, sp->name);
	src.path = path;
	src.prog_name = sp->prog;
	printf("%s (%s)%s\n", sp->name, xbpf_prog_type_name(sp->type), skip_verify ? ", verifier skipped" : "");

	opts.log_size = 1 << 20;
	opts.log_buf = calloc(1, opts.log_size);
	err = testbed_engine__open(TESTBED_ENGINE_INTERP, &src, &opts, &ref);
	if (!err)
		err = testbed_engine__open(TESTBED_ENGINE_JIT, &src, &opts, &jit);
	if (err) {
		CHECK(0, "%s: cannot load: %s", sp->name, strerror(-err));
		printf("%s", opts.log_buf ? opts.log_buf : "");
		goto out;
	}
	/* No silent fallback: this is a test of the JIT. */
	CHECK(xbpf_vm__engine(testbed_engine__vm(jit)) == XBPF_ENGINE_JIT, "%s: the JIT engine runs the %s", sp->name,
	      xbpf_engine_name(xbpf_vm__engine(testbed_engine__vm(jit))));
	err = seed_lb_setup(ref);
	CHECK(!err, "%s: interp map setup: %s", sp->name, strerror(-err));
	err = seed_lb_setup(jit);
	CHECK(!err, "%s: jit map setup: %s", sp->name, strerror(-err));

	n = seed_lb_packets(&pkts);
	for (size_t i = 0; i < n; i++) {
		struct seed_lb_run rr, jr;
		int repeat = pkts[i].harness ? iter : 1;

		seed_lb_run(ref, &pkts[i], repeat, &rr);
		seed_lb_run(jit, &pkts[i], repeat, &jr);
		printf("  %-42s interp %s/%u  jit %s/%u\n", pkts[i].desc,
		       rr.err ? strerror(-rr.err) : sp->action_name(rr.retval), rr.size,
		       jr.err ? strerror(-jr.err) : sp->action_name(jr.retval), jr.size);
		CHECK(!rr.err && !jr.err, "%s: %s: test run: interp %d, jit %d", sp->name, pkts[i].desc, rr.err,
		      jr.err);
		CHECK(rr.retval == jr.retval && rr.size == jr.size && !memcmp(rr.out, jr.out, rr.size),
		      "%s: %s: interp %u/%u bytes vs jit %u/%u bytes", sp->name, pkts[i].desc, rr.retval, rr.size,
		      jr.retval, jr.size);
		if (pkts[i].harness) {
			check_harness(sp, &pkts[i], "interp", &rr);
			check_harness(sp, &pkts[i], "jit", &jr);
		}
	}
	compare_stats(sp, ref, jit, iter);
out:
	free(opts.log_buf);
	testbed_engine__close(jit);
	testbed_engine__close(ref);
}

/*
 * Constant blinding on the whole program: the tools have no switch for it,
 * so two VMs over one object (shared, unconfigured maps: every packet takes
 * the programs' miss paths) must agree packet for packet.  The verifier is
 * skipped: the verified path is test_prog()'s, this one is about the JIT.
 */
static void test_blinded(const struct seed_lb_prog *sp, const char *objdir)
{
	XBPF_OPTS(xbpf_vm_opts, jopts, .engine = XBPF_ENGINE_JIT, .blind_constants = true, .skip_verify = true);
	XBPF_OPTS(xbpf_vm_opts, iopts, .engine = XBPF_ENGINE_INTERP, .skip_verify = true);
	struct xbpf_vm *jit = NULL, *ref = NULL;
	const struct seed_lb_packet *pkts;
	struct xbpf_object *obj;
	struct xbpf_prog *prog;
	char path[4096];
	size_t n;

	snprintf(path, sizeof(path), "%s/%s.o", objdir, sp->name);
	printf("%s (%s), constants blinded\n", sp->name, xbpf_prog_type_name(sp->type));
	obj = xbpf_object__open_file(path, NULL);
	prog = obj ? xbpf_object__find_prog(obj, sp->prog) : NULL;
	if (prog) {
		jit = xbpf_vm__new(prog, &jopts);
		ref = xbpf_vm__new(prog, &iopts);
	}
	CHECK(jit && ref, "%s: blinded JIT / interpreter VM: %s", sp->name, strerror(errno));
	if (!jit || !ref)
		goto out;
	CHECK(xbpf_vm__engine(jit) == XBPF_ENGINE_JIT, "%s: blinded JIT fell back to the interpreter", sp->name);
	n = seed_lb_packets(&pkts);
	for (size_t i = 0; i < n; i++) {
		uint8_t rout[SEED_PKT_MAX + 64] = { 0 }, jout[SEED_PKT_MAX + 64] = { 0 };
		XBPF_OPTS(xbpf_test_run_opts, ro, .data_in = pkts[i].data, .data_size_in = pkts[i].len,
			  .data_out = rout, .data_size_out = sizeof(rout), .repeat = 1);
		XBPF_OPTS(xbpf_test_run_opts, jo, .data_in = pkts[i].data, .data_size_in = pkts[i].len,
			  .data_out = jout, .data_size_out = sizeof(jout), .repeat = 1);
		int rerr = xbpf_vm__test_run(ref, &ro);
		int jerr = xbpf_vm__test_run(jit, &jo);

		CHECK(!rerr && !jerr && ro.retval == jo.retval && ro.data_size_out == jo.data_size_out &&
			      !memcmp(rout, jout, ro.data_size_out),
		      "%s: %s: interp %d %u/%u bytes vs blinded jit %d %u/%u bytes", sp->name, pkts[i].desc, rerr,
		      ro.retval, ro.data_size_out, jerr, jo.retval, jo.data_size_out);
	}
	printf("  %zu packets compared\n", n);
out:
	xbpf_vm__free(jit);
	xbpf_vm__free(ref);
	xbpf_object__close(obj);
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "script", required_argument, NULL, 's' },
		{ "seeds-dir", required_argument, NULL, 'd' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "iter", required_argument, NULL, 'i' },
		{ "prog", required_argument, NULL, 'p' },
		{},
	};
	const char *script = NULL, *seeds_dir = NULL, *workdir = NULL, *only = NULL;
	int iter = 1000;
	int c, status, tested = 0;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case 's': script = optarg; break;
		case 'd': seeds_dir = optarg; break;
		case 'w': workdir = optarg; break;
		case 'i': iter = atoi(optarg); break;
		case 'p': only = optarg; break;
		default: return 2;
		}
	}
	if (!script || !seeds_dir || !workdir || iter < 1) {
		fprintf(stderr, "usage: %s --script PY --seeds-dir DIR --workdir DIR [--iter N] [--prog NAME]\n",
			argv[0]);
		return 2;
	}
	if (!__xbpf_jit_host_arch) {
		printf("SKIP: no JIT back end for this host architecture\n");
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
	for (size_t i = 0; i < seed_lb_prog_cnt; i++) {
		if (only && strcmp(only, seed_lb_progs[i].name))
			continue;
		tested++;
		test_prog(&seed_lb_progs[i], workdir, false, iter);
		test_prog(&seed_lb_progs[i], workdir, true, iter);
		test_blinded(&seed_lb_progs[i], workdir);
	}
	CHECK(tested, "no seed program named %s", only ? only : "(any)");
	if (failures) {
		printf("%d check(s) failed\n", failures);
		return 1;
	}
	printf("PASS (%s JIT)\n", __xbpf_jit_host_arch->name);
	return 0;
}
