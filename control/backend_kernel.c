// SPDX-License-Identifier: MIT
/*
 * The kernel backend: balancer.bpf.o attached with libxdp, maps programmed
 * with libbpf.
 *
 * Hitless restart.  Maps are pinned under <pin root>/maps/<name> and each
 * interface's program under <pin root>/prog_<ifname>.  At start, if every
 * configured interface still runs the pinned program, xlbd adopts it: it
 * opens the pinned maps and touches nothing that packets see, so established
 * flows keep their reals and the LRU stays; the daemon then reconciles the
 * maps with its store.  Otherwise the object is loaded (libbpf reuses pinned
 * maps that match), pre-validated by xlb's verifier, and attached: natively,
 * else generic XDP with a warning; through libxdp's dispatcher, else in
 * libxdp's single-program mode.
 *
 * Rings.  xlb_rings holds two halves per VIP (xlb_shared.h).  A new ring is
 * written to the half the VIP's meta does not point at, with one batched
 * update, then the meta is replaced with ring_half flipped in one hash
 * update: a packet sees the old ring or the new one, never a mix.  A half is
 * rewritten only after XLB_RING_GRACE_NS since the flip that retired it, so
 * a packet still holding the old meta (programs run under RCU, for
 * microseconds) never sees it change.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <libgen.h>
#include <jansson.h>
#include <limits.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "backend.h"
#include "xlb_shared.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

#define XLB_RING_GRACE_NS (20ull * 1000 * 1000)

enum kmap {
	KM_VIPS,
	KM_VIP_ADDRS,
	KM_REALS,
	KM_RINGS,
	KM_CONNS,
	KM_CONFIG,
	KM_VIP_STATS,
	KM_REAL_STATS,
	KM_REASON_STATS,
	KM_EVENT_STATS,
	KM_CNT,
};

static const char *const kmap_names[KM_CNT] = {
	[KM_VIPS] = "xlb_vips",
	[KM_VIP_ADDRS] = "xlb_vip_addrs",
	[KM_REALS] = "xlb_reals",
	[KM_RINGS] = "xlb_rings",
	[KM_CONNS] = "xlb_conns",
	[KM_CONFIG] = "xlb_config",
	[KM_VIP_STATS] = "xlb_vip_stats",
	[KM_REAL_STATS] = "xlb_real_stats",
	[KM_REASON_STATS] = "xlb_reason_stats",
	[KM_EVENT_STATS] = "xlb_event_stats",
};

/*
 * Maps that are not pinned: the devmap (the kernel reports it with
 * BPF_F_RDONLY_PROG added, so libbpf refuses to re-use a pinned one) and the
 * BPF-private flood window.  Both are rebuilt with each load.
 */
static bool map_pinned(const char *name)
{
	return strncmp(name, "xlb_", 4) == 0 && strcmp(name, "xlb_tx_ports") && strcmp(name, "xlb_flood");
}

struct kiface {
	char name[XLB_IFNAME_LEN];
	int ifindex;
	uint32_t prog_id;
	bool adopted;
	bool native;
	bool dispatcher;
	struct xdp_program *prog;
};

/* libbpf and libxdp print through the daemon's log, one level lower (STYLE 8). */
static void (*lib_log)(int level, const char *fmt, ...);

static int lib_print(int level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (!lib_log)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	lib_log(level == 0 ? LOG_INFO : LOG_DEBUG, "%s", buf);
	return 0;
}

static int libbpf_print_cb(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return lib_print((int)level, fmt, ap);
}

static int libxdp_print_cb(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return lib_print((int)level, fmt, ap);
}

struct kernel {
	struct xlb_backend_opts opts;
	char pin_root[256];
	struct bpf_object *obj;
	int fd[KM_CNT];
	struct kiface ifaces[XLB_MAX_IFACES];
	size_t iface_cnt;
	int ncpus;
	bool verified;
	int verify_result; /* 0, -EACCES, -ENOTSUP, or 1: not run */
	char verify_msg[240];
	json_t *verify_json;
	uint8_t ring_half[XLB_MAX_VIPS];
	bool vip_present[XLB_MAX_VIPS];
	uint64_t retired_ns[XLB_MAX_VIPS];
	uint32_t *keys;
	/* The healthcheck tc program (encapsulated probes). */
	struct bpf_object *hc_obj;
	int hc_reals_fd;
	char hc_msg[200];
};

#define klog(k, lvl, ...) ((k)->opts.log ? (k)->opts.log(lvl, __VA_ARGS__) : (void)0)

static void hc_setup(struct kernel *k);
static int map_err(struct xlb_err *err, const char *what, int e);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void to_dp_addr(const struct xlb_ip *a, union xlb_addr *ret, __u8 *ret_family)
{
	memset(ret, 0, sizeof(*ret));
	if (a->family == AF_INET) {
		memcpy(ret->bytes, a->bytes, 4);
		*ret_family = XLB_FAMILY_V4;
	} else {
		memcpy(ret->bytes, a->bytes, 16);
		*ret_family = XLB_FAMILY_V6;
	}
}

