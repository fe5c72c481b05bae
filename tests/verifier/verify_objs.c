// SPDX-License-Identifier: MIT
/*
 * verify_objs.c - every program of the given BPF objects must pass
 * xbpf_verify(); with --kernel, also loaded by libbpf into this machine's
 * kernel, whose verdict must agree.  Prints processed instructions and
 * stack depths side by side with the kernel's (from its stats log).
 *
 *   verify_objs [--kernel] [--build-seeds SCRIPT SEEDS_DIR WORKDIR]
 *               [--known-gap OBJNAME:MESSAGE]... [--expect-reject OBJNAME:PROG:MESSAGE]...
 *               [--max-insns-ratio R] OBJ...
 *
 * --build-seeds first runs the seeds' build script (tests/seeds) so the
 * seeds' LB programs are verified too; its exit 77 (no seeds) only drops
 * them.  --known-gap names a rejection that is not the verifier's to fix
 * (a helper the runtime core does not provide): it is printed as such and
 * does not fail the run; any other rejection does.  --expect-reject names
 * a program that must be rejected with that message (by the kernel too,
 * with --kernel).  --max-insns-ratio fails a program whose processed
 * instructions exceed R times the kernel's (a deterministic count, not a
 * timing: it says both verifiers walked the same states).
 *
 * --by-name: each program's name says the verdict instead (ok_* accepted,
 * bad_* rejected), for the shape tests (tests/verifier/shapes/).  With
 * --kernel the kernel must reach it too, and a rejection's kernel message
 * (the line before its statistics) must be in xlb's log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "xbpf_verifier.h"

#ifdef WITH_KERNEL
#include <bpf/libbpf.h>
#endif

#define LOG_SIZE (16 << 20)

static char *logbuf;
#ifdef WITH_KERNEL
static char *klogbuf;
#endif
#ifdef WITH_KERNEL
/* The kernel's message for the last program it rejected. */
static char kmsg[512];
#endif

#ifdef WITH_KERNEL
static int kernel_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* Kernel's verdict and figures for program `name` of obj_path. */
static int kernel_verify(const char *obj_path, const char *name, unsigned *ret_insns, char *depth,
			 size_t depth_len)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = klogbuf, .kernel_log_size = LOG_SIZE,
		    .kernel_log_level = 1 | 4);
	struct bpf_object *obj;
	struct bpf_program *p;
	const char *s;
	int err;

	klogbuf[0] = '\0';
	kmsg[0] = '\0';
	obj = bpf_object__open_file(obj_path, &oo);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	err = bpf_object__load(obj);
	s = strstr(klogbuf, "processed ");
	*ret_insns = s ? (unsigned)strtoul(s + 10, NULL, 10) : 0;
	if (err) {
		/* The verifier's message: the line before its statistics. */
		/* (A message may lack its newline: "...tail callverification time".) */
		const char *end = strstr(klogbuf, "verification time"), *b;

		end = end ? end : klogbuf + strlen(klogbuf);
		if (end > klogbuf && end[-1] == '\n')
			end--;
		for (b = end; b > klogbuf && b[-1] != '\n'; b--)
			;
		/* A caller's wrong argument: the line before says which. */
		if (!strncmp(b, "Caller passes", 13) && b > klogbuf)
			for (b--; b > klogbuf && b[-1] != '\n'; b--)
				;
		snprintf(kmsg, sizeof(kmsg), "%.*s", (int)(end - b), b);
	}
	s = strstr(klogbuf, "stack depth ");
	depth[0] = '\0';
	if (s)
		snprintf(depth, depth_len, "%.*s", (int)strspn(s + 12, "0123456789+"), s + 12);
	bpf_object__close(obj);
	return err;
}
#endif

static int build_seeds(const char *script, const char *seeds, const char *workdir)
{
	char cmd[4096];
	int st;

	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s'", script, seeds, workdir);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	bool kernel = false, by_name = false;
	int failed = 0, progs = 0;
	char seed_objs[2][4096];
	const char *objs[64], *gaps[16], *rejects[16];
	int nobj = 0, ngaps = 0, nrejects = 0, known = 0;
	double max_ratio = 0;

	logbuf = malloc(LOG_SIZE);
	if (!logbuf)
		return 1;
#ifdef WITH_KERNEL
	klogbuf = malloc(LOG_SIZE);
	if (!klogbuf)
		return 1;
#endif
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--kernel")) {
			kernel = true;
		} else if (!strcmp(argv[i], "--by-name")) {
			by_name = true;
		} else if (!strcmp(argv[i], "--build-seeds") && i + 3 < argc) {
			int rc = build_seeds(argv[i + 1], argv[i + 2], argv[i + 3]);

			if (rc == 0) {
				snprintf(seed_objs[0], sizeof(seed_objs[0]), "%s/test_l4lb_noinline.o", argv[i + 3]);
				snprintf(seed_objs[1], sizeof(seed_objs[1]), "%s/test_xdp_noinline.o", argv[i + 3]);
				objs[nobj++] = seed_objs[0];
				objs[nobj++] = seed_objs[1];
			} else if (rc == 77) {
				printf("note: seeds absent, their LB programs are not verified\n");
			} else {
				printf("FAIL: building the seeds' programs failed (%d)\n", rc);
				failed++;
			}
			i += 3;
		} else if (!strcmp(argv[i], "--known-gap") && i + 1 < argc) {
			if (ngaps < 16)
				gaps[ngaps++] = argv[i + 1];
			i++;
		} else if (!strcmp(argv[i], "--expect-reject") && i + 1 < argc) {
			if (nrejects < 16)
				rejects[nrejects++] = argv[i + 1];
			i++;
		} else if (!strcmp(argv[i], "--max-insns-ratio") && i + 1 < argc) {
			max_ratio = strtod(argv[++i], NULL);
		} else if (nobj < 64) {
			objs[nobj++] = argv[i];
		}
	}
