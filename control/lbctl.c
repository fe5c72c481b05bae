// SPDX-License-Identifier: MIT
/*
 * lbctl - the operator CLI of xlb, in iproute2's `OBJECT VERB` form.
 *
 * One table (commands[]) drives the parser, `lbctl help`, the man page
 * (`lbctl --man`, built into lbctl.8) and bash completion (`lbctl
 * --bash-completion`).  Every command prints a human table, or with -j the
 * daemon's JSON result as is.
 *
 * Exit codes: 0 success, 1 the daemon refused or failed the request,
 * 2 usage error, 3 xlbd not reachable, 4 the verifier rejected the object.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "xlb_control.h"

#ifndef XLB_VERSION
#define XLB_VERSION "0.1.0"
#endif

enum {
	EXIT_REFUSED = 1,
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
};

struct ctx {
	const char *sock;
	bool json;
	bool pretty;
};

struct cmd {
	const char *object;
	const char *verb; /* NULL: the object is the whole command */
	const char *synopsis;
	const char *doc;
	int (*fn)(struct ctx *c, int argc, char **argv);
};

static const struct cmd commands[];
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lbctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'lbctl help'.\n");
	return EXIT_USAGE;
}

/* ---- talking to xlbd ------------------------------------------------------ */

static int call(struct ctx *c, const char *op, json_t *args, json_t **ret_result)
{
	json_t *req = json_pack("{s:i, s:s}", "v", XLB_API_VERSION, "op", op), *resp = NULL;
	int fd, ret;

	if (args)
		json_object_set_new(req, "args", args);
	fd = xlb_client_connect(c->sock);
	if (fd < 0) {
		json_decref(req);
		fprintf(stderr, "lbctl: cannot reach xlbd at %s: %s\n", c->sock, strerror(-fd));
		return EXIT_UNREACHABLE;
	}
	ret = xlb_client_call(fd, req, &resp);
	close(fd);
	if (ret) {
		fprintf(stderr, "lbctl: no answer from xlbd: %s\n", strerror(-ret));
		return EXIT_UNREACHABLE;
	}
	if (!json_is_true(json_object_get(resp, "ok"))) {
		json_t *e = json_object_get(resp, "error");

		if (c->json) {
			json_dumpf(resp, stdout, c->pretty ? JSON_INDENT(2) : JSON_COMPACT);
			putchar('\n');
		} else {
			fprintf(stderr, "lbctl: %s (%s)\n",
				json_string_value(json_object_get(e, "message")) ?: "error",
				json_string_value(json_object_get(e, "code")) ?: "?");
		}
		json_decref(resp);
		return EXIT_REFUSED;
	}
	*ret_result = json_incref(json_object_get(resp, "result"));
	if (!*ret_result)
		*ret_result = json_object();
	json_decref(resp);
	return 0;
}

static void print_json(struct ctx *c, json_t *j)
{
	json_dumpf(j, stdout, (c->pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_ENCODE_ANY);
	putchar('\n');
}

/* Call; with -j print the result, else hand it to the human printer. */
static int run(struct ctx *c, const char *op, json_t *args, void (*human)(json_t *))
{
	json_t *res;
	int ret = call(c, op, args, &res);

	if (ret)
		return ret;
	if (c->json)
		print_json(c, res);
	else if (human)
		human(res);
	json_decref(res);
	return 0;
}

/* ---- argument helpers ------------------------------------------------------ */

/* VIP as ADDR:PORT[/PROTO] or [V6ADDR]:PORT[/PROTO]. */
static json_t *parse_vip(const char *s)
{
	char buf[128], *addr, *port, *proto = "tcp", *slash, *end;
	struct xlb_ip a;
	long p;

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
	p = strtol(port, &end, 10);
	if (!*port || *end || p < 0 || p > 65535 || xlb_addr_parse(addr, &a))
		return NULL;
	if (strcmp(proto, "tcp") && strcmp(proto, "udp"))
		return NULL;
	return json_pack("{s:s, s:I, s:s}", "address", addr, "port", (json_int_t)p, "proto", proto);
}

static int need_vip(int argc, char **argv, json_t **ret)
{
	if (argc < 1)
		return usage_error("missing VIP (ADDR:PORT[/tcp|udp])");
	*ret = parse_vip(argv[0]);
	if (!*ret)
		return usage_error("bad VIP \"%s\" (ADDR:PORT[/tcp|udp], [V6]:PORT)", argv[0]);
	return 0;
}

static int parse_uint_arg(const char *s, long max, json_int_t *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > max)
		return -1;
	*ret = v;
	return 0;
}

