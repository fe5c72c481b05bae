/* SPDX-License-Identifier: MIT */
/*
 * xbpf.c - the developer CLI of the xbpf toolkit.
 *
 *   xbpf COMMAND [OPTIONS] FILE
 *
 * FILE is an object built by clang -target bpf, or a raw program (a file of
 * little-endian 8-byte instructions, recognised by the missing ELF magic)
 * described by --type and repeated --map TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES;
 * an ld_imm64 with src_reg 1 and imm N refers to the N-th --map.  These
 * options mean the same in every command.
 *
 * Commands are rows of one table (name, handler, options, one-line doc) and
 * options are declared once, with offsetof() into the command config; the
 * help text, `xbpf --man` and `xbpf --bash-completion` are generated from
 * both tables by cli/ (xlb_cli.h), which lbctl and xlbd share.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testbed.h"
#include "xlb_cli.h"
#include "xbpf_verifier.h"

#define MAX_MAPS 64
#define MAX_POSITIONAL 2
#define MAX_FILE_SIZE (16u << 20)

/* Exit statuses: verify and usage errors share 2 ("unusable input"). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
};

struct cli_cfg {
	const char *positional[MAX_POSITIONAL];
	int positional_cnt;
	const char *prog;
	enum xbpf_prog_type type;
	struct xbpf_map_spec maps[MAX_MAPS];
	size_t map_cnt; /* follows maps[] for the --map parser */
	const char *data_in;
	const char *data_out;
	const char *ctx_in;
	uint32_t repeat;
	enum testbed_engine_kind engine;
	uint32_t log_level;
	bool skip_verify;
};

/* ---- options ------------------------------------------------------------ */

static int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v;

	if (xlb_cli_parse_u64(s, 0, UINT32_MAX, &v))
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

/* --map TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES */
static int parse_map(const struct xlb_cli_opt *o, void *field, const char *arg, bool first,
		     char *err, size_t errlen)
{
	struct cli_cfg *cfg = (struct cli_cfg *)((char *)field - offsetof(struct cli_cfg, maps));
	char buf[128], *fields[4], *save = NULL, *tok;
	struct xbpf_map_spec *spec;
	int n = 0;

	if (cfg->map_cnt >= MAX_MAPS || strlen(arg) >= sizeof(buf)) {
		snprintf(err, errlen, "too many maps or too long");
		return -E2BIG;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ":", &save); tok && n < 4; tok = strtok_r(NULL, ":", &save))
		fields[n++] = tok;
	spec = &cfg->maps[cfg->map_cnt];
	memset(spec, 0, sizeof(*spec));
	if (n != 4 || tok || xbpf_map_type_from_name(fields[0], &spec->type) ||
	    parse_u32(fields[1], &spec->key_size) || parse_u32(fields[2], &spec->value_size) ||
	    parse_u32(fields[3], &spec->max_entries)) {
		snprintf(err, errlen, "'%.64s' is not TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES", arg);
		return -EINVAL;
	}
	snprintf(spec->name, sizeof(spec->name), "map%zu", cfg->map_cnt);
	cfg->map_cnt++;
	return 0;
}

static int parse_prog_type(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
			   char *err, size_t errlen)
{
	if (!xbpf_prog_type_from_name(val, field))
		return 0;
	snprintf(err, errlen, "unknown program type '%.32s'", val);
	return -EINVAL;
}

static int parse_engine(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
			char *err, size_t errlen)
{
	if (!testbed_engine_kind_from_name(val, field))
		return 0;
	snprintf(err, errlen, "unknown engine '%.32s'", val);
	return -EINVAL;
}

static const char *const prog_type_words[] = { "xdp", "sched_cls", "sched_act", "socket_filter",
					       "tracepoint", NULL };
static const char *const engine_words[] = { "interp", "jit", "kernel", NULL };

#define F(FIELD) XLB_CLI_FIELD(struct cli_cfg, FIELD)
#define OPT_TYPE                                                                               \
	{ "type", 0, XLB_CLI_CUSTOM, F(type), .metavar = "T", .parse = parse_prog_type,            \
	  .choices = prog_type_words, .complete = XLB_CLI_COMPLETE_WORDS, .def = "xdp",            \
	  .doc = "raw program type: xdp|sched_cls|sched_act|socket_filter|tracepoint" }
