// SPDX-License-Identifier: MIT
/*
 * The kernel backend, attach and pin.
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
 */
#include <errno.h>
#include <limits.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "kernel.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

const char *const kernel_map_names[KM_CNT] = {
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
	[KM_IFACES] = "xlb_ifaces",
	[KM_VIP_FILTER] = "xlb_vip_filter",
	[KM_SERVER_IDS] = "xlb_server_ids",
	[KM_ALLOW] = "xlb_allow",
	[KM_AFFINITY] = "xlb_affinity",
	[KM_FRAGS] = "xlb_frags",
};

/*
 * Maps that are not pinned: the devmap (the kernel reports it with
 * BPF_F_RDONLY_PROG added, so libbpf refuses to re-use a pinned one) and the
 * BPF-private flood window.  Both are rebuilt with each load.
 */
static bool map_pinned(const char *name)
{
	/* (internal maps are "<object>.rodata" and the like: never pinned) */
	return strncmp(name, "xlb_", 4) == 0 && !strchr(name, '.') && strcmp(name, "xlb_tx_ports") &&
	       strcmp(name, "xlb_flood");
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

bool kernel_prog_attached(int ifindex, uint32_t prog_id, bool *ret_dispatcher, bool *ret_native)
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
	if (!kernel_prog_attached(ifc->ifindex, ifc->prog_id, &disp, &native))
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
		snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, kernel_map_names[m]);
		k->fd[m] = bpf_obj_get(path);
		if (k->fd[m] < 0)
			return xlb_err_set(err, -errno, "cannot open pinned map %s: %s", path,
					   strerror(errno));
	}
	return 0;
}

int kernel_gate(struct kernel *k, const char *path, struct kernel_image *img,
		json_t **ret_json, char *msg, size_t msglen, struct xlb_err *err)
{
	struct xlb_err verr = { 0 };
	int ret;

	if (!img->buf) {
		ret = xlb_object_read(path, &img->buf, &img->len, err);
		if (ret) {
			snprintf(msg, msglen, "%s", err->msg);
			return ret;
		}
	}
	img->verify_result = 1;
	if (k->opts.verify == XLB_VERIFY_OFF) {
		snprintf(msg, msglen, "pre-validation turned off");
		klog(k, LOG_WARNING, "%s: xlb verifier pre-validation turned off by configuration", path);
		return 0;
	}
	ret = xlb_verify_object_mem(img->buf, img->len, path, ret_json, &verr);
	img->verify_result = ret;
	if (!ret) {
		snprintf(msg, msglen, "every program of the object passed pre-validation");
		klog(k, LOG_INFO, "xlb verifier accepted %s", path);
		return 0;
	}
	snprintf(msg, msglen, "%s", verr.msg);
	if (ret == -ENOTSUP) {
		klog(k, LOG_WARNING, "%s, loading %s without pre-validation", verr.msg, path);
		return 0;
	}
	if (k->opts.verify == XLB_VERIFY_WARN) {
		klog(k, LOG_WARNING, "xlb verifier rejected %s: %s; loading anyway (verify=warn)", path,
		     verr.msg);
		return 0;
	}
	return xlb_err_set(err, -EACCES, "xlb verifier rejected %s: %s (use --verify=warn to override)",
			   path, verr.msg);
}

static int open_object(struct kernel *k, struct xlb_err *err)
{
	const struct xlb_settings *set = k->opts.settings;
	char path[PATH_MAX];
	struct bpf_map *map;
	int ret;

	/* Exactly the bytes the verifier passed (kernel_gate), not the file again. */
	LIBBPF_OPTS(bpf_object_open_opts, oopts, .object_name = "balancer");

	k->obj = bpf_object__open_mem(k->img.buf, k->img.len, &oopts);
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
	int ret = kernel_gate(k, k->opts.obj_path, &k->img, &k->verify_json, k->verify_msg,
			      sizeof(k->verify_msg), err);

	k->verify_result = k->img.verify_result;
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
	kernel_prog_attached(ifc->ifindex, ifc->prog_id, &ifc->dispatcher, &ifc->native);
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

static bool balancing_iface(const struct xlb_settings *set, const char *name)
{
	for (size_t i = 0; i < set->iface_cnt; i++)
		if (!strcmp(set->ifaces[i], name))
			return true;
	return false;
}

/*
 * Adopt or attach.  If every configured interface still runs the program
 * pinned for it, adopt: open the pinned maps, touch nothing packets see.
 * Otherwise load the object (libbpf re-uses the pinned maps that match, so
 * the connection table survives a reload too) and attach where needed.
 */
int kernel_attach(struct kernel *k, struct xlb_err *err)
{
	const struct xlb_settings *set = k->opts.settings;
	bool all_adopted = true;
	int ret;

	ret = ensure_bpffs(k, err);
	if (ret)
		return ret;
	/* One daemon per pin root: taken before anything under it is read or changed. */
	ret = xlb_lock_dir(k->pin_root, "pin root", &k->lock_fd, err);
	if (ret)
		return ret;
	/* libxdp keeps its own state on a bpffs too. */
	setenv("LIBXDP_BPFFS", k->pin_root, 0);

	for (size_t i = 0; i < set->iface_cnt + set->egress_cnt; i++) {
		const char *name = i < set->iface_cnt ? set->ifaces[i] : set->egress[i - set->iface_cnt].egress;
		struct kiface *ifc;
		char path[PATH_MAX];
		int pfd;
		bool dup = false;

		/* Redirect targets get the balancer too (it passes what is not a VIP's). */
		for (size_t j = 0; j < k->iface_cnt; j++)
			dup = dup || !strcmp(k->ifaces[j].name, name);
		if (dup)
			continue;
		if (i >= set->iface_cnt && !balancing_iface(set, set->egress[i - set->iface_cnt].name))
			return xlb_err_set(err, -EINVAL, "--egress %s=%s: %s is not an --interface",
					   set->egress[i - set->iface_cnt].name, name,
					   set->egress[i - set->iface_cnt].name);
		ifc = &k->ifaces[k->iface_cnt++];
		ifc->egress_only = i >= set->iface_cnt;
		snprintf(ifc->name, sizeof(ifc->name), "%s", name);
		ifc->ifindex = (int)if_nametoindex(ifc->name);
		if (!ifc->ifindex)
			return xlb_err_set(err, -ENODEV, "no interface %s", ifc->name);
		snprintf(path, sizeof(path), "%s/prog_%s", k->pin_root, ifc->name);
		pfd = bpf_obj_get(path);
		if (pfd >= 0) {
			uint32_t id = prog_id_of_fd(pfd);

			close(pfd);
			if (id && kernel_prog_attached(ifc->ifindex, id, &ifc->dispatcher, &ifc->native)) {
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
		if (!ret)
			return 0;
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
	return open_pinned_maps(k, err);
}

void kernel_detach(struct kernel *k, bool keep)
{
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
			snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, kernel_map_names[m]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/maps", k->pin_root);
		rmdir(path);
	}
}
