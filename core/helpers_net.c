// SPDX-License-Identifier: MIT
/*
 * helpers_net.c - the packet helpers of modern XDP and tc programs beside
 * helpers.c's: bpf_xdp_get_buff_len, bpf_xdp_load_bytes/store_bytes,
 * bpf_check_mtu (XDP and tc), bpf_skb_vlan_push/pop, and the clocks and
 * CPU facts without a context.  Behaviour and errors are the kernel's
 * (net/core/filter.c, net/core/skbuff.c) on the frames xlb runs: one
 * linear buffer, no fragments, no GSO.
 *
 * bpf_check_mtu's devices are the host's: the interface of that ifindex in
 * this process's network namespace (its MTU and, for the L2 header, its
 * type), ifindex 0 meaning the packet's own device as the kernel's test
 * run sees it (ingress_ifindex for XDP, ifindex for tc).  A device the host
 * does not have (a DPDK port without a kernel interface) is -ENODEV.
 */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core_impl.h"

#define ETH_P_8021Q_BE 0x0081  /* htons(0x8100), as __sk_buff stores __be16 */
#define ETH_P_8021AD_BE 0xa888 /* htons(0x88a8) */
#define VLAN_HLEN 4
#define MTU_CHK_SEGS 1u	     /* BPF_MTU_CHK_SEGS */
#define MTU_RET_FRAG_NEEDED 1 /* BPF_MTU_CHK_RET_FRAG_NEEDED */

static struct xbpf_run_ctx *run_ctx(uint64_t r1)
{
	return (struct xbpf_run_ctx *)(uintptr_t)r1;
}

/* ---- XDP: the frame's bytes ---------------------------------------------------- */

uint64_t __xbpf_h_xdp_get_buff_len(uint64_t r1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	const struct xdp_md *md = &run_ctx(r1)->md.xdp;

	return (uint64_t)(md->data_end - md->data);
}

/* bpf_xdp_pointer(): [offset, offset + len) inside the frame's data, or an error. */
static int64_t xdp_span(const struct xdp_md *md, uint64_t offset, uint64_t len, uint8_t **ret)
{
	uint32_t size = md->data_end - md->data;

	if ((uint32_t)offset > 0xffff || (uint32_t)len > 0xffff)
		return -EFAULT;
	if ((uint64_t)(uint32_t)offset + (uint32_t)len > size)
		return -EINVAL;
	*ret = (uint8_t *)xbpf_u32_ptr(md->data) + (uint32_t)offset;
	return 0;
}

uint64_t __xbpf_h_xdp_load_bytes(uint64_t r1, uint64_t offset, uint64_t buf, uint64_t len,
				 uint64_t a5)
{
	uint8_t *p;
	int64_t err = xdp_span(&run_ctx(r1)->md.xdp, offset, len, &p);

	if (err)
		return (uint64_t)err;
	memcpy((void *)(uintptr_t)buf, p, (uint32_t)len);
	return 0;
}

uint64_t __xbpf_h_xdp_store_bytes(uint64_t r1, uint64_t offset, uint64_t buf, uint64_t len,
				  uint64_t a5)
{
	uint8_t *p;
	int64_t err = xdp_span(&run_ctx(r1)->md.xdp, offset, len, &p);

	if (err)
		return (uint64_t)err;
	memmove(p, (const void *)(uintptr_t)buf, (uint32_t)len);
	return 0;
}

/* ---- bpf_check_mtu ------------------------------------------------------------- */