/* VIP options shared by `vip add` and `vip set`. */
static int parse_vip_opts(json_t *vip, int argc, char **argv)
{
	json_t *hc = NULL;

	for (int i = 0; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		json_int_t n;

		if (!v)
			return usage_error("\"%s\" needs a value", k);
		i++;
		if (!strcmp(k, "encap")) {
			json_object_set_new(vip, "encap", json_string(v));
		} else if (!strcmp(k, "flags")) {
			json_t *flags = json_array();
			char *copy = strdup(v), *save = NULL;

			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
				if (strcmp(t, "none"))
					json_array_append_new(flags, json_string(t));
			free(copy);
			json_object_set_new(vip, "flags", flags);
		} else if (!strncmp(k, "hc", 2)) {
			if (!hc)
				hc = json_object();
			if (!strcmp(k, "hc")) {
				json_object_set_new(hc, "type", json_string(v));
			} else if (!strcmp(k, "hc-path")) {
				json_object_set_new(hc, "path", json_string(v));
			} else if (!strcmp(k, "hc-via")) {
				json_object_set_new(hc, "via", json_string(v));
			} else {
				static const struct {
					const char *opt, *key;
					long max;
				} nums[] = { { "hc-port", "port", 65535 },
					     { "hc-interval", "interval_ms", 3600000 },
					     { "hc-timeout", "timeout_ms", 3600000 },
					     { "hc-rise", "rise", 100 },
					     { "hc-fall", "fall", 100 } };
				size_t j;

				for (j = 0; j < sizeof(nums) / sizeof(nums[0]); j++)
					if (!strcmp(k, nums[j].opt))
						break;
				if (j == sizeof(nums) / sizeof(nums[0]))
					return usage_error("unknown option \"%s\"", k);
				if (parse_uint_arg(v, nums[j].max, &n))
					return usage_error("bad number for %s: %s", k, v);
				json_object_set_new(hc, nums[j].key, json_integer(n));
			}
		} else {
			return usage_error("unknown option \"%s\"", k);
		}
	}
	if (hc) {
		if (!json_object_get(hc, "type"))
			json_object_set_new(hc, "type", json_string("tcp"));
		json_object_set_new(vip, "healthcheck", hc);
	}
	return 0;
}

/* ---- printers -------------------------------------------------------------- */

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

	printf("%s%-40s %8s %-9s %-9s %s\n", indent, "REAL", "WEIGHT", "STATE", "HEALTH", "IN-RING");
	json_array_foreach(reals, i, r)
		printf("%s%-40s %8lld %-9s %-9s %s\n", indent, jstr(r, "address"), jint(r, "weight"),
		       jstr(r, "state"), jstr(r, "health"),
		       json_is_true(json_object_get(r, "in_ring")) ? "yes" : "no");
}

static void human_vip_list(json_t *res)
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

static void human_vip_show(json_t *v)
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

static void human_real_list(json_t *res)
{
	print_reals(json_object_get(res, "reals"), "");
}

static void human_vip_added(json_t *v)
{
	char name[96];

	vip_name(v, name, sizeof(name));
	printf("vip %s added (id %lld)\n", name, jint(v, "id"));
}

