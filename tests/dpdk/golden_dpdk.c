// SPDX-License-Identifier: MIT
/*
 * golden_dpdk - a dataplane golden table (tests/dataplane, format in
 * xlbtab.py) fed through a running xlb-dpdk on net_pcap ports: input pcap
 * in, output pcaps out, verdicts from xlb-dpdk's counters.
 *
 *   golden_dpdk XLB_DPDK ENGINE OBJ PROG TABLE REASON_MAP
 *
 * xlb-dpdk runs two workers and three net_pcap ports: port 0 (ifindex 2,
 * the tables' ingress) reads two FIFOs, one RX queue per worker, so that a
 * row's "cpu N" runs on worker N, and writes tx-N.pcap (XDP_TX); port 1
 * (ifindex 3, the devmap target of the redirect rows) writes
 * redirect-N.pcap; port 2 is the exception port and writes pass-N.pcap
 * (XDP_PASS).  A row that arrives on the other interface (ifindex 3)
 * restarts xlb-dpdk with the two ifindexes swapped: the maps, shared,
 * keep their state across the restart.  Rows run in lock step (--burst 1): this program applies the row's map updates to the
 * shared maps in xlb-dpdk's run directory, writes the packet into the FIFO,
 * waits until the lcore counters show its verdict, then checks:
 * - the verdict: XDP_TX/REDIRECT/PASS as one new record in the matching
 *   pcap, DROP and ABORTED by their counters, nothing anywhere else;
 * - the output bytes, byte for byte, for the verdicts that send a packet
 *   (dropped packets have no output to compare);
 * - the row's reason counter and stat deltas, from the shared maps;
 * - rows the kernel's BPF_PROG_TEST_RUN refuses (frames shorter than an
 *   Ethernet header: "expect err 22") must be refused before the program
 *   (bad_mbuf), with no reason counted.
 * Exit 0: every row matches; 1: a mismatch; 77: no scapy / not root.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "xbpf.h"
#include "xlb_dpdk_shared.h"
#include "xlb_shared.h"

#define MAX_PKT 8192
#define MAX_STATS 16
#define RX_IFINDEX 2
#define REDIRECT_IFINDEX 3
/* two workers, so that "cpu N" rows run on CPU N: queue N of port 0 is FIFO N */
#define NR_WORKERS 2

static char dir[] = "/tmp/xlb-golden-dpdk.XXXXXX";
static pid_t child;

struct out_pcap {
	const char *name;
	long off; /* bytes consumed so far */
};

/* [verdict pcap][worker]: port 0 TX, port 1 (redirect), port 2 (exception) */
static struct out_pcap outs[3][NR_WORKERS] = {
	{ { "tx-0.pcap" }, { "tx-1.pcap" } },
	{ { "redirect-0.pcap" }, { "redirect-1.pcap" } },
	{ { "pass-0.pcap" }, { "pass-1.pcap" } },
};
static const char *fifos[NR_WORKERS] = { "in-0.fifo", "in-1.fifo" };
static int fifo_fd[NR_WORKERS] = { -1, -1 };
static uint64_t sent[NR_WORKERS];
static uint32_t cur_rx_ifindex; /* what port 0 is now; a row on another ifindex restarts xlb-dpdk */

