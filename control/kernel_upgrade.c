// SPDX-License-Identifier: MIT
/*
 * The kernel backend, the program's lifetime across xlbd versions:
 * where pins may live, recognising xlb's own program on an interface,
 * hitless upgrade, map layout changes.
 *
 * Pins live on the host's bpffs, never on a private one: a bpffs mounted
 * by xlbd in a private mount namespace (`ip netns exec`, a unit with
 * PrivateMounts) dies with it, and the next start finds an XDP program it
 * cannot tie to any pin.  So: the pin root's filesystem is a bpffs, or the
 * pin root is under /sys/fs/bpf, nothing is mounted there and xlbd runs in
 * the host's mount namespace (it mounts the bpffs, as systemd would), or
 * xlbd refuses to start and says why.
 *
 * Recognising our program: an XDP program named xlb_balancer whose maps
 * include xlb_vips and xlb_conns is xlb's (a pin lost is not a reason to
 * fight our own program).  Its maps are pinned again from their ids, so
 * the connection table is kept.
 *
 * Upgrade.  At every start the object is loaded (through the verifier
 * gate) with the pinned maps re-used.  If its program's tag (the kernel's
 * hash of the instructions) equals the running program's, the running
 * program stays.  Otherwise the new program replaces the old on every
 * interface in one atomic step (bpf_xdp_attach with XDP_FLAGS_REPLACE and
 * the old program's fd): no packet meets no program, and both share the
 * maps, so established flows keep their reals.
 *
 * Map layout changes.  A pinned map whose type, key size, value size,
 * max_entries or flags differ from the object's is migrated when its
 * entries can be carried over (same key size, a value that grows or stays,
 * hash-like to hash-like or array to array; per-CPU values collapse to the
 * first CPU that holds one, shared ones are replicated; a value that grows
 * is zero-extended, which is how xlb's structs grow): the old pin is
 * removed, the new object creates and pins the new map, the entries are
 * copied, then the new program takes over.  Packets that change the old map
 * between the copy and the switch are lost to the new one (a few ms).  Any
 * other change is refused before anything is touched: xlbd exits with the
 * map and the difference named, and the running program keeps serving.
 */
#include <errno.h>
#include <limits.h>
#include <linux/if_link.h>
#include <sched.h>
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

/* ---- where pins may live ------------------------------------------------- */

