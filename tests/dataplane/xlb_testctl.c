// SPDX-License-Identifier: MIT
/*
 * xlb-testctl - a small test tool that loads the dataplane programs, attaches
 * them in native XDP mode and programs their maps through libbpf, for the
 * network-namespace test (tests/dataplane/netns_lb.sh).  It is not the
 * control plane: it fills one VIP and its Maglev ring directly.
 *
 *   xlb-testctl balancer OBJ DEV GW_MAC SRC4/PLEN VIP PORT ENCAP REAL...
 *       ENCAP: ip | gue; REAL: IPv4 or IPv6 address
 *   xlb-testctl decap OBJ DEV [HOST_ADDR...]   (no address: a pass program)
 *   xlb-testctl decap-tc OBJ DEV HOST_ADDR...   the tc ingress variant
 *   xlb-testctl stats DEV                       per-real packets, events
 *   xlb-testctl hc OBJ DEV SRC4 MARK=REAL[/gue]... healthcheck on tc egress
 *
 * Programs stay attached (and their maps alive) after the tool exits; they
 * go away with the interface.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "xlb_shared.h"

static int parse_addr(const char *s, union xlb_addr *a, __u8 *family)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->v4) == 1) {
		*family = XLB_FAMILY_V4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->bytes) == 1) {
		*family = XLB_FAMILY_V6;
		return 0;
	}
	fprintf(stderr, "bad address: %s\n", s);
	return -EINVAL;
}

static int parse_mac(const char *s, __u8 *mac)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

static struct bpf_object *load_attach(const char *path, const char *prog_name, const char *dev)
{
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	int ifindex = if_nametoindex(dev), err;

	if (!ifindex) {
		fprintf(stderr, "no interface %s\n", dev);
		return NULL;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	prog = bpf_object__find_program_by_name(obj, prog_name);
	if (!prog) {
		fprintf(stderr, "no program %s in %s\n", prog_name, path);
		goto err_close;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "load %s: %s\n", path, strerror(-err));
		goto err_close;
	}
	err = bpf_xdp_attach(ifindex, bpf_program__fd(prog), XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "attach to %s (native XDP): %s\n", dev, strerror(-err));
		goto err_close;
	}
	return obj;
err_close:
	bpf_object__close(obj);
	return NULL;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

/* Maglev population (Eisenbud et al., NSDI'16) over the given reals. */
static void maglev_fill(__u32 *ring, const __u32 *real_nums, const union xlb_addr *addrs, int n)
{
	__u32 offset[64], skip[64], next[64], filled = 0, i;
	int r;

	for (i = 0; i < XLB_RING_SIZE; i++)
		ring[i] = 0;
	for (r = 0; r < n; r++) {
		__u32 h1 = 2166136261u, h2 = 5381;
		for (i = 0; i < 16; i++) {
			h1 = (h1 ^ addrs[r].bytes[i]) * 16777619u;
			h2 = h2 * 33 + addrs[r].bytes[i];
		}
		offset[r] = h1 % XLB_RING_SIZE;
		skip[r] = h2 % (XLB_RING_SIZE - 1) + 1;
		next[r] = 0;
	}
	while (filled < XLB_RING_SIZE) {
		for (r = 0; r < n && filled < XLB_RING_SIZE; r++) {
			__u32 c;

			do {
				c = (offset[r] + (__u64)next[r] * skip[r]) % XLB_RING_SIZE;
				next[r]++;
			} while (ring[c]);
			ring[c] = real_nums[r];
			filled++;
		}
	}
}

