/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - private to the kernel backend (backend_kernel.c and its
 * kernel_*.c parts): the backend's object and what the parts share.
 *
 *   kernel_load.c   verifier gate, opening the object with its pin paths
 *   kernel_pin.c    attach and pin: adoption of a running program,
 *                   libxdp attach, detach and unpin
 *   kernel_sizes.c  the maps' names and sizes: set at load, pins of other sizes refused
 *   kernel_maps.c   the maps: config, reals, VIPs and their rings
 *   kernel_hc.c     the healthcheck tc program (encapsulated probes)
 *   kernel_stats.c  counters, stats and status
 *   kernel_iface.c  interfaces: egress (redirect), MTU, MACs (xlb_ifaces)
 *   kernel_conn.c   the connection table: lookup, list, flush, active flows
 *   kernel_sizes.c  the maps' sizes and rodata bounds from the settings
 *   kernel_mapio.c  the maps code's access to the maps: bpf(2) on fd[], or
 *                   xlb's shared maps on um[] (the userspace backend runs
 *                   kernel_maps.c, kernel_stats.c and kernel_conn.c over
 *                   xlb-dpdk's maps: backend_userspace.c, userspace.h)
 *   kernel_upgrade.c  bpffs policy, recognising our program, hitless upgrade
 *   backend_kernel.c  open/close and the ops table (calls the others)
 */
#ifndef XLB_KERNEL_H
#define XLB_KERNEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "backend.h"
#include "xbpf.h"
#include "xlb_shared.h"

#define XLB_RING_GRACE_NS (20ull * 1000 * 1000)

enum kmap {
	KM_VIPS,
	KM_VIP_ADDRS,
	KM_REALS,
	KM_RINGS,
	KM_CONNS,
	KM_CONFIG,
	KM_VIP_STATS,
	KM_REAL_STATS,
	KM_REASON_STATS,
	KM_EVENT_STATS,
	KM_IFACES,
	KM_VIP_FILTER,
	KM_SERVER_IDS,
	KM_ALLOW,
	KM_AFFINITY,
	KM_FRAGS,
	KM_VIP_FAST,
	KM_CNT,
};

extern const char *const kernel_map_names[KM_CNT];

struct kiface {
	char name[XLB_IFNAME_LEN];
	int ifindex;
	uint32_t prog_id;
	bool adopted;
	bool native;
	bool dispatcher;
	bool egress_only; /* attached as a redirect target, not a balancing interface */
	bool upgraded;	  /* its running program was replaced by this build at start */
	__u8 tag[8];	  /* tag of prog_id, read while xlbd could (CAP_SYS_ADMIN) */
	struct xdp_program *prog;
};

/* An object file in memory: what the verifier checked is what libbpf opens. */
struct kernel_image {
	void *buf;
	size_t len;
	int verify_result; /* 0 accepted, -EACCES rejected, -ENOTSUP no verifier, 1 not run */
};

struct kernel {
	struct xlb_backend_opts opts;
	char pin_root[256];
	struct bpf_object *obj;
	int fd[KM_CNT];
	/* The userspace backend's maps (xlb-dpdk's shared maps) in place of fd[] (kernel_mapio.c). */
	struct xbpf_map *um[KM_CNT];
	int tx_fd; /* xlb_tx_ports (not pinned; see kernel_iface.c) */
	__u8 obj_tag[8]; /* tag of the loaded object's program (zero: not loaded) */
	struct kiface ifaces[2 * XLB_MAX_IFACES];
	size_t iface_cnt;
	int ncpus;
	bool verified;
	int verify_result; /* 0, -EACCES, -ENOTSUP, or 1: not run */
	char verify_msg[240];
	json_t *verify_json;
	struct kernel_image img;    /* balancer.bpf.o */
	struct stat img_st;	    /* its file when read (status: has it changed since?) */
	struct kernel_image hc_img; /* healthcheck.bpf.o */
	json_t *hc_verify_json;
	/* The dataplane's sizes: the settings' (kernel), xlb-dpdk's maps' (userspace). */
	uint32_t max_vips, max_reals, ring_size;
	/* Per VIP id (max_vips of them): what this daemon knows of the maps. */
	uint8_t *ring_half;
	bool *vip_present;
	bool *vip_fast; /* has the established-flow fast path (the VIP filter's fast bits) */
	uint32_t next_epoch; /* the next VIP settings epoch (never reused: xlb_shared.h) */
	uint64_t *retired_ns;
	uint32_t *server_id;	 /* per real id (max_reals): pushed, to retire old ids */
	struct xlb_ip *vip_addr; /* of the VIPs present: the VIP filter's input */
	uint32_t *keys;		 /* ring_size ring keys */
	/* The healthcheck tc program (encapsulated probes). */
	struct bpf_object *hc_obj;
	int hc_reals_fd;
	int lock_fd; /* flock on the pin root (xlb_lock_dir) */
	char hc_msg[200];
	char hc_verify_msg[240];
};

