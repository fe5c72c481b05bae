// SPDX-License-Identifier: MIT
/*
 * lbgen - a pktgen-style traffic generator for load-balancer benchmarks
 * (the kernel's pktgen module is absent on many hosts, this one included).
 * Options follow the kernel's samples/pktgen/parameters.sh (-i -s -d -m -p
 * -t -f -n -b -w -6 -v), plus flows, protocol mixes, rate and duration;
 * results print the way pktgen prints them.  See README.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lbgen.h"

#ifndef LBGEN_BPF_OBJ
#define LBGEN_BPF_OBJ "lbgen.bpf.o"
#endif

struct thread {
	pthread_t tid;
	int index, cpu, err;
	_Atomic uint64_t sent, errors;
	double start_s, end_s;
	atomic_bool done; /* end_s is set */
};

static const struct lbgen_transport *transport;
static void *tstate;
static struct lbgen_opts opts;
static struct thread threads[LBGEN_THREADS_MAX];
static atomic_bool stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = true;
}

/* Unpaced sends last about this long (the last one ends with --duration). */
#define SLICE_S 1.0

/* Wakes a sender out of its send() (SIGUSR1; no SA_RESTART). */
static void on_wake(int sig)
{
	(void)sig;
}

/*
 * Frames for the next unpaced send: until the run ends for an
 * interruptible transport (the main thread's signal ends the call at the
 * end of --duration), else SLICE_S at the rate seen so far (the first send
 * measures it), at least the transport's min_call_s and never much past
 * the end of --duration.
 */
static uint64_t unpaced_slice(const struct thread *th, double pps_seen)
{
	double secs = SLICE_S;

	if (transport->interruptible && opts.duration_s)
		return UINT64_MAX;
	if (pps_seen <= 0)
		return 1u << 16;
	if (opts.duration_s) {
		double left = th->start_s + opts.duration_s - now_s();

		if (left < secs)
			secs = left;
	}
	if (secs < transport->min_call_s)
		secs = transport->min_call_s;
	return (uint64_t)(pps_seen * secs) + 1;
}

/*
 * A sender thread, pinned to its CPU as pktgen's threads are (the live
 * transport generates on the CPU it runs on).  With a rate, it sends in
 * bursts of the transport's shortest worthwhile call (1 ms, or 100 ms for
 * live frames) and sleeps to keep pace; without one, in slices sized by
 * time (unpaced_slice).
 */
static void *sender(void *arg)
{
	struct thread *th = arg;
	double per_thread = opts.rate_pps > 0 ? opts.rate_pps / opts.threads
			  : opts.delay_ns ? 1e9 / (double)opts.delay_ns : 0;
	double pps_seen = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(th->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "lbgen: thread %d: cannot pin to CPU %d\n", th->index, th->cpu);
	th->start_s = now_s();
	while (!stop) {
		uint64_t n, sent = 0, errors = 0;
		double t0 = now_s();

		n = per_thread > 0 ? (uint64_t)(per_thread * transport->min_call_s) + 1 : unpaced_slice(th, pps_seen);
		if (opts.count) {
			if (th->sent >= opts.count)
				break;
			if (n > opts.count - th->sent)
				n = opts.count - th->sent;
		}
		th->err = transport->send(tstate, th->index, n, &sent, &errors);
		th->sent += sent;
		th->errors += errors;
		if (th->err)
			break;
		if (now_s() > t0)
			pps_seen = (double)sent / (now_s() - t0);
		if (per_thread > 0) {
			double due = th->start_s + (double)th->sent / per_thread, wait = due - now_s();

			if (wait > 0) {
				struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };

				nanosleep(&ts, NULL);
			}
		}
	}
	th->end_s = now_s();
	atomic_store(&th->done, true);
	return NULL;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_ip(const char *s, struct in6_addr *a, int family)
{
	memset(a, 0, sizeof(*a));
	return inet_pton(family, s, a) == 1 ? 0 : -EINVAL;
}

