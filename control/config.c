// SPDX-License-Identifier: MIT
/*
 * xlbd's settings: ONE table (settings[] below) names every setting once
 * (long option, short option, type, field, range, default, doc).  It drives
 * the command line (cli/xlb_cli.h), the config file's keys (the long name
 * with '_' for '-', or .key), `xlbd --help`, the xlbd(8) man page and bash
 * completion.
 *
 * Precedence, per setting: command line > config file > the settings
 * stored with the state (dataplane settings only, rows marked STORED: a
 * daemon restarted without its config keeps attaching where it did) >
 * the default.  Numbers are parsed strictly (digits only, in range), so
 * `-m 70000` or `-m abc` are refused instead of listening elsewhere.
 *
 * Adding a setting: a field in struct xlbd_config (or struct xlb_settings
 * for what the dataplane sees), one row here, and its use.  The docs,
 * completion and config key follow from the row.
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_parsers.h"
#include "xlb_cli.h"
#include "xlb_control.h"
#include "xlbd.h"
#include "xlb_shared.h"

#define CONFIG_DEFAULT "/etc/xlb/xlbd.yaml"
#define CONFIG_MAX_BYTES XLB_CONFIG_MAX_BYTES

/* Row flags of ours (xlb_cli_opt.user). */
enum {
	/* A dataplane setting saved with the state; used when nothing gives it. */
	SET_STORED = 1u << 0,
	/* Changes with SIGHUP / systemctl reload (the rest waits for a restart). */
	SET_LIVE = 1u << 1,
};

/* ---- the table ------------------------------------------------------------ */

static const char *const verify_names[] = { "enforce", "warn", "off", NULL };
static const char *const xdp_mode_names[] = { "auto", "dispatcher", "single", NULL };
static const char *const backend_names[] = { "kernel", "userspace", NULL };
static const char *const store_names[] = { "sqlite", "etcd", NULL };
static const char *const health_policy_names[] = { "auto", "local", "site", NULL };
static const char *const wait_names[] = { "probe", "none", NULL };
static const char *const frag_names[] = { "balance", "drop", NULL };

#define C(FIELD) XLB_CLI_FIELD(struct xlbd_config, FIELD)
/* An address with its prefix length: both bytes ranges are the setting. */
#define PREFIX(FIELD)                                                                \
	.offset = offsetof(struct xlbd_config, set.FIELD),                           \
	.size = sizeof(struct xlb_ip) + sizeof(uint8_t)

