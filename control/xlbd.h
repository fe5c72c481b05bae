/* SPDX-License-Identifier: MIT */
/*
 * xlbd.h - private to xlbd: the daemon object and the interface of each of
 * its files.  The files call each other in one direction only, bottom up:
 *
 *   daemon.c     logging, clock, names               (calls nothing of xlbd)
 *   config.c     the settings table, config file and command line
 *   reconcile.c  shadow, Maglev rings, reconcile, transactions (commit)
 *   adopt.c      what the dataplane holds at start (adopt, refuse, reset)
 *   view.c       how VIPs and reals are shown (JSON objects, lookups)
 *   bird.c       BIRD's control socket (configure, BGP and BFD sessions)
 *   announce.c   route announcement through BIRD, host drain
 *   fleet.c      fleet mode: the etcd watch, host reports, site health
 *   api_*.c      the API handlers, one file per group of ops (api_conn.c:
 *                the connection table)
 *   api.c        request parsing and dispatch to the ops tables
 *   reload.c     SIGHUP: the live settings again
 *   server.c     the UNIX socket server
 *   health.c     health probes (a thread; reconciles on transitions)
 *   metrics.c    Prometheus exposition (libmicrohttpd's thread)
 *   xlbd.c       main: startup, adoption, shutdown
 *
 * One mutex guards the state, the shadow, the store and the backend; every
 * path that reads or changes them holds it.
 */
#ifndef XLBD_H
#define XLBD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>
#include <sys/types.h>

#include "backend.h"
#include "xlb_control.h"

#ifndef XLB_DATADIR
#define XLB_DATADIR "/usr/share/xlb"
#endif
#ifndef XLB_VERSION
#define XLB_VERSION "0.1.0"
#endif

/* Exit code of a start the configuration makes impossible (EX_CONFIG): no restart loop. */
#define XLBD_EXIT_CONFIG 78

/* What xlbd last pushed to the dataplane, per VIP id and per real id. */
struct shadow_vip {
	bool present;
	struct xlb_ip addr;
	uint16_t port;
	uint8_t proto;
	uint32_t flags;
	enum xlb_encap encap;
	uint16_t affinity_s;
	uint8_t allow_cnt;
	struct xlb_prefix allow[XLB_ALLOW_PER_VIP];
	bool ring_known;
	uint64_t ring_sig; /* what the ring was built from (see ring_signature()) */
	uint32_t *ring;	   /* ring_size real ids, 0 = empty */
};

struct shadow_real {
	bool present;
	struct xlb_ip addr;
	bool draining;
	uint32_t server_id;
};

enum health_state {
	HEALTH_UNKNOWN = 0, /* not probed yet: counts as up */
	HEALTH_UP = 1,
	HEALTH_DOWN = 2,
};

struct real_health {
	enum health_state state;
	bool gated; /* new real of a checked VIP: out of the ring until a first probe passes */
	uint32_t ok_streak;
	uint32_t fail_streak;
	uint64_t next_probe_ns;
	uint64_t probes;
	uint64_t failures;
	char last_error[96];
	/* --health-policy site: more than half of the site's hosts find it down */
	bool site_down;
};

/* Who asked for a change (SO_PEERCRED), for the audit log. */
struct xlbd_peer {
	uid_t uid;
	pid_t pid;
};

/* ---- config.c ------------------------------------------------------------ */

enum xlbd_store_kind { XLBD_STORE_SQLITE = 0, XLBD_STORE_ETCD = 1 };
enum xlbd_health_policy { XLBD_HEALTH_AUTO = 0, XLBD_HEALTH_LOCAL = 1, XLBD_HEALTH_SITE = 2 };

