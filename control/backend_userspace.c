// SPDX-License-Identifier: MIT
/*
 * The userspace backend: xlbd drives xlb-dpdk (dpdk/), which runs
 * balancer.bpf.o on xlb's JIT or interpreter over DPDK ports, through the
 * shared maps in xlb-dpdk's runtime directory (userspace.h).  This file
 * opens and closes it and holds the ops table: the maps are programmed and
 * read by the kernel backend's code over those maps (kernel_mapio.c),
 * xlb-dpdk's own status by userspace_stats.c.
 *
 * Opening: wait (--dpdk-wait seconds) for the maps xlb-dpdk creates when
 * it first starts, lock the run directory (one xlbd per dataplane), attach
 * every map and check it has the layout this xlbd was built for (a map of
 * another version is refused, never reinterpreted), then the verifier
 * gate: the object is verified with xlb's verifier under the daemon's
 * policy.  xlb-dpdk verifies again before any lcore runs it, so nothing
 * the verifier rejects ever runs, whatever the policy says here.
 *
 * xlb-dpdk need not be running: the maps outlive it, xlbd programs them,
 * and a restarted xlb-dpdk re-attaches to what xlbd wrote.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "userspace.h"

/* What a map must be for this xlbd to program it (xlb_shared.h, xlb_dpdk_shared.h). */
struct layout {
	enum xbpf_map_type type;
	uint32_t key_size, value_size;
};

#define L(TYPE, K, V) { XBPF_MAP_##TYPE, sizeof(K), sizeof(V) }
static const struct layout km_layouts[KM_CNT] = {
	[KM_VIPS] = L(HASH, struct xlb_vip_key, struct xlb_vip_meta),
	[KM_VIP_ADDRS] = L(HASH, struct xlb_addr_key, __u32),
	[KM_REALS] = L(ARRAY, __u32, struct xlb_real),
	[KM_RINGS] = L(ARRAY, __u32, __u32),
	[KM_CONNS] = L(LRU_HASH, struct xlb_flow_key, struct xlb_conn),
	[KM_CONFIG] = L(ARRAY, __u32, struct xlb_config),
	[KM_VIP_STATS] = L(PERCPU_ARRAY, __u32, struct xlb_lb_counter),
	[KM_REAL_STATS] = L(PERCPU_ARRAY, __u32, struct xlb_lb_counter),
	[KM_REASON_STATS] = L(PERCPU_ARRAY, __u32, struct xlb_counter),
	[KM_EVENT_STATS] = L(PERCPU_ARRAY, __u32, struct xlb_counter),
	[KM_IFACES] = L(ARRAY, __u32, struct xlb_iface),
	[KM_VIP_FILTER] = L(ARRAY, __u32, struct xlb_vip_filter),
	[KM_SERVER_IDS] = L(HASH, __u32, __u32),
	[KM_ALLOW] = L(LPM_TRIE, struct xlb_allow_key, __u32),
	[KM_AFFINITY] = L(LRU_HASH, struct xlb_affinity_key, struct xlb_affinity),
	[KM_FRAGS] = L(LRU_HASH, struct xlb_frag_key, struct xlb_frag),
	[KM_VIP_FAST] = L(PERCPU_ARRAY, __u32, struct xlb_vip_fast),
};
static const char *const ud_names[UD_CNT] = { XLB_DPDK_STATUS_MAP, XLB_DPDK_PORT_MAP,
					      XLB_DPDK_LCORE_MAP };
static const struct layout ud_layouts[UD_CNT] = {
	[UD_STATUS] = L(ARRAY, __u32, struct xlb_dpdk_status),
	[UD_PORTS] = L(ARRAY, __u32, struct xlb_dpdk_port_stats),
	[UD_LCORES] = L(ARRAY, __u32, struct xlb_dpdk_lcore_stats),
};
#undef L

static bool maps_present(const struct userspace *u)
{
	char path[sizeof(u->maps_dir) + XBPF_MAP_NAME_LEN + 1];

	for (int m = 0; m < KM_CNT + UD_CNT; m++) {
		snprintf(path, sizeof(path), "%s/%s", u->maps_dir,
			 m < KM_CNT ? kernel_map_names[m] : ud_names[m - KM_CNT]);
		if (access(path, R_OK | W_OK))
			return false;
	}
	return true;
}

