// SPDX-License-Identifier: MIT
/*
 * The desired state as one document, the value of `<prefix>state` in etcd:
 *
 *   {"xlb_state": 1, "next_real_id": 7, "written_by": "lb1",
 *    "written_at_ms": 1764770000000,
 *    "vips": [{"id": 0, "address": ..., "reals": [{"id": 1, ...}]}]}
 *
 * Ids are part of the document: every host of a site programs the same
 * VIP and real ids, so their rings hold the same bytes, and a flow one LB
 * recorded under real id 3 means the same real on every other LB.
 *
 * Parsing is strict, as the store may hold what another client wrote: the
 * version, every key known, every VIP and real with its id, ids unique,
 * next_real_id above every real id, then the state model's own checks
 * (the same as the API's).  A document that fails any of them is refused
 * whole, with the reason.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xlb_control.h"

#define DOC_VERSION 1

char *xlb_state_doc_dump(const struct xlb_state *st, const char *writer)
{
	json_t *j = xlb_state_to_json(st, true);
	char *text;

	if (!j)
		return NULL;
	json_object_set_new(j, "xlb_state", json_integer(DOC_VERSION));
	json_object_set_new(j, "next_real_id", json_integer(st->next_real_id));
	if (writer) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		json_object_set_new(j, "written_by", json_string(writer));
		json_object_set_new(j, "written_at_ms",
				    json_integer((json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000));
	}
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return text;
}

/* Every VIP and real of the document names its id. */
static int ids_present(const json_t *vips, struct xlb_err *err)
{
	const json_t *v, *r;
	size_t i, k;

	json_array_foreach((json_t *)vips, i, v) {
		if (!json_is_integer(json_object_get(v, "id")))
			return xlb_err_set(err, -EINVAL, "vips[%zu] has no id", i);
		json_array_foreach(json_object_get(v, "reals"), k, r)
			if (!json_is_integer(json_object_get(r, "id")))
				return xlb_err_set(err, -EINVAL, "vips[%zu].reals[%zu] has no id", i, k);
	}
	return 0;
}

int xlb_state_doc_parse(const char *text, size_t len, const struct xlb_settings *set,
			struct xlb_state *ret_state, struct xlb_state_doc_meta *ret_meta,
			struct xlb_err *err)
{
	static const char *const keys[] = { "xlb_state", "next_real_id", "written_by",
					    "written_at_ms", "vips" };
	json_t *j, *vips, *inner = NULL;
	json_error_t je;
	struct xlb_settings defaults;
	struct xlb_state st;
	const char *key;
	json_t *val;
	int r;

	xlb_state_init(&st);
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return xlb_err_set(err, -EINVAL, "not JSON: %s (line %d)", je.text, je.line);
	r = json_is_object(j) ? 0 : xlb_err_set(err, -EINVAL, "not a JSON object");
	json_object_foreach(j, key, val) {
		bool known = false;

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			known |= !strcmp(key, keys[i]);
		if (!known && !r)
			r = xlb_err_set(err, -EINVAL, "unknown key \"%.40s\"", key);
	}
	if (!r && json_integer_value(json_object_get(j, "xlb_state")) != DOC_VERSION)
		r = xlb_err_set(err, -EPROTO, "\"xlb_state\" must be %d (the document's version)",
				DOC_VERSION);
	if (!r && (!json_is_integer(json_object_get(j, "next_real_id")) ||
		   json_integer_value(json_object_get(j, "next_real_id")) < 1 ||
		   json_integer_value(json_object_get(j, "next_real_id")) > UINT32_MAX))
		r = xlb_err_set(err, -EINVAL, "\"next_real_id\" must be a number >= 1");
	if (!r && json_object_get(j, "written_by") && !json_is_string(json_object_get(j, "written_by")))
		r = xlb_err_set(err, -EINVAL, "\"written_by\" must be a string");
	if (!r && json_object_get(j, "written_at_ms") &&
	    (!json_is_integer(json_object_get(j, "written_at_ms")) ||
	     json_integer_value(json_object_get(j, "written_at_ms")) < 0))
		r = xlb_err_set(err, -EINVAL, "\"written_at_ms\" must be a number of milliseconds");
	vips = json_object_get(j, "vips");
	if (!r && !json_is_array(vips))
		r = xlb_err_set(err, -EINVAL, "\"vips\" must be a list");
	r = r ?: ids_present(vips, err);
	if (!r) {
		inner = json_pack("{s:O}", "vips", vips);
		r = inner ? xlb_state_from_json(inner, &st, err) :
			    xlb_err_set(err, -ENOMEM, "out of memory");
	}
	if (!r) {
		st.next_real_id = (uint32_t)json_integer_value(json_object_get(j, "next_real_id"));
		for (size_t i = 0; i < st.vip_cnt && !r; i++)
			for (size_t k = 0; k < st.vips[i].real_cnt && !r; k++)
				if (st.vips[i].reals[k].id >= st.next_real_id)
					r = xlb_err_set(err, -EINVAL,
							"real id %u not below next_real_id %u",
							st.vips[i].reals[k].id, st.next_real_id);
	}
	if (!r && !set) {
		xlb_settings_default(&defaults);
		set = &defaults;
	}
	r = r ?: xlb_state_validate(&st, set, err);
	if (!r && ret_meta) {
		snprintf(ret_meta->writer, sizeof(ret_meta->writer), "%s",
			 json_string_value(json_object_get(j, "written_by")) ?: "");
		ret_meta->written_at_ms =
			(uint64_t)json_integer_value(json_object_get(j, "written_at_ms"));
	}
	json_decref(inner);
	json_decref(j);
	if (r) {
		xlb_state_free(&st);
		return r;
	}
	*ret_state = st;
	return 0;
}