/* Everything xlbd is told at start: the settings table's fields. */
struct xlbd_config {
	const char *config; /* the config file read, or NULL */
	const char *state_dir;
	const char *sock;
	const char *sock_group;
	const char *pin_root;
	const char *object;
	const char *backend;
	const char *dpdk_run_dir; /* userspace backend */
	uint32_t dpdk_wait_s;
	const char *metrics_addr;
	uint16_t metrics_port;
	bool metrics_optional;
	uint32_t api_max_request; /* bytes */
	uint32_t api_max_clients, api_max_clients_per_uid;
	uint32_t api_idle_timeout_ms, api_write_timeout_ms;
	int new_real_wait; /* 0: a first successful probe (VIPs with a check), 1: none */
	int verify;   /* enum xlb_verify_policy */
	int xdp_mode; /* enum xlb_xdp_mode */
	bool skb_mode;
	bool no_verify;
	bool cleanup;
	bool adopt; /* --adopt-dataplane */
	bool reset;
	bool resize; /* --resize-dataplane */
	bool verbose;
	bool help, man, completion, version;
	/* fleet mode (fleet.c, announce.c) */
	int store; /* enum xlbd_store_kind */
	const char *etcd_endpoints;
	const char *etcd_prefix;
	uint32_t etcd_timeout_ms;
	const char *host_name;
	uint32_t host_ttl_s;
	const char *bird_socket;
	const char *bird_include;
	int health_policy; /* enum xlbd_health_policy */
	struct xlb_settings set;
	/* Per row of the settings table: given by the config file or the command line. */
	unsigned char given[64];
	void *initial; /* json_t: the config file's "vips", applied when the store is empty */
};

/*
 * Read the config file (-c FILE, else /etc/xlb/xlbd.yaml if present), then
 * the command line, which overrides it.  Returns 0, 1 when the command line
 * asked for help/man/completion/version (printed; exit 0), or -EINVAL with
 * the reason logged (exit 2).
 */
int xlbd_config_load(struct xlbd_config *cfg, int argc, char **argv);
/*
 * Read the config file and command line again (SIGHUP) and take the
 * settings that can change live into cur; the others are logged as waiting
 * for a restart.  Returns how many changed, or -EINVAL (logged; cur kept);
 * *ret_dataplane: a dataplane setting changed.
 */
int xlbd_config_reload(struct xlbd_config *cur, bool *ret_dataplane);
/* Was the setting (its long name) given by the config file or the command line? */
bool xlbd_config_given(const struct xlbd_config *cfg, const char *name);
/* Sizes the dataplane can take: a prime ring, rings within one map.  -EINVAL logged. */
int xlbd_config_check_sizes(const struct xlb_settings *set);
/* Take the dataplane settings the config did not give from the stored ones. */
void xlbd_config_merge_stored(struct xlbd_config *cfg, const struct xlb_settings *stored);
void xlbd_config_free(struct xlbd_config *cfg);

/* ---- the daemon ---------------------------------------------------------- */

struct daemon {
	pthread_mutex_t lock;
	struct xlbd_config cfg;
	struct xlb_settings settings;
	struct xlb_state state;
	struct xlb_store *store;
	int state_lock; /* flock on the state dir: one daemon per state */
	struct xlb_backend be;
	bool be_open;
	struct shadow_vip *svips;
	struct shadow_real *sreals;
	struct real_health *health; /* by real id */
	uint32_t *scratch_ring;
	uint32_t *slot_count; /* by real id, for xlbd_ring_slots() */
	uint64_t started_ns;
	uint64_t changes;
	bool no_gate; /* the changes being committed are not new (adoption) */
	volatile bool stopping;
	pthread_t health_thread;
	bool health_running;
	void *mhd;
	uint16_t metrics_port;
	char metrics_addr[64];
	char sock_path[108];
	/* fleet mode */
	char host[64];	  /* this host's name in the site */
	bool site_health; /* rings follow the site's health verdicts, not this host's */
	struct xlbd_fleet *fleet;
	struct xlbd_announce *announce;
};

/* ---- daemon.c ------------------------------------------------------------ */

