/* SPDX-License-Identifier: MIT */
/*
 * xlb_control.h - the control plane library shared by xlbd and lbctl:
 * weighted Maglev tables, the desired-state model, its durable store
 * (SQLite in WAL mode on one host, etcd for a site), the JSON codec for the API and for `apply` files
 * (JSON or YAML), and the client side of the xlbd socket protocol.
 *
 * Conventions: 0 / -errno returns; pointer functions return NULL and set
 * errno; destructors accept NULL and return NULL; library code never prints,
 * errors carry a message in a caller-provided struct xlb_err.
 */
#ifndef XLB_CONTROL_H
#define XLB_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlb_shared.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------ */

/* A failure as the API reports it: -errno plus a one-line human message. */
struct xlb_err {
	int code;
	char msg[240];
};

/* Fill err (may be NULL) and return code (a negative errno). */
int xlb_err_set(struct xlb_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- Maglev ------------------------------------------------------------ */

/* Default and maximum ring sizes; the size must be prime. */
#define XLB_RING_SIZE_DEFAULT 65537
/* Largest config / apply file (YAML or JSON): room for 4096 VIPs x 16 reals and more. */
#define XLB_CONFIG_MAX_BYTES (64 * 1024 * 1024)
#define XLB_RING_SIZE_MAX 1048573
/* Ring slot value when a VIP has no usable real. */
#define XLB_RING_EMPTY UINT32_MAX

struct xlb_maglev_real {
	/* Identity hashed into the real's permutation (e.g. its address bytes). */
	const void *id;
	size_t id_len;
	/* Relative weight; 0 keeps the real out of the ring. */
	uint32_t weight;
};

/* True when n is prime (ring sizes are checked with it). */
bool xlb_is_prime(uint32_t n);

/*
 * Fill ring[0..size) with indexes into reals[] by the Maglev paper's
 * permutation fill: each real walks its own permutation (offset and skip
 * from two hashes of its identity) and, in each round, claims slots in
 * proportion to its weight.  size must be prime, below 2^31, and >= the
 * number of reals with weight > 0.  With no weighted real every slot is
 * XLB_RING_EMPTY.
 * The ring depends on the reals' identities and weights only, never on
 * their order in reals[] (they take turns in identity order), so identical
 * desired state gives a byte-identical ring on every host.
 * Returns 0, -EINVAL (bad size) or -ENOMEM.
 */
int xlb_maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size);

/* ---- desired state ----------------------------------------------------- */

struct xlb_ip {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t bytes[16]; /* network order; IPv4 uses the first 4 */
};

/*
 * VIP flags (enum xlb_vip_flags, XLB_VIP_F_*) and encapsulations (enum
 * xlb_encap, XLB_ENCAP_*) are the dataplane's, from xlb_shared.h, with
 * their API names; xlb_vip_flag_name() and xlb_encap_name() read them.
 */

enum xlb_real_state {
	XLB_REAL_ACTIVE = 0,
	XLB_REAL_DRAINING = 1, /* out of the ring, established flows finish */
	XLB_REAL_DOWN = 2, /* out of the ring */
};

enum xlb_hc_type {
	XLB_HC_NONE = 0,
	XLB_HC_TCP = 1,
	XLB_HC_HTTP = 2,
};

struct xlb_hc {
	enum xlb_hc_type type;
	uint16_t port; /* 0: the VIP's port */
	char path[128]; /* HTTP GET path */
	uint32_t interval_ms;
	uint32_t timeout_ms;
	uint8_t rise; /* consecutive successes to come back */
	uint8_t fall; /* consecutive failures to leave the ring */
	/* Probe the VIP through the encapsulated path (the healthcheck tc
	 * program) instead of the real's own address. */
	bool via_encap;
};

/* QUIC server ids: Katran CID version 2 carries 24 bits (version 1: 16). */
#define XLB_SERVER_ID_MAX 0xffffffu