#define OPT_MAP                                                                                \
	{ "map", 0, XLB_CLI_CUSTOM, XLB_CLI_F_REPEAT, F(maps), .metavar = "TYPE:KEY:VALUE:MAX",    \
	  .parse = parse_map, .doc = "raw program map (repeatable; ld_imm64 src_reg=1 imm=N is the N-th)" }
#define OPT_PROG { "prog", 0, XLB_CLI_STRING, F(prog), .metavar = "NAME", .doc = "program name" }
#define OPT_DATA_IN                                                                            \
	{ "data-in", 0, XLB_CLI_STRING, F(data_in), .metavar = "PKT",                              \
	  .complete = XLB_CLI_COMPLETE_FILE, .doc = "input packet (or memory) file" }
#define OPT_DATA_OUT                                                                           \
	{ "data-out", 0, XLB_CLI_STRING, F(data_out), .metavar = "OUT",                            \
	  .complete = XLB_CLI_COMPLETE_FILE, .doc = "write the resulting packet here" }
#define OPT_CTX_IN                                                                             \
	{ "ctx-in", 0, XLB_CLI_STRING, F(ctx_in), .metavar = "F",                                  \
	  .complete = XLB_CLI_COMPLETE_FILE, .doc = "context image (struct xdp_md / __sk_buff)" }
#define OPT_REPEAT                                                                             \
	{ "repeat", 0, XLB_CLI_UINT, F(repeat), .metavar = "N", .min = 1, .max = 1000000000,       \
	  .def = "1", .doc = "runs to average over" }
#define OPT_SKIP_VERIFY                                                                        \
	{ "skip-verify", 0, XLB_CLI_FLAG, F(skip_verify), .doc = "run without our verifier" }

static const struct xlb_cli_opt dump_opts[] = { OPT_TYPE, OPT_MAP, { 0 } };
static const struct xlb_cli_opt disasm_opts[] = { OPT_PROG, OPT_TYPE, OPT_MAP, { 0 } };
static const struct xlb_cli_opt run_opts[] = {
	OPT_PROG,
	OPT_DATA_IN,
	OPT_DATA_OUT,
	OPT_CTX_IN,
	OPT_REPEAT,
	{ "engine", 0, XLB_CLI_CUSTOM, F(engine), .metavar = "E", .parse = parse_engine,
	  .choices = engine_words, .complete = XLB_CLI_COMPLETE_WORDS, .def = "interp",
	  .doc = "interp|jit|kernel" },
	OPT_SKIP_VERIFY,
	OPT_TYPE,
	OPT_MAP,
	{ 0 },
};
static const struct xlb_cli_opt verify_opts[] = {
	OPT_PROG,
	{ "log-level", 0, XLB_CLI_UINT, F(log_level), .metavar = "N", .max = 2, .def = "1",
	  .doc = "verifier log level 0|1|2" },
	OPT_TYPE,
	OPT_MAP,
	{ 0 },
};
static const struct xlb_cli_opt jit_opts[] = { OPT_PROG, OPT_SKIP_VERIFY, OPT_TYPE, OPT_MAP, { 0 } };
static const struct xlb_cli_opt conformance_opts[] = {
	{ "engine", 0, XLB_CLI_CUSTOM, F(engine), .metavar = "E", .parse = parse_engine,
	  .choices = engine_words, .complete = XLB_CLI_COMPLETE_WORDS, .def = "interp",
	  .doc = "interp|jit" },
	{ 0 },
};
#undef F

/* ---- commands ----------------------------------------------------------- */

static int cmd_dump(void *arg);
static int cmd_disasm(void *arg);
static int cmd_run(void *arg);
static int cmd_verify(void *arg);
static int cmd_jit(void *arg);
static int cmd_conformance(void *arg);


