// SPDX-License-Identifier: MIT
/*
 * Store: round trip through SQLite, WAL mode, rollback leaves the old state,
 * a writer killed mid-transaction leaves the old state, settings round trip,
 * corrupt rows are refused.
 */
#include <errno.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_check.h"
#include "xlb_control.h"

static void add_vip(struct xlb_state *st, const struct xlb_settings *set, const char *addr,
		    uint16_t port, int nreals)
{
	struct xlb_vip_cfg v = { .proto = IPPROTO_TCP, .port = port };
	struct xlb_err err;
	struct xlb_vip_cfg *vp;

	xlb_hc_default(&v.hc);
	v.hc.type = XLB_HC_HTTP;
	strcpy(v.hc.path, "/healthz");
	CHECK(!xlb_addr_parse(addr, &v.addr), "addr");
	CHECK(!xlb_state_vip_add(st, set, &v, &err), "vip add: %s", err.msg);
	vp = xlb_state_find_vip(st, &v.addr, port, IPPROTO_TCP);
	for (int i = 0; i < nreals; i++) {
		struct xlb_real_cfg r = { .weight = (uint32_t)(10 * (i + 1)), .state = (enum xlb_real_state)(i % 3) };
		char ra[64];

		snprintf(ra, sizeof(ra), "2001:db8::%d", i + 1);
		CHECK(!xlb_addr_parse(ra, &r.addr), "real addr");
		CHECK(!xlb_state_real_add(st, set, vp, &r, &err), "real add: %s", err.msg);
	}
}

static bool state_eq(const struct xlb_state *a, const struct xlb_state *b)
{
	if (a->vip_cnt != b->vip_cnt || a->next_real_id != b->next_real_id)
		return false;
	for (size_t i = 0; i < a->vip_cnt; i++) {
		const struct xlb_vip_cfg *x = &a->vips[i], *y = &b->vips[i];

		if (x->id != y->id || !xlb_addr_eq(&x->addr, &y->addr) || x->port != y->port ||
		    x->proto != y->proto || x->flags != y->flags || x->encap != y->encap ||
		    x->hc.type != y->hc.type || strcmp(x->hc.path, y->hc.path) ||
		    x->hc.interval_ms != y->hc.interval_ms || x->hc.rise != y->hc.rise ||
		    x->hc.via_encap != y->hc.via_encap ||
		    x->real_cnt != y->real_cnt)
			return false;
		for (size_t j = 0; j < x->real_cnt; j++) {
			const struct xlb_real_cfg *r = &x->reals[j], *s = &y->reals[j];

			if (r->id != s->id || !xlb_addr_eq(&r->addr, &s->addr) ||
			    r->weight != s->weight || r->state != s->state)
				return false;
		}
	}
	return true;
}

static int commit_state(struct xlb_store *s, const struct xlb_state *st)
{
	struct xlb_err err;
	int ret = xlb_store__begin(s, &err);

	ret = ret ?: xlb_store__save(s, st, &err);
	ret = ret ?: xlb_store__commit(s, &err);
	if (ret)
		fprintf(stderr, "commit: %s\n", err.msg);
	return ret;
}

