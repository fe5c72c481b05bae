/* SPDX-License-Identifier: MIT */
/*
 * seed_lb.c - the seeds' L4 LB harness setup (see testbed.h), written from
 * the test_progs.c hunks of seed patches 004 and 005.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testbed.h"

static const char *tc_action_name(uint32_t retval)
{
	static const char *const names[] = { "TC_ACT_OK", "TC_ACT_RECLASSIFY", "TC_ACT_SHOT",
					     "TC_ACT_PIPE", "TC_ACT_STOLEN", "TC_ACT_QUEUED",
					     "TC_ACT_REPEAT", "TC_ACT_REDIRECT" };

	if (retval == (uint32_t)-1)
		return "TC_ACT_UNSPEC";
	return retval < 8 ? names[retval] : "?";
}

static const char *xdp_action_name(uint32_t retval)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX",
					     "XDP_REDIRECT" };

	return retval < 5 ? names[retval] : "?";
}

const struct seed_lb_prog seed_lb_progs[] = {
	{ "test_l4lb_noinline", "balancer_ingress", XBPF_PROG_SCHED_CLS, 7 /* TC_ACT_REDIRECT */,
	  tc_action_name },
	{ "test_xdp_noinline", "balancer_ingress", XBPF_PROG_XDP, 1 /* XDP_DROP */,
	  xdp_action_name },
};
const size_t seed_lb_prog_cnt = sizeof(seed_lb_progs) / sizeof(seed_lb_progs[0]);

/* Layouts of the harness's map keys and values (identical in both programs). */
struct seed_vip {
	uint32_t daddr[4];
	uint16_t dport;
	uint16_t family;
	uint8_t protocol;
};

struct seed_vip_meta {
	uint32_t flags;
	uint32_t vip_num;
};

struct seed_real_definition {
	uint32_t dst[4];
	uint8_t flags;
};