static const char *in_dir(const char *name)
{
	static char path[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static int hex_decode_impl(const char *hex, uint8_t *out, size_t cap, size_t *len);
#define hex_decode hex_decode_impl

/* ---- maps, by name, in xlb-dpdk's run directory ---------------------------------- */

#define MAX_MAPS 32
static struct {
	char name[64];
	struct xbpf_map *map;
} maps[MAX_MAPS];

static struct xbpf_map *map_get(const char *name)
{
	char path[512];
	int i;

	for (i = 0; i < MAX_MAPS && maps[i].map; i++)
		if (!strcmp(maps[i].name, name))
			return maps[i].map;
	if (i == MAX_MAPS)
		return NULL;
	snprintf(path, sizeof(path), "%s/run/maps/%s", dir, name);
	maps[i].map = xbpf_map__open_shared(path, NULL, 0);
	snprintf(maps[i].name, sizeof(maps[i].name), "%s", name);
	return maps[i].map;
}

static bool is_percpu(struct xbpf_map *m)
{
	enum xbpf_map_type t = xbpf_map__spec(m)->type;

	return t == XBPF_MAP_PERCPU_ARRAY || t == XBPF_MAP_PERCPU_HASH || t == XBPF_MAP_LRU_PERCPU_HASH;
}

static int map_update(const char *name, const void *key, const void *val)
{
	struct xbpf_map *m = map_get(name);
	uint8_t buf[4096 * 8];
	size_t vs;
	int i, n;

	if (!m)
		return -ENOENT;
	if (!is_percpu(m))
		return xbpf_map__update(m, key, val, XBPF_ANY);
	n = xbpf_map__nr_cpus(m);
	vs = (xbpf_map__spec(m)->value_size + 7) & ~7u;
	if (vs * n > sizeof(buf))
		return -E2BIG;
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < n; i++)
		memcpy(buf + i * vs, val, xbpf_map__spec(m)->value_size);
	return xbpf_map__update(m, key, buf, XBPF_ANY);
}

static int map_clear(const char *name)
{
	struct xbpf_map *m = map_get(name);
	uint8_t key[256];
	int err;

	if (!m)
		return -ENOENT;
	while (!xbpf_map__get_next_key(m, NULL, key))
		if ((err = xbpf_map__delete(m, key)))
			return err;
	return 0;
}

static int map_ring(uint32_t vip, uint32_t half, const uint32_t *reals, int n)
{
	struct xbpf_map *m = map_get("xlb_rings");
	uint32_t i, key;
	int err;

	if (!m)
		return -ENOENT;
	for (i = 0; i < XLB_RING_SIZE; i++) {
		key = (vip * XLB_RING_HALVES + half) * XLB_RING_SIZE + i;
		if ((err = xbpf_map__update(m, &key, &reals[i % n], XBPF_ANY)))
			return err;
	}
	return 0;
}

/* Sum over CPUs of u64 number `word` of map[key] (MAP or MAP:WORD). */
static int map_stat(const char *spec, uint32_t key, uint64_t *sum)
{
	const char *colon = strchr(spec, ':');
	unsigned int word = colon ? (unsigned int)strtoul(colon + 1, NULL, 10) : 0;
	uint8_t buf[4096 * 8];
	char name[64];
	struct xbpf_map *m;
	size_t vs;
	int i, n, err;

	snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
	m = map_get(name);
	if (!m)
		return -ENOENT;
	if ((word + 1) * 8 > xbpf_map__spec(m)->value_size)
		return -EINVAL;
	n = is_percpu(m) ? xbpf_map__nr_cpus(m) : 1;
	vs = (xbpf_map__spec(m)->value_size + 7) & ~7u;
	err = xbpf_map__lookup(m, &key, buf);
	*sum = 0;
	for (i = 0; !err && i < n; i++)
		*sum += *(uint64_t *)(buf + i * vs + word * 8);
	return err;
}

static int lcore_stats(uint32_t worker, struct xlb_dpdk_lcore_stats *ret)
{
	struct xbpf_map *m = map_get(XLB_DPDK_LCORE_MAP);

	return m ? xbpf_map__lookup(m, &worker, ret) : -ENOENT;
}

static uint64_t handled(const struct xlb_dpdk_lcore_stats *s)
{
	return s->tx + s->redirect + s->pass + s->drop + s->aborted + s->bad_mbuf;
}

/* ---- pcaps ------------------------------------------------------------------------ */

struct pcap_rec {
	uint32_t sec, usec, incl, orig;
};

static int fifo_write_pkt(int fd, const uint8_t *pkt, size_t len)
{
	struct pcap_rec r = { 1, 0, (uint32_t)len, (uint32_t)len };

	if (write(fd, &r, sizeof(r)) != sizeof(r) || (len && write(fd, pkt, len) != (ssize_t)len))
		return -errno;
	return 0;
}

/* The next record of an output pcap, if it is complete; 0 none yet, 1 got one. */
static int pcap_next(struct out_pcap *o, uint8_t *pkt, size_t *len)
{
	FILE *f = fopen(in_dir(o->name), "r");
	struct pcap_rec r;
	int got = 0;

	if (!f)
		return 0;
	if (!o->off)
		o->off = 24; /* global header */
	if (!fseek(f, o->off, SEEK_SET) && fread(&r, sizeof(r), 1, f) == 1 && r.incl <= MAX_PKT &&
	    fread(pkt, 1, r.incl, f) == r.incl) {
		*len = r.incl;
		o->off += (long)sizeof(r) + r.incl;
		got = 1;
	}
	fclose(f);
	return got;
}

/* ---- xlb-dpdk -------------------------------------------------------------------- */

/*
 * The lcores may run on any CPU this process may (no pinning in tests):
 * "(first-last)" of our affinity, for the EAL's --lcores=N@(first-last).
 */
static void cpus_arg(char *buf, size_t len)
{
	cpu_set_t set;
	int i, lo = -1, hi = -1;

	if (!sched_getaffinity(0, sizeof(set), &set))
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set)) {
				lo = lo < 0 ? i : lo;
				hi = i;
			}
	if (lo < 0)
		lo = hi = 0;
	snprintf(buf, len, "(%d-%d)", lo, hi);
}

