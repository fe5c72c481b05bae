// SPDX-License-Identifier: MIT
/*
 * xlb-decap - set up a real: attach dataplane/decap.bpf.o (XDP) to an
 * interface and list the host addresses whose encapsulated packets it
 * strips.  With no address the program passes everything untouched, which
 * also serves as the XDP program a veth peer needs to receive XDP_TX frames.
 *
 *   xlb-decap attach DEV [ADDR...] [--object FILE] [--gue-port N] [--skb]
 *   xlb-decap detach DEV
 *
 * The program stays attached after xlb-decap exits (the kernel holds it).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xlb_control.h"
#include "xlb_shared.h"

#ifndef XLB_DATADIR
#define XLB_DATADIR "/usr/share/xlb"
#endif

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int usage(void)
{
	fprintf(stderr, "Usage: xlb-decap attach DEV [ADDR...] [--object FILE] [--gue-port N] [--skb]\n"
			"       xlb-decap detach DEV\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *obj_path = XLB_DATADIR "/decap.bpf.o", *dev;
	struct xlb_ip addrs[64];
	size_t naddr = 0;
	struct xlb_decap_config cfg = { 0 };
	struct bpf_object *obj;
	struct bpf_program *prog;
	bool skb = false;
	int ifindex, ret, fd;
	__u32 zero = 0;

	if (argc < 3)
		return usage();
	dev = argv[2];
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex) {
		fprintf(stderr, "xlb-decap: no interface %s\n", dev);
		return 1;
	}
	libbpf_set_print(quiet);
	if (!strcmp(argv[1], "detach")) {
		ret = bpf_xdp_detach(ifindex, 0, NULL);
		if (ret)
			fprintf(stderr, "xlb-decap: detach from %s: %s\n", dev, strerror(-ret));
		return ret ? 1 : 0;
	}
	if (strcmp(argv[1], "attach"))
		return usage();
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--object") && i + 1 < argc) {
			obj_path = argv[++i];
		} else if (!strcmp(argv[i], "--gue-port") && i + 1 < argc) {
			cfg.gue_port = (__u16)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--skb")) {
			skb = true;
		} else if (naddr < 64 && !xlb_addr_parse(argv[i], &addrs[naddr])) {
			naddr++;
		} else {
			fprintf(stderr, "xlb-decap: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	obj = bpf_object__open_file(obj_path, NULL);
	if (libbpf_get_error(obj)) {
		fprintf(stderr, "xlb-decap: cannot open %s\n", obj_path);
		return 1;
	}
	ret = bpf_object__load(obj);
	if (ret) {
		fprintf(stderr, "xlb-decap: cannot load %s: %s\n", obj_path, strerror(-ret));
		return 1;
	}
	fd = bpf_object__find_map_fd_by_name(obj, "xlb_decap_addrs");
	for (size_t i = 0; i < naddr && fd >= 0; i++) {
		struct xlb_addr_key k = { 0 };
		__u32 one = 1;

		memcpy(k.addr.bytes, addrs[i].bytes, addrs[i].family == AF_INET ? 4 : 16);
		k.family = addrs[i].family == AF_INET ? XLB_FAMILY_V4 : XLB_FAMILY_V6;
		if (bpf_map_update_elem(fd, &k, &one, BPF_ANY)) {
			fprintf(stderr, "xlb-decap: cannot add address: %s\n", strerror(errno));
			return 1;
		}
	}
	fd = bpf_object__find_map_fd_by_name(obj, "xlb_decap_config");
	if (fd >= 0 && bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY)) {
		fprintf(stderr, "xlb-decap: cannot write config: %s\n", strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "xlb_decap_xdp");
	if (!prog) {
		fprintf(stderr, "xlb-decap: %s has no xlb_decap_xdp program\n", obj_path);
		return 1;
	}
	ret = -1;
	if (!skb)
		ret = bpf_xdp_attach(ifindex, bpf_program__fd(prog), XDP_FLAGS_DRV_MODE, NULL);
	if (ret) {
		if (!skb)
			fprintf(stderr, "xlb-decap: native XDP on %s failed (%s), using generic XDP\n",
				dev, strerror(-ret));
		ret = bpf_xdp_attach(ifindex, bpf_program__fd(prog), XDP_FLAGS_SKB_MODE, NULL);
	}
	if (ret) {
		fprintf(stderr, "xlb-decap: cannot attach to %s: %s\n", dev, strerror(-ret));
		return 1;
	}
	bpf_object__close(obj);
	return 0;
}
