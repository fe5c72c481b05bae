// SPDX-License-Identifier: MIT
/*
 * lbctl's commands: each turns its parsed options and arguments (struct
 * lbctl, filled from the tables in lbctl.c) into one request to xlbd.
 * Arguments are checked here first, so a typo is a usage error (exit 2)
 * that names it, before anything reaches the daemon.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "lbctl.h"
#include "xlb_control.h"

/* ---- arguments ------------------------------------------------------------ */

/* VIP as ADDR:PORT[/PROTO] or [V6ADDR]:PORT[/PROTO]; port 0 is "any port". */
static json_t *parse_vip(const char *s)
{
	char buf[128], *addr, *port, *proto = "tcp", *slash;
	struct xlb_ip a;
	uint64_t p;
	uint8_t pr;

	if (strlen(s) >= sizeof(buf))
		return NULL;
	strcpy(buf, s);
	slash = strrchr(buf, '/');
	if (slash) {
		*slash = 0;
		proto = slash + 1;
	}
	if (buf[0] == '[') {
		char *rb = strchr(buf, ']');

		if (!rb || rb[1] != ':')
			return NULL;
		*rb = 0;
		addr = buf + 1;
		port = rb + 2;
	} else {
		port = strrchr(buf, ':');
		if (!port)
			return NULL;
		*port++ = 0;
		addr = buf;
		/* IPv6 needs brackets: "2001:db8::1:443" is ambiguous. */
		if (strchr(addr, ':'))
			return NULL;
	}
	if (xlb_cli_parse_u64(port, 0, 65535, &p) || xlb_addr_parse(addr, &a) ||
	    xlb_proto_parse(proto, &pr))
		return NULL;
	return json_pack("{s:s, s:I, s:s}", "address", addr, "port", (json_int_t)p, "proto",
			 xlb_proto_name(pr));
}

static int need_vip(struct lbctl *c, json_t **ret)
{
	*ret = parse_vip(c->args[0]);
	if (!*ret)
		return lbctl_usage_error("bad VIP \"%s\" (ADDR:PORT[/tcp|udp], [V6ADDR]:PORT)",
					 c->args[0]);
	return 0;
}

/* VIP REAL: {"vip": {...}, "address": REAL}. */
static int vip_real_args(struct lbctl *c, json_t **ret)
{
	json_t *vip;
	struct xlb_ip a;
	int r = need_vip(c, &vip);

	if (r)
		return r;
	if (xlb_addr_parse(c->args[1], &a)) {
		json_decref(vip);
		return lbctl_usage_error("bad real address \"%s\"", c->args[1]);
	}
	*ret = json_pack("{s:o, s:s}", "vip", vip, "address", c->args[1]);
	return 0;
}

/* The options of `vip add` and `vip set` into the VIP object. */
static void vip_options(struct lbctl *c, json_t *vip)
{
	static const struct {
		const char *opt, *key;
		size_t off;
	} nums[] = {
		{ "hc-port", "port", offsetof(struct lbctl, hc_port) },
		{ "hc-interval", "interval_ms", offsetof(struct lbctl, hc_interval) },
		{ "hc-timeout", "timeout_ms", offsetof(struct lbctl, hc_timeout) },
		{ "hc-rise", "rise", offsetof(struct lbctl, hc_rise) },
		{ "hc-fall", "fall", offsetof(struct lbctl, hc_fall) },
	};
	json_t *hc = NULL;

	if (lbctl_given(c, "encap"))
		json_object_set_new(vip, "encap", json_string(xlb_encap_name(c->encap)));
	if (lbctl_given(c, "flags")) {
		json_t *flags = json_array();

		for (uint32_t bit = 1; bit & XLB_VIP_F_ALL; bit <<= 1)
			if (c->flags & bit)
				json_array_append_new(flags, json_string(xlb_vip_flag_name(bit)));
		json_object_set_new(vip, "flags", flags);
	}
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (lbctl_given(c, nums[i].opt)) {
			hc = hc ?: json_object();
			json_object_set_new(hc, nums[i].key,
					    json_integer(*(uint32_t *)((char *)c + nums[i].off)));
		}
	if (lbctl_given(c, "hc-path"))
		json_object_set_new(hc = hc ?: json_object(), "path", json_string(c->hc_path));
	if (lbctl_given(c, "hc-via"))
		json_object_set_new(hc = hc ?: json_object(), "via",
				    json_string(xlb_hc_via_names[c->hc_via]));
	if (lbctl_given(c, "affinity"))
		json_object_set_new(vip, "affinity", json_integer(c->affinity));
	if (lbctl_given(c, "allow")) {
		json_t *allow = json_array();
		char buf[1024], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", c->allow);
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (strcmp(t, "none"))
				json_array_append_new(allow, json_string(t));
		json_object_set_new(vip, "allow", allow);
	}
	if (lbctl_given(c, "hc") || hc) {
		hc = hc ?: json_object();
		/* hc-* options alone mean a TCP check */
		json_object_set_new(hc, "type", json_string(lbctl_given(c, "hc") ?
								    xlb_hc_type_name(c->hc) :
								    "tcp"));
		json_object_set_new(vip, "healthcheck", hc);
	}
}

