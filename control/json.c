// SPDX-License-Identifier: MIT
/*
 * JSON codec of the control plane (jansson): API requests and responses,
 * VIP/real objects, whole states for `apply` and `export`, and a libyaml
 * front end so `apply` files may be YAML.  Input is treated as hostile:
 * unknown keys, wrong types, out-of-range numbers, duplicate keys, YAML
 * anchors and deep nesting are refused with a message naming the field.
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "xlb_control.h"

#define CONFIG_MAX_BYTES (1024 * 1024)

/* "no-sport dport-only ..." for messages, from the dataplane's lists. */
static const char flag_list[] = ""
#define FLAG_ITEM(sym, bit, name, doc) " " name
	XLB_VIP_FLAGS(FLAG_ITEM)
#undef FLAG_ITEM
	;
static const char encap_list[] = ""
#define ENCAP_ITEM(sym, val, name, doc) " " name
	XLB_ENCAPS(ENCAP_ITEM)
#undef ENCAP_ITEM
	;
#define CONFIG_MAX_DEPTH 16

/* Refuse keys of obj that are not in the NULL-terminated list. */
static int check_keys(const json_t *obj, const char *what, const char *const *allowed,
		      struct xlb_err *err)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)obj, key, val) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a)
			return xlb_err_set(err, -EINVAL, "%s: unknown field \"%.64s\"", what, key);
	}
	return 0;
}

static int get_str(const json_t *obj, const char *key, bool required, const char **ret,
		   struct xlb_err *err)
{
	json_t *v = json_object_get(obj, key);

	if (!v) {
		if (required)
			return xlb_err_set(err, -EINVAL, "missing field \"%s\"", key);
		return 1;
	}
	if (!json_is_string(v))
		return xlb_err_set(err, -EINVAL, "field \"%s\" must be a string", key);
	*ret = json_string_value(v);
	return 0;
}

static int get_uint(const json_t *obj, const char *key, bool required, uint64_t max,
		    uint64_t *ret, struct xlb_err *err)
{
	json_t *v = json_object_get(obj, key);
	json_int_t n;

	if (!v) {
		if (required)
			return xlb_err_set(err, -EINVAL, "missing field \"%s\"", key);
		return 1;
	}
	if (!json_is_integer(v))
		return xlb_err_set(err, -EINVAL, "field \"%s\" must be an integer", key);
	n = json_integer_value(v);
	if (n < 0 || (uint64_t)n > max)
		return xlb_err_set(err, -ERANGE, "field \"%s\" must be 0..%llu", key,
				   (unsigned long long)max);
	*ret = (uint64_t)n;
	return 0;
}

int xlb_vip_key_from_json(const json_t *j, struct xlb_ip *ret_addr, uint16_t *ret_port,
			  uint8_t *ret_proto, struct xlb_err *err)
{
	const char *s, *proto = "tcp";
	uint64_t port;
	int ret;

	if (!json_is_object(j))
		return xlb_err_set(err, -EINVAL, "VIP must be an object");
	ret = get_str(j, "address", true, &s, err);
	if (ret)
		return ret;
	if (xlb_addr_parse(s, ret_addr))
		return xlb_err_set(err, -EINVAL, "bad VIP address \"%.64s\"", s);
	ret = get_uint(j, "port", true, 65535, &port, err);
	if (ret)
		return ret;
	*ret_port = (uint16_t)port;
	ret = get_str(j, "proto", false, &proto, err);
	if (ret < 0)
		return ret;
	if (xlb_proto_parse(proto, ret_proto))
		return xlb_err_set(err, -EINVAL, "bad protocol \"%.16s\" (tcp or udp)", proto);
	return 0;
}

