// SPDX-License-Identifier: MIT
/*
 * Fleet mode: every xlbd of a site runs the same desired state from etcd.
 *
 * Keys under the site's prefix (--etcd-prefix, "/xlb/" by default):
 *   state         the desired state document (state_doc.c); its
 *                 mod_revision is the state's revision
 *   hosts/NAME    each host's report (JSON): the revision it runs, the
 *                 last it refused, the store as it sees it, its routes and
 *                 BGP/BFD sessions, drain state, the reals its probes find
 *                 down; written with the host's lease (--host-ttl), so a
 *                 host that dies leaves the store a few seconds later
 *
 * Two threads.  The watch thread reads the whole prefix, then watches it
 * from the next revision: a new state document is parsed and checked
 * (with this dataplane's limits) and reconciled onto the dataplane - or
 * refused, and the host keeps its last good state and reports the revision
 * it refused; reports update the site's view of health.  The tick thread
 * (every 100 ms) drives route announcement (announce.c), keeps the lease
 * alive and publishes the report when it changes; a failing keepalive is
 * how a host notices it lost the store (it keeps forwarding with its
 * state, refuses changes, reports it), and the first one that succeeds
 * again makes the watch read everything anew, so the host reconverges.
 *
 * Health policy.  Identical rings need identical inputs, and a probe's
 * verdict is local to the host that sent it.  With --health-policy site
 * (the default with etcd) a real leaves the ring when more than half of
 * the hosts that report find it out - down, or new and not yet probed up
 * (a new real of a checked VIP starts out everywhere): every host computes that from the
 * same reports, so the rings stay identical (for the time a report takes
 * to reach every host, ~ms).  One LB that cannot reach a real (its own
 * link, say) does not take the real from the site; the disagreement is
 * listed by `lbctl fleet status`.  --health-policy local keeps the
 * single-host behaviour: this host's probes alone decide.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xlbd.h"

#define TICK_NS (100ull * 1000 * 1000)
#define KEEPALIVE_NS (1000ull * 1000 * 1000)

struct host_report {
	char name[64];
	json_t *report;
	bool lost; /* the key went (lease expired or revoked) */
	uint64_t lost_ns;
};

struct xlbd_fleet {
	bool etcd;
	char prefix[260];
	char hosts_prefix[280];
	char state_key[280];
	char my_key[360];
	struct xlb_etcd *tick_etcd;  /* the tick thread's handle */
	struct xlb_etcd *watch_etcd; /* the watch thread's */
	pthread_t tick_thread, watch_thread;
	bool tick_running, watch_running;
	volatile bool stop;
	volatile bool watch_break; /* ends the current watch: stop or resync */
	/* under the daemon lock */
	struct host_report *hosts;
	size_t host_cnt;
	bool reachable;
	uint64_t unreachable_since_ns;
	char store_error[240];
	bool watching;
	char watch_error[240];
	uint64_t remote_changes;
	char last_writer[64];
	int64_t apply_latency_ms; /* the last state from the watch: written -> running here */
	/* the tick thread's own */
	uint64_t lease;
	char *published;
	uint64_t next_keepalive_ns;
};

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- opening the store --------------------------------------------------------------- */

struct xlb_store *xlbd_fleet_store_open(struct daemon *d, struct xlb_err *err)
{
	struct xlbd_config *c = &d->cfg;
	struct xlb_etcd_store_opts o = { .sz = sizeof(o) };

	if (!d->host[0] && gethostname(d->host, sizeof(d->host) - 1))
		snprintf(d->host, sizeof(d->host), "xlb");
	if (c->host_name)
		snprintf(d->host, sizeof(d->host), "%s", c->host_name);
	d->site_health = c->health_policy == XLBD_HEALTH_SITE ||
			 (c->health_policy == XLBD_HEALTH_AUTO && c->store == XLBD_STORE_ETCD);
	if (c->store != XLBD_STORE_ETCD)
		return xlb_store__open(c->state_dir, err);
	if (!c->etcd_endpoints) {
		xlb_err_set(err, -EINVAL, "store etcd needs --etcd-endpoints");
		return NULL;
	}
	if (strchr(d->host, '/') || !d->host[0]) {
		xlb_err_set(err, -EINVAL, "host name \"%s\" cannot name a key", d->host);
		return NULL;
	}
	o.endpoints = c->etcd_endpoints;
	o.prefix = c->etcd_prefix;
	o.cache_dir = c->state_dir;
	o.writer = d->host;
	o.timeout_ms = c->etcd_timeout_ms;
	return xlb_store__open_etcd(&o, err);
}