static void human_status(json_t *s)
{
	json_t *dp = json_object_get(s, "dataplane"), *set = json_object_get(s, "settings"), *i,
	       *ver = json_object_get(dp, "verifier"), *p;
	size_t k;

	printf("xlbd %s, up %llds, %lld VIP(s), %lld real(s), %lld change(s)\n", jstr(s, "version"),
	       jint(s, "uptime_s"), jint(s, "vips"), jint(s, "reals"), jint(s, "changes"));
	printf("backend:   %s  object %s  pins %s\n", jstr(dp, "backend"), jstr(dp, "object"),
	       jstr(dp, "pin_root"));
	printf("%-10s %-8s %-8s %-15s %-9s %s\n", "INTERFACE", "IFINDEX", "PROG-ID", "LIBXDP", "MODE",
	       "ATTACHED");
	json_array_foreach(json_object_get(dp, "interfaces"), k, i)
		printf("%-10s %-8lld %-8lld %-15s %-9s %s%s\n", jstr(i, "name"), jint(i, "ifindex"),
		       jint(i, "prog_id"), jstr(i, "libxdp"), jstr(i, "mode"),
		       json_is_true(json_object_get(i, "attached")) ? "yes" : "NO",
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
	printf("settings:  gateway %s ring %lld lru %lld socket %s metrics %s:%lld\n",
	       jstr(set, "gateway_mac"), jint(set, "ring_size"), jint(set, "lru_size"),
	       jstr(set, "socket"), jstr(set, "metrics"), jint(set, "metrics_port"));
}

static void human_health(json_t *res)
{
	json_t *r;
	size_t i;

	printf("%-30s %-40s %-6s %-9s %-7s %8s %8s %s\n", "VIP", "REAL", "CHECK", "HEALTH", "IN-RING",
	       "PROBES", "FAILED", "LAST-ERROR");
	json_array_foreach(json_object_get(res, "reals"), i, r)
		printf("%-30s %-40s %-6s %-9s %-7s %8lld %8lld %s\n", jstr(r, "vip"), jstr(r, "real"),
		       jstr(r, "check"), jstr(r, "health"),
		       json_is_true(json_object_get(r, "in_ring")) ? "yes" : "no", jint(r, "probes"),
		       jint(r, "failures"), jstr(r, "last_error"));
}

static void human_apply(json_t *res)
{
	json_t *l;
	size_t i;

	json_array_foreach(json_object_get(res, "changes"), i, l)
		printf("%s\n", json_string_value(l));
	printf("%zu change(s) %s\n", json_array_size(json_object_get(res, "changes")),
	       json_is_true(json_object_get(res, "applied")) ? "applied" : "not applied");
}

static void human_export(json_t *res)
{
	json_dumpf(res, stdout, JSON_INDENT(2));
	putchar('\n');
}

static void human_ok(json_t *res)
{
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

static void print_stats(json_t *s, json_t *prev)
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
			snprintf(name, sizeof(name), "  %s (%s)", jstr(r, "address"), jstr(r, "state"));
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
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = 1;
}

static int cmd_stats(struct ctx *c, int argc, char **argv)
{
	double every = 0;
	json_t *prev = NULL, *res;
	int ret;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--watch") || !strcmp(argv[i], "-w")) {
			every = 1;
			if (i + 1 < argc && atof(argv[i + 1]) > 0)
				every = atof(argv[++i]);
		} else {
			return usage_error("unknown stats option \"%s\"", argv[i]);
		}
	}
	signal(SIGINT, on_sigint);
	for (;;) {
		ret = call(c, "stats", NULL, &res);
		if (ret)
			break;
		if (c->json) {
			print_json(c, res);
		} else {
			if (every > 0)
				printf("\033[H\033[2J");
			print_stats(res, prev);
		}
		fflush(stdout);
		json_decref(prev);
		prev = res;
		if (every <= 0 || interrupted)
			break;
		{
			struct timespec ts = { .tv_sec = (time_t)every,
					       .tv_nsec = (long)((every - (time_t)every) * 1e9) };

			nanosleep(&ts, NULL);
		}
		if (interrupted)
			break;
	}
	json_decref(prev);
	return ret;
}

