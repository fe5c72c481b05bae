// SPDX-License-Identifier: MIT
/*
 * lbctl - the operator CLI of xlb, in iproute2's `OBJECT VERB` form.
 *
 * The tables below (global options, each command's options, the commands)
 * are all there is to lbctl's command line: cli/xlb_cli.h parses with them
 * and generates `lbctl help`, the man page (`lbctl --man`, built into
 * lbctl.8) and bash completion (`lbctl --bash-completion`).  A command's
 * options may be written iproute2-style ("encap gue") or as options
 * ("--encap=gue"); global options may also follow the command.
 *
 * Exit codes: 0 success, 1 the daemon refused or failed the request (or
 * the verifier rejected the object), 2 usage error or unreadable input,
 * 3 xlbd not reachable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbctl.h"
#include "xlb_control.h"

#define F(FIELD) XLB_CLI_FIELD(struct lbctl, FIELD)
#define KW XLB_CLI_F_KEYWORD

/* ---- option parsers -------------------------------------------------------- */

/* flags F[,F...], "none" for no flag. */
static int parse_flags(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
		       char *err, size_t errlen)
{
	char buf[256], *save = NULL;
	uint32_t bits = 0, bit;

	snprintf(buf, sizeof(buf), "%s", val);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "none"))
			continue;
		if (xlb_vip_flag_parse(t, &bit)) {
			snprintf(err, errlen, "unknown flag '%.32s' (see lbctl help vip)", t);
			return -EINVAL;
		}
		bits |= bit;
	}
	*(uint32_t *)field = bits;
	return 0;
}

static int parse_seconds(const struct xlb_cli_opt *o, void *field, const char *val, bool first,
			 char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (!*val || *end || errno || !(v >= 0.01 && v <= 3600)) {
		snprintf(err, errlen, "'%.32s' is not a number of seconds in 0.01..3600", val);
		return -EINVAL;
	}
	*(double *)field = v;
	return 0;
}

/* ---- tables ---------------------------------------------------------------- */

static const char *const flag_words[] = {
#define FLAG_WORD(sym, bit, name, doc) name,
	XLB_VIP_FLAGS(FLAG_WORD)
#undef FLAG_WORD
	"none", NULL,
};

static const struct xlb_cli_opt vip_opts[] = {
	{ "encap", 0, XLB_CLI_ENUM, KW, F(encap), NULL,
	  "ipip: IPIP, IP6IP6 or IPv4-in-IPv6 by the families; gue: IP in UDP",
	  .def = "ipip", .choices = xlb_encap_names },
	{ "flags", 0, XLB_CLI_CUSTOM, KW, F(flags), "F[,F...]",
	  "no-sport (hash without the source port), dport-only, no-lru (bypass the connection "
	  "table), local (deliver to this host), quic (route by connection ID); none clears",
	  .parse = parse_flags, .choices = flag_words, .complete = XLB_CLI_COMPLETE_WORDS },
	{ "hc", 0, XLB_CLI_ENUM, KW, F(hc), NULL, "health check (hc-* options alone mean tcp)",
	  .def = "none", .choices = xlb_hc_type_names },
	{ "hc-port", 0, XLB_CLI_UINT, KW, F(hc_port), "PORT", "check port (0: the VIP's port)",
	  .max = 65535 },
	{ "hc-path", 0, XLB_CLI_STRING, KW, F(hc_path), "PATH", "HTTP GET path", .def = "/" },
	{ "hc-interval", 0, XLB_CLI_UINT, KW, F(hc_interval), "MS", "probe interval",
	  .def = "1000", .min = 10, .max = 3600000 },
	{ "hc-timeout", 0, XLB_CLI_UINT, KW, F(hc_timeout), "MS", "probe timeout (<= interval)",
	  .def = "500", .min = 1, .max = 3600000 },
	{ "hc-rise", 0, XLB_CLI_UINT, KW, F(hc_rise), "N", "successes to come back", .def = "2",
	  .min = 1, .max = 100 },
	{ "hc-fall", 0, XLB_CLI_UINT, KW, F(hc_fall), "N", "failures to leave the ring",
	  .def = "2", .min = 1, .max = 100 },
	{ "hc-via", 0, XLB_CLI_ENUM, KW, F(hc_via), NULL,
	  "probe the real's own address (direct) or the VIP through the encapsulated path",
	  .def = "direct", .choices = xlb_hc_via_names },
	{ "affinity", 0, XLB_CLI_UINT, KW, F(affinity), "SECONDS",
	  "session affinity: a client address keeps its real for SECONDS after its last packet, "
	  "across connections (0: off)", .max = 65535 },
	{ "allow", 0, XLB_CLI_STRING, KW, F(allow), "PREFIX[,PREFIX...]",
	  "source allow-list: only these prefixes may use the VIP, others are dropped and counted "
	  "(drop_not_allowed); none clears it" },
	{ 0 },
};