static const struct xlb_cli_cmd commands[] = {
	{ "dump", "FILE", "list programs, their subprograms (name, first insn, length) and maps",
	  dump_opts, 1, 1, XLB_CLI_COMPLETE_FILE, .run = cmd_dump },
	{ "disasm", "FILE", "disassemble programs in the kernel's xlated syntax", disasm_opts, 1, 1,
	  XLB_CLI_COMPLETE_FILE, .run = cmd_disasm },
	{ "run", "FILE", "run a program once or --repeat times: retval, output length, ns per run",
	  run_opts, 1, 1, XLB_CLI_COMPLETE_FILE, .run = cmd_run },
	{ "verify", "FILE", "verify programs; exit 0 accepted, 1 rejected, 2 unusable input",
	  verify_opts, 1, 1, XLB_CLI_COMPLETE_FILE, .run = cmd_verify },
	{ "jit", "FILE", "JIT-compile a program: native size per subprogram, disassembly via objdump",
	  jit_opts, 1, 1, XLB_CLI_COMPLETE_FILE, .run = cmd_jit },
	{ "conformance-plugin", "[MEMORY_HEX]",
	  "bpf_conformance plugin: program as hex bytes on stdin, print r0 in hex", conformance_opts,
	  0, 1, .run = cmd_conformance },
	{ 0 },
};

enum { CMD_RUN = 2, CMD_CONFORMANCE = 5 };

struct global_flags {
	bool help, man, completion;
};

static const struct xlb_cli_opt global_opts[] = {
	{ "help", 'h', XLB_CLI_FLAG, XLB_CLI_FIELD(struct global_flags, help), .doc = "show this help" },
	{ "man", 0, XLB_CLI_FLAG, XLB_CLI_FIELD(struct global_flags, man),
	  .doc = "print the man page (troff)" },
	{ "bash-completion", 0, XLB_CLI_FLAG, XLB_CLI_FIELD(struct global_flags, completion),
	  .doc = "print the bash completion script" },
	{ 0 },
};

static const struct xlb_cli_section sections[] = {
	{ "FILES", "FILE is an object built by clang -target bpf, or a raw program: a file of "
		   "little-endian 8-byte instructions (recognised by the missing ELF magic) described "
		   "by --type and repeated --map options; an ld_imm64 with src_reg 1 and imm N refers "
		   "to the N-th --map." },
	{ "EXIT STATUS", "0 success; 1 the program failed or was rejected; 2 unusable input or "
			 "usage error." },
	{ "SEE ALSO", "lbctl(8), xlbd(8)" },
	{ 0 },
};

static const struct xlb_cli_prog program = {
	.name = "xbpf",
	.man_section = 1,
	.summary = "load, verify, disassemble, run and JIT-compile eBPF programs with xlb's toolchain",
	.description = "xbpf is the developer CLI of xlb's eBPF toolchain: the ELF loader and linker, "
		       "the verifier, the interpreter, the JITs and (for run --engine kernel) the "
		       "running kernel.",
	.opts = global_opts,
	.cmds = commands,
	.sections = sections,
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int err_usage(const struct xlb_cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xbpf: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	if (cmd)
		xlb_cli_cmd_help(stderr, &program, cmd);
	return EXIT_USAGE;
}

static int parse_args(const struct xlb_cli_cmd *cmd, struct cli_cfg *cfg, int argc, char **argv)
{
	struct global_flags flags = { 0 };
	struct xlb_cli_optset sets[] = { { cmd->opts, cfg, NULL }, { global_opts, &flags, NULL } };
	char *args[argc + 1], err[256];
	int nargs = 0;

	if (xlb_cli_parse(sets, 2, argc, argv, 0, args, &nargs, NULL, err, sizeof(err)))
		return err_usage(cmd, "%s", err);
	if (flags.help) {
		xlb_cli_cmd_help(stdout, &program, cmd);
		exit(EXIT_OK);
	}
	if (nargs > cmd->max_args)
		return err_usage(cmd, "unexpected argument '%s'", args[cmd->max_args]);
	if (nargs < cmd->min_args)
		return err_usage(cmd, "%s needs %s", cmd->name, cmd->args);
	for (int i = 0; i < nargs; i++)
		cfg->positional[i] = args[i];
	cfg->positional_cnt = nargs;
	return 0;
}

/* ---- shared helpers ------------------------------------------------------ */

static int read_file(const char *path, void **ret_buf, size_t *ret_len)
{
	struct stat st;
	void *buf;
	FILE *f = fopen(path, "rb");
	int err = 0;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || st.st_size < 0 || (uint64_t)st.st_size > MAX_FILE_SIZE) {
		err = errno ? -errno : -EFBIG;
		goto out;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		err = -EIO;
		goto out;
	}
	*ret_buf = buf;
	*ret_len = st.st_size;
out:
	fclose(f);
	return err;
}