/* The host's device `ifindex`: its MTU and L2 header length (dev->hard_header_len). */
static int host_device(uint32_t ifindex, int *ret_mtu, int *ret_hlen)
{
	struct ifreq ifr = { 0 };
	int fd, err = 0;

	if (!ifindex || !if_indextoname(ifindex, ifr.ifr_name))
		return -ENODEV;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -ENODEV;
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		err = -ENODEV;
	} else {
		*ret_mtu = ifr.ifr_mtu;
		/* Ethernet-like devices (and lo) carry a 14-byte header; tunnels none */
		*ret_hlen = 0;
		if (!ioctl(fd, SIOCGIFHWADDR, &ifr) &&
		    (ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER ||
		     ifr.ifr_hwaddr.sa_family == ARPHRD_LOOPBACK))
			*ret_hlen = XBPF_ETH_HLEN;
	}
	close(fd);
	return err;
}

static uint64_t xdp_check_mtu(struct xbpf_run_ctx *ctx, uint32_t ifindex, uint32_t *mtu_len,
			      int32_t len_diff, uint64_t flags)
{
	const struct xdp_md *md = &ctx->md.xdp;
	int len = (int)(md->data_end - md->data), mtu, hlen, err;

	if (flags) /* no multi-buffer segment check for XDP */
		return (uint64_t)-EINVAL;
	err = host_device(ifindex ? ifindex : md->ingress_ifindex, &mtu, &hlen);
	if (err)
		return (uint64_t)(int64_t)err;
	if (*mtu_len)
		len = (int)*mtu_len + hlen; /* the L3 length given */
	len += len_diff;
	*mtu_len = (uint32_t)mtu;
	return len > mtu + hlen ? MTU_RET_FRAG_NEEDED : 0;
}

static uint64_t skb_check_mtu(struct xbpf_run_ctx *ctx, uint32_t ifindex, uint32_t *mtu_len,
			      int32_t len_diff, uint64_t flags)
{
	const struct __sk_buff *s = &ctx->md.skb;
	int mtu, hlen, len, err;

	if (flags & ~(uint64_t)MTU_CHK_SEGS)
		return (uint64_t)-EINVAL;
	if ((flags & MTU_CHK_SEGS) && (len_diff || *mtu_len))
		return (uint64_t)-EINVAL;
	err = host_device(ifindex ? ifindex : s->ifindex, &mtu, &hlen);
	if (err)
		return (uint64_t)(int64_t)err;
	len = *mtu_len ? (int)*mtu_len + hlen : (int)s->len;
	len += len_diff;
	*mtu_len = (uint32_t)mtu;
	/* no GSO here: over the MTU is over it */
	return len <= mtu + hlen ? 0 : MTU_RET_FRAG_NEEDED;
}

uint64_t __xbpf_h_check_mtu(uint64_t r1, uint64_t ifindex, uint64_t mtu_len, uint64_t len_diff,
			    uint64_t flags)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	uint32_t *len = (uint32_t *)(uintptr_t)mtu_len;

	if (ctx->type == XBPF_PROG_XDP)
		return xdp_check_mtu(ctx, (uint32_t)ifindex, len, (int32_t)len_diff, flags);
	return skb_check_mtu(ctx, (uint32_t)ifindex, len, (int32_t)len_diff, flags);
}

/* ---- tc: VLAN tags --------------------------------------------------------------- */

static bool eth_type_vlan(uint32_t proto_be)
{
	return proto_be == ETH_P_8021Q_BE || proto_be == ETH_P_8021AD_BE;
}

static void skb_set_data(struct __sk_buff *s, uint8_t *data)
{
	s->data = xbpf_ptr_u32(data);
	s->data_meta = s->data;
	s->data_end = xbpf_ptr_u32(data + s->len);
}

/* __vlan_insert_tag(): the tag goes in after the MAC addresses, the frame grows at its head. */
static int64_t skb_insert_tag(struct xbpf_run_ctx *ctx, uint32_t proto_be, uint16_t tci)
{
	struct __sk_buff *s = &ctx->md.skb;
	uint8_t *data = xbpf_u32_ptr(s->data);

	if (s->len < 2 * 6)
		return -EINVAL;
	if (data - VLAN_HLEN < ctx->frame)
		return -ENOMEM;
	data -= VLAN_HLEN;
	memmove(data, data + VLAN_HLEN, 2 * 6);
	data[12] = (uint8_t)proto_be; /* stored big-endian: low byte first in memory */
	data[13] = (uint8_t)(proto_be >> 8);
	data[14] = (uint8_t)(tci >> 8);
	data[15] = (uint8_t)tci;
	s->len += VLAN_HLEN;
	skb_set_data(s, data);
	return 0;
}

