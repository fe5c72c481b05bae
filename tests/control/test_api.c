// SPDX-License-Identifier: MIT
/*
 * API parsing: requests (version, op, args, junk, oversize, NUL, duplicate
 * and unknown keys), VIP/real objects, apply files in JSON and YAML (anchors,
 * depth, duplicates refused), state round trip and id assignment.
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "xlb_control.h"

static int parse(const char *s)
{
	struct xlb_request req;
	struct xlb_err err = { 0 };
	int ret = xlb_request_parse(s, strlen(s), &req, &err);

	if (!ret) {
		CHECK(req.op && json_is_object(req.args), "parsed request lacks op/args");
		json_decref(req.root);
	} else {
		CHECK(err.code == ret && err.msg[0], "error without message for %s", s);
	}
	return ret;
}

static void test_requests(void)
{
	char *big;

	CHECK(parse("{\"v\":1,\"op\":\"vip.list\"}") == 0, "minimal");
	CHECK(parse("{\"v\":1,\"op\":\"vip.add\",\"args\":{\"address\":\"10.0.0.1\"},\"id\":7}") == 0,
	      "with args");
	CHECK(parse("{\"v\":2,\"op\":\"vip.list\"}") == -EPROTO, "v2");
	CHECK(parse("{\"op\":\"vip.list\"}") == -EPROTO, "no v");
	CHECK(parse("{\"v\":\"1\",\"op\":\"vip.list\"}") == -EPROTO, "string v");
	CHECK(parse("{\"v\":1}") == -EINVAL, "no op");
	CHECK(parse("{\"v\":1,\"op\":5}") == -EINVAL, "numeric op");
	CHECK(parse("{\"v\":1,\"op\":\"VIP;rm -rf\"}") == -EINVAL, "bad op chars");
	CHECK(parse("{\"v\":1,\"op\":\"vip.list\",\"args\":[]}") == -EINVAL, "array args");
	CHECK(parse("{\"v\":1,\"op\":\"vip.list\",\"extra\":1}") == -EINVAL, "unknown key");
	CHECK(parse("{\"v\":1,\"v\":1,\"op\":\"vip.list\"}") == -EINVAL, "duplicate key");
	CHECK(parse("[1,2,3]") == -EINVAL, "array");
	CHECK(parse("") == -EINVAL, "empty");
	CHECK(parse("\x01\x02\xff garbage") == -EINVAL, "junk");
	CHECK(parse("{\"v\":1,\"op\":\"vip.list\"") == -EINVAL, "truncated");
	{
		struct xlb_request req;
		struct xlb_err err;
		const char nul[] = "{\"v\":1,\"op\":\"vip.list\"}\0junk";

		CHECK(xlb_request_parse(nul, sizeof(nul) - 1, &req, &err) == -EINVAL, "NUL byte");
	}
	big = malloc(XLB_API_MAX_REQUEST_HARD + 2);
	memset(big, ' ', XLB_API_MAX_REQUEST_HARD + 1);
	big[XLB_API_MAX_REQUEST_HARD + 1] = 0;
	CHECK(parse(big) == -E2BIG, "oversized");
	free(big);
	/* Deep nesting is refused by jansson's depth limit, not a stack overflow. */
	{
		size_t n = 100000;
		char *deep = malloc(2 * n + 64);

		strcpy(deep, "{\"v\":1,\"op\":\"x\",\"args\":{\"a\":");
		size_t off = strlen(deep);
		for (size_t i = 0; i < n; i++)
			deep[off++] = '[';
		deep[off] = 0;
		CHECK(parse(deep) == -EINVAL, "deep nesting");
		free(deep);
	}
	/* Error responses carry errno, its name and the message. */
	{
		struct xlb_err err;
		json_t *r;

		xlb_err_set(&err, -ENOENT, "no VIP %s", "x");
		r = xlb_response_error(&err);
		CHECK(json_is_false(json_object_get(r, "ok")) &&
			      !strcmp(json_string_value(json_object_get(json_object_get(r, "error"), "code")), "ENOENT") &&
			      json_integer_value(json_object_get(json_object_get(r, "error"), "errno")) == ENOENT,
		      "error response shape");
		json_decref(r);
	}
}

