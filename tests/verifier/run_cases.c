// SPDX-License-Identifier: MIT
/*
 * run_cases.c - run verifier cases through xbpf_verify() and, with
 * --kernel, through this machine's kernel (BPF_PROG_LOAD), comparing
 * verdicts.
 *
 *   run_cases [--kernel] [--file CASES.txt] [-v] [NAME-SUBSTRING]
 *
 * Without --file the built-in corpus (cases.c) runs.  A case file has one
 * case per line, tab-separated:
 *   name  type  accept|reject  errstr  kernel_errstr  maps  insns
 * errstr/kernel_errstr/maps may be "-"; maps is "type:key:value:max,...";
 * insns is "code:dst:src:off:imm ..." with code in hex.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcase.h"
#include "xbpf_verifier.h"

#ifdef WITH_KERNEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>
#endif

#define LOG_SIZE (1 << 20)

static char our_log[LOG_SIZE];
static bool verbose;
/* --show: both verifiers' logs at level 2, for looking into one case. */
static int show_level;

static const struct xbpf_insn *case_insns(const struct vcase *c)
{
	return c->big_insns ? c->big_insns : c->insns;
}

static size_t insn_count(const struct vcase *c)
{
	size_t n = c->insn_cnt;

	if (n || c->big_insns)
		return n;
	for (size_t i = 0; i < VCASE_MAX_INSNS; i++) {
		const struct xbpf_insn *in = &c->insns[i];

		if (in->code || in->dst_reg || in->src_reg || in->off || in->imm)
			n = i + 1;
	}
	return n;
}

/* 1 accepted, 0 rejected, <0 could not run. */
static int run_ours(const struct vcase *c, struct xbpf_verify_info *info)
{
	struct xbpf_verify_opts opts = { .sz = sizeof(opts), .log_level = show_level, .log_buf = our_log,
					 .log_size = sizeof(our_log), .prog_flags = c->prog_flags };
	struct xbpf_object *obj;
	struct xbpf_prog *prog;
	int err;

	struct xbpf_object_open_opts oo = { .sz = sizeof(oo), .license = c->license };

	obj = xbpf_object__open_raw(case_insns(c), insn_count(c), c->type, c->maps, c->map_cnt, &oo);
	if (!obj) {
		snprintf(our_log, sizeof(our_log), "open_raw failed: %s\n", strerror(errno));
		return -errno;
	}
	prog = xbpf_object__next_prog(obj, NULL);
	err = xbpf_verify(prog, &opts, info);
	xbpf_object__close(obj);
	if (err && err != -EACCES && err != -EINVAL && err != -E2BIG && err != -EFAULT &&
	    err != -EBADF)
		return err;
	return err == 0;
}

#ifdef WITH_KERNEL
static char kern_log[LOG_SIZE];

static int kernel_prog_type(enum xbpf_prog_type t)
{
	switch (t) {
	case XBPF_PROG_SOCKET_FILTER: return BPF_PROG_TYPE_SOCKET_FILTER;
	case XBPF_PROG_SCHED_CLS: return BPF_PROG_TYPE_SCHED_CLS;
	case XBPF_PROG_SCHED_ACT: return BPF_PROG_TYPE_SCHED_ACT;
	case XBPF_PROG_XDP: return BPF_PROG_TYPE_XDP;
	case XBPF_PROG_TRACEPOINT: return BPF_PROG_TYPE_TRACEPOINT;
	default: return -1;
	}
}

/* 1 accepted, 0 rejected, <0 could not run. */
static int run_kernel(const struct vcase *c)
{
	int fds[VCASE_MAX_MAPS], fd, ret, ptype = kernel_prog_type(c->type);
	size_t n = insn_count(c);
	struct bpf_insn *insns;

	if (ptype < 0)
		return -EOPNOTSUPP;
	insns = calloc(n ? n : 1, sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	for (size_t m = 0; m < c->map_cnt; m++) {
		LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = c->maps[m].map_flags);

		fds[m] = bpf_map_create((enum bpf_map_type)c->maps[m].type, NULL, c->maps[m].key_size,
					c->maps[m].value_size, c->maps[m].max_entries, &mo);
		if (fds[m] < 0) {
			ret = -errno;
			while (m--)
				close(fds[m]);
			free(insns);
			return ret;
		}
	}
	memcpy(insns, case_insns(c), n * sizeof(insns[0]));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) &&
		    (insns[i].src_reg == BPF_PSEUDO_MAP_FD || insns[i].src_reg == BPF_PSEUDO_MAP_VALUE) &&
		    insns[i].imm >= 0 && (size_t)insns[i].imm < c->map_cnt)
			insns[i].imm = fds[insns[i].imm];
	{
		/* The verdict without a log (a long log could end in ENOSPC), then the message. */
		LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = c->prog_flags);

		kern_log[0] = '\0';
		fd = bpf_prog_load(ptype, "xlbt_v3", c->license ? c->license : "GPL", insns, n, &o);
		if (fd < 0) {
			int saved = errno;

			o.log_buf = kern_log;
			o.log_size = sizeof(kern_log);
			o.log_level = 1;
			bpf_prog_load(ptype, "xlbt_v3", c->license ? c->license : "GPL", insns, n, &o);
			errno = saved;
		}
		if (show_level) {
			o.log_buf = kern_log;
			o.log_size = sizeof(kern_log);
			o.log_level = show_level;
			kern_log[0] = '\0';
			close(bpf_prog_load(ptype, "xlbt_v3", c->license ? c->license : "GPL", insns, n, &o));
			printf("---- kernel log (%s) ----\n%s", c->name, kern_log);
		}
	}
	ret = fd >= 0;
	if (fd >= 0)
		close(fd);
	else if (errno != EACCES && errno != EINVAL && errno != E2BIG && errno != EFAULT &&
		 errno != ENOSPC && errno != EBADF && errno != 524 /* ENOTSUPP */)
		ret = -errno;
	for (size_t m = 0; m < c->map_cnt; m++)
		close(fds[m]);
	free(insns);
	return ret;
}