/* ---- commands -------------------------------------------------------------- */

static int cmd_vip_add(struct ctx *c, int argc, char **argv)
{
	json_t *vip = NULL;
	int ret = need_vip(argc, argv, &vip);

	if (ret)
		return ret;
	ret = parse_vip_opts(vip, argc - 1, argv + 1);
	if (ret) {
		json_decref(vip);
		return ret;
	}
	return run(c, "vip.add", vip, human_vip_added);
}

static int cmd_vip_set(struct ctx *c, int argc, char **argv)
{
	json_t *vip = NULL;
	int ret = need_vip(argc, argv, &vip);

	if (ret)
		return ret;
	if (argc < 2) {
		json_decref(vip);
		return usage_error("vip set needs something to set");
	}
	ret = parse_vip_opts(vip, argc - 1, argv + 1);
	if (ret) {
		json_decref(vip);
		return ret;
	}
	return run(c, "vip.set", vip, human_ok);
}

static int cmd_vip_del(struct ctx *c, int argc, char **argv)
{
	json_t *vip = NULL;
	int ret = need_vip(argc, argv, &vip);

	if (ret)
		return ret;
	if (argc > 1) {
		json_decref(vip);
		return usage_error("unexpected \"%s\"", argv[1]);
	}
	return run(c, "vip.del", vip, human_ok);
}

static int cmd_vip_list(struct ctx *c, int argc, char **argv)
{
	if (argc)
		return usage_error("unexpected \"%s\"", argv[0]);
	return run(c, "vip.list", NULL, human_vip_list);
}

static int cmd_vip_show(struct ctx *c, int argc, char **argv)
{
	json_t *vip = NULL;
	int ret = need_vip(argc, argv, &vip);

	if (ret)
		return ret;
	return run(c, "vip.show", vip, human_vip_show);
}

/* real commands: VIP REAL [...] */
static int real_args(int argc, char **argv, int min, json_t **ret)
{
	json_t *vip = NULL;
	struct xlb_ip a;
	int ret2;

	if (argc < min)
		return usage_error("missing argument (see 'lbctl real help')");
	ret2 = need_vip(argc, argv, &vip);
	if (ret2)
		return ret2;
	if (xlb_addr_parse(argv[1], &a)) {
		json_decref(vip);
		return usage_error("bad real address \"%s\"", argv[1]);
	}
	*ret = json_pack("{s:o, s:s}", "vip", vip, "address", argv[1]);
	return 0;
}

static int cmd_real_add(struct ctx *c, int argc, char **argv)
{
	json_t *args = NULL;
	int ret = real_args(argc, argv, 2, &args);

	if (ret)
		return ret;
	for (int i = 2; i < argc; i += 2) {
		json_int_t n;

		if (i + 1 >= argc) {
			json_decref(args);
			return usage_error("\"%s\" needs a value", argv[i]);
		}
		if (!strcmp(argv[i], "weight") && !parse_uint_arg(argv[i + 1], 1000000, &n)) {
			json_object_set_new(args, "weight", json_integer(n));
		} else if (!strcmp(argv[i], "state")) {
			json_object_set_new(args, "state", json_string(argv[i + 1]));
		} else {
			json_decref(args);
			return usage_error("bad option \"%s %s\"", argv[i], argv[i + 1]);
		}
	}
	return run(c, "real.add", args, human_ok);
}

static int cmd_real_del(struct ctx *c, int argc, char **argv)
{
	json_t *args = NULL;
	int ret = real_args(argc, argv, 2, &args);

	if (ret)
		return ret;
	if (argc > 2) {
		json_decref(args);
		return usage_error("unexpected \"%s\"", argv[2]);
	}
	return run(c, "real.del", args, human_ok);
}