static const struct xlb_cli_opt settings[] = {
	{ "config", 'c', XLB_CLI_STRING, 0, C(config), "FILE",
	  "YAML or JSON config file (settings and the initial vips)",
	  .def = CONFIG_DEFAULT " if present", .complete = XLB_CLI_COMPLETE_FILE },
	{ "interface", 'i', XLB_CLI_CUSTOM, XLB_CLI_F_REPEAT | XLB_CLI_F_CONFIG,
	  .offset = offsetof(struct xlbd_config, set.ifaces),
	  .size = sizeof(((struct xlb_settings *)0)->ifaces) + sizeof(size_t), .metavar = "IFACE",
	  .doc = "attach the balancer to IFACE (repeat for several; given on the command line, "
		 "replaces the config file's list)",
	  .parse = parse_iface, .complete = XLB_CLI_COMPLETE_IFACE, .user = SET_STORED,
	  .key = "interfaces" },
	{ "gateway-mac", 'g', XLB_CLI_CUSTOM, XLB_CLI_F_CONFIG, C(set.gw_mac), "MAC",
	  "outer destination MAC of encapsulated packets (the next-hop router)",
	  .parse = parse_mac, .user = SET_STORED | SET_LIVE },
	{ "src4", 0, XLB_CLI_CUSTOM, XLB_CLI_F_CONFIG, PREFIX(src4), "ADDR[/PLEN]",
	  "outer IPv4 source prefix (host bits vary per flow)", .parse = parse_src4,
	  .user = SET_STORED | SET_LIVE },
	{ "src6", 0, XLB_CLI_CUSTOM, XLB_CLI_F_CONFIG, PREFIX(src6), "ADDR[/PLEN]",
	  "outer IPv6 source prefix, for IPv6 reals", .parse = parse_src6, .user = SET_STORED | SET_LIVE },
	{ "egress", 0, XLB_CLI_CUSTOM, XLB_CLI_F_REPEAT | XLB_CLI_F_CONFIG, IFACE_LIST(egress),
	  "IFACE=EGRESS",
	  "redirect mode: packets balanced on IFACE leave by EGRESS (XDP_REDIRECT through a devmap; "
	  "xlbd attaches the balancer on EGRESS too, which passes what is not for a VIP); without "
	  "it they leave by IFACE (XDP_TX).  On veth the peer of EGRESS needs an XDP program or "
	  "GRO (ethtool -K PEER gro on)",
	  .parse = parse_egress, .complete = XLB_CLI_COMPLETE_IFACE },
	{ "mtu", 0, XLB_CLI_CUSTOM, XLB_CLI_F_REPEAT | XLB_CLI_F_CONFIG, IFACE_LIST(mtu),
	  "IFACE=BYTES",
	  "largest IP packet IFACE carries toward the reals (default: its MTU); a VIP packet that "
	  "would exceed it once encapsulated is answered with ICMP fragmentation-needed / "
	  "packet-too-big (IPv4 with DF, IPv6) or dropped (IPv4 without DF)",
	  .parse = parse_mtu },
	{ "egress-gateway-mac", 0, XLB_CLI_CUSTOM, XLB_CLI_F_REPEAT | XLB_CLI_F_CONFIG,
	  IFACE_LIST(egress_gw), "IFACE=MAC",
	  "outer destination MAC of packets leaving by IFACE (default: --gateway-mac); the outer "
	  "source MAC is always the leaving interface's own",
	  .parse = parse_iface_mac },
	{ "fragments", 0, XLB_CLI_ENUM, XLB_CLI_F_CONFIG, C(set.frag_policy), NULL,
	  "fragments to VIPs: balance (the first on its ports, the later ones follow it) or drop",
	  .def = "balance", .choices = frag_names },
	{ "hc-source-mac", 0, XLB_CLI_CUSTOM, XLB_CLI_F_CONFIG, C(set.hc_src_mac), "MAC",
	  "outer source MAC of encapsulated health probes (default: the interface's)",
	  .parse = parse_mac },
	{ "hc-src4", 0, XLB_CLI_CUSTOM, XLB_CLI_F_CONFIG, C(set.hc_src4), "ADDR",
	  "outer IPv4 source of encapsulated health probes (default: the interface's first "
	  "address)", .parse = parse_addr4 },
	{ "hc-src6", 0, XLB_CLI_CUSTOM, XLB_CLI_F_CONFIG, C(set.hc_src6), "ADDR",
	  "outer IPv6 source of encapsulated health probes (default: the interface's first "
	  "global address)", .parse = parse_addr4, .min = 1 },
	{ "hc-mark-base", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(set.hc_mark_base), "MARK",
	  "encapsulated health probes carry skb marks MARK + real id (MARK .. MARK + max reals - 1 "
	  "is the healthcheck program's range; other marks pass it untouched)",
	  .def = "1481375744", .min = 1, .max = 0xfffff000u },
	{ "gue-port", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(set.gue_port), "PORT",
	  "GUE destination port on the reals (0: 6080)", .def = "0", .max = 65535,
	  .user = SET_STORED | SET_LIVE },
	{ "lru-size", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(set.lru_size), "N",
	  "connection-table entries per CPU", .def = "65536", .min = 1, .max = 100000000,
	  .user = SET_STORED },
	{ "max-vips", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(set.max_vips), "N",
	  "VIP slots of the dataplane, ids 0 .. N-1 (sizes the maps at load; the rings take N x 2 x "
	  "ring-size x 8 bytes of kernel memory)", .def = "512", .min = 1, .max = 65536,
	  .user = SET_STORED },
	{ "max-reals", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(set.max_reals), "N",
	  "real slots of the dataplane, ids 1 .. N-1 (sizes the maps at load)", .def = "4096",
	  .min = 2, .max = 1048576, .user = SET_STORED },
	{ "ring-size", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(set.ring_size), "PRIME",
	  "Maglev ring slots per VIP, a prime: more slots follow the weights more closely and take "
	  "more memory (at least 100 x the reals of the largest VIP is Maglev's advice)",
	  .def = "65537", .min = 3, .max = XLB_RING_SIZE_MAX, .user = SET_STORED },
	{ "max-new-flows-per-sec", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(set.max_new_flows_per_sec),
	  "N", "flood guard: new connection-table entries per CPU and second (0: unlimited)",
	  .def = "0", .user = SET_STORED | SET_LIVE },
	{ "backend", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(backend), "NAME",
	  "dataplane backend: kernel (XDP) or userspace (the DPDK path)", .def = "kernel",
	  .choices = backend_names, .complete = XLB_CLI_COMPLETE_WORDS },
	{ "dpdk-run-dir", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(dpdk_run_dir), "DIR",
	  "userspace backend: xlb-dpdk's run directory (its shared maps are in DIR/maps)",
	  .def = "/run/xlb-dpdk", .complete = XLB_CLI_COMPLETE_DIR },
	{ "dpdk-wait", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(dpdk_wait_s), "SECONDS",
	  "userspace backend: how long to wait at start for xlb-dpdk to create its maps",
	  .def = "10", .max = 3600 },
	{ "object", 'o', XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(object), "FILE",
	  "the balancer object", .def = XLB_DATADIR "/balancer.bpf.o",
	  .complete = XLB_CLI_COMPLETE_FILE },
	{ "pin-root", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(pin_root), "DIR",
	  "bpffs directory of the pinned maps and programs", .def = "/sys/fs/bpf/xlb",
	  .complete = XLB_CLI_COMPLETE_DIR },
	{ "state-dir", 'd', XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(state_dir), "DIR",
	  "directory of the store (xlb.db)", .def = "/var/lib/xlb",
	  .complete = XLB_CLI_COMPLETE_DIR },
	{ "socket", 's', XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(sock), "PATH", "the API socket",
	  .def = XLB_SOCK_PATH_DEFAULT, .complete = XLB_CLI_COMPLETE_FILE },
	{ "socket-group", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(sock_group), "GROUP",
	  "group allowed to use the socket" },
	{ "store", 0, XLB_CLI_ENUM, XLB_CLI_F_CONFIG, C(store), NULL,
	  "where the desired state lives: sqlite (this host, in the state dir) or etcd (every host "
	  "of a site; the state dir keeps this host's settings and a cache of the last good state)",
	  .def = "sqlite", .choices = store_names },
	{ "etcd-endpoints", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(etcd_endpoints), "URLS",
	  "the etcd members, comma-separated (http://10.0.0.1:2379,http://10.0.0.2:2379)" },
	{ "etcd-prefix", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(etcd_prefix), "PREFIX",
	  "the site's keys in etcd: PREFIXstate, PREFIXhosts/NAME", .def = "/xlb/" },
	{ "etcd-timeout", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(etcd_timeout_ms), "MS",
	  "deadline of one etcd request (then the next member)", .def = "2000", .min = 100,
	  .max = 60000 },
	{ "host-name", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(host_name), "NAME",
	  "this host's name in the site", .def = "the host name" },
	{ "host-ttl", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(host_ttl_s), "S",
	  "a host's report leaves the store this long after its xlbd stopped renewing it",
	  .def = "3", .min = 2, .max = 600 },
	{ "bird-socket", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(bird_socket), "PATH",
	  "BIRD's control socket: announce the healthy VIPs through BIRD (off when unset)",
	  .complete = XLB_CLI_COMPLETE_FILE },
	{ "bird-include", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(bird_include), "FILE",
	  "the routes file BIRD's config includes (protocols xlb_vips4 and xlb_vips6)",
	  .def = "STATE_DIR/bird-vips.conf", .complete = XLB_CLI_COMPLETE_FILE },
	{ "health-policy", 0, XLB_CLI_ENUM, XLB_CLI_F_CONFIG, C(health_policy), NULL,
	  "what takes a real out of the ring: this host's probes (local), more than half of the "
	  "site's hosts finding it down (site: identical rings on every host), or site with etcd "
	  "and local otherwise (auto)",
	  .def = "auto", .choices = health_policy_names },
	{ "metrics-address", 0, XLB_CLI_STRING, XLB_CLI_F_CONFIG, C(metrics_addr), "ADDR",
	  "listen address of the Prometheus endpoint (IPv4 or IPv6)", .def = "127.0.0.1" },
	{ "metrics-port", 'm', XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(metrics_port), "PORT",
	  "Prometheus metrics port (0: off)", .def = "9100", .max = 65535 },
	{ "metrics-optional", 0, XLB_CLI_FLAG, XLB_CLI_F_CONFIG, C(metrics_optional), NULL,
	  "start even when the metrics address cannot be bound (else that is fatal)" },
	{ "api-max-request", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(api_max_request), "BYTES",
	  "largest API request (E2BIG beyond)", .def = "262144", .min = 1024,
	  .max = XLB_API_MAX_REQUEST_HARD, .user = SET_LIVE },
	{ "api-max-clients", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(api_max_clients), "N",
	  "API connections at once (a full table closes the oldest idle connection of the "
	  "user holding the most)", .def = "4096", .min = 2, .max = 1000000, .user = SET_LIVE },
	{ "api-max-clients-per-uid", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(api_max_clients_per_uid),
	  "N", "API connections per user (root is exempt)", .def = "64", .min = 1, .max = 1000000, .user = SET_LIVE },
	{ "api-idle-timeout", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(api_idle_timeout_ms), "MS",
	  "close an API connection that sends no complete request for this long", .def = "30000",
	  .min = 100, .max = 86400000, .user = SET_LIVE },
	{ "api-write-timeout", 0, XLB_CLI_UINT, XLB_CLI_F_CONFIG, C(api_write_timeout_ms), "MS",
	  "close an API connection that does not take its answer for this long", .def = "5000",
	  .min = 100, .max = 86400000, .user = SET_LIVE },
	{ "new-real-wait", 0, XLB_CLI_ENUM, XLB_CLI_F_CONFIG, C(new_real_wait), NULL,
	  "a real added to a VIP with a health check enters the ring after its first successful "
	  "probe (probe), or at once (none)",
	  .def = "probe", .choices = wait_names, .user = SET_LIVE },
	{ "verify", 0, XLB_CLI_ENUM, XLB_CLI_F_CONFIG, C(verify), NULL,
	  "pre-validation with xlb's verifier: enforce refuses what it rejects, warn logs and "
	  "attaches, off skips it",
	  .def = "enforce", .choices = verify_names },
	{ "no-verify", 0, XLB_CLI_FLAG, 0, C(no_verify), NULL, "same as --verify=off" },
	{ "xdp-mode", 0, XLB_CLI_ENUM, XLB_CLI_F_CONFIG, C(xdp_mode), NULL,
	  "libxdp's dispatcher if the kernel allows it, else a single program (auto); "
	  "the dispatcher or nothing; a single program only",
	  .def = "auto", .choices = xdp_mode_names },
	{ "skb-mode", 0, XLB_CLI_FLAG, XLB_CLI_F_CONFIG, C(skb_mode), NULL, "generic XDP only" },
	{ "cleanup", 0, XLB_CLI_FLAG, 0, C(cleanup), NULL,
	  "detach the programs, remove the pins and exit" },
	{ "adopt-dataplane", 0, XLB_CLI_FLAG, 0, C(adopt), NULL,
	  "with an empty store over a dataplane that holds VIPs: import them into the store "
	  "(rings kept; weights from the slots each real holds; health checks are lost)" },
	{ "reset", 0, XLB_CLI_FLAG, 0, C(reset), NULL,
	  "with an empty store over a dataplane that holds VIPs: remove them" },
	{ "resize-dataplane", 0, XLB_CLI_FLAG, 0, C(resize), NULL,
	  "when the pinned dataplane's sizes (max-vips, max-reals, ring-size, lru-size) are not the "
	  "settings': detach it, drop its maps and load the new sizes, refilled from the store "
	  "(the connection table starts empty: established flows may move).  Without it such a "
	  "start is refused" },
	{ "verbose", 'v', XLB_CLI_FLAG, 0, C(verbose), NULL, "debug logging" },
	{ "version", 'V', XLB_CLI_FLAG, 0, C(version), NULL, "print the version and exit" },
	{ "help", 'h', XLB_CLI_FLAG, 0, C(help), NULL, "show this help and exit" },
	{ "man", 0, XLB_CLI_FLAG, 0, C(man), NULL, "print the xlbd(8) man page (troff) and exit" },
	{ "bash-completion", 0, XLB_CLI_FLAG, 0, C(completion), NULL,
	  "print the bash completion script and exit" },
	{ 0 },
};
#undef IFACE_LIST
#undef PREFIX
#undef C

