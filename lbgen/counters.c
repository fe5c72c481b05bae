// SPDX-License-Identifier: MIT
/*
 * counters.c - lbgen's receiver side: what the load balancer saw and what
 * left it, so that a report shows more than what was sent.
 *
 * --lb-dev DEV[@NETNS]: the XDP program attached to DEV (found by netlink
 * inside NETNS), its maps by name: xlb's per-CPU stats (per-VIP packets,
 * XDP_TX/REDIRECT events, pass and drop reasons) or the seeds'
 * test_xdp_noinline `stats` map.  --egress DEV[@NETNS]: DEV's counters from
 * /proc/thread-self/net/dev read inside NETNS (on veth, tx counts what the
 * peer's XDP program received).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lbgen.h"
#include "xlb_shared.h"

struct lbgen_counters {
	char egress_dev[64], egress_ns[64];
	bool have_egress;
	int vip_fd, event_fd, reason_fd, seed_fd;
	int nr_cpus;
};

int lbgen_split_dev(const char *spec, char *dev, char *netns)
{
	const char *at = strchr(spec, '@');
	size_t dl = at ? (size_t)(at - spec) : strlen(spec);

	if (!dl || dl >= 64 || (at && (!at[1] || strlen(at + 1) >= 64)))
		return -EINVAL;
	memcpy(dev, spec, dl);
	dev[dl] = '\0';
	snprintf(netns, 64, "%s", at ? at + 1 : "");
	return 0;
}

/* Run fn(arg) with the calling thread inside netns ("" : where it is). */
static int in_netns(const char *netns, int (*fn)(void *), void *arg)
{
	char path[128];
	int self, target, err, back;

	if (!netns[0])
		return fn(arg);
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0)
		return -errno;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0 || setns(target, CLONE_NEWNET)) {
		err = -errno;
		close(target);
		if (self >= 0)
			close(self);
		return err;
	}
	err = fn(arg);
	back = setns(self, CLONE_NEWNET);
	close(self);
	close(target);
	if (back) {
		perror("lbgen: setns back");
		abort(); /* a thread left in another namespace would count the wrong things */
	}
	return err;
}

struct query {
	const char *dev;
	__u32 prog_id;
};

static int query_xdp(void *arg)
{
	struct query *q = arg;
	int ifindex = (int)if_nametoindex(q->dev);

	if (!ifindex)
		return -ENODEV;
	return bpf_xdp_query_id(ifindex, 0, &q->prog_id);
}

static int open_lb_maps(struct lbgen_counters *c, __u32 prog_id)
{
	struct bpf_prog_info info = { 0 };
	__u32 ids[64], len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(prog_id), err;

	if (fd < 0)
		return -errno;
	info.nr_map_ids = 64;
	info.map_ids = (__u64)(unsigned long)ids;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (err)
		return -errno;
	for (__u32 i = 0; i < info.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(ids[i]), *slot = NULL;

		if (mfd < 0 || bpf_obj_get_info_by_fd(mfd, &mi, &mlen)) {
			if (mfd >= 0)
				close(mfd);
			continue;
		}
		/* the kernel keeps 15 characters of a map's name */
		if (!strncmp(mi.name, "xlb_vip_stats", BPF_OBJ_NAME_LEN - 1))
			slot = &c->vip_fd;
		else if (!strncmp(mi.name, "xlb_event_stats", BPF_OBJ_NAME_LEN - 1))
			slot = &c->event_fd;
		else if (!strncmp(mi.name, "xlb_reason_stats", BPF_OBJ_NAME_LEN - 1))
			slot = &c->reason_fd;
		else if (!strcmp(mi.name, "stats"))
			slot = &c->seed_fd;
		if (slot && *slot < 0)
			*slot = mfd;
		else
			close(mfd);
	}
	return c->vip_fd >= 0 || c->seed_fd >= 0 ? 0 : -ENOENT;
}