static void from_dp_addr(const union xlb_addr *a, __u8 family, struct xlb_ip *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->family = family == XLB_FAMILY_V4 ? AF_INET : AF_INET6;
	memcpy(ret->bytes, a->bytes, family == XLB_FAMILY_V4 ? 4 : 16);
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The pin root must be on a bpffs; mount one there if not (e.g. inside `ip netns exec`). */
static int ensure_bpffs(struct kernel *k, struct xlb_err *err)
{
	struct statfs sfs;
	int ret;

	ret = mkdir_p(k->pin_root);
	if (ret)
		return xlb_err_set(err, ret, "cannot create pin root %s: %s", k->pin_root,
				   strerror(-ret));
	if (statfs(k->pin_root, &sfs))
		return xlb_err_set(err, -errno, "statfs %s: %s", k->pin_root, strerror(errno));
	if (sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", k->pin_root, "bpf", 0, "mode=0700"))
		return xlb_err_set(err, -errno, "%s is not a bpffs and mounting one failed: %s",
				   k->pin_root, strerror(errno));
	klog(k, LOG_NOTICE, "mounted a bpffs on %s", k->pin_root);
	return 0;
}

static uint32_t prog_id_of_fd(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/* Is prog_id running on ifindex, alone or under libxdp's dispatcher? */
static bool prog_attached(int ifindex, uint32_t prog_id, bool *ret_dispatcher, bool *ret_native)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p;
	bool found = false;

	if (libxdp_get_error(mp) || !mp)
		return false;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		found = p && xdp_program__id(p) == prog_id;
		*ret_dispatcher = false;
	} else {
		for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp))
			if (xdp_program__id(p) == prog_id)
				found = true;
		*ret_dispatcher = true;
	}
	*ret_native = xdp_multiprog__attach_mode(mp) == XDP_MODE_NATIVE;
	xdp_multiprog__close(mp);
	return found;
}

/*
 * Detach our program from an interface: through libxdp first (it knows the
 * dispatcher), then, if the program is still the one attached in
 * single-program mode, directly with the kernel's netlink call.
 */
static int detach_ours(struct kernel *k, struct kiface *ifc)
{
	struct xdp_program *p = ifc->prog;
	bool disp = false, native = false;
	__u32 id = 0;
	int ret = 0;

	if (!p && ifc->prog_id) {
		p = xdp_program__from_id(ifc->prog_id);
		if (libxdp_get_error(p))
			p = NULL;
	}
	if (p)
		ret = xdp_program__detach(p, ifc->ifindex, ifc->native ? XDP_MODE_NATIVE : XDP_MODE_SKB, 0);
	if (p && p != ifc->prog)
		xdp_program__close(p);
	if (!prog_attached(ifc->ifindex, ifc->prog_id, &disp, &native))
		return 0;
	if (!disp && !bpf_xdp_query_id(ifc->ifindex, native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE, &id) &&
	    id == ifc->prog_id)
		ret = bpf_xdp_detach(ifc->ifindex, native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE, NULL);
	if (ret)
		klog(k, LOG_WARNING, "%s: detach failed: %s, ignoring", ifc->name, strerror(-ret));
	return ret;
}

static bool any_xdp_attached(int ifindex)
{
	__u32 id = 0;

	return !bpf_xdp_query_id(ifindex, 0, &id) && id;
}

static int open_pinned_maps(struct kernel *k, struct xlb_err *err)
{
	char path[PATH_MAX];

	for (int m = 0; m < KM_CNT; m++) {
		snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, kmap_names[m]);
		k->fd[m] = bpf_obj_get(path);
		if (k->fd[m] < 0)
			return xlb_err_set(err, -errno, "cannot open pinned map %s: %s", path,
					   strerror(errno));
	}
	return 0;
}

static int run_verifier(struct kernel *k, struct xlb_err *err)
{
	struct xlb_err verr = { 0 };
	int ret;

	if (k->opts.verify == XLB_VERIFY_OFF) {
		k->verify_result = 1;
		snprintf(k->verify_msg, sizeof(k->verify_msg), "pre-validation turned off");
		klog(k, LOG_WARNING, "xlb verifier pre-validation turned off by configuration");
		return 0;
	}
	ret = xlb_verify_object(k->opts.obj_path, &k->verify_json, &verr);
	k->verify_result = ret;
	if (ret)
		snprintf(k->verify_msg, sizeof(k->verify_msg), "%s", verr.msg);
	else
		snprintf(k->verify_msg, sizeof(k->verify_msg), "every program of the object passed pre-validation");
	if (!ret) {
		klog(k, LOG_INFO, "xlb verifier accepted %s", k->opts.obj_path);
		return 0;
	}
	if (ret == -ENOTSUP) {
		klog(k, LOG_WARNING, "%s, attaching without pre-validation", verr.msg);
		return 0;
	}
	if (k->opts.verify == XLB_VERIFY_WARN) {
		klog(k, LOG_WARNING, "xlb verifier rejected %s: %s; attaching anyway (verify=warn)",
		     k->opts.obj_path, verr.msg);
		return 0;
	}
	return xlb_err_set(err, -EACCES, "xlb verifier rejected %s: %s (use --verify=warn to override)",
			   k->opts.obj_path, verr.msg);
}

