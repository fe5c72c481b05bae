// SPDX-License-Identifier: MIT
/*
 * kselftest_run.c - run the kernel's verifier selftests (dumped at test time
 * by kselftest.py from Debian's linux-source tarball) through xlb's verifier
 * and through this machine's kernel, and compare the verdicts.
 *
 *   kselftest_run CASES.txt [-v] [--only SUBSTR] [--skips] [--first N] [--count N]
 *
 * The kernel is the reference: the 6.1 suite's own expectations (result,
 * errstr) were written for 6.1, and this machine runs a newer kernel, so
 * they are printed but never judged.  A case is skipped, with its reason,
 * when it needs something xlb does not have (a program type, a map type, a
 * kernel helper, kfuncs, kernel BTF) or the kernel will not load it for a
 * reason unrelated to verification (an unsupported program type or feature).
 * Every other case is "runnable", and each runnable case must get the same
 * verdict from both.  Map-referencing instructions are patched as
 * test_verifier patches them: maps of the same shape are created on both
 * sides, the kernel's by bpf_map_create(), xlb's as map specs.
 *
 * Output: one DIFF line per disagreement with both messages (FALSE ACCEPT
 * when xlb accepts what the kernel rejects), the skip list with --skips,
 * and a closing summary line.  Exit 0 when every runnable case agrees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/btf.h>

#include "xbpf_verifier.h"

#define MAX_FIXUPS 8
#define KLOG_SIZE (4 << 20)
#define XLOG_SIZE (4 << 20)

/* The fixup kinds of test_verifier.c, in the order of its map_fds[]. */
enum fixup_kind {
	FX_HASH_8B,
	FX_HASH_48B,
	FX_HASH_16B,
	FX_ARRAY_48B,
	FX_PROG1,
	FX_PROG2,
	FX_MAP_IN_MAP,
	FX_CGROUP_STORAGE,
	FX_PERCPU_CGROUP_STORAGE,
	FX_SOCKMAP,
	FX_SOCKHASH,
	FX_XSKMAP,
	FX_STACKTRACE,
	FX_SPIN_LOCK,
	FX_ARRAY_RO,
	FX_ARRAY_WO,
	FX_ARRAY_SMALL,
	FX_SK_STORAGE,
	FX_EVENT_OUTPUT,
	FX_REUSEPORT,
	FX_RINGBUF,
	FX_TIMER,
	FX_KPTR,
	FX_CNT
};