int lbctl_need_vip(struct lbctl *c, json_t **ret)
{
	return need_vip(c, ret);
}

int lbctl_vip_real_args(struct lbctl *c, json_t **ret)
{
	return vip_real_args(c, ret);
}

/* ---- VIPs ----------------------------------------------------------------- */

/* A request whose only argument is the VIP. */
static int call_with_vip(struct lbctl *c, const char *op, void (*human)(json_t *))
{
	json_t *vip = NULL;
	int r = need_vip(c, &vip);

	return r ?: lbctl_run(c, op, vip, human);
}

/* vip.add and vip.set: the VIP with the options given; set needs one at least. */
static int call_with_vip_options(struct lbctl *c, const char *op, const char *done,
				 bool need_option)
{
	json_t *vip = NULL;
	char line[200];
	int r = need_vip(c, &vip);

	if (r)
		return r;
	vip_options(c, vip);
	if (need_option && json_object_size(vip) == 3) { /* address, port, proto only */
		json_decref(vip);
		return lbctl_usage_error("%s needs something to set", c->cmd->name);
	}
	snprintf(line, sizeof(line), "vip %s %s", c->args[0], done);
	return lbctl_change(c, op, vip, line);
}

int lbctl_vip_add(void *ctx)
{
	return call_with_vip_options(ctx, "vip.add", "added", false);
}

int lbctl_vip_set(void *ctx)
{
	return call_with_vip_options(ctx, "vip.set", "changed", true);
}

int lbctl_vip_del(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *vip = NULL;
	char line[200];
	int r = need_vip(c, &vip);

	snprintf(line, sizeof(line), "vip %s deleted", c->args[0]);
	return r ?: lbctl_change(c, "vip.del", vip, line);
}

int lbctl_vip_list(void *ctx)
{
	return lbctl_run(ctx, "vip.list", NULL, lbctl_show_vip_list);
}

int lbctl_vip_show(void *ctx)
{
	return call_with_vip(ctx, "vip.show", lbctl_show_vip);
}

/* ---- reals ---------------------------------------------------------------- */

/* real.add/del/set: VIP REAL, plus a weight and a state when given (-1: not given). */
static int call_with_real(struct lbctl *c, const char *op, int64_t weight, int state,
			  int64_t server_id)
{
	json_t *args = NULL;
	char line[256];
	int r = vip_real_args(c, &args), n;

	if (r)
		return r;
	n = snprintf(line, sizeof(line), "real %s %s %s", c->args[1],
		     !strcmp(op, "real.add") ? "added to" : !strcmp(op, "real.del") ? "removed from" : "of",
		     c->args[0]);
	if (weight >= 0) {
		json_object_set_new(args, "weight", json_integer(weight));
		n += snprintf(line + n, sizeof(line) - (size_t)n, ": weight %lld", (long long)weight);
	}
	if (state >= 0) {
		json_object_set_new(args, "state",
				    json_string(xlb_real_state_name((enum xlb_real_state)state)));
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s state %s", weight >= 0 ? "," : ":",
			      xlb_real_state_name((enum xlb_real_state)state));
	}
	if (server_id >= 0) {
		json_object_set_new(args, "server_id", json_integer(server_id));
		snprintf(line + n, sizeof(line) - (size_t)n, "%s server id %lld",
			 weight >= 0 || state >= 0 ? "," : ":", (long long)server_id);
	}
	return lbctl_change(c, op, args, line);
}

int lbctl_real_add(void *ctx)
{
	struct lbctl *c = ctx;

	return call_with_real(c, "real.add", lbctl_given(c, "weight") ? (int64_t)c->weight : -1,
			      lbctl_given(c, "state") ? c->state : -1,
			      lbctl_given(c, "server-id") ? (int64_t)c->server_id : -1);
}

int lbctl_real_del(void *ctx)
{
	return call_with_real(ctx, "real.del", -1, -1, -1);
}

int lbctl_real_set_weight(void *ctx)
{
	struct lbctl *c = ctx;
	uint64_t w;

	if (xlb_cli_parse_u64(c->args[2], 0, 1000000, &w))
		return lbctl_usage_error("bad weight \"%s\" (0..1000000)", c->args[2]);
	return call_with_real(c, "real.set", (int64_t)w, -1, -1);
}