struct xlb_real_cfg {
	uint32_t id; /* dataplane real index, stable across restarts */
	struct xlb_ip addr;
	uint32_t weight;
	enum xlb_real_state state;
	uint32_t server_id; /* QUIC server id in the connection IDs it mints; 0: none */
};

/* A source prefix of a VIP's allow-list. */
struct xlb_prefix {
	struct xlb_ip addr;
	uint8_t plen;
};

#define XLB_ALLOW_PER_VIP 32

struct xlb_vip_cfg {
	uint32_t id; /* dataplane VIP index, stable across restarts */
	struct xlb_ip addr;
	uint16_t port; /* host order; 0 = any port */
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
	uint32_t flags;
	enum xlb_encap encap;
	struct xlb_hc hc;
	uint16_t affinity_s; /* session affinity per client address, seconds; 0: none */
	/* Source allow-list: only these prefixes may use the VIP (empty: everyone,
	 * unless the allowlist flag is set: nobody). */
	uint8_t allow_cnt;
	struct xlb_prefix allow[XLB_ALLOW_PER_VIP];
	struct xlb_real_cfg *reals;
	size_t real_cnt;
};

/* "ADDR/PLEN" (or ADDR: a host) into a prefix; its host bits must be 0. */
int xlb_prefix_parse(const char *s, struct xlb_prefix *ret);
const char *xlb_prefix_str(const struct xlb_prefix *p, char *buf, size_t len);

#define XLB_MAX_IFACES 8
/* Default base of the health probes' skb marks: "XL" << 16. */
#define XLB_HC_MARK_BASE_DEFAULT 0x584c0000u
#define XLB_IFNAME_LEN 16

/* "IFACE=VALUE" settings, one entry per interface (see xlbd(8)). */
struct xlb_iface_egress {
	char name[XLB_IFNAME_LEN];   /* a balancing (ingress) interface */
	char egress[XLB_IFNAME_LEN]; /* its balanced packets leave here (redirect mode) */
};

struct xlb_iface_mtu {
	char name[XLB_IFNAME_LEN];
	uint16_t mtu; /* largest IP packet leaving this interface */
};

struct xlb_iface_mac {
	char name[XLB_IFNAME_LEN];
	uint8_t mac[6];
};

struct xlb_settings {
	char ifaces[XLB_MAX_IFACES][XLB_IFNAME_LEN];
	size_t iface_cnt;
	/* Redirect mode: per balancing interface, the interface packets leave by. */
	struct xlb_iface_egress egress[XLB_MAX_IFACES];
	size_t egress_cnt;
	/* Overrides of the interfaces' MTU as the largest packet they carry. */
	struct xlb_iface_mtu mtu[2 * XLB_MAX_IFACES];
	size_t mtu_cnt;
	/* The next hop's MAC per leaving interface (else gw_mac). */
	struct xlb_iface_mac egress_gw[2 * XLB_MAX_IFACES];
	size_t egress_gw_cnt;
	int frag_policy; /* 0: balance fragments to VIPs, 1: drop them */
	/* Encapsulated health probes: outer source MAC and addresses (zero:
	 * the interface's), and the base of the probe mark range. */
	uint8_t hc_src_mac[6];
	struct xlb_ip hc_src4;
	struct xlb_ip hc_src6;
	uint32_t hc_mark_base;
	uint8_t gw_mac[6];
	uint32_t ring_size;
	uint32_t lru_size;
	uint32_t max_vips;
	uint32_t max_reals;
	/* Outer source prefixes of encapsulated packets (host bits vary per flow). */
	struct xlb_ip src4;
	uint8_t src4_plen;
	struct xlb_ip src6;
	uint8_t src6_plen;
	uint16_t gue_port; /* 0: the dataplane's default */
	uint32_t max_new_flows_per_sec; /* per CPU; 0: unlimited */
};