static const char usage[] =
	"usage: lbgen -i DEV [options]            (pktgen's parameter names where they exist)\n"
	"  -i DEV        output device (required)\n"
	"  -s SIZE       frame bytes without FCS (default 64)\n"
	"  -d DST        destination IP: the VIP (default 198.18.0.42, -6: fd00::42)\n"
	"  -m DSTMAC     destination MAC (default 02:00:00:00:00:02)\n"
	"  -p PORT       destination port (default 80; QUIC 443)\n"
	"  -t THREADS    sender threads, one per CPU (default 1)\n"
	"  -f F_THREAD   first CPU (default 0)\n"
	"  -n COUNT      frames per thread, 0: until --duration ends (default 0)\n"
	"  -b BURST      frames per kernel batch (live: batch_size; default 64)\n"
	"  -w DELAY      ns between a thread's frames (a rate; --rate is the total)\n"
	"  -6            IPv6\n"
	"  -v            verbose\n"
	"  --flows N               distinct 5-tuples, 1..10000000 (default 1)\n"
	"  --flow-order seq|random flows in sequence or a random flow per packet\n"
	"  --proto tcp|udp|quic    (default tcp)\n"
	"  --syn-ratio R           TCP: share of SYNs, the rest ACKs (default 0)\n"
	"  --quic-long-ratio R     QUIC: share of long headers, the rest short (default 0)\n"
	"  --src IP  --src-mac MAC source of flow 0 (default 10.0.0.1 / fd00::1, 02:00:00:00:00:01)\n"
	"  --rate PPS              target rate of all threads together (default: line rate)\n"
	"  --duration SEC          stop after SEC seconds (default 10 when -n is 0)\n"
	"  --transport live|xsk|dpdk  BPF_PROG_RUN live frames (default), AF_XDP TX, DPDK TX\n"
	"  --dpdk \"EAL ARGS\"       DPDK: EAL arguments (e.g. --no-huge -m 512 --no-pci --vdev=net_null0)\n"
	"  --lb-dev DEV[@NETNS]    read the LB's per-CPU stats (xlb or the seed) from DEV's XDP program\n"
	"  --egress DEV[@NETNS]    read DEV's counters: what left the LB\n"
	"  --json FILE             write a JSON summary\n"
	"  --bpf-obj PATH          lbgen.bpf.o (default: the built one)\n"
	"  -q                      no per-second lines\n";

