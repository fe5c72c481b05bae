// SPDX-License-Identifier: MIT
/*
 * The API's front door: one request line in, one response out.  The
 * request is checked (version, op, args: xlb_request_parse), the op looked
 * up in the handler tables of api_vip.c, api_info.c, api_apply.c and
 * api_fleet.c, and
 * run under the daemon lock.  A new op is one row in one of those tables.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "xlbd.h"

static const struct xlbd_op *const op_tables[] = { xlbd_ops_vip, xlbd_ops_info, xlbd_ops_apply,
						     xlbd_ops_fleet, xlbd_ops_conn };

static const struct xlbd_op *find_op(const char *name)
{
	for (size_t t = 0; t < sizeof(op_tables) / sizeof(op_tables[0]); t++)
		for (const struct xlbd_op *o = op_tables[t]; o->name; o++)
			if (!strcmp(o->name, name))
				return o;
	return NULL;
}

json_t *xlbd_api_handle(struct daemon *d, const char *buf, size_t len, const struct xlbd_peer *p)
{
	struct xlb_request req;
	struct xlb_err err = { 0 };
	struct xlbd_req c = { .d = d, .peer = p, .err = &err };
	const struct xlbd_op *op;
	json_t *resp, *id;
	int r;

	r = xlb_request_parse(buf, len, &req, &err);
	if (r) {
		xlbd_log(LOG_INFO, "uid %u pid %d: bad request: %s", (unsigned)p->uid, (int)p->pid,
			 err.msg);
		return xlb_response_error(&err);
	}
	c.args = req.args;
	op = find_op(req.op);
	if (op) {
		pthread_mutex_lock(&d->lock);
		r = op->fn(&c);
		pthread_mutex_unlock(&d->lock);
	} else {
		r = xlb_err_set(&err, -EOPNOTSUPP, "unknown op \"%s\"", req.op);
	}
	if (r) {
		json_decref(c.result);
		resp = xlb_response_error(&err);
	} else {
		resp = xlb_response_ok(c.result);
	}
	id = json_object_get(req.root, "id");
	if (id)
		json_object_set(resp, "id", id);
	json_decref(req.root);
	return resp;
}