static int hc_from_json(const json_t *j, struct xlb_hc *hc, struct xlb_err *err)
{
	static const char *const keys[] = { "type", "port", "path", "interval_ms", "timeout_ms",
					    "rise", "fall", "via", NULL };
	const char *s;
	uint64_t n;
	int ret;

	if (!json_is_object(j))
		return xlb_err_set(err, -EINVAL, "healthcheck must be an object");
	ret = check_keys(j, "healthcheck", keys, err);
	if (ret)
		return ret;
	if ((ret = get_str(j, "type", true, &s, err)))
		return ret;
	if (xlb_hc_type_parse(s, &hc->type))
		return xlb_err_set(err, -EINVAL, "bad healthcheck type \"%.16s\" (none, tcp, http)",
				   s);
	if ((ret = get_uint(j, "port", false, 65535, &n, err)) < 0)
		return ret;
	if (!ret)
		hc->port = (uint16_t)n;
	if ((ret = get_str(j, "path", false, &s, err)) < 0)
		return ret;
	if (!ret) {
		if (strlen(s) >= sizeof(hc->path))
			return xlb_err_set(err, -EINVAL, "healthcheck path too long");
		strcpy(hc->path, s);
	}
	if ((ret = get_uint(j, "interval_ms", false, 3600000, &n, err)) < 0)
		return ret;
	if (!ret)
		hc->interval_ms = (uint32_t)n;
	if ((ret = get_uint(j, "timeout_ms", false, 3600000, &n, err)) < 0)
		return ret;
	if (!ret)
		hc->timeout_ms = (uint32_t)n;
	if ((ret = get_uint(j, "rise", false, 100, &n, err)) < 0)
		return ret;
	if (!ret)
		hc->rise = (uint8_t)n;
	if ((ret = get_uint(j, "fall", false, 100, &n, err)) < 0)
		return ret;
	if (!ret)
		hc->fall = (uint8_t)n;
	if ((ret = get_str(j, "via", false, &s, err)) < 0)
		return ret;
	if (!ret) {
		if (!strcmp(s, "encap"))
			hc->via_encap = true;
		else if (!strcmp(s, "direct"))
			hc->via_encap = false;
		else
			return xlb_err_set(err, -EINVAL, "bad healthcheck via \"%.16s\" (direct, encap)", s);
	}
	return 0;
}

int xlb_real_from_json(const json_t *j, struct xlb_real_cfg *ret_real, struct xlb_err *err)
{
	static const char *const keys[] = { "address", "weight", "state", "id", "server_id", NULL };
	struct xlb_real_cfg r = { .weight = 1, .state = XLB_REAL_ACTIVE };
	const char *s;
	uint64_t n;
	int ret;

	if (!json_is_object(j))
		return xlb_err_set(err, -EINVAL, "real must be an object");
	if ((ret = check_keys(j, "real", keys, err)))
		return ret;
	if ((ret = get_str(j, "address", true, &s, err)))
		return ret;
	if (xlb_addr_parse(s, &r.addr))
		return xlb_err_set(err, -EINVAL, "bad real address \"%.64s\"", s);
	if ((ret = get_uint(j, "weight", false, 1000000, &n, err)) < 0)
		return ret;
	if (!ret)
		r.weight = (uint32_t)n;
	if ((ret = get_str(j, "state", false, &s, err)) < 0)
		return ret;
	if (!ret && xlb_real_state_parse(s, &r.state))
		return xlb_err_set(err, -EINVAL, "bad real state \"%.16s\" (active, draining, down)",
				   s);
	if ((ret = get_uint(j, "id", false, UINT32_MAX, &n, err)) < 0)
		return ret;
	if (!ret)
		r.id = (uint32_t)n;
	if ((ret = get_uint(j, "server_id", false, XLB_SERVER_ID_MAX, &n, err)) < 0)
		return ret;
	r.server_id = ret ? 0 : (uint32_t)n;
	*ret_real = r;
	return 0;
}

json_t *xlb_real_to_json(const struct xlb_real_cfg *r)
{
	char buf[64];

	json_t *j = json_pack("{s:s, s:I, s:s, s:I}", "address",
			      xlb_addr_str(&r->addr, buf, sizeof(buf)), "weight", (json_int_t)r->weight,
			      "state", xlb_real_state_name(r->state), "id", (json_int_t)r->id);

	if (j && r->server_id)
		json_object_set_new(j, "server_id", json_integer(r->server_id));
	return j;
}