_Static_assert(sizeof(settings) / sizeof(settings[0]) <=
		       sizeof(((struct xlbd_config *)0)->given),
	       "xlbd_config.given has a slot per row");

static const struct xlb_cli_section sections[] = {
	{ "INITIAL STATE",
	  "The config file may also hold a vips: list in the format of lbctl apply (see "
	  "lbctl(8)).  It is applied only when the store is empty, on the first start; "
	  "afterwards the desired state lives in the store and changes through lbctl." },
	{ "SIGNALS",
	  "SIGTERM and SIGINT stop xlbd and leave the balancer attached with its maps pinned, "
	  "so established connections survive a restart or an upgrade (xlbd --cleanup removes "
	  "it)." },
	{ "FLEET MODE",
	  "With --store etcd every xlbd of a site runs one desired state, kept in etcd under "
	  "--etcd-prefix, and reconciles from its watch; lbctl changes it through any xlbd, each "
	  "change one etcd transaction.  With --bird-socket each xlbd announces its healthy VIPs "
	  "through BIRD and withdraws them on lbctl host drain, on shutdown and when its "
	  "dataplane is not attached.  See README.md, \"Scaling out\"." },
	{ "FILES",
	  "/etc/xlb/xlbd.yaml the config file\n\n/var/lib/xlb/xlb.db the store (SQLite, WAL "
	  "mode; with etcd, this host's settings and the cached state)\n\n/var/lib/xlb/drained "
	  "present while the host is drained\n\n/var/lib/xlb/bird-vips.conf the routes BIRD "
	  "includes\n\n/run/xlb/xlbd.sock the API socket\n\n/sys/fs/bpf/xlb the pinned maps and "
	  "programs" },
	{ "EXIT STATUS", "0 stopped cleanly; 1 failed to start or serve; 2 usage or config error." },
	{ "SEE ALSO", "lbctl(8), xbpf(1), systemd.service(5)" },
	{ 0 },
};

