// SPDX-License-Identifier: MIT
/*
 * SIGHUP (systemctl reload, the unit's ExecReload): read the config again
 * and apply what can change live: the dataplane's encapsulation settings
 * (gateway MAC, outer sources, GUE port, flood guard) go to its config map
 * and the store; the API's limits and timeouts and new-real-wait apply to
 * the next connection and the next change.  What needs a restart (the
 * interfaces, the object, the paths, the map sizes) is logged and kept.
 * A config that does not load leaves everything as it was.
 */
#include <string.h>
#include <systemd/sd-daemon.h>

#include "xlbd.h"

void xlbd_reload(struct daemon *d)
{
	struct xlb_err err = { 0 };
	bool dataplane = false;
	int n;

	sd_notify(0, "RELOADING=1");
	pthread_mutex_lock(&d->lock);
	n = xlbd_config_reload(&d->cfg, &dataplane);
	if (n > 0 && dataplane) {
		struct xlb_settings *set = &d->settings;
		const struct xlb_settings *want = &d->cfg.set;

		memcpy(set->gw_mac, want->gw_mac, sizeof(set->gw_mac));
		set->src4 = want->src4;
		set->src4_plen = want->src4_plen;
		set->src6 = want->src6;
		set->src6_plen = want->src6_plen;
		set->gue_port = want->gue_port;
		set->max_new_flows_per_sec = want->max_new_flows_per_sec;
		if (d->be.ops->config_put(&d->be, set, &err))
			xlbd_log(LOG_ERR, "reload: %s", err.msg);
		else if (xlb_store__save_settings(d->store, set, &err))
			xlbd_log(LOG_WARNING, "reload: %s, ignoring", err.msg);
	}
	pthread_mutex_unlock(&d->lock);
	if (n >= 0)
		xlbd_log(LOG_NOTICE, "reloaded: %d setting(s) changed", n);
	sd_notifyf(0, "READY=1\nSTATUS=serving %zu VIP(s) on %s", d->state.vip_cnt, d->sock_path);
}