struct xlb_state {
	struct xlb_vip_cfg *vips;
	size_t vip_cnt;
	/* Next real id to hand out: ids are not reused soon, so a flow left
	 * in the LRU never lands on a newcomer that took a deleted real's id. */
	uint32_t next_real_id;
};

void xlb_state_init(struct xlb_state *st);
void xlb_state_free(struct xlb_state *st);
int xlb_state_copy(struct xlb_state *dst, const struct xlb_state *src);

/* Parse and print addresses ("10.0.0.1", "2001:db8::1"). */
int xlb_addr_parse(const char *s, struct xlb_ip *ret_addr);
const char *xlb_addr_str(const struct xlb_ip *a, char *buf, size_t len);
bool xlb_addr_eq(const struct xlb_ip *a, const struct xlb_ip *b);
/*
 * Why an address can be neither a VIP nor a real (unspecified, loopback,
 * link-local, multicast, broadcast, reserved, IPv4-mapped), or NULL when it
 * can.
 */
const char *xlb_addr_unusable(const struct xlb_ip *a);
int xlb_mac_parse(const char *s, uint8_t ret_mac[6]);

const char *xlb_proto_name(uint8_t proto);
int xlb_proto_parse(const char *s, uint8_t *ret_proto);
const char *xlb_encap_name(enum xlb_encap e);
int xlb_encap_parse(const char *s, enum xlb_encap *ret);
const char *xlb_real_state_name(enum xlb_real_state s);
int xlb_real_state_parse(const char *s, enum xlb_real_state *ret);
const char *xlb_hc_type_name(enum xlb_hc_type t);
int xlb_hc_type_parse(const char *s, enum xlb_hc_type *ret);
/* The names, NULL-terminated, indexed by value (flags: by bit number). */
extern const char *const xlb_encap_names[];
extern const char *const xlb_real_state_names[];
extern const char *const xlb_hc_type_names[];
extern const char *const xlb_hc_via_names[]; /* "direct", "encap" */
extern const char *const xlb_vip_flag_names[];
/* Name of one flag bit, NULL if unknown. */
const char *xlb_vip_flag_name(uint32_t bit);
int xlb_vip_flag_parse(const char *s, uint32_t *ret_bit);

/* Lookups in a state; NULL when absent. */
struct xlb_vip_cfg *xlb_state_find_vip(const struct xlb_state *st, const struct xlb_ip *addr,
				   uint16_t port, uint8_t proto);
struct xlb_real_cfg *xlb_vip_find_real(const struct xlb_vip_cfg *vip, const struct xlb_ip *addr);

/*
 * Edits.  They validate, allocate ids within the settings' limits and leave
 * st untouched on error.
 */
int xlb_state_vip_add(struct xlb_state *st, const struct xlb_settings *set,
		      const struct xlb_vip_cfg *vip, struct xlb_err *err);
int xlb_state_vip_del(struct xlb_state *st, const struct xlb_ip *addr, uint16_t port,
		      uint8_t proto, struct xlb_err *err);
int xlb_state_real_add(struct xlb_state *st, const struct xlb_settings *set, struct xlb_vip_cfg *vip,
		       const struct xlb_real_cfg *real, struct xlb_err *err);
int xlb_state_real_del(struct xlb_state *st, struct xlb_vip_cfg *vip, const struct xlb_ip *addr,
		       struct xlb_err *err);
/* Check a whole state against settings (limits, unique ids and keys). */
int xlb_state_validate(const struct xlb_state *st, const struct xlb_settings *set,
		       struct xlb_err *err);
/*
 * Make `next` carry the ids of `cur` for the VIPs and reals both have, and
 * allocate fresh ids for the others: used by `apply`, which gets a state
 * without ids from a file.
 */
int xlb_state_assign_ids(struct xlb_state *next, const struct xlb_state *cur,
			 const struct xlb_settings *set, struct xlb_err *err);

