/* SPDX-License-Identifier: MIT */
/*
 * xlbd.h - private to xlbd: the daemon object shared by the API loop
 * (xlbd.c), the health checker (health.c) and the metrics server
 * (metrics.c).  One mutex guards the state, the shadow, the store and the
 * backend; every path that reads or changes them holds it.
 */
#ifndef XLBD_H
#define XLBD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "backend.h"
#include "xlb_control.h"

/* What xlbd last pushed to the dataplane, per VIP id and per real id. */
struct shadow_vip {
	bool present;
	struct xlb_ip addr;
	uint16_t port;
	uint8_t proto;
	uint32_t flags;
	enum xlb_encap_kind encap;
	bool ring_known;
	uint64_t ring_sig; /* what the ring was built from (see ring_signature()) */
	uint32_t *ring; /* ring_size real ids, 0 = empty */
};

struct shadow_real {
	bool present;
	struct xlb_ip addr;
};

enum health_state {
	HEALTH_UNKNOWN = 0, /* not probed yet: counts as up */
	HEALTH_UP = 1,
	HEALTH_DOWN = 2,
};

struct real_health {
	enum health_state state;
	uint32_t ok_streak;
	uint32_t fail_streak;
	uint64_t next_probe_ns;
	uint64_t probes;
	uint64_t failures;
	char last_error[96];
};

struct daemon {
	pthread_mutex_t lock;
	struct xlb_settings settings;
	struct xlb_state state;
	struct xlb_store *store;
	struct xlb_backend be;
	bool be_open;
	struct shadow_vip *svips;
	struct shadow_real *sreals;
	struct real_health *health; /* by real id */
	uint32_t *scratch_ring;
	uint64_t started_ns;
	uint64_t changes;
	volatile bool stopping;
	pthread_t health_thread;
	bool health_running;
	void *mhd;
	uint16_t metrics_port;
	char metrics_addr[64];
	char sock_path[108];
};

void xlbd_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Make the dataplane hold `target` (rings from weights, states and health). Lock held. */
int xlbd_reconcile(struct daemon *d, const struct xlb_state *target, struct xlb_err *err);
/* True when the real counts in its VIP's ring. Lock held. */
bool xlbd_real_in_ring(const struct daemon *d, const struct xlb_vip_cfg *vip,
		       const struct xlb_real_cfg *r);
const char *xlbd_health_name(enum health_state s);

int xlbd_health_start(struct daemon *d);
void xlbd_health_stop(struct daemon *d);
int xlbd_metrics_start(struct daemon *d);
void xlbd_metrics_stop(struct daemon *d);

uint64_t xlbd_now_ns(void);

#endif /* XLBD_H */