int lbctl_real_drain(void *ctx)
{
	return call_with_real(ctx, "real.set", -1, XLB_REAL_DRAINING, -1);
}

int lbctl_real_undrain(void *ctx)
{
	return call_with_real(ctx, "real.set", -1, XLB_REAL_ACTIVE, -1);
}

int lbctl_real_down(void *ctx)
{
	return call_with_real(ctx, "real.set", -1, XLB_REAL_DOWN, -1);
}

int lbctl_real_list(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *vip;
	int r = need_vip(c, &vip);

	return r ?: lbctl_run(c, "real.list", json_pack("{s:o}", "vip", vip), lbctl_show_real_list);
}

/* ---- the rest ------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = 1;
}

int lbctl_stats(void *ctx)
{
	struct lbctl *c = ctx;
	json_t *prev = NULL, *res;
	int ret;

	signal(SIGINT, on_sigint);
	for (;;) {
		ret = lbctl_call(c, "stats", NULL, &res);
		if (ret)
			break;
		if (c->json) {
			lbctl_print_json(c, res);
		} else {
			if (c->watch)
				printf("\033[H\033[2J");
			lbctl_show_stats(res, prev);
		}
		fflush(stdout);
		json_decref(prev);
		prev = res;
		if (!c->watch || interrupted)
			break;
		{
			struct timespec ts = { .tv_sec = (time_t)c->interval,
					       .tv_nsec = (long)((c->interval - (time_t)c->interval) * 1e9) };

			nanosleep(&ts, NULL);
		}
		if (interrupted)
			break;
	}
	json_decref(prev);
	return ret;
}

int lbctl_status(void *ctx)
{
	return lbctl_run(ctx, "status", NULL, lbctl_show_status);
}

int lbctl_health(void *ctx)
{
	return lbctl_run(ctx, "health", NULL, lbctl_show_health);
}

int lbctl_export(void *ctx)
{
	return lbctl_run(ctx, "export", NULL, lbctl_show_export);
}

static char *read_file(const char *path, size_t *ret_len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t cap = 4096, len = 0;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len, f);
		char *nb;

		len += n;
		if (len < cap)
			break;
		if (cap > 8 * 1024 * 1024) {
			free(buf);
			buf = NULL;
			errno = EFBIG;
			break;
		}
		nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (f != stdin)
		fclose(f);
	*ret_len = len;
	return buf;
}

int lbctl_apply(void *ctx)
{
	struct lbctl *c = ctx;
	struct xlb_state st;
	struct xlb_err err;
	json_t *cfg;
	size_t len;
	char *text;

	if (!c->file)
		return lbctl_usage_error("apply needs -f FILE (YAML or JSON, - for stdin)");
	text = read_file(c->file, &len);
	if (!text)
		return lbctl_fail(LBCTL_EXIT_USAGE, errno, "cannot read %s: %s", c->file,
				  strerror(errno));
	cfg = xlb_config_parse(text, len, &err);
	free(text);
	if (!cfg)
		return lbctl_fail(LBCTL_EXIT_USAGE, -err.code, "%s: %s", c->file, err.msg);
	/* Check locally first for a message that names the file. */
	if (xlb_config_check_apply(cfg, c->allow_empty, &err) || xlb_state_from_json(cfg, &st, &err)) {
		json_decref(cfg);
		return lbctl_fail(LBCTL_EXIT_USAGE, -err.code, "%s: %s", c->file, err.msg);
	}
	xlb_state_free(&st);
	return lbctl_run(c, "apply",
			 json_pack("{s:o, s:b, s:b}", "config", cfg, "dry_run", c->dry_run,
				   "allow_empty", c->allow_empty),
			 lbctl_show_apply);
}

int lbctl_verify(void *ctx)
{
	struct lbctl *c = ctx;
	struct xlb_err err = { 0 };
	json_t *progs = NULL;
	int ret;

	ret = xlb_verify_object(c->args[0], &progs, &err);
	if (c->json) {
		json_t *out = json_pack("{s:s, s:b, s:s, s:o}", "file", c->args[0], "accepted",
					ret == 0, "message", ret ? err.msg : "accepted", "programs",
					progs ? progs : json_array());

		lbctl_print_json(c, out);
		json_decref(out);
	} else {
		lbctl_show_verify(progs);
		if (ret)
			fprintf(stderr, "lbctl: %s\n", err.msg);
		json_decref(progs);
	}
	/* As `xbpf verify`: 0 accepted, 1 rejected, 2 could not verify (unreadable input). */
	return ret == 0 ? 0 : ret == -EACCES ? LBCTL_EXIT_REJECTED : LBCTL_EXIT_USAGE;
}