/* "allow": ["PREFIX", ...] into the VIP's allow-list. */
static int allow_from_json(const json_t *a, struct xlb_vip_cfg *v, struct xlb_err *err)
{
	size_t i;
	json_t *e;

	if (!json_is_array(a) || json_array_size(a) > XLB_ALLOW_PER_VIP)
		return xlb_err_set(err, -EINVAL, "allow must be a list of at most %d prefixes",
				   XLB_ALLOW_PER_VIP);
	json_array_foreach((json_t *)a, i, e)
		if (!json_is_string(e) || xlb_prefix_parse(json_string_value(e), &v->allow[i]))
			return xlb_err_set(err, -EINVAL, "bad allow prefix (ADDR/PLEN, host bits zero)");
	return v->allow_cnt = (uint8_t)json_array_size(a), 0;
}

int xlb_vip_from_json(const json_t *j, struct xlb_vip_cfg *ret_vip, bool with_reals,
		      struct xlb_err *err)
{
	static const char *const keys[] = { "address", "port", "proto", "encap", "flags",
					    "healthcheck", "affinity", "allow", "reals", "id", NULL };
	struct xlb_vip_cfg v = { .encap = XLB_ENCAP_IP };
	const json_t *flags, *reals, *hc;
	const char *s;
	uint64_t n;
	int ret;

	xlb_hc_default(&v.hc);
	if (!json_is_object(j))
		return xlb_err_set(err, -EINVAL, "VIP must be an object");
	if ((ret = check_keys(j, "vip", keys, err)))
		return ret;
	if ((ret = xlb_vip_key_from_json(j, &v.addr, &v.port, &v.proto, err)))
		return ret;
	if ((ret = get_str(j, "encap", false, &s, err)) < 0)
		return ret;
	if (!ret && xlb_encap_parse(s, &v.encap))
		return xlb_err_set(err, -EINVAL, "bad encap \"%.16s\" (one of%s)", s, encap_list);
	flags = json_object_get(j, "flags");
	if (flags) {
		size_t i;
		json_t *f;

		if (!json_is_array(flags))
			return xlb_err_set(err, -EINVAL, "flags must be a list of names");
		json_array_foreach((json_t *)flags, i, f) {
			uint32_t bit;

			if (!json_is_string(f) || xlb_vip_flag_parse(json_string_value(f), &bit))
				return xlb_err_set(err, -EINVAL, "bad flag (one of%s)", flag_list);
			v.flags |= bit;
		}
	}
	hc = json_object_get(j, "healthcheck");
	if (hc && (ret = hc_from_json(hc, &v.hc, err)))
		return ret;
	if ((ret = get_uint(j, "affinity", false, 65535, &n, err)) < 0)
		return ret;
	v.affinity_s = ret ? 0 : (uint16_t)n;
	if (json_object_get(j, "allow") && (ret = allow_from_json(json_object_get(j, "allow"), &v, err)))
		return ret;
	if ((ret = get_uint(j, "id", false, UINT32_MAX, &n, err)) < 0)
		return ret;
	if (!ret)
		v.id = (uint32_t)n;
	reals = json_object_get(j, "reals");
	if (reals && !with_reals)
		return xlb_err_set(err, -EINVAL, "reals are added with real.add");
	if (reals) {
		size_t i, cnt;
		json_t *r;

		if (!json_is_array(reals))
			return xlb_err_set(err, -EINVAL, "reals must be a list");
		cnt = json_array_size(reals);
		if (cnt > 65536)
			return xlb_err_set(err, -E2BIG, "too many reals");
		v.reals = calloc(cnt ? cnt : 1, sizeof(*v.reals));
		if (!v.reals)
			return xlb_err_set(err, -ENOMEM, "out of memory");
		json_array_foreach((json_t *)reals, i, r) {
			ret = xlb_real_from_json(r, &v.reals[i], err);
			if (ret) {
				free(v.reals);
				return ret;
			}
			for (size_t k = 0; k < i; k++)
				if (xlb_addr_eq(&v.reals[k].addr, &v.reals[i].addr)) {
					free(v.reals);
					return xlb_err_set(err, -EEXIST, "duplicate real in VIP");
				}
			v.real_cnt = i + 1;
		}
	}
	*ret_vip = v;
	return 0;
}