/* Library messages go to stderr one level down, as the tools' convention. */
static int cli_print(enum xbpf_print_level level, const char *fmt, va_list args)
{
	if (level == XBPF_DEBUG || (level == XBPF_INFO && !getenv("XBPF_VERBOSE")))
		return 0;
	return vfprintf(stderr, fmt, args);
}

static struct xbpf_object *open_object(const struct cli_cfg *cfg)
{
	const char *path = cfg->positional[0];
	struct xbpf_object *obj;

	obj = xbpf_object__open_any(path, cfg->type, cfg->maps, cfg->map_cnt, NULL);
	if (!obj)
		fprintf(stderr, "xbpf: cannot open %s: %s\n", path, strerror(errno));
	return obj;
}

static struct xbpf_prog *find_prog(const struct cli_cfg *cfg, struct xbpf_object *obj)
{
	struct xbpf_prog *prog;

	if (!cfg->prog) {
		prog = xbpf_object__next_prog(obj, NULL);
		if (!prog)
			fprintf(stderr, "xbpf: %s has no programs\n", xbpf_object__name(obj));
		return prog;
	}
	prog = xbpf_object__find_prog(obj, cfg->prog);
	if (!prog)
		fprintf(stderr, "xbpf: no program '%s' in %s\n", cfg->prog, xbpf_object__name(obj));
	return prog;
}

/* ---- dump ---------------------------------------------------------------- */

static int cmd_dump(void *arg)
{
	struct cli_cfg *cfg = arg;
	struct xbpf_object *obj = open_object(cfg);
	struct xbpf_prog *prog = NULL;
	size_t i;

	if (!obj)
		return EXIT_USAGE;
	printf("object %s  license %s\n", xbpf_object__name(obj),
	       xbpf_object__license(obj) ? xbpf_object__license(obj) : "-");
	while ((prog = xbpf_object__next_prog(obj, prog))) {
		size_t nfunc = xbpf_prog__func_cnt(prog);

		printf("prog %s  section %s  type %s  insns %zu  functions %zu\n",
		       xbpf_prog__name(prog), xbpf_prog__section(prog),
		       xbpf_prog_type_name(xbpf_prog__type(prog)), xbpf_prog__insn_cnt(prog), nfunc);
		for (i = 0; i < nfunc; i++) {
			struct xbpf_func_desc fd;

			if (xbpf_prog__func(prog, i, &fd))
				continue;
			printf("  func %-28s start %5u  len %5u\n", fd.name, fd.start, fd.len);
		}
	}
	for (i = 0; i < xbpf_object__map_cnt(obj); i++) {
		const struct xbpf_map *map = xbpf_object__map(obj, i);
		const struct xbpf_map_spec *s = xbpf_map__spec(map);

		printf("map %zu %-16s type %-16s key %4u  value %5u  max_entries %7u  flags 0x%x\n", i,
		       xbpf_map__name(map), xbpf_map_type_name(s->type), s->key_size, s->value_size,
		       s->max_entries, s->map_flags);
	}
	xbpf_object__close(obj);
	return EXIT_OK;
}

/* ---- disasm -------------------------------------------------------------- */

/* The runtime's helper names, spelled as the kernel's xlated dump does ("bpf_..."). */
static const char *disasm_helper_name(void *priv, int32_t id)
{
	const struct xbpf_helper_proto *p = xbpf_helper_proto(id);
	static char name[80];

	if (!p || !p->name)
		return NULL;
	if (!strncmp(p->name, "bpf_", 4))
		return p->name;
	snprintf(name, sizeof(name), "bpf_%s", p->name);
	return name;
}

static const char *disasm_ldimm64(void *priv, const struct xbpf_insn *insn, char *buf, size_t len)
{
	struct xbpf_object *obj = priv;
	const struct xbpf_map *map;

	if (insn->src_reg != XBPF_PSEUDO_MAP_FD && insn->src_reg != XBPF_PSEUDO_MAP_VALUE)
		return NULL;
	if (insn->imm < 0 || (size_t)insn->imm >= xbpf_object__map_cnt(obj))
		return NULL;
	map = xbpf_object__map(obj, insn->imm);
	if (insn->src_reg == XBPF_PSEUDO_MAP_FD)
		snprintf(buf, len, "map[%s]", xbpf_map__name(map));
	else
		snprintf(buf, len, "map[%s]+%d", xbpf_map__name(map), insn[1].imm);
	return buf;
}