static int parse_args(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "flows", required_argument, NULL, 'F' },	  { "flow-order", required_argument, NULL, 'O' },
		{ "proto", required_argument, NULL, 'P' },	  { "syn-ratio", required_argument, NULL, 'S' },
		{ "quic-long-ratio", required_argument, NULL, 'Q' }, { "src", required_argument, NULL, 'A' },
		{ "src-mac", required_argument, NULL, 'M' },	  { "rate", required_argument, NULL, 'R' },
		{ "duration", required_argument, NULL, 'D' },	  { "transport", required_argument, NULL, 'T' },
		{ "dpdk", required_argument, NULL, 'E' },	  { "lb-dev", required_argument, NULL, 'L' },
		{ "egress", required_argument, NULL, 'G' },	  { "json", required_argument, NULL, 'J' },
		{ "bpf-obj", required_argument, NULL, 'B' },	  { "help", no_argument, NULL, 'h' },
		{},
	};
	const char *dst = NULL, *src = NULL, *dst_mac = "02:00:00:00:00:02", *src_mac = "02:00:00:00:00:01";
	int c, port = -1;
	char *end;

	opts = (struct lbgen_opts){ .transport = "live", .family = AF_INET, .size = 64, .threads = 1, .flows = 1,
				    .burst = 64, .bpf_obj = LBGEN_BPF_OBJ };
	while ((c = getopt_long(argc, argv, "i:s:d:m:p:t:f:n:b:w:c:6vxqh", longs, NULL)) != -1) {
		switch (c) {
		case 'i': opts.dev = optarg; break;
		case 's': opts.size = (uint32_t)strtoul(optarg, &end, 0); break;
		case 'd': dst = optarg; break;
		case 'm': dst_mac = optarg; break;
		case 'p':
			if (strchr(optarg, '-')) {
				fprintf(stderr, "lbgen: -p takes one port; vary the flows with --flows\n");
				return -EINVAL;
			}
			port = atoi(optarg);
			break;
		case 't': opts.threads = atoi(optarg); break;
		case 'f': opts.first_cpu = atoi(optarg); break;
		case 'n': opts.count = strtoull(optarg, NULL, 0); break;
		case 'b': opts.burst = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': opts.delay_ns = strtoull(optarg, NULL, 0); break;
		case 'c': break; /* pktgen's SKB_CLONE: no skbs here */
		case '6': opts.family = AF_INET6; break;
		case 'v': opts.verbose = true; break;
		case 'x': opts.verbose = true; break;
		case 'q': opts.quiet = true; break;
		case 'F': opts.flows = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'O':
			if (strcmp(optarg, "seq") && strcmp(optarg, "random"))
				return -EINVAL;
			opts.random_flows = !strcmp(optarg, "random");
			break;
		case 'P':
			if (!strcmp(optarg, "tcp"))
				opts.proto = LBGEN_TCP;
			else if (!strcmp(optarg, "udp"))
				opts.proto = LBGEN_UDP;
			else if (!strcmp(optarg, "quic"))
				opts.proto = LBGEN_QUIC;
			else
				return -EINVAL;
			break;
		case 'S': opts.syn_ratio = atof(optarg); break;
		case 'Q': opts.quic_long_ratio = atof(optarg); break;
		case 'A': src = optarg; break;
		case 'M': src_mac = optarg; break;
		case 'R': opts.rate_pps = atof(optarg); break;
		case 'D': opts.duration_s = atof(optarg); break;
		case 'T': opts.transport = optarg; break;
		case 'E': opts.dpdk_args = optarg; break;
		case 'L': opts.lb_dev = optarg; break;
		case 'G': opts.egress = optarg; break;
		case 'J': opts.json_path = optarg; break;
		case 'B': opts.bpf_obj = optarg; break;
		default: return -EINVAL;
		}
	}
	if (optind != argc || !opts.dev) {
		fprintf(stderr, "lbgen: %s\n", opts.dev ? "unexpected argument" : "-i DEV is required");
		return -EINVAL;
	}
	if (!dst)
		dst = opts.family == AF_INET6 ? "fd00::42" : "198.18.0.42";
	if (!src)
		src = opts.family == AF_INET6 ? "fd00::1" : "10.0.0.1";
	if (parse_ip(dst, &opts.dst, opts.family) || parse_ip(src, &opts.src, opts.family)) {
		fprintf(stderr, "lbgen: -d %s / --src %s: not %s addresses\n", dst, src,
			opts.family == AF_INET6 ? "IPv6 (-6)" : "IPv4");
		return -EINVAL;
	}
	if (parse_mac(dst_mac, opts.dst_mac) || parse_mac(src_mac, opts.src_mac)) {
		fprintf(stderr, "lbgen: bad MAC address\n");
		return -EINVAL;
	}
	opts.dport = (uint16_t)(port >= 0 ? port : opts.proto == LBGEN_QUIC ? 443 : 80);
	if (port > 65535 || opts.threads < 1 || opts.threads > LBGEN_THREADS_MAX || opts.first_cpu < 0 ||
	    opts.flows < 1 || opts.flows > 10000000 || opts.syn_ratio < 0 || opts.syn_ratio > 1 ||
	    opts.quic_long_ratio < 0 || opts.quic_long_ratio > 1 || opts.rate_pps < 0 || opts.duration_s < 0 ||
	    opts.burst < 1 || opts.burst > 256) {
		fprintf(stderr, "lbgen: a value is out of range (see --help)\n");
		return -EINVAL;
	}
	if (!opts.count && !opts.duration_s)
		opts.duration_s = 10;
	if (!strcmp(opts.transport, "live"))
		transport = &lbgen_live;
	else if (!strcmp(opts.transport, "xsk"))
		transport = &lbgen_xsk;
	else if (!strcmp(opts.transport, "dpdk"))
		transport = &lbgen_dpdk;
	else {
		fprintf(stderr, "lbgen: --transport live, xsk or dpdk\n");
		return -EINVAL;
	}
	return 0;
}