static int open_object(struct kernel *k, struct xlb_err *err)
{
	const struct xlb_settings *set = k->opts.settings;
	char path[PATH_MAX];
	struct bpf_map *map;
	int ret;

	k->obj = bpf_object__open_file(k->opts.obj_path, NULL);
	if (libbpf_get_error(k->obj)) {
		ret = (int)libbpf_get_error(k->obj);
		k->obj = NULL;
		return xlb_err_set(err, ret, "cannot open %s: %s", k->opts.obj_path, strerror(-ret));
	}
	snprintf(path, sizeof(path), "%s/maps", k->pin_root);
	ret = mkdir_p(path);
	if (ret)
		return xlb_err_set(err, ret, "cannot create %s", path);
	bpf_object__for_each_map(map, k->obj) {
		const char *name = bpf_map__name(map);

		/* .rodata/.bss and private maps are not shared across restarts. */
		if (!name || !map_pinned(name))
			continue;
		snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, name);
		ret = bpf_map__set_pin_path(map, path);
		if (ret)
			return xlb_err_set(err, ret, "pin path for %s: %s", name, strerror(-ret));
		if (!strcmp(name, "xlb_conns") && set->lru_size)
			bpf_map__set_max_entries(map, set->lru_size);
	}
	/* The program is loaded (and its maps created or re-used) by libxdp's attach. */
	return 0;
}

static int load_object(struct kernel *k, struct xlb_err *err)
{
	int ret = run_verifier(k, err);

	return ret ?: open_object(k, err);
}

static int attach_iface(struct kernel *k, struct kiface *ifc, struct xlb_err *err)
{
	enum xdp_attach_mode modes[2] = { XDP_MODE_NATIVE, XDP_MODE_SKB };
	char path[PATH_MAX];
	int ret = -EINVAL;

	if (k->opts.xdp_mode == XLB_XDP_SINGLE)
		setenv("LIBXDP_SKIP_DISPATCHER", "1", 1);
	else
		unsetenv("LIBXDP_SKIP_DISPATCHER");

	for (int mi = k->opts.skb_mode ? 1 : 0; mi < 2; mi++) {
		for (int attempt = 0; attempt < 2; attempt++) {
			struct xdp_program *prog;

			/* A failed attempt leaves the object unusable: start from a fresh one. */
			if (!k->obj && (ret = open_object(k, err)))
				return ret;
			prog = xdp_program__from_bpf_obj(k->obj, "xdp");
			if (libxdp_get_error(prog)) {
				ret = (int)libxdp_get_error(prog);
				return xlb_err_set(err, ret, "libxdp cannot use %s: %s",
						   k->opts.obj_path, strerror(-ret));
			}
			ret = xdp_program__attach(prog, ifc->ifindex, modes[mi], 0);
			if (!ret) {
				ifc->prog = prog;
				break;
			}
			xdp_program__close(prog);
			bpf_object__close(k->obj);
			k->obj = NULL;
			/* Dispatcher refused: retry in single-program mode, unless only the dispatcher will do. */
			if (attempt == 0 && k->opts.xdp_mode == XLB_XDP_AUTO &&
			    !getenv("LIBXDP_SKIP_DISPATCHER")) {
				klog(k, LOG_WARNING,
				     "%s: libxdp attach failed (%s), retrying in single-program mode",
				     ifc->name, strerror(-ret));
				setenv("LIBXDP_SKIP_DISPATCHER", "1", 1);
				continue;
			}
			break;
		}
		if (ifc->prog)
			break;
		if (mi == 0 && !k->opts.skb_mode)
			klog(k, LOG_WARNING, "%s: native XDP attach failed (%s), falling back to generic XDP",
			     ifc->name, strerror(-ret));
	}
	if (k->opts.xdp_mode == XLB_XDP_AUTO)
		unsetenv("LIBXDP_SKIP_DISPATCHER");
	if (!ifc->prog)
		return xlb_err_set(err, ret, "cannot attach XDP to %s: %s", ifc->name, strerror(-ret));

	ifc->prog_id = xdp_program__id(ifc->prog);
	prog_attached(ifc->ifindex, ifc->prog_id, &ifc->dispatcher, &ifc->native);
	if (k->opts.xdp_mode == XLB_XDP_DISPATCHER && !ifc->dispatcher) {
		detach_ours(k, ifc);
		xdp_program__close(ifc->prog);
		ifc->prog_id = 0;
		ifc->prog = NULL;
		return xlb_err_set(err, -EOPNOTSUPP,
				   "%s: libxdp's dispatcher is not available on this kernel (xdp mode "
				   "'dispatcher' required); use 'auto' or 'single'",
				   ifc->name);
	}
	if (!ifc->native)
		klog(k, LOG_WARNING, "%s: running in generic (skb) XDP mode", ifc->name);
	snprintf(path, sizeof(path), "%s/prog_%s", k->pin_root, ifc->name);
	unlink(path);
	ret = bpf_obj_pin(xdp_program__fd(ifc->prog), path);
	if (ret)
		return xlb_err_set(err, -errno, "cannot pin program at %s: %s", path, strerror(errno));
	klog(k, LOG_INFO, "%s: attached program id %u (%s, %s)", ifc->name, ifc->prog_id,
	     ifc->native ? "native" : "generic", ifc->dispatcher ? "dispatcher" : "single-program");
	return 0;
}

