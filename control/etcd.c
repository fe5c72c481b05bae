// SPDX-License-Identifier: MIT
/*
 * A small etcd v3 client: the JSON gateway (`/v3/kv/range`, `put`, `txn`,
 * `deleterange`, the lease calls, `/v3/watch`) over libcurl.
 *
 * Why the JSON gateway and libcurl: etcd-server 3.4 in Debian serves it on
 * the client port next to gRPC, libcurl is the maintained HTTP client every
 * distribution ships, and the gRPC C core would pull a C++ runtime and
 * protobuf code generation into a C daemon for six calls.  Keys and values
 * travel base64-encoded and 64-bit numbers as JSON strings (proto3's JSON
 * mapping); both are handled here so callers see bytes and integers.
 *
 * Endpoints: a comma-separated list of members ("http://10.0.0.1:2379,...").
 * A call goes to the member that answered last; when it cannot be reached
 * (connect error, timeout, 5xx: a member cut from its quorum answers
 * "Unavailable"), the call moves to the next member, each member at most
 * once per call.  Reads are linearizable (etcd's default), so a member
 * partitioned from the quorum never serves a stale state.
 *
 * A handle is used by one thread at a time (one curl easy handle inside);
 * the daemon gives each thread its own.
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "xlb_control.h"

#define ETCD_MAX_ENDPOINTS 16
#define ETCD_MAX_RESPONSE (8u << 20)

struct xlb_etcd {
	CURL *curl;
	char *endpoints[ETCD_MAX_ENDPOINTS];
	size_t endpoint_cnt;
	size_t cur; /* the member that answered last */
	uint32_t timeout_ms;
};

/* ---- base64 (RFC 4648, with padding) ------------------------------------- */

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const void *data, size_t len)
{
	const uint8_t *p = data;
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = b64_chars[(v >> 18) & 63];
		*o++ = b64_chars[(v >> 12) & 63];
		*o++ = i + 1 < len ? b64_chars[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? b64_chars[v & 63] : '=';
	}
	*o = 0;
	return out;
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64_chars, c) : NULL;

	return p ? (int)(p - b64_chars) : -1;
}

/* Decoded bytes, NUL-terminated for convenience; NULL on bad input. */
static char *b64_decode(const char *s, size_t *ret_len)
{
	size_t n = strlen(s), o = 0;
	char *out;

	if (n % 4)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 4) {
		int a = b64_val(s[i]), b = b64_val(s[i + 1]);
		int c = s[i + 2] == '=' ? 0 : b64_val(s[i + 2]);
		int d = s[i + 3] == '=' ? 0 : b64_val(s[i + 3]);
		uint32_t v;

		if (a < 0 || b < 0 || c < 0 || d < 0 || (s[i + 2] == '=' && s[i + 3] != '=') ||
		    (i + 4 < n && (s[i + 2] == '=' || s[i + 3] == '='))) {
			free(out);
			return NULL;
		}
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		out[o++] = (char)(v >> 16);
		if (s[i + 2] != '=')
			out[o++] = (char)(v >> 8);
		if (s[i + 3] != '=')
			out[o++] = (char)v;
	}
	out[o] = 0;
	*ret_len = o;
	return out;
}

/* proto3 JSON: int64 as a string (or a number from some encoders); absent is 0. */
static uint64_t j_u64(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	return 0;
}

static json_t *j_b64(const void *data, size_t len)
{
	char *s = b64_encode(data, len);
	json_t *j = s ? json_string(s) : NULL;

	free(s);
	return j;
}

static json_t *j_u64str(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return json_string(buf);
}

/* The end of the range of every key starting with prefix (etcd's prefix convention). */
static char *prefix_end(const char *prefix, size_t *ret_len)
{
	size_t n = strlen(prefix);
	char *end = malloc(n + 1);

	if (!end)
		return NULL;
	memcpy(end, prefix, n + 1);
	while (n && (uint8_t)end[n - 1] == 0xff)
		n--;
	if (!n) { /* all 0xff: to the end of the keyspace */
		end[0] = 0;
		*ret_len = 1;
		return end;
	}
	end[n - 1]++;
	*ret_len = n;
	return end;
}