/* ---- applying what the watch brings (daemon lock held) ---------------------------------- */

static void refuse(struct daemon *d, uint64_t rev, const char *why)
{
	struct xlb_store_info info;

	xlb_store__info(d->store, &info);
	xlb_store__seen(d->store, rev, why);
	xlbd_log(LOG_ERR, "store revision %llu refused, keeping revision %llu: %s",
		 (unsigned long long)rev, (unsigned long long)info.revision, why);
}

static void on_state(struct daemon *d, const struct xlb_etcd_kv *kv, bool deleted)
{
	struct xlbd_fleet *f = d->fleet;
	struct xlb_store_info info;
	struct xlb_state next;
	struct xlb_state_doc_meta meta;
	struct xlb_err err, undo;
	char why[300];
	uint64_t t0 = xlbd_now_ns();

	xlb_store__info(d->store, &info);
	if (kv->mod_revision <= info.seen_revision)
		return; /* our own commit, or older news */
	if (deleted) {
		/* Nothing silently wipes the dataplane: an empty site is written, not deleted. */
		refuse(d, kv->mod_revision, "the state key was deleted");
		return;
	}
	if (xlb_state_doc_parse(kv->value, kv->value_len, &d->settings, &next, &meta, &err)) {
		refuse(d, kv->mod_revision, err.msg);
		return;
	}
	xlbd_mark_new_reals(d, &next);
	if (xlbd_reconcile(d, &next, &err)) {
		if (xlbd_reconcile(d, &d->state, &undo))
			xlbd_log(LOG_ERR, "undoing a failed change failed too: %s", undo.msg);
		snprintf(why, sizeof(why), "the dataplane refused it: %s", err.msg);
		refuse(d, kv->mod_revision, why);
		xlb_state_free(&next);
		return;
	}
	xlb_state_free(&d->state);
	d->state = next;
	d->changes++;
	f->remote_changes++;
	snprintf(f->last_writer, sizeof(f->last_writer), "%s", meta.writer);
	/* Written -> running here, by the writer's and this host's wall clocks. */
	f->apply_latency_ms = meta.written_at_ms ? (int64_t)(wall_ms() - meta.written_at_ms) : -1;
	if (xlb_store__adopt(d->store, &d->state, kv->mod_revision, &err))
		xlbd_log(LOG_WARNING, "state cache not updated: %s, ignoring", err.msg);
	xlbd_log(LOG_NOTICE, "state revision %llu from %s applied (%.1f ms here, %lld ms after it was written)",
		 (unsigned long long)kv->mod_revision, meta.writer[0] ? meta.writer : "another client",
		 (double)(xlbd_now_ns() - t0) / 1e6, (long long)f->apply_latency_ms);
}

static struct host_report *find_host(struct xlbd_fleet *f, const char *name, bool create)
{
	struct host_report *h;

	for (size_t i = 0; i < f->host_cnt; i++)
		if (!strcmp(f->hosts[i].name, name))
			return &f->hosts[i];
	if (!create)
		return NULL;
	h = realloc(f->hosts, (f->host_cnt + 1) * sizeof(*h));
	if (!h)
		return NULL;
	f->hosts = h;
	h = &f->hosts[f->host_cnt++];
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	return h;
}

/* Does this report say the real of the VIP is down? */
static bool reports_down(json_t *report, const char *vip, const char *real)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(report, "down"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "vip")) ?: "", vip) &&
		    !strcmp(json_string_value(json_object_get(e, "real")) ?: "", real))
			return true;
	return false;
}

/* The site's verdict for each checked real, from the live hosts' reports. */
static void site_health(struct daemon *d)
{
	struct xlbd_fleet *f = d->fleet;
	size_t live = 0;
	bool changed = false;
	struct xlb_err err;

	if (!d->site_health)
		return;
	for (size_t h = 0; h < f->host_cnt; h++)
		live += !f->hosts[h].lost && f->hosts[h].report;
	if (!live)
		return; /* no report yet: the verdicts stay as they are */
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		char vs[80], rs[64];

		if (v->hc.type == XLB_HC_NONE)
			continue;
		xlbd_vip_str(v, vs, sizeof(vs));
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];
			size_t votes = 0;
			bool down;

			xlb_addr_str(&r->addr, rs, sizeof(rs));
			for (size_t h = 0; h < f->host_cnt; h++)
				votes += !f->hosts[h].lost && reports_down(f->hosts[h].report, vs, rs);
			down = votes * 2 > live;
			if (d->health[r->id].site_down == down)
				continue;
			d->health[r->id].site_down = down;
			changed = true;
			xlbd_log(LOG_NOTICE, "real %s of %s: %zu of %zu hosts find it down: %s the ring", rs,
				 vs, votes, live, down ? "out of" : "back in");
		}
	}
	if (changed && xlbd_reconcile(d, &d->state, &err))
		xlbd_log(LOG_ERR, "site health change not pushed: %s", err.msg);
}

