// SPDX-License-Identifier: MIT
/*
 * lbctl talking to xlbd: one versioned JSON request, one answer, within
 * --timeout.  Every failure leaves through lbctl_fail(), so with -j it is a
 * JSON error object on stdout (the daemon's error format, plus the exit
 * code) and without it one line on stderr, and the exit codes are the same
 * for every command: 1 refused, 2 usage, 3 unreachable.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lbctl.h"
#include "xlb_control.h"

static struct {
	bool json, pretty;
} errors_as;

void lbctl_errors_as_json(bool json, bool pretty)
{
	errors_as.json = json;
	errors_as.pretty = pretty;
}

static int vfail(int rc, int errnum, bool hint, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (errors_as.json) {
		struct xlb_err err;
		json_t *j;

		xlb_err_set(&err, -errnum, "%s", msg);
		j = xlb_response_error(&err);
		json_object_set_new(j, "exit", json_integer(rc));
		json_dumpf(j, stdout, errors_as.pretty ? JSON_INDENT(2) : JSON_COMPACT);
		putchar('\n');
		json_decref(j);
	} else {
		fprintf(stderr, "lbctl: %s\n%s", msg, hint ? "Try 'lbctl help'.\n" : "");
	}
	return rc;
}

int lbctl_fail(int rc, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(rc, errnum, false, fmt, ap);
	va_end(ap);
	return rc;
}

int lbctl_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(LBCTL_EXIT_USAGE, EINVAL, true, fmt, ap);
	va_end(ap);
	return LBCTL_EXIT_USAGE;
}

bool lbctl_given(const struct lbctl *c, const char *name)
{
	const struct xlb_cli_opt *o = c->cmd ? xlb_cli_opt__find(c->cmd->opts, name, false) : NULL;

	return o && c->given[o - c->cmd->opts];
}

void lbctl_print_json(const struct lbctl *c, json_t *j)
{
	json_dumpf(j, stdout, (c->pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_ENCODE_ANY);
	putchar('\n');
}

int lbctl_call(struct lbctl *c, const char *op, json_t *args, json_t **ret_result)
{
	json_t *req = json_pack("{s:i, s:s}", "v", XLB_API_VERSION, "op", op), *resp = NULL;
	int timeout_ms = (int)(c->timeout * 1000), fd, ret;

	if (args)
		json_object_set_new(req, "args", args);
	fd = xlb_client_connect(c->sock, timeout_ms);
	if (fd < 0) {
		json_decref(req);
		return lbctl_fail(LBCTL_EXIT_UNREACHABLE, -fd, "cannot reach xlbd at %s: %s", c->sock,
				  strerror(-fd));
	}
	ret = xlb_client_call(fd, req, &resp, timeout_ms);
	close(fd);
	if (ret == -ETIMEDOUT)
		return lbctl_fail(LBCTL_EXIT_UNREACHABLE, ETIMEDOUT,
				  "no answer from xlbd at %s within %.3g s (--timeout)", c->sock,
				  c->timeout);
	if (ret)
		return lbctl_fail(LBCTL_EXIT_UNREACHABLE, -ret, "no answer from xlbd: %s",
				  strerror(-ret));
	if (!json_is_true(json_object_get(resp, "ok"))) {
		json_t *e = json_object_get(resp, "error");

		if (c->json) {
			json_object_set_new(resp, "exit", json_integer(LBCTL_EXIT_REFUSED));
			lbctl_print_json(c, resp);
		} else {
			fprintf(stderr, "lbctl: %s (%s)\n",
				json_string_value(json_object_get(e, "message")) ?: "error",
				json_string_value(json_object_get(e, "code")) ?: "?");
		}
		json_decref(resp);
		return LBCTL_EXIT_REFUSED;
	}
	*ret_result = json_incref(json_object_get(resp, "result"));
	if (!*ret_result)
		*ret_result = json_object();
	json_decref(resp);
	return 0;
}

int lbctl_run(struct lbctl *c, const char *op, json_t *args, void (*human)(json_t *))
{
	json_t *res;
	int ret = lbctl_call(c, op, args, &res);

	if (ret)
		return ret;
	if (c->json)
		lbctl_print_json(c, res);
	else if (human)
		human(res);
	json_decref(res);
	return 0;
}

int lbctl_change(struct lbctl *c, const char *op, json_t *args, const char *done)
{
	json_t *res;
	int ret = lbctl_call(c, op, args, &res);

	if (ret)
		return ret;
	if (c->json)
		lbctl_print_json(c, res);
	else
		printf("%s\n", done);
	json_decref(res);
	return 0;
}
