// SPDX-License-Identifier: MIT
/*
 * xlb-bench-attach - attach the seeds' test_xdp_noinline in native XDP mode
 * on a device for the live veth benchmark (bench/live/live_veth.sh), with
 * one VIP: the seed's vip_map keyed {VIP, port 0, TCP} (its any-port
 * lookup), ring slots 2 * 5 and 2 * 5 + 1 on real 3.  The program (and its
 * maps) stay attached after the tool exits; they go with the device.  xlb's
 * balancer is attached by tests/dataplane's xlb-testctl instead.
 *
 *   xlb-bench-attach SEED_OBJ DEV VIP [LRU_ENTRIES]
 *
 * LRU_ENTRIES sizes the seed's connection table (lru_cache, 300 entries in
 * the selftest): the benchmark gives it xlb's, and the forwarding variant
 * inserts every new flow there as xlb does (live_veth.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
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

static int update(struct bpf_object *obj, const char *name, const void *key, const void *value)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	if (!map)
		return -ENOENT;
	return bpf_map__update_elem(map, key, bpf_map__key_size(map), value,
				    bpf_map__value_size(map), BPF_ANY);
}

int main(int argc, char **argv)
{
	struct seed_vip_key key = { .protocol = 6 };
	struct { uint32_t flags, vip_num; } meta = { 0, SEED_VIP_NUM };
	struct { uint32_t dst[4]; uint8_t flags; } real = { { 0 } };
	uint32_t real_num = 3, slot, lru_entries = 0;
	struct bpf_object *obj;
	struct bpf_program *prog;
	int ifindex, err;
	char *end;

	if (argc == 5) {
		lru_entries = (uint32_t)strtoul(argv[4], &end, 10);
		if (*end || !lru_entries)
			argc = 0;
	}
	if ((argc != 4 && argc != 5) || inet_pton(AF_INET, argv[3], &key.daddr[0]) != 1) {
		fprintf(stderr, "usage: xlb-bench-attach SEED_OBJ DEV VIP [LRU_ENTRIES]\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[2]);
	if (!ifindex) {
		fprintf(stderr, "xlb-bench-attach: no device %s\n", argv[2]);
		return 1;
	}
	inet_pton(AF_INET, "10.1.0.1", &real.dst[0]);
	obj = bpf_object__open_file(argv[1], NULL);
	err = obj ? 0 : -errno;
	if (!err && lru_entries)
		err = bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "lru_cache"),
					       lru_entries);
	err = err ?: bpf_object__load(obj);
	prog = err ? NULL : bpf_object__find_program_by_name(obj, "balancer_ingress");
	if (!prog) {
		fprintf(stderr, "xlb-bench-attach: %s: %s\n", argv[1], strerror(err ? -err : ENOENT));
		bpf_object__close(obj);
		return 1;
	}
	err = update(obj, "vip_map", &key, &meta);
	for (slot = 2 * SEED_VIP_NUM; !err && slot <= 2 * SEED_VIP_NUM + 1; slot++)
		err = update(obj, "ch_rings", &slot, &real_num);
	err = err ?: update(obj, "reals", &real_num, &real);
	err = err ?: bpf_xdp_attach(ifindex, bpf_program__fd(prog), XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "xlb-bench-attach: setup or attach on %s: %s\n", argv[2], strerror(-err));
		bpf_object__close(obj);
		return 1;
	}
	printf("seed test_xdp_noinline on %s: vip %s, lru_cache %u entries\n", argv[2], argv[3],
	       bpf_map__max_entries(bpf_object__find_map_by_name(obj, "lru_cache")));
	bpf_object__close(obj);
	return 0;
}