/*
 * Does the kernel let a program of type kt call helper id, with license?
 * 1 yes, 0 no (its log names the helper as not for this program type;
 * libbpf 1.1's libbpf_probe_bpf_helper() misses 6.x's wording), and sets
 * *gpl_refused when the kernel refused the license.
 */
static int kernel_allows_helper(enum bpf_prog_type kt, int id, const char *license,
				bool *gpl_refused)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = id },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = kern_log, .log_size = sizeof(kern_log),
		    .log_level = 1);
	int fd;

	kern_log[0] = '\0';
	fd = bpf_prog_load(kt, "xlbt_helper", license, insns, 3, &o);
	if (fd >= 0)
		close(fd);
	*gpl_refused = fd < 0 && strstr(kern_log, "cannot call GPL-restricted");
	if (fd < 0 && (strstr(kern_log, "cannot use helper") || strstr(kern_log, "invalid func") ||
		       strstr(kern_log, "unknown func")))
		return 0;
	return 1;
}

/*
 * The whole prototype table against this kernel: each helper xlb knows is
 * allowed for exactly the program types the kernel allows it for, and is
 * GPL-only exactly when the kernel says so to a program licensed "MIT".
 * Returns the mismatches.
 */
static size_t check_helper_table(void)
{
	static const struct {
		enum xbpf_prog_type xt;
		enum bpf_prog_type kt;
	} types[] = {
		{ XBPF_PROG_SOCKET_FILTER, BPF_PROG_TYPE_SOCKET_FILTER },
		{ XBPF_PROG_SCHED_CLS, BPF_PROG_TYPE_SCHED_CLS },
		{ XBPF_PROG_SCHED_ACT, BPF_PROG_TYPE_SCHED_ACT },
		{ XBPF_PROG_XDP, BPF_PROG_TYPE_XDP },
		{ XBPF_PROG_TRACEPOINT, BPF_PROG_TYPE_TRACEPOINT },
	};
	size_t bad = 0, known = 0;

	for (int id = 1; id < __BPF_FUNC_MAX_ID; id++) {
		const struct xbpf_helper_proto *p = xbpf_helper_proto(id);
		bool gpl_checked = false;

		if (!p)
			continue;
		known++;
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			bool ours = p->prog_types & XBPF_PROG_BIT(types[t].xt), gpl_refused;
			int kern = kernel_allows_helper(types[t].kt, id, "GPL", &gpl_refused);

			if (ours != (kern == 1)) {
				printf("DIFF helper table: bpf_%s#%d in %s: kernel %s, xlb %s\n", p->name,
				       id, xbpf_prog_type_name(types[t].xt), kern ? "allows" : "refuses",
				       ours ? "allows" : "refuses");
				bad++;
			}
			if (ours && !gpl_checked) {
				kernel_allows_helper(types[t].kt, id, "MIT", &gpl_refused);
				if (gpl_refused != p->gpl_only) {
					printf("DIFF helper table: bpf_%s#%d: kernel %s GPL, xlb %s\n",
					       p->name, id, gpl_refused ? "needs" : "does not need",
					       p->gpl_only ? "needs" : "does not need");
					bad++;
				}
				gpl_checked = true;
			}
		}
	}
	printf("helper table: %zu helpers, %zu differences from the kernel\n", known, bad);
	return bad;
}
#endif

/* ---- case files -------------------------------------------------------- */

static char *dup_field(const char *s)
{
	return strcmp(s, "-") ? strdup(s) : NULL;
}

