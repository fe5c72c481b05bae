// SPDX-License-Identifier: MIT
/*
 * prog.c - the program xlb-dpdk runs and the maps it lives with.
 *
 * The object is opened with its BTF-defined maps in <run dir>/maps as
 * shared maps (core/map_shm.c): created on the first start, re-attached
 * with their contents on every later one, so the connection table, the
 * rings and the counters survive a restart of xlb-dpdk, and xlbd programs
 * the same maps while xlb-dpdk runs.  Per-CPU maps get one CPU per worker
 * lcore; a restart with another lcore count is refused by the maps (their
 * layout would change), never silently reset.
 *
 * xlb's verifier runs before any lcore starts; a rejected program never
 * reaches one.  The JIT is the default engine; when it refuses a program
 * the interpreter runs it, with a warning.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xlb_dpdk.h"

static int mkdir_p(const char *path)
{
	char buf[4096], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0770) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0770) && errno != EEXIST)
		return -errno;
	return 0;
}

static struct xbpf_map *open_own_map(const char *dir, const char *name, uint32_t value_size,
				     uint32_t max_entries)
{
	struct xbpf_map_spec spec = { .type = XBPF_MAP_ARRAY, .key_size = 4,
				      .value_size = value_size, .max_entries = max_entries };
	char path[4096];
	struct xbpf_map *map;

	snprintf(spec.name, sizeof(spec.name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	map = xbpf_map__open_shared(path, &spec, 1);
	if (!map)
		fprintf(stderr, "xlb-dpdk: cannot open %s: %s\n", path, strerror(errno));
	return map;
}

static struct xbpf_prog *pick_prog(struct xbpf_object *obj, const char *name)
{
	struct xbpf_prog *prog = NULL;

	if (name)
		return xbpf_object__find_prog(obj, name);
	while ((prog = xbpf_object__next_prog(obj, prog)))
		if (xbpf_prog__type(prog) == XBPF_PROG_XDP)
			return prog;
	return NULL;
}

int xlb_prog_load(struct xlb_dp *dp)
{
	XBPF_OPTS(xbpf_vm_opts, vopts, .engine = dp->opts.engine, .log_level = 1);
	XBPF_OPTS(xbpf_object_open_opts, oopts, .nr_cpus = (int)dp->nr_workers);
	struct xlb_dpdk_status st = {};
	char maps_dir[4096];
	struct xbpf_prog *prog;
	struct timespec now;
	uint32_t zero = 0;
	int err;

	snprintf(maps_dir, sizeof(maps_dir), "%s/maps", dp->opts.run_dir);
	err = mkdir_p(maps_dir);
	if (err) {
		fprintf(stderr, "xlb-dpdk: cannot create %s: %s\n", maps_dir, strerror(-err));
		return err;
	}
	oopts.pin_root_path = maps_dir;
	dp->obj = xbpf_object__open_file(dp->opts.obj_path, &oopts);
	if (!dp->obj) {
		err = -errno;
		fprintf(stderr, "xlb-dpdk: cannot open %s: %s\n", dp->opts.obj_path, strerror(-err));
		return err;
	}
	prog = pick_prog(dp->obj, dp->opts.prog_name);
	if (!prog || xbpf_prog__type(prog) != XBPF_PROG_XDP) {
		fprintf(stderr, "xlb-dpdk: %s has no XDP program %s\n", dp->opts.obj_path,
			dp->opts.prog_name ? dp->opts.prog_name : "");
		return -ENOENT;
	}
	vopts.log_size = 1 << 20;
	vopts.log_buf = calloc(1, vopts.log_size);
	dp->vm = xbpf_vm__new(prog, &vopts);
	if (!dp->vm) {
		size_t len = vopts.log_buf ? strlen(vopts.log_buf) : 0;

		err = -errno;
		fprintf(stderr, "xlb-dpdk: xlb's verifier rejects %s (%s); nothing runs\n%s\n",
			xbpf_prog__name(prog), strerror(-err),
			len ? vopts.log_buf + (len > 4000 ? len - 4000 : 0) : "");
		free(vopts.log_buf);
		return err;
	}
	free(vopts.log_buf);
	if (dp->opts.engine == XBPF_ENGINE_JIT && xbpf_vm__engine(dp->vm) != XBPF_ENGINE_JIT)
		fprintf(stderr, "xlb-dpdk: warning: the JIT refused %s; running it on the interpreter\n",
			xbpf_prog__name(prog));

	dp->status_map = open_own_map(maps_dir, XLB_DPDK_STATUS_MAP, sizeof(struct xlb_dpdk_status), 1);
	dp->port_map = open_own_map(maps_dir, XLB_DPDK_PORT_MAP, sizeof(struct xlb_dpdk_port_stats),
				    XLB_DPDK_MAX_PORTS);
	dp->lcore_map = open_own_map(maps_dir, XLB_DPDK_LCORE_MAP, sizeof(struct xlb_dpdk_lcore_stats),
				     XLB_DPDK_MAX_LCORES);
	if (!dp->status_map || !dp->port_map || !dp->lcore_map)
		return -errno;
	st.pid = (uint32_t)getpid();
	st.nr_ports = dp->nr_ports;
	st.nr_lcores = dp->nr_workers;
	clock_gettime(CLOCK_REALTIME, &now);
	st.start_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	snprintf(st.engine, sizeof(st.engine), "%s", xbpf_engine_name(xbpf_vm__engine(dp->vm)));
	snprintf(st.program, sizeof(st.program), "%s", xbpf_prog__name(prog));
	snprintf(st.object, sizeof(st.object), "%s", dp->opts.obj_path);
	xbpf_map__update(dp->status_map, &zero, &st, XBPF_ANY);
	if (!dp->opts.quiet)
		printf("xlb-dpdk: %s from %s on the %s, %u worker lcore(s), maps in %s\n",
		       xbpf_prog__name(prog), dp->opts.obj_path, st.engine, dp->nr_workers, maps_dir);
	return 0;
}

void xlb_prog_unload(struct xlb_dp *dp)
{
	struct xlb_dpdk_status st;
	uint32_t zero = 0;

	if (dp->status_map && !xbpf_map__lookup(dp->status_map, &zero, &st)) {
		st.running = 0;
		xbpf_map__update(dp->status_map, &zero, &st, XBPF_ANY);
	}
	dp->vm = xbpf_vm__free(dp->vm);
	xbpf_object__close(dp->obj);
	dp->obj = NULL;
	xbpf_map__free(dp->status_map);
	xbpf_map__free(dp->port_map);
	xbpf_map__free(dp->lcore_map);
	dp->status_map = dp->port_map = dp->lcore_map = NULL;
}