static const struct xlb_cli_opt real_opts[] = {
	{ "weight", 0, XLB_CLI_UINT, KW, F(weight), "N", "Maglev weight (0: out of the ring)",
	  .def = "1", .max = 1000000 },
	{ "state", 0, XLB_CLI_ENUM, KW, F(state), NULL, "administrative state", .def = "active",
	  .choices = xlb_real_state_names },
	{ "server-id", 0, XLB_CLI_UINT, KW, F(server_id), "N",
	  "QUIC server id the real puts in its connection IDs (Katran's layouts: 1..65535 in CID "
	  "version 1, up to 16777215 in version 2); 0: none", .max = XLB_SERVER_ID_MAX },
	{ 0 },
};

static const struct xlb_cli_opt conn_opts[] = {
	{ "on", 0, XLB_CLI_STRING, KW, F(real), "REAL", "only the flows on this real (its address)" },
	{ 0 },
};

static const struct xlb_cli_opt stats_opts[] = {
	{ "watch", 'w', XLB_CLI_FLAG, 0, F(watch), NULL, "refresh until interrupted, with rates" },
	{ "interval", 'i', XLB_CLI_CUSTOM, 0, F(interval), "SECONDS", "refresh interval",
	  .def = "1", .parse = parse_seconds },
	{ 0 },
};

static const struct xlb_cli_opt apply_opts[] = {
	{ "file", 'f', XLB_CLI_STRING, 0, F(file), "FILE", "YAML or JSON file, - for stdin",
	  .complete = XLB_CLI_COMPLETE_FILE },
	{ "dry-run", 'n', XLB_CLI_FLAG, 0, F(dry_run), NULL,
	  "show the changes and how many VIPs and reals they add and remove; apply nothing" },
	{ "allow-empty", 0, XLB_CLI_FLAG, 0, F(allow_empty), NULL,
	  "let \"vips: []\" remove every VIP (an empty file or one without vips: is always "
	  "refused)" },
	{ 0 },
};

static const struct xlb_cli_opt drain_opts[] = {
	{ "wait", 'w', XLB_CLI_FLAG, 0, F(wait), NULL,
	  "return once no packet reached this host's VIPs for 2 s (the flows moved or ended)" },
	{ "wait-timeout", 0, XLB_CLI_UINT, 0, F(wait_timeout), "SECONDS",
	  "give up waiting after this long", .def = "60", .min = 1, .max = 86400 },
	{ 0 },
};

static const struct xlb_cli_opt global_opts[] = {
	{ "json", 'j', XLB_CLI_FLAG, 0, F(json), NULL, "print JSON (the daemon's answer)" },
	{ "pretty", 'p', XLB_CLI_FLAG, 0, F(pretty), NULL, "indent JSON" },
	{ "socket", 's', XLB_CLI_STRING, 0, F(sock), "PATH", "xlbd's socket ($XLB_SOCKET)",
	  .def = XLB_SOCK_PATH_DEFAULT, .complete = XLB_CLI_COMPLETE_FILE },
	{ "timeout", 't', XLB_CLI_CUSTOM, 0, F(timeout), "SECONDS",
	  "give up on xlbd after this long (exit 3)", .def = "5", .parse = parse_seconds },
	{ "version", 'V', XLB_CLI_FLAG, 0, F(version), NULL, "print the version" },
	{ "help", 'h', XLB_CLI_FLAG, 0, F(help), NULL, "show this help" },
	{ "man", 0, XLB_CLI_FLAG, 0, F(man), NULL, "print the man page (troff)" },
	{ "bash-completion", 0, XLB_CLI_FLAG, 0, F(completion), NULL,
	  "print the bash completion script" },
	{ 0 },
};