static int start_dpdk(const char *const *args, uint32_t rx_ifindex)
{
	static const uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };
	char vdev0[1200], vdev1[600], vdev2[600], prefix[64], rundir[512], lcores[160], cpus[32];
	char if0[32], if1[32];
	struct xlb_dpdk_status st;
	uint32_t zero = 0;
	int i, w, open_cnt = 0;

	for (w = 0; w < NR_WORKERS; w++) {
		if (access(in_dir(fifos[w]), F_OK) && mkfifo(in_dir(fifos[w]), 0600))
			return -errno;
		for (i = 0; i < 3; i++)
			outs[i][w].off = 0; /* the new process writes its pcaps anew */
		sent[w] = 0;
	}
	snprintf(vdev0, sizeof(vdev0), "--vdev=net_pcap0,rx_pcap=%s,rx_pcap=%s,tx_pcap=%s,tx_pcap=%s",
		 in_dir(fifos[0]), in_dir(fifos[1]), in_dir(outs[0][0].name), in_dir(outs[0][1].name));
	snprintf(vdev1, sizeof(vdev1), "--vdev=net_pcap1,tx_pcap=%s,tx_pcap=%s", in_dir(outs[1][0].name),
		 in_dir(outs[1][1].name));
	snprintf(vdev2, sizeof(vdev2), "--vdev=net_pcap2,tx_pcap=%s,tx_pcap=%s", in_dir(outs[2][0].name),
		 in_dir(outs[2][1].name));
	snprintf(prefix, sizeof(prefix), "--file-prefix=xlbgold%d", (int)getpid());
	snprintf(rundir, sizeof(rundir), "%s/run", dir);
	cpus_arg(cpus, sizeof(cpus));
	snprintf(lcores, sizeof(lcores), "--lcores=0@%s,1@%s,2@%s", cpus, cpus, cpus);
	/* the table's two interfaces: port 0 receives, port 1 is the other one */
	snprintf(if0, sizeof(if0), "0=%u", rx_ifindex);
	snprintf(if1, sizeof(if1), "1=%u", rx_ifindex == RX_IFINDEX ? REDIRECT_IFINDEX : RX_IFINDEX);
	child = fork();
	if (child < 0)
		return -errno;
	if (!child) {
		execl(args[0], args[0], "--no-huge", "-m", "256", "--no-pci", prefix, lcores,
		      "--log-level=lib.eal:warning", "--no-telemetry", vdev0, vdev1, vdev2, "--",
		      "--obj", args[2], "--prog", args[3], "--engine", args[1], "--run-dir", rundir,
		      "--exception-port", "2", "--ifindex", if0, "--ifindex", if1, "--burst", "1",
		      "--mbufs", "2047", "--rx-desc", "64", "--tx-desc", "64", "--quiet", (char *)NULL);
		perror("exec xlb-dpdk");
		_exit(127);
	}
	/* the pcap PMD opens the FIFOs while the EAL probes the vdevs (ENXIO until then) */
	for (i = 0; open_cnt < NR_WORKERS && i < 3000; i++) {
		for (w = 0; w < NR_WORKERS; w++) {
			int fd;

			if (fifo_fd[w] >= 0)
				continue;
			fd = open(in_dir(fifos[w]), O_WRONLY | O_NONBLOCK);
			if (fd < 0)
				continue;
			if (fcntl(fd, F_SETFL, 0) || write(fd, hdr, sizeof(hdr)) != sizeof(hdr))
				return -errno;
			fifo_fd[w] = fd;
			open_cnt++;
		}
		if (waitpid(child, NULL, WNOHANG) == child) {
			fprintf(stderr, "xlb-dpdk exited before it ran\n");
			child = 0;
			return -ECHILD;
		}
		sleep_us(5000);
	}
	for (i = 0; i < 3000; i++) {
		struct xbpf_map *m;

		if (waitpid(child, NULL, WNOHANG) == child) {
			fprintf(stderr, "xlb-dpdk exited before it ran\n");
			child = 0;
			return -ECHILD;
		}
		m = access(in_dir("run/maps/" XLB_DPDK_STATUS_MAP), F_OK) ? NULL : map_get(XLB_DPDK_STATUS_MAP);
		if (m && !xbpf_map__lookup(m, &zero, &st) && st.running && st.pid == (uint32_t)child) {
			printf("xlb-dpdk (pid %d) runs %s on the %s, %u workers, port 0 is ifindex %u\n",
			       (int)child, st.program, st.engine, st.nr_lcores, rx_ifindex);
			if (strcmp(st.engine, args[1]) || st.nr_lcores != NR_WORKERS) {
				printf("FAIL: asked for the %s on %d workers\n", args[1], NR_WORKERS);
				return -ENOEXEC;
			}
			cur_rx_ifindex = rx_ifindex;
			return 0;
		}
		sleep_us(10000);
	}
	return -ETIMEDOUT;
}

