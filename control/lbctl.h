/* SPDX-License-Identifier: MIT */
/*
 * lbctl.h - private to lbctl.  Its files, bottom up:
 *
 *   lbctl_rpc.c    talking to xlbd (one request, one answer), usage errors
 *   lbctl_print.c  the human tables (-j prints the daemon's JSON instead)
 *   lbctl_cmds.c   one handler per command
 *   lbctl_fleet.c  the host and fleet commands, with their tables
 *   lbctl.c        the option and command tables (cli/xlb_cli.h) and main
 *
 * Adding a verb: a handler in lbctl_cmds.c, a row in lbctl.c's commands[]
 * (with its options' rows), and the op in xlbd (control/api_*.c).  Help,
 * the man page and bash completion follow from the row.
 */
#ifndef LBCTL_H
#define LBCTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "xlb_cli.h"

#ifndef XLB_VERSION
#define XLB_VERSION "0.1.0"
#endif

/* Exit codes, the same for every command. */
enum {
	LBCTL_EXIT_REFUSED = 1,	    /* xlbd refused or failed the request */
	LBCTL_EXIT_USAGE = 2,	    /* bad command line or input file */
	LBCTL_EXIT_UNREACHABLE = 3, /* no answer from xlbd */
	/* lbctl verify: the verifier rejected the object (xbpf verify's code) */
	LBCTL_EXIT_REJECTED = 1,
};

/* Everything a command gets: the global options, its own, its arguments. */
struct lbctl {
	/* global options */
	const char *sock;
	double timeout; /* seconds, for each request */
	bool json, pretty, help, version, man, completion;
	/* the options of the commands (each command uses some) */
	int encap;	/* enum xlb_encap */
	uint32_t flags; /* XLB_VIP_F_* */
	int hc;		/* enum xlb_hc_type */
	uint32_t hc_port, hc_interval, hc_timeout, hc_rise, hc_fall;
	const char *hc_path;
	int hc_via;
	uint32_t affinity;
	const char *allow; /* PREFIX[,PREFIX...] or none */
	uint32_t weight;
	int state; /* enum xlb_real_state */
	uint32_t server_id;
	const char *real; /* conn flush/list: one real only */
	const char *file;
	bool dry_run;
	bool allow_empty;
	bool watch;
	double interval;
	bool wait;		/* host drain */
	uint32_t wait_timeout; /* seconds */
	/* the command, how often each of its rows was given, its arguments */
	const struct xlb_cli_cmd *cmd;
	unsigned char given[32];
	char **args;
	int nargs;
};

/* lbctl_rpc.c */
/* Errors as JSON on stdout (-j) or one line on stderr. */
void lbctl_errors_as_json(bool json, bool pretty);
/* Report a failure; returns rc (the exit code). */
int lbctl_fail(int rc, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int lbctl_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Was the command's option `name` given? */
bool lbctl_given(const struct lbctl *c, const char *name);
/* One request; 0 with the result, or an exit code (the error already printed). */
int lbctl_call(struct lbctl *c, const char *op, json_t *args, json_t **ret_result);
/* Call; with -j print the result, else hand it to the human printer (may be NULL). */
int lbctl_run(struct lbctl *c, const char *op, json_t *args, void (*human)(json_t *));
/* A change: on success one line, `done` (or with -j the daemon's result). */
int lbctl_change(struct lbctl *c, const char *op, json_t *args, const char *done);
void lbctl_print_json(const struct lbctl *c, json_t *j);

/* lbctl_print.c */
void lbctl_show_vip_list(json_t *res);
void lbctl_show_vip(json_t *v);
void lbctl_show_real_list(json_t *res);
void lbctl_show_status(json_t *s);
void lbctl_show_health(json_t *res);
void lbctl_show_apply(json_t *res);
void lbctl_show_export(json_t *res);
void lbctl_show_stats(json_t *s, json_t *prev);
void lbctl_show_verify(json_t *progs);
void lbctl_show_conn_lookup(json_t *res);
void lbctl_show_conn_list(json_t *res);

/* lbctl_cmds.c: the handlers (ctx is a struct lbctl). */
int lbctl_vip_add(void *ctx);
int lbctl_vip_del(void *ctx);
int lbctl_vip_list(void *ctx);
int lbctl_vip_show(void *ctx);
int lbctl_vip_set(void *ctx);
int lbctl_real_add(void *ctx);
int lbctl_real_del(void *ctx);
int lbctl_real_set_weight(void *ctx);
int lbctl_real_drain(void *ctx);
int lbctl_real_undrain(void *ctx);
int lbctl_real_down(void *ctx);
int lbctl_real_list(void *ctx);
/* lbctl_conn.c */
int lbctl_real_set_server_id(void *ctx);
int lbctl_conn_lookup(void *ctx);
int lbctl_conn_list(void *ctx);
int lbctl_conn_flush(void *ctx);
/* lbctl_cmds.c, for lbctl_conn.c */
int lbctl_need_vip(struct lbctl *c, json_t **ret);
int lbctl_vip_real_args(struct lbctl *c, json_t **ret);
int lbctl_stats(void *ctx);
int lbctl_status(void *ctx);
int lbctl_health(void *ctx);
int lbctl_verify(void *ctx);
int lbctl_apply(void *ctx);
int lbctl_export(void *ctx);

/* lbctl_fleet.c */
int lbctl_host_drain(void *ctx);
int lbctl_host_resume(void *ctx);
int lbctl_host_status(void *ctx);
int lbctl_fleet_status(void *ctx);

#endif /* LBCTL_H */
