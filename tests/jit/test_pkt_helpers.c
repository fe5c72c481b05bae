/* SPDX-License-Identifier: MIT */
/*
 * test_pkt_helpers.c - the packet helpers of helpers_net.c run through
 * whole programs (progs/pkt_helpers.bpf.c) on the interpreter, the JIT
 * and, natively, the kernel's BPF_PROG_TEST_RUN, which is the reference:
 * for every program and input packet the return value, the output packet
 * and the program's record of what each helper returned and changed (its
 * `out` map) must be the same on every engine.  The inputs reach the
 * helpers' edges: offsets and lengths past the frame, MTUs on both sides
 * of a device's (a veth of MTU 1400 made for the run, and lo),
 * devices that do not exist, bad flags, one and two VLAN tags pushed onto
 * and popped off frames with none, one and two tags already in them.
 *
 * usage: test-pkt-helpers OBJ [-v]
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_check.h"
#include "testbed.h"

#define PKT_MAX 128
#define DUMMY_MTU 1400

struct result {
	int64_t ret[4];
	uint32_t mtu;
	uint32_t len;
	uint32_t vlan_present, vlan_tci, vlan_proto, protocol;
	uint64_t buff_len;
};

struct outcome {
	int err;
	uint32_t retval, len;
	uint8_t pkt[PKT_MAX];
	struct result res;
};

struct input {
	uint8_t pkt[PKT_MAX];
	uint32_t len;
	char what[96];
};

static bool verbose;
static char mtu_dev[IF_NAMESIZE];
static uint32_t mtu_ifindex;

static void mtu_dev_down(void)
{
	char cmd[128];

	if (!mtu_dev[0])
		return;
	snprintf(cmd, sizeof(cmd), "ip link del %s 2>/dev/null", mtu_dev);
	if (system(cmd) != 0)
		mtu_dev[0] = '\0'; /* already gone */
}

/* A device with a known MTU for bpf_check_mtu; none (ifindex 0) when it cannot be made here. */
static void mtu_dev_up(void)
{
	char cmd[160];

	snprintf(mtu_dev, sizeof(mtu_dev), "xlbtmtu%d", (int)getpid() % 100000);
	/* a veth (this kernel may lack the dummy module); deleting one end takes both */
	snprintf(cmd, sizeof(cmd), "ip link add %s mtu %d type veth peer name %sp 2>/dev/null",
		 mtu_dev, DUMMY_MTU, mtu_dev);
	if (system(cmd)) {
		printf("note: no veth (%s): its MTU cases are left out\n", mtu_dev);
		mtu_dev[0] = '\0';
		return;
	}
	atexit(mtu_dev_down);
	mtu_ifindex = if_nametoindex(mtu_dev);
}

static void base_pkt(struct input *in, uint32_t len, uint16_t ethertype)
{
	memset(in, 0, sizeof(*in));
	for (uint32_t i = 0; i < PKT_MAX; i++)
		in->pkt[i] = (uint8_t)(i * 7 + 3);
	in->pkt[12] = (uint8_t)(ethertype >> 8);
	in->pkt[13] = (uint8_t)ethertype;
	in->len = len;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v)); /* the programs read host order */
}

static int run(enum testbed_engine_kind kind, const char *obj, const char *prog,
	       const struct input *in, struct outcome *o)
{
	struct testbed_prog_src src = { .path = obj, .prog_name = prog };
	struct testbed_engine *e;
	uint32_t zero = 0;
	int err;

	memset(o, 0, sizeof(*o));
	err = testbed_engine__open(kind, &src, NULL, &e);
	if (err)
		return err;
	{
		XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = in->pkt, .data_size_in = in->len,
			  .data_out = o->pkt, .data_size_out = sizeof(o->pkt), .repeat = 1);

		o->err = testbed_engine__test_run(e, &opts);
		o->retval = opts.retval;
		o->len = opts.data_size_out;
	}
	err = testbed_engine__map_lookup(e, "out", &zero, &o->res);
	testbed_engine__close(e);
	return err;
}

