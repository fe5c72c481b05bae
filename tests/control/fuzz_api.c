// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: xlbd's API request path short of the dataplane.  Bytes
 * go through xlb_request_parse() and, when they parse, through the decoder
 * of every object an op may carry (VIP, real, VIP key, apply config).
 * Built with -Dfuzz=true (CC=clang); without it, tests/lib/fuzz_replay.c runs the
 * committed corpus through the same function as a normal test.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xlb_request req;
	struct xlb_err err;
	struct xlb_vip_cfg vip;
	struct xlb_real_cfg real;
	struct xlb_state st;
	struct xlb_ip addr;
	uint16_t port;
	uint8_t proto;
	json_t *rest;

	if (xlb_request_parse((const char *)data, size, &req, &err)) {
		json_decref(xlb_response_error(&err));
		return 0;
	}
	if (!xlb_vip_from_json(req.args, &vip, true, &err)) {
		json_decref(xlb_vip_to_json(&vip, true));
		free(vip.reals);
	}
	xlb_vip_key_from_json(req.args, &addr, &port, &proto, &err);
	rest = json_deep_copy(req.args);
	if (rest) {
		json_object_del(rest, "vip");
		if (!xlb_real_from_json(rest, &real, &err))
			json_decref(xlb_real_to_json(&real));
		json_decref(rest);
	}
	if (json_object_get(req.args, "vip"))
		xlb_vip_key_from_json(json_object_get(req.args, "vip"), &addr, &port, &proto, &err);
	if (!xlb_state_from_json(json_object_get(req.args, "config"), &st, &err)) {
		json_decref(xlb_state_to_json(&st, true));
		xlb_state_free(&st);
	}
	json_decref(xlb_response_ok(json_deep_copy(req.args)));
	json_decref(req.root);
	return 0;
}