static int lbctl_help(void *ctx);

static const struct xlb_cli_cmd commands[] = {
	{ "vip add", "VIP",
	  "Add a VIP.  VIP is ADDR:PORT[/tcp|udp] ([V6ADDR]:PORT for IPv6); port 0 is any "
	  "port (packets to the address whose port has no VIP of its own).",
	  vip_opts, 1, 1, .run = lbctl_vip_add },
	{ "vip del", "VIP", "Delete a VIP and its reals.", NULL, 1, 1, .run = lbctl_vip_del },
	{ "vip list", "", "List VIPs with their encapsulation, flags, check and reals in the ring.",
	  NULL, 0, 0, .run = lbctl_vip_list },
	{ "vip show", "VIP", "Show one VIP with its reals, their health and ring membership.", NULL,
	  1, 1, .run = lbctl_vip_show },
	{ "vip set", "VIP", "Change a VIP's encapsulation, flags or health check.", vip_opts, 1, 1,
	  .run = lbctl_vip_set },
	{ "real add", "VIP REAL", "Add a real (default weight 1, active).", real_opts, 2, 2,
	  .run = lbctl_real_add },
	{ "real del", "VIP REAL", "Remove a real; its established flows are dropped.", NULL, 2, 2,
	  .run = lbctl_real_del },
	{ "real set-weight", "VIP REAL WEIGHT",
	  "Change a real's Maglev weight (0..1000000; 0 takes it out of the ring).", NULL, 3, 3,
	  .run = lbctl_real_set_weight },
	{ "real drain", "VIP REAL", "Drain a real: new flows avoid it, established flows finish.",
	  NULL, 2, 2, .run = lbctl_real_drain },
	{ "real undrain", "VIP REAL", "Put a drained or down real back to active.", NULL, 2, 2,
	  .run = lbctl_real_undrain },
	{ "real down", "VIP REAL", "Mark a real down by hand (out of the ring).", NULL, 2, 2,
	  .run = lbctl_real_down },
	{ "real list", "VIP", "List a VIP's reals.", NULL, 1, 1, .run = lbctl_real_list },
	{ "real set-server-id", "VIP REAL N",
	  "Set the QUIC server id of a real (0 removes it).", NULL, 3, 3,
	  .run = lbctl_real_set_server_id },
	{ "conn lookup", "VIP CLIENT:PORT",
	  "Which real a flow is on (connection table), or would go to (the ring).", NULL, 2, 2,
	  .run = lbctl_conn_lookup },
	{ "conn list", "VIP", "The VIP's connection-table entries (client, real, state).", conn_opts,
	  1, 1, .run = lbctl_conn_list },
	{ "conn flush", "VIP",
	  "Forget the VIP's connection-table entries (of one real with on REAL): their flows "
	  "follow the ring again.", conn_opts, 1, 1, .run = lbctl_conn_flush },
	{ "stats", "",
	  "Packets, bytes, pps and bps per VIP and real, LRU hit ratio, drop and pass reasons.",
	  stats_opts, 0, 0, .run = lbctl_stats },
	{ "status", "",
	  "Backend, interfaces, attach mode, program ids, verifier results and stack depths.",
	  NULL, 0, 0, .run = lbctl_status },
	{ "health", "", "Health-check state of every real.", NULL, 0, 0, .run = lbctl_health },
	{ "verify", "FILE", "Run xlb's verifier on a BPF object (no daemon needed).", NULL, 1, 1,
	  XLB_CLI_COMPLETE_FILE, .run = lbctl_verify },
	{ "apply", "",
	  "Make the desired state that of FILE (YAML or JSON, as lbctl export prints it), "
	  "applied as one diff.",
	  apply_opts, 0, 0, .run = lbctl_apply },
	{ "export", "", "Print the desired state in apply's format.", NULL, 0, 0,
	  .run = lbctl_export },
	{ "host drain", "",
	  "Withdraw this host's routes (BIRD) and keep forwarding what still arrives; kept across "
	  "restarts until host resume.",
	  drain_opts, 0, 0, .run = lbctl_host_drain },
	{ "host resume", "", "Announce this host's healthy VIPs again.", NULL, 0, 0,
	  .run = lbctl_host_resume },
	{ "host status", "",
	  "This host: the state revision it runs, the store, its routes, BGP and BFD sessions, "
	  "drain.",
	  NULL, 0, 0, .run = lbctl_host_status },
	{ "fleet status", "",
	  "Every host of the site: revision, store, routes, sessions, drain, reals down, and the "
	  "reals hosts disagree on.",
	  NULL, 0, 0, .run = lbctl_fleet_status },
	{ "help", "[OBJECT]", "Show this help, or an object's commands.", NULL, 0, 1,
	  .run = lbctl_help },
	{ 0 },
};