static json_t *J(const char *s)
{
	json_t *j = json_loads(s, 0, NULL);

	if (!j)
		fprintf(stderr, "bad test JSON %s\n", s);
	return j;
}

static int vip(const char *s, struct xlb_vip_cfg *v)
{
	struct xlb_err err;
	json_t *j = J(s);
	int ret = xlb_vip_from_json(j, v, true, &err);

	json_decref(j);
	return ret;
}

static void test_objects(void)
{
	struct xlb_vip_cfg v;

	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":80}", &v) == 0 && v.proto == IPPROTO_TCP &&
		      v.encap == XLB_ENCAP_IP && v.hc.type == XLB_HC_NONE,
	      "defaults");
	free(v.reals);
	CHECK(vip("{\"address\":\"2001:db8::1\",\"port\":443,\"proto\":\"udp\",\"encap\":\"gue\","
		  "\"flags\":[\"quic\",\"no-sport\"],\"healthcheck\":{\"type\":\"http\",\"path\":\"/h\","
		  "\"interval_ms\":200,\"timeout_ms\":100,\"rise\":1,\"fall\":3},"
		  "\"reals\":[{\"address\":\"10.1.0.1\",\"weight\":5},{\"address\":\"10.1.0.2\",\"state\":\"draining\"}]}",
		  &v) == 0,
	      "full");
	CHECK(v.flags == (XLB_VIP_F_QUIC | XLB_VIP_F_NO_SPORT) && v.real_cnt == 2 &&
		      v.reals[0].weight == 5 && v.reals[1].state == XLB_REAL_DRAINING &&
		      v.hc.fall == 3 && !strcmp(v.hc.path, "/h"),
	      "full fields");
	free(v.reals);
	CHECK(vip("{\"address\":\"10.0.0.300\",\"port\":80}", &v) == -EINVAL, "bad address");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":65536}", &v) == -ERANGE, "port range");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":-1}", &v) == -ERANGE, "negative port");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":\"80\"}", &v) == -EINVAL, "string port");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":80,\"proto\":\"sctp\"}", &v) == -EINVAL, "sctp");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":80,\"flags\":[\"turbo\"]}", &v) == -EINVAL, "flag");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":80,\"colour\":\"red\"}", &v) == -EINVAL, "unknown key");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":80,\"reals\":[{\"address\":\"1.1.1.1\"},{\"address\":\"1.1.1.1\"}]}", &v) == -EEXIST,
	      "duplicate real");
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":80,\"reals\":[{\"address\":\"1.1.1.1\",\"weight\":2000000}]}", &v) == -ERANGE,
	      "weight range");
	CHECK(vip("[]", &v) == -EINVAL, "array VIP");
	/* Encoding round trip. */
	CHECK(vip("{\"address\":\"10.0.0.1\",\"port\":80,\"flags\":[\"local\"],\"reals\":[{\"address\":\"1.1.1.1\",\"weight\":3}]}",
		  &v) == 0,
	      "rt parse");
	{
		json_t *j = xlb_vip_to_json(&v, true);
		struct xlb_vip_cfg w;
		struct xlb_err err;

		CHECK(j && !xlb_vip_from_json(j, &w, true, &err), "rt decode");
		CHECK(w.flags == XLB_VIP_F_LOCAL && w.real_cnt == 1 && w.reals[0].weight == 3,
		      "rt fields");
		free(w.reals);
		json_decref(j);
	}
	free(v.reals);
}

static const char yaml_cfg[] =
	"# comment\n"
	"vips:\n"
	"  - address: 10.0.0.10\n"
	"    port: 80\n"
	"    proto: tcp\n"
	"    healthcheck: {type: tcp, interval_ms: 500, timeout_ms: 200}\n"
	"    reals:\n"
	"      - {address: 10.0.1.1, weight: 1}\n"
	"      - address: 10.0.1.2\n"
	"        weight: 2\n"
	"  - address: \"2001:db8::10\"\n"
	"    port: 53\n"
	"    proto: udp\n"
	"    flags: [no-sport]\n";

