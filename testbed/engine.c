/* SPDX-License-Identifier: MIT */
/*
 * engine.c - interpreter, JIT and kernel behind one small interface,
 * so every comparison the tools make runs the same calls on each engine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testbed.h"

struct testbed_engine {
	enum testbed_engine_kind kind;
	struct xbpf_object *obj; /* userspace engines */
	struct xbpf_vm *vm;
	struct testbed_kobj *kobj; /* kernel engine */
};

static const char *const kind_names[] = {
	[TESTBED_ENGINE_INTERP] = "interp",
	[TESTBED_ENGINE_JIT] = "jit",
	[TESTBED_ENGINE_KERNEL] = "kernel",
};

const char *testbed_engine_kind_name(enum testbed_engine_kind kind)
{
	return (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

int testbed_engine_kind_from_name(const char *name, enum testbed_engine_kind *ret_kind)
{
	size_t i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (!strcmp(name, kind_names[i])) {
			*ret_kind = (enum testbed_engine_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool tool_file_is_elf(const char *path)
{
	unsigned char magic[4];
	FILE *f = fopen(path, "rb");
	bool elf;

	if (!f)
		return false;
	elf = fread(magic, 1, 4, f) == 4 && !memcmp(magic, "\177ELF", 4);
	fclose(f);
	return elf;
}

int tool_read_raw_insns(const char *path, struct xbpf_insn **ret_insns, size_t *ret_cnt)
{
	struct xbpf_insn *insns;
	struct stat st;
	FILE *f;
	int err = 0;

	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st)) {
		err = -errno;
		goto out;
	}
	if (st.st_size <= 0 || st.st_size % XBPF_INSN_SIZE || st.st_size > (1 << 24)) {
		err = -EINVAL; /* not a whole number of instructions */
		goto out;
	}
	insns = malloc(st.st_size);
	if (!insns) {
		err = -ENOMEM;
		goto out;
	}
	if (fread(insns, 1, st.st_size, f) != (size_t)st.st_size) {
		free(insns);
		err = -EIO;
		goto out;
	}
	*ret_insns = insns;
	*ret_cnt = st.st_size / XBPF_INSN_SIZE;
out:
	fclose(f);
	return err;
}

static int open_kernel(struct testbed_engine *e, const struct testbed_prog_src *src,
		       const struct testbed_engine_opts *opts)
{
	struct xbpf_insn *insns;
	size_t cnt;
	int err;

	if (!testbed_kernel_available())
		return -EOPNOTSUPP;
	if (tool_file_is_elf(src->path)) {
		err = testbed_kobj__open_file(src->path, src->prog_name, &e->kobj);
	} else {
		err = tool_read_raw_insns(src->path, &insns, &cnt);
		if (err)
			return err;
		err = testbed_kobj__open_insns(insns, cnt, src->raw_type, src->maps, src->map_cnt,
					   &e->kobj);
		free(insns);
	}
	if (err && opts && opts->log_buf && opts->log_size)
		snprintf(opts->log_buf, opts->log_size, "%s", testbed_kobj_last_log());
	return err;
}

static int open_user(struct testbed_engine *e, const struct testbed_prog_src *src,
		     const struct testbed_engine_opts *opts)
{
	XBPF_OPTS(xbpf_vm_opts, vm_opts,
		  .engine = e->kind == TESTBED_ENGINE_JIT ? XBPF_ENGINE_JIT : XBPF_ENGINE_INTERP);
	struct xbpf_prog *prog;

	e->obj = xbpf_object__open_any(src->path, src->raw_type, src->maps, src->map_cnt, NULL);
	if (!e->obj)
		return -errno;
	prog = src->prog_name ? xbpf_object__find_prog(e->obj, src->prog_name)
			      : xbpf_object__next_prog(e->obj, NULL);
	if (!prog)
		return -ENOENT;
	if (opts) {
		vm_opts.skip_verify = opts->skip_verify;
		vm_opts.log_level = opts->log_level;
		vm_opts.log_buf = opts->log_buf;
		vm_opts.log_size = opts->log_size;
	}
	e->vm = xbpf_vm__new(prog, &vm_opts);
	if (!e->vm)
		return -errno;
	return 0;
}

int testbed_engine__open(enum testbed_engine_kind kind, const struct testbed_prog_src *src,
		      const struct testbed_engine_opts *opts, struct testbed_engine **ret_engine)
{
	struct testbed_engine *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->kind = kind;
	err = kind == TESTBED_ENGINE_KERNEL ? open_kernel(e, src, opts) : open_user(e, src, opts);
	if (err) {
		testbed_engine__close(e);
		return err;
	}
	*ret_engine = e;
	return 0;
}

struct testbed_engine *testbed_engine__close(struct testbed_engine *e)
{
	if (!e)
		return NULL;
	xbpf_vm__free(e->vm);
	xbpf_object__close(e->obj);
	testbed_kobj__close(e->kobj);
	free(e);
	return NULL;
}

enum testbed_engine_kind testbed_engine__kind(const struct testbed_engine *e)
{
	return e->kind;
}

struct xbpf_vm *testbed_engine__vm(const struct testbed_engine *e)
{
	return e->vm;
}

int testbed_engine__kernel_prog_fd(const struct testbed_engine *e)
{
	return e->kobj ? testbed_kobj__prog_fd(e->kobj) : -EINVAL;
}

static struct xbpf_map *user_map(struct testbed_engine *e, const char *name)
{
	struct xbpf_map *map = xbpf_object__find_map(e->obj, name);
	unsigned long idx;
	char *end;

	/* Raw programs: maps are named by their --map position, as in the kernel engine. */
	if (!map && !strncmp(name, "map", 3)) {
		idx = strtoul(name + 3, &end, 10);
		if (!*end && end != name + 3 && idx < xbpf_object__map_cnt(e->obj))
			map = xbpf_object__map(e->obj, idx);
	}
	return map;
}

int testbed_engine__map_spec(struct testbed_engine *e, const char *name, struct xbpf_map_spec *ret_spec)
{
	struct xbpf_map *map;

	if (e->kobj)
		return testbed_kobj__map_info(e->kobj, name, ret_spec);
	map = user_map(e, name);
	if (!map)
		return -ENOENT;
	*ret_spec = *xbpf_map__spec(map);
	return 0;
}

static bool is_percpu(enum xbpf_map_type type)
{
	return type == XBPF_MAP_PERCPU_ARRAY || type == XBPF_MAP_PERCPU_HASH ||
	       type == XBPF_MAP_LRU_PERCPU_HASH;
}

int testbed_engine__map_value_cnt(struct testbed_engine *e, const char *name)
{
	struct xbpf_map_spec spec;
	int err = testbed_engine__map_spec(e, name, &spec);

	if (err)
		return err;
	if (!is_percpu(spec.type))
		return 1;
	return e->kobj ? testbed_kernel_nr_cpus() : xbpf_map__nr_cpus(user_map(e, name));
}

int testbed_engine__map_update(struct testbed_engine *e, const char *name, const void *key, const void *value)
{
	struct xbpf_map *map;

	if (e->kobj)
		return testbed_kobj__map_update(e->kobj, name, key, value);
	map = user_map(e, name);
	return map ? xbpf_map__update(map, key, value, XBPF_ANY) : -ENOENT;
}

int testbed_engine__map_lookup(struct testbed_engine *e, const char *name, const void *key, void *value)
{
	struct xbpf_map *map;

	if (e->kobj)
		return testbed_kobj__map_lookup(e->kobj, name, key, value);
	map = user_map(e, name);
	return map ? xbpf_map__lookup(map, key, value) : -ENOENT;
}

int testbed_engine__test_run(struct testbed_engine *e, struct xbpf_test_run_opts *opts)
{
	if (e->kobj)
		return testbed_kobj__test_run(e->kobj, opts);
	return xbpf_vm__test_run(e->vm, opts);
}

const char *tool_log_reason(const char *log, char *buf, size_t len)
{
	const char *line = log, *next, *found = NULL;
	size_t found_len = 0;

	snprintf(buf, len, "no reason given");
	while (log && *line) {
		size_t n;

		next = strchr(line, '\n');
		n = next ? (size_t)(next - line) : strlen(line);
		if (n && strncmp(line, "stack depth", 11) && strncmp(line, "processed ", 10)) {
			found = line;
			found_len = n;
		}
		if (!next)
			break;
		line = next + 1;
	}
	if (found)
		snprintf(buf, len, "%.*s", (int)found_len, found);
	return buf;
}

void testbed_engine__run_cell(struct testbed_engine *engine, const void *data, uint32_t len,
			   struct tool_run_cell *ret_cell)
{
	XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = data, .data_size_in = len,
		  .data_out = ret_cell->out, .data_size_out = sizeof(ret_cell->out), .repeat = 1);

	memset(ret_cell, 0, sizeof(*ret_cell));
	if (!engine) {
		ret_cell->err = -EOPNOTSUPP;
		return;
	}
	ret_cell->err = testbed_engine__test_run(engine, &opts);
	ret_cell->retval = opts.retval;
	ret_cell->len = opts.data_size_out;
}

void testbed_engine__open_pair(enum testbed_engine_kind kind, const struct testbed_prog_src *src,
			    const char *name, struct testbed_engine **ret_kern,
			    struct testbed_engine **ret_user, const char **ret_note, int *ret_user_err)
{
	char log[8192] = "";
	struct testbed_engine_opts uopts = { .log_level = 0, .log_buf = log, .log_size = sizeof(log) };
	int err;

	*ret_kern = *ret_user = NULL;
	*ret_note = "";
	*ret_user_err = 0;
	err = testbed_engine__open(TESTBED_ENGINE_KERNEL, src, NULL, ret_kern);
	if (err)
		printf("(kernel engine unavailable: %s)\n", strerror(-err));
	err = testbed_engine__open(kind, src, &uopts, ret_user);
	if (err == -EACCES || err == -EINVAL) {
		/* Show the engines anyway, and say plainly that it is unverified. */
		char reason[160];

		printf("(xbpf verifier rejected %s: %s; running it unverified)\n", name,
		       tool_log_reason(log, reason, sizeof(reason)));
		uopts.skip_verify = true;
		err = testbed_engine__open(kind, src, &uopts, ret_user);
		*ret_note = " (unverified)";
	}
	if (err) {
		/* The kernel's column still shows; the run counts as failed. */
		printf("(xlb-demo: %s engine cannot run %s: %s)\n%s", testbed_engine_kind_name(kind),
		       src->path, strerror(-err), log);
		*ret_user = NULL;
		*ret_user_err = err;
	}
}