struct sample {
	double t, pps, lb_pps, egress_pps;
};

static uint64_t total_sent(void)
{
	uint64_t s = 0;

	for (int t = 0; t < opts.threads; t++)
		s += threads[t].sent;
	return s;
}

/*
 * Idle and total jiffies of the sender threads' CPUs (/proc/stat): a
 * generator whose CPUs idle is timing waits, not the path it feeds.
 */
static int senders_cpu_time(uint64_t *ret_idle, uint64_t *ret_total)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	*ret_idle = *ret_total = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = { 0 };
		int cpu;

		/* "cpuN ..." only: %d would skip the aggregate line's spaces and read its first figure */
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) != 9 ||
		    cpu < opts.first_cpu || cpu >= opts.first_cpu + opts.threads)
			continue;
		*ret_idle += v[3] + v[4]; /* idle, iowait */
		for (int i = 0; i < 8; i++)
			*ret_total += v[i];
	}
	fclose(f);
	return 0;
}

static void json_summary(FILE *f, double elapsed, uint64_t sent, uint64_t errors, double idle_share,
			 const struct sample *samples, int nsamples, const struct lbgen_lb_counters *lb0,
			 const struct lbgen_lb_counters *lb1)
{
	fprintf(f, "{\"tool\": \"lbgen\", \"transport\": \"%s\", \"dev\": \"%s\", \"threads\": %d, \"flows\": %u, "
		   "\"flow_order\": \"%s\", \"size\": %u, \"family\": %d, \"proto\": \"%s\",\n",
		transport->name, opts.dev, opts.threads, opts.flows, opts.random_flows ? "random" : "seq", opts.size,
		opts.family == AF_INET6 ? 6 : 4,
		opts.proto == LBGEN_TCP ? "tcp" : opts.proto == LBGEN_UDP ? "udp" : "quic");
	fprintf(f, " \"seconds\": %.6f, \"sent\": %llu, \"errors\": %llu, \"pps\": %.1f, \"mbps\": %.3f,\n", elapsed,
		(unsigned long long)sent, (unsigned long long)errors, sent / elapsed,
		sent / elapsed * opts.size * 8 / 1e6);
	fprintf(f, " \"paced\": %s, \"sender_cpu_idle\": %.4f,\n", opts.rate_pps > 0 || opts.delay_ns ? "true" : "false",
		idle_share);
	if (lb1->have_lb)
		fprintf(f, " \"lb\": {\"kind\": \"%s\", \"packets\": %llu, \"pps\": %.1f, \"tx\": %llu, \"pass\": %llu, "
			   "\"drop\": %llu},\n",
			lb1->lb_kind, (unsigned long long)(lb1->lb_packets - lb0->lb_packets),
			(lb1->lb_packets - lb0->lb_packets) / elapsed, (unsigned long long)(lb1->lb_tx - lb0->lb_tx),
			(unsigned long long)(lb1->lb_pass - lb0->lb_pass), (unsigned long long)(lb1->lb_drop - lb0->lb_drop));
	if (lb1->have_egress)
		fprintf(f, " \"egress\": {\"dev\": \"%s\", \"packets\": %llu, \"pps\": %.1f, \"drops\": %llu},\n", opts.egress,
			(unsigned long long)(lb1->egress_packets - lb0->egress_packets),
			(lb1->egress_packets - lb0->egress_packets) / elapsed,
			(unsigned long long)(lb1->egress_drops - lb0->egress_drops));
	fprintf(f, " \"per_second\": [");
	for (int i = 0; i < nsamples; i++)
		fprintf(f, "%s{\"t\": %.3f, \"pps\": %.1f, \"lb_pps\": %.1f, \"egress_pps\": %.1f}", i ? ", " : "",
			samples[i].t, samples[i].pps, samples[i].lb_pps, samples[i].egress_pps);
	fprintf(f, "]}\n");
}

