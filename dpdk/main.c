// SPDX-License-Identifier: MIT
/*
 * xlb-dpdk - xlb's DPDK dataplane: the very same verified BPF objects the
 * kernel would run (balancer.bpf.o, decap.bpf.o), run on xlb's JIT or
 * interpreter over DPDK ports.  See dpdk/README.md.
 *
 *   xlb-dpdk [EAL options] -- --obj balancer.bpf.o [--prog NAME]
 *            [--engine jit|interp] [--run-dir DIR] [--exception-port N]
 *            [--exception-out N] [--ifindex PORT=IFINDEX]... [--burst N]
 *            [--mbufs N] [--rx-desc N] [--tx-desc N] [--idle-us N]
 *            [--duration SECONDS] [--quiet]
 *
 * Ports are numbered in the EAL's order (PCI devices, then --vdev in
 * order).  The process stops on SIGINT/SIGTERM (or after --duration) and
 * leaves its maps in <run dir>/maps for the next start.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#ifdef XLB_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "xlb_dpdk.h"

struct xlb_dp *xlb_dp;

void xlb_notify(const char *state)
{
#ifdef XLB_HAVE_SYSTEMD
	sd_notify(0, state);
#endif
}

/* Under systemd: watchdog on?  (WATCHDOG_USEC, for this pid.) */
static bool watchdog_enabled(void)
{
#ifdef XLB_HAVE_SYSTEMD
	uint64_t usec;

	return sd_watchdog_enabled(0, &usec) > 0;
#else
	return false;
#endif
}

static void on_signal(int sig)
{
	if (xlb_dp)
		xlb_dp->stop = true;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: xlb-dpdk [EAL options] -- --obj OBJ [--prog NAME] [--engine jit|interp]\n"
		   "       [--run-dir DIR] [--exception-port N] [--exception-out N]\n"
		   "       [--ifindex PORT=IFINDEX]... [--burst N] [--mbufs N] [--rx-desc N]\n"
		   "       [--tx-desc N] [--idle-us N] [--duration SECONDS] [--quiet]\n");
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct xlb_dpdk_opts *o, double *duration)
{
	static const struct option longopts[] = {
		{ "obj", required_argument, NULL, 'o' },
		{ "prog", required_argument, NULL, 'p' },
		{ "engine", required_argument, NULL, 'e' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "exception-port", required_argument, NULL, 'x' },
		{ "exception-out", required_argument, NULL, 'X' },
		{ "ifindex", required_argument, NULL, 'i' },
		{ "burst", required_argument, NULL, 'b' },
		{ "mbufs", required_argument, NULL, 'm' },
		{ "rx-desc", required_argument, NULL, 'R' },
		{ "tx-desc", required_argument, NULL, 'T' },
		{ "idle-us", required_argument, NULL, 'I' },
		{ "duration", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	unsigned long v, port;
	char *eq;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->obj_path = optarg;
			break;
		case 'p':
			o->prog_name = optarg;
			break;
		case 'e':
			if (!strcmp(optarg, "jit"))
				o->engine = XBPF_ENGINE_JIT;
			else if (!strcmp(optarg, "interp"))
				o->engine = XBPF_ENGINE_INTERP;
			else
				goto bad;
			break;
		case 'r':
			o->run_dir = optarg;
			break;
		case 'x':
		case 'X':
			if (parse_uint(optarg, 0, XLB_DPDK_MAX_PORTS - 1, &v))
				goto bad;
			*(c == 'x' ? &o->exception_port : &o->exception_out) = (int)v;
			break;
		case 'i':
			eq = strchr(optarg, '=');
			if (!eq)
				goto bad;
			*eq = '\0';
			if (parse_uint(optarg, 0, XLB_DPDK_MAX_PORTS - 1, &port) ||
			    parse_uint(eq + 1, 1, UINT32_MAX, &v))
				goto bad;
			o->ifindex[port] = (uint32_t)v;
			break;
		case 'b':
			if (parse_uint(optarg, 1, XLB_DPDK_MAX_BURST, &v))
				goto bad;
			o->burst = (unsigned int)v;
			break;
		case 'm':
			if (parse_uint(optarg, 511, 1u << 24, &v))
				goto bad;
			o->mbufs = (unsigned int)v;
			break;
		case 'R':
		case 'T':
			if (parse_uint(optarg, 16, 16384, &v))
				goto bad;
			*(c == 'R' ? &o->rx_desc : &o->tx_desc) = (unsigned int)v;
			break;
		case 'I':
			if (parse_uint(optarg, 0, 1000000, &v))
				goto bad;
			o->idle_us = (unsigned int)v;
			break;
		case 'd':
			*duration = strtod(optarg, NULL);
			if (*duration <= 0)
				goto bad;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc || !o->obj_path) {
		fprintf(stderr, "xlb-dpdk: --obj is required\n");
		usage(stderr);
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "xlb-dpdk: bad option value: %s\n", optarg);
	usage(stderr);
	return -EINVAL;
}

/*
 * The EAL's arguments, with a low --base-virtaddr unless the caller chose
 * one: packet memory must lie below 4 GiB (ports.c).
 */
static char **eal_args(int argc, char **argv, int *ret_argc)
{
	char **out = calloc((size_t)argc + 2, sizeof(*out));
	bool has_base = false;
	int i, n = 0;

	if (!out)
		return NULL;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--base-virtaddr", 15))
			has_base = true;
	out[n++] = argv[0];
	if (!has_base)
		out[n++] = "--base-virtaddr=0x40000000";
	for (i = 1; i < argc; i++)
		out[n++] = argv[i];
	*ret_argc = n;
	return out;
}

static int workers_setup(struct xlb_dp *dp)
{
	unsigned int lcore, i;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (dp->nr_workers == XLB_DPDK_MAX_LCORES)
			break;
		dp->workers[dp->nr_workers].lcore_id = lcore;
		dp->workers[dp->nr_workers].index = dp->nr_workers;
		dp->nr_workers++;
	}
	if (!dp->nr_workers) {
		/* one lcore: the main lcore is the worker */
		dp->workers[0].lcore_id = rte_get_main_lcore();
		dp->nr_workers = 1;
	}
	for (i = 0; i < dp->nr_workers; i++)
		if (xbpf_run_ctx__new_xdp_buf(&dp->workers[i].ctx))
			return -ENOMEM;
	return 0;
}

