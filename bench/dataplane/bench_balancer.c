// SPDX-License-Identifier: MIT
/*
 * xlb-bench-balancer - ns per packet of the XDP balancer under the kernel's
 * BPF_PROG_TEST_RUN (established flow, new flow, non-VIP), next to the
 * seeds' test_xdp_noinline measured the same way in the same run.
 *
 * "The same way": BPF_PROG_TEST_RUN with repeat = 1, called CALLS times,
 * mean of the kernel-measured duration.  (With repeat > 1 the kernel reruns
 * the program on the already rewritten frame, so an encapsulating program
 * would measure its own output after the first run.)
 *
 *   xlb-bench-balancer BALANCER_OBJ SEED_SCRIPT SEEDS_DIR WORKDIR [CALLS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifdef XLB_HAVE_XBPF
#include "xbpf_engine.h"
#endif

#include "xlb_shared.h"

/* Map writes for the kernel (libbpf) or a userspace engine object. */
typedef int (*update_fn)(void *obj, const char *map, const void *key, const void *val);

static int kernel_update(void *obj, const char *map, const void *key, const void *val)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, map);

	return m ? bpf_map_update_elem(bpf_map__fd(m), key, val, 0) : -ENOENT;
}

struct pkt4 {
	uint8_t dst[6], src[6];
	uint16_t proto;
	uint8_t ver_ihl, tos;
	uint16_t tot_len, id, frag;
	uint8_t ttl, protocol;
	uint16_t check;
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t doff, flags;
	uint16_t win, csum, urg;
} __attribute__((packed));

static double run_ns(int prog_fd, const void *pkt, size_t len, int calls, unsigned int *ret)
{
	static uint8_t out[4096];
	unsigned long long total = 0;
	int i;

	for (i = 0; i < calls; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = len,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		if (bpf_prog_test_run_opts(prog_fd, &opts)) {
			fprintf(stderr, "test run: %s\n", strerror(errno));
			return -1;
		}
		total += opts.duration;
		*ret = opts.retval;
	}
	return (double)total / calls;
}

static int find_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -1;
}

static struct bpf_object *load(const char *path, int *prog_fd)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;

	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "cannot load %s\n", path);
		return NULL;
	}
	bpf_object__for_each_program(prog, obj) {
		if (bpf_program__type(prog) == BPF_PROG_TYPE_XDP) {
			*prog_fd = bpf_program__fd(prog);
			return obj;
		}
	}
	return NULL;
}

static int setup_xlb(void *obj, update_fn update)
{
	struct xlb_vip_key vk = { .port = htons(80), .proto = 6, .family = XLB_FAMILY_V4 };
	struct xlb_vip_meta vm = { .vip_num = 0, .ring_half = 0 };
	struct xlb_config cfg = { .gw_mac = { 2, 0, 0, 0, 0, 0xfe }, .src4_plen = 16 };
	uint32_t i, val, zero = 0;
	int err = 0;

	vk.addr.v4 = inet_addr("192.0.2.10");
	cfg.src4 = inet_addr("10.255.0.0");
	for (i = 0; !err && i < XLB_RING_SIZE; i++) {
		val = 1 + i % 3;
		err = update(obj, "xlb_rings", &i, &val);
	}
	for (i = 1; i <= 3; i++) {
		struct xlb_real r = { .family = XLB_FAMILY_V4 };

		r.addr.v4 = htonl(0x0a000000 + i);
		err = err ?: update(obj, "xlb_reals", &i, &r);
	}
	err = err ?: update(obj, "xlb_vips", &vk, &vm);
	err = err ?: update(obj, "xlb_config", &zero, &cfg);
	return err ? -1 : 0;
}