static int cmd_real_set_weight(struct ctx *c, int argc, char **argv)
{
	json_t *args = NULL;
	json_int_t n;
	int ret = real_args(argc, argv, 3, &args);

	if (ret)
		return ret;
	if (argc > 3 || parse_uint_arg(argv[2], 1000000, &n)) {
		json_decref(args);
		return usage_error("bad weight \"%s\" (0..1000000)", argv[2]);
	}
	json_object_set_new(args, "weight", json_integer(n));
	return run(c, "real.set", args, human_ok);
}

static int set_state(struct ctx *c, int argc, char **argv, const char *state)
{
	json_t *args = NULL;
	int ret = real_args(argc, argv, 2, &args);

	if (ret)
		return ret;
	if (argc > 2) {
		json_decref(args);
		return usage_error("unexpected \"%s\"", argv[2]);
	}
	json_object_set_new(args, "state", json_string(state));
	return run(c, "real.set", args, human_ok);
}

static int cmd_real_drain(struct ctx *c, int argc, char **argv)
{
	return set_state(c, argc, argv, "draining");
}

static int cmd_real_undrain(struct ctx *c, int argc, char **argv)
{
	return set_state(c, argc, argv, "active");
}

static int cmd_real_down(struct ctx *c, int argc, char **argv)
{
	return set_state(c, argc, argv, "down");
}

static int cmd_real_list(struct ctx *c, int argc, char **argv)
{
	json_t *vip = NULL;
	int ret = need_vip(argc, argv, &vip);

	if (ret)
		return ret;
	return run(c, "real.list", json_pack("{s:o}", "vip", vip), human_real_list);
}

static int cmd_status(struct ctx *c, int argc, char **argv)
{
	if (argc)
		return usage_error("unexpected \"%s\"", argv[0]);
	return run(c, "status", NULL, human_status);
}

static int cmd_health(struct ctx *c, int argc, char **argv)
{
	if (argc)
		return usage_error("unexpected \"%s\"", argv[0]);
	return run(c, "health", NULL, human_health);
}

static int cmd_export(struct ctx *c, int argc, char **argv)
{
	if (argc)
		return usage_error("unexpected \"%s\"", argv[0]);
	return run(c, "export", NULL, human_export);
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

		len += n;
		if (len < cap)
			break;
		if (cap > 8 * 1024 * 1024) {
			free(buf);
			buf = NULL;
			errno = EFBIG;
			break;
		}
		{
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (f != stdin)
		fclose(f);
	*ret_len = len;
	return buf;
}

static int cmd_apply(struct ctx *c, int argc, char **argv)
{
	const char *file = NULL;
	bool dry = false;
	struct xlb_state st;
	struct xlb_err err;
	json_t *cfg;
	size_t len;
	char *text;
	int ret;

	for (int i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "-f") || !strcmp(argv[i], "--file")) && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--dry-run") || !strcmp(argv[i], "-n"))
			dry = true;
		else
			return usage_error("unknown apply option \"%s\"", argv[i]);
	}
	if (!file)
		return usage_error("apply needs -f FILE (YAML or JSON, - for stdin)");
	text = read_file(file, &len);
	if (!text) {
		fprintf(stderr, "lbctl: cannot read %s: %s\n", file, strerror(errno));
		return EXIT_USAGE;
	}
	cfg = xlb_config_parse(text, len, &err);
	free(text);
	if (!cfg) {
		fprintf(stderr, "lbctl: %s: %s\n", file, err.msg);
		return EXIT_USAGE;
	}
	/* Check locally first for a message that names the file. */
	ret = xlb_state_from_json(cfg, &st, &err);
	if (ret) {
		fprintf(stderr, "lbctl: %s: %s\n", file, err.msg);
		json_decref(cfg);
		return EXIT_USAGE;
	}
	xlb_state_free(&st);
	return run(c, "apply", json_pack("{s:o, s:b}", "config", cfg, "dry_run", dry), human_apply);
}