static int parse_line(char *line, struct vcase *c)
{
	char *f[7], *save = NULL, *tok;
	int n = 0;

	memset(c, 0, sizeof(*c));
	for (tok = strtok_r(line, "\t\n", &save); tok && n < 7; tok = strtok_r(NULL, "\t\n", &save))
		f[n++] = tok;
	if (n != 7)
		return -EINVAL;
	c->name = strdup(f[0]);
	if (xbpf_prog_type_from_name(f[1], &c->type))
		return -EINVAL;
	c->result = !strcmp(f[2], "accept") ? VCASE_ACCEPT : VCASE_REJECT;
	c->errstr = dup_field(f[3]);
	c->kernel_errstr = dup_field(f[4]);
	if (strcmp(f[5], "-")) {
		char *ms = NULL, *m;

		for (m = strtok_r(f[5], ",", &ms); m && c->map_cnt < VCASE_MAX_MAPS;
		     m = strtok_r(NULL, ",", &ms)) {
			struct xbpf_map_spec *sp = &c->maps[c->map_cnt];
			unsigned t, k, v, me;

			if (sscanf(m, "%u:%u:%u:%u", &t, &k, &v, &me) != 4)
				return -EINVAL;
			snprintf(sp->name, sizeof(sp->name), "map%zu", c->map_cnt);
			sp->type = t;
			sp->key_size = k;
			sp->value_size = v;
			sp->max_entries = me;
			c->map_cnt++;
		}
	}
	{
		char *is = NULL, *in;

		for (in = strtok_r(f[6], " ", &is); in; in = strtok_r(NULL, " ", &is)) {
			unsigned code, d, s;
			int off, imm;

			if (sscanf(in, "%x:%u:%u:%d:%d", &code, &d, &s, &off, &imm) != 5)
				return -EINVAL;
			if (c->insn_cnt == VCASE_MAX_INSNS || (c->big_insns && !(c->insn_cnt & (c->insn_cnt - 1)))) {
				/* Past insns[]: grow a heap copy, doubling at powers of two. */
				struct xbpf_insn *b = realloc(c->big_insns, 2 * c->insn_cnt * sizeof(*b));

				if (!b)
					return -ENOMEM;
				if (!c->big_insns)
					memcpy(b, c->insns, sizeof(c->insns));
				c->big_insns = b;
			}
			(c->big_insns ? c->big_insns : c->insns)[c->insn_cnt++] =
				(struct xbpf_insn){ .code = code, .dst_reg = d, .src_reg = s, .off = off, .imm = imm };
		}
	}
	return c->insn_cnt ? 0 : -EINVAL;
}

static int load_file(const char *path, struct vcase **ret, size_t *ret_cnt)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, cnt = 0, alloc = 0;
	struct vcase *cases = NULL;

	if (!fp)
		return -errno;
	while (getline(&line, &cap, fp) > 0) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (cnt == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			cases = realloc(cases, alloc * sizeof(*cases));
			if (!cases)
				return -ENOMEM;
		}
		if (parse_line(line, &cases[cnt])) {
			fprintf(stderr, "bad case line: %s\n", line);
			return -EINVAL;
		}
		cnt++;
	}
	free(line);
	fclose(fp);
	*ret = cases;
	*ret_cnt = cnt;
	return 0;
}

/* Seed inputs for fuzz_verifier from the built-in corpus (its input format). */
static int dump_corpus(const char *dir)
{
	static const enum xbpf_prog_type order[] = { XBPF_PROG_XDP, XBPF_PROG_SCHED_CLS,
						      XBPF_PROG_SOCKET_FILTER, XBPF_PROG_TRACEPOINT };

	for (size_t i = 0; i < vcase_cnt; i++) {
		const struct vcase *c = &vcases[i];
		uint8_t hdr[4] = { 0, 16, 64, 0 }, pkt[64] = { 0 };
		char path[4096];
		FILE *fp;

		for (uint8_t t = 0; t < 4; t++)
			if (order[t] == c->type)
				hdr[0] = t;
		snprintf(path, sizeof(path), "%s/case-%03zu", dir, i);
		fp = fopen(path, "wb");
		if (!fp)
			return 1;
		fwrite(hdr, 1, sizeof(hdr), fp);
		fwrite(c->insns, sizeof(c->insns[0]), insn_count(c), fp);
		fwrite(pkt, 1, sizeof(pkt), fp);
		fclose(fp);
	}
	return 0;
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const struct vcase *cases = vcases;
	size_t cnt = vcase_cnt, failed = 0, diffs = 0, run = 0, kskips = 0;
	const char *file = NULL, *filter = NULL;
	bool kernel = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--kernel"))
			kernel = true;
		else if (!strcmp(argv[i], "--file") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--dump-corpus") && i + 1 < argc)
			return dump_corpus(argv[i + 1]);
		else if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--show"))
			show_level = 2;
		else
			filter = argv[i];
	}
#ifndef WITH_KERNEL
	if (kernel) {
		printf("SKIP: built without libbpf, no kernel comparison\n");
		return 77;
	}
#else
	if (kernel) {
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);

		if (fd < 0) {
			printf("SKIP: kernel refuses BPF here (%s)\n", strerror(errno));
			return 77;
		}
		close(fd);
	}