static int cfg(const char *text, struct xlb_state *st)
{
	struct xlb_err err;
	json_t *j = xlb_config_parse(text, strlen(text), &err);
	int ret;

	if (!j)
		return err.code;
	ret = xlb_state_from_json(j, st, &err);
	json_decref(j);
	return ret;
}

static void test_config(void)
{
	struct xlb_settings set;
	struct xlb_state st, cur, st2;
	struct xlb_err err;

	xlb_settings_default(&set);
	CHECK(cfg(yaml_cfg, &st) == 0, "yaml");
	CHECK(st.vip_cnt == 2 && st.vips[0].real_cnt == 2 && st.vips[0].reals[1].weight == 2 &&
		      st.vips[0].hc.type == XLB_HC_TCP && st.vips[1].proto == IPPROTO_UDP &&
		      st.vips[1].flags == XLB_VIP_F_NO_SPORT,
	      "yaml fields");
	/* JSON is accepted through the same parser and gives the same state. */
	{
		json_t *j = xlb_state_to_json(&st, false);
		char *text = json_dumps(j, JSON_COMPACT);

		CHECK(cfg(text, &st2) == 0, "json: %s", text);
		CHECK(st2.vip_cnt == 2 && st2.vips[0].reals[1].weight == 2, "json fields");
		free(text);
		json_decref(j);
		xlb_state_free(&st2);
	}
	/* Ids: fresh state gets ids; a second apply keeps the ids of what stays. */
	xlb_state_init(&cur);
	CHECK(!xlb_state_assign_ids(&st, &cur, &set, &err), "assign: %s", err.msg);
	CHECK(!xlb_state_copy(&cur, &st), "copy");
	CHECK(cfg(yaml_cfg, &st2) == 0, "yaml again");
	/* swap reals order and drop one VIP */
	{
		struct xlb_real_cfg t = st2.vips[0].reals[0];

		st2.vips[0].reals[0] = st2.vips[0].reals[1];
		st2.vips[0].reals[1] = t;
		st2.vip_cnt = 1;
		free(st2.vips[1].reals);
	}
	CHECK(!xlb_state_assign_ids(&st2, &cur, &set, &err), "assign 2: %s", err.msg);
	CHECK(st2.vips[0].id == cur.vips[0].id && st2.vips[0].reals[0].id == cur.vips[0].reals[1].id &&
		      st2.vips[0].reals[1].id == cur.vips[0].reals[0].id,
	      "ids not kept");
	xlb_state_free(&st);
	xlb_state_free(&st2);
	xlb_state_free(&cur);

	CHECK(cfg("", &st) == 0 && st.vip_cnt == 0, "empty file");
	xlb_state_free(&st);
	CHECK(cfg("vips: []\n", &st) == 0 && st.vip_cnt == 0, "empty list");
	xlb_state_free(&st);
	CHECK(cfg("vips:\n  - &a {address: 10.0.0.1, port: 1}\n  - *a\n", &st) == -EINVAL, "anchor");
	CHECK(cfg("vips: [{address: 10.0.0.1, port: 1}, {address: 10.0.0.1, port: 1}]", &st) == -EEXIST,
	      "dup VIP");
	CHECK(cfg("vips: 1\nvips: 2\n", &st) == -EINVAL, "dup key");
	CHECK(cfg("settings: {}\n", &st) == -EINVAL, "unknown top key");
	CHECK(cfg("vips: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", &st) == -EINVAL,
	      "deep");
	CHECK(cfg("vips: [\n", &st) == -EINVAL, "syntax");
	CHECK(cfg("--- {}\n--- {}\n", &st) == -EINVAL, "two docs");
	CHECK(cfg("- 1\n- 2\n", &st) == -EINVAL, "list root");
	CHECK(cfg("vips: [{address: 10.0.0.1, port: '80'}]", &st) == -EINVAL, "quoted port is a string");
}