static void tcp4(struct pkt4 *p, const char *dst, uint16_t dport, uint8_t flags)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dst, "\x02\0\0\0\0\x01", 6);
	memcpy(p->src, "\x02\0\0\0\0\x02", 6);
	p->proto = htons(0x0800);
	p->ver_ihl = 0x45;
	p->tot_len = htons(40);
	p->ttl = 64;
	p->protocol = 6;
	p->saddr = inet_addr("198.51.100.7");
	p->daddr = inet_addr(dst);
	p->sport = htons(40001);
	p->dport = htons(dport);
	p->doff = 5 << 4;
	p->flags = flags;
}

#ifdef XLB_HAVE_XBPF
static int xbpf_update(void *obj, const char *map, const void *key, const void *val)
{
	struct xbpf_map *m = xbpf_object__find_map(obj, map);

	return m ? xbpf_map__update(m, key, val, XBPF_ANY) : -ENOENT;
}

static double xbpf_run_ns(struct xbpf_vm *vm, const void *pkt, size_t len, int calls, unsigned int *ret)
{
	static uint8_t out[4096];
	unsigned long long total = 0;
	int i;

	for (i = 0; i < calls; i++) {
		struct xbpf_test_run_opts opts = { .sz = sizeof(opts), .data_in = pkt,
			.data_size_in = len, .data_out = out, .data_size_out = sizeof(out), .repeat = 1 };

		if (xbpf_vm__test_run(vm, &opts))
			return -1;
		total += opts.duration;
		*ret = opts.retval;
	}
	return (double)total / calls;
}

/* The three balancer cases under one userspace engine. */
static int xbpf_cases(const char *path, enum xbpf_engine_kind kind, int calls, double *ns, unsigned int *rv)
{
	struct xbpf_vm_opts vopts = { .sz = sizeof(vopts), .engine = kind };
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	struct xbpf_prog *prog = obj ? xbpf_object__find_prog(obj, "xlb_balancer") : NULL;
	struct xbpf_vm *vm = prog ? xbpf_vm__new(prog, &vopts) : NULL;
	struct pkt4 p;

	if (!vm || setup_xlb(obj, xbpf_update) ||
	    (kind == XBPF_ENGINE_JIT && xbpf_vm__engine(vm) != XBPF_ENGINE_JIT))
		return -1;
	tcp4(&p, "192.0.2.10", 80, 0x10);
	ns[0] = xbpf_run_ns(vm, &p, sizeof(p), calls, &rv[0]);
	tcp4(&p, "192.0.2.10", 80, 0x02);
	ns[1] = xbpf_run_ns(vm, &p, sizeof(p), calls, &rv[1]);
	tcp4(&p, "192.0.2.99", 80, 0x10);
	ns[2] = xbpf_run_ns(vm, &p, sizeof(p), calls, &rv[2]);
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	return 0;
}
#endif