/* Default settings and health check. */
void xlb_settings_default(struct xlb_settings *set);
void xlb_hc_default(struct xlb_hc *hc);

/* ---- one daemon per state ---------------------------------------------- */

/*
 * Take an exclusive flock on the directory path (held until *ret_fd is
 * closed or the process ends).  -EBUSY when another process holds it, with
 * its pid in the message ("what" names the directory: "state dir", ...).
 */
int xlb_lock_dir(const char *path, const char *what, int *ret_fd, struct xlb_err *err);

/* ---- store ------------------------------------------------------------- */

struct xlb_store;

/*
 * Open (creating if needed) the store at dir/xlb.db, SQLite in WAL mode.
 * Returns NULL and sets errno; err says why.
 */
struct xlb_store *xlb_store__open(const char *dir, struct xlb_err *err);
struct xlb_store *xlb_store__close(struct xlb_store *store);

/* Load the whole desired state (empty state when new). */
int xlb_store__load(struct xlb_store *store, struct xlb_state *ret_state, struct xlb_err *err);
/* Settings: returns -ENOENT when never saved. */
int xlb_store__load_settings(struct xlb_store *store, struct xlb_settings *ret_set,
			     struct xlb_err *err);
int xlb_store__save_settings(struct xlb_store *store, const struct xlb_settings *set,
			     struct xlb_err *err);

/*
 * A change is: begin, save the new state, then commit or roll back.  The
 * caller programs the dataplane between save and commit, so a failure there
 * rolls the store back too.
 */
int xlb_store__begin(struct xlb_store *store, struct xlb_err *err);
int xlb_store__save(struct xlb_store *store, const struct xlb_state *st, struct xlb_err *err);
int xlb_store__commit(struct xlb_store *store, struct xlb_err *err);
void xlb_store__rollback(struct xlb_store *store);

/*
 * Health verdicts, kept apart from the desired state (probes change them, not
 * operators): up 1/0 for a real id with its address, up -1 forgets it.
 * Loading calls fn for each one stored.
 */
int xlb_store__save_health(struct xlb_store *store, uint32_t real_id, const struct xlb_ip *addr,
			   int up, struct xlb_err *err);
int xlb_store__load_health(struct xlb_store *store,
			   void (*fn)(void *ctx, uint32_t real_id, const struct xlb_ip *addr, int up),
			   void *ctx, struct xlb_err *err);

/* Where a store stands: the revision of the state it holds for this host. */
struct xlb_store_info {
	const char *kind; /* "sqlite" or "etcd" */
	/* sqlite: commits counted; etcd: the state key's mod_revision. */
	uint64_t revision;
	uint64_t seen_revision;	   /* the newest seen in the store (refused ones too) */
	uint64_t refused_revision; /* the last one refused (0: none), and why */
	char refused_msg[240];
	bool from_cache; /* etcd: started from the local cache, not from etcd */
	char where[360]; /* the file, or the member and key */
};
void xlb_store__info(struct xlb_store *store, struct xlb_store_info *ret);

/*
 * The replicated store: etcd (store_etcd.c).  The whole state is one
 * document under `prefix`"state"; a commit is one etcd txn that compares
 * the key's revision with the one this host last saw (-ESTALE when another
 * writer came first: nothing written); -EHOSTUNREACH when no member
 * answers.  cache_dir keeps a SQLite store with this host's settings and
 * the last good state, which load() falls back to when etcd is unreachable
 * or holds a state that fails the document's checks.
 */
struct xlb_etcd_store_opts {
	size_t sz;
	const char *endpoints; /* "http://10.0.0.1:2379,http://10.0.0.2:2379" */
	const char *prefix;    /* "/xlb/site/": keys under it */
	const char *cache_dir;
	const char *writer;    /* recorded in the documents this host writes */
	uint32_t timeout_ms;   /* per request (0: 2000) */
};
struct xlb_store *xlb_store__open_etcd(const struct xlb_etcd_store_opts *opts,
				       struct xlb_err *err);
