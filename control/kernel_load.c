// SPDX-License-Identifier: MIT
/*
 * The kernel backend, loading: the verifier gate (the bytes it passed are
 * the bytes loaded), opening the object with its maps' pin paths and sizes,
 * and the small helpers the attach and upgrade files share.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel.h"

/*
 * Maps that are not pinned: the devmap (the kernel reports it with
 * BPF_F_RDONLY_PROG added, so libbpf refuses to re-use a pinned one) and the
 * BPF-private flood window.  Both are rebuilt with each load.
 */
bool kernel_map_pinned(const char *name)
{
	/* (internal maps are "<object>.rodata" and the like: never pinned) */
	return strncmp(name, "xlb_", 4) == 0 && !strchr(name, '.') && strcmp(name, "xlb_tx_ports") &&
	       strcmp(name, "xlb_flood");
}

int kernel_mkdir_p(const char *path)
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

uint32_t kernel_prog_id_of_fd(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
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

int kernel_open_object(struct kernel *k, struct xlb_err *err)
{
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
	ret = kernel_mkdir_p(path);
	if (ret)
		return xlb_err_set(err, ret, "cannot create %s", path);
	bpf_object__for_each_map(map, k->obj) {
		const char *name = bpf_map__name(map);

		/* .rodata/.bss and private maps are not shared across restarts. */
		if (!name || !kernel_map_pinned(name))
			continue;
		snprintf(path, sizeof(path), "%s/maps/%s", k->pin_root, name);
		ret = bpf_map__set_pin_path(map, path);
		if (ret)
			return xlb_err_set(err, ret, "pin path for %s: %s", name, strerror(-ret));
	}
	/* Loaded (its maps created or re-used) by libxdp's attach, or kernel_upgrade. */
	return kernel_sizes_apply(k, err);
}

int kernel_load_object(struct kernel *k, struct xlb_err *err)
{
	int ret;

	if (!k->img.buf && stat(k->opts.obj_path, &k->img_st))
		memset(&k->img_st, 0, sizeof(k->img_st));
	ret = kernel_gate(k, k->opts.obj_path, &k->img, &k->verify_json, k->verify_msg,
			  sizeof(k->verify_msg), err);

	k->verify_result = k->img.verify_result;
	return ret ?: kernel_open_object(k, err);
}

