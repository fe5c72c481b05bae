// SPDX-License-Identifier: MIT
/*
 * lbctl's host and fleet commands: host drain (withdraw this host's routes;
 * --wait until no packet arrives), host resume, host status, fleet status
 * (every host of the site: revision, store, routes, BGP/BFD sessions,
 * drain, reals down, and where hosts disagree).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lbctl.h"

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s && *s ? s : "-";
}

static void join(json_t *arr, const char *key, char *buf, size_t len)
{
	json_t *e;
	size_t i;

	buf[0] = 0;
	json_array_foreach(arr, i, e) {
		const char *s = key ? json_string_value(json_object_get(e, key)) : json_string_value(e);

		if (buf[0])
			strncat(buf, ",", len - strlen(buf) - 1);
		strncat(buf, s ? s : "?", len - strlen(buf) - 1);
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* "rtr:Established" per BGP session, "10.0.0.1:Up" per BFD session. */
static void sessions(json_t *ann, char *bgp, char *bfd, size_t len)
{
	json_t *s = json_object_get(ann, "sessions"), *e;
	size_t i;

	bgp[0] = bfd[0] = 0;
	json_array_foreach(json_object_get(s, "bgp"), i, e) {
		char one[128];

		snprintf(one, sizeof(one), "%s%s:%s", bgp[0] ? "," : "", jstr(e, "name"),
			 strcmp(jstr(e, "info"), "-") ? jstr(e, "info") : jstr(e, "state"));
		strncat(bgp, one, len - strlen(bgp) - 1);
	}
	json_array_foreach(json_object_get(s, "bfd"), i, e) {
		char one[128];

		snprintf(one, sizeof(one), "%s%s:%s", bfd[0] ? "," : "", jstr(e, "peer"),
			 jstr(e, "state"));
		strncat(bfd, one, len - strlen(bfd) - 1);
	}
	if (!bgp[0])
		snprintf(bgp, len, "%s", json_object_get(ann, "sessions") ? "none" : "-");
	if (!bfd[0])
		snprintf(bfd, len, "-");
}

static void show_host_row(json_t *h)
{
	json_t *ann = json_object_get(h, "announce"), *st = json_object_get(h, "store");
	char routes[256], bgp[256], bfd[256], rev[64], store[64];

	join(json_object_get(ann, "routes"), NULL, routes, sizeof(routes));
	sessions(ann, bgp, bfd, sizeof(bgp));
	snprintf(rev, sizeof(rev), "%lld",
		 (long long)json_integer_value(json_object_get(h, "revision")));
	if (json_integer_value(json_object_get(h, "refused_revision")))
		snprintf(rev + strlen(rev), sizeof(rev) - strlen(rev), " (refused %lld)",
			 (long long)json_integer_value(json_object_get(h, "refused_revision")));
	if (json_is_true(json_object_get(h, "lost")))
		snprintf(store, sizeof(store), "LOST %.0fs",
			 json_real_value(json_object_get(h, "lost_for_s")));
	else
		snprintf(store, sizeof(store), "%s",
			 json_is_false(json_object_get(st, "reachable")) ? "unreachable" : "ok");
	printf("%-12s %-20s %-12s %-9s %-22s %-24s %-18s %zu\n", jstr(h, "host"), rev, store,
	       jstr(ann, "drain"), routes, bgp, bfd, json_array_size(json_object_get(h, "down")));
}

static void show_fleet(json_t *res)
{
	json_t *h, *d;
	size_t i;

	printf("site seen from %s: %lld host(s) live, revisions %s (%lld..%lld)\n", jstr(res, "host"),
	       (long long)json_integer_value(json_object_get(res, "live")),
	       json_is_true(json_object_get(res, "revisions_agree")) ? "agree" : "DIFFER",
	       (long long)json_integer_value(json_object_get(res, "revision_min")),
	       (long long)json_integer_value(json_object_get(res, "revision_max")));
	printf("%-12s %-20s %-12s %-9s %-22s %-24s %-18s %s\n", "HOST", "REVISION", "STORE", "DRAIN",
	       "ROUTES", "BGP", "BFD", "DOWN");
	json_array_foreach(json_object_get(res, "hosts"), i, h)
		show_host_row(h);
	if (!json_array_size(json_object_get(res, "disagreements")))
		return;
	printf("health disagreements:\n");
	json_array_foreach(json_object_get(res, "disagreements"), i, d) {
		char down[256], up[256];

		join(json_object_get(d, "down_on"), NULL, down, sizeof(down));
		join(json_object_get(d, "up_on"), NULL, up, sizeof(up));
		printf("  %s real %s: down on %s; up on %s\n", jstr(d, "vip"), jstr(d, "real"), down, up);
	}
}