static void disasm_prog(struct xbpf_object *obj, const struct xbpf_prog *prog)
{
	struct xbpf_disasm_cbs cbs = {
		.helper_name = disasm_helper_name,
		.ldimm64_text = disasm_ldimm64,
		.priv = obj,
	};
	const struct xbpf_insn *insns = xbpf_prog__insns(prog);
	size_t cnt = xbpf_prog__insn_cnt(prog), nfunc = xbpf_prog__func_cnt(prog);
	size_t idx = 0, f;
	char text[256];

	printf("%s (%s):\n", xbpf_prog__name(prog), xbpf_prog__section(prog));
	while (idx < cnt) {
		int n;

		for (f = 0; f < nfunc; f++) {
			struct xbpf_func_desc fd;

			if (!xbpf_prog__func(prog, f, &fd) && fd.start == idx && idx)
				printf("%s:\n", fd.name);
		}
		n = xbpf_disasm_insn(insns, cnt, idx, &cbs, text, sizeof(text));
		printf("%5zu: %s\n", idx, text);
		idx += n > 0 ? (size_t)n : 1;
	}
}

static int cmd_disasm(void *arg)
{
	struct cli_cfg *cfg = arg;
	struct xbpf_object *obj = open_object(cfg);
	struct xbpf_prog *prog;

	if (!obj)
		return EXIT_USAGE;
	if (cfg->prog) {
		prog = find_prog(cfg, obj);
		if (!prog) {
			xbpf_object__close(obj);
			return EXIT_USAGE;
		}
		disasm_prog(obj, prog);
	} else {
		for (prog = NULL; (prog = xbpf_object__next_prog(obj, prog));)
			disasm_prog(obj, prog);
	}
	xbpf_object__close(obj);
	return EXIT_OK;
}

/* ---- run ----------------------------------------------------------------- */

static int cmd_run(void *arg)
{
	struct cli_cfg *cfg = arg;
	struct testbed_prog_src src = {
		.path = cfg->positional[0],
		.prog_name = cfg->prog,
		.raw_type = cfg->type,
		.maps = cfg->maps,
		.map_cnt = cfg->map_cnt,
	};
	struct testbed_engine_opts eopts = { .skip_verify = cfg->skip_verify, .log_level = 1 };
	XBPF_OPTS(xbpf_test_run_opts, opts, .repeat = cfg->repeat ? cfg->repeat : 1);
	void *data = NULL, *ctx = NULL, *out = NULL;
	size_t data_len = 0, ctx_len = 0, out_cap;
	struct testbed_engine *e = NULL;
	char log[16384] = "";
	int err, status = EXIT_USAGE;

	if (!cfg->data_in)
		return err_usage(&commands[CMD_RUN], "run needs --data-in");
	err = read_file(cfg->data_in, &data, &data_len);
	if (err) {
		fprintf(stderr, "xbpf: %s: %s\n", cfg->data_in, strerror(-err));
		goto out;
	}
	if (cfg->ctx_in) {
		err = read_file(cfg->ctx_in, &ctx, &ctx_len);
		if (err) {
			fprintf(stderr, "xbpf: %s: %s\n", cfg->ctx_in, strerror(-err));
			goto out;
		}
	}
	/* Room for programs that grow the packet with adjust_head/tail. */
	out_cap = data_len + XBPF_FRAME_HEADROOM + XBPF_FRAME_TAILROOM;
	out = calloc(1, out_cap);
	if (!out)
		goto out;

	eopts.log_buf = log;
	eopts.log_size = sizeof(log);
	err = testbed_engine__open(cfg->engine, &src, &eopts, &e);
	if (err) {
		fprintf(stderr, "xbpf: %s engine cannot load %s: %s\n%s",
			testbed_engine_kind_name(cfg->engine), src.path, strerror(-err), log);
		status = err == -EACCES || err == -EINVAL ? EXIT_FAIL : EXIT_USAGE;
		goto out;
	}
	opts.data_in = data;
	opts.data_size_in = data_len;
	opts.data_out = out;
	opts.data_size_out = out_cap;
	opts.ctx_in = ctx;
	opts.ctx_size_in = ctx_len;
	err = testbed_engine__test_run(e, &opts);
	if (err) {
		fprintf(stderr, "xbpf: test run failed: %s\n", strerror(-err));
		status = EXIT_FAIL;
		goto out;
	}
	printf("engine %s\nretval %u (0x%x)\ndata_out %u bytes\nduration %u ns/run (%d runs)\n",
	       testbed_engine_kind_name(cfg->engine), opts.retval, opts.retval, opts.data_size_out,
	       opts.duration, opts.repeat);
	status = EXIT_OK;
	if (cfg->data_out) {
		FILE *f = fopen(cfg->data_out, "wb");

		if (!f || fwrite(out, 1, opts.data_size_out, f) != opts.data_size_out) {
			fprintf(stderr, "xbpf: cannot write %s: %s\n", cfg->data_out, strerror(errno));
			status = EXIT_FAIL;
		}
		if (f && fclose(f))
			status = EXIT_FAIL;
	}
out:
	testbed_engine__close(e);
	free(data);
	free(ctx);
	free(out);
	return status;
}

