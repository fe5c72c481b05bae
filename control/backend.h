/* SPDX-License-Identifier: MIT */
/*
 * backend.h - private to xlbd: the dataplane backends behind one interface.
 * The kernel backend programs balancer.bpf.o's maps through libbpf and
 * attaches it with libxdp; the userspace backend drives xlb-dpdk (the DPDK
 * path) through the shared maps in its run directory (userspace.h).
 *
 * The daemon drives a backend with small idempotent steps (put a real, put a
 * VIP with its ring, delete a VIP) and keeps a shadow of what it pushed, so a
 * failed change is undone by pushing the previous state again.
 */
#ifndef XLB_BACKEND_H
#define XLB_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_control.h"

enum xlb_verify_policy {
	XLB_VERIFY_ENFORCE = 0, /* refuse to attach what xlb's verifier rejects */
	XLB_VERIFY_WARN = 1, /* log the rejection, attach anyway */
	XLB_VERIFY_OFF = 2,
};

enum xlb_xdp_mode {
	XLB_XDP_AUTO = 0, /* libxdp's dispatcher, else single-program mode */
	XLB_XDP_DISPATCHER = 1, /* the dispatcher or nothing */
	XLB_XDP_SINGLE = 2, /* single-program mode only */
};

struct xlb_backend_opts {
	const char *obj_path; /* balancer.bpf.o */
	const char *pin_root; /* /sys/fs/bpf/xlb */
	/* userspace backend: xlb-dpdk's run directory (maps in maps/), how long to wait for them */
	const char *run_dir;
	unsigned int dpdk_wait_s;
	const char *hc_obj_path; /* healthcheck.bpf.o (tc egress); NULL: beside obj_path */
	enum xlb_verify_policy verify;
	enum xlb_xdp_mode xdp_mode;
	bool skb_mode; /* generic XDP only */
	/* Pinned maps of other sizes than the settings': replace the dataplane (else refused). */
	bool resize;
	/* --cleanup: whatever sizes the pinned dataplane has. */
	bool any_size;
	bool no_upgrade; /* adopt what runs and load nothing (xlbd --cleanup) */
	const struct xlb_settings *settings;
	/* Log callback (the daemon's), level as syslog's LOG_*. */
	void (*log)(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
};

/* Per-object counters read from the dataplane, summed over CPUs. */
struct xlb_counters {
	uint64_t packets;
	uint64_t bytes;
	uint64_t new_flows; /* VIPs and reals only; 0 elsewhere */
};

#define XLB_STATS_MAX_REASONS 64
#define XLB_STATS_MAX_EVENTS 64

struct xlb_dp_stats {
	struct xlb_counters reason[XLB_STATS_MAX_REASONS];
	const char *reason_name[XLB_STATS_MAX_REASONS];
	size_t reason_cnt;
	struct xlb_counters event[XLB_STATS_MAX_EVENTS];
	const char *event_name[XLB_STATS_MAX_EVENTS];
	size_t event_cnt;
	uint64_t lru_hits;
	uint64_t lru_misses;
	uint64_t new_flows;
};

/*
 * Port and worker counters of a dataplane that has its own ports (the
 * userspace backend's DPDK ports and lcores), X(field, doc).  The API,
 * lbctl and the Prometheus endpoint name them by these fields.
 */
#define XLB_PORT_COUNTERS(X)                                                         \
	X(rx_packets, "Packets a port received.")                                    \
	X(rx_bytes, "Bytes a port received.")                                        \
	X(rx_missed, "Packets a port dropped on receive for want of room.")          \
	X(rx_errors, "Receive errors of a port.")                                    \
	X(tx_packets, "Packets a port sent.")                                        \
	X(tx_bytes, "Bytes a port sent.")                                            \
	X(tx_errors, "Transmit errors of a port.")
#define XLB_LCORE_COUNTERS(X)                                                        \
	X(rx, "Packets a worker lcore received and ran the program on.")             \
	X(tx, "XDP_TX verdicts of a worker lcore (sent back out of the port).")      \
	X(redirect, "XDP_REDIRECT verdicts of a worker lcore (sent out of another port).") \
	X(pass, "XDP_PASS verdicts of a worker lcore (to the host stack).")          \
	X(drop, "XDP_DROP verdicts of a worker lcore.")                              \
	X(aborted, "XDP_ABORTED and unknown verdicts of a worker lcore.")            \
	X(tx_failed, "Verdicts a worker lcore could not send (queue full, no port).") \
	X(bad_mbuf, "Packets a worker lcore dropped before the program (chained, too short).")

#define XLB_PORT_CTR_ENUM(f, doc) XLB_PC_##f,
#define XLB_LCORE_CTR_ENUM(f, doc) XLB_LC_##f,
enum xlb_port_counter { XLB_PORT_COUNTERS(XLB_PORT_CTR_ENUM) XLB_PORT_CTR_CNT };
enum xlb_lcore_counter { XLB_LCORE_COUNTERS(XLB_LCORE_CTR_ENUM) XLB_LCORE_CTR_CNT };
#undef XLB_PORT_CTR_ENUM
#undef XLB_LCORE_CTR_ENUM

#define XLB_DP_MAX_PORTS 32
#define XLB_DP_MAX_LCORES 128

struct xlb_dp_io {
	size_t port_cnt;
	struct {
		char name[48];
		const char *role; /* "data" or "exception" */
		uint32_t ifindex;
		uint64_t ctr[XLB_PORT_CTR_CNT];
	} port[XLB_DP_MAX_PORTS];
	size_t lcore_cnt;
	struct {
		uint32_t index; /* the CPU of the per-CPU maps */
		uint32_t lcore;
		double load;	/* busy share of the last second */
		uint64_t ctr[XLB_LCORE_CTR_CNT];
	} lcore[XLB_DP_MAX_LCORES];
};

/* The counters' names (the X-macros' fields) and docs, by index. */
extern const char *const xlb_port_counter_names[XLB_PORT_CTR_CNT];
extern const char *const xlb_port_counter_docs[XLB_PORT_CTR_CNT];
extern const char *const xlb_lcore_counter_names[XLB_LCORE_CTR_CNT];
extern const char *const xlb_lcore_counter_docs[XLB_LCORE_CTR_CNT];

struct xlb_backend;

/* A VIP found in the dataplane when adopting it. */
struct xlb_dp_vip {
	struct xlb_ip addr;
	uint16_t port;
	uint8_t proto;
	uint32_t id;
	uint32_t flags;	    /* XLB_VIP_F_* */
	enum xlb_encap encap;
	uint8_t ring_half;  /* the half packets read now */
	uint32_t epoch;	    /* established-flow fast path: settings epoch, 0: none */
};

/* A connection-table entry (the 5-tuple as the client sent it). */
struct xlb_dp_conn {
	struct xlb_ip client;
	uint16_t cport;
	struct xlb_ip vip;
	uint16_t vport;
	uint8_t proto;
	uint32_t real_id;
	uint32_t hash;
	uint8_t state;	   /* enum xlb_conn_state */
	uint64_t atime_ns; /* UDP: last packet (CLOCK_MONOTONIC); TCP: 0 */
};

/* Which entries a connection-table walk visits: a VIP (port 0: any), a real (0: any). */
struct xlb_conn_filter {
	struct xlb_ip vip;
	uint16_t vport;
	uint8_t proto;
	uint32_t real_id;
};

struct xlb_backend_ops {
	const char *name;
	/* Load or adopt the dataplane; limits the settings may not exceed go to ret_limits. */
	int (*open)(struct xlb_backend *be, const struct xlb_backend_opts *opts,
		    struct xlb_err *err);
	/* keep: leave programs attached and maps pinned (hitless restart). */
	void (*close)(struct xlb_backend *be, bool keep);
	int (*config_put)(struct xlb_backend *be, const struct xlb_settings *set,
			  struct xlb_err *err);
	/*
	 * Real slot `id`: its address, whether it drains (no new clients by
	 * session affinity) and its QUIC server id; real NULL clears the slot
	 * (and its server id).
	 */
	int (*real_put)(struct xlb_backend *be, uint32_t id, const struct xlb_real_cfg *real,
			struct xlb_err *err);
	/* ring: ring_size real ids to publish (double-buffered), or NULL to keep the ring. */
	int (*vip_put)(struct xlb_backend *be, const struct xlb_vip_cfg *vip, const uint32_t *ring,
		       struct xlb_err *err);
	int (*vip_del)(struct xlb_backend *be, const struct xlb_ip *addr, uint16_t port,
		       uint8_t proto, uint32_t id, struct xlb_err *err);
	/* VIPs present in the dataplane (adoption); returns the count or -errno. */
	int (*vip_list)(struct xlb_backend *be, struct xlb_dp_vip *ret, size_t max);
	/* What the dataplane holds, for --adopt-dataplane: a VIP's ring half
	 * (ring_size real ids) and a real's address (-ENOENT: empty slot). */
	int (*ring_get)(struct xlb_backend *be, uint32_t vip_id, unsigned int half, uint32_t *ret_ring);
	int (*real_get)(struct xlb_backend *be, uint32_t id, struct xlb_ip *ret_addr);
	int (*vip_counters)(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret);
	int (*real_counters)(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret);
	int (*stats)(struct xlb_backend *be, struct xlb_dp_stats *ret);
	/* Optional: the dataplane's own ports and worker lcores (-ENOENT: none known yet). */
	int (*io_stats)(struct xlb_backend *be, struct xlb_dp_io *ret);
	/* Status as a JSON object (caller decrefs). */
	json_t *(*status)(struct xlb_backend *be);
	/*
	 * Health probes through the encapsulated path: packets carrying skb
	 * mark `mark` leave encapsulated toward addr.  addr NULL forgets the
	 * mark.  -EOPNOTSUPP when the healthcheck program is not attached.
	 */
	int (*hc_real_put)(struct xlb_backend *be, uint32_t mark, const struct xlb_ip *addr,
			   enum xlb_encap encap, struct xlb_err *err);
	/* One flow's entry: 1 and *ret, 0 when the table has none, or -errno. */
	int (*conn_lookup)(struct xlb_backend *be, const struct xlb_dp_conn *key,
			   struct xlb_dp_conn *ret);
	/* The entries the filter selects, up to max in ret (may be NULL); returns their count. */
	int (*conn_list)(struct xlb_backend *be, const struct xlb_conn_filter *f,
			 struct xlb_dp_conn *ret, size_t max);
	/* Delete the entries the filter selects; returns how many. */
	int (*conn_flush)(struct xlb_backend *be, const struct xlb_conn_filter *f);
	/*
	 * Active flows per real id (established TCP not closed by the client,
	 * UDP younger than its timeout) into active[0..n); 0 or -errno.
	 */
	int (*conn_active)(struct xlb_backend *be, uint32_t *active, size_t n, uint64_t udp_timeout_ns);
};

/* skb mark of the encapsulated health probes of a real (base: hc_mark_base). */
#define XLB_HC_MARK(set, real_id) ((set)->hc_mark_base + (real_id))

struct xlb_backend {
	const struct xlb_backend_ops *ops;
	void *priv;
	/* Limits of this dataplane: settings are clamped to them. */
	uint32_t max_vips;
	uint32_t max_reals;
	uint32_t ring_size;
};

extern const struct xlb_backend_ops xlb_backend_kernel_ops;
extern const struct xlb_backend_ops xlb_backend_userspace_ops;

/* dp_stats.c: what the backends share when they read a dataplane. */
/* Sum a reason (event false) or an event counter over the CPUs. */
typedef int (*xlb_dp_counter_fn)(struct xlb_backend *be, bool event, uint32_t idx,
				 struct xlb_counters *ret);
/* The stats of reasons, events and the connection table, each counter through read(). */
int xlb_dp_stats_read(struct xlb_backend *be, xlb_dp_counter_fn read, struct xlb_dp_stats *ret);
/* The verifier's verdict (0, -EACCES, -ENOTSUP, or 1: not run) as status names it. */
const char *xlb_verify_result_name(int result);

/* "kernel" or "userspace" -> ops; NULL if unknown. */
const struct xlb_backend_ops *xlb_backend_find(const char *name);

/*
 * Verify every program of a BPF object with xlb's verifier.  Returns 0 when
 * all are accepted, -EACCES with a message when one is rejected, -ENOTSUP
 * when this build has no verifier.  ret_json (may be NULL) gets per-program
 * results (name, accepted, stack depths).
 */
int xlb_verify_object(const char *path, json_t **ret_json, struct xlb_err *err);
/* The same on an object already in memory (path names it in messages). */
int xlb_verify_object_mem(const void *buf, size_t len, const char *path, json_t **ret_json,
			  struct xlb_err *err);
/* Read a whole object file (at most XLB_OBJECT_MAX bytes) into *ret_buf (free() it). */
#define XLB_OBJECT_MAX (64 << 20)
int xlb_object_read(const char *path, void **ret_buf, size_t *ret_len, struct xlb_err *err);

#endif /* XLB_BACKEND_H */