static int cmd_balancer(int argc, char **argv)
{
	struct xlb_vip_meta meta = {};
	struct xlb_addr_key akey = {};
	struct xlb_config cfg = {};
	struct xlb_vip_key vkey = {};
	union xlb_addr addrs[64];
	__u32 real_nums[64], *ring, *keys, count, i, one = 1, zero = 0;
	struct bpf_object *obj;
	char *slash;
	int n, err;

	if (argc < 9) {
		fprintf(stderr, "usage: balancer OBJ DEV GW_MAC SRC4/PLEN VIP PORT ip|gue REAL...\n");
		return 2;
	}
	if (parse_mac(argv[4], cfg.gw_mac))
		return 2;
	slash = strchr(argv[5], '/');
	if (!slash)
		return 2;
	*slash = 0;
	if (inet_pton(AF_INET, argv[5], &cfg.src4) != 1)
		return 2;
	cfg.src4_plen = atoi(slash + 1);
	if (parse_addr(argv[6], &vkey.addr, &vkey.family))
		return 2;
	vkey.port = htons(atoi(argv[7]));
	vkey.proto = 6;
	meta.encap = !strcmp(argv[8], "gue") ? XLB_ENCAP_GUE : XLB_ENCAP_IP;
	n = argc - 9;
	if (n < 1 || n > 64)
		return 2;

	obj = load_attach(argv[2], "xlb_balancer", argv[3]);
	if (!obj)
		return 1;
	err = bpf_map_update_elem(map_fd(obj, "xlb_config"), &zero, &cfg, 0);
	for (i = 0; !err && i < (__u32)n; i++) {
		struct xlb_real real = {};

		err = parse_addr(argv[9 + i], &real.addr, &real.family);
		real_nums[i] = i + 1;
		addrs[i] = real.addr;
		err = err ?: bpf_map_update_elem(map_fd(obj, "xlb_reals"), &real_nums[i], &real, 0);
	}
	ring = calloc(XLB_RING_SIZE, sizeof(*ring));
	keys = calloc(XLB_RING_SIZE, sizeof(*keys));
	maglev_fill(ring, real_nums, addrs, n);
	/* Inactive half (1) first, then flip the VIP meta to it. */
	for (i = 0; i < XLB_RING_SIZE; i++)
		keys[i] = (meta.vip_num * XLB_RING_HALVES + 1) * XLB_RING_SIZE + i;
	count = XLB_RING_SIZE;
	if (!err && bpf_map_update_batch(map_fd(obj, "xlb_rings"), keys, ring, &count, NULL))
		err = -errno;
	meta.ring_half = 1;
	/* the established-flow fast path, as xlbd sets it: epoch 1 in the meta and xlb_vip_fast */
	meta.epoch = 1;
	if (!err && bpf_map_update_elem(map_fd(obj, "xlb_vips"), &vkey, &meta, 0))
		err = -errno;
	if (!err) {
		int ncpus = libbpf_num_possible_cpus();
		struct xlb_vip_fast fast[ncpus > 0 ? ncpus : 1];

		for (int c = 0; c < ncpus; c++)
			fast[c] = (struct xlb_vip_fast){ .epoch = meta.epoch, .encap = meta.encap };
		if (ncpus <= 0 || bpf_map_update_elem(map_fd(obj, "xlb_vip_fast"), &meta.vip_num, fast, 0))
			err = ncpus <= 0 ? ncpus : -errno;
	}
	akey.addr = vkey.addr;
	akey.family = vkey.family;
	if (!err && bpf_map_update_elem(map_fd(obj, "xlb_vip_addrs"), &akey, &one, 0))
		err = -errno;
	free(ring);
	free(keys);
	if (err) {
		fprintf(stderr, "programming maps: %s\n", strerror(-err));
		return 1;
	}
	printf("balancer on %s: vip %s:%s, %d reals\n", argv[3], argv[6], argv[7], n);
	return 0;
}

static int fill_decap_addrs(struct bpf_object *obj, int argc, char **argv, int first)
{
	__u32 one = 1;
	int i;

	for (i = first; i < argc; i++) {
		struct xlb_addr_key key = {};

		if (parse_addr(argv[i], &key.addr, &key.family) ||
		    bpf_map_update_elem(map_fd(obj, "xlb_decap_addrs"), &key, &one, 0)) {
			fprintf(stderr, "decap address %s: failed\n", argv[i]);
			return 1;
		}
	}
	return 0;
}

static int cmd_decap(int argc, char **argv)
{
	struct bpf_object *obj;

	if (argc < 4) {
		fprintf(stderr, "usage: decap OBJ DEV [HOST_ADDR...]\n");
		return 2;
	}
	obj = load_attach(argv[2], "xlb_decap_xdp", argv[3]);
	if (!obj)
		return 1;
	return fill_decap_addrs(obj, argc, argv, 4);
}

/* tc ingress variant through libbpf's tc API; stays attached after exit. */
static int cmd_decap_tc(int argc, char **argv)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts);
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	int err;

	if (argc < 5) {
		fprintf(stderr, "usage: decap-tc OBJ DEV HOST_ADDR...\n");
		return 2;
	}
	hook.ifindex = if_nametoindex(argv[3]);
	obj = bpf_object__open_file(argv[2], NULL);
	prog = obj ? bpf_object__find_program_by_name(obj, "xlb_decap_tc") : NULL;
	if (!hook.ifindex || !prog) {
		fprintf(stderr, "decap-tc: no interface %s or no program in %s\n", argv[3], argv[2]);
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	if (bpf_object__load(obj) || fill_decap_addrs(obj, argc, argv, 4))
		return 1;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		fprintf(stderr, "clsact on %s: %s\n", argv[3], strerror(-err));
		return 1;
	}
	opts.prog_fd = bpf_program__fd(prog);
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		fprintf(stderr, "tc ingress attach on %s: %s\n", argv[3], strerror(-err));
		return 1;
	}
	return 0;
}