/* ---- verify -------------------------------------------------------------- */

static int verify_prog(const struct cli_cfg *cfg, const struct xbpf_prog *prog)
{
	XBPF_OPTS(xbpf_verify_opts, opts, .log_level = cfg->log_level);
	struct xbpf_verify_info info;
	size_t log_size = 16 << 20;
	char *log = calloc(1, log_size);
	int err;

	if (!log)
		return EXIT_USAGE;
	opts.log_buf = log;
	opts.log_size = log_size;
	memset(&info, 0, sizeof(info));
	err = xbpf_verify(prog, &opts, &info);
	fputs(log, stdout);
	if (log[0] && log[strlen(log) - 1] != '\n')
		putchar('\n');
	if (!strstr(log, "processed ")) {
		/* Log level 0 prints errors only; still give the summary. */
		uint32_t f;

		printf("processed %u insns (limit %d)\nstack depth ", info.insn_processed,
		       XBPF_VERIFY_INSN_LIMIT);
		for (f = 0; f < info.func_cnt && f < XBPF_MAX_SUBPROGS; f++)
			printf("%s%u", f ? "+" : "", info.stack_depth[f]);
		printf("\n");
	}
	free(log);
	if (!err) {
		printf("%s: accepted\n", xbpf_prog__name(prog));
		return EXIT_OK;
	}
	if (!info.rejected) {
		fprintf(stderr, "xbpf: verifier could not run: %s\n", strerror(-err));
		return EXIT_USAGE;
	}
	printf("%s: rejected at insn %d: %s\n", xbpf_prog__name(prog), info.err_insn, info.err_msg);
	if (info.err_line[0]) {
		printf("  source: %s\n", info.err_line);
	} else if (info.err_insn >= 0) {
		struct xbpf_line_desc line;

		if (!xbpf_prog__line(prog, info.err_insn, &line))
			printf("  source: %s:%u: %s\n", line.file, line.line,
			       line.text ? line.text : "");
	}
	return EXIT_FAIL;
}

static int cmd_verify(void *arg)
{
	struct cli_cfg *cfg = arg;
	struct xbpf_object *obj = open_object(cfg);
	struct xbpf_prog *prog = NULL;
	int status = EXIT_OK, st;

	if (!obj)
		return EXIT_USAGE;
	if (cfg->prog) {
		prog = find_prog(cfg, obj);
		status = prog ? verify_prog(cfg, prog) : EXIT_USAGE;
	} else {
		while ((prog = xbpf_object__next_prog(obj, prog))) {
			st = verify_prog(cfg, prog);
			if (st > status)
				status = st;
		}
	}
	xbpf_object__close(obj);
	return status;
}

/* ---- jit ----------------------------------------------------------------- */

/*
 * objdump invocations for the code's architecture (the build's), the
 * cross objdump first: under qemu-user the plain `objdump` is the build
 * machine's, which knows no aarch64 and fails.
 */
#if defined(__x86_64__)
static const char *const objdump_cmds[] = { "objdump -D -b binary -m i386:x86-64",
					    "x86_64-linux-gnu-objdump -D -b binary -m i386:x86-64",
					    NULL };
#elif defined(__aarch64__)
static const char *const objdump_cmds[] = { "aarch64-linux-gnu-objdump -D -b binary -m aarch64",
					    "objdump -D -b binary -m aarch64", NULL };
#else
static const char *const objdump_cmds[] = { NULL };
#endif