static void on_report(struct daemon *d, const struct xlb_etcd_kv *kv, bool deleted)
{
	struct xlbd_fleet *f = d->fleet;
	const char *name = kv->key + strlen(f->hosts_prefix);
	struct host_report *h = find_host(f, name, !deleted);

	if (!h)
		return;
	if (deleted) {
		if (!h->lost)
			xlbd_log(LOG_WARNING, "host %s left the site (its report expired)", name);
		h->lost = true;
		h->lost_ns = xlbd_now_ns();
	} else {
		json_decref(h->report);
		h->report = json_loadb(kv->value, kv->value_len, 0, NULL);
		if (h->lost)
			xlbd_log(LOG_NOTICE, "host %s is back in the site", name);
		h->lost = false;
	}
	site_health(d);
}

static int on_event(void *ctx, bool deleted, const struct xlb_etcd_kv *kv, uint64_t rev)
{
	struct daemon *d = ctx;
	struct xlbd_fleet *f = d->fleet;

	pthread_mutex_lock(&d->lock);
	if (!strcmp(kv->key, f->state_key))
		on_state(d, kv, deleted);
	else if (!strncmp(kv->key, f->hosts_prefix, strlen(f->hosts_prefix)))
		on_report(d, kv, deleted);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/* ---- the watch thread ---------------------------------------------------------------------- */

/* Read everything under the prefix: the state and every report. */
static int resync(struct daemon *d, uint64_t *ret_rev, struct xlb_err *err)
{
	struct xlbd_fleet *f = d->fleet;
	struct xlb_etcd_kv *kvs = NULL;
	size_t n = 0;
	int r;

	r = xlb_etcd__get(f->watch_etcd, f->prefix, true, &kvs, &n, ret_rev, err);
	if (r)
		return r;
	pthread_mutex_lock(&d->lock);
	for (size_t h = 0; h < f->host_cnt; h++) {
		bool present = false;

		for (size_t i = 0; i < n && !present; i++)
			present = !strncmp(kvs[i].key, f->hosts_prefix, strlen(f->hosts_prefix)) &&
				  !strcmp(kvs[i].key + strlen(f->hosts_prefix), f->hosts[h].name);
		if (!present && !f->hosts[h].lost) {
			f->hosts[h].lost = true;
			f->hosts[h].lost_ns = xlbd_now_ns();
		}
	}
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < n; i++)
		on_event(d, false, &kvs[i], *ret_rev);
	xlb_etcd_kvs_free(kvs, n);
	return 0;
}

static void sleep_ms(struct xlbd_fleet *f, int ms)
{
	for (int i = 0; i < ms / 10 && !f->stop; i++) {
		struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
}

static void *watch_main(void *arg)
{
	struct daemon *d = arg;
	struct xlbd_fleet *f = d->fleet;

	while (!f->stop) {
		struct xlb_err err = { 0 };
		uint64_t rev = 0;
		int r;

		f->watch_break = false;
		r = resync(d, &rev, &err);
		if (!r) {
			pthread_mutex_lock(&d->lock);
			f->watching = true;
			f->watch_error[0] = 0;
			pthread_mutex_unlock(&d->lock);
			r = xlb_etcd__watch(f->watch_etcd, f->prefix, rev + 1, on_event, d,
					    &f->watch_break, &err);
		}
		pthread_mutex_lock(&d->lock);
		f->watching = false;
		if (r)
			snprintf(f->watch_error, sizeof(f->watch_error), "%s", err.msg);
		pthread_mutex_unlock(&d->lock);
		if (r && !f->stop)
			sleep_ms(f, 200);
	}
	return NULL;
}

/* ---- the report ---------------------------------------------------------------------------- */

/* This host as the site sees it (daemon lock held). */
static json_t *build_report(struct daemon *d)
{
	struct xlbd_fleet *f = d->fleet;
	struct xlb_store_info info;
	json_t *down = json_array(), *ann;
	size_t checked = 0;

	xlb_store__info(d->store, &info);
	for (size_t i = 0; i < d->state.vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &d->state.vips[i];
		char vs[80], rs[64];

		if (v->hc.type == XLB_HC_NONE)
			continue;
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct real_health *h = &d->health[v->reals[j].id];

			checked++;
			if (!xlbd_health_out(h))
				continue;
			json_array_append_new(down, json_pack("{s:s, s:s, s:s}", "vip",
							      xlbd_vip_str(v, vs, sizeof(vs)), "real",
							      xlb_addr_str(&v->reals[j].addr, rs, sizeof(rs)),
							      "why", h->state == HEALTH_DOWN ? "down" :
											      "waiting"));
		}
	}
	ann = xlbd_announce_status(d);
	json_object_del(ann, "drain_for_s"); /* a clock, not news */
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:{s:s, s:b, s:s}, s:o, s:s, s:o, s:I, s:I}",
			 "host", d->host, "version", XLB_VERSION, "revision", (json_int_t)info.revision,
			 "seen_revision", (json_int_t)info.seen_revision, "refused_revision",
			 (json_int_t)info.refused_revision, "refused_reason", info.refused_msg,
			 "store", "kind", info.kind, "reachable", !f->etcd || f->reachable, "error",
			 f->etcd ? f->store_error : "", "announce", ann, "health_policy",
			 d->site_health ? "site" : "local", "down", down, "checked", (json_int_t)checked,
			 "apply_latency_ms", (json_int_t)f->apply_latency_ms);
}