static bool same_mount_ns_as_init(void)
{
	struct stat a, b;

	return !stat("/proc/self/ns/mnt", &a) && !stat("/proc/1/ns/mnt", &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int kernel_bpffs_check(struct kernel *k, struct xlb_err *err)
{
	char dir[PATH_MAX], *slash;
	struct statfs sfs;

	/* The nearest existing directory of the pin root tells the filesystem. */
	snprintf(dir, sizeof(dir), "%s", k->pin_root);
	while (statfs(dir, &sfs) && (slash = strrchr(dir, '/')) && slash != dir)
		*slash = 0;
	if (statfs(dir, &sfs))
		return xlb_err_set(err, -errno, "statfs %s: %s", dir, strerror(errno));
	if (sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (strncmp(k->pin_root, "/sys/fs/bpf/", 12))
		return xlb_err_set(err, -ENOTSUP,
				   "pin root %s is not on a bpffs: pins there cannot outlive xlbd; "
				   "use a directory under /sys/fs/bpf, or mount a bpffs on it in the "
				   "host's mount namespace (mount -t bpf bpf DIR)",
				   k->pin_root);
	if (!same_mount_ns_as_init())
		return xlb_err_set(err, -ENOTSUP,
				   "/sys/fs/bpf is not a bpffs in this private mount namespace (ip netns "
				   "exec?): a bpffs mounted here would die with it, and so would the "
				   "pins; mount one in the host's namespace, or give --pin-root on one");
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
		return xlb_err_set(err, -errno, "/sys/fs/bpf is not a bpffs and mounting one failed: %s",
				   strerror(errno));
	klog(k, LOG_NOTICE, "mounted the host's bpffs on /sys/fs/bpf");
	return 0;
}

/* ---- recognising our program -------------------------------------------- */

static int prog_info(int fd, struct bpf_prog_info *info, __u32 *ids, __u32 nids)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	info->nr_map_ids = nids;
	info->map_ids = (__u64)(unsigned long)ids;
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

int kernel_prog_map_fd(uint32_t prog_id, const char *name)
{
	struct bpf_prog_info info;
	__u32 ids[64];
	int pfd = bpf_prog_get_fd_by_id(prog_id), fd = -ENOENT;

	if (pfd < 0)
		return -errno;
	if (!prog_info(pfd, &info, ids, 64))
		for (__u32 i = 0; i < info.nr_map_ids && i < 64 && fd < 0; i++) {
			struct bpf_map_info mi = { 0 };
			__u32 len = sizeof(mi);
			int mfd = bpf_map_get_fd_by_id(ids[i]);

			if (mfd >= 0 && !bpf_obj_get_info_by_fd(mfd, &mi, &len) && !strcmp(mi.name, name))
				fd = mfd;
			else if (mfd >= 0)
				close(mfd);
		}
	close(pfd);
	return fd;
}

bool kernel_is_ours(uint32_t prog_id)
{
	struct bpf_prog_info info;
	__u32 ids[64];
	int pfd = bpf_prog_get_fd_by_id(prog_id), fd;
	bool named;

	if (pfd < 0)
		return false;
	named = !prog_info(pfd, &info, ids, 64) && info.type == BPF_PROG_TYPE_XDP &&
		!strcmp(info.name, "xlb_balancer");
	close(pfd);
	if (!named)
		return false;
	for (int m = 0; m < 2; m++) {
		fd = kernel_prog_map_fd(prog_id, m ? "xlb_conns" : "xlb_vips");
		if (fd < 0)
			return false;
		close(fd);
	}
	return true;
}

/* Pin the running program's maps again (their pins were lost). */
int kernel_repin_maps(struct kernel *k, uint32_t prog_id, struct xlb_err *err)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/maps", k->pin_root);
	mkdir(path, 0700);
	for (int m = 0; m < KM_CNT; m++) {
		snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, kernel_map_names[m]);
		if (!access(path, F_OK))
			continue;
		fd = kernel_prog_map_fd(prog_id, kernel_map_names[m]);
		if (fd < 0)
			continue; /* a map this build has and the running one lacks: a layout change */
		if (bpf_obj_pin(fd, path)) {
			int e = -errno;

			close(fd);
			return xlb_err_set(err, e, "cannot pin %s again: %s", path, strerror(-e));
		}
		close(fd);
	}
	klog(k, LOG_NOTICE, "pins of the running program %u were lost: its maps are pinned again",
	     prog_id);
	return 0;
}

/* ---- map layouts ------------------------------------------------------- */

/*
 * Every pinned map the object re-uses must have the object's layout: else
 * libbpf would refuse it halfway through the load, or (for a map whose pin
 * is gone) create a new one the running program does not share.  Refused
 * before anything is touched, with the map and the difference named.
 * Sizes (max_entries) were checked already by kernel_sizes_check.
 */
static int layout_check(struct kernel *k, struct xlb_err *err)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, k->obj) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		int fd, ret;

		if (!bpf_map__pin_path(m))
			continue;
		fd = bpf_obj_get(bpf_map__pin_path(m));
		if (fd < 0)
			continue; /* new in this build: created */
		ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
		close(fd);
		if (ret)
			return xlb_err_set(err, ret, "map %s: %s", bpf_map__name(m), strerror(-ret));
		if (info.type == bpf_map__type(m) && info.key_size == bpf_map__key_size(m) &&
		    info.value_size == bpf_map__value_size(m) &&
		    info.max_entries == bpf_map__max_entries(m) &&
		    info.map_flags == bpf_map__map_flags(m))
			continue;
		return xlb_err_set(err, -EPROTO,
				   "map %s changed its layout in %s (pinned: type %u key %u value %u "
				   "entries %u flags 0x%x; object: %u/%u/%u/%u/0x%x): refusing to "
				   "replace the running program, which keeps serving. Run the build "
				   "that matches the pinned maps, or 'xlbd --cleanup' first "
				   "(established connections are lost)",
				   bpf_map__name(m), k->opts.obj_path, info.type, info.key_size,
				   info.value_size, info.max_entries, info.map_flags, bpf_map__type(m),
				   bpf_map__key_size(m), bpf_map__value_size(m), bpf_map__max_entries(m),
				   bpf_map__map_flags(m));
	}
	return 0;
}

