// SPDX-License-Identifier: MIT
/*
 * API handlers of the host and its site: host.drain and host.resume
 * (withdraw this host's routes and keep forwarding / announce again),
 * host.status (this host's revision, store, routes, sessions, drain) and
 * fleet.status (every host of the site from their reports in the store,
 * and where they disagree: revisions, reals down for some hosts only).
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "xlbd.h"

static int op_host_drain(struct xlbd_req *c)
{
	int r = xlbd_announce_drain(c->d, true, c->err);

	xlbd_log(LOG_NOTICE, "uid %u pid %d: host drain%s", (unsigned)c->peer->uid,
		 (int)c->peer->pid, r ? " (BIRD not reloaded yet)" : ": routes withdrawn");
	c->result = xlbd_announce_status(c->d);
	return r;
}

static int op_host_resume(struct xlbd_req *c)
{
	int r = xlbd_announce_drain(c->d, false, c->err);

	xlbd_log(LOG_NOTICE, "uid %u pid %d: host resume", (unsigned)c->peer->uid,
		 (int)c->peer->pid);
	c->result = xlbd_announce_status(c->d);
	return r;
}

static int op_host_status(struct xlbd_req *c)
{
	c->result = xlbd_fleet_self(c->d);
	return 0;
}

/* Reals some live hosts find down and others not. */
static json_t *disagreements(json_t *hosts)
{
	json_t *out = json_array(), *h, *e;
	size_t i, k;

	json_array_foreach(hosts, i, h) {
		if (json_is_true(json_object_get(h, "lost")))
			continue;
		json_array_foreach(json_object_get(h, "down"), k, e) {
			const char *vip = json_string_value(json_object_get(e, "vip"));
			const char *real = json_string_value(json_object_get(e, "real"));
			json_t *row = NULL, *o, *down_on = json_array(), *up_on = json_array();
			size_t m;

			if (!vip || !real)
				continue;
			json_array_foreach(out, m, o)
				if (!strcmp(json_string_value(json_object_get(o, "vip")), vip) &&
				    !strcmp(json_string_value(json_object_get(o, "real")), real))
					row = o;
			if (row) {
				json_decref(down_on);
				json_decref(up_on);
				continue;
			}
			json_array_foreach(hosts, m, o) {
				json_t *d2;
				size_t n;
				bool down = false;

				if (json_is_true(json_object_get(o, "lost")))
					continue;
				json_array_foreach(json_object_get(o, "down"), n, d2)
					down |= !strcmp(json_string_value(json_object_get(d2, "vip")) ?: "", vip) &&
						!strcmp(json_string_value(json_object_get(d2, "real")) ?: "", real);
				json_array_append(down ? down_on : up_on, json_object_get(o, "host"));
			}
			if (json_array_size(up_on))
				json_array_append_new(out, json_pack("{s:s, s:s, s:o, s:o}", "vip", vip,
								     "real", real, "down_on", down_on,
								     "up_on", up_on));
			else {
				json_decref(down_on);
				json_decref(up_on);
			}
		}
	}
	return out;
}

static int op_fleet_status(struct xlbd_req *c)
{
	json_t *hosts = xlbd_fleet_hosts(c->d), *h;
	json_int_t lo = -1, hi = -1;
	size_t i, live = 0;

	json_array_foreach(hosts, i, h) {
		json_int_t rev = json_integer_value(json_object_get(h, "revision"));

		if (json_is_true(json_object_get(h, "lost")))
			continue;
		live++;
		lo = lo < 0 || rev < lo ? rev : lo;
		hi = rev > hi ? rev : hi;
	}
	c->result = json_pack("{s:s, s:I, s:b, s:I, s:I, s:o, s:o}", "host", c->d->host, "live",
			      (json_int_t)live, "revisions_agree", lo == hi, "revision_min", lo,
			      "revision_max", hi, "disagreements", disagreements(hosts), "hosts",
			      hosts);
	return 0;
}

const struct xlbd_op xlbd_ops_fleet[] = {
	{ "host.drain", op_host_drain },     { "host.resume", op_host_resume },
	{ "host.status", op_host_status },   { "fleet.status", op_fleet_status },
	{ NULL, NULL },
};