/* ---- the handle ------------------------------------------------------------ */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct xlb_etcd *xlb_etcd__new(const char *endpoints, uint32_t timeout_ms, struct xlb_err *err)
{
	struct xlb_etcd *e;
	char *copy, *save = NULL;

	pthread_once(&curl_once, curl_init_once);
	e = calloc(1, sizeof(*e));
	copy = strdup(endpoints ? endpoints : "");
	if (!e || !copy)
		goto fail_nomem;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(t);

		while (n && t[n - 1] == '/')
			t[--n] = 0;
		if (!n)
			continue;
		if (strncmp(t, "http://", 7) && strncmp(t, "https://", 8)) {
			xlb_err_set(err, -EINVAL, "etcd endpoint \"%.64s\" is not an http(s):// URL", t);
			goto fail;
		}
		if (e->endpoint_cnt == ETCD_MAX_ENDPOINTS) {
			xlb_err_set(err, -E2BIG, "at most %d etcd endpoints", ETCD_MAX_ENDPOINTS);
			goto fail;
		}
		e->endpoints[e->endpoint_cnt] = strdup(t);
		if (!e->endpoints[e->endpoint_cnt++])
			goto fail_nomem;
	}
	if (!e->endpoint_cnt) {
		xlb_err_set(err, -EINVAL, "no etcd endpoint given");
		goto fail;
	}
	e->curl = curl_easy_init();
	if (!e->curl)
		goto fail_nomem;
	e->timeout_ms = timeout_ms ? timeout_ms : 2000;
	free(copy);
	return e;
fail_nomem:
	xlb_err_set(err, -ENOMEM, "out of memory");
fail:
	free(copy);
	xlb_etcd__free(e);
	errno = err ? -err->code : EINVAL;
	return NULL;
}

struct xlb_etcd *xlb_etcd__free(struct xlb_etcd *e)
{
	if (!e)
		return NULL;
	if (e->curl)
		curl_easy_cleanup(e->curl);
	for (size_t i = 0; i < e->endpoint_cnt; i++)
		free(e->endpoints[i]);
	free(e);
	return NULL;
}

const char *xlb_etcd__endpoint(const struct xlb_etcd *e)
{
	return e->endpoints[e->cur];
}

/* ---- one request -------------------------------------------------------------- */

struct buf {
	char *data;
	size_t len;
	bool too_big;
};

static size_t buf_write(char *p, size_t size, size_t n, void *ctx)
{
	struct buf *b = ctx;
	size_t add = size * n;
	char *nd;

	if (b->len + add > ETCD_MAX_RESPONSE) {
		b->too_big = true;
		return 0;
	}
	nd = realloc(b->data, b->len + add + 1);
	if (!nd)
		return 0;
	memcpy(nd + b->len, p, add);
	b->data = nd;
	b->len += add;
	b->data[b->len] = 0;
	return add;
}

/*
 * Dead peers are noticed in ~3 s on long-lived connections (the watch):
 * keepalive probes every second after one idle second, two missed probes.
 */
static int sockopt_keepalive(void *ctx, curl_socket_t fd, curlsocktype purpose)
{
	int one = 1, idle = 1, intvl = 1, cnt = 2;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	return CURL_SOCKOPT_OK;
}

static void setup(struct xlb_etcd *e, const char *url, const char *body, struct curl_slist *hdr)
{
	CURL *c = e->curl;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(e->timeout_ms < 500 ? e->timeout_ms : 500));
	curl_easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, sockopt_keepalive);
	/* Proxies from the environment have no business between an LB and its store. */
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
}

/* An error body of the gateway: {"error": ..., "code": N, "message": ...}. */
static void gateway_error(struct buf *b, long http, char *msg, size_t len)
{
	json_t *j = b->data ? json_loadb(b->data, b->len, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(j, "message"));

	if (!m)
		m = json_string_value(json_object_get(j, "error"));
	snprintf(msg, len, "HTTP %ld: %.160s", http, m ? m : "(no message)");
	json_decref(j);
}

/*
 * POST body to path on the current member, moving to the next on failure.
 * Returns 0 with the parsed answer, -EHOSTUNREACH when no member answered,
 * -EIO for an answer that is not a success.
 */
static int call(struct xlb_etcd *e, const char *path, json_t *req, json_t **ret,
		struct xlb_err *err)
{
	char *body = json_dumps(req, JSON_COMPACT), url[512], last[200] = "";
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	int ret_code = -EHOSTUNREACH;