/*
 * The devmap is not pinned (see kernel_map_pinned): the new program's is
 * empty.  Carry the running one's slots over before the switch, so that
 * redirected packets find their egress from the first packet on.
 */
static int carry_devmap(struct kernel *k, uint32_t old_prog_id, struct xlb_err *err)
{
	struct bpf_map *m = bpf_object__find_map_by_name(k->obj, "xlb_tx_ports");
	int ofd = kernel_prog_map_fd(old_prog_id, "xlb_tx_ports"), ret = 0;
	__u32 n = 0;

	if (!m || ofd < 0)
		return 0; /* one of the two builds has no redirect: nothing to carry */
	for (__u32 slot = 0; slot < bpf_map__max_entries(m) && !ret; slot++) {
		__u32 ifindex;

		if (bpf_map_lookup_elem(ofd, &slot, &ifindex))
			continue;
		if (bpf_map_update_elem(bpf_map__fd(m), &slot, &ifindex, BPF_ANY))
			ret = xlb_err_set(err, -errno, "xlb_tx_ports[%u]: %s", slot, strerror(errno));
		n++;
	}
	close(ofd);
	if (!ret && n)
		klog(k, LOG_INFO, "%u redirect port(s) carried to the new program", n);
	return ret;
}

/* ---- upgrade --------------------------------------------------------------- */

int kernel_prog_tag(int fd, __u8 tag[8])
{
	struct bpf_prog_info info;
	int ret = prog_info(fd, &info, NULL, 0);

	if (!ret)
		memcpy(tag, info.tag, 8);
	return ret;
}

void kernel_tag_str(const __u8 tag[8], char buf[17])
{
	for (int i = 0; i < 8; i++)
		snprintf(buf + 2 * i, 3, "%02x", tag[i]);
}

static void pin_prog(struct kernel *k, struct kiface *ifc, int fd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/prog_%s", k->pin_root, ifc->name);
	unlink(path);
	if (bpf_obj_pin(fd, path))
		klog(k, LOG_WARNING, "cannot pin %s: %s", path, strerror(errno));
}

/* Attach fd where nothing runs yet (an interface added to an adopted dataplane). */
static int attach_new(struct kernel *k, struct kiface *ifc, int fd, struct xlb_err *err)
{
	int ret = -EINVAL;

	for (int native = !k->opts.skb_mode; native >= 0; native--) {
		ret = bpf_xdp_attach(ifc->ifindex, fd, native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE,
				     NULL) ? -errno : 0;
		if (!ret) {
			ifc->native = native;
			break;
		}
	}
	if (ret)
		return xlb_err_set(err, ret, "cannot attach XDP to %s: %s", ifc->name, strerror(-ret));
	ifc->prog_id = kernel_prog_id_of_fd(fd);
	kernel_prog_tag(fd, ifc->tag);
	pin_prog(k, ifc, fd);
	klog(k, LOG_INFO, "%s: attached program id %u (%s)", ifc->name, ifc->prog_id,
	     ifc->native ? "native" : "generic");
	return 0;
}

/*
 * Everything that could refuse, before anything changes: each adopted
 * interface's running program and tag, whether it must be replaced (and
 * can be: not under libxdp's dispatcher), nothing foreign where we attach.
 * Returns how many interfaces run another build, or -errno.
 */
static int upgrade_plan(struct kernel *k, struct xlb_err *err)
{
	char told[17], tnew[17];
	int differ = 0;

	kernel_tag_str(k->obj_tag, tnew);
	for (size_t i = 0; i < k->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[i];
		int fd, ret;
		__u32 id = 0;

		if (!ifc->adopted) {
			if (!bpf_xdp_query_id(ifc->ifindex, 0, &id) && id)
				return xlb_err_set(err, -EBUSY,
						   "%s already runs an XDP program that is not xlb's; "
						   "remove it first", ifc->name);
			continue;
		}
		fd = bpf_prog_get_fd_by_id(ifc->prog_id);
		ret = fd < 0 ? -errno : kernel_prog_tag(fd, ifc->tag);
		if (fd >= 0)
			close(fd);
		if (ret)
			return xlb_err_set(err, -ESRCH, "%s: the running program %u vanished", ifc->name,
					   ifc->prog_id);
		if (!memcmp(ifc->tag, k->obj_tag, 8))
			continue;
		kernel_tag_str(ifc->tag, told);
		if (ifc->dispatcher)
			return xlb_err_set(err, -EOPNOTSUPP,
					   "%s: the running program (tag %s) differs from %s (tag %s), and "
					   "under libxdp's dispatcher it cannot be replaced in one step; "
					   "the running program keeps serving (use --xdp-mode single)",
					   ifc->name, told, k->opts.obj_path, tnew);
		differ++;
	}
	return differ;
}