void xlbd_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xlbd_log_set_level(int max_level);
/* Drop CAP_SYS_ADMIN (daemon.c says why it can go): 1 dropped, 0 not held, -errno. */
int xlbd_drop_sys_admin(void);
uint64_t xlbd_now_ns(void);
const char *xlbd_health_name(enum health_state s);
/* The audit log of a change (error NULL: applied), with the peer's uid and pid. */
void xlbd_audit(const struct xlbd_peer *p, const char *what, const char *error, double ms);
/* Block SIGTERM, SIGINT and SIGHUP (read through a signalfd), ignore SIGPIPE. */
void xlbd_signals_block(sigset_t *ret_mask);

/* ---- reconcile.c --------------------------------------------------------- */

/* Make the dataplane hold `target` (rings from weights, states and health). Lock held. */
int xlbd_reconcile(struct daemon *d, const struct xlb_state *target, struct xlb_err *err);
/* True when the real counts in its VIP's ring. Lock held. */
/* This host's probes say the real is out (down, or new and not probed up yet). */
bool xlbd_health_out(const struct real_health *h);
/* Reals `next` adds (or whose id names another address) start waiting for a probe. */
void xlbd_mark_new_reals(struct daemon *d, const struct xlb_state *next);
bool xlbd_real_in_ring(const struct daemon *d, const struct xlb_vip_cfg *vip,
		       const struct xlb_real_cfg *r);
/*
 * Record that the dataplane already holds v (meta, and its reals' slots):
 * with a ring, v's reconcile pushes nothing until v changes; without one
 * (NULL), the next reconcile republishes v's ring.
 */
void xlbd_shadow_seed(struct daemon *d, const struct xlb_vip_cfg *v, const uint32_t *ring);
/* Restore the health verdicts the store kept for the reals of the state. */
void xlbd_health_restore(struct daemon *d);
/* Keep a real's verdict in the store (lock held). */
void xlbd_health_save(struct daemon *d, const struct xlb_real_cfg *r);
/* Apply `next` as one transaction (takes ownership of next); `what` goes to the audit log. */
int xlbd_commit(struct daemon *d, struct xlb_state *next, const struct xlbd_peer *p,
		const char *what, struct xlb_err *err);

/* ---- adopt.c ------------------------------------------------------------- */

/*
 * Take in what the dataplane holds (lock held, store loaded): refuses an
 * empty store over a populated dataplane unless --adopt-dataplane (import
 * it) or --reset (remove it).  Returns 0 or -errno (logged).
 */
int xlbd_adopt(struct daemon *d);

/* ---- view.c -------------------------------------------------------------- */

/* "10.0.0.1:80/tcp", "[2001:db8::1]:443/udp". */
const char *xlbd_vip_str(const struct xlb_vip_cfg *v, char *buf, size_t len);
/* The VIP a key object names in st; -ENOENT with a message if none. */
int xlbd_find_vip(const json_t *key, const struct xlb_state *st, struct xlb_vip_cfg **ret,
		  struct xlb_err *err);
/* "encap ipip flags no-sport check tcp port 0 every 1000 ms ...", for the audit log. */
const char *xlbd_vip_summary(const struct xlb_vip_cfg *v, char *buf, size_t len);
/* "unchecked", "waiting" (for a first probe), "unknown", "up" or "down". */
const char *xlbd_health_str(const struct daemon *d, const struct xlb_vip_cfg *v,
			    const struct xlb_real_cfg *r);
/* The ring slots each real of v holds in the dataplane now (ret_slots[real_cnt]). */
int xlbd_ring_slots(struct daemon *d, const struct xlb_vip_cfg *v, uint32_t *ret_slots);
/* A real with its health, slots and share of the ring; a VIP with all its reals so. */
json_t *xlbd_real_json(const struct daemon *d, const struct xlb_vip_cfg *v,
		       const struct xlb_real_cfg *r, uint32_t slots);