static const struct xlb_cli_section sections[] = {
	{ "EXIT STATUS",
	  "0 success; 1 xlbd refused or failed the request, or the verifier rejected the object "
	  "(as xbpf verify); 2 usage error (bad command line, bad argument, unreadable input "
	  "file); 3 xlbd not reachable." },
	{ "EXAMPLES",
	  "  lbctl vip add 10.0.0.10:80/tcp hc http hc-path /healthz\n"
	  "  lbctl real add 10.0.0.10:80 10.1.0.1 weight 100\n"
	  "  lbctl real drain 10.0.0.10:80 10.1.0.1\n"
	  "  lbctl -j stats\n"
	  "  lbctl apply -f /etc/xlb/services.yaml --dry-run" },
	{ "SEE ALSO", "xlbd(8), xbpf(1)" },
	{ 0 },
};

static const struct xlb_cli_prog program = {
	.name = "lbctl",
	.man_section = 8,
	.summary = "control the xlb load balancer daemon (xlbd)",
	.version = XLB_VERSION,
	.description = "lbctl talks to xlbd over its UNIX socket with versioned JSON requests.  "
		       "Every command prints a table, or with -j the daemon's JSON answer.\n\n"
		       "A command's options may be written as words (weight 5) or as options "
		       "(--weight=5, --weight 5).",
	.opts = global_opts,
	.cmds = commands,
	.sections = sections,
};

/* The tables as JSON, for `lbctl -j help`. */
static json_t *opts_json(const struct xlb_cli_opt *opts)
{
	json_t *out = json_array();

	for (const struct xlb_cli_opt *o = opts; o && o->name; o++) {
		json_t *j = json_pack("{s:s, s:s, s:b, s:b}", "name", o->name, "doc", o->doc ?: "",
				      "value", o->type != XLB_CLI_FLAG, "keyword",
				      !!(o->flags & XLB_CLI_F_KEYWORD));
		json_t *choices = json_array();

		if (o->short_name)
			json_object_set_new(j, "short", json_sprintf("%c", o->short_name));
		if (o->def)
			json_object_set_new(j, "default", json_string(o->def));
		for (const char *const *ch = o->choices; ch && *ch; ch++)
			json_array_append_new(choices, json_string(*ch));
		json_object_set_new(j, "choices", choices);
		json_array_append_new(out, j);
	}
	return out;
}

static int lbctl_help_json(struct lbctl *c, const char *only)
{
	json_t *cmds = json_array(), *out;

	for (const struct xlb_cli_cmd *k = commands; k->name; k++) {
		if (only && strncmp(k->name, only, strlen(only)))
			continue;
		json_array_append_new(cmds, json_pack("{s:s, s:s, s:s, s:i, s:i, s:o}", "name", k->name,
						      "args", k->args, "doc", k->doc, "min_args",
						      k->min_args, "max_args", k->max_args, "options",
						      opts_json(k->opts)));
	}
	out = json_pack("{s:o, s:o, s:{s:i, s:i, s:i, s:i}}", "commands", cmds, "options",
			opts_json(global_opts), "exit_codes", "refused", LBCTL_EXIT_REFUSED, "usage",
			LBCTL_EXIT_USAGE, "unreachable", LBCTL_EXIT_UNREACHABLE, "rejected",
			LBCTL_EXIT_REJECTED);
	lbctl_print_json(c, out);
	json_decref(out);
	return 0;
}