/* Disassemble `code`; objdump's own exit status decides, its header lines are skipped. */
static void objdump_code(const void *code, size_t size)
{
	char path[] = "/tmp/xbpf-jit-XXXXXX", out[sizeof(path) + 2], cmd[512], line[512];
	const char *const *c;
	int fd = mkstemp(path), n;
	bool shown = false;
	FILE *f;

	if (fd < 0)
		return;
	snprintf(out, sizeof(out), "%s.s", path);
	if (write(fd, code, size) == (ssize_t)size) {
		for (c = objdump_cmds; *c && !shown; c++) {
			snprintf(cmd, sizeof(cmd), "%s %s >%s 2>/dev/null", *c, path, out);
			if (system(cmd) != 0)
				continue;
			f = fopen(out, "r");
			if (!f)
				continue;
			for (n = 0; fgets(line, sizeof(line), f); n++)
				if (n >= 7)
					fputs(line, stdout);
			fclose(f);
			shown = true;
		}
		if (!shown)
			printf("    (no objdump for this architecture: sizes only)\n");
	}
	close(fd);
	unlink(path);
	unlink(out);
}

static int cmd_jit(void *arg)
{
	struct cli_cfg *cfg = arg;
	XBPF_OPTS(xbpf_vm_opts, vm_opts, .engine = XBPF_ENGINE_JIT, .skip_verify = cfg->skip_verify);
	struct xbpf_object *obj = open_object(cfg);
	struct xbpf_prog *prog;
	struct xbpf_vm *vm = NULL;
	size_t i, total = 0;
	int status = EXIT_USAGE;

	if (!obj)
		return EXIT_USAGE;
	prog = find_prog(cfg, obj);
	if (!prog)
		goto out;
	vm = xbpf_vm__new(prog, &vm_opts);
	if (!vm) {
		fprintf(stderr, "xbpf: cannot prepare %s: %s\n", xbpf_prog__name(prog),
			strerror(errno));
		status = EXIT_FAIL;
		goto out;
	}
	if (xbpf_vm__engine(vm) != XBPF_ENGINE_JIT) {
		fprintf(stderr, "xbpf: no JIT for %s on this host (interpreter fallback)\n",
			xbpf_prog__name(prog));
		status = EXIT_FAIL;
		goto out;
	}
	for (i = 0;; i++) {
		struct xbpf_func_desc fd = { .name = "?" };
		const void *code;
		size_t size;

		if (xbpf_vm__jit_func(vm, i, &code, &size))
			break;
		if (i < xbpf_prog__func_cnt(prog))
			xbpf_prog__func(prog, i, &fd);
		printf("func %zu %-28s %6zu bytes native", i, fd.name, size);
		if (i < xbpf_prog__func_cnt(prog))
			printf(" (%u insns)", fd.len);
		printf("\n");
		objdump_code(code, size);
		total += size;
	}
	printf("total %zu bytes native for %zu insns\n", total, xbpf_prog__insn_cnt(prog));
	status = EXIT_OK;
out:
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	return status;
}

/* ---- conformance-plugin -------------------------------------------------- */