	json_decref(req);
	if (!body || !hdr) {
		free(body);
		curl_slist_free_all(hdr);
		return xlb_err_set(err, -ENOMEM, "out of memory");
	}
	for (size_t tries = 0; tries < e->endpoint_cnt; tries++) {
		size_t idx = (e->cur + tries) % e->endpoint_cnt;
		struct buf b = { 0 };
		long http = 0;
		CURLcode cr;

		snprintf(url, sizeof(url), "%s%s", e->endpoints[idx], path);
		setup(e, url, body, hdr);
		curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
		curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, buf_write);
		curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &b);
		cr = curl_easy_perform(e->curl);
		curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &http);
		if (cr == CURLE_OK && http == 200) {
			json_error_t je;

			*ret = json_loadb(b.data ? b.data : "", b.len, 0, &je);
			free(b.data);
			e->cur = idx;
			ret_code = *ret ? 0 :
					  xlb_err_set(err, -EIO, "etcd %s: unparsable answer: %s",
						      e->endpoints[idx], je.text);
			goto out;
		}
		if (cr == CURLE_OK && http < 500) {
			/* The member answered and refused: another member would too. */
			gateway_error(&b, http, last, sizeof(last));
			free(b.data);
			ret_code = xlb_err_set(err, -EIO, "etcd %s%s: %s", e->endpoints[idx], path, last);
			goto out;
		}
		if (cr == CURLE_OK)
			gateway_error(&b, http, last, sizeof(last));
		else
			snprintf(last, sizeof(last), "%s", b.too_big ? "answer too large" :
							     curl_easy_strerror(cr));
		free(b.data);
	}
	ret_code = xlb_err_set(err, -EHOSTUNREACH, "etcd unreachable (%zu member%s tried; last: %s)",
			       e->endpoint_cnt, e->endpoint_cnt > 1 ? "s" : "", last);
out:
	free(body);
	curl_slist_free_all(hdr);
	return ret_code;
}

/* ---- key-value ----------------------------------------------------------------- */

void xlb_etcd_kvs_free(struct xlb_etcd_kv *kvs, size_t cnt)
{
	for (size_t i = 0; kvs && i < cnt; i++) {
		free(kvs[i].key);
		free(kvs[i].value);
	}
	free(kvs);
}

/* One {"key","value","mod_revision",...} object into kv (strings decoded). */
static int kv_from_json(const json_t *j, struct xlb_etcd_kv *kv, struct xlb_err *err)
{
	const char *k = json_string_value(json_object_get(j, "key"));
	const char *v = json_string_value(json_object_get(j, "value"));
	size_t klen;

	memset(kv, 0, sizeof(*kv));
	kv->key = k ? b64_decode(k, &klen) : NULL;
	kv->value = b64_decode(v ? v : "", &kv->value_len);
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		kv->key = kv->value = NULL;
		return xlb_err_set(err, -EIO, "etcd: bad base64 in an answer");
	}
	kv->create_revision = j_u64(j, "create_revision");
	kv->mod_revision = j_u64(j, "mod_revision");
	kv->version = j_u64(j, "version");
	kv->lease = j_u64(j, "lease");
	return 0;
}

int xlb_etcd__get(struct xlb_etcd *e, const char *key, bool prefix, struct xlb_etcd_kv **ret_kvs,
		  size_t *ret_cnt, uint64_t *ret_rev, struct xlb_err *err)
{
	json_t *req = json_pack("{s:o}", "key", j_b64(key, strlen(key))), *resp = NULL, *kvs;
	struct xlb_etcd_kv *out = NULL;
	size_t n = 0;
	int r;

	if (prefix) {
		size_t elen;
		char *end = prefix_end(key, &elen);

		if (!end) {
			json_decref(req);
			return xlb_err_set(err, -ENOMEM, "out of memory");
		}
		json_object_set_new(req, "range_end", j_b64(end, elen));
		free(end);
	}
	r = call(e, "/v3/kv/range", req, &resp, err);
	if (r)
		return r;
	kvs = json_object_get(resp, "kvs");
	if (json_array_size(kvs)) {
		out = calloc(json_array_size(kvs), sizeof(*out));
		if (!out) {
			json_decref(resp);
			return xlb_err_set(err, -ENOMEM, "out of memory");
		}
		for (; n < json_array_size(kvs); n++) {
			r = kv_from_json(json_array_get(kvs, n), &out[n], err);
			if (r) {
				xlb_etcd_kvs_free(out, n);
				json_decref(resp);
				return r;
			}
		}
	}
	if (ret_rev)
		*ret_rev = j_u64(json_object_get(resp, "header"), "revision");
	json_decref(resp);
	*ret_kvs = out;
	*ret_cnt = n;
	return 0;
}

