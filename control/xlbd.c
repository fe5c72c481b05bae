// SPDX-License-Identifier: MIT
/*
 * xlbd - the xlb daemon: startup and shutdown.  The steps, in order:
 *
 *  1. settings: config file and command line (config.c);
 *  2. the store, and the settings stored with it for what was not given;
 *  3. the backend: load and attach, or adopt the running dataplane;
 *  4. the desired state from the store, reconciled onto the dataplane
 *     (adopt.c: what the dataplane holds, and never wiping it by mistake);
 *     the config file's vips on an empty store;
 *  5. health checks, fleet mode (the store's watch, route announcement)
 *     and metrics, then the API until SIGTERM (server.c).
 *
 * Stopping leaves the programs attached and the maps pinned (hitless
 * restart); --cleanup detaches and unpins instead.  See xlbd.h for the
 * files and their order.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xlbd.h"

static int apply_initial(struct daemon *d, json_t *initial)
{
	struct xlbd_peer self = { .uid = getuid(), .pid = getpid() };
	struct xlb_state next;
	struct xlb_err err;
	int r;

	r = xlb_state_from_json(initial, &next, &err);
	r = r ?: xlb_state_assign_ids(&next, &d->state, &d->settings, &err);
	r = r ?: xlbd_commit(d, &next, &self, "initial state from the config file", &err);
	if (r)
		xlbd_log(LOG_ERR, "config file vips: %s", err.msg);
	return r;
}

static int open_backend(struct daemon *d)
{
	const struct xlbd_config *c = &d->cfg;
	struct xlb_backend_opts bopts;
	struct xlb_err err = { 0 };

	d->be.ops = xlb_backend_find(c->backend);
	if (!d->be.ops) {
		xlbd_log(LOG_ERR, "unknown or unavailable backend \"%s\"", c->backend);
		return -ENOENT;
	}
	bopts = (struct xlb_backend_opts){
		.obj_path = c->object,
		.pin_root = c->pin_root,
		.run_dir = c->dpdk_run_dir,
		.dpdk_wait_s = c->dpdk_wait_s,
		.verify = (enum xlb_verify_policy)c->verify,
		.xdp_mode = (enum xlb_xdp_mode)c->xdp_mode,
		.skb_mode = c->skb_mode,
		.resize = c->resize,
		.any_size = c->cleanup,
		.settings = &d->settings,
		.log = xlbd_log,
	};
	if (c->cleanup) {
		/* Open (adopting what runs, loading nothing), then close without keeping anything. */
		bopts.verify = XLB_VERIFY_OFF;
		bopts.no_upgrade = true;
		if (d->be.ops->open(&d->be, &bopts, &err)) {
			xlbd_log(LOG_WARNING, "%s", err.msg);
			d->be.ops->close(&d->be, false);
			return -EIO;
		}
		d->be.ops->close(&d->be, false);
		xlbd_log(LOG_NOTICE, "detached and unpinned");
		return 0;
	}
	if (d->be.ops->open(&d->be, &bopts, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		d->be.ops->close(&d->be, true);
		return err.code ? err.code : -EIO;
	}
	d->be_open = true;
	return 0;
}

/*
 * The dataplane was loaded (or adopted) at the settings' sizes; a backend
 * that cannot size its dataplane (xlb-dpdk makes its own maps) gives its
 * sizes, taken unless max-vips / max-reals / ring-size were given, and
 * then refused when they differ.  The shadow is sized by them; they are
 * stored with the state.
 */
