// SPDX-License-Identifier: MIT
/*
 * open.c - opening objects: raw instruction arrays (one function per
 * bpf-to-bpf call target), ELF objects from memory or a file, and either by
 * looking at the file.  The object model itself is in object.c, the ELF
 * reader in elf.c.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_impl.h"

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

/* The raw program's BTF and func_info (opts->btf, opts->func_info), as BPF_PROG_LOAD takes them. */
static int raw_func_info(struct xbpf_object *obj, struct xbpf_prog *prog,
			 const struct xbpf_object_open_opts *opts)
{
	const void *data = OPTS_GET(opts, btf, NULL);
	size_t size = OPTS_GET(opts, btf_size, 0), cnt = OPTS_GET(opts, func_info_cnt, 0);
	const struct xbpf_func_info *recs = OPTS_GET(opts, func_info, NULL);
	struct xbpf_btf btf;
	void *copy;
	int err;

	if (!data && !recs)
		return 0;
	if (!data || !size || !recs || !cnt) {
		pr_warn("raw: BTF and func_info go together\n");
		return -EINVAL;
	}
	/* The parser keeps pointers into an aligned image. */
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	err = __xbpf_btf_parse(copy, size, &btf);
	if (!err) {
		/* Names are copied into obj: the BTF image need not outlive this call. */
		err = __xbpf_prog_set_func_info(obj, prog, &btf, recs, cnt);
		__xbpf_btf_free(&btf);
	}
	free(copy);
	return err;
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
	if (OPTS_GET(opts, license, NULL))
		snprintf(obj->license, sizeof(obj->license), "%s", OPTS_GET(opts, license, NULL));
	else
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
	err = err ?: raw_func_info(obj, prog, opts);
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
	struct xbpf_elf_load_opts lopts = { 0 };
	struct xbpf_object *obj;
	int err;

	if (!buf || !size || !OPTS_VALID(opts, xbpf_object_open_opts))
		return xbpf_err_ptr(-EINVAL);
	obj = __xbpf_object_new(OPTS_GET(opts, name, NULL) ? OPTS_GET(opts, name, NULL) : "mem");
	if (!obj)
		return xbpf_err_ptr(-ENOMEM);
	lopts.nr_cpus = OPTS_GET(opts, nr_cpus, 0);
	lopts.pin_root = OPTS_GET(opts, pin_root_path, NULL);
	lopts.map_sizes = OPTS_GET(opts, map_sizes, NULL);
	lopts.map_size_cnt = OPTS_GET(opts, map_size_cnt, 0);
	lopts.globals = OPTS_GET(opts, globals, NULL);
	lopts.global_cnt = OPTS_GET(opts, global_cnt, 0);
	err = __xbpf_elf_load(obj, buf, size, &lopts);
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

/* The caller's options (any size) as this build's, named after the file by default. */
static void file_opts(struct xbpf_object_open_opts *o, const struct xbpf_object_open_opts *opts,
		      const char *path)
{
	o->name = OPTS_GET(opts, name, NULL) ? OPTS_GET(opts, name, NULL) : base_name(path);
	o->nr_cpus = OPTS_GET(opts, nr_cpus, 0);
	o->pin_root_path = OPTS_GET(opts, pin_root_path, NULL);
	o->map_sizes = OPTS_GET(opts, map_sizes, NULL);
	o->map_size_cnt = OPTS_GET(opts, map_size_cnt, 0);
	o->globals = OPTS_GET(opts, globals, NULL);
	o->global_cnt = OPTS_GET(opts, global_cnt, 0);
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
	file_opts(&o, opts, path);
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
	file_opts(&o, opts, path);
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