static void print_summary(struct xlb_dp *dp)
{
	unsigned int i;

	for (i = 0; i < dp->nr_workers; i++) {
		const struct xlb_dpdk_lcore_stats *s = dp->workers[i].stats;

		printf("xlb-dpdk: lcore %u: rx %llu tx %llu redirect %llu pass %llu drop %llu aborted %llu tx_failed %llu bad_mbuf %llu\n",
		       s->lcore_id, (unsigned long long)s->rx, (unsigned long long)s->tx,
		       (unsigned long long)s->redirect, (unsigned long long)s->pass,
		       (unsigned long long)s->drop, (unsigned long long)s->aborted,
		       (unsigned long long)s->tx_failed, (unsigned long long)s->bad_mbuf);
	}
}

static int unlink_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? -1 : 0;
}

/*
 * The EAL leaves its runtime files (/var/run/dpdk/<file-prefix>/: config,
 * memory segment lists) behind; a primary process that stops cleanly
 * takes them away.  (After kill -9 they stay until the next start with
 * the same prefix reuses them.)
 */
static void remove_runtime_dir(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (dir[0] && rte_eal_process_type() == RTE_PROC_PRIMARY)
		nftw(dir, unlink_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv)
{
	static struct xlb_dp dp = {
		.opts = {
			.engine = XBPF_ENGINE_JIT,
			.run_dir = XLB_DPDK_RUN_DIR,
			.exception_port = -1,
			.exception_out = -1,
			.burst = 32,
			.mbufs = 8191,
			.rx_desc = 1024,
			.tx_desc = 1024,
		},
	};
	double duration = 0;
	uint64_t deadline = 0, last_pub = 0;
	int eal_argc, ret, err = 0;
	char **eargv;
	unsigned int i;

	xlb_dp = &dp;
	eargv = eal_args(argc, argv, &eal_argc);
	if (!eargv)
		return 1;
	ret = rte_eal_init(eal_argc, eargv);
	if (ret < 0) {
		fprintf(stderr, "xlb-dpdk: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (parse_args(eal_argc - ret, eargv + ret, &dp.opts, &duration))
		return 2;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	err = workers_setup(&dp);
	if (!err)
		err = xlb_ports_setup(&dp);
	if (!err)
		err = xlb_prog_load(&dp);
	if (err)
		goto out;
	for (i = 0; i < dp.nr_workers; i++) {
		struct xlb_dpdk_lcore_stats zero_stats = {};

		dp.workers[i].stats = xbpf_map__lookup_elem(dp.lcore_map, &i);
		*dp.workers[i].stats = zero_stats; /* counters of this run */
	}
	xlb_publish(&dp);
	if (duration > 0)
		deadline = rte_get_timer_cycles() + (uint64_t)(duration * (double)rte_get_timer_hz());
	if (!dp.opts.quiet)
		printf("xlb-dpdk: running (%u ports, %u workers)\n", dp.nr_ports, dp.nr_workers);
	fflush(stdout);
	dp.watchdog = watchdog_enabled();
	{
		char st[160];

		snprintf(st, sizeof(st), "READY=1\nSTATUS=%u ports, %u worker lcore(s), %s, maps in %s/maps",
			 dp.nr_ports, dp.nr_workers, xbpf_engine_name(xbpf_vm__engine(dp.vm)),
			 dp.opts.run_dir);
		xlb_notify(st);
	}

	if (dp.workers[0].lcore_id == rte_get_main_lcore()) {
		/* single lcore: the worker loop does the main thread's duties; SIGALRM ends it */
		if (deadline) {
			signal(SIGALRM, on_signal);
			alarm((unsigned int)(duration + 0.999));
		}
		xlb_worker_main(&dp.workers[0]);
	} else {
		for (i = 0; i < dp.nr_workers; i++)
			rte_eal_remote_launch(xlb_worker_main, &dp.workers[i], dp.workers[i].lcore_id);
		while (!dp.stop) {
			uint64_t now = rte_get_timer_cycles();

			xlb_exception_poll(&dp);
			if (now - last_pub > rte_get_timer_hz() / 10) {
				xlb_publish(&dp);
				last_pub = now;
			}
			if (deadline && now >= deadline)
				dp.stop = true;
			rte_delay_us_sleep(50);
		}
		rte_eal_mp_wait_lcore();
	}
	xlb_notify("STOPPING=1");
	xlb_publish(&dp);
	if (!dp.opts.quiet)
		print_summary(&dp);
out:
	xlb_ports_close(&dp);
	xlb_prog_unload(&dp);
	for (i = 0; i < dp.nr_workers; i++)
		xbpf_run_ctx__free(dp.workers[i].ctx);
	remove_runtime_dir();
	free(eargv);
	/* 78 (EX_CONFIG): no port to run on; the unit does not restart in a loop */
	return err == -ENODEV ? 78 : err ? 1 : 0;
}
