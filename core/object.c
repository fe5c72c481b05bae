// SPDX-License-Identifier: MIT
/*
 * object.c - objects and programs: accessors, raw programs, map
 * resolution, the print callback and option checks.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_impl.h"

/* ---- logging ------------------------------------------------------------------ */

static int default_print(enum xbpf_print_level level, const char *fmt, va_list args)
{
	if (level == XBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static _Atomic(xbpf_print_fn) print_fn = default_print;

xbpf_print_fn xbpf_set_print(xbpf_print_fn fn)
{
	return atomic_exchange(&print_fn, fn);
}

void __xbpf_pr(enum xbpf_print_level level, const char *fmt, ...)
{
	xbpf_print_fn fn = atomic_load(&print_fn);
	int saved = errno;
	va_list args;

	if (!fn)
		return;
	va_start(args, fmt);
	fn(level, fmt, args);
	va_end(args);
	errno = saved;
}

bool __xbpf_opts_valid(const void *opts, size_t opts_sz, size_t user_sz, const char *type_name)
{
	size_t i;

	if (user_sz < sizeof(size_t)) {
		pr_warn("%s size (%zu) is too small\n", type_name, user_sz);
		return false;
	}
	for (i = opts_sz; i < user_sz; i++) {
		if (((const uint8_t *)opts)[i]) {
			pr_warn("%s has non-zero extra bytes\n", type_name);
			return false;
		}
	}
	return true;
}

/* ---- program types ------------------------------------------------------------ */

static const struct {
	enum xbpf_prog_type type;
	const char *name;
} prog_type_names[] = {
	{ XBPF_PROG_SOCKET_FILTER, "socket_filter" },
	{ XBPF_PROG_SCHED_CLS, "sched_cls" },
	{ XBPF_PROG_SCHED_ACT, "sched_act" },
	{ XBPF_PROG_XDP, "xdp" },
	{ XBPF_PROG_TRACEPOINT, "tracepoint" },
	{ XBPF_PROG_RAW_MEM, "raw_mem" },
};

int xbpf_prog_type_from_name(const char *name, enum xbpf_prog_type *ret_type)
{
	size_t i;

	if (!name || !ret_type)
		return xbpf_err(-EINVAL);
	for (i = 0; i < sizeof(prog_type_names) / sizeof(prog_type_names[0]); i++) {
		if (!strcmp(prog_type_names[i].name, name)) {
			*ret_type = prog_type_names[i].type;
			return 0;
		}
	}
	return xbpf_err(-EINVAL);
}

const char *xbpf_prog_type_name(enum xbpf_prog_type type)
{
	size_t i;

	for (i = 0; i < sizeof(prog_type_names) / sizeof(prog_type_names[0]); i++)
		if (prog_type_names[i].type == type)
			return prog_type_names[i].name;
	return NULL;
}

/*
 * Section names as libbpf reads them: an exact name or a name followed by
 * '/' (the rest names the attach point).
 */
static const struct {
	const char *sec;
	enum xbpf_prog_type type;
	bool prefix; /* also matches "sec/..." */
} sec_defs[] = {
	{ "xdp", XBPF_PROG_XDP, true },
	{ "xdp.frags", XBPF_PROG_XDP, true },
	{ "tc", XBPF_PROG_SCHED_CLS, true },
	{ "tcx/ingress", XBPF_PROG_SCHED_CLS, false },
	{ "tcx/egress", XBPF_PROG_SCHED_CLS, false },
	{ "classifier", XBPF_PROG_SCHED_CLS, true },
	{ "action", XBPF_PROG_SCHED_ACT, true },
	{ "socket", XBPF_PROG_SOCKET_FILTER, true },
	{ "tracepoint", XBPF_PROG_TRACEPOINT, true },
	{ "tp", XBPF_PROG_TRACEPOINT, true },
	{ "raw", XBPF_PROG_RAW_MEM, true },
};

int xbpf_prog_type_from_section(const char *sec, enum xbpf_prog_type *ret_type)
{
	size_t i;

	if (!sec || !ret_type)
		return xbpf_err(-EINVAL);
	for (i = 0; i < sizeof(sec_defs) / sizeof(sec_defs[0]); i++) {
		size_t n = strlen(sec_defs[i].sec);

		if (strncmp(sec, sec_defs[i].sec, n))
			continue;
		if (sec[n] == '\0' || (sec_defs[i].prefix && sec[n] == '/')) {
			*ret_type = sec_defs[i].type;
			return 0;
		}
	}
	return xbpf_err(-ENOENT);
}

/* ---- objects -------------------------------------------------------------------- */

struct xbpf_object *__xbpf_object_new(const char *name)
{
	struct xbpf_object *obj = calloc(1, sizeof(*obj));

	if (!obj)
		return NULL;
	obj->name = strdup(name ? name : "raw");
	if (!obj->name) {
		free(obj);
		return NULL;
	}
	return obj;
}

const char *__xbpf_object_strdup(struct xbpf_object *obj, const char *s, size_t len)
{
	char **strs, *copy;

	strs = realloc(obj->strs, (obj->str_cnt + 1) * sizeof(*strs));
	if (!strs)
		return NULL;
	obj->strs = strs;
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	obj->strs[obj->str_cnt++] = copy;
	return copy;
}

int __xbpf_object_add_map(struct xbpf_object *obj, struct xbpf_map *map)
{
	struct xbpf_map **maps = realloc(obj->maps, (obj->map_cnt + 1) * sizeof(*maps));

	if (!maps)
		return -ENOMEM;
	obj->maps = maps;
	obj->maps[obj->map_cnt++] = map;
	return 0;
}

struct xbpf_prog *__xbpf_object_add_prog(struct xbpf_object *obj)
{
	struct xbpf_prog *progs = realloc(obj->progs, (obj->prog_cnt + 1) * sizeof(*progs));

	if (!progs)
		return NULL;
	obj->progs = progs;
	memset(&progs[obj->prog_cnt], 0, sizeof(*progs));
	progs[obj->prog_cnt].obj = obj;
	return &progs[obj->prog_cnt++];
}

struct xbpf_object *xbpf_object__close(struct xbpf_object *obj)
{
	size_t i;

	if (!obj)
		return NULL;
	for (i = 0; i < obj->prog_cnt; i++) {
		free(obj->progs[i].name);
		free(obj->progs[i].section);
		free(obj->progs[i].insns);
		free(obj->progs[i].funcs);
		free(obj->progs[i].lines);
	}
	free(obj->progs);
	/* outer maps first would not matter: inner pointers are never followed on free */
	for (i = 0; i < obj->map_cnt; i++)
		xbpf_map__free(obj->maps[i]);
	free(obj->maps);
	for (i = 0; i < obj->str_cnt; i++)
		free(obj->strs[i]);
	free(obj->strs);
	free(obj->name);
	free(obj);
	return NULL;
}

const char *xbpf_object__name(const struct xbpf_object *obj)
{
	return obj ? obj->name : NULL;
}

const char *xbpf_object__license(const struct xbpf_object *obj)
{
	return obj ? obj->license : NULL;
}

struct xbpf_prog *xbpf_object__next_prog(const struct xbpf_object *obj, const struct xbpf_prog *prev)
{
	size_t idx;

	if (!obj)
		return NULL;
	if (!prev)
		return obj->prog_cnt ? &obj->progs[0] : NULL;
	if (prev < obj->progs || prev >= obj->progs + obj->prog_cnt)
		return NULL;
	idx = (size_t)(prev - obj->progs) + 1;
	return idx < obj->prog_cnt ? &obj->progs[idx] : NULL;
}

struct xbpf_prog *xbpf_object__find_prog(const struct xbpf_object *obj, const char *name)
{
	size_t i;

	if (!obj || !name)
		return xbpf_err_ptr(-EINVAL);
	for (i = 0; i < obj->prog_cnt; i++)
		if (!strcmp(obj->progs[i].name, name))
			return &obj->progs[i];
	return xbpf_err_ptr(-ENOENT);
}

size_t xbpf_object__map_cnt(const struct xbpf_object *obj)
{
	return obj ? obj->map_cnt : 0;
}

struct xbpf_map *xbpf_object__map(const struct xbpf_object *obj, size_t idx)
{
	if (!obj || idx >= obj->map_cnt)
		return xbpf_err_ptr(-ENOENT);
	return obj->maps[idx];
}

struct xbpf_map *xbpf_object__find_map(const struct xbpf_object *obj, const char *name)
{
	size_t i;

	if (!obj || !name)
		return xbpf_err_ptr(-EINVAL);
	for (i = 0; i < obj->map_cnt; i++)
		if (!strcmp(obj->maps[i]->spec.name, name))
			return obj->maps[i];
	return xbpf_err_ptr(-ENOENT);
}

/* ---- programs ------------------------------------------------------------------ */

const char *xbpf_prog__name(const struct xbpf_prog *prog)
{
	return prog ? prog->name : NULL;
}

const char *xbpf_prog__section(const struct xbpf_prog *prog)
{
	return prog ? prog->section : NULL;
}

enum xbpf_prog_type xbpf_prog__type(const struct xbpf_prog *prog)
{
	return prog ? prog->type : XBPF_PROG_UNSPEC;
}

struct xbpf_object *xbpf_prog__object(const struct xbpf_prog *prog)
{
	return prog ? prog->obj : NULL;
}

const struct xbpf_insn *xbpf_prog__insns(const struct xbpf_prog *prog)
{
	return prog ? prog->insns : NULL;
}

size_t xbpf_prog__insn_cnt(const struct xbpf_prog *prog)
{
	return prog ? prog->insn_cnt : 0;
}

size_t xbpf_prog__func_cnt(const struct xbpf_prog *prog)
{
	return prog ? prog->func_cnt : 0;
}

int xbpf_prog__func(const struct xbpf_prog *prog, size_t idx, struct xbpf_func_desc *ret_func)
{
	if (!prog || !ret_func)
		return xbpf_err(-EINVAL);
	if (idx >= prog->func_cnt)
		return xbpf_err(-ENOENT);
	*ret_func = prog->funcs[idx];
	return 0;
}

int xbpf_prog__line(const struct xbpf_prog *prog, uint32_t insn_idx, struct xbpf_line_desc *ret_line)
{
	size_t lo = 0, hi;

	if (!prog || !ret_line)
		return xbpf_err(-EINVAL);
	/* the last line record at or before insn_idx */
	hi = prog->line_cnt;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (prog->lines[mid].insn <= insn_idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || insn_idx >= prog->insn_cnt)
		return xbpf_err(-ENOENT);
	ret_line->file = prog->lines[lo - 1].file;
	ret_line->text = prog->lines[lo - 1].text;
	ret_line->line = prog->lines[lo - 1].line;
	ret_line->col = prog->lines[lo - 1].col;
	return 0;
}

/* ---- raw programs ------------------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Raw programs have no symbols: their functions start at 0 and at every
 * in-range bpf-to-bpf call target ("raw", "sub_<insn>"), as the kernel
 * finds subprograms.  Out-of-range targets are left for the verifier.
 */
static int raw_funcs(struct xbpf_object *obj, struct xbpf_prog *prog)
{
	uint32_t *starts, n = 0, i, k;
	char name[32];

	starts = malloc((prog->insn_cnt + 1) * sizeof(*starts));
	if (!starts)
		return -ENOMEM;
	starts[n++] = 0;
	for (i = 0; i < prog->insn_cnt; i++) {
		int64_t t = (int64_t)i + prog->insns[i].imm + 1;

		if (xbpf_insn_is_pseudo_call(&prog->insns[i]) && t > 0 && t < (int64_t)prog->insn_cnt)
			starts[n++] = (uint32_t)t;
	}
	qsort(starts, n, sizeof(*starts), cmp_u32);
	for (i = 1, k = 1; i < n; i++)
		if (starts[i] != starts[k - 1])
			starts[k++] = starts[i];
	n = k;
	prog->funcs = calloc(n, sizeof(*prog->funcs));
	if (!prog->funcs) {
		free(starts);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		uint32_t end = i + 1 < n ? starts[i + 1] : (uint32_t)prog->insn_cnt;
		const char *fname = prog->name;

		if (i) {
			snprintf(name, sizeof(name), "sub_%u", starts[i]);
			fname = __xbpf_object_strdup(obj, name, strlen(name));
			if (!fname) {
				free(starts);
				return -ENOMEM;
			}
		}
		prog->funcs[i] = (struct xbpf_func_desc){ .name = fname, .start = starts[i],
							  .len = end - starts[i] };
	}
	prog->func_cnt = n;
	free(starts);
	return 0;
}

struct xbpf_object *xbpf_object__open_raw(const struct xbpf_insn *insns, size_t insn_cnt,
					  enum xbpf_prog_type type, const struct xbpf_map_spec *maps,
					  size_t map_cnt, const struct xbpf_object_open_opts *opts)
{
	struct xbpf_object *obj;
	struct xbpf_prog *prog;
	size_t i;
	int err = -ENOMEM;

	if (!insns || !insn_cnt || insn_cnt > UINT32_MAX / 2 || (map_cnt && !maps) ||
	    !OPTS_VALID(opts, xbpf_object_open_opts) || !xbpf_prog_type_name(type))
		return xbpf_err_ptr(-EINVAL);
	obj = __xbpf_object_new(OPTS_GET(opts, name, NULL) ? OPTS_GET(opts, name, NULL) : "raw");
	if (!obj)
		return xbpf_err_ptr(-ENOMEM);
	strcpy(obj->license, "GPL");
	for (i = 0; i < map_cnt; i++) {
		struct xbpf_map *map = xbpf_map__create(&maps[i], OPTS_GET(opts, nr_cpus, 0));

		if (!map) {
			err = -errno;
			pr_warn("raw: map %zu (%s): invalid spec\n", i, maps[i].name);
			goto err_close;
		}
		err = __xbpf_object_add_map(obj, map);
		if (err) {
			xbpf_map__free(map);
			goto err_close;
		}
	}
	err = -ENOMEM;
	prog = __xbpf_object_add_prog(obj);
	if (!prog)
		goto err_close;
	prog->name = strdup("raw");
	prog->section = strdup(xbpf_prog_type_name(type));
	prog->type = type;
	prog->insns = malloc(insn_cnt * sizeof(*insns));
	if (!prog->name || !prog->section || !prog->insns)
		goto err_close;
	memcpy(prog->insns, insns, insn_cnt * sizeof(*insns));
	prog->insn_cnt = insn_cnt;
	err = raw_funcs(obj, prog);
	if (err)
		goto err_close;
	return obj;
err_close:
	xbpf_object__close(obj);
	return xbpf_err_ptr(err);
}

static int read_file(const char *path, uint8_t **ret_buf, size_t *ret_size)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (st.st_size > (256 << 20)) {
		err = -EFBIG;
		goto out;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			free(buf);
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
	*ret_buf = buf;
	*ret_size = got;
out:
	close(fd);
	return err;
}

struct xbpf_object *xbpf_object__open_mem(const void *buf, size_t size,
					  const struct xbpf_object_open_opts *opts)
{
	struct xbpf_object *obj;
	int err;

	if (!buf || !size || !OPTS_VALID(opts, xbpf_object_open_opts))
		return xbpf_err_ptr(-EINVAL);
	obj = __xbpf_object_new(OPTS_GET(opts, name, NULL) ? OPTS_GET(opts, name, NULL) : "mem");
	if (!obj)
		return xbpf_err_ptr(-ENOMEM);
	err = __xbpf_elf_load(obj, buf, size, OPTS_GET(opts, nr_cpus, 0),
			      OPTS_GET(opts, pin_root_path, NULL));
	if (err) {
		xbpf_object__close(obj);
		return xbpf_err_ptr(err);
	}
	return obj;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

struct xbpf_object *xbpf_object__open_file(const char *path, const struct xbpf_object_open_opts *opts)
{
	XBPF_OPTS(xbpf_object_open_opts, o);
	struct xbpf_object *obj;
	uint8_t *buf;
	size_t size;
	int err;

	if (!path || !OPTS_VALID(opts, xbpf_object_open_opts))
		return xbpf_err_ptr(-EINVAL);
	err = read_file(path, &buf, &size);
	if (err) {
		pr_warn("elf: cannot read %s: %s\n", path, strerror(-err));
		return xbpf_err_ptr(err);
	}
	o.name = OPTS_GET(opts, name, NULL) ? OPTS_GET(opts, name, NULL) : base_name(path);
	o.nr_cpus = OPTS_GET(opts, nr_cpus, 0);
	o.pin_root_path = OPTS_GET(opts, pin_root_path, NULL);
	obj = size ? xbpf_object__open_mem(buf, size, &o) : xbpf_err_ptr(-EINVAL);
	err = errno;
	free(buf);
	errno = err;
	return obj;
}

struct xbpf_object *xbpf_object__open_any(const char *path, enum xbpf_prog_type raw_type,
					  const struct xbpf_map_spec *maps, size_t map_cnt,
					  const struct xbpf_object_open_opts *opts)
{
	XBPF_OPTS(xbpf_object_open_opts, o);
	struct xbpf_object *obj;
	uint8_t *buf;
	size_t size;
	int err;

	if (!path || !OPTS_VALID(opts, xbpf_object_open_opts))
		return xbpf_err_ptr(-EINVAL);
	err = read_file(path, &buf, &size);
	if (err) {
		pr_warn("cannot read %s: %s\n", path, strerror(-err));
		return xbpf_err_ptr(err);
	}
	o.name = OPTS_GET(opts, name, NULL) ? OPTS_GET(opts, name, NULL) : base_name(path);
	o.nr_cpus = OPTS_GET(opts, nr_cpus, 0);
	o.pin_root_path = OPTS_GET(opts, pin_root_path, NULL);
	if (size >= 4 && !memcmp(buf, "\x7f" "ELF", 4)) {
		obj = xbpf_object__open_mem(buf, size, &o);
	} else if (!size || size % XBPF_INSN_SIZE) {
		pr_warn("%s: raw program size %zu is not a non-zero multiple of %d\n", path, size,
			XBPF_INSN_SIZE);
		obj = xbpf_err_ptr(-EINVAL);
	} else {
		obj = xbpf_object__open_raw((const struct xbpf_insn *)buf, size / XBPF_INSN_SIZE,
					    raw_type, maps, map_cnt, &o);
	}
	err = errno;
	free(buf);
	errno = err;
	return obj;
}

/* ---- map resolution -------------------------------------------------------------- */

int xbpf_prog__resolve_maps(const struct xbpf_prog *prog, struct xbpf_insn **ret_insns, size_t *ret_cnt)
{
	const struct xbpf_object *obj;
	struct xbpf_insn *insns;
	size_t i;

	if (!prog || !ret_insns || !ret_cnt)
		return xbpf_err(-EINVAL);
	obj = prog->obj;
	insns = malloc(prog->insn_cnt * sizeof(*insns));
	if (!insns)
		return xbpf_err(-ENOMEM);
	memcpy(insns, prog->insns, prog->insn_cnt * sizeof(*insns));
	for (i = 0; i < prog->insn_cnt; i++) {
		struct xbpf_insn *insn = &insns[i];
		uint64_t addr;
		uint32_t idx;

		if (insn->code != (XBPF_LD | XBPF_DW | XBPF_IMM))
			continue;
		if (i + 1 >= prog->insn_cnt) {
			pr_warn("prog '%s': insn %zu: ld_imm64 without its second half\n", prog->name, i);
			goto err_inval;
		}
		if (insn->src_reg == XBPF_PSEUDO_MAP_FD || insn->src_reg == XBPF_PSEUDO_MAP_VALUE) {
			idx = (uint32_t)insn->imm;
			if (idx >= obj->map_cnt) {
				pr_warn("prog '%s': insn %zu: map index %u out of range (%zu maps)\n",
					prog->name, i, idx, obj->map_cnt);
				goto err_inval;
			}
			if (insn->src_reg == XBPF_PSEUDO_MAP_FD) {
				addr = (uintptr_t)obj->maps[idx];
			} else {
				struct xbpf_map *map = obj->maps[idx];
				uint32_t off = (uint32_t)insns[i + 1].imm, zero = 0;
				void *value;

				if (map->spec.type != XBPF_MAP_ARRAY || off >= map->spec.value_size) {
					pr_warn("prog '%s': insn %zu: value offset %u invalid for map '%s'\n",
						prog->name, i, off, map->spec.name);
					goto err_inval;
				}
				value = xbpf_map__lookup_elem(map, &zero);
				addr = (uintptr_t)value + off;
			}
			insn->src_reg = 0;
			insn->imm = (int32_t)(uint32_t)addr;
			insns[i + 1].imm = (int32_t)(uint32_t)(addr >> 32);
		}
		i++; /* skip the second half */
	}
	*ret_insns = insns;
	*ret_cnt = prog->insn_cnt;
	return 0;
err_inval:
	free(insns);
	return xbpf_err(-EINVAL);
}