json_t *xlb_vip_to_json(const struct xlb_vip_cfg *v, bool with_reals)
{
	json_t *j, *flags, *reals;
	char buf[64];

	flags = json_array();
	for (uint32_t bit = 1; bit & XLB_VIP_F_ALL; bit <<= 1)
		if (v->flags & bit)
			json_array_append_new(flags, json_string(xlb_vip_flag_name(bit)));
	j = json_pack("{s:I, s:s, s:I, s:s, s:s, s:o}", "id", (json_int_t)v->id, "address",
		      xlb_addr_str(&v->addr, buf, sizeof(buf)), "port", (json_int_t)v->port, "proto",
		      xlb_proto_name(v->proto), "encap", xlb_encap_name(v->encap), "flags", flags);
	if (!j)
		return NULL;
	if (v->hc.type != XLB_HC_NONE)
		json_object_set_new(j, "healthcheck",
				    json_pack("{s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:s}", "type",
					      xlb_hc_type_name(v->hc.type), "port",
					      (json_int_t)v->hc.port, "path", v->hc.path,
					      "interval_ms", (json_int_t)v->hc.interval_ms,
					      "timeout_ms", (json_int_t)v->hc.timeout_ms, "rise",
					      (json_int_t)v->hc.rise, "fall",
					      (json_int_t)v->hc.fall, "via",
					      v->hc.via_encap ? "encap" : "direct"));
	if (v->affinity_s)
		json_object_set_new(j, "affinity", json_integer(v->affinity_s));
	for (size_t i = 0; i < v->allow_cnt; i++) {
		json_t *a = i ? json_object_get(j, "allow") : json_array();
		char pb[80];

		json_array_append_new(a, json_string(xlb_prefix_str(&v->allow[i], pb, sizeof(pb))));
		if (!i)
			json_object_set_new(j, "allow", a);
	}
	if (with_reals) {
		reals = json_array();
		for (size_t i = 0; i < v->real_cnt; i++)
			json_array_append_new(reals, xlb_real_to_json(&v->reals[i]));
		json_object_set_new(j, "reals", reals);
	}
	return j;
}

int xlb_state_from_json(const json_t *j, struct xlb_state *ret_state, struct xlb_err *err)
{
	static const char *const keys[] = { "vips", NULL };
	struct xlb_state st;
	const json_t *vips;
	size_t i, cnt;
	json_t *vj;
	int ret;

	if (!json_is_object(j))
		return xlb_err_set(err, -EINVAL, "config must be a mapping with \"vips\"");
	if ((ret = check_keys(j, "config", keys, err)))
		return ret;
	xlb_state_init(&st);
	vips = json_object_get(j, "vips");
	if (!vips || json_is_null(vips)) {
		*ret_state = st;
		return 0;
	}
	if (!json_is_array(vips))
		return xlb_err_set(err, -EINVAL, "vips must be a list");
	cnt = json_array_size(vips);
	if (cnt > 65536)
		return xlb_err_set(err, -E2BIG, "too many VIPs");
	st.vips = calloc(cnt ? cnt : 1, sizeof(*st.vips));
	if (!st.vips)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	json_array_foreach((json_t *)vips, i, vj) {
		char prefix[32];

		ret = xlb_vip_from_json(vj, &st.vips[i], true, err);
		if (ret) {
			if (err) {
				char msg[sizeof(err->msg)];
				size_t pl;

				snprintf(prefix, sizeof(prefix), "vips[%zu]: ", i);
				pl = strlen(prefix);
				memcpy(msg, prefix, pl);
				memcpy(msg + pl, err->msg, sizeof(msg) - pl - 1);
				msg[sizeof(msg) - 1] = 0;
				memcpy(err->msg, msg, sizeof(msg));
			}
			xlb_state_free(&st);
			return ret;
		}
		st.vip_cnt = i + 1;
		for (size_t k = 0; k < i; k++)
			if (st.vips[k].port == st.vips[i].port &&
			    st.vips[k].proto == st.vips[i].proto &&
			    xlb_addr_eq(&st.vips[k].addr, &st.vips[i].addr)) {
				xlb_state_free(&st);
				return xlb_err_set(err, -EEXIST, "vips[%zu]: duplicate VIP", i);
			}
	}
	*ret_state = st;
	return 0;
}