static int kernel_open(struct xlb_backend *be, const struct xlb_backend_opts *opts,
		       struct xlb_err *err)
{
	const struct xlb_settings *set = opts->settings;
	struct kernel *k;
	bool all_adopted = true;
	int ret;

	k = calloc(1, sizeof(*k));
	if (!k)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	be->priv = k;
	k->opts = *opts;
	lib_log = opts->log;
	libbpf_set_print(libbpf_print_cb);
	libxdp_set_print(libxdp_print_cb);
	for (int m = 0; m < KM_CNT; m++)
		k->fd[m] = -1;
	k->verify_result = 1;
	snprintf(k->verify_msg, sizeof(k->verify_msg), "running program adopted, object not reloaded");
	if (strlen(opts->pin_root) >= sizeof(k->pin_root) || opts->pin_root[0] != '/')
		return xlb_err_set(err, -EINVAL, "pin root must be an absolute path under 256 bytes");
	snprintf(k->pin_root, sizeof(k->pin_root), "%s", opts->pin_root);
	be->max_vips = XLB_MAX_VIPS;
	be->max_reals = XLB_MAX_REALS;
	be->ring_size = XLB_RING_SIZE;
	k->ncpus = libbpf_num_possible_cpus();
	if (k->ncpus <= 0)
		return xlb_err_set(err, -EIO, "cannot count possible CPUs");
	k->keys = malloc(XLB_RING_SIZE * sizeof(*k->keys));
	if (!k->keys)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	if (!set->iface_cnt)
		return xlb_err_set(err, -EINVAL, "no interface configured");

	ret = ensure_bpffs(k, err);
	if (ret)
		return ret;
	/* libxdp keeps its own state on a bpffs too. */
	setenv("LIBXDP_BPFFS", k->pin_root, 0);

	for (size_t i = 0; i < set->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[k->iface_cnt++];
		char path[PATH_MAX];
		int pfd;

		snprintf(ifc->name, sizeof(ifc->name), "%s", set->ifaces[i]);
		ifc->ifindex = (int)if_nametoindex(ifc->name);
		if (!ifc->ifindex)
			return xlb_err_set(err, -ENODEV, "no interface %s", ifc->name);
		snprintf(path, sizeof(path), "%s/prog_%s", k->pin_root, ifc->name);
		pfd = bpf_obj_get(path);
		if (pfd >= 0) {
			uint32_t id = prog_id_of_fd(pfd);

			close(pfd);
			if (id && prog_attached(ifc->ifindex, id, &ifc->dispatcher, &ifc->native)) {
				ifc->adopted = true;
				ifc->prog_id = id;
				klog(k, LOG_INFO, "%s: adopted running program id %u", ifc->name, id);
				continue;
			}
			unlink(path);
		}
		all_adopted = false;
	}
	if (all_adopted) {
		ret = open_pinned_maps(k, err);
		if (!ret) {
			hc_setup(k);
			return 0;
		}
		klog(k, LOG_WARNING, "%s, reloading", err ? err->msg : "pinned maps missing");
		for (int m = 0; m < KM_CNT; m++)
			if (k->fd[m] >= 0) {
				close(k->fd[m]);
				k->fd[m] = -1;
			}
	}

	ret = load_object(k, err);
	if (ret)
		return ret;
	for (size_t i = 0; i < k->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[i];

		if (ifc->adopted)
			continue;
		if (any_xdp_attached(ifc->ifindex))
			return xlb_err_set(err, -EBUSY,
					   "%s already runs an XDP program that is not xlb's; remove it first",
					   ifc->name);
		ret = attach_iface(k, ifc, err);
		if (ret)
			return ret;
	}
	/* The object is loaded now; its maps are pinned (or were re-used from pins). */
	ret = open_pinned_maps(k, err);
	if (!ret)
		hc_setup(k);
	return ret;
}

