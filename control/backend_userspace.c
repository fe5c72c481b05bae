// SPDX-License-Identifier: MIT
/*
 * The userspace backend: xlbd drives xlb-dpdk (dpdk/), which runs
 * balancer.bpf.o on xlb's JIT or interpreter over DPDK ports, through the
 * shared maps in xlb-dpdk's runtime directory (userspace.h).  This file
 * opens and closes it and holds the ops table; the jobs are in
 * userspace_maps.c and userspace_stats.c.
 *
 * Opening: wait (--dpdk-wait seconds) for the maps xlb-dpdk creates when
 * it first starts, lock the run directory (one xlbd per dataplane),
 * attach every map and check it has the layout this xlbd was built for
 * (a map of another version is refused, never reinterpreted), then the
 * verifier gate: the object is verified with xlb's verifier under the
 * daemon's policy.  xlb-dpdk verifies again before any lcore runs it, so
 * nothing the verifier rejects ever runs, whatever the policy says here.
 *
 * xlb-dpdk need not be running: the maps outlive it, xlbd programs them,
 * and a restarted xlb-dpdk re-attaches to what xlbd wrote.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "userspace.h"

static bool maps_present(const struct userspace *u)
{
	char path[sizeof(u->maps_dir) + XBPF_MAP_NAME_LEN + 1];

	for (int m = 0; m < UM_CNT; m++) {
		snprintf(path, sizeof(path), "%s/%s", u->maps_dir, userspace_maps[m].name);
		if (access(path, R_OK | W_OK))
			return false;
	}
	return true;
}

/* xlb-dpdk creates the maps on its first start; wait for them a while. */
static int wait_for_maps(struct userspace *u, struct xlb_err *err)
{
	uint64_t deadline = userspace_now_ns() + (uint64_t)u->opts.dpdk_wait_s * 1000000000ull;
	bool said = false;

	while (!maps_present(u)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		if (userspace_now_ns() >= deadline)
			return xlb_err_set(err, -ENOENT,
					   "no xlb-dpdk maps in %s (waited %us): start xlb-dpdk with "
					   "--run-dir %s first",
					   u->maps_dir, u->opts.dpdk_wait_s, u->run_dir);
		if (!said)
			ulog(u, LOG_NOTICE, "waiting up to %us for xlb-dpdk's maps in %s",
			     u->opts.dpdk_wait_s, u->maps_dir);
		said = true;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* One xlbd programs a dataplane: a second one is refused, naming the first (lock.c). */
static int take_lock(struct userspace *u, struct xlb_err *err)
{
	return xlb_lock_dir(u->run_dir, "xlb-dpdk run dir", &u->lock_fd, err);
}

static int open_maps(struct userspace *u, struct xlb_err *err)
{
	char path[sizeof(u->maps_dir) + XBPF_MAP_NAME_LEN + 1];

	for (int m = 0; m < UM_CNT; m++) {
		const struct umap_want *w = &userspace_maps[m];
		const struct xbpf_map_spec *s;

		snprintf(path, sizeof(path), "%s/%s", u->maps_dir, w->name);
		u->map[m] = xbpf_map__open_shared(path, NULL, 0);
		if (!u->map[m])
			return xlb_err_set(err, -errno, "cannot attach to %s: %s", path,
					   strerror(errno));
		s = xbpf_map__spec(u->map[m]);
		if (s->type != w->type || s->key_size != w->key_size ||
		    s->value_size != w->value_size)
			return xlb_err_set(err, -EPROTO,
					   "%s is a %s map of %u-byte keys and %u-byte values; this "
					   "xlbd programs a %s of %u and %u (another version of xlb?)",
					   path, xbpf_map_type_name(s->type), s->key_size,
					   s->value_size, xbpf_map_type_name(w->type), w->key_size,
					   w->value_size);
	}
	return 0;
}

/* Same file (device and inode)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int verify_gate(struct userspace *u, struct xlb_err *err)
{
	struct xlb_dpdk_status st;
	struct xlb_err verr = { 0 };

	if (u->opts.verify == XLB_VERIFY_OFF) {
		snprintf(u->verify_msg, sizeof(u->verify_msg), "skipped (--verify off)");
		return 0;
	}
	u->verify_result = xlb_verify_object(u->opts.obj_path, &u->verify_json, &verr);
	snprintf(u->verify_msg, sizeof(u->verify_msg), "%s",
		 u->verify_result ? verr.msg : "every program accepted");
	if (u->verify_result && u->opts.verify == XLB_VERIFY_ENFORCE)
		return xlb_err_set(err, u->verify_result,
				   "xlb's verifier rejects %s: %s; not driving a dataplane that "
				   "would run it",
				   u->opts.obj_path, verr.msg);
	if (u->verify_result)
		ulog(u, LOG_WARNING, "xlb's verifier rejects %s (%s); xlb-dpdk will refuse to run it",
		     u->opts.obj_path, verr.msg);
	if (userspace_dpdk_status(u, &st)) {
		st.object[sizeof(st.object) - 1] = '\0';
		if (!same_file(st.object, u->opts.obj_path))
			ulog(u, LOG_WARNING,
			     "xlb-dpdk runs %s, xlbd verified %s: they should be the same object",
			     st.object, u->opts.obj_path);
	}
	return 0;
}

static int userspace_open(struct xlb_backend *be, const struct xlb_backend_opts *opts,
			  struct xlb_err *err)
{
	const char *dir = opts->run_dir ? opts->run_dir : XLB_DPDK_RUN_DIR;
	struct userspace *u;
	int ret;

	u = calloc(1, sizeof(*u));
	if (!u)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	be->priv = u;
	u->opts = *opts;
	u->lock_fd = -1;
	u->verify_result = 1;
	be->max_vips = XLB_MAX_VIPS;
	be->max_reals = XLB_MAX_REALS;
	be->ring_size = XLB_RING_SIZE;
	if (dir[0] != '/' || strlen(dir) >= sizeof(u->run_dir))
		return xlb_err_set(err, -EINVAL, "the xlb-dpdk run directory must be an absolute "
						 "path under %zu bytes",
				   sizeof(u->run_dir));
	snprintf(u->run_dir, sizeof(u->run_dir), "%s", dir);
	snprintf(u->maps_dir, sizeof(u->maps_dir), "%s/maps", dir);
	ret = wait_for_maps(u, err);
	ret = ret ?: take_lock(u, err);
	ret = ret ?: open_maps(u, err);
	ret = ret ?: verify_gate(u, err);
	if (!ret)
		ulog(u, LOG_INFO, "userspace backend: programming xlb-dpdk's maps in %s",
		     u->maps_dir);
	return ret;
}

/* --cleanup: remove the maps (the whole userspace bpffs), never under a running xlb-dpdk. */
static void remove_maps(struct userspace *u)
{
	struct xlb_dpdk_status st;
	char path[sizeof(u->maps_dir) + 256 + 1];
	struct dirent *e;
	DIR *dir;

	if (userspace_dpdk_status(u, &st) && userspace_dpdk_alive(&st)) {
		ulog(u, LOG_ERR, "xlb-dpdk (pid %u) still runs over %s: maps kept; stop it first",
		     st.pid, u->maps_dir);
		return;
	}
	dir = opendir(u->maps_dir);
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", u->maps_dir, e->d_name);
		unlink(path);
	}
	if (dir)
		closedir(dir);
	ulog(u, LOG_NOTICE, "removed the maps in %s", u->maps_dir);
}

static void userspace_close(struct xlb_backend *be, bool keep)
{
	struct userspace *u = be->priv;

	if (!u)
		return;
	if (!keep && u->map[UM_DPDK_STATUS])
		remove_maps(u);
	for (int m = 0; m < UM_CNT; m++)
		xbpf_map__free(u->map[m]);
	if (u->lock_fd >= 0)
		close(u->lock_fd); /* releases the flock */
	json_decref(u->verify_json);
	free(u);
	be->priv = NULL;
}

const struct xlb_backend_ops xlb_backend_userspace_ops = {
	.name = "userspace",
	.open = userspace_open,
	.close = userspace_close,
	.config_put = userspace_config_put,
	.real_put = userspace_real_put,
	.vip_put = userspace_vip_put,
	.vip_del = userspace_vip_del,
	.vip_list = userspace_vip_list,
	.ring_get = userspace_ring_get,
	.real_get = userspace_real_get,
	.vip_counters = userspace_vip_counters,
	.real_counters = userspace_real_counters,
	.stats = userspace_stats,
	.io_stats = userspace_io_stats,
	.status = userspace_status,
};
