/* SPDX-License-Identifier: MIT */
/*
 * kernel_engine_none.c - builds without libbpf (the arm64 cross build): the
 * kernel engine is absent and every call says so.
 */
#include <errno.h>

#include "kernel_engine.h"

bool kern_engine_available(void)
{
	return false;
}

int kern_nr_cpus(void)
{
	return -EOPNOTSUPP;
}

const char *kern_obj_last_log(void)
{
	return "";
}

int kern_obj__open_file(const char *path, const char *prog_name, struct kern_obj **ret_obj)
{
	return -EOPNOTSUPP;
}

int kern_obj__open_insns(const struct xbpf_insn *insns, size_t cnt, enum xbpf_prog_type type,
			 const struct xbpf_map_spec *maps, size_t map_cnt, struct kern_obj **ret_obj)
{
	return -EOPNOTSUPP;
}

struct kern_obj *kern_obj__close(struct kern_obj *obj)
{
	return NULL;
}

int kern_obj__map_update(struct kern_obj *obj, const char *map, const void *key, const void *value)
{
	return -EOPNOTSUPP;
}

int kern_obj__map_lookup(struct kern_obj *obj, const char *map, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

int kern_obj__map_get_next_key(struct kern_obj *obj, const char *map, const void *key, void *next_key)
{
	return -EOPNOTSUPP;
}

int kern_obj__prog_fd(const struct kern_obj *obj)
{
	return -EOPNOTSUPP;
}

int kern_obj__test_run(struct kern_obj *obj, struct xbpf_test_run_opts *opts)
{
	return -EOPNOTSUPP;
}

int kern_obj__map_info(struct kern_obj *obj, const char *name, struct xbpf_map_spec *ret_spec)
{
	return -EOPNOTSUPP;
}