/* True for a replicated store (other writers; see adopt and seen). */
bool xlb_store__replicated(const struct xlb_store *store);
/* A state read from the store's watch that this host now runs, at revision rev. */
int xlb_store__adopt(struct xlb_store *store, const struct xlb_state *st, uint64_t rev,
		     struct xlb_err *err);
/* Revision rev of the state was seen in the store; refused: why it was not run (or NULL). */
void xlb_store__seen(struct xlb_store *store, uint64_t rev, const char *refused);

/*
 * The state document of the replicated store, with ids (state_doc.c):
 * dump for writing (writer may be NULL; the time is recorded too); parse
 * refuses anything but a complete, valid state (set NULL: the default
 * limits); ret_meta (may be NULL) gets who wrote it and when.
 */
struct xlb_state_doc_meta {
	char writer[64];	/* who wrote it ("" if unsaid) */
	uint64_t written_at_ms; /* the writer's wall clock (0 if unsaid) */
};
char *xlb_state_doc_dump(const struct xlb_state *st, const char *writer);
int xlb_state_doc_parse(const char *text, size_t len, const struct xlb_settings *set,
			struct xlb_state *ret_state, struct xlb_state_doc_meta *ret_meta,
			struct xlb_err *err);

/* ---- etcd v3 client (JSON gateway over libcurl; etcd.c) ----------------- */

struct xlb_etcd;

struct xlb_etcd_kv {
	char *key;   /* NUL-terminated */
	char *value; /* value_len bytes, NUL-terminated too */
	size_t value_len;
	uint64_t create_revision;
	uint64_t mod_revision;
	uint64_t version;
	uint64_t lease;
};

/* endpoints: comma-separated http(s) URLs of the members. One thread per handle. */
struct xlb_etcd *xlb_etcd__new(const char *endpoints, uint32_t timeout_ms, struct xlb_err *err);
struct xlb_etcd *xlb_etcd__free(struct xlb_etcd *etcd);
/* The member the handle talks to now. */
const char *xlb_etcd__endpoint(const struct xlb_etcd *etcd);
/* One key, or (prefix) every key starting with key; ret_rev: the store's revision. */
int xlb_etcd__get(struct xlb_etcd *etcd, const char *key, bool prefix,
		  struct xlb_etcd_kv **ret_kvs, size_t *ret_cnt, uint64_t *ret_rev,
		  struct xlb_err *err);
void xlb_etcd_kvs_free(struct xlb_etcd_kv *kvs, size_t cnt);
/* lease 0: none. */
int xlb_etcd__put(struct xlb_etcd *etcd, const char *key, const void *value, size_t len,
		  uint64_t lease, uint64_t *ret_rev, struct xlb_err *err);
/* Put if the key's mod_revision is expect (0: absent); else -ESTALE and *ret_cur. */
int xlb_etcd__put_if(struct xlb_etcd *etcd, const char *key, const void *value, size_t len,
		     uint64_t expect_mod_rev, uint64_t *ret_rev, uint64_t *ret_cur_mod_rev,
		     struct xlb_err *err);
int xlb_etcd__del(struct xlb_etcd *etcd, const char *key, struct xlb_err *err);
int xlb_etcd__lease_grant(struct xlb_etcd *etcd, uint32_t ttl_s, uint64_t *ret_id,
			  struct xlb_err *err);
/* -ENOENT when the lease expired meanwhile. */
int xlb_etcd__lease_keepalive(struct xlb_etcd *etcd, uint64_t id, struct xlb_err *err);
int xlb_etcd__lease_revoke(struct xlb_etcd *etcd, uint64_t id, struct xlb_err *err);
/*
 * Watch every key under prefix from start_rev: cb gets each event (deleted
 * for a DELETE) with the revision of its message; a non-zero return ends
 * the watch with that value.  Returns when *stop turns true (0), the
 * stream breaks (-EHOSTUNREACH / -EPIPE; the next watch tries the next
 * member) or start_rev was compacted (-ERANGE: read again, then watch).
 */