int main(int argc, char **argv)
{
	static uint8_t frame[LBGEN_FRAME_MAX];
	struct lbgen_counters *counters = NULL;
	struct lbgen_lb_counters c0 = { 0 }, prev, cur = { 0 };
	struct lbgen_config cfg;
	struct sample *samples = NULL;
	int nsamples = 0, err, status = 0;
	uint64_t sent, errors = 0, prev_sent = 0, idle0, cpu0, idle1, cpu1;
	double t0, last, elapsed, idle_share;

	if (parse_args(argc, argv)) {
		fputs(usage, stderr);
		return 2;
	}
	err = lbgen_build_templates(&opts, &cfg, frame);
	if (err) {
		fprintf(stderr, "lbgen: -s %u cannot hold the headers (or exceeds %d)\n", opts.size, LBGEN_FRAME_MAX);
		return 2;
	}
	if ((opts.lb_dev || opts.egress) && lbgen_counters__open(opts.lb_dev, opts.egress, &counters))
		return 1;
	if (counters && lbgen_counters__read(counters, &c0)) {
		fprintf(stderr, "lbgen: cannot read the counters of --egress %s\n", opts.egress);
		return 1;
	}
	err = transport->open(&opts, &cfg, frame, &tstate);
	if (err) {
		fprintf(stderr, "lbgen: transport %s: %s\n", opts.transport, strerror(-err));
		lbgen_counters__close(counters);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = on_wake }, NULL);
	samples = calloc((size_t)(opts.duration_s + 2) * 2 + 64, sizeof(*samples));
	prev = c0;
	senders_cpu_time(&idle0, &cpu0);
	t0 = last = now_s();
	for (int t = 0; t < opts.threads; t++) {
		threads[t].index = t;
		threads[t].cpu = opts.first_cpu + t;
		if (pthread_create(&threads[t].tid, NULL, sender, &threads[t])) {
			stop = true;
			opts.threads = t;
			status = 1;
			break;
		}
	}
	for (;;) {
		bool running = false;
		struct timespec tick = { 0, 100 * 1000 * 1000 };
		double now;

		nanosleep(&tick, NULL);
		now = now_s();
		for (int t = 0; t < opts.threads; t++)
			running |= !atomic_load(&threads[t].done);
		if (opts.duration_s && now - t0 >= opts.duration_s)
			stop = true;
		if (now - last >= 1.0 || !running || stop) {
			double dt = now - last;
			struct sample s = { .t = now - t0 };

			sent = transport->sent_so_far ? transport->sent_so_far(tstate) : total_sent();
			s.pps = (double)(sent - prev_sent) / dt;
			if (counters && !lbgen_counters__read(counters, &cur)) {
				s.lb_pps = (double)(cur.lb_packets - prev.lb_packets) / dt;
				s.egress_pps = (double)(cur.egress_packets - prev.egress_packets) / dt;
			}
			if (samples && nsamples < (int)(opts.duration_s + 2) * 2 + 64)
				samples[nsamples++] = s;
			if (!opts.quiet) {
				printf("%6.1fs sent %9.3f Mpps %9.1f Mb/s", s.t, s.pps / 1e6, s.pps * opts.size * 8 / 1e6);
				if (cur.have_lb)
					printf(" | lb %s %8.3f Mpps", cur.lb_kind, s.lb_pps / 1e6);
				if (cur.have_egress)
					printf(" | egress %8.3f Mpps", s.egress_pps / 1e6);
				printf("\n");
				fflush(stdout);
			}
			prev = cur;
			prev_sent = sent;
			last = now;
		}
		if (!running || (stop && opts.duration_s))
			break;
	}
	stop = true;
	/* Senders in a long call: a signal until each has returned (one may come before its call). */
	for (int t = 0; t < opts.threads; t++) {
		struct timespec tick = { 0, 20 * 1000 * 1000 };

		while (!atomic_load(&threads[t].done)) {
			pthread_kill(threads[t].tid, SIGUSR1);
			nanosleep(&tick, NULL);
		}
		pthread_join(threads[t].tid, NULL);
	}
	elapsed = now_s() - t0;
	senders_cpu_time(&idle1, &cpu1);
	idle_share = cpu1 > cpu0 ? (double)(idle1 - idle0) / (double)(cpu1 - cpu0) : 0;
	sent = total_sent();
	errors = transport->errors ? transport->errors(tstate) : 0;
	/* pktgen's result block, per thread, then the sum */
	for (int t = 0; t < opts.threads; t++) {
		struct thread *th = &threads[t];
		double secs = th->end_s - th->start_s;

		errors += th->errors;
		printf("Result: %s: %llu(c%llu+d0) usec, %llu (%ubyte,0frags)\n", th->err ? "ERROR" : "OK",
		       (unsigned long long)(secs * 1e6), (unsigned long long)(secs * 1e6), (unsigned long long)th->sent,
		       opts.size);
		printf("  %llupps %lluMb/sec (%llubps) errors: %llu\n", (unsigned long long)(th->sent / secs),
		       (unsigned long long)(th->sent / secs * opts.size * 8 / 1e6),
		       (unsigned long long)(th->sent / secs * opts.size * 8), (unsigned long long)th->errors);
		if (th->err) {
			fprintf(stderr, "lbgen: thread %d: %s\n", t, strerror(-th->err));
			status = 1;
		}
	}
	printf("Total: %llu frames in %.3f s: %.0fpps %.0fMb/sec errors: %llu\n", (unsigned long long)sent, elapsed,
	       sent / elapsed, sent / elapsed * opts.size * 8 / 1e6, (unsigned long long)errors);
	printf("Sender CPUs %d-%d: %.1f%% idle\n", opts.first_cpu, opts.first_cpu + opts.threads - 1, 100 * idle_share);
	if (counters && !lbgen_counters__read(counters, &cur)) {
		if (cur.have_lb)
			printf("LB (%s): %llu packets balanced (%.0fpps), tx %llu, pass %llu, drop %llu\n", cur.lb_kind,
			       (unsigned long long)(cur.lb_packets - c0.lb_packets),
			       (cur.lb_packets - c0.lb_packets) / elapsed, (unsigned long long)(cur.lb_tx - c0.lb_tx),
			       (unsigned long long)(cur.lb_pass - c0.lb_pass), (unsigned long long)(cur.lb_drop - c0.lb_drop));
		if (cur.have_egress)
			printf("Egress %s: %llu packets (%.0fpps), drops %llu\n", opts.egress,
			       (unsigned long long)(cur.egress_packets - c0.egress_packets),
			       (cur.egress_packets - c0.egress_packets) / elapsed,
			       (unsigned long long)(cur.egress_drops - c0.egress_drops));
	}
	if (opts.json_path) {
		FILE *f = fopen(opts.json_path, "w");

		if (f) {
			json_summary(f, elapsed, sent, errors, idle_share, samples, nsamples, &c0, &cur);
			fclose(f);
		} else {
			perror(opts.json_path);
			status = 1;
		}
	}
	transport->close(tstate);
	lbgen_counters__close(counters);
	free(samples);
	return status;
}