static int cmd_verify(struct ctx *c, int argc, char **argv)
{
	struct xlb_err err = { 0 };
	json_t *progs = NULL, *p;
	size_t i;
	int ret;

	if (argc != 1)
		return usage_error("verify needs one FILE");
	ret = xlb_verify_object(argv[0], &progs, &err);
	if (c->json) {
		json_t *out = json_pack("{s:s, s:b, s:s, s:o}", "file", argv[0], "accepted", ret == 0,
					"message", ret ? err.msg : "accepted", "programs",
					progs ? progs : json_array());

		print_json(c, out);
		json_decref(out);
	} else {
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
		if (ret)
			fprintf(stderr, "lbctl: %s\n", err.msg);
		json_decref(progs);
	}
	/* As `xbpf verify`: 0 accepted, 1 rejected, 2 could not verify (unreadable input). */
	return ret == 0 ? 0 : ret == -EACCES ? 1 : EXIT_USAGE;
}

static int cmd_help(struct ctx *c, int argc, char **argv);

static const struct cmd commands[] = {
	{ "vip", "add", "VIP [encap ipip|gue] [flags F[,F...]] [hc tcp|http|none] [hc-port N] [hc-path P] [hc-interval MS] [hc-timeout MS] [hc-rise N] [hc-fall N] [hc-via direct|encap]",
	  "Add a VIP. VIP is ADDR:PORT[/tcp|udp] ([V6ADDR]:PORT for IPv6); flags: no-sport, dport-only, no-lru, local, quic.",
	  cmd_vip_add },
	{ "vip", "del", "VIP", "Delete a VIP and its reals.", cmd_vip_del },
	{ "vip", "list", "", "List VIPs with their encapsulation, flags, check and reals in the ring.", cmd_vip_list },
	{ "vip", "show", "VIP", "Show one VIP with its reals, their health and ring membership.", cmd_vip_show },
	{ "vip", "set", "VIP [encap ...] [flags ...] [hc ...]", "Change a VIP's encapsulation, flags or health check.", cmd_vip_set },
	{ "real", "add", "VIP REAL [weight N] [state active|draining|down]", "Add a real (default weight 1, active).", cmd_real_add },
	{ "real", "del", "VIP REAL", "Remove a real; its established flows are dropped.", cmd_real_del },
	{ "real", "set-weight", "VIP REAL WEIGHT", "Change a real's Maglev weight (0 takes it out of the ring).", cmd_real_set_weight },
	{ "real", "drain", "VIP REAL", "Drain a real: new flows avoid it, established flows finish.", cmd_real_drain },
	{ "real", "undrain", "VIP REAL", "Put a drained or down real back to active.", cmd_real_undrain },
	{ "real", "down", "VIP REAL", "Mark a real down by hand (out of the ring).", cmd_real_down },
	{ "real", "list", "VIP", "List a VIP's reals.", cmd_real_list },
	{ "stats", NULL, "[--watch [SECONDS]]", "Packets, bytes, pps and bps per VIP and real, LRU hit ratio, drop and pass reasons.", cmd_stats },
	{ "status", NULL, "", "Backend, interfaces, attach mode, program ids, verifier results and stack depths.", cmd_status },
	{ "health", NULL, "", "Health-check state of every real.", cmd_health },
	{ "verify", NULL, "FILE", "Run xlb's verifier on a BPF object (no daemon needed).", cmd_verify },
	{ "apply", NULL, "-f FILE [--dry-run]", "Make the desired state that of FILE (YAML or JSON), applied as one diff.", cmd_apply },
	{ "export", NULL, "", "Print the desired state in apply's format.", cmd_export },
	{ "help", NULL, "[OBJECT]", "Show this help.", cmd_help },
	{ 0 },
};

