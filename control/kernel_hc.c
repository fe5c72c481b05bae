// SPDX-License-Identifier: MIT
/*
 * The kernel backend, encapsulated health probes: healthcheck.bpf.o on the
 * interfaces' tc egress turns probes carrying the skb mark
 * XLB_HC_MARK(settings, real id) into packets encapsulated toward that real, so a
 * probe travels like client traffic (encap, the real's decap, the VIP on
 * its loopback).  Optional: without it, probes marked "encap" fall back to
 * direct probes, with a warning.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"

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
void kernel_hc_setup(struct kernel *k)
{
	const struct xlb_settings *set = k->opts.settings;
	char path[PATH_MAX], dir[PATH_MAX];
	struct bpf_program *prog;
	struct xlb_hc_config cfg = { 0 };
	struct xlb_ip a;
	struct xlb_err err = { 0 };
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
	/* The same gate as the balancer: verified, then loaded from the verified bytes. */
	ret = kernel_gate(k, path, &k->hc_img, &k->hc_verify_json, k->hc_verify_msg,
			  sizeof(k->hc_verify_msg), &err);
	if (ret) {
		snprintf(k->hc_msg, sizeof(k->hc_msg), "not loaded: %.180s", err.msg);
		klog(k, LOG_WARNING, "encapsulated health probes unavailable: %s", k->hc_msg);
		return;
	}
	{
		LIBBPF_OPTS(bpf_object_open_opts, oopts, .object_name = "healthcheck");

		k->hc_obj = bpf_object__open_mem(k->hc_img.buf, k->hc_img.len, &oopts);
	}
	/* One probe mark per real slot (xlb_shared.h, "Sizes"). */
	if (!libbpf_get_error(k->hc_obj))
		bpf_map__set_max_entries(bpf_object__find_map_by_name(k->hc_obj, "xlb_hc_reals"),
					 set->max_reals);
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
	/*
	 * Outer headers as the settings say, else the first interface's own MAC
	 * and addresses; the probe mark range is hc_mark_base + real ids, so
	 * other marks (other daemons' traffic) pass the program untouched.
	 */
	memcpy(cfg.gw_mac, set->gw_mac, 6);
	cfg.gue_port = set->gue_port;
	if (set->hc_src4.family == AF_INET)
		memcpy(&cfg.src4, set->hc_src4.bytes, 4);
	else if (k->iface_cnt && iface_addr(k->ifaces[0].name, AF_INET, &a))
		memcpy(&cfg.src4, a.bytes, 4);
	if (set->hc_src6.family == AF_INET6)
		memcpy(cfg.src6.bytes, set->hc_src6.bytes, 16);
	else if (k->iface_cnt && iface_addr(k->ifaces[0].name, AF_INET6, &a))
		memcpy(cfg.src6.bytes, a.bytes, 16);
	memcpy(cfg.src_mac, set->hc_src_mac, 6);
	if (!(set->hc_src_mac[0] | set->hc_src_mac[1] | set->hc_src_mac[2] | set->hc_src_mac[3] |
	      set->hc_src_mac[4] | set->hc_src_mac[5]) && k->iface_cnt) {
		int mtu;

		kernel_iface_info(k->ifaces[0].name, &mtu, cfg.src_mac);
	}
	cfg.mark_min = XLB_HC_MARK(set, 1);
	cfg.mark_max = XLB_HC_MARK(set, set->max_reals - 1);
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
	if (k->iface_cnt == 1)
		snprintf(k->hc_msg, sizeof(k->hc_msg), "attached on tc egress of %.16s (%.150s)",
			 k->ifaces[0].name, path);
	else
		snprintf(k->hc_msg, sizeof(k->hc_msg), "attached on tc egress (%.150s)", path);
	klog(k, LOG_INFO, "health probes through the encapsulated path: %s", k->hc_msg);
	return;
fail:
	klog(k, LOG_WARNING, "encapsulated health probes unavailable: %s", k->hc_msg);
	bpf_object__close(k->hc_obj);
	k->hc_obj = NULL;
	k->hc_reals_fd = -1;
}

void kernel_hc_teardown(struct kernel *k, bool keep)
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

int kernel_hc_real_put(struct xlb_backend *be, uint32_t mark, const struct xlb_ip *addr,
			      enum xlb_encap encap, struct xlb_err *err)
{
	struct kernel *k = be->priv;
	struct xlb_hc_real r = { 0 };

	if (!k->hc_obj || k->hc_reals_fd < 0)
		return xlb_err_set(err, -EOPNOTSUPP, "healthcheck program not attached: %s", k->hc_msg);
	if (!addr) {
		if (bpf_map_delete_elem(k->hc_reals_fd, &mark) && errno != ENOENT)
			return kernel_map_err(err, "delete from xlb_hc_reals", errno);
		return 0;
	}
	kernel_to_dp_addr(addr, &r.addr, &r.family);
	r.encap = (__u8)encap;
	if (bpf_map_update_elem(k->hc_reals_fd, &mark, &r, BPF_ANY))
		return kernel_map_err(err, "update xlb_hc_reals", errno);
	return 0;
}