int xlb_etcd__put(struct xlb_etcd *e, const char *key, const void *value, size_t len,
		  uint64_t lease, uint64_t *ret_rev, struct xlb_err *err)
{
	json_t *req = json_pack("{s:o, s:o}", "key", j_b64(key, strlen(key)), "value",
				j_b64(value, len)),
	       *resp = NULL;
	int r;

	if (lease)
		json_object_set_new(req, "lease", j_u64str(lease));
	r = call(e, "/v3/kv/put", req, &resp, err);
	if (r)
		return r;
	if (ret_rev)
		*ret_rev = j_u64(json_object_get(resp, "header"), "revision");
	json_decref(resp);
	return 0;
}

int xlb_etcd__put_if(struct xlb_etcd *e, const char *key, const void *value, size_t len,
		     uint64_t expect_mod_rev, uint64_t *ret_rev, uint64_t *ret_cur_mod_rev,
		     struct xlb_err *err)
{
	json_t *k = j_b64(key, strlen(key)), *req, *resp = NULL, *rr;
	int r;

	/* A key that does not exist compares with mod_revision 0. */
	req = json_pack("{s:[{s:O, s:s, s:s, s:o}], s:[{s:{s:O, s:o}}], s:[{s:{s:O}}]}",
			"compare", "key", k, "result", "EQUAL", "target", "MOD", "mod_revision",
			j_u64str(expect_mod_rev), "success", "request_put", "key", k, "value",
			j_b64(value, len), "failure", "request_range", "key", k);
	json_decref(k);
	if (!req)
		return xlb_err_set(err, -ENOMEM, "out of memory");
	r = call(e, "/v3/kv/txn", req, &resp, err);
	if (r)
		return r;
	if (json_is_true(json_object_get(resp, "succeeded"))) {
		if (ret_rev)
			*ret_rev = j_u64(json_object_get(resp, "header"), "revision");
		json_decref(resp);
		return 0;
	}
	/* The failure branch read the key: its current mod revision says who won. */
	rr = json_object_get(json_array_get(json_object_get(resp, "responses"), 0), "response_range");
	if (ret_cur_mod_rev)
		*ret_cur_mod_rev = j_u64(json_array_get(json_object_get(rr, "kvs"), 0), "mod_revision");
	json_decref(resp);
	return xlb_err_set(err, -ESTALE, "compare failed: %s changed since revision %llu", key,
			   (unsigned long long)expect_mod_rev);
}

int xlb_etcd__del(struct xlb_etcd *e, const char *key, struct xlb_err *err)
{
	json_t *resp = NULL;
	int r = call(e, "/v3/kv/deleterange", json_pack("{s:o}", "key", j_b64(key, strlen(key))),
		     &resp, err);

	json_decref(resp);
	return r;
}

/* ---- leases -------------------------------------------------------------------- */

int xlb_etcd__lease_grant(struct xlb_etcd *e, uint32_t ttl_s, uint64_t *ret_id, struct xlb_err *err)
{
	json_t *resp = NULL;
	int r = call(e, "/v3/lease/grant", json_pack("{s:o}", "TTL", j_u64str(ttl_s)), &resp, err);

	if (r)
		return r;
	*ret_id = j_u64(resp, "ID");
	json_decref(resp);
	return *ret_id ? 0 : xlb_err_set(err, -EIO, "etcd: lease grant without an ID");
}

int xlb_etcd__lease_keepalive(struct xlb_etcd *e, uint64_t id, struct xlb_err *err)
{
	json_t *resp = NULL, *res;
	int r = call(e, "/v3/lease/keepalive", json_pack("{s:o}", "ID", j_u64str(id)), &resp, err);

	if (r)
		return r;
	/* A streamed answer: {"result": {"ID":..., "TTL":...}}; TTL absent when the lease is gone. */
	res = json_object_get(resp, "result");
	r = j_u64(res ? res : resp, "TTL") ? 0 : xlb_err_set(err, -ENOENT, "etcd: lease expired");
	json_decref(resp);
	return r;
}

int xlb_etcd__lease_revoke(struct xlb_etcd *e, uint64_t id, struct xlb_err *err)
{
	json_t *resp = NULL;
	int r = call(e, "/v3/lease/revoke", json_pack("{s:o}", "ID", j_u64str(id)), &resp, err);

	json_decref(resp);
	return r;
}

/* ---- watch -------------------------------------------------------------------------- */

struct watch {
	struct buf b;
	xlb_etcd_watch_cb cb;
	void *ctx;
	volatile bool *stop;
	int cb_ret;
	bool created;
	uint64_t compacted; /* the server says start_revision was compacted */
	struct xlb_err *err;
};