static void show(const char *who, const struct outcome *o)
{
	const struct result *r = &o->res;

	printf("    %-7s err %d retval %u len %u ret %lld %lld %lld %lld mtu %u skb len %u "
	       "vlan %u/%#x/%#x proto %#x buff_len %llu\n",
	       who, o->err, o->retval, o->len, (long long)r->ret[0], (long long)r->ret[1],
	       (long long)r->ret[2], (long long)r->ret[3], r->mtu, r->len, r->vlan_present,
	       r->vlan_tci, r->vlan_proto, r->protocol, (unsigned long long)r->buff_len);
}

static bool same(const struct outcome *a, const struct outcome *b)
{
	return a->err == b->err && a->retval == b->retval && a->len == b->len &&
	       !memcmp(a->pkt, b->pkt, a->len < PKT_MAX ? a->len : PKT_MAX) &&
	       !memcmp(&a->res, &b->res, sizeof(a->res));
}

static void check(const char *obj, const char *prog, const struct input *in)
{
	static const enum testbed_engine_kind users[] = { TESTBED_ENGINE_INTERP, TESTBED_ENGINE_JIT };
	struct outcome ref, o;
	const char *ref_name = "kernel";
	int err;

	err = run(TESTBED_ENGINE_KERNEL, obj, prog, in, &ref);
	if (err == -EOPNOTSUPP) { /* no kernel (the arm64 build): the interpreter is the reference */
		ref_name = "interp";
		err = run(TESTBED_ENGINE_INTERP, obj, prog, in, &ref);
	}
	CHECK(!err, "%s %s: reference run", prog, in->what);
	if (err) {
		printf("FAIL %s %s: the reference cannot run it (%d)\n", prog, in->what, err);
		return;
	}
	for (size_t k = 0; k < sizeof(users) / sizeof(users[0]); k++) {
		const char *name = testbed_engine_kind_name(users[k]);
		bool ok;

		err = run(users[k], obj, prog, in, &o);
		ok = !err && same(&ref, &o);
		CHECK(ok, "%s %s on %s", prog, in->what, name);
		if (!ok || verbose) {
			printf("%s %s %s: %s vs %s\n", ok ? "ok  " : "FAIL", prog, in->what, name,
			       ref_name);
			show(ref_name, &ref);
			show(name, &o);
		}
	}
	if (!verbose)
		printf("ok   %s %s (ret %lld)\n", prog, in->what, (long long)ref.res.ret[0]);
}

static void xdp_bytes(const char *obj)
{
	static const struct { uint16_t off; uint8_t op; uint32_t len; } cases[] = {
		{ 0, 0, 64 },	   { 30, 0, 64 },  { 56, 0, 64 }, { 57, 0, 64 }, { 64, 0, 64 },
		{ 0xffff, 0, 64 }, { 0, 1, 64 },   { 50, 1, 64 }, { 57, 1, 64 }, { 60, 1, 64 },
		{ 0, 1, 24 },	   { 16, 1, 24 },  { 17, 1, 24 }, { 8, 0, 17 },  { 10, 0, 17 },
	};
	struct input in;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		base_pkt(&in, cases[i].len, 0x0800);
		in.pkt[14] = (uint8_t)cases[i].off;
		in.pkt[15] = (uint8_t)(cases[i].off >> 8);
		in.pkt[16] = cases[i].op;
		snprintf(in.what, sizeof(in.what), "%s %u bytes at %u of %u",
			 cases[i].op ? "load+store" : "store", 8, cases[i].off, cases[i].len);
		check(obj, "xdp_bytes", &in);
	}
}