static void show_host(json_t *h)
{
	json_t *ann = json_object_get(h, "announce"), *st = json_object_get(h, "store");
	char routes[256], bgp[256], bfd[256];

	join(json_object_get(ann, "routes"), NULL, routes, sizeof(routes));
	sessions(ann, bgp, bfd, sizeof(bgp));
	printf("host:      %s\n", jstr(h, "host"));
	printf("revision:  %lld (newest seen %lld)\n",
	       (long long)json_integer_value(json_object_get(h, "revision")),
	       (long long)json_integer_value(json_object_get(h, "seen_revision")));
	if (json_integer_value(json_object_get(h, "refused_revision")))
		printf("refused:   revision %lld: %s\n",
		       (long long)json_integer_value(json_object_get(h, "refused_revision")),
		       jstr(h, "refused_reason"));
	printf("store:     %s %s, %s%s%s\n", jstr(st, "kind"), jstr(st, "where"),
	       json_is_false(json_object_get(st, "reachable")) ? "UNREACHABLE: " : "reachable",
	       json_is_false(json_object_get(st, "reachable")) ? jstr(st, "error") : "",
	       json_is_true(json_object_get(st, "from_cache")) ? " (started from the cache)" : "");
	printf("routes:    %s (%s%s%s)\n", routes, jstr(ann, "state"),
	       strcmp(jstr(ann, "reason"), "-") ? ": " : "",
	       strcmp(jstr(ann, "reason"), "-") ? jstr(ann, "reason") : "");
	if (strcmp(jstr(ann, "error"), "-"))
		printf("bird:      %s\n", jstr(ann, "error"));
	printf("bgp:       %s\nbfd:       %s\n", bgp, bfd);
	printf("drain:     %s\n", jstr(ann, "drain"));
	printf("dataplane: %s\n",
	       json_is_true(json_object_get(ann, "dataplane_attached")) ? "attached" : "NOT ATTACHED");
	printf("health:    %s policy, %zu of %lld checked reals down here\n", jstr(h, "health_policy"),
	       json_array_size(json_object_get(h, "down")),
	       (long long)json_integer_value(json_object_get(h, "checked")));
}

static void show_drain(json_t *res)
{
	printf("drain: %s, routes %s\n", jstr(res, "drain"), jstr(res, "state"));
}

int lbctl_host_drain(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *res;
	int r = lbctl_call(c, "host.drain", NULL, &res);
	struct timespec t0, now;

	if (r)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (c->wait && strcmp(jstr(res, "drain"), "drained")) {
		struct timespec ts = { .tv_nsec = 200 * 1000 * 1000 };

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= (time_t)c->wait_timeout) {
			fprintf(stderr, "lbctl: routes withdrawn, but packets still arrive after %u s\n",
				c->wait_timeout);
			json_decref(res);
			return LBCTL_EXIT_REFUSED;
		}
		nanosleep(&ts, NULL);
		json_decref(res);
		r = lbctl_call(c, "host.status", NULL, &res);
		if (r)
			return r;
		{
			json_t *ann = json_incref(json_object_get(res, "announce"));

			json_decref(res);
			res = ann;
		}
	}
	if (c->json)
		lbctl_print_json(c, res);
	else
		show_drain(res);
	json_decref(res);
	return 0;
}

int lbctl_host_resume(void *ctx)
{
	return lbctl_run(ctx, "host.resume", NULL, show_drain);
}

int lbctl_host_status(void *ctx)
{
	return lbctl_run(ctx, "host.status", NULL, show_host);
}

int lbctl_fleet_status(void *ctx)
{
	return lbctl_run(ctx, "fleet.status", NULL, show_fleet);
}