/* Keep the lease and the report in the store; track whether the store answers. */
static void publish(struct daemon *d)
{
	struct xlbd_fleet *f = d->fleet;
	uint64_t now = xlbd_now_ns();
	struct xlb_err err = { 0 };
	bool renew = now >= f->next_keepalive_ns, ok = true;
	char *text;
	json_t *rep;

	pthread_mutex_lock(&d->lock);
	rep = build_report(d);
	pthread_mutex_unlock(&d->lock);
	text = json_dumps(rep, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rep);
	if (!text)
		return;
	if (renew) {
		f->next_keepalive_ns = now + KEEPALIVE_NS;
		if (f->lease) {
			int r = xlb_etcd__lease_keepalive(f->tick_etcd, f->lease, &err);

			if (r == -ENOENT) { /* expired while we were away: a new one, a new report */
				f->lease = 0;
				free(f->published);
				f->published = NULL;
			} else if (r) {
				ok = false;
			}
		}
		if (ok && !f->lease && xlb_etcd__lease_grant(f->tick_etcd, d->cfg.host_ttl_s, &f->lease, &err))
			ok = false;
	}
	if (ok && f->lease && (!f->published || strcmp(f->published, text))) {
		if (xlb_etcd__put(f->tick_etcd, f->my_key, text, strlen(text), f->lease, NULL, &err)) {
			ok = false;
		} else {
			free(f->published);
			f->published = text;
			text = NULL;
		}
	}
	free(text);
	if (!renew && ok)
		return;
	pthread_mutex_lock(&d->lock);
	if (!ok && f->reachable) {
		f->reachable = false;
		f->unreachable_since_ns = now;
		xlbd_log(LOG_ERR, "store lost: %s; forwarding with the last state, changes refused",
			 err.msg);
	} else if (ok && !f->reachable) {
		f->reachable = true;
		xlbd_log(LOG_NOTICE, "store back after %.1f s; reading the site's state again",
			 (double)(now - f->unreachable_since_ns) / 1e9);
		f->watch_break = true; /* a fresh read: the watch may have missed events */
	}
	snprintf(f->store_error, sizeof(f->store_error), "%s", ok ? "" : err.msg);
	pthread_mutex_unlock(&d->lock);
}