/*
 * The ops the maps code serves, for both backends' tables (the userspace
 * backend runs it over xlb-dpdk's shared maps: kernel_mapio.c).
 */
#define KERNEL_MAPS_OPS                                                                          \
	.real_put = kernel_real_put, .vip_put = kernel_vip_put, .vip_del = kernel_vip_del,       \
	.vip_list = kernel_vip_list, .ring_get = kernel_ring_get, .real_get = kernel_real_get,   \
	.vip_counters = kernel_vip_counters, .real_counters = kernel_real_counters,              \
	.stats = kernel_stats, .conn_lookup = kernel_conn_lookup, .conn_list = kernel_conn_list, \
	.conn_flush = kernel_conn_flush, .conn_active = kernel_conn_active

#define klog(k, lvl, ...) ((k)->opts.log ? (k)->opts.log(lvl, __VA_ARGS__) : (void)0)

/* kernel_pin.c */
/* Adopt what runs on every interface, else load (verified) and attach. */
int kernel_attach(struct kernel *k, struct xlb_err *err);
/* Release our references; unless keep, detach and unpin too. */
void kernel_detach(struct kernel *k, bool keep);
/*
 * Read the object at path into img (once) and run xlb's verifier on those
 * bytes under the verify policy; msg gets the verdict.  0: load it (from
 * img); -EACCES: rejected under enforce; else the read failed.
 */
int kernel_gate(struct kernel *k, const char *path, struct kernel_image *img,
		json_t **ret_json, char *msg, size_t msglen, struct xlb_err *err);
/* Is prog_id running on ifindex, alone or under libxdp's dispatcher? */
bool kernel_prog_attached(int ifindex, uint32_t prog_id, bool *ret_dispatcher, bool *ret_native);

/* kernel_mapio.c: fd[m], or um[m] when set; 0 or -errno (errno set), as libbpf's calls */
int km_lookup(struct kernel *k, enum kmap m, const void *key, void *val);
int km_update(struct kernel *k, enum kmap m, const void *key, const void *val, __u64 flags);
int km_delete(struct kernel *k, enum kmap m, const void *key);
int km_next_key(struct kernel *k, enum kmap m, const void *key, void *next);
int km_update_batch(struct kernel *k, enum kmap m, const void *keys, const void *vals,
		    __u32 *count);
int km_lookup_batch(struct kernel *k, enum kmap m, void *in, void *out, void *keys, void *vals,
		    __u32 *count);

/* kernel_sizes.c */
/* Set the maps' max_entries and the rodata bounds from the settings (before load). */
int kernel_sizes_apply(struct kernel *k, struct xlb_err *err);
/*
 * Do the pinned maps have the settings' sizes?  0 if so, or if
 * --resize-dataplane asks to replace them (*ret_resize); -EEXIST with both
 * sizes and the ways out in err (and the log) otherwise.
 */
int kernel_sizes_check(struct kernel *k, bool *ret_resize, struct xlb_err *err);