/* __skb_vlan_pop(): the tag after the MAC addresses comes out; its TCI and the inner type are returned. */
static int64_t skb_remove_tag(struct xbpf_run_ctx *ctx, uint16_t *ret_tci)
{
	struct __sk_buff *s = &ctx->md.skb;
	uint8_t *data = xbpf_u32_ptr(s->data);
	uint32_t inner;

	if (s->len < XBPF_ETH_HLEN + VLAN_HLEN)
		return -ENOMEM; /* skb_ensure_writable() of VLAN_ETH_HLEN fails */
	*ret_tci = (uint16_t)(data[14] << 8 | data[15]);
	inner = (uint32_t)data[16] | (uint32_t)data[17] << 8;
	memmove(data + VLAN_HLEN, data, 2 * 6);
	data += VLAN_HLEN;
	s->len -= VLAN_HLEN;
	skb_set_data(s, data);
	/* vlan_set_encap_proto(): an Ethernet type, or 802.3 / 802.2 below 0x600 */
	if ((uint16_t)(inner << 8 | inner >> 8) >= 0x0600)
		s->protocol = inner;
	else
		s->protocol = data[14] == 0xff && data[15] == 0xff ? 0x0100 : 0x0400;
	return 0;
}

uint64_t __xbpf_h_skb_vlan_push(uint64_t r1, uint64_t proto, uint64_t tci, uint64_t a4, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	struct __sk_buff *s = &ctx->md.skb;
	uint32_t proto_be = (uint16_t)proto;

	if (!eth_type_vlan(proto_be))
		proto_be = ETH_P_8021Q_BE;
	if (s->vlan_present) {
		/* the tag the skb carries goes into the frame; the new one takes its place */
		int64_t err = skb_insert_tag(ctx, s->vlan_proto, (uint16_t)s->vlan_tci);

		if (err)
			return (uint64_t)err;
		s->protocol = s->vlan_proto;
	}
	s->vlan_present = 1;
	s->vlan_proto = proto_be;
	s->vlan_tci = (uint16_t)tci;
	return 0;
}

uint64_t __xbpf_h_skb_vlan_pop(uint64_t r1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_run_ctx *ctx = run_ctx(r1);
	struct __sk_buff *s = &ctx->md.skb;
	uint32_t proto_be;
	uint16_t tci;
	int64_t err;

	if (s->vlan_present) {
		s->vlan_present = 0;
		s->vlan_tci = 0;
		s->vlan_proto = 0;
	} else {
		if (!eth_type_vlan(s->protocol))
			return 0;
		err = skb_remove_tag(ctx, &tci);
		if (err)
			return (uint64_t)err;
	}
	/* the next tag in the frame becomes the skb's */
	if (!eth_type_vlan(s->protocol))
		return 0;
	proto_be = s->protocol;
	err = skb_remove_tag(ctx, &tci);
	if (err)
		return (uint64_t)err;
	s->vlan_present = 1;
	s->vlan_proto = proto_be;
	s->vlan_tci = tci;
	return 0;
}

/* ---- clocks and CPUs ----------------------------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t __xbpf_h_ktime_get_coarse_ns(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

uint64_t __xbpf_h_ktime_get_tai_ns(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	return clock_ns(CLOCK_TAI);
}

/* The NUMA node of the CPU this thread runs on (0 when the host does not say). */
uint64_t __xbpf_h_get_numa_node_id(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	unsigned int cpu, node = 0;

	if (getcpu(&cpu, &node))
		return 0;
	return node;
}