static int cmd_hc(int argc, char **argv)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts);
	struct xlb_hc_config cfg = {};
	struct bpf_program *prog;
	struct bpf_object *obj;
	__u32 zero = 0;
	int i, err;

	if (argc < 6) {
		fprintf(stderr, "usage: hc OBJ DEV SRC4 MARK=REAL[/gue]...\n");
		return 2;
	}
	hook.ifindex = if_nametoindex(argv[3]);
	if (!hook.ifindex || inet_pton(AF_INET, argv[4], &cfg.src4) != 1)
		return 2;
	obj = bpf_object__open_file(argv[2], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "cannot load %s\n", argv[2]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "xlb_healthcheck");
	if (!prog)
		return 1;
	if (bpf_map_update_elem(map_fd(obj, "xlb_hc_config"), &zero, &cfg, 0))
		return 1;
	for (i = 5; i < argc; i++) {
		struct xlb_hc_real real = {};
		char *eq = strchr(argv[i], '='), *slash;
		__u32 mark;

		if (!eq)
			return 2;
		*eq = 0;
		mark = strtoul(argv[i], NULL, 0);
		slash = strchr(eq + 1, '/');
		if (slash) {
			*slash = 0;
			real.encap = !strcmp(slash + 1, "gue") ? XLB_ENCAP_GUE : XLB_ENCAP_IP;
		}
		if (parse_addr(eq + 1, &real.addr, &real.family) ||
		    bpf_map_update_elem(map_fd(obj, "xlb_hc_reals"), &mark, &real, 0))
			return 1;
	}
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		fprintf(stderr, "clsact on %s: %s\n", argv[3], strerror(-err));
		return 1;
	}
	opts.prog_fd = bpf_program__fd(prog);
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		fprintf(stderr, "tc egress attach on %s: %s\n", argv[3], strerror(-err));
		return 1;
	}
	return 0;
}

/* Maps of the program attached to DEV, by name. */
static int attached_map(int prog_fd, const char *name)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[64], i;
	int fd;

	info.nr_map_ids = 64;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	for (i = 0; i < info.nr_map_ids && i < 64; i++) {
		struct bpf_map_info minfo = {};
		__u32 mlen = sizeof(minfo);

		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &minfo, &mlen) && !strncmp(minfo.name, name, BPF_OBJ_NAME_LEN - 1))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* Packets (the first __u64 of each CPU's value of size vsize) over CPUs. */
static __u64 percpu_sum(int fd, __u32 key, size_t vsize)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	__u8 *v = calloc(ncpu, vsize);
	__u64 sum = 0, p;

	if (v && !bpf_map_lookup_elem(fd, &key, v))
		for (i = 0; i < ncpu; i++) {
			memcpy(&p, v + i * vsize, sizeof(p));
			sum += p;
		}
	free(v);
	return sum;
}

static int cmd_stats(int argc, char **argv)
{
	int ifindex, prog_fd, reals, events, reasons;
	__u32 id = 0, i;

	if (argc < 3 || !(ifindex = if_nametoindex(argv[2])))
		return 2;
	if (bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &id) || !id) {
		fprintf(stderr, "no XDP program on %s\n", argv[2]);
		return 1;
	}
	prog_fd = bpf_prog_get_fd_by_id(id);
	reals = attached_map(prog_fd, "xlb_real_stats");
	events = attached_map(prog_fd, "xlb_event_stats");
	reasons = attached_map(prog_fd, "xlb_reason_stats");
	if (prog_fd < 0 || reals < 0 || events < 0 || reasons < 0) {
		fprintf(stderr, "cannot read the balancer's maps on %s\n", argv[2]);
		return 1;
	}
	for (i = 1; i < 64; i++) {
		__u64 p = percpu_sum(reals, i, sizeof(struct xlb_lb_counter));

		if (p)
			printf("real %u %llu\n", i, (unsigned long long)p);
	}
	for (i = 0; i < XLB_EVENT_MAX; i++)
		printf("event %s %llu\n", xlb_event_name(i),
		       (unsigned long long)percpu_sum(events, i, sizeof(struct xlb_counter)));
	for (i = 1; i < XLB_REASON_MAX; i++)
		printf("reason %s %llu\n", xlb_reason_name(i),
		       (unsigned long long)percpu_sum(reasons, i, sizeof(struct xlb_counter)));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		goto usage;
	if (!strcmp(argv[1], "balancer"))
		return cmd_balancer(argc, argv);
	if (!strcmp(argv[1], "decap"))
		return cmd_decap(argc, argv);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc, argv);
	if (!strcmp(argv[1], "decap-tc"))
		return cmd_decap_tc(argc, argv);
	if (!strcmp(argv[1], "hc"))
		return cmd_hc(argc, argv);
usage:
	fprintf(stderr, "usage: xlb-testctl balancer|decap|stats ...\n");
	return 2;
}