/* The interface's first address of a family, for the probes' outer source. */
static bool iface_addr(const char *ifname, int family, struct xlb_ip *ret)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != family || strcmp(i->ifa_name, ifname))
			continue;
		memset(ret, 0, sizeof(*ret));
		ret->family = (uint8_t)family;
		if (family == AF_INET) {
			memcpy(ret->bytes, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			found = true;
		} else if (!IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr)) {
			memcpy(ret->bytes, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
			found = true;
		}
	}
	freeifaddrs(ifa);
	return found;
}

#define HC_TC_HANDLE 0x584c
#define HC_TC_PRIO 0xc7

/*
 * Attach healthcheck.bpf.o on every interface's tc egress (replacing a
 * previous xlbd's filter).  Optional: without it, probes marked "encap"
 * fall back to direct probes, with a warning.
 */
static void hc_setup(struct kernel *k)
{
	const struct xlb_settings *set = k->opts.settings;
	char path[PATH_MAX], dir[PATH_MAX];
	struct bpf_program *prog;
	struct xlb_hc_config cfg = { 0 };
	struct xlb_ip a;
	__u32 zero = 0;
	int ret, cfd;

	k->hc_reals_fd = -1;
	if (k->opts.hc_obj_path) {
		snprintf(path, sizeof(path), "%s", k->opts.hc_obj_path);
	} else {
		snprintf(dir, sizeof(dir), "%s", k->opts.obj_path);
		snprintf(path, sizeof(path), "%s/healthcheck.bpf.o", dirname(dir));
	}
	if (access(path, R_OK)) {
		snprintf(k->hc_msg, sizeof(k->hc_msg), "%.150s missing", path);
		return;
	}
	k->hc_obj = bpf_object__open_file(path, NULL);
	if (libbpf_get_error(k->hc_obj) || (ret = bpf_object__load(k->hc_obj))) {
		snprintf(k->hc_msg, sizeof(k->hc_msg), "cannot load %.150s", path);
		if (!libbpf_get_error(k->hc_obj))
			bpf_object__close(k->hc_obj);
		k->hc_obj = NULL;
		return;
	}
	prog = bpf_object__find_program_by_name(k->hc_obj, "xlb_healthcheck");
	k->hc_reals_fd = bpf_object__find_map_fd_by_name(k->hc_obj, "xlb_hc_reals");
	cfd = bpf_object__find_map_fd_by_name(k->hc_obj, "xlb_hc_config");
	memcpy(cfg.gw_mac, set->gw_mac, 6);
	cfg.gue_port = set->gue_port;
	if (k->iface_cnt && iface_addr(k->ifaces[0].name, AF_INET, &a))
		memcpy(&cfg.src4, a.bytes, 4);
	if (k->iface_cnt && iface_addr(k->ifaces[0].name, AF_INET6, &a))
		memcpy(cfg.src6.bytes, a.bytes, 16);
	if (!prog || k->hc_reals_fd < 0 || cfd < 0 || bpf_map_update_elem(cfd, &zero, &cfg, BPF_ANY)) {
		snprintf(k->hc_msg, sizeof(k->hc_msg), "%.150s lacks xlb_healthcheck or its maps", path);
		goto fail;
	}
	for (size_t i = 0; i < k->iface_cnt; i++) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = k->ifaces[i].ifindex,
			    .attach_point = BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = HC_TC_HANDLE, .priority = HC_TC_PRIO,
			    .prog_fd = bpf_program__fd(prog), .flags = BPF_TC_F_REPLACE);

		ret = bpf_tc_hook_create(&hook);
		if (ret && ret != -EEXIST) {
			snprintf(k->hc_msg, sizeof(k->hc_msg), "%s: clsact: %s", k->ifaces[i].name,
				 strerror(-ret));
			goto fail;
		}
		ret = bpf_tc_attach(&hook, &opts);
		if (ret) {
			snprintf(k->hc_msg, sizeof(k->hc_msg), "%s: tc egress attach: %s",
				 k->ifaces[i].name, strerror(-ret));
			goto fail;
		}
	}
	snprintf(k->hc_msg, sizeof(k->hc_msg), "attached on tc egress (%.150s)", path);
	klog(k, LOG_INFO, "health probes through the encapsulated path: %s", k->hc_msg);
	return;
fail:
	klog(k, LOG_WARNING, "encapsulated health probes unavailable: %s", k->hc_msg);
	bpf_object__close(k->hc_obj);
	k->hc_obj = NULL;
	k->hc_reals_fd = -1;
}

