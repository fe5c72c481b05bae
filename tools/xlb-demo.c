/* SPDX-License-Identifier: MIT */
/*
 * xlb-demo.c - README Quick-start command (1): until the control plane
 * exists, run the load-balancer programs on sample packets under the kernel
 * (BPF_PROG_TEST_RUN) and under xbpf's interpreter, and print the results
 * side by side.
 *
 * The programs: dataplane/balancer.bpf.o with an embedded default
 * configuration (demo_dataplane.c), then, when the seed patches are present,
 * the seeds' L4 LB programs (test_l4lb_noinline, tc; test_xdp_noinline, XDP)
 * built from them at run time with the seeds' harness setup.
 *
 * usage: xlb-demo [--seeds-dir DIR] [--workdir DIR] [--engine interp|jit]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo_dataplane.h"
#include "testbed.h"

#ifndef XLB_SEEDS_DIR
#define XLB_SEEDS_DIR "../shared/seeds"
#endif
#ifndef XLB_SEED_SCRIPT
#define XLB_SEED_SCRIPT "testbed/build-seed-progs.py"
#endif
#ifndef XLB_DATAPLANE_OBJ
#define XLB_DATAPLANE_OBJ "dataplane/balancer.bpf.o"
#endif
#ifndef XLB_DEMO_WORKDIR
#define XLB_DEMO_WORKDIR "/tmp/xlb-demo"
#endif

static void format_cell(const struct seed_lb_prog *sp, const struct tool_run_cell *c, char *buf,
			size_t len)
{
	if (c->err == -EOPNOTSUPP)
		snprintf(buf, len, "n/a");
	else if (c->err)
		snprintf(buf, len, "run failed (%d)", c->err);
	else
		snprintf(buf, len, "%s/%u", sp->action_name(c->retval), c->len);
}

static int demo_prog(const struct seed_lb_prog *sp, const char *objdir, enum testbed_engine_kind kind,
		     int *ret_mismatches)
{
	struct testbed_engine *kern, *user;
	const struct seed_lb_packet *pkts;
	struct testbed_prog_src src = { 0 };
	char path[4096], ucol[32];
	const char *user_note = "";
	size_t i, n;
	int user_err;

	snprintf(path, sizeof(path), "%s/%s.o", objdir, sp->name);
	src.path = path;
	src.prog_name = sp->prog;

	testbed_engine__open_pair(kind, &src, sp->name, &kern, &user, &user_note, &user_err);
	if (kern && seed_lb_setup(kern))
		printf("(kernel map setup failed)\n");
	if (user && seed_lb_setup(user))
		printf("(%s map setup failed)\n", testbed_engine_kind_name(kind));

	snprintf(ucol, sizeof(ucol), "%s%s", testbed_engine_kind_name(kind), user_note);
	printf("\n%s: %s program %s, VIP proto TCP -> real %#x\n", sp->name,
	       xbpf_prog_type_name(sp->type), sp->prog, SEED_MAGIC_VAL);
	printf("  %-42s  %-22s  %-22s  %s\n", "packet", "kernel action/len", ucol, "match");
	printf("  %-42s  %-22s  %-22s  %s\n", "------", "-----------------", "---------------",
	       "-----");
	n = seed_lb_packets(&pkts);
	for (i = 0; i < n; i++) {
		struct tool_run_cell kc, uc;
		char kbuf[40], ubuf[40];
		const char *match;

		testbed_engine__run_cell(kern, pkts[i].data, pkts[i].len, &kc);
		testbed_engine__run_cell(user, pkts[i].data, pkts[i].len, &uc);
		format_cell(sp, &kc, kbuf, sizeof(kbuf));
		format_cell(sp, &uc, ubuf, sizeof(ubuf));
		if (!kern || !user)
			match = "-";
		else if (!kc.err && !uc.err && kc.retval == uc.retval && kc.len == uc.len &&
			 !memcmp(kc.out, uc.out, kc.len))
			match = "yes";
		else if (kc.err && uc.err)
			match = "both failed";
		else
			match = "NO";
		if (!strcmp(match, "NO"))
			(*ret_mismatches)++;
		printf("  %-42s  %-22s  %-22s  %s\n", pkts[i].desc, kbuf, ubuf, match);
	}
	testbed_engine__close(user);
	testbed_engine__close(kern);
	return user_err;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "seeds-dir", required_argument, NULL, 'd' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "engine", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *seeds_dir = getenv("XLB_SEEDS_DIR"), *workdir = XLB_DEMO_WORKDIR;
	enum testbed_engine_kind kind = TESTBED_ENGINE_INTERP;
	int c, err, status, mismatches = 0, failed = 0, shown = 0;
	size_t i;

	if (!seeds_dir)
		seeds_dir = XLB_SEEDS_DIR;
	setvbuf(stdout, NULL, _IOLBF, 0); /* keep stdout and stderr lines in order */
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd': seeds_dir = optarg; break;
		case 'w': workdir = optarg; break;
		case 'e':
			if (testbed_engine_kind_from_name(optarg, &kind) || kind == TESTBED_ENGINE_KERNEL) {
				fprintf(stderr, "xlb-demo: --engine interp or jit\n");
				return 2;
			}
			break;
		default:
			printf("usage: xlb-demo [--seeds-dir DIR] [--workdir DIR] [--engine interp|jit]\n"
			       "Runs the L4 LB programs on sample packets under the kernel and\n"
			       "xbpf's interpreter and prints the results side by side.\n");
			return c == 'h' ? 0 : 2;
		}
	}

	printf("xlb demo: L4 load-balancer programs, kernel vs xbpf %s\n",
	       testbed_engine_kind_name(kind));
	if (!testbed_kernel_available() || geteuid() != 0)
		printf("(not root or no libbpf: the kernel column shows n/a)\n");
	err = demo_dataplane(XLB_DATAPLANE_OBJ, kind, &mismatches);
	if (err != -ENOENT)
		shown++;
	if (err && err != -ENOENT)
		failed++;

	status = seed_lb_build(XLB_SEED_SCRIPT, seeds_dir, workdir);
	if (status == 77) {
		printf("\n(seed patches absent at %s: the seeds' LB programs are not shown)\n",
		       seeds_dir);
	} else if (status) {
		fprintf(stderr, "xlb-demo: building the seed programs failed\n");
		failed++;
	} else {
		for (i = 0; i < seed_lb_prog_cnt; i++) {
			if (demo_prog(&seed_lb_progs[i], workdir, kind, &mismatches))
				failed++;
			shown++;
		}
	}
	if (!shown) {
		fprintf(stderr, "xlb-demo: nothing to run: no dataplane object (%s) and no seeds\n",
			XLB_DATAPLANE_OBJ);
		return 1;
	}
	if (mismatches)
		printf("\nMISMATCH between kernel and xbpf (see rows marked NO)\n");
	else if (failed)
		printf("\nnot every engine could run (see the messages above)\n");
	else
		printf("\nkernel and xbpf agree on every packet shown\n");
	return failed || mismatches ? 1 : 0;
}