static const struct fixup_def {
	const char *name;
	/* Shape (both sides) and why xlb cannot have it (NULL: it can). */
	uint32_t type, key, value, max, flags;
	const char *xlb_gap;
} fixups[FX_CNT] = {
	[FX_HASH_8B] = { "map_hash_8b", BPF_MAP_TYPE_HASH, 8, 8, 1, BPF_F_NO_PREALLOC },
	[FX_HASH_48B] = { "map_hash_48b", BPF_MAP_TYPE_HASH, 8, 48, 1, BPF_F_NO_PREALLOC },
	[FX_HASH_16B] = { "map_hash_16b", BPF_MAP_TYPE_HASH, 8, 16, 1, BPF_F_NO_PREALLOC },
	[FX_ARRAY_48B] = { "map_array_48b", BPF_MAP_TYPE_ARRAY, 4, 48, 1 },
	[FX_PROG1] = { "prog1", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4 },
	[FX_PROG2] = { "prog2", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 8 },
	[FX_MAP_IN_MAP] = { "map_in_map", BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 1 },
	[FX_CGROUP_STORAGE] = { "cgroup_storage", BPF_MAP_TYPE_CGROUP_STORAGE, 0, 0, 0, 0,
				"cgroup storage maps (cgroup programs only)" },
	[FX_PERCPU_CGROUP_STORAGE] = { "percpu_cgroup_storage", BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE,
				       0, 0, 0, 0, "cgroup storage maps (cgroup programs only)" },
	[FX_SOCKMAP] = { "map_sockmap", BPF_MAP_TYPE_SOCKMAP, 4, 4, 1, 0, "sockmap (kernel sockets)" },
	[FX_SOCKHASH] = { "map_sockhash", BPF_MAP_TYPE_SOCKHASH, 4, 4, 1, 0, "sockhash (kernel sockets)" },
	[FX_XSKMAP] = { "map_xskmap", BPF_MAP_TYPE_XSKMAP, 4, 4, 1, 0, "xskmap (AF_XDP sockets)" },
	[FX_STACKTRACE] = { "map_stacktrace", BPF_MAP_TYPE_STACK_TRACE, 4, 8, 1, 0,
			    "stack trace maps (kernel stacks)" },
	[FX_SPIN_LOCK] = { "map_spin_lock", BPF_MAP_TYPE_ARRAY, 4, 8, 1 },
	[FX_ARRAY_RO] = { "map_array_ro", BPF_MAP_TYPE_ARRAY, 4, 48, 1, BPF_F_RDONLY_PROG },
	[FX_ARRAY_WO] = { "map_array_wo", BPF_MAP_TYPE_ARRAY, 4, 48, 1, BPF_F_WRONLY_PROG },
	[FX_ARRAY_SMALL] = { "map_array_small", BPF_MAP_TYPE_ARRAY, 4, 1, 1 },
	[FX_SK_STORAGE] = { "sk_storage_map", BPF_MAP_TYPE_SK_STORAGE, 4, 8, 0, 0,
			    "socket storage maps (kernel sockets)" },
	[FX_EVENT_OUTPUT] = { "map_event_output", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 1, 0,
			      "perf event arrays" },
	[FX_REUSEPORT] = { "map_reuseport_array", BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8, 1, 0,
			   "reuseport socket arrays" },
	[FX_RINGBUF] = { "map_ringbuf", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096 },
	[FX_TIMER] = { "map_timer", BPF_MAP_TYPE_ARRAY, 4, 16, 1, 0, "BTF map values with a bpf_timer" },
	[FX_KPTR] = { "map_kptr", BPF_MAP_TYPE_ARRAY, 4, 24, 1, 0, "kptrs (kernel BTF objects)" },
};

struct kcase {
	int idx;
	char *descr;
	int prog_type, attach, result;
	unsigned int flags;
	char *errstr, *kfunc;
	int fixup[FX_CNT][MAX_FIXUPS];
	int kfunc_fixups;
	int func_info_cnt;
	struct bpf_func_info func_info[8];
	uint32_t *btf_types;
	int btf_types_cnt;
	uint8_t *btf_strings;
	int btf_strings_len;
	struct bpf_insn *insns;
	int insn_cnt;
};

static bool verbose;
static char *klog, *xlog;

/* ---- reading the dump ---------------------------------------------------- */