/* Issue 13 defect 3: a file that says nothing never means "delete everything". */
static void test_empty_apply(void)
{
	static const char *const refused[] = { "", "\n\n  \n", "# just a comment\n", "{}", "vips:\n",
					       "vips: null\n", "---\n" };
	struct xlb_err err;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		json_t *j = xlb_config_parse(refused[i], strlen(refused[i]), &err);

		CHECK(j && xlb_config_check_apply(j, true, &err) == -EINVAL &&
			      strstr(err.msg, "vips: []"),
		      "'%s' not refused (%s)", refused[i], err.msg);
		json_decref(j);
	}
	{
		json_t *j = xlb_config_parse("vips: []\n", 9, &err);

		CHECK(xlb_config_check_apply(j, false, &err) == -EINVAL && strstr(err.msg, "--allow-empty"),
		      "vips: [] without allow_empty");
		CHECK(!xlb_config_check_apply(j, true, &err), "vips: [] with allow_empty");
		json_decref(j);
		j = xlb_config_parse(yaml_cfg, strlen(yaml_cfg), &err);
		CHECK(!xlb_config_check_apply(j, false, &err), "a real config");
		json_decref(j);
	}
}

/* Issue 13 defect 4: addresses that cannot be VIPs or reals are refused by name. */
static void test_addresses(void)
{
	static const struct {
		const char *addr, *why;
	} bad[] = {
		{ "0.0.0.0", "unspecified" },	 { "0.1.2.3", "unspecified" },
		{ "255.255.255.255", "broadcast" }, { "224.0.0.1", "multicast" },
		{ "239.255.1.1", "multicast" },	 { "240.0.0.1", "reserved" },
		{ "127.0.0.1", "loopback" },	 { "169.254.1.1", "link-local" },
		{ "::", "unspecified" },	 { "::1", "loopback" },
		{ "ff02::1", "multicast" },	 { "fe80::1", "link-local" },
		{ "::ffff:10.0.0.1", "IPv4-mapped" },
	};
	struct xlb_settings set;
	struct xlb_state st;
	struct xlb_err err;
	struct xlb_vip_cfg v = { .port = 80, .proto = IPPROTO_TCP };
	struct xlb_real_cfg r = { .weight = 1 };

	xlb_settings_default(&set);
	xlb_hc_default(&v.hc);
	xlb_state_init(&st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!xlb_addr_parse(bad[i].addr, &v.addr), "parse %s", bad[i].addr);
		CHECK(xlb_state_vip_add(&st, &set, &v, &err) == -EINVAL && strstr(err.msg, bad[i].why),
		      "VIP %s: %s", bad[i].addr, err.msg);
	}
	CHECK(!xlb_addr_parse("10.0.0.1", &v.addr) && !xlb_state_vip_add(&st, &set, &v, &err),
	      "good VIP: %s", err.msg);
	CHECK(!xlb_addr_parse("10.0.0.2", &v.addr) && !xlb_state_vip_add(&st, &set, &v, &err),
	      "second VIP: %s", err.msg);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!xlb_addr_parse(bad[i].addr, &r.addr), "parse %s", bad[i].addr);
		CHECK(xlb_state_real_add(&st, &set, &st.vips[0], &r, &err) == -EINVAL &&
			      strstr(err.msg, bad[i].why),
		      "real %s: %s", bad[i].addr, err.msg);
	}
	/* The VIP itself, or another VIP's address, as a real. */
	for (int k = 0; k < 2; k++) {
		r.addr = st.vips[k].addr;
		CHECK(xlb_state_real_add(&st, &set, &st.vips[0], &r, &err) == -EINVAL &&
			      strstr(err.msg, "VIP address"),
		      "VIP %d as a real: %s", k, err.msg);
	}
	CHECK(st.vips[0].real_cnt == 0, "refused reals left a trace");
	CHECK(!xlb_addr_parse("10.1.0.1", &r.addr) && !xlb_state_real_add(&st, &set, &st.vips[0], &r, &err),
	      "good real: %s", err.msg);
	/* A whole state (apply) with a real on a VIP address is refused too. */
	st.vips[0].reals[0].addr = st.vips[1].addr;
	CHECK(xlb_state_validate(&st, &set, &err) == -EINVAL && strstr(err.msg, "VIP address"),
	      "validate: %s", err.msg);
	xlb_state_free(&st);
}

