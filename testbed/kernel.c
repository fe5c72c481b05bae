/* SPDX-License-Identifier: MIT */
/*
 * kernel.c - the kernel reference engine through libbpf: the same
 * object the userspace engines run, loaded into the kernel and run with
 * BPF_PROG_TEST_RUN, so one tool compares them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "testbed.h"

#define MAX_RAW_MAPS 64

struct testbed_kobj {
	struct bpf_object *obj; /* ELF objects; NULL for raw programs */
	int prog_fd;
	size_t raw_map_cnt;
	int raw_map_fds[MAX_RAW_MAPS];
};

static char last_log[64 * 1024];

bool testbed_kernel_available(void)
{
	return true;
}

int testbed_kernel_nr_cpus(void)
{
	return libbpf_num_possible_cpus();
}

const char *testbed_kobj_last_log(void)
{
	return last_log;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	size_t used = strlen(last_log);

	/* Keep libbpf's messages (the verifier log among them) for the caller. */
	if (level != LIBBPF_DEBUG && used < sizeof(last_log) - 1)
		vsnprintf(last_log + used, sizeof(last_log) - used, fmt, args);
	return 0;
}

int testbed_kobj__open_file(const char *path, const char *prog_name, struct testbed_kobj **ret_obj)
{
	struct bpf_program *prog = NULL;
	struct testbed_kobj *ko;
	int err;

	last_log[0] = '\0';
	libbpf_set_print(silent_print);
	ko = calloc(1, sizeof(*ko));
	if (!ko)
		return -ENOMEM;
	ko->prog_fd = -1;
	ko->obj = bpf_object__open_file(path, NULL);
	if (!ko->obj) {
		err = -errno;
		goto err_free;
	}
	bpf_object__for_each_program(prog, ko->obj) {
		if (!prog_name || !strcmp(bpf_program__name(prog), prog_name))
			break;
	}
	if (!prog) {
		err = -ENOENT;
		goto err_close;
	}
	/* Load only the program asked for: others may need attach targets. */
	{
		struct bpf_program *p;

		bpf_object__for_each_program(p, ko->obj)
			bpf_program__set_autoload(p, p == prog);
	}
	err = bpf_object__load(ko->obj);
	if (err)
		goto err_close;
	ko->prog_fd = bpf_program__fd(prog);
	*ret_obj = ko;
	return 0;

err_close:
	bpf_object__close(ko->obj);
err_free:
	free(ko);
	return err;
}

static int kernel_map_type(enum xbpf_map_type type)
{
	/* enum xbpf_map_type carries the kernel's numbers. */
	return (int)type;
}

static int kernel_prog_type(enum xbpf_prog_type type)
{
	switch (type) {
	case XBPF_PROG_SOCKET_FILTER:
		return BPF_PROG_TYPE_SOCKET_FILTER;
	case XBPF_PROG_SCHED_CLS:
		return BPF_PROG_TYPE_SCHED_CLS;
	case XBPF_PROG_SCHED_ACT:
		return BPF_PROG_TYPE_SCHED_ACT;
	case XBPF_PROG_XDP:
		return BPF_PROG_TYPE_XDP;
	case XBPF_PROG_TRACEPOINT:
		return BPF_PROG_TYPE_TRACEPOINT;
	default:
		return -EOPNOTSUPP;
	}
}

int testbed_kobj__open_insns(const struct xbpf_insn *insns, size_t cnt, enum xbpf_prog_type type,
			 const struct xbpf_map_spec *maps, size_t map_cnt, struct testbed_kobj **ret_obj)
{
	LIBBPF_OPTS(bpf_prog_load_opts, load_opts);
	struct xbpf_insn *patched = NULL;
	struct testbed_kobj *ko;
	int ptype = kernel_prog_type(type);
	int err;
	size_t i;

	last_log[0] = '\0';
	if (ptype < 0)
		return ptype;
	if (map_cnt > MAX_RAW_MAPS)
		return -E2BIG;
	ko = calloc(1, sizeof(*ko));
	if (!ko)
		return -ENOMEM;
	ko->prog_fd = -1;
	for (i = 0; i < map_cnt; i++) {
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "map%zu", i);
		fd = bpf_map_create(kernel_map_type(maps[i].type), name, maps[i].key_size,
				    maps[i].value_size, maps[i].max_entries, NULL);
		if (fd < 0) {
			err = -errno;
			goto err_close;
		}
		ko->raw_map_fds[ko->raw_map_cnt++] = fd;
	}
	patched = malloc(cnt * sizeof(*patched));
	if (!patched) {
		err = -ENOMEM;
		goto err_close;
	}
	memcpy(patched, insns, cnt * sizeof(*patched));
	for (i = 0; i + 1 < cnt; i++) {
		struct xbpf_insn *insn = &patched[i];

		if (insn->code != (XBPF_LD | XBPF_DW | XBPF_IMM))
			continue;
		if (insn->src_reg == XBPF_PSEUDO_MAP_FD || insn->src_reg == XBPF_PSEUDO_MAP_VALUE) {
			if (insn->imm < 0 || (size_t)insn->imm >= map_cnt) {
				err = -EINVAL;
				goto err_close;
			}
			insn->imm = ko->raw_map_fds[insn->imm];
		}
		i++;
	}
	load_opts.log_buf = last_log;
	load_opts.log_size = sizeof(last_log);
	load_opts.log_level = 1;
	/* as libbpf loads SEC("xdp"): a tail call may only join programs of one attach type */
	if (ptype == BPF_PROG_TYPE_XDP)
		load_opts.expected_attach_type = BPF_XDP;
	ko->prog_fd = bpf_prog_load(ptype, "raw", "GPL", (const struct bpf_insn *)patched, cnt,
				    &load_opts);
	if (ko->prog_fd < 0) {
		err = -errno;
		goto err_close;
	}
	free(patched);
	*ret_obj = ko;
	return 0;

