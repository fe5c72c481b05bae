// SPDX-License-Identifier: MIT
/*
 * The maps code's one way to the balancer's maps: bpf(2) on the kernel's
 * maps (fd[], the kernel backend), or xlb's shared maps (um[], the
 * userspace backend: the same maps as files xlb-dpdk runs the balancer
 * over, core/map_shm.c).  kernel_maps.c, kernel_stats.c and kernel_conn.c
 * go through these, so both backends program and read the dataplane with
 * one code.  Returns as libbpf's calls do: 0, or -errno with errno set.
 */
#include <errno.h>

#include "kernel.h"

static int ret_of(int r)
{
	if (r < 0)
		errno = -r;
	return r < 0 ? r : 0;
}

int km_lookup(struct kernel *k, enum kmap m, const void *key, void *val)
{
	if (k->um[m])
		return ret_of(xbpf_map__lookup(k->um[m], key, val));
	return bpf_map_lookup_elem(k->fd[m], key, val) ? -errno : 0;
}

int km_update(struct kernel *k, enum kmap m, const void *key, const void *val, __u64 flags)
{
	if (k->um[m])
		return ret_of(xbpf_map__update(k->um[m], key, val, flags));
	return bpf_map_update_elem(k->fd[m], key, val, flags) ? -errno : 0;
}

int km_delete(struct kernel *k, enum kmap m, const void *key)
{
	if (k->um[m])
		return ret_of(xbpf_map__delete(k->um[m], key));
	return bpf_map_delete_elem(k->fd[m], key) ? -errno : 0;
}

int km_next_key(struct kernel *k, enum kmap m, const void *key, void *next)
{
	if (k->um[m])
		return ret_of(xbpf_map__get_next_key(k->um[m], key, next));
	return bpf_map_get_next_key(k->fd[m], key, next) ? -errno : 0;
}

/* Shared maps have no batch calls: -EOPNOTSUPP, and callers go element by element. */
int km_update_batch(struct kernel *k, enum kmap m, const void *keys, const void *vals,
		    __u32 *count)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);

	if (k->um[m])
		return ret_of(-EOPNOTSUPP);
	return bpf_map_update_batch(k->fd[m], keys, vals, count, &o) ? -errno : 0;
}

int km_lookup_batch(struct kernel *k, enum kmap m, void *in, void *out, void *keys, void *vals,
		    __u32 *count)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);

	if (k->um[m]) {
		*count = 0;
		return ret_of(-EOPNOTSUPP);
	}
	return bpf_map_lookup_batch(k->fd[m], in, out, keys, vals, count, &o) ? -errno : 0;
}