static const struct xlb_cli_prog program = {
	.name = "xlbd",
	.man_section = 8,
	.summary = "the xlb L4 load balancer daemon",
	.version = XLB_VERSION,
	.description =
		"xlbd owns the desired state of the load balancer (VIPs, their reals, weights and "
		"health checks), keeps it in a crash-safe store, programs the XDP balancer's maps "
		"through its backend, health-checks the reals, serves the JSON API that lbctl(8) "
		"speaks on a UNIX socket, and exports Prometheus metrics.\n\n"
		"Every change is one transaction: it is in the maps and the store, or in neither.",
	.opts = settings,
	.config_file = CONFIG_DEFAULT,
	.sections = sections,
};

/* ---- the config file ------------------------------------------------------ */

/* One config key's value through its row, as the command line would set it. */
static int set_from_json(struct xlbd_config *cfg, const struct xlb_cli_opt *o, json_t *v,
			 bool first, char *err, size_t errlen)
{
	char num[32];
	const char *text;

	if (json_is_string(v))
		text = json_string_value(v);
	else if (json_is_integer(v) && o->type != XLB_CLI_STRING)
		text = (snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)), num);
	else if (json_is_boolean(v) && o->type == XLB_CLI_FLAG)
		text = json_is_true(v) ? "true" : "false";
	else {
		snprintf(err, errlen, "wrong type");
		return -EINVAL;
	}
	return xlb_cli_opt__set(o, cfg, text, first, err, errlen);
}