static char *unescape(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	for (; *s && *s != '\n'; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static void *parse_hex(const char *s, size_t *ret_len)
{
	size_t n = 0;
	uint8_t *out;

	while (s[n] && s[n] != ' ' && s[n] != '\n')
		n++;
	out = calloc(1, n / 2 + 1);
	for (size_t i = 0; i + 1 < n; i += 2)
		out[i / 2] = (uint8_t)(hexval(s[i]) << 4 | hexval(s[i + 1]));
	*ret_len = n / 2;
	return out;
}

static int fixup_by_name(const char *name)
{
	for (int k = 0; k < FX_CNT; k++)
		if (!strcmp(fixups[k].name, name))
			return k;
	return -1;
}

/* One case from fp; 1 when read, 0 at the end, -1 on a malformed dump. */
static int read_case(FILE *fp, struct kcase *c, char **line, size_t *cap)
{
	memset(c, 0, sizeof(*c));
	while (getline(line, cap, fp) > 0) {
		char *l = *line;

		if (!strncmp(l, "case ", 5)) {
			char *sp = strchr(l + 5, ' ');

			c->idx = atoi(l + 5);
			c->descr = unescape(sp ? sp + 1 : "?");
		} else if (!strncmp(l, "type ", 5)) {
			if (sscanf(l, "type %d flags %u attach %d result %d", &c->prog_type, &c->flags,
				   &c->attach, &c->result) != 4)
				return -1;
		} else if (!strncmp(l, "errstr ", 7)) {
			c->errstr = unescape(l + 7);
		} else if (!strncmp(l, "kfunc ", 6)) {
			c->kfunc = unescape(l + 6);
		} else if (!strncmp(l, "kfunc_fixup ", 12)) {
			c->kfunc_fixups++;
		} else if (!strncmp(l, "fixup ", 6)) {
			char name[64], *p = l + 6;
			int k, n = 0, off;

			if (sscanf(p, "%63s%n", name, &off) != 1 || (k = fixup_by_name(name)) < 0)
				return -1;
			p += off;
			while (n < MAX_FIXUPS && sscanf(p, "%d%n", &c->fixup[k][n], &off) == 1) {
				n++;
				p += off;
			}
		} else if (!strncmp(l, "func_info ", 10)) {
			char *p = l + 10;
			int off;

			while (c->func_info_cnt < 8 &&
			       sscanf(p, "%u:%u%n", &c->func_info[c->func_info_cnt].insn_off,
				      &c->func_info[c->func_info_cnt].type_id, &off) == 2) {
				c->func_info_cnt++;
				p += off;
			}
		} else if (!strncmp(l, "btf ", 4)) {
			size_t tl, sl;
			char *sp = strchr(l + 4, ' ');

			c->btf_types = parse_hex(l + 4, &tl);
			c->btf_types_cnt = (int)(tl / 4);
			/* The dump writes the words big-endian: make them host order. */
			for (int i = 0; i < c->btf_types_cnt; i++) {
				uint8_t *b = (uint8_t *)&c->btf_types[i];

				c->btf_types[i] = (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
			}
			c->btf_strings = sp ? parse_hex(sp + 1, &sl) : NULL;
			c->btf_strings_len = sp ? (int)sl : 0;
		} else if (!strncmp(l, "insns ", 6)) {
			char *p = l + 6;
			size_t len;

			c->insn_cnt = (int)strtol(p, &p, 10);
			c->insns = calloc(c->insn_cnt ? c->insn_cnt : 1, sizeof(*c->insns));
			for (int i = 0; i < c->insn_cnt; i++) {
				void *b;

				while (*p == ' ')
					p++;
				b = parse_hex(p, &len);
				if (len != 8)
					return -1;
				memcpy(&c->insns[i], b, 8);
				free(b);
				p += 16;
			}
		} else if (!strncmp(l, "end", 3)) {
			return 1;
		}
	}
	return 0;
}

static void free_case(struct kcase *c)
{
	free(c->descr);
	free(c->errstr);
	free(c->kfunc);
	free(c->btf_types);
	free(c->btf_strings);
	free(c->insns);
}

/* ---- what xlb cannot run ---------------------------------------------------- */

static const char *prog_type_str(int t)
{
	const char *s = libbpf_bpf_prog_type_str(t);

	return s ? s : "?";
}

static int xlb_prog_type(int t, enum xbpf_prog_type *ret)
{
	switch (t) {
	case BPF_PROG_TYPE_SOCKET_FILTER: *ret = XBPF_PROG_SOCKET_FILTER; return 0;
	case BPF_PROG_TYPE_SCHED_CLS: *ret = XBPF_PROG_SCHED_CLS; return 0;
	case BPF_PROG_TYPE_SCHED_ACT: *ret = XBPF_PROG_SCHED_ACT; return 0;
	case BPF_PROG_TYPE_XDP: *ret = XBPF_PROG_XDP; return 0;
	case BPF_PROG_TYPE_TRACEPOINT: *ret = XBPF_PROG_TRACEPOINT; return 0;
	default: return -1;
	}
}

static bool is_ldimm64(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_DW | BPF_IMM);
}

/*
 * Does this kernel let a program of type kt call helper id?  (libbpf 1.1's
 * libbpf_probe_bpf_helper() misses 6.x's "cannot use helper" wording and
 * says yes to every helper the kernel has.)
 */
static bool kernel_allows_helper(int kt, int id)
{
	static char log[4096];
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = id },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd;

	log[0] = '\0';
	fd = bpf_prog_load(kt, NULL, "GPL", insns, 3, &o);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return !strstr(log, "cannot use helper") && !strstr(log, "invalid func") &&
	       !strstr(log, "unknown func");
}

static const char *skip_reason(const struct kcase *c, char *buf, size_t size)
{
	enum xbpf_prog_type xt;

	if (xlb_prog_type(c->prog_type, &xt)) {
		snprintf(buf, size, "program type %s: not an xlb program type", prog_type_str(c->prog_type));
		return buf;
	}
	if (c->kfunc || c->kfunc_fixups)
		return "kfunc calls: need the kernel's BTF";
	if (c->flags & BPF_F_SLEEPABLE)
		return "sleepable programs (tracing/LSM only)";
	for (int k = 0; k < FX_CNT; k++) {
		if (c->fixup[k][0] && fixups[k].xlb_gap) {
			snprintf(buf, size, "map kind %s: xlb has no %s", fixups[k].name, fixups[k].xlb_gap);
			return buf;
		}
	}
	for (int i = 0; i < c->insn_cnt; i++) {
		const struct bpf_insn *in = &c->insns[i];

		if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_KFUNC_CALL)
			return "kfunc calls: need the kernel's BTF";
		if (is_ldimm64(in) && in->src_reg == BPF_PSEUDO_BTF_ID)
			return "ld_imm64 of a kernel BTF object (ksym)";
		if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 && in->imm > 0 &&
		    in->imm < __BPF_FUNC_MAX_ID) {
			const struct xbpf_helper_proto *p = xbpf_helper_proto(in->imm);

			/* A helper the kernel allows here and xlb does not know. */
			if ((!p || !(p->prog_types & XBPF_PROG_BIT(xt))) &&
			    kernel_allows_helper(c->prog_type, in->imm)) {
				snprintf(buf, size, "helper #%d (%s): not in xlb's verifier", in->imm,
					 p ? p->name : "unknown to xlb");
				return buf;
			}
		}
		if (is_ldimm64(in))
			i++;
	}
	return NULL;
}

