// SPDX-License-Identifier: MIT
/*
 * The kernel backend, interfaces: how balanced packets leave each one.
 *
 * xlb_ifaces[ingress ifindex] (xlb_shared.h) gets, per balancing
 * interface: the leaving interface's own MAC as outer source, the next
 * hop's MAC (--egress-gateway-mac of the leaving interface, else
 * --gateway-mac), the largest packet it carries (--mtu, else its MTU),
 * and, in redirect mode (--egress IN=OUT), the devmap port holding OUT.
 * The devmap (xlb_tx_ports) is not pinned (libbpf cannot re-use a pinned
 * devmap): it is the loaded object's, or found by id among the maps of the
 * program that runs (adoption), and it is rewritten on every start.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel.h"

int kernel_iface_info(const char *name, int *ret_mtu, uint8_t ret_mac[6])
{
	struct ifreq ifr;
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr))
		ret = -errno;
	else
		*ret_mtu = ifr.ifr_mtu;
	if (!ret && ioctl(fd, SIOCGIFHWADDR, &ifr))
		ret = -errno;
	else if (!ret)
		memcpy(ret_mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return ret;
}

static int devmap_fd(struct kernel *k)
{
	struct bpf_map *m;

	if (k->tx_fd >= 0)
		return k->tx_fd;
	m = k->obj ? bpf_object__find_map_by_name(k->obj, "xlb_tx_ports") : NULL;
	if (m && bpf_map__fd(m) >= 0)
		k->tx_fd = dup(bpf_map__fd(m));
	/* Adopted: the running program's (the devmap is not pinned). */
	for (size_t i = 0; k->tx_fd < 0 && i < k->iface_cnt; i++)
		if (k->ifaces[i].prog_id)
			k->tx_fd = kernel_prog_map_fd(k->ifaces[i].prog_id, "xlb_tx_ports");
	return k->tx_fd;
}

static const char *egress_of(const struct xlb_settings *set, const char *name)
{
	for (size_t i = 0; i < set->egress_cnt; i++)
		if (!strcmp(set->egress[i].name, name))
			return set->egress[i].egress;
	return name;
}

static int slot_of(const struct kernel *k, const char *name)
{
	for (size_t i = 0; i < k->iface_cnt; i++)
		if (!strcmp(k->ifaces[i].name, name))
			return (int)i;
	return -1;
}

int kernel_ifaces_put(struct kernel *k, const struct xlb_settings *set, struct xlb_err *err)
{
	int tx = -1;

	for (size_t i = 0; i < set->iface_cnt; i++) {
		const char *in = set->ifaces[i], *out = egress_of(set, in);
		int slot = slot_of(k, out), islot = slot_of(k, in), mtu = 0, ret;
		struct xlb_iface e = { 0 };
		__u32 key, ifindex;

		if (slot < 0 || islot < 0)
			return xlb_err_set(err, -ENODEV, "%s: egress %s is not attached", in, out);
		ret = kernel_iface_info(out, &mtu, e.src_mac);
		if (ret)
			return xlb_err_set(err, ret, "%s: cannot read its MTU and MAC: %s", out,
					   strerror(-ret));
		memcpy(e.gw_mac, set->gw_mac, 6);
		for (size_t j = 0; j < set->egress_gw_cnt; j++)
			if (!strcmp(set->egress_gw[j].name, out))
				memcpy(e.gw_mac, set->egress_gw[j].mac, 6);
		for (size_t j = 0; j < set->mtu_cnt; j++)
			if (!strcmp(set->mtu[j].name, out))
				mtu = set->mtu[j].mtu;
		e.max_pkt = (__u16)(mtu > 65535 ? 65535 : mtu);
		if (strcmp(out, in)) {
			if (tx < 0 && (tx = devmap_fd(k)) < 0)
				return xlb_err_set(err, tx, "the balancer's devmap is not reachable: %s",
						   strerror(-tx));
			key = (__u32)slot;
			ifindex = (__u32)k->ifaces[slot].ifindex;
			if (bpf_map_update_elem(tx, &key, &ifindex, BPF_ANY))
				return kernel_map_err(err, "update xlb_tx_ports", errno);
			e.tx_port = (__u8)(slot + 1);
		}
		key = (__u32)k->ifaces[islot].ifindex;
		if (key >= XLB_MAX_IFINDEX)
			return xlb_err_set(err, -ERANGE,
					   "%s has ifindex %u; the dataplane covers 1..%u", in, key,
					   XLB_MAX_IFINDEX - 1);
		if (bpf_map_update_elem(k->fd[KM_IFACES], &key, &e, BPF_ANY))
			return kernel_map_err(err, "update xlb_ifaces", errno);
		klog(k, LOG_INFO, "%s: balanced packets leave by %s (%s), max packet %u", in, out,
		     e.tx_port ? "redirect" : "XDP_TX", e.max_pkt);
	}
	return 0;
}