static int load_file(struct xlbd_config *cfg, json_t **ret_json)
{
	struct xlb_err err = { 0 };
	size_t len = 0;
	char *text, msg[256];
	const char *key;
	json_t *j, *v;
	FILE *f;

	f = fopen(cfg->config, "r");
	if (!f) {
		xlbd_log(LOG_ERR, "cannot open %s: %s", cfg->config, strerror(errno));
		return -errno;
	}
	text = malloc(CONFIG_MAX_BYTES + 1);
	if (text)
		len = fread(text, 1, CONFIG_MAX_BYTES + 1, f);
	fclose(f);
	if (!text)
		return -ENOMEM;
	j = xlb_config_parse(text, len, &err);
	free(text);
	if (!j) {
		xlbd_log(LOG_ERR, "%s: %s", cfg->config, err.msg);
		return -EINVAL;
	}
	if (!json_is_object(j)) {
		xlbd_log(LOG_ERR, "%s: must be a mapping of settings", cfg->config);
		json_decref(j);
		return -EINVAL;
	}
	json_object_foreach(j, key, v) {
		const struct xlb_cli_opt *o = xlb_cli_opt__find(settings, key, true);
		int r = 0;

		if (!strcmp(key, "vips")) {
			cfg->initial = json_pack("{s:O}", "vips", v);
			continue;
		}
		if (!o || !(o->flags & XLB_CLI_F_CONFIG)) {
			xlbd_log(LOG_ERR, "%s: unknown setting \"%.40s\"", cfg->config, key);
			json_decref(j);
			return -EINVAL;
		}
		if ((o->flags & XLB_CLI_F_REPEAT) && json_is_array(v)) {
			json_t *e;
			size_t i;

			if (!json_array_size(v)) {
				snprintf(msg, sizeof(msg), "empty list");
				r = -EINVAL;
			}
			json_array_foreach(v, i, e) {
				if (!r)
					r = set_from_json(cfg, o, e, i == 0, msg, sizeof(msg));
			}
		} else {
			r = set_from_json(cfg, o, v, true, msg, sizeof(msg));
		}
		if (r) {
			xlbd_log(LOG_ERR, "%s: %s: %s", cfg->config, key, msg);
			json_decref(j);
			return -EINVAL;
		}
		cfg->given[o - settings]++;
	}
	*ret_json = j; /* string settings point into it */
	return 0;
}