static int lbctl_help(void *ctx)
{
	struct lbctl *c = ctx;

	if (c->json)
		return lbctl_help_json(c, c->nargs ? c->args[0] : NULL);
	xlb_cli_help(stdout, &program, c->nargs ? c->args[0] : NULL);
	if (!c->nargs)
		printf("\nExit codes: 0 ok, 1 refused by xlbd, 2 usage, 3 xlbd unreachable, "
		       "4 verifier rejected.\nSocket: %s (or $XLB_SOCKET).\n",
		       XLB_SOCK_PATH_DEFAULT);
	return 0;
}

int main(int argc, char **argv)
{
	struct lbctl c = { .sock = getenv("XLB_SOCKET") ?: XLB_SOCK_PATH_DEFAULT, .interval = 1,
			   .timeout = 5, .wait_timeout = 60 };
	struct xlb_cli_optset sets[2] = { { global_opts, &c, NULL } };
	char *args[argc + 1], err[256];
	int used = 0, words = 0, nargs = 0, first;

	/* Errors are JSON as soon as -j is anywhere, even if the line fails to parse. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json") ||
		    (argv[i][0] == '-' && argv[i][1] != '-' && strchr(argv[i], 'j') &&
		     strspn(argv[i] + 1, "jpwnhV") == strlen(argv[i] + 1)))
			lbctl_errors_as_json(true, false);

	if (xlb_cli_parse(sets, 1, argc - 1, argv + 1, XLB_CLI_STOP_AT_ARG, args, NULL, &used,
			  err, sizeof(err)))
		return lbctl_usage_error("%s", err);
	first = used + 1;
	lbctl_errors_as_json(c.json, c.pretty);
	if (c.version || c.man || c.completion || c.help) {
		if (c.version)
			printf("lbctl %s\n", XLB_VERSION);
		else if (c.man || c.completion)
			(c.man ? xlb_cli_man : xlb_cli_bash_completion)(stdout, &program);
		else
			lbctl_help(&c);
		return 0;
	}
	if (first >= argc) {
		if (c.json)
			return lbctl_usage_error("a command is needed (lbctl -j help lists them)");
		xlb_cli_help(stderr, &program, NULL);
		return LBCTL_EXIT_USAGE;
	}
	c.cmd = xlb_cli_cmd__find(&program, argc - first, argv + first, &words);
	if (!c.cmd) {
		/* "lbctl vip help": the object's commands */
		if (words == 1 && first + 1 < argc && !strcmp(argv[first + 1], "help")) {
			if (c.json)
				return lbctl_help_json(&c, argv[first]);
			xlb_cli_help(stdout, &program, argv[first]);
			return 0;
		}
		if (words == 1)
			return lbctl_usage_error("unknown verb \"%s\" for %s",
						 first + 1 < argc ? argv[first + 1] : "(none)",
						 argv[first]);
		return lbctl_usage_error("unknown object \"%s\"", argv[first]);
	}
	sets[0] = (struct xlb_cli_optset){ c.cmd->opts, &c, c.given };
	sets[1] = (struct xlb_cli_optset){ global_opts, &c, NULL };
	if (xlb_cli_parse(sets, 2, argc - first - words, argv + first + words, 0, args, &nargs,
			  NULL, err, sizeof(err)))
		return lbctl_usage_error("%s: %s", c.cmd->name, err);
	lbctl_errors_as_json(c.json, c.pretty);
	if (c.help) {
		if (c.json)
			return lbctl_help_json(&c, c.cmd->name);
		xlb_cli_cmd_help(stdout, &program, c.cmd);
		return 0;
	}
	if (nargs < c.cmd->min_args)
		return lbctl_usage_error("%s needs %s", c.cmd->name, c.cmd->args);
	if (c.cmd->max_args >= 0 && nargs > c.cmd->max_args)
		return lbctl_usage_error("%s: unexpected \"%s\"", c.cmd->name,
					 args[c.cmd->max_args]);
	c.args = args;
	c.nargs = nargs;
	return c.cmd->run(&c);
}
