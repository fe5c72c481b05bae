/* SPDX-License-Identifier: MIT */
/*
 * kernel_none.c - builds without libbpf (the arm64 cross build): the
 * kernel engine is absent and every call says so.
 */
#include <errno.h>

#include "testbed.h"

bool testbed_kernel_available(void)
{
	return false;
}

int testbed_kernel_nr_cpus(void)
{
	return -EOPNOTSUPP;
}

const char *testbed_kobj_last_log(void)
{
	return "";
}

int testbed_kobj__open_file(const char *path, const char *prog_name, struct testbed_kobj **ret_obj)
{
	return -EOPNOTSUPP;
}

int testbed_kobj__open_insns(const struct xbpf_insn *insns, size_t cnt, enum xbpf_prog_type type,
			 const struct xbpf_map_spec *maps, size_t map_cnt, struct testbed_kobj **ret_obj)
{
	return -EOPNOTSUPP;
}

struct testbed_kobj *testbed_kobj__close(struct testbed_kobj *obj)
{
	return NULL;
}

int testbed_kobj__map_update(struct testbed_kobj *obj, const char *map, const void *key, const void *value)
{
	return -EOPNOTSUPP;
}

int testbed_kobj__map_lookup(struct testbed_kobj *obj, const char *map, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

int testbed_kobj__map_get_next_key(struct testbed_kobj *obj, const char *map, const void *key, void *next_key)
{
	return -EOPNOTSUPP;
}

int testbed_kobj__prog_fd(const struct testbed_kobj *obj)
{
	return -EOPNOTSUPP;
}

int testbed_kobj__test_run(struct testbed_kobj *obj, struct xbpf_test_run_opts *opts)
{
	return -EOPNOTSUPP;
}

int testbed_kobj__map_info(struct testbed_kobj *obj, const char *name, struct xbpf_map_spec *ret_spec)
{
	return -EOPNOTSUPP;
}