/* ---- loading -------------------------------------------------------------- */

static json_t *config_json; /* kept while the settings point into it */
static struct {
	struct xlbd_config defaults;
	int argc;
	char **argv;
} loaded;

int xlbd_config_load(struct xlbd_config *cfg, int argc, char **argv)
{
	struct xlbd_config scan = *cfg;
	struct xlb_cli_optset set = { settings, &scan, NULL };
	char *args[argc + 1], err[256];
	int nargs = 0, r;

	/* 1. The command line alone, for its syntax and the config file's name. */
	if (xlb_cli_parse(&set, 1, argc - 1, argv + 1, 0, args, &nargs, NULL, err, sizeof(err))) {
		xlbd_log(LOG_ERR, "%s (see xlbd --help)", err);
		return -EINVAL;
	}
	if (nargs) {
		xlbd_log(LOG_ERR, "unexpected argument %s", args[0]);
		return -EINVAL;
	}
	if (scan.help || scan.man || scan.completion || scan.version) {
		if (scan.version)
			printf("xlbd %s\n", XLB_VERSION);
		else if (scan.help)
			xlb_cli_help(stdout, &program, NULL);
		else
			(scan.man ? xlb_cli_man : xlb_cli_bash_completion)(stdout, &program);
		return 1;
	}
	/* 2. The config file, then the command line again over it. */
	if (!loaded.argv) {
		loaded.defaults = *cfg;
		loaded.argc = argc;
		loaded.argv = argv;
	}
	cfg->config = scan.config;
	if (!cfg->config && !access(CONFIG_DEFAULT, R_OK))
		cfg->config = CONFIG_DEFAULT;
	if (cfg->config) {
		r = load_file(cfg, &config_json);
		if (r)
			return -EINVAL;
	}
	set = (struct xlb_cli_optset){ settings, cfg, cfg->given };
	if (xlb_cli_parse(&set, 1, argc - 1, argv + 1, 0, args, &nargs, NULL, err, sizeof(err)))
		return -EINVAL; /* cannot happen: the same line parsed above */
	if (cfg->no_verify)
		cfg->verify = XLB_VERIFY_OFF;
	if (cfg->adopt && cfg->reset) {
		xlbd_log(LOG_ERR, "--adopt-dataplane and --reset exclude each other");
		return -EINVAL;
	}
	if (cfg->verbose)
		xlbd_log_set_level(LOG_DEBUG);
	return 0;
}