static int size_daemon(struct daemon *d)
{
	const struct xlbd_config *c = &d->cfg;
	struct xlb_err err;

	if (!xlbd_config_given(c, "max-vips") && !xlbd_config_given(c, "max-reals") &&
	    !xlbd_config_given(c, "ring-size")) {
		d->settings.max_vips = d->be.max_vips;
		d->settings.max_reals = d->be.max_reals;
		d->settings.ring_size = d->be.ring_size;
	}
	if (d->settings.max_vips != d->be.max_vips || d->settings.max_reals != d->be.max_reals ||
	    d->settings.ring_size != d->be.ring_size) {
		xlbd_log(LOG_ERR, "the %s dataplane has max-vips %u, max-reals %u, ring-size %u; the "
			 "settings say %u, %u, %u: set them to the dataplane's", d->be.ops->name,
			 d->be.max_vips, d->be.max_reals, d->be.ring_size, d->settings.max_vips,
			 d->settings.max_reals, d->settings.ring_size);
		return -EINVAL;
	}
	if (xlb_store__save_settings(d->store, &d->settings, &err))
		xlbd_log(LOG_WARNING, "%s, ignoring", err.msg);
	d->svips = calloc(d->settings.max_vips, sizeof(*d->svips));
	d->sreals = calloc(d->settings.max_reals, sizeof(*d->sreals));
	d->health = calloc(d->settings.max_reals, sizeof(*d->health));
	d->scratch_ring = malloc(d->settings.ring_size * sizeof(uint32_t));
	d->slot_count = calloc(d->settings.max_reals, sizeof(uint32_t));
	if (!d->svips || !d->sreals || !d->health || !d->scratch_ring || !d->slot_count) {
		xlbd_log(LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/*
 * --resize-dataplane replaces the running dataplane: refused before it is
 * touched when the stored state would not fit the new sizes.
 */
static int stored_state_fits(struct daemon *d)
{
	struct xlb_state st;
	struct xlb_err err = { 0 };
	int ret;

	xlb_state_init(&st);
	ret = xlb_store__load(d->store, &st, &err) ?: xlb_state_validate(&st, &d->settings, &err);
	if (ret)
		xlbd_log(LOG_ERR, "--resize-dataplane: the stored state does not fit the new sizes "
			 "(nothing changed): %s", err.msg);
	xlb_state_free(&st);
	return ret;
}

/* Step 4: the stored state onto the dataplane, or the config's on an empty store. */
static int load_state(struct daemon *d)
{
	struct xlb_err err = { 0 };

	if (d->be.ops->config_put(&d->be, &d->settings, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		return err.code;
	}
	if (xlb_store__load(d->store, &d->state, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		return err.code;
	}
	if (xlb_state_validate(&d->state, &d->settings, &err)) {
		xlbd_log(LOG_ERR, "stored state does not fit this dataplane: %s", err.msg);
		return err.code;
	}
	xlbd_health_restore(d);
	if (xlbd_adopt(d))
		return -EINVAL;
	if (xlbd_reconcile(d, &d->state, &err)) {
		xlbd_log(LOG_ERR, "cannot program the dataplane: %s", err.msg);
		return err.code;
	}
	if (!d->state.vip_cnt && d->cfg.initial && apply_initial(d, d->cfg.initial))
		return -EINVAL;
	xlbd_log(LOG_INFO, "state: %zu VIP(s) from %s", d->state.vip_cnt, d->cfg.state_dir);
	return 0;
}

static void daemon_free(struct daemon *d)
{
	xlbd_fleet_free(d); /* withdraws the routes first */
	xlbd_metrics_stop(d);
	xlbd_health_stop(d);
	if (d->be_open)
		d->be.ops->close(&d->be, true);
	xlb_store__close(d->store);
	xlb_state_free(&d->state);
	if (d->svips)
		for (uint32_t i = 0; i < d->settings.max_vips; i++)
			free(d->svips[i].ring);
	free(d->svips);
	free(d->sreals);
	free(d->health);
	free(d->scratch_ring);
	free(d->slot_count);
	xlbd_config_free(&d->cfg);
	if (d->state_lock >= 0)
		close(d->state_lock);
}

int main(int argc, char **argv)
{
	static struct daemon dd;
	struct daemon *d = &dd;
	struct xlbd_config *c = &d->cfg;
	struct xlb_settings stored;
	struct xlb_err err = { 0 };
	sigset_t mask;
	int r, ret = 1;

	setvbuf(stderr, NULL, _IOLBF, 0);
	xlbd_signals_block(&mask);
	*c = (struct xlbd_config){
		.state_dir = "/var/lib/xlb",
		.sock = XLB_SOCK_PATH_DEFAULT,
		.pin_root = "/sys/fs/bpf/xlb",
		.object = XLB_DATADIR "/balancer.bpf.o",
		.backend = "kernel",
		.dpdk_run_dir = "/run/xlb-dpdk",
		.dpdk_wait_s = 10,
		.metrics_addr = "127.0.0.1",
		.metrics_port = 9100,
		.etcd_prefix = "/xlb/",
		.etcd_timeout_ms = 2000,
		.host_ttl_s = 3,
		.api_max_request = XLB_API_MAX_REQUEST,
		.api_max_clients = 4096,
		.api_max_clients_per_uid = 64,
		.api_idle_timeout_ms = 30000,
		.api_write_timeout_ms = 5000,
	};
	xlb_settings_default(&c->set);
	r = xlbd_config_load(c, argc, argv);
	if (r)
		return r > 0 ? 0 : 2;

	d->state_lock = -1;
	pthread_mutex_init(&d->lock, NULL);
	d->started_ns = xlbd_now_ns();
	xlb_state_init(&d->state);
	snprintf(d->sock_path, sizeof(d->sock_path), "%s", c->sock);

	/* One daemon per state: the lock comes before anything is read or changed. */
	if (mkdir(c->state_dir, 0750) && errno != EEXIST) {
		xlbd_log(LOG_ERR, "cannot create state dir %s: %s", c->state_dir, strerror(errno));
		goto out;
	}
	if (xlb_lock_dir(c->state_dir, "state dir", &d->state_lock, &err)) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		goto out;
	}
	if (!c->cleanup && xlbd_socket_in_use(c->sock))
		goto out;
	d->store = xlbd_fleet_store_open(d, &err);
	if (!d->store) {
		xlbd_log(LOG_ERR, "%s", err.msg);
		goto out;
	}
	if (!xlb_store__load_settings(d->store, &stored, &err))
		xlbd_config_merge_stored(c, &stored);
	d->settings = c->set;
	if (xlbd_config_check_sizes(&d->settings)) {
		ret = 2;
		goto out;
	}

	/* Nothing to attach (the packaged config, until edited): a config error, not a crash loop. */
	if (!strcmp(c->backend, "kernel") && !d->settings.iface_cnt && !c->cleanup) {
		xlbd_log(LOG_ERR, "no interface configured: nothing to attach (name interfaces in %s "
			 "or give -i)", c->config ? c->config : "the config file");
		ret = XLBD_EXIT_CONFIG;
		goto out;
	}
	if (c->resize && stored_state_fits(d))
		goto out;
	if (open_backend(d))
		goto out;
	if (c->cleanup) {
		ret = 0;
		goto out;
	}
	if (size_daemon(d) || load_state(d))
		goto out;
	/* Attached and programmed: CAP_SYS_ADMIN can go, before any thread starts. */
	r = xlbd_drop_sys_admin();
	if (r < 0)
		xlbd_log(LOG_WARNING, "cannot drop CAP_SYS_ADMIN: %s", strerror(-r));
	else if (r)
		xlbd_log(LOG_INFO, "dropped CAP_SYS_ADMIN (the dataplane is attached)");

	if (xlbd_health_start(d))
		xlbd_log(LOG_WARNING, "health checker did not start, ignoring");
	if (xlbd_fleet_start(d)) {
		xlbd_log(LOG_ERR, "fleet mode did not start");
		goto out;
	}
	d->metrics_port = c->metrics_port;
	snprintf(d->metrics_addr, sizeof(d->metrics_addr), "%s", c->metrics_addr);
	if (d->metrics_port && (r = xlbd_metrics_start(d))) {
		/* A bind that fails is a wrong setting, unless metrics are optional. */
		xlbd_log(c->metrics_optional ? LOG_WARNING : LOG_ERR,
			 "metrics server on %s port %u did not start: %s%s", d->metrics_addr,
			 d->metrics_port, r == -EINVAL ? "not an IPv4 or IPv6 address" :
							 "address in use or not available",
			 c->metrics_optional ? " (metrics-optional: going on without)" : "");
		d->metrics_port = 0;
		if (!c->metrics_optional)
			goto out;
	}
	if (!xlbd_serve(d))
		ret = 0;
out:
	daemon_free(d);
	return ret;
}