static void mtu(const char *obj, const char *prog)
{
	struct { uint32_t ifindex, mtu_len; int32_t diff; uint32_t flags; uint32_t len; } cases[] = {
		{ 0, 0, 0, 0, 64 },		   /* the packet's device: lo */
		{ 1, 0, 0, 0, 64 },		   /* lo by its index */
		{ 1, 1500, 64000, 0, 64 },	   /* lo's 65536 exceeded */
		{ 0x7ffffff0, 0, 0, 0, 64 },	   /* no such device */
		{ 1, 0, 0, 4, 64 },		   /* unknown flag */
		{ 1, 0, 0, 1, 64 },		   /* BPF_MTU_CHK_SEGS (tc only) */
		{ 1, 0, 5, 1, 64 },		   /* ... with a length change */
		{ 1, 100, 0, 1, 64 },		   /* ... with a length given */
		{ mtu_ifindex, 0, 0, 0, 64 },
		{ mtu_ifindex, 1400, 0, 0, 64 },
		{ mtu_ifindex, 1400, 1, 0, 64 },
		{ mtu_ifindex, 1401, -1, 0, 64 },
		{ mtu_ifindex, 0, 1350, 0, 64 },
		{ mtu_ifindex, 0, 1351, 0, 64 },
		{ mtu_ifindex, 0, -100, 0, 64 },
		{ mtu_ifindex, 0, 1300, 0, 120 },
	};
	struct input in;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (i >= 8 && !mtu_ifindex)
			break;
		base_pkt(&in, cases[i].len, 0x0800);
		put32(in.pkt + 14, cases[i].ifindex);
		put32(in.pkt + 18, cases[i].mtu_len);
		put32(in.pkt + 22, (uint32_t)cases[i].diff);
		put32(in.pkt + 26, cases[i].flags);
		snprintf(in.what, sizeof(in.what), "dev %s mtu_len %u diff %d flags %u, %u bytes",
			 cases[i].ifindex == mtu_ifindex ? "veth(1400)" :
			 cases[i].ifindex == 1		  ? "lo" :
			 cases[i].ifindex		  ? "absent" : "0",
			 cases[i].mtu_len, cases[i].diff, cases[i].flags, cases[i].len);
		check(obj, prog, &in);
	}
}

static void vlan(const char *obj)
{
	static const uint8_t ops[][4] = {
		{ 1 }, { 2 }, { 3 }, { 1, 1 }, { 2, 1 }, { 1, 1, 1 }, { 4 }, { 4, 4 },
		{ 1, 4 }, { 1, 1, 4 }, { 1, 1, 4, 4 }, { 4, 1 }, { 4, 4, 4 },
	};
	static const char *const frames[] = { "untagged", "802.1Q", "802.1ad+802.1Q" };
	struct input in;

	for (int f = 0; f < 3; f++) {
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			char seq[16] = "";

			base_pkt(&in, 64, f == 0 ? 0x0800 : f == 1 ? 0x8100 : 0x88a8);
			if (f >= 1) { /* tag 0x05a, then IPv4 or a second tag */
				in.pkt[14] = 0x00, in.pkt[15] = 0x5a;
				in.pkt[16] = f == 1 ? 0x08 : 0x81, in.pkt[17] = 0x00;
			}
			if (f == 2) {
				in.pkt[18] = 0x00, in.pkt[19] = 0x6b, in.pkt[20] = 0x08, in.pkt[21] = 0x00;
			}
			memcpy(in.pkt + 30, ops[i], 4);
			for (int k = 0; k < 4 && ops[i][k]; k++)
				seq[k] = "-QAXo"[ops[i][k]]; /* push Q/ad/unknown type, pop */
			snprintf(in.what, sizeof(in.what), "%s, ops %s", frames[f], seq);
			check(obj, "tc_vlan", &in);
		}
	}
}

int main(int argc, char **argv)
{
	const char *obj = argc > 1 ? argv[1] : NULL;

	verbose = argc > 2 && !strcmp(argv[2], "-v");
	if (!obj) {
		fprintf(stderr, "usage: test-pkt-helpers OBJ [-v]\n");
		return 2;
	}
	mtu_dev_up();
	xdp_bytes(obj);
	mtu(obj, "xdp_mtu");
	mtu(obj, "tc_mtu");
	vlan(obj);
	TEST_DONE("test-pkt-helpers");
}
