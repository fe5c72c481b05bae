// SPDX-License-Identifier: MIT
/*
 * lbctl's human output: one table per answer, from the daemon's JSON
 * result (with -j the result is printed as it is instead).
 */
#include <stdio.h>
#include <string.h>

#include "backend.h" /* the names of the port and lcore counters (dp_stats.c) */
#include "lbctl.h"

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "-";
}

static long long jint(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static void vip_name(json_t *v, char *buf, size_t len)
{
	const char *a = jstr(v, "address");

	snprintf(buf, len, strchr(a, ':') ? "[%s]:%lld/%s" : "%s:%lld/%s", a, jint(v, "port"),
		 jstr(v, "proto"));
}

static void flags_str(json_t *v, char *buf, size_t len)
{
	json_t *f;
	size_t i;

	buf[0] = 0;
	json_array_foreach(json_object_get(v, "flags"), i, f) {
		if (buf[0])
			strncat(buf, ",", len - strlen(buf) - 1);
		strncat(buf, json_string_value(f), len - strlen(buf) - 1);
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

static void print_reals(json_t *reals, const char *indent)
{
	json_t *r;
	size_t i;

	/* SLOTS and SHARE: what the dataplane's ring holds now (0: out of the ring). */
	printf("%s%-40s %8s %-9s %-9s %7s %7s\n", indent, "REAL", "WEIGHT", "STATE", "HEALTH", "SLOTS",
	       "SHARE");
	json_array_foreach(reals, i, r)
		printf("%s%-40s %8lld %-9s %-9s %7lld %6.2f%%\n", indent, jstr(r, "address"),
		       jint(r, "weight"), jstr(r, "state"), jstr(r, "health"), jint(r, "slots"),
		       100 * json_real_value(json_object_get(r, "share")));
}

void lbctl_show_vip_list(json_t *res)
{
	json_t *v;
	size_t i;

	printf("%-46s %-5s %-22s %-6s %s\n", "VIP", "ENCAP", "FLAGS", "CHECK", "REALS(IN RING/ALL)");
	json_array_foreach(json_object_get(res, "vips"), i, v) {
		char name[96], flags[96];
		json_t *hc = json_object_get(v, "healthcheck");

		vip_name(v, name, sizeof(name));
		flags_str(v, flags, sizeof(flags));
		printf("%-46s %-5s %-22s %-6s %lld/%zu\n", name, jstr(v, "encap"), flags,
		       hc ? jstr(hc, "type") : "none", jint(v, "reals_in_ring"),
		       json_array_size(json_object_get(v, "reals")));
	}
}

void lbctl_show_vip(json_t *v)
{
	char name[96], flags[96];
	json_t *hc = json_object_get(v, "healthcheck");

	vip_name(v, name, sizeof(name));
	flags_str(v, flags, sizeof(flags));
	printf("vip %s id %lld encap %s flags %s\n", name, jint(v, "id"), jstr(v, "encap"), flags);
	if (hc)
		printf("  healthcheck %s port %lld path %s interval %lldms timeout %lldms rise %lld fall %lld\n",
		       jstr(hc, "type"), jint(hc, "port"), jstr(hc, "path"), jint(hc, "interval_ms"),
		       jint(hc, "timeout_ms"), jint(hc, "rise"), jint(hc, "fall"));
	print_reals(json_object_get(v, "reals"), "  ");
}

void lbctl_show_real_list(json_t *res)
{
	print_reals(json_object_get(res, "reals"), "");
}

/* The userspace backend's dataplane: xlb-dpdk, its ports and its lcores. */
static void show_dpdk(json_t *dp)
{
	json_t *x = json_object_get(dp, "dpdk"), *p;
	size_t k;

	printf("backend:   userspace  object %s  maps %s\n", jstr(dp, "object"), jstr(dp, "pin_root"));
	if (!json_object_get(x, "pid")) {
		printf("xlb-dpdk:  NOT RUNNING (%s)\n", jstr(x, "message"));
		return;
	}
	printf("xlb-dpdk:  %s (pid %lld), engine %s, program %s, %lld lcore(s)\n",
	       json_is_true(json_object_get(x, "running")) ? "running" : "NOT RUNNING",
	       jint(x, "pid"), jstr(x, "engine"), jstr(x, "program"), jint(x, "lcores"));
	printf("%-24s %-10s %-8s %s\n", "PORT", "ROLE", "IFINDEX", "RX-QUEUES");
	json_array_foreach(json_object_get(x, "ports"), k, p)
		printf("%-24s %-10s %-8lld %lld\n", jstr(p, "name"), jstr(p, "role"),
		       jint(p, "ifindex"), jint(p, "rx_queues"));
	printf("%-6s %-6s %-7s %-7s %s\n", "LCORE", "CPU", "QUEUES", "LOAD", "RX");
	json_array_foreach(json_object_get(x, "lcore_load"), k, p)
		printf("%-6lld %-6lld %-7lld %5.1f%%  %lld\n", jint(p, "lcore"), jint(p, "index"),
		       jint(p, "queues"), 100 * json_real_value(json_object_get(p, "load")),
		       jint(p, "rx"));
}

void lbctl_show_status(json_t *s)
{
	json_t *dp = json_object_get(s, "dataplane"), *set = json_object_get(s, "settings"), *i,
	       *ver = json_object_get(dp, "verifier"), *p;
	size_t k;

	printf("xlbd %s, up %llds, %lld VIP(s), %lld real(s), %lld change(s)\n", jstr(s, "version"),
	       jint(s, "uptime_s"), jint(s, "vips"), jint(s, "reals"), jint(s, "changes"));
	if (json_object_get(dp, "dpdk"))
		show_dpdk(dp);
	else
		printf("backend:   %s  object %s  pins %s\n", jstr(dp, "backend"), jstr(dp, "object"),
		       jstr(dp, "pin_root"));
	if (json_object_get(dp, "running"))
		printf("running:   %s (object tag %s)\n", jstr(dp, "running"), jstr(dp, "object_tag"));
	if (json_array_size(json_object_get(dp, "interfaces")))
		printf("%-10s %-8s %-8s %-16s %-15s %-9s %s\n", "INTERFACE", "IFINDEX", "PROG-ID", "TAG",
		       "LIBXDP", "MODE", "ATTACHED");
	json_array_foreach(json_object_get(dp, "interfaces"), k, i)
		printf("%-10s %-8lld %-8lld %-16s %-15s %-9s %s%s\n", jstr(i, "name"), jint(i, "ifindex"),
		       jint(i, "prog_id"), jstr(i, "tag"), jstr(i, "libxdp"), jstr(i, "mode"),
		       json_is_true(json_object_get(i, "attached")) ? "yes" : "NO",
		       json_is_true(json_object_get(i, "upgraded")) ? " (upgraded)" :
		       json_is_true(json_object_get(i, "adopted")) ? " (adopted)" : "");
	printf("verifier:  %s (%s)\n", jstr(ver, "result"), jstr(ver, "message"));
	json_array_foreach(json_object_get(ver, "programs"), k, p) {
		json_t *d;
		size_t n;

		printf("  %-20s %s, %lld insns processed, stack depth ", jstr(p, "name"),
		       json_is_true(json_object_get(p, "accepted")) ? "accepted" : "REJECTED",
		       jint(p, "insn_processed"));
		json_array_foreach(json_object_get(p, "stack_depth"), n, d)
			printf("%s%lld", n ? "+" : "", (long long)json_integer_value(d));
		putchar('\n');
	}
	printf("settings:  gateway %s max-vips %lld max-reals %lld ring %lld lru %lld socket %s "
	       "metrics %s:%lld\n",
	       jstr(set, "gateway_mac"), jint(set, "max_vips"), jint(set, "max_reals"),
	       jint(set, "ring_size"), jint(set, "lru_size"),
	       jstr(set, "socket"), jstr(set, "metrics"), jint(set, "metrics_port"));
}

void lbctl_show_health(json_t *res)
{
	json_t *r;
	size_t i;

	printf("%-30s %-40s %-6s %-9s %7s %8s %8s %s\n", "VIP", "REAL", "CHECK", "HEALTH", "SLOTS",
	       "PROBES", "FAILED", "LAST-ERROR");
	json_array_foreach(json_object_get(res, "reals"), i, r)
		printf("%-30s %-40s %-6s %-9s %7lld %8lld %8lld %s\n", jstr(r, "vip"), jstr(r, "real"),
		       jstr(r, "check"), jstr(r, "health"),
		       jint(r, "slots"), jint(r, "probes"),
		       jint(r, "failures"), jstr(r, "last_error"));
}

void lbctl_show_apply(json_t *res)
{
	json_t *l;
	size_t i;

	json_t *n = json_object_get(res, "counts"), *rm = json_object_get(n, "removed"),
	       *add = json_object_get(n, "added");

	json_array_foreach(json_object_get(res, "changes"), i, l)
		printf("%s\n", json_string_value(l));
	printf("%zu change(s) %s: %lld VIP(s) and %lld real(s) added, %lld VIP(s) and %lld real(s) "
	       "removed\n",
	       json_array_size(json_object_get(res, "changes")),
	       json_is_true(json_object_get(res, "applied")) ? "applied" : "not applied",
	       jint(add, "vips"), jint(add, "reals"), jint(rm, "vips"), jint(rm, "reals"));
}

void lbctl_show_export(json_t *res)
{
	json_dumpf(res, stdout, JSON_INDENT(2));
	putchar('\n');
}


/* ---- stats ----------------------------------------------------------------- */

static double counter_rate(json_t *now, json_t *prev, const char *k, double dt)
{
	if (!prev || dt <= 0)
		return 0;
	return (double)(json_integer_value(json_object_get(now, k)) -
			json_integer_value(json_object_get(prev, k))) /
	       dt;
}

/* A column per counter name, upper case, '_' as '-'. */
static void counter_heads(const char *const *names, int cnt)
{
	for (int c = 0; c < cnt; c++) {
		char head[32];

		snprintf(head, sizeof(head), "%s", names[c]);
		for (char *p = head; *p; p++)
			*p = *p == '_' ? '-' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		printf(" %11s", head);
	}
	putchar('\n');
}

/* The ports and worker lcores of a backend that has its own (the userspace backend). */
static void print_io(json_t *s)
{
	json_t *o;
	size_t i;

	if (!json_object_get(s, "ports"))
		return;
	printf("%-20s %-9s", "PORT", "ROLE");
	counter_heads(xlb_port_counter_names, XLB_PORT_CTR_CNT);
	json_array_foreach(json_object_get(s, "ports"), i, o) {
		printf("%-20s %-9s", jstr(o, "name"), jstr(o, "role"));
		for (int c = 0; c < XLB_PORT_CTR_CNT; c++)
			printf(" %11lld", jint(o, xlb_port_counter_names[c]));
		putchar('\n');
	}
	printf("%-6s %-6s %-6s", "LCORE", "CPU", "LOAD");
	counter_heads(xlb_lcore_counter_names, XLB_LCORE_CTR_CNT);
	json_array_foreach(json_object_get(s, "lcores"), i, o) {
		printf("%-6lld %-6lld %5.1f%%", jint(o, "lcore"), jint(o, "index"),
		       100 * json_real_value(json_object_get(o, "load")));
		for (int c = 0; c < XLB_LCORE_CTR_CNT; c++)
			printf(" %11lld", jint(o, xlb_lcore_counter_names[c]));
		putchar('\n');
	}
}

void lbctl_show_stats(json_t *s, json_t *prev)
{
	double dt = prev ? (double)(jint(s, "time_ns") - jint(prev, "time_ns")) / 1e9 : 0;
	json_t *v, *lru = json_object_get(s, "lru"), *val;
	const char *key;
	size_t i;

	printf("%-44s %12s %14s %10s %12s %10s\n", "VIP / REAL", "PACKETS", "BYTES", "PPS", "BPS",
	       "NEW FLOWS");
	json_array_foreach(json_object_get(s, "vips"), i, v) {
		json_t *k = json_object_get(v, "counters"), *pv = NULL, *r;
		size_t j;

		if (prev)
			pv = json_object_get(json_array_get(json_object_get(prev, "vips"), i), "counters");
		printf("%-44s %12lld %14lld %10.0f %12.0f %10lld\n", jstr(v, "vip"),
		       jint(k, "packets"), jint(k, "bytes"), counter_rate(k, pv, "packets", dt),
		       8 * counter_rate(k, pv, "bytes", dt), jint(k, "new_flows"));
		json_array_foreach(json_object_get(v, "reals"), j, r) {
			json_t *rk = json_object_get(r, "counters"), *rp = NULL;
			char name[80];

			if (pv)
				rp = json_object_get(
					json_array_get(json_object_get(json_array_get(json_object_get(prev, "vips"), i), "reals"), j),
					"counters");
			snprintf(name, sizeof(name), "  %s (%s, %s)", jstr(r, "address"), jstr(r, "state"),
				 jstr(r, "health"));
			printf("%-44s %12lld %14lld %10.0f %12.0f %10lld\n", name,
			       jint(rk, "packets"), jint(rk, "bytes"),
			       counter_rate(rk, rp, "packets", dt),
			       8 * counter_rate(rk, rp, "bytes", dt), jint(rk, "new_flows"));
		}
	}
	printf("lru: %lld hits, %lld misses, hit ratio %.3f; new flows %lld\n", jint(lru, "hits"),
	       jint(lru, "misses"), json_real_value(json_object_get(lru, "hit_ratio")),
	       jint(s, "new_flows"));
	printf("reasons:");
	i = 0;
	json_object_foreach(json_object_get(s, "reasons"), key, val)
		if (json_integer_value(val)) {
			printf(" %s=%lld", key, (long long)json_integer_value(val));
			i++;
		}
	printf(i ? "\n" : " none\n");
	print_io(s);
}

void lbctl_show_verify(json_t *progs)
{
	json_t *p;
	size_t i;

	json_array_foreach(progs, i, p) {
		json_t *d;
		size_t n;

		printf("%-24s %-8s %8lld insns processed, %lld subprograms, stack depth ",
		       jstr(p, "name"), json_is_true(json_object_get(p, "accepted")) ? "OK" : "REJECTED",
		       jint(p, "insn_processed"), jint(p, "subprograms"));
		json_array_foreach(json_object_get(p, "stack_depth"), n, d)
			printf("%s%lld", n ? "+" : "", (long long)json_integer_value(d));
		putchar('\n');
		if (!json_is_true(json_object_get(p, "accepted")))
			printf("  %s %s\n", jstr(p, "error"), jstr(p, "line"));
	}
}