/* Replace the running program with nfd on every adopted interface that runs another build. */
static int upgrade_switch(struct kernel *k, int nfd, struct xlb_err *err)
{
	char told[17], tnew[17];

	kernel_tag_str(k->obj_tag, tnew);
	for (size_t i = 0; i < k->iface_cnt; i++) {
		struct kiface *ifc = &k->ifaces[i];
		LIBBPF_OPTS(bpf_xdp_attach_opts, aopts);
		int ofd, ret;

		if (!ifc->adopted || !memcmp(ifc->tag, k->obj_tag, 8))
			continue;
		ofd = bpf_prog_get_fd_by_id(ifc->prog_id);
		if (ofd < 0)
			return xlb_err_set(err, -errno, "%s: program %u: %s", ifc->name, ifc->prog_id,
					   strerror(errno));
		/* The kernel swaps only if ofd still runs: never over someone else's program. */
		aopts.old_prog_fd = ofd;
		ret = bpf_xdp_attach(ifc->ifindex, nfd,
				     XDP_FLAGS_REPLACE |
					     (ifc->native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE),
				     &aopts) ? -errno : 0;
		close(ofd);
		if (ret)
			return xlb_err_set(err, ret, "%s: replacing program %u failed: %s", ifc->name,
					   ifc->prog_id, strerror(-ret));
		kernel_tag_str(ifc->tag, told);
		klog(k, LOG_NOTICE, "%s: program %u (tag %s) replaced by %s (tag %s) in one step",
		     ifc->name, ifc->prog_id, told, k->opts.obj_path, tnew);
		ifc->prog_id = kernel_prog_id_of_fd(nfd);
		memcpy(ifc->tag, k->obj_tag, 8);
		ifc->upgraded = true;
		pin_prog(k, ifc, nfd);
	}
	return 0;
}

int kernel_upgrade(struct kernel *k, struct xlb_err *err)
{
	struct bpf_program *prog;
	uint32_t first = 0;
	int ret, nfd, differ, rfd;

	ret = kernel_load_object(k, err) ?: layout_check(k, err);
	if (ret)
		return ret;
	if (bpf_object__load(k->obj)) {
		ret = errno ? -errno : -EINVAL;
		return xlb_err_set(err, ret, "cannot load %s: %s", k->opts.obj_path, strerror(-ret));
	}
	prog = bpf_object__find_program_by_name(k->obj, "xlb_balancer");
	nfd = prog ? bpf_program__fd(prog) : -1;
	if (nfd < 0 || kernel_prog_tag(nfd, k->obj_tag))
		return xlb_err_set(err, -ENOENT, "%s has no xlb_balancer program", k->opts.obj_path);
	differ = upgrade_plan(k, err);
	if (differ < 0)
		return differ;
	for (size_t i = 0; i < k->iface_cnt && !first; i++)
		first = k->ifaces[i].adopted ? k->ifaces[i].prog_id : 0;
	if (differ) {
		ret = carry_devmap(k, first, err) ?: upgrade_switch(k, nfd, err);
		for (size_t i = 0; !ret && i < k->iface_cnt; i++)
			if (!k->ifaces[i].adopted)
				ret = attach_new(k, &k->ifaces[i], nfd, err);
		return ret;
	}
	/*
	 * The same build runs: it stays, and the copy just loaded goes (its
	 * devmap is not the running one's).  A new interface gets the running
	 * program itself.
	 */
	bpf_object__close(k->obj);
	k->obj = NULL;
	klog(k, LOG_INFO, "the running program is this build: kept");
	rfd = bpf_prog_get_fd_by_id(first);
	if (rfd < 0)
		return xlb_err_set(err, -errno, "program %u: %s", first, strerror(errno));
	for (size_t i = 0; !ret && i < k->iface_cnt; i++)
		if (!k->ifaces[i].adopted)
			ret = attach_new(k, &k->ifaces[i], rfd, err);
	close(rfd);
	return ret;
}