static void stop_dpdk(void)
{
	int w;

	for (w = 0; w < NR_WORKERS; w++) {
		if (fifo_fd[w] >= 0)
			close(fifo_fd[w]);
		fifo_fd[w] = -1;
	}
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
		child = 0;
	}
}

/* ---- one row ---------------------------------------------------------------------- */

struct pending_stat {
	char map[64];
	uint32_t key;
	int64_t delta;
	uint64_t before;
};

struct row_want {
	const char *row;
	bool err; /* refused before the program */
	uint32_t retval, reason;
	const uint8_t *out; /* NULL: not compared */
	size_t out_len;
};

static uint64_t reasons_total(const char *reason_map)
{
	uint64_t v, tot = 0;
	int i;

	for (i = 1; i < XLB_REASON_MAX; i++)
		if (!map_stat(reason_map, (uint32_t)i, &v))
			tot += v;
	return tot;
}

static int wait_handled(uint32_t cpu, uint64_t want, struct xlb_dpdk_lcore_stats *ret)
{
	int i;

	for (i = 0; i < 20000; i++) {
		if (!lcore_stats(cpu, ret) && handled(ret) >= want)
			return 0;
		sleep_us(100);
	}
	return -ETIMEDOUT;
}

static int run_row(uint32_t cpu, const struct row_want *w, const uint8_t *in, size_t in_len,
		   struct pending_stat *stats, int nstats, const char *reason_map)
{
	struct xlb_dpdk_lcore_stats a, b;
	uint64_t r_before = 0, r_after = 0, tot_before, tot_after, v;
	static uint8_t got[MAX_PKT];
	size_t got_len = 0;
	int i, fails = 0, where = -1, err;

