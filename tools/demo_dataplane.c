/* SPDX-License-Identifier: MIT */
/*
 * demo_dataplane.c - xlb-demo on dataplane/balancer.bpf.o with an embedded
 * default: VIP 10.0.0.1:80/TCP balanced over reals 192.168.1.1 and
 * 192.168.1.2 (IPIP), outer source 172.16.0.0/16, and a handful of packets
 * a load balancer meets.  The same setup goes into the kernel and into the
 * userspace engine; the table shows both verdicts and whether the output
 * packets are byte-identical.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo_dataplane.h"
#include "xlb_shared.h"

#define PKT_MAX 256

struct demo_packet {
	const char *desc;
	uint8_t data[PKT_MAX];
	uint32_t len;
};

static const char *xdp_action(uint32_t retval)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX",
					     "XDP_REDIRECT" };

	return retval < 5 ? names[retval] : "?";
}

static uint16_t ip_csum(const uint8_t *hdr, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)hdr[i] << 8 | hdr[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Ethernet + IPv4 (valid header and checksum) + l4_len bytes of L4 header. */
static uint8_t *ipv4_packet(struct demo_packet *p, const char *src, const char *dst,
			    uint8_t proto, uint32_t l4_len)
{
	static const uint8_t dst_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x10 };
	static const uint8_t src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x20 };
	uint8_t *ip = p->data + 14;
	uint16_t tot = 20 + l4_len, csum;

	memset(p->data, 0, sizeof(p->data));
	memcpy(p->data, dst_mac, 6);
	memcpy(p->data + 6, src_mac, 6);
	p->data[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = tot >> 8;
	ip[3] = tot & 0xff;
	ip[8] = 64;
	ip[9] = proto;
	inet_pton(AF_INET, src, ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	csum = ip_csum(ip, 20);
	ip[10] = csum >> 8;
	ip[11] = csum & 0xff;
	p->len = 14 + tot;
	return ip + 20;
}

static void ports(uint8_t *l4, uint16_t sport, uint16_t dport)
{
	l4[0] = sport >> 8;
	l4[1] = sport & 0xff;
	l4[2] = dport >> 8;
	l4[3] = dport & 0xff;
}

static size_t build_packets(struct demo_packet *pk)
{
	size_t n = 0;
	uint8_t *l4;

	pk[n].desc = "TCP SYN 198.51.100.7:40000 -> VIP :80";
	l4 = ipv4_packet(&pk[n], "198.51.100.7", "10.0.0.1", 6, 20);
	ports(l4, 40000, 80);
	l4[12] = 0x50;
	l4[13] = 0x02;
	n++;

	pk[n].desc = "TCP ACK, same flow";
	l4 = ipv4_packet(&pk[n], "198.51.100.7", "10.0.0.1", 6, 20);
	ports(l4, 40000, 80);
	l4[12] = 0x50;
	l4[13] = 0x10;
	n++;

	pk[n].desc = "TCP SYN 203.0.113.9:5555 -> VIP :80";
	l4 = ipv4_packet(&pk[n], "203.0.113.9", "10.0.0.1", 6, 20);
	ports(l4, 5555, 80);
	l4[12] = 0x50;
	l4[13] = 0x02;
	n++;

	pk[n].desc = "TCP SYN 198.51.100.23:33000 -> VIP :80";
	l4 = ipv4_packet(&pk[n], "198.51.100.23", "10.0.0.1", 6, 20);
	ports(l4, 33000, 80);
	l4[12] = 0x50;
	l4[13] = 0x02;
	n++;

	pk[n].desc = "TCP SYN -> 10.0.0.1:443 (no such VIP)";
	l4 = ipv4_packet(&pk[n], "198.51.100.7", "10.0.0.1", 6, 20);
	ports(l4, 40001, 443);
	l4[12] = 0x50;
	l4[13] = 0x02;
	n++;

	pk[n].desc = "UDP -> 10.0.0.1:80 (VIP is TCP only)";
	l4 = ipv4_packet(&pk[n], "198.51.100.7", "10.0.0.1", 17, 8);
	ports(l4, 5353, 80);
	l4[5] = 8;
	n++;

	pk[n].desc = "ICMP echo request -> VIP";
	l4 = ipv4_packet(&pk[n], "198.51.100.7", "10.0.0.1", 1, 16);
	l4[0] = 8;
	n++;

	pk[n].desc = "TCP SYN -> 192.0.2.1 (host traffic)";
	l4 = ipv4_packet(&pk[n], "198.51.100.7", "192.0.2.1", 6, 20);
	ports(l4, 40002, 22);
	l4[12] = 0x50;
	l4[13] = 0x02;
	n++;

	pk[n].desc = "ARP";
	memset(pk[n].data, 0xff, 6);
	pk[n].data[12] = 0x08;
	pk[n].data[13] = 0x06;
	pk[n].len = 42;
	n++;

	pk[n].desc = "truncated IPv4 header";
	ipv4_packet(&pk[n], "198.51.100.7", "10.0.0.1", 6, 20);
	pk[n].len = 14 + 12;
	n++;
	return n;
}

static int setup(struct testbed_engine *e)
{
	struct xlb_vip_key vip = { .port = htons(80), .proto = 6, .family = XLB_FAMILY_V4 };
	struct xlb_vip_meta meta = { .vip_num = 0, .ring_half = 0, .encap = XLB_ENCAP_IP };
	struct xlb_addr_key addr = { .family = XLB_FAMILY_V4 };
	struct xlb_real real = { .family = XLB_FAMILY_V4 };
	struct xlb_config cfg = { .src4_plen = 16 };
	uint32_t zero = 0, idx, real_num;
	int err;

	inet_pton(AF_INET, "10.0.0.1", &vip.addr.v4);
	addr.addr = vip.addr;
	err = testbed_engine__map_update(e, "xlb_vips", &vip, &meta);
	err = err ?: testbed_engine__map_update(e, "xlb_vip_addrs", &addr, &zero);
	for (real_num = 1; !err && real_num <= 2; real_num++) {
		char text[32];

		snprintf(text, sizeof(text), "192.168.1.%u", real_num);
		inet_pton(AF_INET, text, &real.addr.v4);
		err = testbed_engine__map_update(e, "xlb_reals", &real_num, &real);
	}
	/* VIP 0, half 0 of the Maglev ring: reals 1 and 2 alternating. */
	for (idx = 0; !err && idx < XLB_RING_SIZE; idx++) {
		real_num = 1 + idx % 2;
		err = testbed_engine__map_update(e, "xlb_rings", &idx, &real_num);
	}
	memcpy(cfg.gw_mac, "\x02\x00\x00\x00\x00\x01", 6);
	inet_pton(AF_INET, "172.16.0.0", &cfg.src4);
	err = err ?: testbed_engine__map_update(e, "xlb_config", &zero, &cfg);
	return err;
}

/* "XDP_TX/74 ->192.168.1.2" for an IPIP-encapsulated result. */
static void format_cell(const struct tool_run_cell *c, char *buf, size_t len)
{
	char real[INET_ADDRSTRLEN] = "";

	if (c->err == -EOPNOTSUPP) {
		snprintf(buf, len, "n/a");
		return;
	}
	if (c->err) {
		snprintf(buf, len, "run failed (%d)", c->err);
		return;
	}
	if ((c->retval == 3 || c->retval == 4) && c->len >= 34 && c->out[12] == 0x08 &&
	    c->out[13] == 0x00 && c->out[14 + 9] == 4)
		inet_ntop(AF_INET, c->out + 14 + 16, real, sizeof(real));
	snprintf(buf, len, "%s/%u%s%s", xdp_action(c->retval), c->len, real[0] ? " ->" : "", real);
}

int demo_dataplane(const char *obj_path, enum testbed_engine_kind kind, int *ret_mismatches)
{
	struct testbed_prog_src src = { .path = obj_path, .prog_name = "xlb_balancer" };
	struct testbed_engine *kern, *user;
	struct demo_packet pk[12];
	char ucol[40];
	const char *note = "";
	size_t i, n;
	int user_err;

	if (access(obj_path, R_OK))
		return -ENOENT;
	testbed_engine__open_pair(kind, &src, "xlb_balancer", &kern, &user, &note, &user_err);
	if (kern && setup(kern))
		printf("(kernel map setup failed)\n");
	if (user && setup(user))
		printf("(%s map setup failed)\n", testbed_engine_kind_name(kind));

	printf("\ndataplane/balancer.bpf.o: xlb_balancer (XDP)\n"
	       "  VIP 10.0.0.1:80/TCP -> reals 192.168.1.1, 192.168.1.2 (IPIP, outer src 172.16/16)\n");
	snprintf(ucol, sizeof(ucol), "%s%s", testbed_engine_kind_name(kind), note);
	printf("  %-40s  %-28s  %-28s  %s\n", "packet", "kernel action/len", ucol, "match");
	printf("  %-40s  %-28s  %-28s  %s\n", "------", "-----------------", "---------------",
	       "-----");
	n = build_packets(pk);
	for (i = 0; i < n; i++) {
		struct tool_run_cell kc, uc;
		char kbuf[48], ubuf[48];
		const char *match;

		testbed_engine__run_cell(kern, pk[i].data, pk[i].len, &kc);
		testbed_engine__run_cell(user, pk[i].data, pk[i].len, &uc);
		format_cell(&kc, kbuf, sizeof(kbuf));
		format_cell(&uc, ubuf, sizeof(ubuf));
		if (!kern || !user)
			match = "-";
		else if (!kc.err && !uc.err && kc.retval == uc.retval && kc.len == uc.len &&
			 !memcmp(kc.out, uc.out, kc.len))
			match = "yes";
		else if (kc.err && uc.err)
			match = "both failed";
		else
			match = "NO";
		if (!strcmp(match, "NO"))
			(*ret_mismatches)++;
		printf("  %-40s  %-28s  %-28s  %s\n", pk[i].desc, kbuf, ubuf, match);
	}
	testbed_engine__close(user);
	testbed_engine__close(kern);
	return user_err;
}