/* kernel_maps.c (the userspace backend programs xlb-dpdk's maps with it too) */
/* The per-VIP arrays for k's sizes (max_vips ...), seeded from the VIPs the maps hold. */
int kernel_maps_init(struct kernel *k, struct xlb_err *err);
void kernel_maps_free(struct kernel *k);
uint64_t kernel_now_ns(void);
void kernel_to_dp_addr(const struct xlb_ip *a, union xlb_addr *ret, __u8 *ret_family);
int kernel_map_err(struct xlb_err *err, const char *what, int e);
int kernel_config_put(struct xlb_backend *be, const struct xlb_settings *set, struct xlb_err *err);
int kernel_real_put(struct xlb_backend *be, uint32_t id, const struct xlb_real_cfg *real,
		    struct xlb_err *err);
int kernel_vip_put(struct xlb_backend *be, const struct xlb_vip_cfg *vip, const uint32_t *ring,
		   struct xlb_err *err);
int kernel_vip_del(struct xlb_backend *be, const struct xlb_ip *addr, uint16_t port,
		   uint8_t proto, uint32_t id, struct xlb_err *err);
int kernel_vip_list(struct xlb_backend *be, struct xlb_dp_vip *ret, size_t max);
int kernel_ring_get(struct xlb_backend *be, uint32_t vip_id, unsigned int half, uint32_t *ret_ring);
int kernel_real_get(struct xlb_backend *be, uint32_t id, struct xlb_ip *ret_addr);

/* kernel_load.c */
uint32_t kernel_prog_id_of_fd(int fd);
bool kernel_map_pinned(const char *name);
int kernel_mkdir_p(const char *path);
int kernel_open_object(struct kernel *k, struct xlb_err *err);
/* The verifier gate and bpf_object__open_mem of the object, pins set (not loaded). */
int kernel_load_object(struct kernel *k, struct xlb_err *err);

/* kernel_upgrade.c */
/* The pin root is on the host's bpffs (mounting /sys/fs/bpf if needed), or -ENOTSUP. */
int kernel_bpffs_check(struct kernel *k, struct xlb_err *err);
/* The fd of the map named `name` among a program's, or -errno. */
int kernel_prog_map_fd(uint32_t prog_id, const char *name);
/* An XDP program named xlb_balancer with xlb's maps. */
bool kernel_is_ours(uint32_t prog_id);
int kernel_repin_maps(struct kernel *k, uint32_t prog_id, struct xlb_err *err);
/* Load this build over the pinned maps (refusing changed layouts before
 * touching anything), replace the adopted interfaces' program where it
 * differs, each in one step, and attach where nothing runs. */
int kernel_upgrade(struct kernel *k, struct xlb_err *err);
/* The tag of a program by fd (0), or -errno. */
int kernel_prog_tag(int fd, __u8 tag[8]);
void kernel_tag_str(const __u8 tag[8], char buf[17]);

/* kernel_iface.c */
/* An interface's MTU and MAC. */
int kernel_iface_info(const char *name, int *ret_mtu, uint8_t ret_mac[6]);
/* xlb_ifaces and the devmap from the settings. */
int kernel_ifaces_put(struct kernel *k, const struct xlb_settings *set, struct xlb_err *err);

/* kernel_conn.c */
int kernel_conn_lookup(struct xlb_backend *be, const struct xlb_dp_conn *key, struct xlb_dp_conn *ret);
int kernel_conn_list(struct xlb_backend *be, const struct xlb_conn_filter *f, struct xlb_dp_conn *ret,
		     size_t max);
int kernel_conn_flush(struct xlb_backend *be, const struct xlb_conn_filter *f);
int kernel_conn_active(struct xlb_backend *be, uint32_t *active, size_t n, uint64_t udp_timeout_ns);

/* kernel_hc.c */
void kernel_hc_setup(struct kernel *k);
void kernel_hc_teardown(struct kernel *k, bool keep);
int kernel_hc_real_put(struct xlb_backend *be, uint32_t mark, const struct xlb_ip *addr,
		       enum xlb_encap encap, struct xlb_err *err);

/* kernel_stats.c */
int kernel_vip_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret);
int kernel_real_counters(struct xlb_backend *be, uint32_t id, struct xlb_counters *ret);
int kernel_stats(struct xlb_backend *be, struct xlb_dp_stats *ret);
json_t *kernel_status(struct xlb_backend *be);

#endif /* XLB_KERNEL_H */