/* A state of n VIPs x m reals, addresses from base; ids not set. */
static void make_state(struct xlb_state *st, size_t n, size_t m, unsigned int base)
{
	xlb_state_init(st);
	st->vips = calloc(n, sizeof(*st->vips));
	for (size_t i = 0; i < n; i++) {
		struct xlb_vip_cfg *v = &st->vips[i];
		unsigned int a = base + (unsigned int)i;

		v->addr.family = AF_INET;
		v->addr.bytes[0] = 10, v->addr.bytes[1] = (uint8_t)(a >> 16);
		v->addr.bytes[2] = (uint8_t)(a >> 8), v->addr.bytes[3] = (uint8_t)a;
		v->port = 80;
		v->proto = IPPROTO_TCP;
		xlb_hc_default(&v->hc);
		v->reals = calloc(m ? m : 1, sizeof(*v->reals));
		for (size_t j = 0; j < m; j++) {
			unsigned int b = (unsigned int)(i * m + j) + base;

			v->reals[j].addr.family = AF_INET;
			v->reals[j].addr.bytes[0] = 172, v->reals[j].addr.bytes[1] = (uint8_t)(b >> 16);
			v->reals[j].addr.bytes[2] = (uint8_t)(b >> 8), v->reals[j].addr.bytes[3] = (uint8_t)b;
			v->reals[j].weight = 1;
		}
		v->real_cnt = m;
	}
	st->vip_cnt = n;
}

/* Issue 13 defect 6: apply needs the capacity of the result only. */
static void test_capacity(void)
{
	struct xlb_settings set;
	struct xlb_state cur, next, empty;
	struct xlb_err err = { 0 };

	xlb_settings_default(&set);
	set.max_vips = 64;
	set.max_reals = 129; /* ids 1..128 */
	xlb_state_init(&empty);
	make_state(&cur, 2, 64, 1000);
	CHECK(!xlb_state_assign_ids(&cur, &empty, &set, &err), "cur: %s", err.msg);
	/* 64 other VIPs with 128 other reals replace them: only the result must fit. */
	make_state(&next, 64, 2, 5000);
	CHECK(!xlb_state_assign_ids(&next, &cur, &set, &err), "64 VIPs over 2 others: %s", err.msg);
	xlb_state_free(&next);
	xlb_state_free(&cur);
	/* With room, fresh ids come first: the old ones are not reused soon. */
	make_state(&cur, 2, 2, 1000);
	CHECK(!xlb_state_assign_ids(&cur, &empty, &set, &err), "cur 2: %s", err.msg);
	make_state(&next, 1, 2, 9000);
	CHECK(!xlb_state_assign_ids(&next, &cur, &set, &err), "small: %s", err.msg);
	for (size_t j = 0; j < next.vips[0].real_cnt; j++)
		for (size_t i = 0; i < cur.vip_cnt; i++)
			for (size_t k = 0; k < cur.vips[i].real_cnt; k++)
				CHECK(next.vips[0].reals[j].id != cur.vips[i].reals[k].id,
				      "an id of the old state reused while others were free");
	CHECK(next.vips[0].id >= 2, "VIP id of the old state reused while others were free");
	xlb_state_free(&next);
	/* One too many is ENOSPC. */
	make_state(&next, 65, 1, 5000);
	CHECK(xlb_state_assign_ids(&next, &cur, &set, &err) == -ENOSPC, "65 VIPs fit in 64");
	xlb_state_free(&next);
	xlb_state_free(&cur);
	/* The scale the limits are tested at: 4096 VIPs x 16 reals. */
	set.max_vips = 4096;
	set.max_reals = 65537;
	make_state(&cur, 4096, 16, 1);
	CHECK(!xlb_state_assign_ids(&cur, &empty, &set, &err), "4096 x 16: %s", err.msg);
	make_state(&next, 4096, 16, 100000);
	CHECK(!xlb_state_assign_ids(&next, &cur, &set, &err), "4096 x 16 replaced: %s", err.msg);
	xlb_state_free(&next);
	xlb_state_free(&cur);
}

int main(void)
{
	test_requests();
	test_objects();
	test_config();
	test_empty_apply();
	test_addresses();
	test_capacity();
	TEST_DONE("api");
}