#ifndef WITH_KERNEL
	(void)max_ratio;
	if (kernel) {
		printf("SKIP: built without libbpf\n");
		return 77;
	}
#else
	libbpf_set_print(kernel_print);
#endif
	if (!nobj) {
		printf("SKIP: no objects to verify\n");
		return 77;
	}
	printf("%-28s %-24s %10s %-16s %10s %-16s\n", "object", "program", "xbpf insns", "xbpf stack",
	       kernel ? "kern insns" : "", kernel ? "kern stack" : "");
	for (int o = 0; o < nobj; o++) {
		struct xbpf_object *obj = xbpf_object__open_file(objs[o], NULL);
		struct xbpf_prog *prog = NULL;
		const char *base = strrchr(objs[o], '/') ? strrchr(objs[o], '/') + 1 : objs[o];

		if (!obj) {
			printf("FAIL %s: cannot open (%s)\n", objs[o], strerror(errno));
			failed++;
			continue;
		}
		while ((prog = xbpf_object__next_prog(obj, prog))) {
			struct xbpf_verify_opts opts = { .sz = sizeof(opts), .log_level = 0,
							 .log_buf = logbuf, .log_size = LOG_SIZE };
			struct xbpf_verify_info info;
			char depth[256] = "", *d = depth, key[512], pkey[512];
			int err = xbpf_verify(prog, &opts, &info);
			bool gap = false, expect_reject = false;
			bool want_ok = !!strncmp(xbpf_prog__name(prog), "bad_", 4);

			progs++;
			for (uint32_t f = 0; f < info.func_cnt && d < depth + sizeof(depth) - 8; f++)
				d += sprintf(d, "%s%u", f ? "+" : "", info.stack_depth[f]);
			snprintf(key, sizeof(key), "%s:%s", base, info.err_msg);
			for (int g = 0; err && g < ngaps && !gap; g++)
				gap = !strncmp(key, gaps[g], strlen(gaps[g]));
			snprintf(pkey, sizeof(pkey), "%s:%s:", base, xbpf_prog__name(prog));
			for (int r = 0; r < nrejects && !expect_reject; r++) {
				if (strncmp(rejects[r], pkey, strlen(pkey)))
					continue;
				expect_reject = true;
				if (!err || !strstr(info.err_msg, rejects[r] + strlen(pkey))) {
					printf("FAIL: xbpf should reject %s/%s with \"%s\", got: %s\n", base,
					       xbpf_prog__name(prog), rejects[r] + strlen(pkey),
					       err ? info.err_msg : "accepted");
					failed++;
				}
			}
			printf("%-28s %-24s %10u %-16s", base, xbpf_prog__name(prog), info.insn_processed,
			       depth);
#ifdef WITH_KERNEL
			if (kernel) {
				unsigned kinsns = 0;
				char kdepth[256];
				int kerr = kernel_verify(objs[o], xbpf_prog__name(prog), &kinsns, kdepth,
							 sizeof(kdepth));

				printf(" %10u %-16s", kinsns, kdepth);
				if (by_name && !kerr != want_ok) {
					printf("\nFAIL: the kernel %s it (%s)", kerr ? "rejects" : "accepts",
					       kmsg);
					failed++;
				} else if (by_name && kerr && err && !strstr(logbuf, kmsg)) {
					printf("\nFAIL: xlb's log lacks the kernel's \"%s\":\n%s", kmsg,
					       logbuf);
					failed++;
				} else if (by_name && kerr && err) {
					printf("\n  both: %s", kmsg);
				} else if (!kerr != !err && !gap) {
					printf("\nDIFF: kernel %s (%d), xbpf %s", kerr ? "rejects" : "accepts",
					       kerr, err ? "rejects" : "accepts");
					failed++;
				} else if (!kerr && !err && strcmp(kdepth, depth)) {
					/* Same linking as libbpf: the per-function stack must agree. */
					printf("\nDIFF: stack depths differ (kernel %s, xbpf %s)", kdepth, depth);
					failed++;
				} else if (!kerr && !err && max_ratio > 0 &&
					   (!kinsns || info.insn_processed > max_ratio * kinsns)) {
					printf("\nDIFF: processed insns %u vs the kernel's %u: ratio above %.2f",
					       info.insn_processed, kinsns, max_ratio);
					failed++;
				}
			}
#endif
			printf("\n");
			if (by_name) {
				if (!err != want_ok) {
					printf("FAIL: xbpf %s %s/%s: %s %s\n", err ? "rejects" : "accepts", base,
					       xbpf_prog__name(prog), info.err_msg, info.err_line);
					failed++;
				}
				continue;
			}
			if (expect_reject) {
				if (err)
					printf("REJECTED as expected: %s/%s: %s\n", base,
					       xbpf_prog__name(prog), info.err_msg);
			} else if (err && gap) {
				printf("KNOWN GAP: xbpf rejects %s/%s: %s %s\n", base, xbpf_prog__name(prog),
				       info.err_msg, info.err_line);
				known++;
			} else if (err) {
				printf("FAIL: xbpf rejects %s/%s: insn %d: %s %s\n%s\n", base,
				       xbpf_prog__name(prog), info.err_insn, info.err_msg, info.err_line,
				       strlen(logbuf) > 3000 ? logbuf + strlen(logbuf) - 3000 : logbuf);
				failed++;
			}
		}
		xbpf_object__close(obj);
	}
	printf("%d programs, %d failures, %d known gaps\n", progs, failed, known);
	free(logbuf);
	return failed ? 1 : 0;
}