json_t *xlbd_vip_full_json(struct daemon *d, const struct xlb_vip_cfg *v);
/* {"ports": [...], "lcores": [...]} of a backend with its own ports; NULL if it has none. */
json_t *xlbd_io_json(struct daemon *d);

/* ---- bird.c -------------------------------------------------------------- */

/* `configure` on BIRD's control socket; -errno with why in err. */
int xlbd_bird_configure(const char *sock, char *err, size_t errlen);
/* {"bgp": [{name, state, info}], "bfd": [{peer, interface, state, ...}]}, NULL on error. */
json_t *xlbd_bird_sessions(const char *sock, char *err, size_t errlen);

/* ---- announce.c ----------------------------------------------------------- */

int xlbd_announce_init(struct daemon *d);
/* Dataplane check, drain progress, routes to BIRD, sessions (no lock held). */
void xlbd_announce_tick(struct daemon *d);
/* host drain / resume (lock held): routes withdrawn or announced before it returns. */
int xlbd_announce_drain(struct daemon *d, bool drain, struct xlb_err *err);
json_t *xlbd_announce_status(struct daemon *d); /* lock held */
void xlbd_announce_shutdown(struct daemon *d); /* withdraw everything (no lock held) */
void xlbd_announce_free(struct daemon *d);

/* ---- fleet.c -------------------------------------------------------------- */

/* The store the config names (SQLite or etcd); sets d->host and d->site_health. */
struct xlb_store *xlbd_fleet_store_open(struct daemon *d, struct xlb_err *err);
/* The watch and tick threads (after the state is loaded); stop withdraws and leaves. */
int xlbd_fleet_start(struct daemon *d);
void xlbd_fleet_stop(struct daemon *d);
void xlbd_fleet_free(struct daemon *d);
/* This host's report with its store's details; every host of the site (lock held). */
json_t *xlbd_fleet_self(struct daemon *d);
json_t *xlbd_fleet_hosts(struct daemon *d);

/* ---- api_*.c ------------------------------------------------------------- */

/* One request being handled; handlers run with d->lock held. */
struct xlbd_req {
	struct daemon *d;
	const json_t *args;
	const struct xlbd_peer *peer;
	json_t *result; /* the handler's answer (NULL: none) */
	struct xlb_err *err;
};

struct xlbd_op {
	const char *name; /* "vip.add"; NULL ends a table */
	int (*fn)(struct xlbd_req *r);
};

extern const struct xlbd_op xlbd_ops_vip[];   /* api_vip.c: vip.* and real.* */
extern const struct xlbd_op xlbd_ops_info[];  /* api_info.c: ping, stats, status, health, export */
extern const struct xlbd_op xlbd_ops_apply[]; /* api_apply.c: apply */
extern const struct xlbd_op xlbd_ops_conn[];  /* api_conn.c: conn.lookup/list/flush */
extern const struct xlbd_op xlbd_ops_fleet[]; /* api_fleet.c: host.*, fleet.status */

/* ---- api.c --------------------------------------------------------------- */

/* Handle one request line; returns the response (never NULL). Takes d->lock. */
json_t *xlbd_api_handle(struct daemon *d, const char *buf, size_t len, const struct xlbd_peer *p);

/* ---- reload.c ------------------------------------------------------------ */

/* SIGHUP / systemctl reload: live settings from the config, onto the dataplane. */
void xlbd_reload(struct daemon *d);

/* ---- server.c ------------------------------------------------------------ */

/* True (and logged) when another process answers on the socket path. */
bool xlbd_socket_in_use(const char *path);
/* Serve the API on the socket until SIGTERM/SIGINT; feeds the watchdog. */
int xlbd_serve(struct daemon *d);

/* ---- health.c, metrics.c ------------------------------------------------- */

int xlbd_health_start(struct daemon *d);
void xlbd_health_stop(struct daemon *d);
int xlbd_metrics_start(struct daemon *d);
void xlbd_metrics_stop(struct daemon *d);

#endif /* XLBD_H */