static void put16be(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

enum { ETH_LEN = 14, IP4_LEN = 20, IP6_LEN = 40, TCP_LEN = 20, UDP_LEN = 8, ICMP_LEN = 8 };

/*
 * The harness's pkt_v4: Ethernet + IPv4 (ihl 5, proto TCP, tot_len
 * MAGIC_BYTES, everything else zero) + TCP (urg_ptr 123 in host order).
 */
static uint32_t make_v4(uint8_t *p, uint8_t proto, uint32_t l4_len)
{
	memset(p, 0, SEED_PKT_MAX);
	put16be(p + 12, 0x0800);
	p[ETH_LEN] = 0x05;
	put16be(p + ETH_LEN + 2, SEED_MAGIC_BYTES);
	p[ETH_LEN + 9] = proto;
	return ETH_LEN + IP4_LEN + l4_len;
}

/* The harness's pkt_v6: Ethernet + IPv6 (next header TCP, payload_len MAGIC_BYTES) + TCP. */
static uint32_t make_v6(uint8_t *p, uint8_t proto, uint32_t l4_len)
{
	memset(p, 0, SEED_PKT_MAX);
	put16be(p + 12, 0x86dd);
	put16be(p + ETH_LEN + 4, SEED_MAGIC_BYTES);
	p[ETH_LEN + 6] = proto;
	return ETH_LEN + IP6_LEN + l4_len;
}

static void set_tcp_urg_ptr(uint8_t *tcp)
{
	uint16_t urg = 123; /* the harness stores it in host byte order */

	memcpy(tcp + 18, &urg, 2);
}

static struct seed_lb_packet packets[8];
static size_t packet_cnt;

static void build_packets(void)
{
	struct seed_lb_packet *p;

	if (packet_cnt)
		return;
	p = &packets[packet_cnt++];
	p->desc = "pkt_v4: IPv4 TCP to the VIP";
	p->harness = true;
	p->len = make_v4(p->data, 6, TCP_LEN);
	set_tcp_urg_ptr(p->data + ETH_LEN + IP4_LEN);

	p = &packets[packet_cnt++];
	p->desc = "pkt_v6: IPv6 TCP to the VIP";
	p->harness = true;
	p->len = make_v6(p->data, 6, TCP_LEN);
	set_tcp_urg_ptr(p->data + ETH_LEN + IP6_LEN);

	p = &packets[packet_cnt++];
	p->desc = "IPv4 TCP SYN, other client (not in ring)";
	p->len = make_v4(p->data, 6, TCP_LEN);
	p->data[ETH_LEN + 12] = 10; /* saddr 10.0.0.7: a hash the seeds refuse */
	p->data[ETH_LEN + 15] = 7;
	p->data[ETH_LEN + IP4_LEN + 13] = 0x02;

	p = &packets[packet_cnt++];
	p->desc = "IPv4 UDP port 53 (no UDP VIP)";
	p->len = make_v4(p->data, 17, UDP_LEN);
	put16be(p->data + ETH_LEN + IP4_LEN + 2, 53);

	p = &packets[packet_cnt++];
	p->desc = "IPv4 ICMP echo request";
	p->len = make_v4(p->data, 1, ICMP_LEN + 8);
	p->data[ETH_LEN + IP4_LEN] = 8;

	p = &packets[packet_cnt++];
	p->desc = "IPv4 fragment";
	p->len = make_v4(p->data, 6, TCP_LEN);
	put16be(p->data + ETH_LEN + 6, 0x2000); /* more fragments */

	p = &packets[packet_cnt++];
	p->desc = "ARP";
	memset(p->data, 0, SEED_PKT_MAX);
	put16be(p->data + 12, 0x0806);
	p->len = 42;

	p = &packets[packet_cnt++];
	p->desc = "truncated TCP header";
	p->len = make_v4(p->data, 6, TCP_LEN - 10);
}

size_t seed_lb_packets(const struct seed_lb_packet **ret_packets)
{
	build_packets();
	*ret_packets = packets;
	return packet_cnt;
}

int seed_lb_setup(struct testbed_engine *e)
{
	struct seed_vip key = { .protocol = 6 };
	struct seed_vip_meta value = { .vip_num = SEED_VIP_NUM };
	struct seed_real_definition real_def = { .dst = { SEED_MAGIC_VAL } };
	uint32_t ch_key = 11, real_num = 3;
	struct xbpf_map_spec spec;
	int err;

	/* Catch a seed whose layouts changed rather than feed it garbage. */
	err = testbed_engine__map_spec(e, "vip_map", &spec);
	if (err)
		return err;
	if (spec.key_size != sizeof(key) || spec.value_size != sizeof(value))
		return -EINVAL;
	err = testbed_engine__map_spec(e, "reals", &spec);
	if (err)
		return err;
	if (spec.value_size != sizeof(real_def))
		return -EINVAL;

	err = testbed_engine__map_update(e, "vip_map", &key, &value);
	if (!err)
		err = testbed_engine__map_update(e, "ch_rings", &ch_key, &real_num);
	if (!err)
		err = testbed_engine__map_update(e, "reals", &real_num, &real_def);
	return err;
}

int seed_lb_stats(struct testbed_engine *e, uint32_t key, uint64_t *ret_bytes, uint64_t *ret_pkts)
{
	int cnt = testbed_engine__map_value_cnt(e, "stats");
	uint64_t *values;
	int err, i;

	if (cnt < 0)
		return cnt;
	values = calloc(cnt, 2 * sizeof(uint64_t));
	if (!values)
		return -ENOMEM;
	err = testbed_engine__map_lookup(e, "stats", &key, values);
	*ret_bytes = *ret_pkts = 0;
	for (i = 0; !err && i < cnt; i++) {
		*ret_bytes += values[2 * i];
		*ret_pkts += values[2 * i + 1];
	}
	free(values);
	return err;
}

int seed_lb_build(const char *script, const char *seeds_dir, const char *outdir)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execlp("python3", "python3", script, seeds_dir, outdir, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

void seed_lb_run(struct testbed_engine *engine, const struct seed_lb_packet *pkt, int repeat,
		 struct seed_lb_run *res)
{
	XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = pkt->data, .data_size_in = pkt->len,
		  .data_out = res->out, .data_size_out = sizeof(res->out), .repeat = repeat);

	memset(res->out, 0, sizeof(res->out));
	res->err = testbed_engine__test_run(engine, &opts);
	res->retval = opts.retval;
	res->size = opts.data_size_out;
}
