// SPDX-License-Identifier: MIT
/*
 * The etcd store and client against a real etcd (one member on loopback,
 * ports picked free, data in a temp dir; skipped when etcd is missing):
 * commits and their revisions, two hosts on one key, a compare that fails
 * on a concurrent writer and writes nothing, the state document's checks
 * (each refused), a document another client wrote that the store refuses
 * at load (the last good state from the cache, the revision reported), the
 * store gone (changes refused, the cache serves), member failover, watch
 * events, leases.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_check.h"
#include "xlb_control.h"

static char dir[] = "/tmp/xlbt-fleet-store-XXXXXX";
static pid_t etcd_pid;
static char endpoint[64];

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &sl))
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void etcd_stop(void)
{
	if (etcd_pid > 0) {
		kill(etcd_pid, SIGKILL);
		waitpid(etcd_pid, NULL, 0);
		etcd_pid = 0;
	}
}

static void cleanup(void)
{
	char cmd[128];

	etcd_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cleanup failed\n");
}

static int cport, pport;

static bool etcd_start(void)
{
	char data[128], curls[64], purls[64], cluster[96], log[128];
	struct xlb_etcd *e;
	struct xlb_err err;

	snprintf(data, sizeof(data), "%s/etcd", dir);
	snprintf(curls, sizeof(curls), "http://127.0.0.1:%d", cport);
	snprintf(purls, sizeof(purls), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "t=%s", purls);
	snprintf(log, sizeof(log), "%s/etcd.log", dir);
	snprintf(endpoint, sizeof(endpoint), "%s", curls);
	etcd_pid = fork();
	if (etcd_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!freopen(log, "a", stderr) || !freopen(log, "a", stdout))
			_exit(126);
		execlp("etcd", "etcd", "--name", "t", "--data-dir", data, "--listen-client-urls",
		       curls, "--advertise-client-urls", curls, "--listen-peer-urls", purls,
		       "--initial-advertise-peer-urls", purls, "--initial-cluster", cluster,
		       (char *)NULL);
		_exit(127);
	}
	e = xlb_etcd__new(endpoint, 500, &err);
	for (int i = 0; i < 100 && e; i++) {
		struct xlb_etcd_kv *kvs;
		size_t n;

		if (!xlb_etcd__get(e, "/probe", false, &kvs, &n, NULL, &err)) {
			xlb_etcd_kvs_free(kvs, n);
			xlb_etcd__free(e);
			return true;
		}
		usleep(100 * 1000);
	}
	xlb_etcd__free(e);
	return false;
}

static void add_vip(struct xlb_state *st, const char *addr, int nreals)
{
	struct xlb_settings set;
	struct xlb_vip_cfg v = { .proto = IPPROTO_TCP, .port = 80 };
	struct xlb_err err;

	xlb_settings_default(&set);
	xlb_hc_default(&v.hc);
	CHECK(!xlb_addr_parse(addr, &v.addr), "addr");
	CHECK(!xlb_state_vip_add(st, &set, &v, &err), "vip add: %s", err.msg);
	for (int i = 0; i < nreals; i++) {
		struct xlb_real_cfg r = { .weight = 100 };
		char ra[64];

		snprintf(ra, sizeof(ra), "10.1.0.%d", i + 1);
		CHECK(!xlb_addr_parse(ra, &r.addr), "real addr");
		CHECK(!xlb_state_real_add(st, &set, &st->vips[st->vip_cnt - 1], &r, &err),
		      "real add: %s", err.msg);
	}
}

static int commit_state(struct xlb_store *s, const struct xlb_state *st, struct xlb_err *err)
{
	int r = xlb_store__begin(s, err);

	r = r ?: xlb_store__save(s, st, err);
	r = r ?: xlb_store__commit(s, err);
	if (r)
		xlb_store__rollback(s);
	return r;
}

static struct xlb_store *open_host(const char *name, const char *endpoints)
{
	char cache[160];
	struct xlb_etcd_store_opts o = { .sz = sizeof(o), .endpoints = endpoints,
					 .prefix = "/xlbt/site/", .cache_dir = cache,
					 .writer = name, .timeout_ms = 1000 };
	struct xlb_err err;
	struct xlb_store *s;

	snprintf(cache, sizeof(cache), "%s/%s", dir, name);
	s = xlb_store__open_etcd(&o, &err);
	CHECK(s, "open %s: %s", name, err.msg);
	return s;
}

static uint64_t rev_of(struct xlb_store *s)
{
	struct xlb_store_info i;

	xlb_store__info(s, &i);
	return i.revision;
}

/* The document's checks, each on its own. */
static void doc_checks(void)
{
	static const struct {
		const char *doc, *why;
	} bad[] = {
		{ "not json", "not JSON" },
		{ "[1]", "not an object" },
		{ "{\"xlb_state\":2,\"next_real_id\":1,\"vips\":[]}", "version" },
		{ "{\"xlb_state\":1,\"next_real_id\":1,\"vips\":[],\"extra\":1}", "unknown key" },
		{ "{\"xlb_state\":1,\"vips\":[]}", "no next_real_id" },
		{ "{\"xlb_state\":1,\"next_real_id\":1,\"vips\":{}}", "vips not a list" },
		{ "{\"xlb_state\":1,\"next_real_id\":5,\"vips\":[{\"address\":\"10.0.0.1\",\"port\":80,"
		  "\"proto\":\"tcp\",\"reals\":[]}]}", "VIP without id" },
		{ "{\"xlb_state\":1,\"next_real_id\":5,\"vips\":[{\"id\":0,\"address\":\"10.0.0.1\","
		  "\"port\":80,\"proto\":\"tcp\",\"reals\":[{\"address\":\"10.1.0.1\"}]}]}",
		  "real without id" },
		{ "{\"xlb_state\":1,\"next_real_id\":5,\"vips\":[{\"id\":0,\"address\":\"10.0.0.1\","
		  "\"port\":80,\"proto\":\"tcp\",\"reals\":[{\"id\":1,\"address\":\"10.1.0.1\"},"
		  "{\"id\":1,\"address\":\"10.1.0.2\"}]}]}",
		  "duplicate real id" },
		{ "{\"xlb_state\":1,\"next_real_id\":2,\"vips\":[{\"id\":0,\"address\":\"10.0.0.1\","
		  "\"port\":80,\"proto\":\"tcp\",\"reals\":[{\"id\":3,\"address\":\"10.1.0.1\"}]}]}",
		  "real id above next_real_id" },
		{ "{\"xlb_state\":1,\"next_real_id\":5,\"vips\":[{\"id\":0,\"address\":\"10.0.0.1\","
		  "\"port\":70000,\"proto\":\"tcp\",\"reals\":[]}]}", "port out of range" },
		{ "{\"xlb_state\":1,\"next_real_id\":5,\"next_real_id\":6,\"vips\":[]}", "duplicate key" },
		{ "{\"xlb_state\":1,\"next_real_id\":5,\"written_at_ms\":\"now\",\"vips\":[]}", "bad time" },
	};
	struct xlb_state st, back;
	struct xlb_err err;
	struct xlb_state_doc_meta meta;
	char *text;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		st.vip_cnt = 99;
		CHECK(xlb_state_doc_parse(bad[i].doc, strlen(bad[i].doc), NULL, &st, NULL, &err) < 0,
		      "document accepted: %s", bad[i].why);
	}
	xlb_state_init(&st);
	add_vip(&st, "10.0.0.1", 3);
	text = xlb_state_doc_dump(&st, "lb9");
	CHECK(text && !xlb_state_doc_parse(text, strlen(text), NULL, &back, &meta, &err),
	      "round trip: %s", err.msg);
	CHECK(back.vip_cnt == 1 && back.vips[0].real_cnt == 3 && back.vips[0].reals[2].id ==
		      st.vips[0].reals[2].id && back.next_real_id == st.next_real_id &&
		      !strcmp(meta.writer, "lb9") && meta.written_at_ms > 1600000000000ull,
	      "round trip differs");
	free(text);
	xlb_state_free(&st);
	xlb_state_free(&back);
}