static void print_usage(FILE *f, const char *object)
{
	fprintf(f, "Usage: lbctl [-j|--json] [-p|--pretty] [-s|--socket PATH] OBJECT VERB [ARGS]\n\n");
	for (const struct cmd *c = commands; c->object; c++) {
		if (object && strcmp(object, c->object))
			continue;
		fprintf(f, "  lbctl %s%s%s %s\n      %s\n", c->object, c->verb ? " " : "",
			c->verb ? c->verb : "", c->synopsis, c->doc);
	}
	if (!object)
		fprintf(f, "\nExit codes: 0 ok, 1 refused by xlbd, 2 usage, 3 xlbd unreachable, 4 verifier rejected.\n"
			   "Socket: %s (or $XLB_SOCKET).\n",
			XLB_SOCK_PATH_DEFAULT);
}

static int cmd_help(struct ctx *c, int argc, char **argv)
{
	print_usage(stdout, argc ? argv[0] : NULL);
	return 0;
}

/* troff, from the same table. */
static void print_man(void)
{
	printf(".TH LBCTL 8 \"\" \"xlb %s\" \"System Administration\"\n"
	       ".SH NAME\nlbctl \\- control the xlb load balancer daemon (xlbd)\n"
	       ".SH SYNOPSIS\n.B lbctl\n[\\fB\\-j\\fR] [\\fB\\-p\\fR] [\\fB\\-s\\fR \\fIPATH\\fR] \\fIOBJECT\\fR \\fIVERB\\fR [\\fIARGS\\fR]\n"
	       ".SH DESCRIPTION\n"
	       "lbctl talks to xlbd over its UNIX socket with versioned JSON requests. "
	       "Every command prints a table, or with \\fB\\-j\\fR the daemon's JSON answer.\n"
	       ".SH OPTIONS\n"
	       ".TP\n\\fB\\-j\\fR, \\fB\\-\\-json\\fR\nPrint JSON.\n"
	       ".TP\n\\fB\\-p\\fR, \\fB\\-\\-pretty\\fR\nIndent JSON.\n"
	       ".TP\n\\fB\\-s\\fR, \\fB\\-\\-socket\\fR \\fIPATH\\fR\nxlbd's socket (default %s, or $XLB_SOCKET).\n"
	       ".SH COMMANDS\n",
	       XLB_VERSION, XLB_SOCK_PATH_DEFAULT);
	for (const struct cmd *c = commands; c->object; c++) {
		printf(".TP\n\\fBlbctl %s%s%s\\fR ", c->object, c->verb ? " " : "", c->verb ? c->verb : "");
		for (const char *s = c->synopsis; *s; s++) {
			if (*s == '-' || *s == '\\')
				putchar('\\');
			putchar(*s);
		}
		printf("\n%s\n", c->doc);
	}
	printf(".SH EXIT STATUS\n0 success; 1 xlbd refused or failed the request, or the verifier "
	       "rejected the object (as \\fBxbpf verify\\fR); 2 usage error or unreadable input; "
	       "3 xlbd not reachable.\n"
	       ".SH EXAMPLES\n.nf\nlbctl vip add 10.0.0.10:80/tcp hc http hc-path /healthz\n"
	       "lbctl real add 10.0.0.10:80 10.1.0.1 weight 100\nlbctl real drain 10.0.0.10:80 10.1.0.1\n"
	       "lbctl \\-j stats\nlbctl apply \\-f /etc/xlb/services.yaml \\-\\-dry\\-run\n.fi\n"
	       ".SH SEE ALSO\n\\fBxlbd\\fR(8)\n");
}