	for (i = 0; i < nstats; i++)
		map_stat(stats[i].map, stats[i].key, &stats[i].before);
	tot_before = reasons_total(reason_map);
	if (w->reason)
		map_stat(reason_map, w->reason, &r_before);
	if (lcore_stats(cpu, &a))
		return 1;
	err = fifo_write_pkt(fifo_fd[cpu], in, in_len);
	if (err || wait_handled(cpu, ++sent[cpu], &b)) {
		printf("FAIL %s: xlb-dpdk did not handle the packet\n", w->row);
		return 1;
	}
	if (w->err) {
		if (b.bad_mbuf != a.bad_mbuf + 1) {
			printf("FAIL %s: a frame BPF_PROG_TEST_RUN refuses reached the program\n", w->row);
			fails++;
		}
	} else if (b.tx != a.tx || b.redirect != a.redirect || b.pass != a.pass) {
		int pcap = b.tx != a.tx ? 0 : b.redirect != a.redirect ? 1 : 2;

		for (i = 0; i < 20000 && !pcap_next(&outs[pcap][cpu], got, &got_len); i++)
			sleep_us(100);
		if (i == 20000) {
			printf("FAIL %s: verdict counted but no packet in %s\n", w->row, outs[pcap][cpu].name);
			fails++;
		}
		where = pcap;
	} else {
		where = 3; /* freed */
	}
	if (!w->err) {
		uint32_t got_verdict = where == 0 ? XDP_TX : where == 1 ? XDP_REDIRECT
				       : where == 2 ? XDP_PASS : b.drop != a.drop ? XDP_DROP : XDP_ABORTED;

		if (got_verdict != w->retval) {
			printf("FAIL %s: verdict %u, want %u\n", w->row, got_verdict, w->retval);
			fails++;
		}
		if (b.tx_failed != a.tx_failed) {
			printf("FAIL %s: the port did not take the packet\n", w->row);
			fails++;
		}
	}
	/* the other pcaps got nothing */
	for (i = 0; i < 3 * NR_WORKERS; i++) {
		struct out_pcap *o = &outs[i / NR_WORKERS][i % NR_WORKERS];
		uint8_t extra[MAX_PKT];
		size_t n;

		if (where >= 0 && where < 3 && o == &outs[where][cpu])
			continue;
		if (pcap_next(o, extra, &n)) {
			printf("FAIL %s: unexpected packet in %s\n", w->row, o->name);
			fails++;
		}
	}
	tot_after = reasons_total(reason_map);
	if (w->reason)
		map_stat(reason_map, w->reason, &r_after);
	if (w->reason && r_after != r_before + 1) {
		printf("FAIL %s: reason %s counted %llu times, want 1\n", w->row,
		       xlb_reason_name(w->reason), (unsigned long long)(r_after - r_before));
		fails++;
	}
	if (tot_after != tot_before + (w->reason ? 1 : 0)) {
		printf("FAIL %s: %llu reasons counted, want %d\n", w->row,
		       (unsigned long long)(tot_after - tot_before), w->reason ? 1 : 0);
		fails++;
	}
	for (i = 0; i < nstats; i++) {
		if (map_stat(stats[i].map, stats[i].key, &v) || (int64_t)(v - stats[i].before) != stats[i].delta) {
			printf("FAIL %s: %s[%u] grew by %lld, want %lld\n", w->row, stats[i].map,
			       stats[i].key, (long long)(v - stats[i].before), (long long)stats[i].delta);
			fails++;
		}
	}
	if (w->out && where >= 0 && where < 3 &&
	    (got_len != w->out_len || memcmp(got, w->out, got_len))) {
		printf("FAIL %s: output differs (len %zu, want %zu)\n  got  ", w->row, got_len, w->out_len);
		for (i = 0; i < (int)got_len; i++)
			printf("%02x", got[i]);
		printf("\n  want ");
		for (i = 0; i < (int)w->out_len; i++)
			printf("%02x", w->out[i]);
		printf("\n");
		fails++;
	}
	return fails;
}