int main(void)
{
	char dir[] = "/tmp/xlbt-c7-store-XXXXXX", path[256];
	struct xlb_settings set, set2;
	struct xlb_state a, b, c;
	struct xlb_store *s;
	struct xlb_err err;
	pid_t pid;
	int status;

	CHECK(mkdtemp(dir), "mkdtemp");
	xlb_settings_default(&set);
	set.max_reals = 100;
	s = xlb_store__open(dir, &err);
	CHECK(s, "open: %s", err.msg);
	if (!s)
		return 1;
	snprintf(path, sizeof(path), "%s/xlb.db-wal", dir);
	CHECK(access(path, F_OK) == 0, "no WAL file: not in WAL mode?");

	/* Empty store loads an empty state; settings are absent. */
	CHECK(!xlb_store__load(s, &a, &err) && a.vip_cnt == 0, "empty load");
	CHECK(xlb_store__load_settings(s, &set2, &err) == -ENOENT, "settings absent");
	xlb_state_free(&a);

	/* Round trip. */
	xlb_state_init(&a);
	add_vip(&a, &set, "10.0.0.10", 80, 3);
	add_vip(&a, &set, "2001:db8:1::10", 443, 5);
	a.vips[1].flags = XLB_VIP_F_NO_SPORT | XLB_VIP_F_QUIC;
	a.vips[1].encap = XLB_ENCAP_GUE;
	a.vips[1].hc.via_encap = true;
	CHECK(!xlb_state_validate(&a, &set, &err), "validate: %s", err.msg);
	CHECK(!commit_state(s, &a), "commit");
	CHECK(!xlb_store__load(s, &b, &err), "load: %s", err.msg);
	CHECK(state_eq(&a, &b), "round trip differs");
	xlb_state_free(&b);

	/* Reopen: still there. */
	s = xlb_store__close(s);
	s = xlb_store__open(dir, &err);
	CHECK(s && !xlb_store__load(s, &b, &err) && state_eq(&a, &b), "after reopen");
	xlb_state_free(&b);

	/* Rollback leaves the old state. */
	CHECK(!xlb_state_copy(&c, &a), "copy");
	CHECK(!xlb_state_vip_del(&c, &c.vips[0].addr, 80, IPPROTO_TCP, &err), "del");
	CHECK(!xlb_store__begin(s, &err) && !xlb_store__save(s, &c, &err), "save");
	CHECK(xlb_store__begin(s, &err) == -EBUSY, "nested begin accepted");
	xlb_store__rollback(s);
	CHECK(!xlb_store__load(s, &b, &err) && state_eq(&a, &b), "rollback did not restore");
	xlb_state_free(&b);
	CHECK(xlb_store__save(s, &c, &err) == -EINVAL, "save outside a transaction accepted");

	/* A writer killed in the middle of its transaction leaves no trace. */
	pid = fork();
	if (pid == 0) {
		struct xlb_store *s2 = xlb_store__open(dir, NULL);

		if (!s2 || xlb_store__begin(s2, NULL) || xlb_store__save(s2, &c, NULL))
			_exit(2);
		kill(getpid(), SIGKILL);
		_exit(3);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status), "child did not die by signal");
	CHECK(!xlb_store__load(s, &b, &err) && state_eq(&a, &b), "killed writer left a trace");
	xlb_state_free(&b);

	/* A committed change is visible. */
	CHECK(!commit_state(s, &c), "commit c");
	CHECK(!xlb_store__load(s, &b, &err) && state_eq(&c, &b), "c round trip");
	xlb_state_free(&b);

	/* Settings round trip. */
	strcpy(set.ifaces[0], "eth0");
	strcpy(set.ifaces[1], "eth1");
	set.iface_cnt = 2;
	CHECK(!xlb_mac_parse("02:00:00:aa:bb:cc", set.gw_mac), "mac");
	set.lru_size = 4242;
	CHECK(!xlb_addr_parse("10.9.9.9", &set.src4), "src4");
	set.src4_plen = 30;
	set.gue_port = 7000;
	set.max_new_flows_per_sec = 12345;
	CHECK(!xlb_store__save_settings(s, &set, &err), "save settings: %s", err.msg);
	CHECK(!xlb_store__load_settings(s, &set2, &err), "load settings");
	CHECK(set2.iface_cnt == 2 && !strcmp(set2.ifaces[1], "eth1") && set2.gw_mac[5] == 0xcc &&
		      set2.lru_size == 4242 && set2.ring_size == XLB_RING_SIZE_DEFAULT &&
		      set2.max_reals == 100 && xlb_addr_eq(&set2.src4, &set.src4) &&
		      set2.src4_plen == 30 && set2.src6.family == 0 && set2.gue_port == 7000 &&
		      set2.max_new_flows_per_sec == 12345,
	      "settings differ");

	/* A corrupt row is refused, not half-loaded. */
	{
		sqlite3 *db;

		snprintf(path, sizeof(path), "%s/xlb.db", dir);
		CHECK(sqlite3_open(path, &db) == SQLITE_OK, "sqlite open");
		CHECK(sqlite3_exec(db, "UPDATE reals SET state='sideways' WHERE id=(SELECT min(id) FROM reals);",
				   NULL, NULL, NULL) == SQLITE_OK,
		      "corrupt");
		sqlite3_close(db);
		memset(&b, 0, sizeof(b));
		CHECK(xlb_store__load(s, &b, &err) == -EUCLEAN && b.vip_cnt == 0, "corrupt row loaded");
	}

	xlb_state_free(&a);
	xlb_state_free(&c);
	xlb_store__close(s);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "cleanup failed\n");
	}
	TEST_DONE("store");
}