/*
 * Features found only on the path walk: when xlb refuses a case the kernel
 * accepts with one of these messages, the case needs something xlb does
 * not model, and is listed as skipped with the reason, not counted.
 */
static const struct {
	const char *xlb_msg, *reason;
} unmodelled[] = {
	{ "invalid mem access 'map_ptr'",
	  "loads of struct bpf_map fields through a map pointer (the kernel's vmlinux BTF)" },
};

static const char *unmodelled_reason(const char *xlb_msg)
{
	for (size_t i = 0; i < sizeof(unmodelled) / sizeof(unmodelled[0]); i++)
		if (strstr(xlb_msg, unmodelled[i].xlb_msg))
			return unmodelled[i].reason;
	return NULL;
}

/* ---- the kernel's side -------------------------------------------------- */

/*
 * The value type test_verifier gives its map_spin_lock, as BTF:
 * struct val { int cnt; struct bpf_spin_lock l; } (the lock at offset 4).
 */
static int spin_lock_btf(void)
{
	static const char strs[] = "\0int\0bpf_spin_lock\0val\0cnt\0l";
	const uint32_t types[] = {
		/* [1] int */
		1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
		/* [2] struct bpf_spin_lock { int val; } */
		5, BTF_KIND_STRUCT << 24 | 1, 4, 19, 1, 0,
		/* [3] struct val { int cnt; struct bpf_spin_lock l; } */
		19, BTF_KIND_STRUCT << 24 | 2, 8, 23, 1, 0, 27, 2, 32,
	};
	struct btf_header hdr = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(hdr),
				  .type_len = sizeof(types), .str_off = sizeof(types),
				  .str_len = sizeof(strs) };
	uint8_t blob[sizeof(hdr) + sizeof(types) + sizeof(strs)];

	memcpy(blob, &hdr, sizeof(hdr));
	memcpy(blob + sizeof(hdr), types, sizeof(types));
	memcpy(blob + sizeof(hdr) + sizeof(types), strs, sizeof(strs));
	return bpf_btf_load(blob, sizeof(blob), NULL);
}

static int kernel_map(int kind)
{
	const struct fixup_def *d = &fixups[kind];
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = d->flags);
	int inner = -1, fd;

	if (kind == FX_SPIN_LOCK) {
		int btf_fd = spin_lock_btf();

		if (btf_fd < 0)
			return -1;
		o.btf_fd = btf_fd;
		o.btf_key_type_id = 1;
		o.btf_value_type_id = 3;
		fd = bpf_map_create(d->type, NULL, d->key, d->value, d->max, &o);
		close(btf_fd);
		return fd;
	}
	if (kind == FX_MAP_IN_MAP) {
		inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
		if (inner < 0)
			return -1;
		o.inner_map_fd = inner;
	}
	fd = bpf_map_create(d->type, NULL, d->key, d->value, d->max, &o);
	if (inner >= 0)
		close(inner);
	return fd;
}