/* "check MAP KEY VAL[/MASK]" or "check MAP KEY -": a map's value now; 1 on a mismatch. */
static int check_value(const char *row, const char *name, const char *khex, char *vhex)
{
	static uint8_t key[256], want[512], mask[512], got[512];
	struct xbpf_map *m = map_get(name);
	char *slash = strchr(vhex, '/');
	size_t klen, vlen, mlen = 0, i;
	int err;

	if (!m)
		return -ENOENT;
	if (is_percpu(m) || xbpf_map__spec(m)->value_size > sizeof(got))
		return -EINVAL;
	if (!strcmp(vhex, "-")) {
		err = hex_decode(khex, key, sizeof(key), &klen) ?: xbpf_map__lookup(m, key, got);
		if (err == -ENOENT)
			return 0;
		if (!err)
			printf("FAIL %s: %s still has an entry %s\n", row, name, khex);
		return err ? err : 1;
	}
	if (slash)
		*slash = 0;
	err = hex_decode(khex, key, sizeof(key), &klen) ?: hex_decode(vhex, want, sizeof(want), &vlen);
	if (!err && slash)
		err = hex_decode(slash + 1, mask, sizeof(mask), &mlen);
	if (err)
		return err;
	if (!slash)
		memset(mask, 0xff, mlen = vlen);
	err = xbpf_map__lookup(m, key, got);
	if (err == -ENOENT) {
		printf("FAIL %s: %s has no entry %s\n", row, name, khex);
		return 1;
	}
	if (err)
		return err;
	if (xbpf_map__spec(m)->value_size != vlen || mlen != vlen) {
		printf("FAIL %s: %s value is %u bytes, the check gives %zu\n", row, name,
		       xbpf_map__spec(m)->value_size, vlen);
		return 1;
	}
	for (i = 0; i < vlen; i++) {
		if ((got[i] ^ want[i]) & mask[i]) {
			printf("FAIL %s: %s[%s] byte %zu is %02x, want %02x\n", row, name, khex, i, got[i],
			       want[i]);
			return 1;
		}
	}
	return 0;
}

/* ---- the table -------------------------------------------------------------------- */

static int hex_decode_impl(const char *hex, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(hex), i;

	if (n % 2 || n / 2 > cap)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		out[i] = (uint8_t)b;
	}
	*len = n / 2;
	return 0;
}