int xlb_config_check_apply(const json_t *cfg, bool allow_empty, struct xlb_err *err)
{
	const json_t *vips = json_is_object(cfg) ? json_object_get(cfg, "vips") : NULL;

	if (!vips || json_is_null(vips))
		return xlb_err_set(err, -EINVAL,
				   "no \"vips\" list: an empty, blank or comment-only file, {} or "
				   "\"vips:\" would remove every VIP and is refused (to remove them "
				   "all: \"vips: []\" with --allow-empty)");
	if (json_is_array(vips) && !json_array_size(vips) && !allow_empty)
		return xlb_err_set(err, -EINVAL,
				   "\"vips: []\" removes every VIP: refused without --allow-empty");
	return 0;
}

json_t *xlb_state_to_json(const struct xlb_state *st, bool with_ids)
{
	json_t *vips = json_array();

	for (size_t i = 0; i < st->vip_cnt; i++) {
		json_t *v = xlb_vip_to_json(&st->vips[i], true);

		if (!with_ids) {
			json_t *r;
			size_t k;

			json_object_del(v, "id");
			json_array_foreach(json_object_get(v, "reals"), k, r)
				json_object_del(r, "id");
		}
		json_array_append_new(vips, v);
	}
	return json_pack("{s:o}", "vips", vips);
}

/* ---- YAML -> JSON ------------------------------------------------------- */

/* A plain (unquoted) YAML scalar may be an integer, a boolean or null. */
static json_t *scalar_to_json(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;

	if (strlen(s) != len)
		return NULL; /* embedded NUL */
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		char *end;
		long long n;

		if (!strcmp(s, "true"))
			return json_true();
		if (!strcmp(s, "false"))
			return json_false();
		if (!strcmp(s, "null") || !strcmp(s, "~") || !len)
			return json_null();
		if ((s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9')) {
			errno = 0;
			n = strtoll(s, &end, 10);
			if (!*end && !errno)
				return json_integer(n);
		}
	}
	return json_stringn(s, len);
}

struct yaml_frame {
	json_t *node;
	char *key; /* mapping: the key waiting for its value */
};