#endif
	if (!file) {
		/* Both built-in corpora, one after the other. */
		struct vcase *all = calloc(vcase_cnt + vcase_gaps_cnt + vcase_helpers_cnt, sizeof(*all));

		if (!all)
			return 1;
		memcpy(all, vcases, vcase_cnt * sizeof(*all));
		memcpy(all + vcase_cnt, vcases_gaps, vcase_gaps_cnt * sizeof(*all));
		memcpy(all + vcase_cnt + vcase_gaps_cnt, vcases_helpers,
		       vcase_helpers_cnt * sizeof(*all));
		cases = all;
		cnt = vcase_cnt + vcase_gaps_cnt + vcase_helpers_cnt;
	} else {
		struct vcase *fc = NULL;
		int err = load_file(file, &fc, &cnt);

		if (err) {
			fprintf(stderr, "cannot load %s: %s\n", file, strerror(-err));
			return 1;
		}
		cases = fc;
	}
	for (size_t i = 0; i < cnt; i++) {
		const struct vcase *c = &cases[i];
		struct xbpf_verify_info info;
		bool expect_ok = c->result == VCASE_ACCEPT;
		int ours;

		if (filter && !strstr(c->name, filter))
			continue;
		run++;
		ours = run_ours(c, &info);
		if (show_level)
			printf("---- xlb log (%s) ----\n%s", c->name, our_log);
		if (ours < 0) {
			printf("FAIL %s: could not verify (%s)\n", c->name, strerror(-ours));
			failed++;
			continue;
		}
		if (!kernel) {
			bool ok = (ours == 1) == expect_ok;

			if (ok && !expect_ok && c->errstr && !strstr(our_log, c->errstr)) {
				printf("FAIL %s: rejected as expected but log lacks \"%s\":\n%s", c->name,
				       c->errstr, our_log);
				failed++;
			} else if (!ok) {
				printf("FAIL %s: expected %s, got %s%s%s\n%s", c->name,
				       expect_ok ? "accept" : "reject", ours ? "accept" : "reject",
				       ours ? "" : ": ", ours ? "" : info.err_msg, our_log);
				failed++;
			} else if (verbose) {
				printf("ok   %s (%u insns processed)%s%s\n", c->name, info.insn_processed,
				       ours ? "" : ": ", ours ? "" : info.err_msg);
			}
			continue;
		}
#ifdef WITH_KERNEL
		{
			int kern;

			if (c->kernel_skip) {
				printf("skip %s: %s\n", c->name, c->kernel_skip);
				kskips++;
				continue;
			}
			kern = run_kernel(c);
			if (kern < 0) {
				printf("FAIL %s: kernel load could not run (%s)\n", c->name, strerror(-kern));
				failed++;
				continue;
			}
			if (kern != ours) {
				printf("DIFF %s: kernel %s, xbpf %s%s%s\n  kernel log tail: %.300s\n", c->name,
				       kern ? "accepts" : "rejects", ours ? "accepts" : "rejects",
				       ours ? "" : ": ", ours ? "" : info.err_msg,
				       strlen(kern_log) > 300 ? kern_log + strlen(kern_log) - 300 : kern_log);
				diffs++;
			} else if (!kern && (c->kernel_errstr || c->errstr) &&
				   !strstr(kern_log, c->kernel_errstr ? c->kernel_errstr : c->errstr)) {
				printf("FAIL %s: kernel rejects too, but its log lacks \"%s\":\n%.600s\n",
				       c->name, c->kernel_errstr ? c->kernel_errstr : c->errstr,
				       strlen(kern_log) > 600 ? kern_log + strlen(kern_log) - 600 : kern_log);
				failed++;
			} else if (verbose) {
				printf("same %s: both %s%s%s\n", c->name, ours ? "accept" : "reject",
				       ours ? "" : "; xbpf: ", ours ? "" : info.err_msg);
			}
		}
#endif
	}
#ifdef WITH_KERNEL
	if (kernel && !file && !filter)
		diffs += check_helper_table();
#endif
	printf("%zu cases, %zu failed, %zu verdict differences vs kernel, %zu not loadable in kernel\n",
	       run, failed, diffs, kskips);
	return failed || diffs ? 1 : 0;
}