static void cleanup(void)
{
	char cmd[600];

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	/* our scratch dir, and the EAL's runtime files of the killed xlb-dpdk */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' /var/run/dpdk/xlbgold%d", dir, (int)getpid());
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

int main(int argc, char **argv)
{
	static uint8_t in[MAX_PKT], want[MAX_PKT], key[256], val[4096];
	struct pending_stat stats[MAX_STATS];
	int nstats = 0, failures = 0, rows = 0, runs = 0, lineno = 0, restarts = 0, err;
	uint32_t ifindex = 0, cpu = 0;
	char row[256] = "", *line = NULL;
	size_t cap = 0, in_len = 0;
	FILE *f;

	if (argc != 7) {
		fprintf(stderr, "usage: %s XLB_DPDK jit|interp OBJ PROG TABLE REASON_MAP\n", argv[0]);
		return 2;
	}
	if (geteuid()) {
		printf("SKIP: DPDK's EAL needs root here\n");
		return 77;
	}
	f = fopen(argv[5], "r");
	if (!f || !mkdtemp(dir)) {
		perror(argv[5]);
		return 1;
	}
	atexit(cleanup);
	err = start_dpdk((const char *const *)argv + 1, RX_IFINDEX);
	if (err) {
		printf("FAIL: cannot start xlb-dpdk: %s\n", strerror(-err));
		return 1;
	}
	while (getline(&line, &cap, f) > 0) {
		char cmd[16], a[64], b[4096 * 2 + 1], c[MAX_PKT * 2 + 1];
		size_t klen, vlen;
		int n;

		lineno++;
		line[strcspn(line, "\n")] = 0;
		n = sscanf(line, "%15s %63s %8192s %16384s", cmd, a, b, c);
		if (n < 1 || cmd[0] == '#')
			continue;
		err = 0;
		if (!strcmp(cmd, "row")) {
			snprintf(row, sizeof(row), "%s", a);
			rows++;
		} else if (!strcmp(cmd, "update") && n == 4) {
			err = hex_decode(b, key, sizeof(key), &klen) ?:
			      hex_decode(c, val, sizeof(val), &vlen) ?: map_update(a, key, val);
		} else if (!strcmp(cmd, "delete") && n == 3) {
			struct xbpf_map *m = map_get(a);

			err = hex_decode(b, key, sizeof(key), &klen) ?: m ? xbpf_map__delete(m, key) : -ENOENT;
			if (err == -ENOENT && m)
				err = 0;
		} else if (!strcmp(cmd, "clear")) {
			err = map_clear(a);
		} else if (!strcmp(cmd, "ring") && n == 4) {
			uint32_t reals[64], vip = atoi(a), half = atoi(b);
			int nr = 0;
			char *tok, *save;

			for (tok = strtok_r(c, ",", &save); tok && nr < 64; tok = strtok_r(NULL, ",", &save))
				reals[nr++] = atoi(tok);
			err = nr ? map_ring(vip, half, reals, nr) : -EINVAL;
		} else if (!strcmp(cmd, "rodata")) {
			printf("FAIL %s: rodata switches are set at load; not in this harness\n", row);
			failures++;
		} else if (!strcmp(cmd, "mark")) {
			/* tc only */
		} else if (!strcmp(cmd, "ifindex")) {
			ifindex = strtoul(a, NULL, 0);
		} else if (!strcmp(cmd, "cpu")) {
			cpu = strtoul(a, NULL, 0);
			if (cpu >= NR_WORKERS)
				err = -ERANGE;
		} else if (!strcmp(cmd, "check") && n >= 4) {
			err = check_value(row, a, b, c);
			if (err > 0) {
				failures++;
				err = 0;
			}
		} else if (!strcmp(cmd, "stat") && n == 4 && nstats < MAX_STATS) {
			snprintf(stats[nstats].map, sizeof(stats[nstats].map), "%s", a);
			stats[nstats].key = atoi(b);
			stats[nstats].delta = atoll(c);
			nstats++;
		} else if (!strcmp(cmd, "in")) {
			in_len = 0;
			if (n >= 2)
				err = hex_decode(line + 3, in, sizeof(in), &in_len);
		} else if (!strcmp(cmd, "expect")) {
			struct row_want w = { .row = row, .err = !strcmp(a, "err") };
			size_t want_len = 0;

			runs++;
			if (!ifindex)
				ifindex = RX_IFINDEX;
			if (ifindex != cur_rx_ifindex) {
				/* the packet arrives on the other interface: restart with port 0 as that one */
				if (ifindex != RX_IFINDEX && ifindex != REDIRECT_IFINDEX) {
					printf("FAIL %s: the table's interfaces are %u and %u, not %u\n", row,
					       RX_IFINDEX, REDIRECT_IFINDEX, ifindex);
					failures++;
					ifindex = cur_rx_ifindex;
				} else {
					stop_dpdk();
					restarts++;
					err = start_dpdk((const char *const *)argv + 1, ifindex);
					if (err) {
						printf("FAIL: cannot restart xlb-dpdk: %s\n", strerror(-err));
						return 1;
					}
				}
			}
			if (w.err && atoi(b) != EINVAL) {
				printf("FAIL %s: want error %s: only EINVAL (runt frames) has a DPDK counterpart\n",
				       row, b);
				failures++;
			}
			if (!w.err) {
				w.retval = (uint32_t)atoi(a);
				w.reason = (uint32_t)atoi(b);
				if (strcmp(c, "-") && !(err = hex_decode(c, want, sizeof(want), &want_len))) {
					w.out = want;
					w.out_len = want_len;
				}
			}
			if (!err)
				failures += run_row(cpu, &w, in, in_len, stats, nstats, argv[6]) ? 1 : 0;
			ifindex = cpu = 0;
			nstats = 0;
		} else {
			err = -EINVAL;
		}
		if (err) {
			printf("FAIL %s: table line %d (%s %s): %s\n", row, lineno, cmd, a, strerror(-err));
			failures++;
		}
	}
	free(line);
	fclose(f);
	stop_dpdk();
	printf("xlb-dpdk %s: %d rows, %d runs, %d restarts (rows on the other interface), %d failures\n",
	       argv[2], rows, runs, restarts, failures);
	return failures ? 1 : 0;
}
