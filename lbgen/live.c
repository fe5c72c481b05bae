// SPDX-License-Identifier: MIT
/*
 * live.c - lbgen's BPF_PROG_RUN transport: BPF_F_TEST_XDP_LIVE_FRAMES runs
 * lbgen_build (lbgen.bpf.c) on each frame and sends it out of -i DEV
 * (XDP_TX), `repeat` frames per call, on the calling thread's CPU.  About
 * 7 Mpps per vCPU into a veth here.  A sink program (XDP_DROP) goes on DEV
 * too, so that what a load balancer on the peer sends back is accepted and
 * counted by veth, then dropped.
 *
 * Every call with repeat > 1 puts the program into the kernel's XDP
 * dispatcher and takes it out again, and each change waits for an RCU
 * grace period (bpf_dispatcher_change_prog -> synchronize_rcu, ~10-20 ms
 * here, the CPU idle meanwhile): calls must be long or the generator
 * times grace periods.  65536-frame calls left the sending CPU idle ~45% of
 * the time at ~1.3 Mpps.  So an unpaced thread makes one call for its whole
 * run, ended by a signal (the kernel returns EINTR between batches), and
 * the frames the call built are read from the builder's per-CPU counters.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "lbgen.h"

struct live {
	struct bpf_object *obj;
	int build_fd, cpu_fd, ifindex, sink_attached;
	uint32_t size, burst;
	uint8_t frame[LBGEN_FRAME_MAX];
	int nr_cpus, first_cpu;
	uint64_t seq_start[LBGEN_THREADS_MAX];
	uint32_t flows;
};

static int live_open(const struct lbgen_opts *o, const struct lbgen_config *cfg, const uint8_t *frame,
		     void **ret_state)
{
	struct live *l = calloc(1, sizeof(*l));
	struct bpf_program *build, *sink;
	uint32_t zero = 0;
	int err;

	if (!l)
		return -ENOMEM;
	l->ifindex = (int)if_nametoindex(o->dev);
	if (!l->ifindex) {
		fprintf(stderr, "lbgen: no interface %s in this network namespace\n", o->dev);
		free(l);
		return -ENODEV;
	}
	l->obj = bpf_object__open_file(o->bpf_obj, NULL);
	if (!l->obj || bpf_object__load(l->obj)) {
		err = -errno;
		fprintf(stderr, "lbgen: cannot load %s: %s\n", o->bpf_obj, strerror(errno));
		goto err;
	}
	build = bpf_object__find_program_by_name(l->obj, "lbgen_build");
	sink = bpf_object__find_program_by_name(l->obj, "lbgen_sink");
	l->cpu_fd = bpf_object__find_map_fd_by_name(l->obj, "lbgen_cpu");
	if (!build || !sink || l->cpu_fd < 0 ||
	    bpf_map_update_elem(bpf_object__find_map_fd_by_name(l->obj, "lbgen_config"), &zero, cfg, 0)) {
		err = -ENOENT;
		goto err;
	}
	l->build_fd = bpf_program__fd(build);
	/* the sink only where DEV has no XDP program yet: never replace someone's */
	err = bpf_xdp_attach(l->ifindex, bpf_program__fd(sink), XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST,
			     NULL);
	l->sink_attached = !err;
	if (err && o->verbose)
		fprintf(stderr, "lbgen: %s keeps its XDP program (%s)\n", o->dev, strerror(-err));
	l->size = o->size;
	l->burst = o->burst ? o->burst : 64;
	l->flows = cfg->flows;
	memcpy(l->frame, frame, o->size);
	l->nr_cpus = libbpf_num_possible_cpus();
	l->first_cpu = o->first_cpu;
	{
		/* sequential flows: thread t starts at t/threads of the flow space, on its CPU */
		struct lbgen_cpu vals[l->nr_cpus];

		memset(vals, 0, sizeof(vals));
		for (int t = 0; t < o->threads; t++)
			if (o->first_cpu + t < l->nr_cpus)
				vals[o->first_cpu + t].next_flow = (uint64_t)cfg->flows * (uint64_t)t / (uint64_t)o->threads;
		if (bpf_map_update_elem(l->cpu_fd, &zero, vals, 0)) {
			err = -errno;
			goto err;
		}
	}
	*ret_state = l;
	return 0;
err:
	bpf_object__close(l->obj);
	free(l);
	return err;
}

static uint64_t built_total(struct live *l, uint64_t *ret_bad)
{
	struct lbgen_cpu vals[l->nr_cpus];
	uint32_t zero = 0;
	uint64_t sum = 0;

	*ret_bad = 0;
	if (bpf_map_lookup_elem(l->cpu_fd, &zero, vals))
		return 0;
	for (int i = 0; i < l->nr_cpus; i++) {
		sum += vals[i].built;
		*ret_bad += vals[i].bad;
	}
	return sum;
}

/* Frames the builder handled on one CPU so far (built or refused). */
static uint64_t cpu_frames(struct live *l, int cpu)
{
	struct lbgen_cpu vals[l->nr_cpus];
	uint32_t zero = 0;

	if (cpu < 0 || cpu >= l->nr_cpus || bpf_map_lookup_elem(l->cpu_fd, &zero, vals))
		return 0;
	return vals[cpu].built + vals[cpu].bad;
}

static int live_send(void *state, int t, uint64_t n, uint64_t *ret_sent, uint64_t *ret_errors)
{
	struct live *l = state;
	struct xdp_md ctx = { .data_end = l->size, .ingress_ifindex = (uint32_t)l->ifindex };
	int cpu = l->first_cpu + t;

	*ret_sent = 0;
	*ret_errors = 0;
	while (n) {
		uint32_t chunk = n > (1u << 24) ? 1u << 24 : (uint32_t)n;
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = l->frame, .data_size_in = l->size, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = chunk, .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			    .batch_size = l->burst);
		uint64_t before = cpu_frames(l, cpu);

		if (bpf_prog_test_run_opts(l->build_fd, &opts)) {
			if (errno == EINTR) { /* the main thread's stop: what was sent counts */
				*ret_sent += cpu_frames(l, cpu) - before;
				return 0;
			}
			*ret_errors += chunk;
			return -errno;
		}
		*ret_sent += chunk;
		n -= chunk;
	}
	return 0;
}

/* Frames the builder refused (shorter than their template): errors. */
static uint64_t live_errors(void *state)
{
	uint64_t bad;

	built_total(state, &bad);
	return bad;
}

static void live_close(void *state)
{
	struct live *l = state;

	if (!l)
		return;
	if (l->sink_attached)
		bpf_xdp_detach(l->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	bpf_object__close(l->obj);
	free(l);
}

/* Frames built (or refused) by every thread so far, the calls in progress included. */
static uint64_t live_sent_so_far(void *state)
{
	uint64_t bad, built = built_total(state, &bad);

	return built + bad;
}

const struct lbgen_transport lbgen_live = {
	.name = "live",
	.open = live_open,
	.send = live_send,
	.errors = live_errors,
	.sent_so_far = live_sent_so_far,
	.close = live_close,
	.min_call_s = 0.1,
	.interruptible = true,
};