/* Equal values of a row in two configs (strings by content). */
static bool row_equal(const struct xlb_cli_opt *o, const struct xlbd_config *a,
		      const struct xlbd_config *b)
{
	const void *x = (const char *)a + o->offset, *y = (const char *)b + o->offset;

	if (o->type == XLB_CLI_STRING) {
		const char *p = *(const char *const *)x, *q = *(const char *const *)y;

		return p == q || (p && q && !strcmp(p, q));
	}
	return !memcmp(x, y, o->size);
}

int xlbd_config_reload(struct xlbd_config *cur, bool *ret_dataplane)
{
	struct xlbd_config next = loaded.defaults;
	json_t *old_json = config_json;
	int changed = 0;

	*ret_dataplane = false;
	memset(next.given, 0, sizeof(next.given));
	config_json = NULL;
	if (xlbd_config_load(&next, loaded.argc, loaded.argv)) {
		json_decref(config_json);
		config_json = old_json;
		xlbd_log(LOG_ERR, "reload: the settings did not load; keeping the running ones");
		return -EINVAL;
	}
	for (size_t i = 0; settings[i].name; i++) {
		const struct xlb_cli_opt *o = &settings[i];

		if (!(o->flags & XLB_CLI_F_CONFIG) || row_equal(o, cur, &next))
			continue;
		if (!(o->user & SET_LIVE)) {
			xlbd_log(LOG_WARNING, "reload: %s changed; it takes effect at the next start",
				 o->name);
			continue;
		}
		memcpy((char *)cur + o->offset, (char *)&next + o->offset, o->size);
		xlbd_log(LOG_NOTICE, "reload: %s changed", o->name);
		*ret_dataplane |= (o->user & SET_STORED) != 0;
		changed++;
	}
	/* String settings of cur may point into the old JSON: it stays (one per reload). */
	json_decref(next.initial);
	return changed;
}

bool xlbd_config_given(const struct xlbd_config *cfg, const char *name)
{
	size_t i = 0;

	while (settings[i].name && strcmp(settings[i].name, name))
		i++;
	return settings[i].name && cfg->given[i];
}

int xlbd_config_check_sizes(const struct xlb_settings *set)
{
	if (!xlb_is_prime(set->ring_size)) {
		xlbd_log(LOG_ERR, "ring-size %u is not a prime (Maglev needs one)", set->ring_size);
		return -EINVAL;
	}
	if ((uint64_t)set->max_vips * XLB_RING_HALVES * set->ring_size <= UINT32_MAX)
		return 0;
	xlbd_log(LOG_ERR, "max-vips %u x 2 x ring-size %u exceed one map (2^32 slots)",
		 set->max_vips, set->ring_size);
	return -EINVAL;
}

void xlbd_config_merge_stored(struct xlbd_config *cfg, const struct xlb_settings *stored)
{
	struct xlbd_config from = *cfg;

	from.set = *stored;
	for (size_t i = 0; settings[i].name; i++) {
		const struct xlb_cli_opt *o = &settings[i];

		if (!(o->user & SET_STORED) || cfg->given[i])
			continue;
		memcpy((char *)cfg + o->offset, (char *)&from + o->offset, o->size);
	}
}

void xlbd_config_free(struct xlbd_config *cfg)
{
	json_decref(cfg->initial);
	cfg->initial = NULL;
	json_decref(config_json);
	config_json = NULL;
}
