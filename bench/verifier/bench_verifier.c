// SPDX-License-Identifier: MIT
/*
 * bench_verifier.c - verification time, xbpf_verify() against the kernel's
 * verifier on the seeds' LB programs and xlb's programs, with the
 * processed-instruction counts side by side.  The kernel's time is the
 * "verification time" its stats log (log_level 4, nothing else logged)
 * reports for BPF_PROG_LOAD, so map creation and relocation by libbpf are
 * not counted; the wall time of the whole load is shown too.  Both sides
 * are measured in this run; the figure that matters is the ratio.
 *
 *   xbpf-bench-verifier [--rounds N] [--build-seeds SCRIPT SEEDS_DIR WORKDIR] OBJ...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "xbpf_verifier.h"

#define STATS_LOG (16 << 20)

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/*
 * One kernel load of program `name`: the verifier time from the stats log
 * in us (<0 on failure), the whole load's wall time and processed insns.
 */
static double kernel_load(const char *path, const char *name, char *log, double *ret_wall,
			  unsigned *ret_insns)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = log, .kernel_log_size = STATS_LOG,
		    .kernel_log_level = 4);
	struct bpf_object *obj;
	struct bpf_program *p;
	const char *s;
	double t0;
	int err;

	log[0] = '\0';
	obj = bpf_object__open_file(path, &oo);
	if (!obj)
		return -1;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	t0 = now_us();
	err = bpf_object__load(obj);
	*ret_wall = now_us() - t0;
	bpf_object__close(obj);
	if (err)
		return -1;
	s = strstr(log, "processed ");
	*ret_insns = s ? (unsigned)strtoul(s + 10, NULL, 10) : 0;
	s = strstr(log, "verification time ");
	return s ? strtod(s + 18, NULL) : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *objs[32];
	char seed_objs[2][4096];
	int nobj = 0, rounds = 10, nprogs = 0;
	double worst_insns = 0, worst_time = 0;
	char *log = malloc(STATS_LOG);

	if (!log)
		return 1;
	libbpf_set_print(quiet);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--build-seeds") && i + 3 < argc) {
			char cmd[8192];
			int st;

			snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s' >/dev/null", argv[i + 1], argv[i + 2],
				 argv[i + 3]);
			st = system(cmd);
			if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
				snprintf(seed_objs[0], sizeof(seed_objs[0]), "%s/test_xdp_noinline.o", argv[i + 3]);
				snprintf(seed_objs[1], sizeof(seed_objs[1]), "%s/test_l4lb_noinline.o", argv[i + 3]);
				objs[nobj++] = seed_objs[0];
				objs[nobj++] = seed_objs[1];
			} else {
				printf("note: seeds' LB programs not built (seeds absent?)\n");
			}
			i += 3;
		} else if (nobj < 32) {
			objs[nobj++] = argv[i];
		}
	}
	if (rounds < 1)
		rounds = 1;
	printf("%-22s %-18s %8s %8s %7s %10s %10s %10s %7s\n", "object", "program", "xbpf", "kernel",
	       "insns", "xbpf us", "kernel us", "load us", "time");
	printf("%-22s %-18s %8s %8s %7s %10s %10s %10s %7s\n", "", "", "insns", "insns", "x/k",
	       "(median)", "(verifier)", "(wall)", "x/k");
	for (int o = 0; o < nobj; o++) {
		struct xbpf_object *obj = xbpf_object__open_file(objs[o], NULL);
		struct xbpf_prog *prog = NULL;
		const char *base = strrchr(objs[o], '/') ? strrchr(objs[o], '/') + 1 : objs[o];

		if (!obj) {
			printf("%s: cannot open (%s)\n", objs[o], strerror(errno));
			continue;
		}
		while ((prog = xbpf_object__next_prog(obj, prog))) {
			double *ours = calloc(rounds, sizeof(double)), *kern = calloc(rounds, sizeof(double));
			double *wall = calloc(rounds, sizeof(double));
			struct xbpf_verify_info info;
			unsigned kinsns = 0;
			int err = 0, kok = 1;

			for (int r = 0; r < rounds; r++) {
				double t0 = now_us();

				err = xbpf_verify(prog, NULL, &info);
				ours[r] = now_us() - t0;
				kern[r] = kernel_load(objs[o], xbpf_prog__name(prog), log, &wall[r], &kinsns);
				if (kern[r] < 0)
					kok = 0;
			}
			qsort(ours, rounds, sizeof(double), cmp_double);
			qsort(kern, rounds, sizeof(double), cmp_double);
			qsort(wall, rounds, sizeof(double), cmp_double);
			if (!kok) {
				printf("%-22s %-18s %8u %8s %10.0f %10s %10s %7s  (kernel load failed)\n", base,
				       xbpf_prog__name(prog), info.insn_processed, "-", ours[rounds / 2], "-", "-",
				       "-");
			} else {
				double ri = kinsns ? (double)info.insn_processed / kinsns : 0;
				double rt = ours[rounds / 2] / kern[rounds / 2];

				printf("%-22s %-18s %8u %8u %7.3f %10.0f %10.0f %10.0f %7.2f%s%s\n", base,
				       xbpf_prog__name(prog), info.insn_processed, kinsns, ri, ours[rounds / 2],
				       kern[rounds / 2], wall[rounds / 2], rt, err ? "  xbpf rejects: " : "",
				       err ? info.err_msg : "");
				if (ri > worst_insns)
					worst_insns = ri;
				if (rt > worst_time)
					worst_time = rt;
				nprogs++;
			}
			free(wall);
			free(ours);
			free(kern);
		}
		xbpf_object__close(obj);
	}
	printf("time x/k = xbpf time / kernel verifier time (from its stats log), medians of %d rounds;\n"
	       "insns x/k = processed insns, xbpf / kernel (the counter that says both walked the\n"
	       "same program).  %d programs: worst insns ratio %.3f (goal <= 1.1), worst time ratio "
	       "%.2f (goal <= 1.0)\n",
	       rounds, nprogs, worst_insns, worst_time);
	free(log);
	return 0;
}