int lbgen_counters__open(const char *lb_dev, const char *egress, struct lbgen_counters **ret)
{
	struct lbgen_counters *c = calloc(1, sizeof(*c));
	char dev[64], ns[64];
	int err;

	if (!c)
		return -ENOMEM;
	c->vip_fd = c->event_fd = c->reason_fd = c->seed_fd = -1;
	c->nr_cpus = libbpf_num_possible_cpus();
	if (lb_dev) {
		struct query q = { .dev = dev };

		err = lbgen_split_dev(lb_dev, dev, ns);
		err = err ?: in_netns(ns, query_xdp, &q);
		if (!err && !q.prog_id)
			err = -ENOENT;
		err = err ?: open_lb_maps(c, q.prog_id);
		if (err) {
			fprintf(stderr, "lbgen: --lb-dev %s: no xlb or seed XDP program with stats found (%s)\n",
				lb_dev, strerror(-err));
			lbgen_counters__close(c);
			return err;
		}
	}
	if (egress) {
		if (lbgen_split_dev(egress, c->egress_dev, c->egress_ns)) {
			lbgen_counters__close(c);
			return -EINVAL;
		}
		c->have_egress = true;
	}
	*ret = c;
	return 0;
}

/* Sum of the u64 at `off` in entries [0, keys) of a per-CPU array (keys 0: all). */
static uint64_t percpu_sum(struct lbgen_counters *c, int fd, __u32 key_lo, __u32 key_hi, size_t vsize, size_t off)
{
	size_t stride = (vsize + 7) / 8 * 8;
	uint8_t vals[stride * (size_t)c->nr_cpus];
	uint64_t sum = 0;

	for (__u32 k = key_lo; k < key_hi; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int i = 0; i < c->nr_cpus; i++) {
			uint64_t v;

			memcpy(&v, vals + stride * (size_t)i + off, sizeof(v));
			sum += v;
		}
	}
	return sum;
}

struct dev_read {
	const char *dev;
	struct lbgen_lb_counters *out;
};

static int read_proc_net_dev(void *arg)
{
	struct dev_read *r = arg;
	FILE *f = fopen("/proc/thread-self/net/dev", "r");
	char line[512];
	int err = -ENODEV;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *name = line;
		unsigned long long v[16];

		if (!colon)
			continue;
		*colon = '\0';
		while (*name == ' ')
			name++;
		if (strcmp(name, r->dev))
			continue;
		if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]) == 12) {
			r->out->egress_bytes = v[8];
			r->out->egress_packets = v[9];
			r->out->egress_drops = v[11];
			err = 0;
		}
	}
	fclose(f);
	return err;
}

int lbgen_counters__read(struct lbgen_counters *c, struct lbgen_lb_counters *o)
{
	memset(o, 0, sizeof(*o));
	if (c->vip_fd >= 0) {
		o->have_lb = true;
		o->lb_kind = "xlb";
		o->lb_packets = percpu_sum(c, c->vip_fd, 0, XLB_MAX_VIPS, sizeof(struct xlb_lb_counter), 0);
		if (c->event_fd >= 0)
			o->lb_tx = percpu_sum(c, c->event_fd, XLB_EV_TX, XLB_EV_REDIRECT + 1, sizeof(struct xlb_counter), 0);
		for (__u32 r = 1; c->reason_fd >= 0 && r < XLB_REASON_MAX; r++) {
			uint64_t n = percpu_sum(c, c->reason_fd, r, r + 1, sizeof(struct xlb_counter), 0);

			if (!strcmp(xlb_reason_action(r), "drop"))
				o->lb_drop += n;
			else
				o->lb_pass += n;
		}
	} else if (c->seed_fd >= 0) {
		/* the seed: [512].v1 counts every packet to a VIP (struct lb_stats { v2; v1; }) */
		o->have_lb = true;
		o->lb_kind = "seed";
		o->lb_packets = percpu_sum(c, c->seed_fd, 512, 513, 16, 8);
	}
	if (c->have_egress) {
		struct dev_read r = { c->egress_dev, o };
		int err = in_netns(c->egress_ns, read_proc_net_dev, &r);

		if (err)
			return err;
		o->have_egress = true;
	}
	return 0;
}

void lbgen_counters__close(struct lbgen_counters *c)
{
	if (!c)
		return;
	for (int *fd = &c->vip_fd; fd <= &c->seed_fd; fd++)
		if (*fd >= 0)
			close(*fd);
	free(c);
}