/* The case's BTF as test_verifier builds it: a header, its types, its strings. */
static void *case_btf(const struct kcase *c, size_t *ret_size)
{
	struct btf_header hdr = {
		.magic = BTF_MAGIC,
		.version = BTF_VERSION,
		.hdr_len = sizeof(hdr),
		.type_len = (uint32_t)c->btf_types_cnt * 4,
		.str_off = (uint32_t)c->btf_types_cnt * 4,
		.str_len = (uint32_t)c->btf_strings_len,
	};
	size_t size = sizeof(hdr) + hdr.type_len + hdr.str_len;
	uint8_t *blob;

	*ret_size = 0;
	if (!c->btf_types)
		return NULL;
	blob = malloc(size);
	if (!blob)
		return NULL;
	memcpy(blob, &hdr, sizeof(hdr));
	memcpy(blob + sizeof(hdr), c->btf_types, hdr.type_len);
	memcpy(blob + sizeof(hdr) + hdr.type_len, c->btf_strings, hdr.str_len);
	*ret_size = size;
	return blob;
}

/* 1 accepted, 0 rejected, -1 the kernel would not judge it (errno kept). */
static int kernel_verdict(const struct kcase *c, const struct bpf_insn *insns, char *log, size_t size,
			  int btf_fd)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = c->attach);
	int fd, err;

	if (btf_fd >= 0)
		o.prog_btf_fd = btf_fd;
	if (c->func_info_cnt) {
		o.func_info = c->func_info;
		o.func_info_cnt = c->func_info_cnt;
		o.func_info_rec_size = sizeof(c->func_info[0]);
	}
	o.prog_flags = BPF_F_TEST_RND_HI32 | (c->flags & ~3u);
	if (c->flags & 2)
		o.prog_flags |= BPF_F_STRICT_ALIGNMENT;
	if (c->flags & 1)
		o.prog_flags |= BPF_F_ANY_ALIGNMENT;
	fd = bpf_prog_load(c->prog_type, NULL, "GPL", insns, c->insn_cnt, &o);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	err = errno;
	if (err == EPERM || err == ENOMEM) {
		errno = err;
		return -1;
	}
	/* Rejected: load again for the message (rotating log keeps the tail). */
	o.log_buf = log;
	o.log_size = size;
	o.log_level = 1;
	log[0] = '\0';
	fd = bpf_prog_load(c->prog_type, NULL, "GPL", insns, c->insn_cnt, &o);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	/*
	 * ENOTSUPP is the verifier's verdict on some programs (a direct map
	 * value on a map type without it); without a verifier log it is the
	 * loader refusing a feature, which is not a verification.
	 */
	if (err == 524 && !strstr(log, "processed ")) {
		errno = err;
		return -1;
	}
	return 0;
}

/* ---- xlb's side --------------------------------------------------------------- */

static int xlb_verdict(const struct kcase *c, const struct bpf_insn *insns,
		       const struct xbpf_map_spec *maps, size_t map_cnt, struct xbpf_verify_info *info)
{
	XBPF_OPTS(xbpf_verify_opts, o, .log_buf = xlog, .log_size = XLOG_SIZE);
	/* struct bpf_func_info and struct xbpf_func_info are the same two words. */
	XBPF_OPTS(xbpf_object_open_opts, oo, .func_info = (const void *)c->func_info,
		  .func_info_cnt = (size_t)c->func_info_cnt);
	void *btf = case_btf(c, &oo.btf_size);
	uint32_t flags = c->flags & ~3u;
	enum xbpf_prog_type t = XBPF_PROG_UNSPEC;
	struct xbpf_object *obj;
	int err;

	xlb_prog_type(c->prog_type, &t);
	/* test_verifier's F_* bits 0 and 1 stand for these two kernel flags. */
	if (c->flags & 2)
		flags |= XBPF_F_STRICT_ALIGNMENT;
	if (c->flags & 1)
		flags |= XBPF_F_ANY_ALIGNMENT;
	o.prog_flags = flags | XBPF_F_TEST_RND_HI32;
	memset(info, 0, sizeof(*info));
	xlog[0] = '\0';
	oo.btf = oo.func_info_cnt ? btf : NULL;
	if (!oo.btf)
		oo.func_info = NULL, oo.func_info_cnt = oo.btf_size = 0;
	obj = xbpf_object__open_raw((const struct xbpf_insn *)insns, c->insn_cnt, t, maps, map_cnt, &oo);
	free(btf);
	if (!obj) {
		snprintf(info->err_msg, sizeof(info->err_msg), "xbpf_object__open_raw: %s",
			 strerror(errno));
		return 0;
	}
	err = xbpf_verify(xbpf_object__next_prog(obj, NULL), &o, info);
	xbpf_object__close(obj);
	return err == 0;
}