/* xlb-dpdk creates the maps on its first start; wait for them a while. */
static int wait_for_maps(struct userspace *u, struct xlb_err *err)
{
	unsigned int wait_s = u->k.opts.dpdk_wait_s;
	uint64_t deadline = kernel_now_ns() + (uint64_t)wait_s * 1000000000ull;
	bool said = false;

	while (!maps_present(u)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		if (kernel_now_ns() >= deadline)
			return xlb_err_set(err, -ENOENT,
					   "no xlb-dpdk maps in %s (waited %us): start xlb-dpdk with "
					   "--run-dir %s first",
					   u->maps_dir, wait_s, u->run_dir);
		if (!said)
			ulog(u, LOG_NOTICE, "waiting up to %us for xlb-dpdk's maps in %s", wait_s,
			     u->maps_dir);
		said = true;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Attach one map and check its layout. */
static struct xbpf_map *attach(struct userspace *u, const char *name, const struct layout *want,
			       struct xlb_err *err)
{
	char path[sizeof(u->maps_dir) + XBPF_MAP_NAME_LEN + 1];
	const struct xbpf_map_spec *s;
	struct xbpf_map *m;

	snprintf(path, sizeof(path), "%s/%s", u->maps_dir, name);
	if (!want->key_size) {
		xlb_err_set(err, -EPROTO, "no layout known for map %s (xlbd's build is incomplete)", name);
		return NULL;
	}
	m = xbpf_map__open_shared(path, NULL, 0);
	if (!m) {
		xlb_err_set(err, -errno, "cannot attach to %s: %s", path, strerror(errno));
		return NULL;
	}
	s = xbpf_map__spec(m);
	if (s->type != want->type || s->key_size != want->key_size ||
	    s->value_size != want->value_size) {
		xlb_err_set(err, -EPROTO,
			    "%s is a %s map of %u-byte keys and %u-byte values; this xlbd programs a "
			    "%s of %u and %u (another version of xlb?)",
			    path, xbpf_map_type_name(s->type), s->key_size, s->value_size,
			    xbpf_map_type_name(want->type), want->key_size, want->value_size);
		xbpf_map__free(m);
		return NULL;
	}
	return m;
}

static int open_maps(struct userspace *u, struct xlb_err *err)
{
	for (int m = 0; m < KM_CNT; m++)
		if (!(u->k.um[m] = attach(u, kernel_map_names[m], &km_layouts[m], err)))
			return err->code;
	for (int m = 0; m < UD_CNT; m++)
		if (!(u->dpdk[m] = attach(u, ud_names[m], &ud_layouts[m], err)))
			return err->code;
	/* one CPU of the per-CPU maps per xlb-dpdk worker lcore */
	u->k.ncpus = xbpf_map__nr_cpus(u->k.um[KM_VIP_STATS]);
	return 0;
}

/* The dataplane's sizes are those of xlb-dpdk's maps (it chose them: --max-vips ...). */
static int take_sizes(struct xlb_backend *be, struct userspace *u, struct xlb_err *err)
{
	struct kernel *k = &u->k;
	uint32_t rings = xbpf_map__spec(k->um[KM_RINGS])->max_entries;

	k->max_vips = xbpf_map__spec(k->um[KM_VIPS])->max_entries;
	k->max_reals = xbpf_map__spec(k->um[KM_REALS])->max_entries;
	k->ring_size = k->max_vips ? rings / (XLB_RING_HALVES * k->max_vips) : 0;
	if (!k->max_vips || !k->max_reals || !k->ring_size ||
	    (uint64_t)k->ring_size * XLB_RING_HALVES * k->max_vips != rings)
		return xlb_err_set(err, -EPROTO,
				   "%s: xlb_rings (%u entries) is not 2 halves per VIP slot of "
				   "xlb_vips (%u)",
				   u->maps_dir, rings, k->max_vips);
	be->max_vips = k->max_vips;
	be->max_reals = k->max_reals;
	be->ring_size = k->ring_size;
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
	struct kernel *k = &u->k;
	struct xlb_dpdk_status st;
	struct xlb_err verr = { 0 };

	if (k->opts.verify == XLB_VERIFY_OFF) {
		snprintf(k->verify_msg, sizeof(k->verify_msg), "skipped (--verify off)");
		return 0;
	}
	k->verify_result = xlb_verify_object(k->opts.obj_path, &k->verify_json, &verr);
	snprintf(k->verify_msg, sizeof(k->verify_msg), "%s",
		 k->verify_result ? verr.msg : "every program accepted");
	if (k->verify_result && k->opts.verify == XLB_VERIFY_ENFORCE)
		return xlb_err_set(err, k->verify_result,
				   "xlb's verifier rejects %s: %s; not driving a dataplane that "
				   "would run it",
				   k->opts.obj_path, verr.msg);
	if (k->verify_result)
		ulog(u, LOG_WARNING, "xlb's verifier rejects %s (%s); xlb-dpdk will refuse to run it",
		     k->opts.obj_path, verr.msg);
	if (userspace_dpdk_status(u, &st)) {
		st.object[sizeof(st.object) - 1] = '\0';
		if (!same_file(st.object, k->opts.obj_path))
			ulog(u, LOG_WARNING,
			     "xlb-dpdk runs %s, xlbd verified %s: they should be the same object",
			     st.object, k->opts.obj_path);
	}
	return 0;
}

/*
 * Encapsulated health probes leave through the exception port: the
 * healthcheck tc program (the kernel backend's, kernel_hc.c) on the egress
 * of the tap that xlb-dpdk's exception port sits on encapsulates them
 * toward their real before xlb-dpdk sends them out of the data port.  The
 * tap lives and dies with xlb-dpdk, so each xlb-dpdk (pid and start) gets
 * the program set up once, when it is first seen.
 */
static void hc_sync(struct userspace *u)
{
	struct kernel *k = &u->k;
	struct xlb_dpdk_status st;
	struct xlb_dpdk_port_stats p;
	char name[IF_NAMESIZE];

	if (!userspace_dpdk_status(u, &st) || !userspace_dpdk_alive(&st) ||
	    (st.pid == u->hc_pid && st.start_ns == u->hc_start_ns))
		return;
	u->hc_pid = st.pid;
	u->hc_start_ns = st.start_ns;
	kernel_hc_teardown(k, true); /* the previous xlb-dpdk's tap is gone with it */
	k->iface_cnt = 0;
	for (uint32_t i = 0; i < st.nr_ports && i < XLB_DPDK_MAX_PORTS; i++) {
		if (xbpf_map__lookup(u->dpdk[UD_PORTS], &i, &p) || p.role != XLB_DPDK_PORT_EXCEPTION)
			continue;
		if (!if_indextoname(p.ifindex, name)) {
			snprintf(k->hc_msg, sizeof(k->hc_msg),
				 "exception port %.48s has no kernel interface here (ifindex %u)",
				 p.name, p.ifindex);
			ulog(u, LOG_WARNING, "encapsulated health probes unavailable: %s", k->hc_msg);
			return;
		}
		snprintf(k->ifaces[0].name, sizeof(k->ifaces[0].name), "%s", name);
		k->ifaces[0].ifindex = (int)p.ifindex;
		k->iface_cnt = 1;
		kernel_hc_setup(k);
		return;
	}
	snprintf(k->hc_msg, sizeof(k->hc_msg), "xlb-dpdk has no exception port");
}

static int userspace_hc_real_put(struct xlb_backend *be, uint32_t mark, const struct xlb_ip *addr,
				 enum xlb_encap encap, struct xlb_err *err)
{
	hc_sync(be->priv);
	return kernel_hc_real_put(be, mark, addr, encap, err);
}

static int userspace_open(struct xlb_backend *be, const struct xlb_backend_opts *opts,
			  struct xlb_err *err)
{
	const char *dir = opts->run_dir ? opts->run_dir : XLB_DPDK_RUN_DIR;
	struct userspace *u;
	struct kernel *k;
	int ret;

	u = calloc(1, sizeof(*u));
	if (!u)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	be->priv = u;
	k = &u->k;
	k->opts = *opts;
	for (int m = 0; m < KM_CNT; m++)
		k->fd[m] = -1;
	k->tx_fd = k->hc_reals_fd = k->lock_fd = -1;
	k->verify_result = 1;
	if (dir[0] != '/' || strlen(dir) >= sizeof(u->run_dir))
		return xlb_err_set(err, -EINVAL, "the xlb-dpdk run directory must be an absolute "
						 "path under %zu bytes",
				   sizeof(u->run_dir));
	snprintf(u->run_dir, sizeof(u->run_dir), "%s", dir);
	snprintf(u->maps_dir, sizeof(u->maps_dir), "%s/maps", dir);
	snprintf(k->pin_root, sizeof(k->pin_root), "%.200s", u->maps_dir);
	ret = wait_for_maps(u, err);
	/* one xlbd per dataplane: the run directory's lock (lock.c), the holder named */
	ret = ret ?: xlb_lock_dir(u->run_dir, "xlb-dpdk run dir", &k->lock_fd, err);
	ret = ret ?: open_maps(u, err);
	ret = ret ?: take_sizes(be, u, err);
	ret = ret ?: kernel_maps_init(k, err);
	ret = ret ?: verify_gate(u, err);
	if (!ret)
		ulog(u, LOG_INFO, "userspace backend: programming xlb-dpdk's maps in %s (%d lcore(s))",
		     u->maps_dir, k->ncpus);
	if (!ret) {
		snprintf(k->hc_msg, sizeof(k->hc_msg), "xlb-dpdk is not running");
		hc_sync(u);
	}
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
	kernel_hc_teardown(&u->k, keep);
	if (!keep && u->dpdk[UD_STATUS])
		remove_maps(u);
	for (int m = 0; m < KM_CNT; m++)
		xbpf_map__free(u->k.um[m]);
	for (int m = 0; m < UD_CNT; m++)
		xbpf_map__free(u->dpdk[m]);
	if (u->k.lock_fd >= 0)
		close(u->k.lock_fd); /* releases the flock */
	json_decref(u->k.verify_json);
	kernel_maps_free(&u->k);
	free(u);
	be->priv = NULL;
}

const struct xlb_backend_ops xlb_backend_userspace_ops = {
	.name = "userspace",
	.open = userspace_open,
	.close = userspace_close,
	/* the dataplane's maps: the kernel backend's code, over xlb-dpdk's shared maps */
	.config_put = kernel_config_put,
	KERNEL_MAPS_OPS,
	.hc_real_put = userspace_hc_real_put,
	/* xlb-dpdk's own */
	.io_stats = userspace_io_stats,
	.status = userspace_status,
};