static void hc_teardown(struct kernel *k, bool keep)
{
	if (!keep) {
		for (size_t i = 0; i < k->iface_cnt; i++) {
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = k->ifaces[i].ifindex,
				    .attach_point = BPF_TC_EGRESS);
			LIBBPF_OPTS(bpf_tc_opts, opts, .handle = HC_TC_HANDLE, .priority = HC_TC_PRIO);

			bpf_tc_detach(&hook, &opts);
		}
	}
	if (k->hc_obj)
		bpf_object__close(k->hc_obj);
	k->hc_obj = NULL;
}

static int kernel_hc_real_put(struct xlb_backend *be, uint32_t mark, const struct xlb_ip *addr,
			      enum xlb_encap_kind encap, struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_hc_real r = { 0 };

	if (!k->hc_obj || k->hc_reals_fd < 0)
		return xlb_err_set(err, -EOPNOTSUPP, "healthcheck program not attached: %s", k->hc_msg);
	if (!addr) {
		if (bpf_map_delete_elem(k->hc_reals_fd, &mark) && errno != ENOENT)
			return map_err(err, "delete from xlb_hc_reals", errno);
		return 0;
	}
	to_dp_addr(addr, &r.addr, &r.family);
	r.encap = encap == XLB_ENC_GUE ? XLB_ENCAP_GUE : XLB_ENCAP_IP;
	if (bpf_map_update_elem(k->hc_reals_fd, &mark, &r, BPF_ANY))
		return map_err(err, "update xlb_hc_reals", errno);
	return 0;
}

static void kernel_close(struct xlb_backend *be, bool keep)
{
	struct kernel *k = be->priv;

	if (!k)
		return;
	hc_teardown(k, keep);
	for (size_t i = 0; i < k->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[i];

		if (!keep) {
			char path[PATH_MAX];

			if (ifc->prog_id)
				detach_ours(k, ifc);
			snprintf(path, sizeof(path), "%s/prog_%s", k->pin_root, ifc->name);
			unlink(path);
		}
		if (ifc->prog)
			xdp_program__close(ifc->prog);
	}
	if (!keep) {
		char path[PATH_MAX];

		for (int m = 0; m < KM_CNT; m++) {
			snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, kmap_names[m]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/maps", k->pin_root);
		rmdir(path);
	}
	for (int m = 0; m < KM_CNT; m++)
		if (k->fd[m] >= 0)
			close(k->fd[m]);
	/* Attached programs are held by the kernel; our references can go. */
	if (k->obj)
		bpf_object__close(k->obj);
	json_decref(k->verify_json);
	free(k->keys);
	free(k);
	be->priv = NULL;
}

static int map_err(struct xlb_err *err, const char *what, int e)
{
	return xlb_err_set(err, -e, "dataplane: %s: %s", what, strerror(e));
}

static int kernel_config_put(struct xlb_backend *be, const struct xlb_settings *set,
			     struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_config cfg = { 0 };
	__u32 zero = 0;
	__u8 fam;

	memcpy(cfg.gw_mac, set->gw_mac, 6);
	if (set->src4.family == AF_INET) {
		memcpy(&cfg.src4, set->src4.bytes, 4);
		cfg.src4_plen = set->src4_plen;
	}
	if (set->src6.family == AF_INET6) {
		to_dp_addr(&set->src6, &cfg.src6, &fam);
		cfg.src6_plen = set->src6_plen;
	}
	cfg.gue_port = set->gue_port;
	cfg.max_new_flows_per_sec = set->max_new_flows_per_sec;
	if (bpf_map_update_elem(k->fd[KM_CONFIG], &zero, &cfg, BPF_ANY))
		return map_err(err, "update xlb_config", errno);
	return 0;
}

static int kernel_real_put(struct xlb_backend *be, uint32_t id, const struct xlb_ip *addr,
			   struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_real r = { 0 };

	if (id == 0 || id >= XLB_MAX_REALS)
		return xlb_err_set(err, -ERANGE, "real id %u out of range", id);
	if (addr)
		to_dp_addr(addr, &r.addr, &r.family);
	if (bpf_map_update_elem(k->fd[KM_REALS], &id, &r, BPF_ANY))
		return map_err(err, "update xlb_reals", errno);
	return 0;
}

static void vip_key_of(const struct xlb_ip *addr, uint16_t port, uint8_t proto,
		       struct xlb_vip_key *key)
{
	memset(key, 0, sizeof(*key));
	to_dp_addr(addr, &key->addr, &key->family);
	key->port = htons(port);
	key->proto = proto;
}

static int write_half(struct kernel *k, uint32_t vip_id, unsigned int half, const uint32_t *ring,
		      struct xlb_err *err)
{
	uint32_t base = (vip_id * XLB_RING_HALVES + half) * XLB_RING_SIZE;
	uint64_t since = now_ns() - k->retired_ns[vip_id];
	__u32 count = XLB_RING_SIZE;
	LIBBPF_OPTS(bpf_map_batch_opts, bopts);

	if (k->retired_ns[vip_id] && since < XLB_RING_GRACE_NS) {
		uint64_t wait = XLB_RING_GRACE_NS - since;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)wait };

		nanosleep(&ts, NULL);
	}
	for (uint32_t i = 0; i < XLB_RING_SIZE; i++)
		k->keys[i] = base + i;
	if (!bpf_map_update_batch(k->fd[KM_RINGS], k->keys, ring, &count, &bopts))
		return 0;
	if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
		return map_err(err, "batch update xlb_rings", errno);
	for (uint32_t i = 0; i < XLB_RING_SIZE; i++)
		if (bpf_map_update_elem(k->fd[KM_RINGS], &k->keys[i], &ring[i], BPF_ANY))
			return map_err(err, "update xlb_rings", errno);
	return 0;
}