/* Hex bytes separated by white space ("b7 00 00 00 ...") or one hex run. */
static int parse_hex(const char *text, uint8_t **ret_buf, size_t *ret_len)
{
	size_t cap = strlen(text) / 2 + 1, len = 0;
	uint8_t *buf = malloc(cap);
	int hi = -1;

	if (!buf)
		return -ENOMEM;
	for (; *text; text++) {
		int v;

		if (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r') {
			if (hi >= 0) {
				free(buf);
				return -EINVAL; /* odd digit count in a byte */
			}
			continue;
		}
		if (*text >= '0' && *text <= '9')
			v = *text - '0';
		else if (*text >= 'a' && *text <= 'f')
			v = *text - 'a' + 10;
		else if (*text >= 'A' && *text <= 'F')
			v = *text - 'A' + 10;
		else {
			free(buf);
			return -EINVAL;
		}
		if (hi < 0) {
			hi = v;
		} else {
			buf[len++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0) {
		free(buf);
		return -EINVAL;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static char *read_stream(FILE *f)
{
	size_t cap = 4096, len = 0, n;
	char *buf = malloc(cap), *nbuf;

	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			if (cap >= MAX_FILE_SIZE) {
				free(buf);
				return NULL;
			}
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				free(buf);
				return NULL;
			}
			buf = nbuf;
			cap *= 2;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

static int cmd_conformance(void *arg)
{
	struct cli_cfg *cfg = arg;
	XBPF_OPTS(xbpf_vm_opts, vm_opts, .skip_verify = true);
	uint8_t *code = NULL, *mem = NULL;
	size_t code_len = 0, mem_len = 0;
	struct xbpf_object *obj = NULL;
	struct xbpf_vm *vm = NULL;
	char *text;
	uint64_t r0;
	int status = EXIT_FAIL;

	if (cfg->engine == TESTBED_ENGINE_KERNEL)
		return err_usage(&commands[CMD_CONFORMANCE], "conformance-plugin runs interp or jit");
	vm_opts.engine = cfg->engine == TESTBED_ENGINE_JIT ? XBPF_ENGINE_JIT : XBPF_ENGINE_INTERP;
	text = read_stream(stdin);
	if (!text || parse_hex(text, &code, &code_len) || !code_len || code_len % XBPF_INSN_SIZE) {
		fprintf(stderr, "xbpf: program on stdin must be hex bytes, 8 per instruction\n");
		goto out;
	}
	if (cfg->positional_cnt && parse_hex(cfg->positional[0], &mem, &mem_len)) {
		fprintf(stderr, "xbpf: memory argument must be hex bytes\n");
		goto out;
	}
	obj = xbpf_object__open_raw((const struct xbpf_insn *)code, code_len / XBPF_INSN_SIZE,
				    XBPF_PROG_RAW_MEM, NULL, 0, NULL);
	if (!obj) {
		fprintf(stderr, "xbpf: invalid program: %s\n", strerror(errno));
		goto out;
	}
	vm = xbpf_vm__new(xbpf_object__next_prog(obj, NULL), &vm_opts);
	if (!vm) {
		fprintf(stderr, "xbpf: cannot prepare program: %s\n", strerror(errno));
		goto out;
	}
	/*
	 * test_run rather than exec: it reports faults (an unverified program
	 * running out of its jump budget or out of its memory) as errors
	 * instead of a made-up r0.  r0 is 64 bits: retval holds only the low
	 * half, so the VM's full result comes from exec on the same memory only
	 * when the run succeeded.
	 */
	{
		XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = mem, .data_size_in = mem_len,
			  .repeat = 1);
		int err = xbpf_vm__test_run(vm, &opts);

		if (err) {
			fprintf(stderr, "xbpf: program failed: %s\n", strerror(-err));
			goto out;
		}
	}
	r0 = xbpf_vm__exec(vm, mem_len ? mem : NULL, mem_len);
	printf("%" PRIx64 "\n", r0);
	status = EXIT_OK;
out:
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	free(text);
	free(code);
	free(mem);
	return status;
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct cli_cfg cfg = {
		.type = XBPF_PROG_XDP,
		.engine = TESTBED_ENGINE_INTERP,
		.log_level = 1,
	};
	struct global_flags flags = { 0 };
	struct xlb_cli_optset globals = { global_opts, &flags, NULL };
	const struct xlb_cli_cmd *cmd;
	char *args[argc + 1], err[256];
	int used = 0, words = 0;

	if (xlb_cli_parse(&globals, 1, argc - 1, argv + 1, XLB_CLI_STOP_AT_ARG, args, NULL, &used,
			  err, sizeof(err)))
		return err_usage(NULL, "%s (try 'xbpf --help')", err);
	used++;
	if (flags.man || flags.completion) {
		(flags.man ? xlb_cli_man : xlb_cli_bash_completion)(stdout, &program);
		return EXIT_OK;
	}
	if (flags.help || (used < argc && !strcmp(argv[used], "help"))) {
		xlb_cli_help(stdout, &program, NULL);
		return EXIT_OK;
	}
	if (used >= argc) {
		xlb_cli_help(stderr, &program, NULL);
		return EXIT_USAGE;
	}
	xbpf_set_print(cli_print);
	cmd = xlb_cli_cmd__find(&program, argc - used, argv + used, &words);
	if (!cmd) {
		fprintf(stderr, "xbpf: unknown command '%s'\n", argv[used]);
		xlb_cli_help(stderr, &program, NULL);
		return EXIT_USAGE;
	}
	if (parse_args(cmd, &cfg, argc - used - words, argv + used + words))
		return EXIT_USAGE;
	return cmd->run(&cfg);
}