err_close:
	free(patched);
	testbed_kobj__close(ko);
	return err;
}

struct testbed_kobj *testbed_kobj__close(struct testbed_kobj *ko)
{
	size_t i;

	if (!ko)
		return NULL;
	if (ko->obj)
		bpf_object__close(ko->obj);
	else if (ko->prog_fd >= 0)
		close(ko->prog_fd);
	for (i = 0; i < ko->raw_map_cnt; i++)
		close(ko->raw_map_fds[i]);
	free(ko);
	return NULL;
}

int testbed_kobj__prog_fd(const struct testbed_kobj *ko)
{
	return ko ? ko->prog_fd : -EINVAL;
}

static int map_fd(struct testbed_kobj *ko, const char *name)
{
	struct bpf_map *map;
	unsigned long idx;
	char *end;

	if (ko->obj) {
		map = bpf_object__find_map_by_name(ko->obj, name);
		return map ? bpf_map__fd(map) : -ENOENT;
	}
	if (strncmp(name, "map", 3))
		return -ENOENT;
	idx = strtoul(name + 3, &end, 10);
	if (*end || end == name + 3 || idx >= ko->raw_map_cnt)
		return -ENOENT;
	return ko->raw_map_fds[idx];
}

int testbed_kobj__map_update(struct testbed_kobj *ko, const char *map, const void *key, const void *value)
{
	int fd = map_fd(ko, map);

	if (fd < 0)
		return fd;
	return bpf_map_update_elem(fd, key, value, BPF_ANY) ? -errno : 0;
}

int testbed_kobj__map_lookup(struct testbed_kobj *ko, const char *map, const void *key, void *value)
{
	int fd = map_fd(ko, map);

	if (fd < 0)
		return fd;
	return bpf_map_lookup_elem(fd, key, value) ? -errno : 0;
}

int testbed_kobj__map_get_next_key(struct testbed_kobj *ko, const char *map, const void *key, void *next_key)
{
	int fd = map_fd(ko, map);

	if (fd < 0)
		return fd;
	return bpf_map_get_next_key(fd, key, next_key) ? -errno : 0;
}

int testbed_kobj__test_run(struct testbed_kobj *ko, struct xbpf_test_run_opts *opts)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	int err;

	topts.data_in = opts->data_in;
	topts.data_out = opts->data_out;
	topts.data_size_in = opts->data_size_in;
	topts.data_size_out = opts->data_size_out;
	topts.ctx_in = opts->ctx_in;
	topts.ctx_out = opts->ctx_out;
	topts.ctx_size_in = opts->ctx_size_in;
	topts.ctx_size_out = opts->ctx_size_out;
	topts.repeat = opts->repeat;
	topts.flags = opts->flags;
	topts.cpu = opts->cpu;
	err = bpf_prog_test_run_opts(ko->prog_fd, &topts);
	if (err)
		return -errno;
	opts->data_size_out = topts.data_size_out;
	opts->ctx_size_out = topts.ctx_size_out;
	opts->retval = topts.retval;
	opts->duration = topts.duration;
	return 0;
}

int testbed_kobj__map_info(struct testbed_kobj *ko, const char *name, struct xbpf_map_spec *ret_spec)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = map_fd(ko, name);

	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	memset(ret_spec, 0, sizeof(*ret_spec));
	snprintf(ret_spec->name, sizeof(ret_spec->name), "%s", name);
	ret_spec->type = (enum xbpf_map_type)info.type;
	ret_spec->key_size = info.key_size;
	ret_spec->value_size = info.value_size;
	ret_spec->max_entries = info.max_entries;
	ret_spec->map_flags = info.map_flags;
	return 0;
}