typedef int (*xlb_etcd_watch_cb)(void *ctx, bool deleted, const struct xlb_etcd_kv *kv,
				 uint64_t rev);
int xlb_etcd__watch(struct xlb_etcd *etcd, const char *prefix, uint64_t start_rev,
		    xlb_etcd_watch_cb cb, void *ctx, volatile bool *stop, struct xlb_err *err);

/* ---- JSON codec (jansson) ---------------------------------------------- */

/* xlbd's default request limit (api-max-request); the parser's own bound is the HARD one. */
#define XLB_API_MAX_REQUEST (256 * 1024)
#define XLB_API_MAX_REQUEST_HARD (64 * 1024 * 1024)
#define XLB_API_VERSION 1
#define XLB_SOCK_PATH_DEFAULT "/run/xlb/xlbd.sock"

typedef struct json_t json_t;

/* VIP and real objects of the API (also the elements of apply files). */
int xlb_vip_from_json(const json_t *j, struct xlb_vip_cfg *ret_vip, bool with_reals,
		      struct xlb_err *err);
json_t *xlb_vip_to_json(const struct xlb_vip_cfg *vip, bool with_reals);
int xlb_real_from_json(const json_t *j, struct xlb_real_cfg *ret_real, struct xlb_err *err);
json_t *xlb_real_to_json(const struct xlb_real_cfg *real);
/* A VIP key object: {"address", "port", "proto"}. */
int xlb_vip_key_from_json(const json_t *j, struct xlb_ip *ret_addr, uint16_t *ret_port,
			  uint8_t *ret_proto, struct xlb_err *err);

/* A whole desired state: {"vips": [...]} (ids ignored on input). */
int xlb_state_from_json(const json_t *j, struct xlb_state *ret_state, struct xlb_err *err);
json_t *xlb_state_to_json(const struct xlb_state *st, bool with_ids);
/*
 * An apply config must say what it wants: a "vips" list.  Missing, null
 * (an empty, blank or comment-only file, {}, "vips:") is refused; an empty
 * list (remove every VIP) only with allow_empty.
 */
int xlb_config_check_apply(const json_t *cfg, bool allow_empty, struct xlb_err *err);

/*
 * Parse an `apply` file's text, YAML or JSON (JSON is YAML's subset, so
 * both go through libyaml), into a JSON value.  Returns NULL and fills err.
 */
json_t *xlb_config_parse(const char *text, size_t len, struct xlb_err *err);

/*
 * An API request, checked: version, op name, args object.  The parsed JSON
 * is returned in *ret_req (caller json_decref()s it).
 */
struct xlb_request {
	json_t *root;
	const char *op;
	const json_t *args; /* always an object (empty if absent) */
};
int xlb_request_parse(const char *buf, size_t len, struct xlb_request *ret_req,
		      struct xlb_err *err);
/* {"v":1,"ok":false,"error":{"errno":N,"code":"EINVAL","message":"..."}} */
json_t *xlb_response_error(const struct xlb_err *err);
/* {"v":1,"ok":true,"result":result} (steals result; NULL: no result). */
json_t *xlb_response_ok(json_t *result);

/* ---- client ------------------------------------------------------------ */

/* Connect to xlbd's socket within timeout_ms (<= 0: none); an fd or -errno. */
int xlb_client_connect(const char *path, int timeout_ms);
/*
 * Send one request (steals req) and read one response, both within
 * timeout_ms (<= 0: none; -ETIMEDOUT past it).  Requests and responses are
 * one JSON document per line.  Returns 0 with *ret_resp set, or -errno.
 */
int xlb_client_call(int fd, json_t *req, json_t **ret_resp, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* XLB_CONTROL_H */