json_t *xlb_config_parse(const char *text, size_t len, struct xlb_err *err)
{
	struct yaml_frame stack[CONFIG_MAX_DEPTH + 1];
	yaml_parser_t parser;
	yaml_event_t ev;
	json_t *root = NULL;
	int depth = 0;
	bool done = false;

	if (len > CONFIG_MAX_BYTES) {
		xlb_err_set(err, -E2BIG, "config larger than %d bytes", CONFIG_MAX_BYTES);
		return NULL;
	}
	if (!yaml_parser_initialize(&parser)) {
		xlb_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	memset(stack, 0, sizeof(stack));

	while (!done) {
		json_t *val = NULL;

		if (!yaml_parser_parse(&parser, &ev)) {
			xlb_err_set(err, -EINVAL, "YAML/JSON syntax error at line %zu: %.100s",
				    parser.problem_mark.line + 1,
				    parser.problem ? parser.problem : "?");
			goto fail;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (root) {
				xlb_err_set(err, -EINVAL, "config must hold one document");
				yaml_event_delete(&ev);
				goto fail;
			}
			break;
		case YAML_ALIAS_EVENT:
			xlb_err_set(err, -EINVAL, "YAML aliases are not accepted");
			yaml_event_delete(&ev);
			goto fail;
		case YAML_SCALAR_EVENT:
			if (ev.data.scalar.anchor) {
				xlb_err_set(err, -EINVAL, "YAML anchors are not accepted");
				yaml_event_delete(&ev);
				goto fail;
			}
			val = scalar_to_json(&ev);
			if (!val) {
				xlb_err_set(err, -EINVAL, "bad scalar");
				yaml_event_delete(&ev);
				goto fail;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth >= CONFIG_MAX_DEPTH) {
				xlb_err_set(err, -EINVAL, "config nested deeper than %d",
					    CONFIG_MAX_DEPTH);
				yaml_event_delete(&ev);
				goto fail;
			}
			if ((ev.type == YAML_SEQUENCE_START_EVENT && ev.data.sequence_start.anchor) ||
			    (ev.type == YAML_MAPPING_START_EVENT && ev.data.mapping_start.anchor)) {
				xlb_err_set(err, -EINVAL, "YAML anchors are not accepted");
				yaml_event_delete(&ev);
				goto fail;
			}
			stack[++depth].node =
				ev.type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
			stack[depth].key = NULL;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			val = stack[depth].node;
			stack[depth].node = NULL;
			depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (!val)
			continue;
		/* Attach val to its parent, or make it the root. */
		if (depth == 0) {
			root = val;
		} else if (json_is_array(stack[depth].node)) {
			json_array_append_new(stack[depth].node, val);
		} else if (!stack[depth].key) {
			if (!json_is_string(val)) {
				json_decref(val);
				xlb_err_set(err, -EINVAL, "mapping keys must be strings");
				goto fail;
			}
			stack[depth].key = strdup(json_string_value(val));
			json_decref(val);
			if (!stack[depth].key) {
				xlb_err_set(err, -ENOMEM, "out of memory");
				goto fail;
			}
		} else {
			if (json_object_get(stack[depth].node, stack[depth].key)) {
				xlb_err_set(err, -EINVAL, "duplicate key \"%.64s\"", stack[depth].key);
				json_decref(val);
				goto fail;
			}
			json_object_set_new(stack[depth].node, stack[depth].key, val);
			free(stack[depth].key);
			stack[depth].key = NULL;
		}
	}
	yaml_parser_delete(&parser);
	if (!root)
		root = json_object(); /* an empty file is an empty config */
	return root;

fail:
	for (; depth > 0; depth--) {
		json_decref(stack[depth].node);
		free(stack[depth].key);
	}
	json_decref(root);
	yaml_parser_delete(&parser);
	return NULL;
}

/* ---- requests and responses -------------------------------------------- */

int xlb_request_parse(const char *buf, size_t len, struct xlb_request *ret_req,
		      struct xlb_err *err)
{
	json_error_t jerr;
	json_t *root, *v, *op, *args;
	const char *s;

	memset(ret_req, 0, sizeof(*ret_req));
	if (len > XLB_API_MAX_REQUEST_HARD)
		return xlb_err_set(err, -E2BIG, "request larger than %d bytes", XLB_API_MAX_REQUEST_HARD);
	if (memchr(buf, '\0', len))
		return xlb_err_set(err, -EINVAL, "request contains a NUL byte");
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return xlb_err_set(err, -EINVAL, "bad JSON at column %d: %.120s", jerr.column,
				   jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return xlb_err_set(err, -EINVAL, "request must be a JSON object");
	}
	v = json_object_get(root, "v");
	if (!json_is_integer(v) || json_integer_value(v) != XLB_API_VERSION) {
		json_decref(root);
		return xlb_err_set(err, -EPROTO, "unsupported API version (want \"v\":%d)",
				   XLB_API_VERSION);
	}
	op = json_object_get(root, "op");
	if (!json_is_string(op)) {
		json_decref(root);
		return xlb_err_set(err, -EINVAL, "missing \"op\"");
	}
	s = json_string_value(op);
	if (!*s || strlen(s) > 32 || strspn(s, "abcdefghijklmnopqrstuvwxyz.-_") != strlen(s)) {
		json_decref(root);
		return xlb_err_set(err, -EINVAL, "bad op name");
	}
	args = json_object_get(root, "args");
	if (args && !json_is_object(args)) {
		json_decref(root);
		return xlb_err_set(err, -EINVAL, "\"args\" must be an object");
	}
	if (!args) {
		args = json_object();
		json_object_set_new(root, "args", args);
	}
	{
		static const char *const keys[] = { "v", "op", "args", "id", NULL };
		int ret = check_keys(root, "request", keys, err);

		if (ret) {
			json_decref(root);
			return ret;
		}
	}
	ret_req->root = root;
	ret_req->op = s;
	ret_req->args = args;
	return 0;
}

json_t *xlb_response_error(const struct xlb_err *err)
{
	int code = err->code < 0 ? -err->code : err->code;
	const char *name = strerrorname_np(code);

	return json_pack("{s:i, s:b, s:{s:i, s:s, s:s}}", "v", XLB_API_VERSION, "ok", 0, "error",
			 "errno", code, "code", name ? name : "EUNKNOWN", "message", err->msg);
}

json_t *xlb_response_ok(json_t *result)
{
	json_t *j = json_pack("{s:i, s:b}", "v", XLB_API_VERSION, "ok", 1);

	if (result)
		json_object_set_new(j, "result", result);
	return j;
}
