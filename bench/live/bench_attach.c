// SPDX-License-Identifier: MIT
/*
 * xlb-bench-attach - attach the seeds' test_xdp_noinline in native XDP mode
 * on a device for the live veth benchmark (bench/live/live_veth.sh), with
 * one VIP: the seed's vip_map keyed {VIP, port 0, TCP} (its any-port
 * lookup), ring slots 2 * 5 and 2 * 5 + 1 on real 3.  The program (and its
 * maps) stay attached after the tool exits; they go with the device.  xlb's
 * balancer is attached by tests/dataplane's xlb-testctl instead.
 *
 *   xlb-bench-attach SEED_OBJ DEV VIP
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "testbed.h"

struct seed_vip_key {
	uint32_t daddr[4];
	uint16_t dport;
	uint16_t family;
	uint8_t protocol;
};

int main(int argc, char **argv)
{
	struct seed_vip_key key = { .protocol = 6 };
	struct { uint32_t flags, vip_num; } meta = { 0, SEED_VIP_NUM };
	struct { uint32_t dst[4]; uint8_t flags; } real = { { 0 } };
	struct testbed_prog_src src = { .prog_name = "balancer_ingress" };
	struct testbed_engine_opts o = { 0 };
	struct testbed_engine *e;
	uint32_t real_num = 3, slot;
	int ifindex, err;

	if (argc != 4 || inet_pton(AF_INET, argv[3], &key.daddr[0]) != 1) {
		fprintf(stderr, "usage: xlb-bench-attach SEED_OBJ DEV VIP\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[2]);
	src.path = argv[1];
	inet_pton(AF_INET, "10.1.0.1", &real.dst[0]);
	err = ifindex ? testbed_engine__open(TESTBED_ENGINE_KERNEL, &src, &o, &e) : -ENODEV;
	if (err) {
		fprintf(stderr, "xlb-bench-attach: %s on %s: %s\n", argv[1], argv[2], strerror(-err));
		return 1;
	}
	err = testbed_engine__map_update(e, "vip_map", &key, &meta);
	for (slot = 2 * SEED_VIP_NUM; !err && slot <= 2 * SEED_VIP_NUM + 1; slot++)
		err = testbed_engine__map_update(e, "ch_rings", &slot, &real_num);
	err = err ?: testbed_engine__map_update(e, "reals", &real_num, &real);
	err = err ?: bpf_xdp_attach(ifindex, testbed_engine__kernel_prog_fd(e), XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "xlb-bench-attach: setup or attach on %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	printf("seed test_xdp_noinline on %s: vip %s\n", argv[2], argv[3]);
	testbed_engine__close(e);
	return 0;
}