/* The seeds' own setup (test_progs.c test_xdp_noinline) and pkt_v4. */
static int setup_seed(struct bpf_object *obj, struct pkt4 *p)
{
	struct { uint32_t v6[4]; uint16_t port; uint16_t family; uint8_t proto; } key;
	struct { uint32_t flags, vip_num; } meta = { 0, 5 };
	struct { uint32_t dst[4]; uint8_t flags; } real = { { 0xfeedbeef } };
	uint32_t ch_key = 11, real_num = 3;
	int err = 0;

	memset(&key, 0, sizeof(key));
	key.proto = 6;
	err |= bpf_map_update_elem(find_fd(obj, "vip_map"), &key, &meta, 0);
	err |= bpf_map_update_elem(find_fd(obj, "ch_rings"), &ch_key, &real_num, 0);
	err |= bpf_map_update_elem(find_fd(obj, "reals"), &real_num, &real, 0);
	memset(p, 0, sizeof(*p));
	p->proto = htons(0x0800);
	p->ver_ihl = 5;
	p->protocol = 6;
	p->tot_len = htons(123);
	p->doff = 5 << 4;
	p->urg = htons(123);
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	int calls = argc > 5 ? atoi(argv[5]) : 100000, xfd = -1, sfd = -1, st;
	struct bpf_object *xobj, *sobj = NULL;
	double est, syn, nonvip, seed = -1;
	char cmd[4096], seed_obj[4096];
	unsigned int r1, r2, r3, r4 = 0;
	struct pkt4 p;
	cpu_set_t cpus;

	if (argc < 5) {
		fprintf(stderr, "usage: %s BALANCER_OBJ SEED_SCRIPT SEEDS_DIR WORKDIR [CALLS]\n", argv[0]);
		return 2;
	}
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	libbpf_set_print(NULL);
	xobj = load(argv[1], &xfd);
	if (!xobj || setup_xlb(xobj, kernel_update)) {
		printf("SKIP: cannot load or set up %s (root needed)\n", argv[1]);
		return 77;
	}
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s' '%s' '%s' >/dev/null 2>&1", argv[2], argv[3], argv[4]);
	st = system(cmd);
	snprintf(seed_obj, sizeof(seed_obj), "%s/test_xdp_noinline.o", argv[4]);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		sobj = load(seed_obj, &sfd);
	if (sobj && setup_seed(sobj, &p))
		sobj = NULL;

	tcp4(&p, "192.0.2.10", 80, 0x10);
	est = run_ns(xfd, &p, sizeof(p), calls, &r1);
	tcp4(&p, "192.0.2.10", 80, 0x02);
	syn = run_ns(xfd, &p, sizeof(p), calls, &r2);
	tcp4(&p, "192.0.2.99", 80, 0x10);
	nonvip = run_ns(xfd, &p, sizeof(p), calls, &r3);
	if (sobj) {
		setup_seed(sobj, &p);
		seed = run_ns(sfd, &p, sizeof(p), calls, &r4);
	}
	printf("BPF_PROG_TEST_RUN, repeat 1 x %d calls, mean kernel-measured ns per packet\n", calls);
	printf("%-34s %8s %8s %s\n", "case", "ns/pkt", "retval", "vs seed test_xdp_noinline");
	if (seed > 0)
		printf("%-34s %8.1f %8u %8.2fx\n", "seed test_xdp_noinline (pkt_v4)", seed, r4, 1.0);
	else
		printf("%-34s %8s %8s (seed program not built: %s)\n", "seed test_xdp_noinline", "-", "-",
		       "build-seed-progs.py failed or seeds absent");
#define ROW(name, v, r)                                                                  \
	do {                                                                             \
		if (seed > 0)                                                            \
			printf("%-34s %8.1f %8u %8.2fx\n", name, v, r, (v) / seed);       \
		else                                                                     \
			printf("%-34s %8.1f %8u\n", name, v, r);                         \
	} while (0)
	ROW("xlb established flow (LRU hit)", est, r1);
	ROW("xlb new flow (SYN: ring + insert)", syn, r2);
	ROW("xlb non-VIP (XDP_PASS)", nonvip, r3);
#ifdef XLB_HAVE_XBPF
	{
		static const char *const names[] = { "established", "new flow", "non-VIP" };
		enum xbpf_engine_kind kinds[] = { XBPF_ENGINE_INTERP, XBPF_ENGINE_JIT };
		double ns[3];
		unsigned int rv[3];
		int k, c;

		printf("\nxlb's userspace engines, same packets and method (xbpf_vm__test_run):\n");
		for (k = 0; k < 2; k++) {
			if (xbpf_cases(argv[1], kinds[k], calls, ns, rv)) {
				printf("%-10s not available\n", xbpf_engine_name(kinds[k]));
				continue;
			}
			for (c = 0; c < 3; c++)
				printf("xlb %-6s %-22s %8.1f %8u %8.2fx kernel\n", xbpf_engine_name(kinds[k]),
				       names[c], ns[c], rv[c], ns[c] / (c == 0 ? est : c == 1 ? syn : nonvip));
		}
	}
#endif
	return (r1 == 3 && r2 == 3 && r3 == 2) ? 0 : 1;
}
