// SPDX-License-Identifier: MIT
/*
 * lbctl's connection-table commands (conn lookup/list/flush) and the QUIC
 * server id of a real.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbctl.h"
#include "xlb_control.h"

int lbctl_real_set_server_id(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *args = NULL;
	uint64_t n;
	int r;

	if (xlb_cli_parse_u64(c->args[2], 0, XLB_SERVER_ID_MAX, &n))
		return lbctl_usage_error("bad server id \"%s\" (0..%u)", c->args[2], XLB_SERVER_ID_MAX);
	r = lbctl_vip_real_args(c, &args);
	if (r)
		return r;
	char line[200];

	json_object_set_new(args, "server_id", json_integer((json_int_t)n));
	snprintf(line, sizeof(line), "real %s of %s: server id %llu", c->args[1], c->args[0],
		 (unsigned long long)n);
	return lbctl_change(c, "real.set", args, line);
}

/* CLIENT:PORT, [V6CLIENT]:PORT */
static int client_arg(const char *s, json_t *args)
{
	char buf[80], *colon, *host = buf;
	struct xlb_ip a;
	uint64_t port;

	snprintf(buf, sizeof(buf), "%s", s);
	colon = strrchr(buf, ':');
	if (!colon)
		return lbctl_usage_error("bad flow \"%s\" (CLIENT:PORT)", s);
	*colon = 0;
	if (host[0] == '[' && colon > host && colon[-1] == ']') {
		host++;
		colon[-1] = 0;
	}
	if (xlb_addr_parse(host, &a) || xlb_cli_parse_u64(colon + 1, 0, 65535, &port))
		return lbctl_usage_error("bad flow \"%s\" (CLIENT:PORT)", s);
	json_object_set_new(args, "client", json_string(host));
	json_object_set_new(args, "port", json_integer((json_int_t)port));
	return 0;
}

static int conn_args(struct lbctl *c, json_t **ret)
{
	json_t *vip = NULL;
	int r = lbctl_need_vip(c, &vip);

	if (r)
		return r;
	*ret = json_pack("{s:o}", "vip", vip);
	if (c->real)
		json_object_set_new(*ret, "real", json_string(c->real));
	return 0;
}

int lbctl_conn_lookup(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *args = NULL;
	int r = conn_args(c, &args);

	if (r)
		return r;
	r = client_arg(c->args[1], args);
	if (r) {
		json_decref(args);
		return r;
	}
	return lbctl_run(c, "conn.lookup", args, lbctl_show_conn_lookup);
}

int lbctl_conn_list(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *args = NULL;
	int r = conn_args(c, &args);

	return r ?: lbctl_run(c, "conn.list", args, lbctl_show_conn_list);
}

static void show_flushed(json_t *res)
{
	printf("%lld connection-table entries flushed\n",
	       (long long)json_integer_value(json_object_get(res, "flushed")));
}

int lbctl_conn_flush(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *args = NULL;
	int r = conn_args(c, &args);

	return r ?: lbctl_run(c, "conn.flush", args, show_flushed);
}

void lbctl_show_conn_lookup(json_t *res)
{
	const char *from = json_string_value(json_object_get(res, "from"));

	if (from && !strcmp(from, "table"))
		printf("%s:%lld -> %s (connection table, %s)\n",
		       json_string_value(json_object_get(res, "client")),
		       (long long)json_integer_value(json_object_get(res, "port")),
		       json_string_value(json_object_get(res, "real")),
		       json_string_value(json_object_get(res, "state")));
	else
		printf("%s:%lld -> %s (not in the connection table: the ring, slot %lld)\n",
		       json_string_value(json_object_get(res, "client")),
		       (long long)json_integer_value(json_object_get(res, "port")),
		       json_string_value(json_object_get(res, "real")),
		       (long long)json_integer_value(json_object_get(res, "slot")));
}

void lbctl_show_conn_list(json_t *res)
{
	json_t *conns = json_object_get(res, "conns"), *e;
	size_t i;

	printf("%-40s %6s  %-40s %s\n", "CLIENT", "PORT", "REAL", "STATE");
	json_array_foreach(conns, i, e)
		printf("%-40s %6lld  %-40s %s\n", json_string_value(json_object_get(e, "client")),
		       (long long)json_integer_value(json_object_get(e, "port")),
		       json_string_value(json_object_get(e, "real")),
		       json_string_value(json_object_get(e, "state")));
	printf("%lld entr%s%s\n", (long long)json_integer_value(json_object_get(res, "count")),
	       json_integer_value(json_object_get(res, "count")) == 1 ? "y" : "ies",
	       json_is_true(json_object_get(res, "truncated")) ? " (list truncated)" : "");
}
