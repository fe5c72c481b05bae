/* SPDX-License-Identifier: MIT */
/*
 * lbgen.h - lbgen's parts: options, packet templates, transports, counters.
 * See README.md for what lbgen does and how to run it.
 */
#ifndef LBGEN_H
#define LBGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "lbgen_shared.h"

#define LBGEN_THREADS_MAX 64
#define LBGEN_FRAME_MAX 1514

enum lbgen_proto { LBGEN_TCP, LBGEN_UDP, LBGEN_QUIC };

struct lbgen_opts {
	const char *dev;	  /* -i */
	const char *transport;	  /* live | xsk | dpdk */
	int family;		  /* AF_INET, AF_INET6 (-6) */
	struct in6_addr dst, src; /* -d, --src (IPv4 in the first 4 bytes) */
	uint8_t dst_mac[6], src_mac[6];
	uint16_t dport;		  /* -p */
	uint32_t size;		  /* -s: frame bytes without FCS */
	int threads, first_cpu;	  /* -t, -f */
	uint64_t count;		  /* -n: per thread, 0: until the duration ends */
	uint32_t burst;		  /* -b: frames per kernel call batch */
	uint64_t delay_ns;	  /* -w: between frames of a thread (pktgen's rate knob) */
	double rate_pps;	  /* --rate: all threads together, 0: as fast as possible */
	double duration_s;	  /* --duration, 0: until count */
	uint32_t flows;		  /* --flows */
	bool random_flows;	  /* --flow-order random */
	enum lbgen_proto proto;	  /* --proto */
	double syn_ratio;	  /* --syn-ratio: share of TCP SYNs (the rest ACK) */
	double quic_long_ratio;	  /* --quic-long-ratio: share of long headers */
	const char *lb_dev;	  /* --lb-dev DEV[@NETNS]: the LB's XDP program's stats */
	const char *egress;	  /* --egress DEV[@NETNS]: what left the LB */
	const char *json_path;	  /* --json */
	const char *bpf_obj;	  /* --bpf-obj: lbgen.bpf.o */
	const char *dpdk_args;	  /* --dpdk "EAL ARGS" */
	bool verbose, quiet;
};

/* ---- packet.c ---- */

/* The frame for flow 0 of every template (weights cumulated), in cfg. */
int lbgen_build_templates(const struct lbgen_opts *o, struct lbgen_config *cfg, uint8_t *frame);
/*
 * The next frame of a userspace sender (xsk, dpdk), as the BPF builder
 * picks it: a template by weight and a flow in sequence or at random;
 * *rng is the sender's xorshift state.  Returns the template's index.
 */
uint32_t lbgen_pick(const struct lbgen_config *cfg, uint64_t *rng, uint64_t *next_flow, uint32_t *ret_flow);
/* Rewrite frame (a copy of template t's frame) for flow f, as the BPF builder does. */
void lbgen_frame_for_flow(const struct lbgen_template *tp, uint8_t *frame, uint32_t flow);

/* ---- transports (live.c, xsk.c, dpdk.c) ---- */

struct lbgen_transport {
	const char *name;
	int (*open)(const struct lbgen_opts *o, const struct lbgen_config *cfg, const uint8_t *frame,
		    void **ret_state);
	/* Send n frames on thread t (runs on that thread); frames actually sent in *ret_sent. */
	int (*send)(void *state, int t, uint64_t n, uint64_t *ret_sent, uint64_t *ret_errors);
	/* Errors found after sending (frames dropped before they left), all threads. */
	uint64_t (*errors)(void *state);
	/* Frames sent so far by all threads, calls in progress included (optional). */
	uint64_t (*sent_so_far)(void *state);
	void (*close)(void *state);
	/*
	 * Shortest worthwhile send() in seconds: a call's fixed cost must stay
	 * small beside it.  Paced sends (--rate, -w) come in bursts this long.
	 */
	double min_call_s;
	/*
	 * send() returns what it sent, without an error, when a signal
	 * interrupts it: an unpaced thread then sends until --duration ends in
	 * one call, which the main thread ends with SIGUSR1 (for transports
	 * whose every call costs a lot: live frames).
	 */
	bool interruptible;
};

extern const struct lbgen_transport lbgen_live, lbgen_xsk, lbgen_dpdk;

/* ---- counters.c: what the LB saw and what left it ---- */

struct lbgen_lb_counters {
	bool have_lb, have_egress;
	const char *lb_kind;   /* "xlb" or "seed" */
	uint64_t lb_packets;   /* balanced (xlb: per-VIP packets; seed: VIP packets) */
	uint64_t lb_tx;	       /* xlb: XDP_TX + XDP_REDIRECT events */
	uint64_t lb_pass, lb_drop;
	uint64_t egress_packets, egress_bytes, egress_drops;
};

struct lbgen_counters;
int lbgen_counters__open(const char *lb_dev, const char *egress, struct lbgen_counters **ret);
int lbgen_counters__read(struct lbgen_counters *c, struct lbgen_lb_counters *ret);
void lbgen_counters__close(struct lbgen_counters *c);

/* "DEV@NETNS" -> dev, netns (NULL: this one); buffers of 64 bytes. */
int lbgen_split_dev(const char *spec, char *dev, char *netns);

#endif /* LBGEN_H */
