// SPDX-License-Identifier: MIT
/* lbctl talking to xlbd: one versioned JSON request, one answer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lbctl.h"
#include "xlb_control.h"

int lbctl_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lbctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'lbctl help'.\n");
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
	int fd, ret;

	if (args)
		json_object_set_new(req, "args", args);
	fd = xlb_client_connect(c->sock);
	if (fd < 0) {
		json_decref(req);
		fprintf(stderr, "lbctl: cannot reach xlbd at %s: %s\n", c->sock, strerror(-fd));
		return LBCTL_EXIT_UNREACHABLE;
	}
	ret = xlb_client_call(fd, req, &resp);
	close(fd);
	if (ret) {
		fprintf(stderr, "lbctl: no answer from xlbd: %s\n", strerror(-ret));
		return LBCTL_EXIT_UNREACHABLE;
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