static int kernel_vip_put(struct xlb_backend *be, const struct xlb_vip_cfg *vip,
			  const uint32_t *ring, struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_vip_key key;
	struct xlb_vip_meta meta = { 0 }, old;
	struct xlb_addr_key akey = { 0 };
	bool exists;
	int ret;

	if (vip->id >= XLB_MAX_VIPS)
		return xlb_err_set(err, -ERANGE, "VIP id %u out of range", vip->id);
	vip_key_of(&vip->addr, vip->port, vip->proto, &key);
	exists = !bpf_map_lookup_elem(k->fd[KM_VIPS], &key, &old);
	meta.vip_num = vip->id;
	meta.flags = vip->flags; /* the XLB_VIPF_* bits equal XLB_VIP_F_* */
	meta.encap = vip->encap == XLB_ENC_GUE ? XLB_ENCAP_GUE : XLB_ENCAP_IP;
	meta.ring_half = exists && old.vip_num == vip->id ? old.ring_half : 0;
	if (ring) {
		unsigned int half = exists && old.vip_num == vip->id ? !old.ring_half : 0;

		ret = write_half(k, vip->id, half, ring, err);
		if (ret)
			return ret;
		meta.ring_half = (__u8)half;
	}
	if (bpf_map_update_elem(k->fd[KM_VIPS], &key, &meta, BPF_ANY))
		return map_err(err, "update xlb_vips", errno);
	if (ring && exists)
		k->retired_ns[vip->id] = now_ns();
	k->ring_half[vip->id] = meta.ring_half;
	k->vip_present[vip->id] = true;
	to_dp_addr(&vip->addr, &akey.addr, &akey.family);
	if (bpf_map_update_elem(k->fd[KM_VIP_ADDRS], &akey, &meta.vip_num, BPF_ANY))
		return map_err(err, "update xlb_vip_addrs", errno);
	return 0;
}

_Static_assert((unsigned)XLB_VIPF_NO_SPORT == (unsigned)XLB_VIP_F_NO_SPORT &&
		       (unsigned)XLB_VIPF_DPORT_ONLY == (unsigned)XLB_VIP_F_DPORT_ONLY &&
		       (unsigned)XLB_VIPF_NO_LRU == (unsigned)XLB_VIP_F_NO_LRU &&
		       (unsigned)XLB_VIPF_LOCAL == (unsigned)XLB_VIP_F_LOCAL &&
		       (unsigned)XLB_VIPF_QUIC == (unsigned)XLB_VIP_F_QUIC,
	       "control's VIP flag bits must equal the dataplane's");

static int kernel_vip_list(struct xlb_backend *be, struct xlb_dp_vip *ret, size_t max)
{
	struct kernel *k = be->priv;
	struct xlb_vip_key key, next;
	struct xlb_vip_meta meta;
	size_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(k->fd[KM_VIPS], prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(k->fd[KM_VIPS], &key, &meta))
			continue;
		if (n < max) {
			from_dp_addr(&key.addr, key.family, &ret[n].addr);
			ret[n].port = ntohs(key.port);
			ret[n].proto = key.proto;
			ret[n].id = meta.vip_num;
		}
		n++;
	}
	return (int)n;
}

static int kernel_vip_del(struct xlb_backend *be, const struct xlb_ip *addr, uint16_t port,
			  uint8_t proto, uint32_t id, struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_vip_key key;
	struct xlb_addr_key akey = { 0 };
	struct xlb_dp_vip others[XLB_MAX_VIPS];
	bool addr_used = false;
	int n;

	vip_key_of(addr, port, proto, &key);
	if (bpf_map_delete_elem(k->fd[KM_VIPS], &key) && errno != ENOENT)
		return map_err(err, "delete from xlb_vips", errno);
	if (id < XLB_MAX_VIPS) {
		k->vip_present[id] = false;
		k->retired_ns[id] = now_ns();
	}
	/* The address leaves xlb_vip_addrs with its last VIP. */
	n = kernel_vip_list(be, others, XLB_MAX_VIPS);
	for (int i = 0; i < n && i < XLB_MAX_VIPS; i++)
		if (xlb_addr_eq(&others[i].addr, addr))
			addr_used = true;
	if (!addr_used) {
		to_dp_addr(addr, &akey.addr, &akey.family);
		if (bpf_map_delete_elem(k->fd[KM_VIP_ADDRS], &akey) && errno != ENOENT)
			return map_err(err, "delete from xlb_vip_addrs", errno);
	}
	return 0;
}