struct watched {
	int puts, dels;
	uint64_t last_rev;
	volatile bool stop;
};

static int on_event(void *ctx, bool deleted, const struct xlb_etcd_kv *kv, uint64_t rev)
{
	struct watched *w = ctx;

	if (deleted)
		w->dels++;
	else
		w->puts++;
	w->last_rev = kv->mod_revision;
	if (w->dels)
		w->stop = true; /* seen enough */
	return 0;
}

static void *watch_main(void *arg)
{
	struct watched *w = arg;
	struct xlb_etcd *e = xlb_etcd__new(endpoint, 1000, NULL);
	struct xlb_err err;

	if (e)
		xlb_etcd__watch(e, "/xlbt/w/", 1, on_event, w, &w->stop, &err);
	xlb_etcd__free(e);
	return NULL;
}

int main(void)
{
	struct xlb_state a, b, c, got;
	struct xlb_store *h1, *h2, *h3;
	struct xlb_store_info info;
	struct xlb_err err;
	char eps[160];
	uint64_t r1, r2;

	if (system("command -v etcd >/dev/null 2>&1")) {
		printf("SKIP: etcd not installed\n");
		return 77;
	}
	CHECK(mkdtemp(dir), "mkdtemp");
	atexit(cleanup);
	cport = free_port();
	pport = free_port();
	if (!etcd_start()) {
		fprintf(stderr, "etcd did not come up (see %s/etcd.log)\n", dir);
		return 1;
	}
	doc_checks();
	/* The first member listed is dead: every call moves on to the live one. */
	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d,%s", free_port(), endpoint);

	/* A new site: empty, revision 0; a commit gives the key's revision. */
	h1 = open_host("h1", eps);
	h2 = open_host("h2", eps);
	if (!h1 || !h2)
		return 1;
	CHECK(!xlb_store__load(h1, &got, &err) && got.vip_cnt == 0 && rev_of(h1) == 0,
	      "new site not empty: %s", err.msg);
	xlb_state_free(&got);
	CHECK(!xlb_store__load(h2, &got, &err), "h2 load: %s", err.msg);
	xlb_state_free(&got);
	xlb_state_init(&a);
	add_vip(&a, "10.0.0.1", 3);
	CHECK(!commit_state(h1, &a, &err), "commit a: %s", err.msg);
	r1 = rev_of(h1);
	CHECK(r1 > 0, "no revision after commit");

	/* h2 still runs revision 0: its change loses against h1's and writes nothing. */
	xlb_state_init(&b);
	add_vip(&b, "10.0.0.2", 1);
	CHECK(commit_state(h2, &b, &err) == -ESTALE, "concurrent writer not refused");
	CHECK(strstr(err.msg, "retry"), "conflict message: %s", err.msg);
	h3 = open_host("h3", eps);
	CHECK(h3 && !xlb_store__load(h3, &got, &err) && got.vip_cnt == 1 &&
		      !strcmp(xlb_addr_str(&got.vips[0].addr, (char[64]){ 0 }, 64), "10.0.0.1") &&
		      rev_of(h3) == r1,
	      "the refused change left a trace");
	xlb_state_free(&got);
	xlb_store__close(h3);
	/* Once h2 runs h1's state (what its watch does), its change goes through. */
	CHECK(!xlb_store__adopt(h2, &a, r1, &err), "adopt: %s", err.msg);
	CHECK(!xlb_state_copy(&c, &a), "copy");
	add_vip(&c, "10.0.0.3", 2);
	CHECK(!commit_state(h2, &c, &err), "commit c on h2: %s", err.msg);
	r2 = rev_of(h2);
	CHECK(r2 > r1, "revision did not move: %llu", (unsigned long long)r2);
	CHECK(!xlb_store__load(h1, &got, &err) && got.vip_cnt == 2 && rev_of(h1) == r2 &&
		      got.vips[1].reals[1].id == c.vips[1].reals[1].id,
	      "h1 does not read h2's state with its ids");
	xlb_state_free(&got);

	/* Another client writes a document that breaks the schema: refused, the cache serves. */
	{
		struct xlb_etcd *raw = xlb_etcd__new(endpoint, 1000, &err);
		const char *junk = "{\"xlb_state\":1,\"next_real_id\":1,\"vips\":[{\"id\":0}]}";
		uint64_t bad_rev = 0;

		CHECK(raw && !xlb_etcd__put(raw, "/xlbt/site/state", junk, strlen(junk), 0, &bad_rev,
					    &err),
		      "raw put: %s", err.msg);
		xlb_etcd__free(raw);
		CHECK(!xlb_store__load(h1, &got, &err) && got.vip_cnt == 2, "h1 lost its last good state: %s",
		      err.msg);
		xlb_store__info(h1, &info);
		CHECK(info.revision == r2 && info.refused_revision == bad_rev && info.from_cache &&
			      info.refused_msg[0],
		      "refusal not reported (rev %llu refused %llu '%s')",
		      (unsigned long long)info.revision, (unsigned long long)info.refused_revision,
		      info.refused_msg);
		xlb_state_free(&got);
		/* A host that never ran a good state has nothing to fall back on. */
		h3 = open_host("h3-new", eps);
		CHECK(h3 && xlb_store__load(h3, &got, &err) == -EHOSTUNREACH, "fresh host accepted junk");
		xlb_store__close(h3);
		/* A change on top of the refused document replaces it (compare on the seen revision). */
		CHECK(!commit_state(h1, &a, &err), "repair commit: %s", err.msg);
		CHECK(rev_of(h1) > bad_rev, "repair revision");
	}

	/* The watch sees puts and deletes with their revisions. */
	{
		struct watched w = { 0 };
		struct xlb_etcd *e = xlb_etcd__new(eps, 1000, &err);
		uint64_t prev;
		pthread_t t;

		CHECK(!pthread_create(&t, NULL, watch_main, &w), "thread");
		usleep(300 * 1000);
		CHECK(e && !xlb_etcd__put(e, "/xlbt/w/k", "v", 1, 0, &prev, &err), "put: %s", err.msg);
		CHECK(!xlb_etcd__del(e, "/xlbt/w/k", &err), "del: %s", err.msg);
		for (int i = 0; i < 50 && !w.stop; i++)
			usleep(100 * 1000);
		w.stop = true;
		pthread_join(t, NULL);
		CHECK(w.puts == 1 && w.dels == 1 && w.last_rev > prev, "watch saw %d puts %d deletes",
		      w.puts, w.dels);

		/* Leases: a key with a lease goes when the lease does. */
		{
			uint64_t id = 0;
			struct xlb_etcd_kv *kvs;
			size_t n = 9;

			CHECK(!xlb_etcd__lease_grant(e, 5, &id, &err), "grant: %s", err.msg);
			CHECK(!xlb_etcd__put(e, "/xlbt/l", "x", 1, id, NULL, &err), "put with lease");
			CHECK(!xlb_etcd__lease_keepalive(e, id, &err), "keepalive: %s", err.msg);
			CHECK(!xlb_etcd__lease_revoke(e, id, &err), "revoke: %s", err.msg);
			CHECK(xlb_etcd__lease_keepalive(e, id, &err) == -ENOENT, "revoked lease kept alive");
			CHECK(!xlb_etcd__get(e, "/xlbt/l", false, &kvs, &n, NULL, &err) && n == 0,
			      "leased key survived its lease");
			xlb_etcd_kvs_free(kvs, n);
		}
		xlb_etcd__free(e);
	}

	/* The store gone: changes refused, nothing changes; the cache serves a restart. */
	r1 = rev_of(h1);
	etcd_stop();
	CHECK(commit_state(h1, &c, &err) == -EHOSTUNREACH, "commit without a store");
	CHECK(strstr(err.msg, "keeps revision"), "message: %s", err.msg);
	CHECK(rev_of(h1) == r1, "revision moved without a store");
	xlb_store__close(h1);
	h1 = open_host("h1", eps);
	CHECK(h1 && !xlb_store__load(h1, &got, &err) && got.vip_cnt == 1, "no cached start: %s",
	      err.msg);
	xlb_store__info(h1, &info);
	CHECK(info.from_cache && info.revision == r1, "cached start not reported");
	xlb_state_free(&got);
	/* And it comes back. */
	CHECK(etcd_start(), "etcd restart");
	CHECK(!xlb_store__load(h1, &got, &err) && got.vip_cnt == 1 && rev_of(h1) == r1,
	      "after the store returned: %s", err.msg);
	xlb_store__info(h1, &info);
	CHECK(!info.from_cache, "still from cache");
	xlb_state_free(&got);

	xlb_state_free(&a);
	xlb_state_free(&b);
	xlb_state_free(&c);
	xlb_store__close(h1);
	xlb_store__close(h2);
	TEST_DONE("store_etcd");
}
