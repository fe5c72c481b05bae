// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: `lbctl apply -f FILE` / xlbd's apply.  Bytes are parsed
 * as YAML or JSON, decoded into a desired state, given ids against an empty
 * state and against a small existing one (the diff path), validated and
 * encoded back.
 */
#include <jansson.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void existing_state(struct xlb_state *cur, const struct xlb_settings *set)
{
	struct xlb_vip_cfg v = { .port = 80, .proto = IPPROTO_TCP };
	struct xlb_real_cfg r = { .weight = 1 };

	xlb_state_init(cur);
	xlb_hc_default(&v.hc);
	xlb_addr_parse("10.0.0.10", &v.addr);
	xlb_state_vip_add(cur, set, &v, NULL);
	xlb_addr_parse("10.1.0.1", &r.addr);
	xlb_state_real_add(cur, set, &cur->vips[0], &r, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xlb_settings set;
	struct xlb_state st, cur, empty;
	struct xlb_err err;
	json_t *j;

	j = xlb_config_parse((const char *)data, size, &err);
	if (!j)
		return 0;
	xlb_settings_default(&set);
	set.max_vips = 64;
	set.max_reals = 128;
	if (!xlb_state_from_json(j, &st, &err)) {
		struct xlb_state copy;

		xlb_state_init(&empty);
		existing_state(&cur, &set);
		if (!xlb_state_assign_ids(&st, &empty, &set, &err))
			json_decref(xlb_state_to_json(&st, true));
		if (!xlb_state_copy(&copy, &st)) {
			if (!xlb_state_assign_ids(&copy, &cur, &set, &err))
				xlb_state_validate(&copy, &set, &err);
			xlb_state_free(&copy);
		}
		xlb_state_free(&cur);
		xlb_state_free(&st);
	}
	json_decref(j);
	return 0;
}