static int percpu_sum(struct kernel *k, int fd, uint32_t idx, struct xlb_counters *ret)
{
	struct xlb_counter vals[k->ncpus];

	memset(ret, 0, sizeof(*ret));
	if (bpf_map_lookup_elem(fd, &idx, vals))
		return -errno;
	for (int c = 0; c < k->ncpus; c++) {
		ret->packets += vals[c].packets;
		ret->bytes += vals[c].bytes;
	}
	return 0;
}

/* VIP and real stats carry new_flows too (struct xlb_lb_counter). */
static int percpu_sum_lb(struct kernel *k, int fd, uint32_t idx, struct xlb_counters *ret)
{
	struct xlb_lb_counter vals[k->ncpus];

	memset(ret, 0, sizeof(*ret));
	if (bpf_map_lookup_elem(fd, &idx, vals))
		return -errno;
	for (int c = 0; c < k->ncpus; c++) {
		ret->packets += vals[c].packets;
		ret->bytes += vals[c].bytes;
		ret->new_flows += vals[c].new_flows;
	}
	return 0;
}

static int kernel_vip_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret)
{
	struct kernel *k = be->priv;

	return percpu_sum_lb(k, k->fd[KM_VIP_STATS], id, ret);
}

static int kernel_real_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret)
{
	struct kernel *k = be->priv;

	return percpu_sum_lb(k, k->fd[KM_REAL_STATS], id, ret);
}

static int kernel_stats(struct xlb_backend *be, struct xlb_dp_stats *ret)
{
	struct kernel *k = be->priv;

	memset(ret, 0, sizeof(*ret));
	for (uint32_t r = 1; r < XLB_REASON_MAX && r < XLB_STATS_MAX_REASONS; r++) {
		percpu_sum(k, k->fd[KM_REASON_STATS], r, &ret->reason[r]);
		ret->reason_name[r] = xlb_reason_name(r);
		ret->reason_cnt = r + 1;
	}
	for (uint32_t e = 0; e < XLB_EVENT_MAX && e < XLB_STATS_MAX_EVENTS; e++) {
		percpu_sum(k, k->fd[KM_EVENT_STATS], e, &ret->event[e]);
		ret->event_name[e] = xlb_event_name(e);
		ret->event_cnt = e + 1;
	}
	ret->lru_hits = ret->event[XLB_EV_LRU_HIT].packets;
	ret->lru_misses = ret->event[XLB_EV_LRU_MISS].packets;
	ret->new_flows = ret->event[XLB_EV_NEW_FLOW].packets;
	return 0;
}

static json_t *kernel_status(struct xlb_backend *be)
{
	struct kernel *k = be->priv;
	json_t *ifaces = json_array(), *j;

	for (size_t i = 0; i < k->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[i];
		bool disp = false, native = false, running;

		running = prog_attached(ifc->ifindex, ifc->prog_id, &disp, &native);
		json_array_append_new(ifaces,
				      json_pack("{s:s, s:i, s:I, s:b, s:s, s:s, s:b}", "name", ifc->name,
						"ifindex", ifc->ifindex, "prog_id", (json_int_t)ifc->prog_id,
						"attached", running, "mode",
						native ? "native" : "generic", "libxdp",
						disp ? "dispatcher" : "single-program", "adopted",
						ifc->adopted));
	}
	j = json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:s}}", "backend", "kernel", "object",
		      k->opts.obj_path, "pin_root", k->pin_root, "interfaces", ifaces, "verifier",
		      "result",
		      k->verify_result == 0	       ? "accepted" :
		      k->verify_result == -ENOTSUP ? "unavailable" :
		      k->verify_result == 1	       ? "not run" :
						       "rejected",
		      "message", k->verify_msg);
	if (k->verify_json)
		json_object_set(json_object_get(j, "verifier"), "programs", k->verify_json);
	json_object_set_new(j, "healthcheck_program",
			    json_pack("{s:b, s:s}", "attached", k->hc_obj != NULL, "message", k->hc_msg));
	return j;
}

const struct xlb_backend_ops xlb_backend_kernel_ops = {
	.name = "kernel",
	.open = kernel_open,
	.close = kernel_close,
	.config_put = kernel_config_put,
	.real_put = kernel_real_put,
	.vip_put = kernel_vip_put,
	.vip_del = kernel_vip_del,
	.vip_list = kernel_vip_list,
	.vip_counters = kernel_vip_counters,
	.real_counters = kernel_real_counters,
	.stats = kernel_stats,
	.status = kernel_status,
	.hc_real_put = kernel_hc_real_put,
};
