// SPDX-License-Identifier: MIT
/*
 * The kernel backend, attach and pin.
 *
 * Hitless restart.  Maps are pinned under <pin root>/maps/<name> and each
 * interface's program under <pin root>/prog_<ifname>.  At start, an
 * interface that still runs xlb's program is adopted: the object is loaded
 * over the pinned maps and, if it is the same build (same tag), dropped and
 * nothing packets see is touched; if it is another build, it replaces the
 * running program in one step (kernel_upgrade.c: the hitless upgrade).
 * Established flows keep their reals and the LRU stays; the daemon then
 * reconciles the maps with its store.  With nothing to adopt the object is
 * loaded (libbpf reuses pinned maps that match), pre-validated by xlb's
 * verifier, and attached: natively, else generic XDP with a warning;
 * through libxdp's dispatcher, else in libxdp's single-program mode.
 */
#include <errno.h>
#include <limits.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel.h"

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
			if (!k->obj && (ret = kernel_open_object(k, err)))
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
	kernel_prog_tag(xdp_program__fd(ifc->prog), ifc->tag);
	memcpy(k->obj_tag, ifc->tag, sizeof(k->obj_tag));
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

/* Unpin every map (the programs still running keep theirs until replaced). */
static void unpin_maps(struct kernel *k)
{
	char path[PATH_MAX];

	for (int m = 0; m < KM_CNT; m++) {
		snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, kernel_map_names[m]);
		unlink(path);
	}
}

/*
 * --resize-dataplane: detach the programs of the interfaces found running
 * ours and drop the pins, so the object loads with new maps.  Until the
 * new program is attached and filled, packets meet no XDP program (they
 * go to the host stack): a short interruption the operator asked for.
 */
static void replace_dataplane(struct kernel *k)
{
	char path[PATH_MAX];
	int n = 0;

	for (size_t i = 0; i < k->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[i];

		if (!ifc->adopted)
			continue;
		detach_ours(k, ifc);
		snprintf(path, sizeof(path), "%s/prog_%s", k->pin_root, ifc->name);
		unlink(path);
		ifc->adopted = false;
		ifc->prog_id = 0;
		n++;
	}
	unpin_maps(k);
	klog(k, LOG_NOTICE, "--resize-dataplane: %d interface(s) detached, maps unpinned", n);
}

/*
 * Adopt or attach.  An interface that runs the program pinned for it, or
 * xlb's own program without a pin (kernel_is_ours), is adopted; then this
 * build is loaded with the pinned maps and replaces the running program in
 * one step where it is another build (kernel_upgrade.c), and the interfaces
 * that run nothing get the program too.  With nothing adopted, the object
 * is loaded (libbpf re-uses the pinned maps that match, so the connection
 * table survives a reload too) and attached through libxdp.
 */
int kernel_attach(struct kernel *k, struct xlb_err *err)
{
	const struct xlb_settings *set = k->opts.settings;
	bool any_adopted = false, resize = false;
	__u32 id;
	int ret;

	ret = kernel_bpffs_check(k, err) ?: kernel_mkdir_p(k->pin_root);
	if (ret)
		return err && err->code ? ret : xlb_err_set(err, ret, "cannot create pin root %s: %s",
							   k->pin_root, strerror(-ret));
	/* One daemon per pin root: taken before anything under it is read or changed. */
	ret = xlb_lock_dir(k->pin_root, "pin root", &k->lock_fd, err);
	if (ret)
		return ret;
	/* libxdp keeps its own state on a bpffs too. */
	setenv("LIBXDP_BPFFS", k->pin_root, 0);
	/* Pins of other sizes: refused before anything is touched, or replaced (--resize-dataplane). */
	if (!k->opts.any_size && (ret = kernel_sizes_check(k, &resize, err)))
		return ret;

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
			id = kernel_prog_id_of_fd(pfd);

			close(pfd);
			if (id && kernel_prog_attached(ifc->ifindex, id, &ifc->dispatcher, &ifc->native)) {
				ifc->adopted = true;
				ifc->prog_id = id;
				klog(k, LOG_INFO, "%s: adopted running program id %u", ifc->name, id);
				any_adopted = true;
				continue;
			}
			unlink(path);
		}
		/* No pin, but xlb's own program runs there: take it back, do not fight it. */
		if (!bpf_xdp_query_id(ifc->ifindex, 0, &id) && id && kernel_is_ours(id) &&
		    kernel_prog_attached(ifc->ifindex, id, &ifc->dispatcher, &ifc->native)) {
			ifc->adopted = true;
			ifc->prog_id = id;
			klog(k, LOG_NOTICE, "%s: runs xlb's program %u without its pin: re-adopting it",
			     ifc->name, id);
			ret = kernel_repin_maps(k, id, err);
			if (ret)
				return ret;
			any_adopted = true;
		}
	}
	if (resize) {
		replace_dataplane(k);
		any_adopted = false;
	}
	if (any_adopted && k->opts.no_upgrade)
		return open_pinned_maps(k, err);
	/* Load this build; it replaces the running program where it differs. */
	if (any_adopted)
		return kernel_upgrade(k, err) ?: open_pinned_maps(k, err);

	ret = kernel_load_object(k, err);
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

		unpin_maps(k);
		snprintf(path, sizeof(path), "%s/maps", k->pin_root);
		rmdir(path);
	}
}