/* One message of the stream: {"result": {"header", "created", "events": [...]}}. */
static int watch_message(struct watch *w, json_t *m)
{
	json_t *res = json_object_get(m, "result"), *ev;
	uint64_t hrev = j_u64(json_object_get(res, "header"), "revision");
	size_t i;

	if (!res)
		return xlb_err_set(w->err, -EIO, "etcd watch: %.160s",
				   json_string_value(json_object_get(json_object_get(m, "error"),
								     "message")) ?: "broken stream");
	if (json_is_true(json_object_get(res, "created")))
		w->created = true;
	if (j_u64(res, "compact_revision")) {
		w->compacted = j_u64(res, "compact_revision");
		return xlb_err_set(w->err, -ERANGE, "etcd watch: revision compacted (now %llu)",
				   (unsigned long long)w->compacted);
	}
	if (json_is_true(json_object_get(res, "canceled")))
		return xlb_err_set(w->err, -ECANCELED, "etcd watch canceled: %.160s",
				   json_string_value(json_object_get(res, "cancel_reason")) ?: "");
	json_array_foreach(json_object_get(res, "events"), i, ev) {
		const char *type = json_string_value(json_object_get(ev, "type"));
		struct xlb_etcd_kv kv;
		int r;

		r = kv_from_json(json_object_get(ev, "kv"), &kv, w->err);
		if (r)
			return r;
		r = w->cb(w->ctx, type && !strcmp(type, "DELETE"), &kv, hrev);
		free(kv.key);
		free(kv.value);
		if (r)
			return r;
	}
	return 0;
}

/* The stream's bytes: complete JSON documents are handed on as they arrive. */
static size_t watch_write(char *p, size_t size, size_t n, void *ctx)
{
	struct watch *w = ctx;
	size_t add = size * n, used = 0;

	if (buf_write(p, size, n, &w->b) != add)
		return 0;
	while (used < w->b.len) {
		json_error_t je;
		json_t *m;

		while (used < w->b.len && strchr(" \r\n\t", w->b.data[used]))
			used++;
		if (used == w->b.len)
			break;
		m = json_loadb(w->b.data + used, w->b.len - used, JSON_DISABLE_EOF_CHECK, &je);
		if (!m)
			break; /* incomplete: wait for more */
		used += (size_t)je.position;
		w->cb_ret = watch_message(w, m);
		json_decref(m);
		if (w->cb_ret)
			return 0;
	}
	memmove(w->b.data, w->b.data + used, w->b.len - used);
	w->b.len -= used;
	return add;
}

static int watch_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct watch *w = ctx;

	return w->stop && *w->stop;
}

int xlb_etcd__watch(struct xlb_etcd *e, const char *prefix, uint64_t start_rev,
		    xlb_etcd_watch_cb cb, void *ctx, volatile bool *stop, struct xlb_err *err)
{
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	struct watch w = { .cb = cb, .ctx = ctx, .stop = stop, .err = err };
	char url[512], *body, *end;
	size_t elen;
	json_t *req;
	CURLcode cr;
	long http = 0;
	int r;

	end = prefix_end(prefix, &elen);
	req = end ? json_pack("{s:{s:o, s:o, s:o}}", "create_request", "key",
			      j_b64(prefix, strlen(prefix)), "range_end", j_b64(end, elen),
			      "start_revision", j_u64str(start_rev)) :
		    NULL;
	free(end);
	body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!body || !hdr) {
		free(body);
		curl_slist_free_all(hdr);
		return xlb_err_set(err, -ENOMEM, "out of memory");
	}
	snprintf(url, sizeof(url), "%s/v3/watch", e->endpoints[e->cur]);
	setup(e, url, body, hdr);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, watch_write);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &w);
	curl_easy_setopt(e->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e->curl, CURLOPT_XFERINFOFUNCTION, watch_progress);
	curl_easy_setopt(e->curl, CURLOPT_XFERINFODATA, &w);
	cr = curl_easy_perform(e->curl);
	curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &http);
	free(w.b.data);
	free(body);
	curl_slist_free_all(hdr);
	if (w.cb_ret)
		r = w.cb_ret; /* the callback's or the stream's own error, message set */
	else if (stop && *stop)
		r = 0;
	else if (cr != CURLE_OK)
		r = xlb_err_set(err, -EHOSTUNREACH, "etcd watch on %s: %s", e->endpoints[e->cur],
				curl_easy_strerror(cr));
	else
		r = xlb_err_set(err, -EPIPE, "etcd watch on %s ended (HTTP %ld)", e->endpoints[e->cur],
				http);
	/* The next watch (or call) tries the next member: this one just failed us. */
	if (r && r != -ERANGE && !w.cb_ret)
		e->cur = (e->cur + 1) % e->endpoint_cnt;
	return r;
}