static const char *last_line(const char *log, char *buf, size_t size)
{
	/* The kernel's message: the line before "processed N insns", else the last. */
	const char *end = strstr(log, "\nprocessed ");
	const char *s;
	size_t n;

	if (!end)
		end = log + strlen(log);
	while (end > log && end[-1] == '\n')
		end--;
	s = end;
	while (s > log && s[-1] != '\n')
		s--;
	n = (size_t)(end - s) < size - 1 ? (size_t)(end - s) : size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

/* ---- main --------------------------------------------------------------------- */

struct tally {
	int total, runnable, agree, diffs, false_accepts, skipped;
};

static void run_case(struct kcase *c, bool list_skips, struct tally *t)
{
	struct bpf_insn *kins = calloc(c->insn_cnt ? c->insn_cnt : 1, sizeof(*kins));
	struct bpf_insn *xins = calloc(c->insn_cnt ? c->insn_cnt : 1, sizeof(*xins));
	struct xbpf_map_spec maps[FX_CNT], inner = { .name = "inner", .type = XBPF_MAP_ARRAY,
						      .key_size = 4, .value_size = 4, .max_entries = 1 };
	int fds[FX_CNT], nmaps = 0, kv, xv, btf_fd = -1;
	char why[256], kmsg[512];
	const char *reason;
	struct xbpf_verify_info info;
	bool patched[c->insn_cnt ? c->insn_cnt : 1];

	t->total++;
	if (!c->prog_type)
		c->prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	memcpy(kins, c->insns, c->insn_cnt * sizeof(*kins));
	memcpy(xins, c->insns, c->insn_cnt * sizeof(*xins));
	memset(patched, 0, sizeof(patched));
	for (int k = 0; k < FX_CNT; k++)
		fds[k] = -1;
	reason = skip_reason(c, why, sizeof(why));
	for (int k = 0; !reason && k < FX_CNT; k++) {
		const struct fixup_def *d = &fixups[k];

		if (!c->fixup[k][0])
			continue;
		fds[k] = kernel_map(k);
		if (fds[k] < 0) {
			snprintf(why, sizeof(why), "kernel cannot create %s: %s", d->name, strerror(errno));
			reason = why;
			break;
		}
		memset(&maps[nmaps], 0, sizeof(maps[nmaps]));
		snprintf(maps[nmaps].name, sizeof(maps[nmaps].name), "%s", d->name);
		maps[nmaps].type = (enum xbpf_map_type)d->type;
		maps[nmaps].key_size = d->key;
		maps[nmaps].value_size = d->value;
		maps[nmaps].max_entries = d->max;
		maps[nmaps].map_flags = d->flags;
		if (k == FX_SPIN_LOCK) {
			maps[nmaps].value_btf = true;
			maps[nmaps].has_spin_lock = true;
			maps[nmaps].spin_lock_off = 4;
		}
		if (k == FX_MAP_IN_MAP)
			maps[nmaps].inner = &inner;
		for (int i = 0; i < MAX_FIXUPS && c->fixup[k][i]; i++) {
			int at = c->fixup[k][i];

			if (at < 0 || at >= c->insn_cnt)
				continue;
			kins[at].imm = fds[k];
			xins[at].imm = nmaps;
			patched[at] = true;
		}
		nmaps++;
	}
	if (reason) {
		t->skipped++;
		if (list_skips)
			printf("skip #%d %s: %s\n", c->idx, c->descr, reason);
		goto out;
	}
	/* A map reference the suite left unpatched names no map on xlb's side either. */
	for (int i = 0; i < c->insn_cnt; i++)
		if (is_ldimm64(&xins[i]) && !patched[i] && xins[i].src_reg &&
		    xins[i].imm >= 0 && xins[i].imm < nmaps)
			xins[i].imm += 1 << 20;
	if (c->btf_types) {
		size_t bsize;
		void *blob = case_btf(c, &bsize);

		btf_fd = blob ? bpf_btf_load(blob, bsize, NULL) : -1;
		free(blob);
		if (btf_fd < 0) {
			t->skipped++;
			if (list_skips)
				printf("skip #%d %s: the kernel refuses its BTF (%s)\n", c->idx, c->descr,
				       strerror(errno));
			goto out;
		}
	}
	kv = kernel_verdict(c, kins, klog, KLOG_SIZE, btf_fd);
	if (kv < 0) {
		t->skipped++;
		if (list_skips)
			printf("skip #%d %s: the kernel will not judge it (%s)\n", c->idx, c->descr,
			       errno == 524 ? "ENOTSUPP: unsupported feature" : strerror(errno));
		goto out;
	}
	xv = xlb_verdict(c, xins, maps, nmaps, &info);
	if (kv && !xv && unmodelled_reason(info.err_msg)) {
		t->skipped++;
		if (list_skips)
			printf("skip #%d %s: %s\n", c->idx, c->descr, unmodelled_reason(info.err_msg));
		goto out;
	}
	t->runnable++;
	if (kv == xv) {
		t->agree++;
		if (verbose)
			printf("same #%d %s: both %s%s%s\n", c->idx, c->descr, kv ? "accept" : "reject",
			       kv ? "" : "; xlb: ", kv ? "" : info.err_msg);
		goto out;
	}
	t->diffs++;
	if (xv)
		t->false_accepts++;
	printf("%s #%d %s (%s): kernel %s%s%s, xlb %s%s%s\n", xv ? "FALSE ACCEPT" : "DIFF", c->idx,
	       c->descr, prog_type_str(c->prog_type), kv ? "accepts" : "rejects", kv ? "" : ": ",
	       kv ? "" : last_line(klog, kmsg, sizeof(kmsg)), xv ? "accepts" : "rejects",
	       xv ? "" : ": ", xv ? "" : info.err_msg);
out:
	if (btf_fd >= 0)
		close(btf_fd);
	for (int k = 0; k < FX_CNT; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	free(kins);
	free(xins);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *only = NULL;
	bool list_skips = false;
	int first = 0, count = -1, fd, rc;
	struct tally t = { 0 };
	struct kcase c;
	char *line = NULL;
	size_t cap = 0;
	FILE *fp;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--skips"))
			list_skips = true;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--first") && i + 1 < argc)
			first = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = atoi(argv[++i]);
		else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "usage: kselftest_run CASES.txt [-v] [--skips] [--only S]\n");
		return 2;
	}
	libbpf_set_print(quiet);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	if (fd < 0) {
		printf("SKIP: the kernel refuses BPF here (%s)\n", strerror(errno));
		return 77;
	}
	close(fd);
	fp = fopen(path, "r");
	klog = malloc(KLOG_SIZE);
	xlog = malloc(XLOG_SIZE);
	if (!fp || !klog || !xlog) {
		fprintf(stderr, "kselftest_run: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while ((rc = read_case(fp, &c, &line, &cap)) == 1) {
		if (c.idx >= first && (count < 0 || c.idx < first + count) &&
		    (!only || strstr(c.descr, only)))
			run_case(&c, list_skips, &t);
		free_case(&c);
	}
	if (rc < 0) {
		fprintf(stderr, "kselftest_run: malformed dump near case %d\n", c.idx);
		return 2;
	}
	printf("kernel verifier selftests (linux-source-6.1): %d cases, %d runnable, %d agree "
	       "(%.1f%%), %d disagree (%d false accepts), %d skipped\n",
	       t.total, t.runnable, t.agree, t.runnable ? 100.0 * t.agree / t.runnable : 0.0, t.diffs,
	       t.false_accepts, t.skipped);
	return t.diffs ? 1 : 0;
}