static void print_completion(void)
{
	printf("# bash completion for lbctl, generated by lbctl --bash-completion\n"
	       "_lbctl()\n{\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} i obj=\"\" n=0\n"
	       "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	       "\t\tcase ${COMP_WORDS[i]} in\n\t\t-s|--socket) ((i++)) ;;\n\t\t-*) ;;\n"
	       "\t\t*) [ $n -eq 0 ] && obj=${COMP_WORDS[i]}; ((n++)) ;;\n\t\tesac\n\tdone\n"
	       "\tif [ $n -eq 0 ]; then\n\t\tCOMPREPLY=($(compgen -W \"-j --json -p --pretty -s --socket");
	{
		const char *last = "";

		for (const struct cmd *c = commands; c->object; c++)
			if (strcmp(last, c->object)) {
				printf(" %s", c->object);
				last = c->object;
			}
	}
	printf("\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tif [ $n -eq 1 ]; then\n\t\tcase $obj in\n");
	{
		const char *last = NULL;

		for (const struct cmd *c = commands; c->object; c++) {
			if (!c->verb)
				continue;
			if (!last || strcmp(last, c->object)) {
				if (last)
					printf("\" -- \"$cur\")) ;;\n");
				printf("\t\t%s) COMPREPLY=($(compgen -W \"", c->object);
				last = c->object;
			}
			printf(" %s", c->verb);
		}
		if (last)
			printf("\" -- \"$cur\")) ;;\n");
	}
	printf("\t\tapply) COMPREPLY=($(compgen -W \"-f --dry-run\" -- \"$cur\")) ;;\n"
	       "\t\tverify) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	       "\t\tstats) COMPREPLY=($(compgen -W \"--watch\" -- \"$cur\")) ;;\n"
	       "\t\tesac\n\t\treturn\n\tfi\n"
	       "\tcase ${COMP_WORDS[COMP_CWORD-1]} in\n"
	       "\t-f) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	       "\tencap) COMPREPLY=($(compgen -W \"ipip gue\" -- \"$cur\")) ;;\n"
	       "\thc) COMPREPLY=($(compgen -W \"tcp http none\" -- \"$cur\")) ;;\n"
	       "\thc-via) COMPREPLY=($(compgen -W \"direct encap\" -- \"$cur\")) ;;\n"
	       "\tstate) COMPREPLY=($(compgen -W \"active draining down\" -- \"$cur\")) ;;\n"
	       "\tflags) COMPREPLY=($(compgen -W \"no-sport dport-only no-lru local quic\" -- \"$cur\")) ;;\n"
	       "\tesac\n}\ncomplete -F _lbctl lbctl\n");
}

int main(int argc, char **argv)
{
	struct ctx c = { .sock = getenv("XLB_SOCKET") ?: XLB_SOCK_PATH_DEFAULT };
	const char *object, *verb;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			c.json = true;
		} else if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
			c.pretty = true;
		} else if ((!strcmp(a, "-s") || !strcmp(a, "--socket")) && i + 1 < argc) {
			c.sock = argv[++i];
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage(stdout, NULL);
			return 0;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("lbctl %s\n", XLB_VERSION);
			return 0;
		} else if (!strcmp(a, "--man")) {
			print_man();
			return 0;
		} else if (!strcmp(a, "--bash-completion")) {
			print_completion();
			return 0;
		} else {
			return usage_error("unknown option \"%s\"", a);
		}
	}
	if (i >= argc) {
		print_usage(stderr, NULL);
		return EXIT_USAGE;
	}
	object = argv[i++];
	verb = i < argc ? argv[i] : NULL;
	for (const struct cmd *cmd = commands; cmd->object; cmd++) {
		if (strcmp(cmd->object, object))
			continue;
		if (!cmd->verb)
			return cmd->fn(&c, argc - i, argv + i);
		if (verb && !strcmp(verb, "help")) {
			print_usage(stdout, object);
			return 0;
		}
		if (verb && !strcmp(cmd->verb, verb))
			return cmd->fn(&c, argc - i - 1, argv + i + 1);
	}
	for (const struct cmd *cmd = commands; cmd->object; cmd++)
		if (!strcmp(cmd->object, object))
			return usage_error("unknown verb \"%s\" for %s", verb ? verb : "(none)", object);
	return usage_error("unknown object \"%s\"", object);
}