static void *tick_main(void *arg)
{
	struct daemon *d = arg;
	struct xlbd_fleet *f = d->fleet;

	while (!f->stop) {
		uint64_t t0 = xlbd_now_ns(), dt;

		xlbd_announce_tick(d);
		if (f->etcd)
			publish(d);
		dt = xlbd_now_ns() - t0;
		if (dt < TICK_NS) {
			struct timespec ts = { .tv_nsec = (long)(TICK_NS - dt) };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* ---- start, stop, status ------------------------------------------------------------------- */

int xlbd_fleet_start(struct daemon *d)
{
	struct xlbd_fleet *f = calloc(1, sizeof(*f));
	struct xlb_err err;
	int r;

	if (!f)
		return -ENOMEM;
	d->fleet = f;
	r = xlbd_announce_init(d);
	if (r)
		return r;
	f->etcd = xlb_store__replicated(d->store);
	f->reachable = true;
	f->apply_latency_ms = -1;
	if (f->etcd) {
		snprintf(f->prefix, sizeof(f->prefix), "%s", d->cfg.etcd_prefix);
		snprintf(f->hosts_prefix, sizeof(f->hosts_prefix), "%shosts/", f->prefix);
		snprintf(f->state_key, sizeof(f->state_key), "%sstate", f->prefix);
		snprintf(f->my_key, sizeof(f->my_key), "%s%s", f->hosts_prefix, d->host);
		f->tick_etcd = xlb_etcd__new(d->cfg.etcd_endpoints, d->cfg.etcd_timeout_ms, &err);
		f->watch_etcd = f->tick_etcd ?
					xlb_etcd__new(d->cfg.etcd_endpoints, d->cfg.etcd_timeout_ms, &err) :
					NULL;
		if (!f->watch_etcd) {
			xlbd_log(LOG_ERR, "%s", err.msg);
			return err.code;
		}
		if (pthread_create(&f->watch_thread, NULL, watch_main, d))
			return -errno;
		f->watch_running = true;
	}
	if (pthread_create(&f->tick_thread, NULL, tick_main, d))
		return -errno;
	f->tick_running = true;
	return 0;
}

void xlbd_fleet_stop(struct daemon *d)
{
	struct xlbd_fleet *f = d->fleet;
	struct xlb_err err;

	if (!f)
		return;
	/* Withdraw first: the watch may take a second to notice it should stop. */
	d->stopping = true;
	xlbd_announce_shutdown(d);
	f->stop = true;
	f->watch_break = true;
	if (f->tick_running)
		pthread_join(f->tick_thread, NULL);
	if (f->watch_running)
		pthread_join(f->watch_thread, NULL);
	f->tick_running = f->watch_running = false;
	/* Leave the site at once rather than when the lease runs out. */
	if (f->lease && xlb_etcd__lease_revoke(f->tick_etcd, f->lease, &err))
		xlbd_log(LOG_WARNING, "%s, ignoring", err.msg);
	f->lease = 0;
}

void xlbd_fleet_free(struct daemon *d)
{
	struct xlbd_fleet *f = d->fleet;

	if (!f)
		return;
	xlbd_fleet_stop(d);
	xlbd_announce_free(d);
	for (size_t i = 0; i < f->host_cnt; i++)
		json_decref(f->hosts[i].report);
	free(f->hosts);
	free(f->published);
	xlb_etcd__free(f->tick_etcd);
	xlb_etcd__free(f->watch_etcd);
	free(f);
	d->fleet = NULL;
}

json_t *xlbd_fleet_self(struct daemon *d)
{
	struct xlbd_fleet *f = d->fleet;
	struct xlb_store_info info;
	uint64_t now = xlbd_now_ns();
	json_t *j = build_report(d);

	xlb_store__info(d->store, &info);
	json_object_set_new(j, "store",
			    json_pack("{s:s, s:b, s:s, s:s, s:b, s:b, s:f, s:s, s:I, s:s}", "kind",
				      info.kind, "reachable", !f->etcd || f->reachable, "where",
				      info.where, "error", f->etcd ? f->store_error : "",
				      "from_cache", info.from_cache, "watching", f->watching,
				      "unreachable_for_s",
				      f->reachable ? 0.0 : (double)(now - f->unreachable_since_ns) / 1e9,
				      "watch_error", f->watch_error, "remote_changes",
				      (json_int_t)f->remote_changes, "last_writer", f->last_writer));
	json_object_set_new(j, "announce", xlbd_announce_status(d));
	return j;
}

json_t *xlbd_fleet_hosts(struct daemon *d)
{
	struct xlbd_fleet *f = d->fleet;
	uint64_t now = xlbd_now_ns();
	json_t *hosts = json_array();

	json_array_append_new(hosts, xlbd_fleet_self(d));
	for (size_t i = 0; i < f->host_cnt; i++) {
		struct host_report *h = &f->hosts[i];
		json_t *r;

		if (!strcmp(h->name, d->host))
			continue;
		r = h->report ? json_deep_copy(h->report) : json_pack("{s:s}", "host", h->name);
		json_object_set_new(r, "lost", json_boolean(h->lost));
		if (h->lost)
			json_object_set_new(r, "lost_for_s", json_real((double)(now - h->lost_ns) / 1e9));
		json_array_append_new(hosts, r);
	}
	return hosts;
}
