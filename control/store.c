// SPDX-License-Identifier: MIT
/*
 * The durable desired state: SQLite in WAL mode at <state dir>/xlb.db.
 *
 * Why SQLite/WAL: every change is one transaction that either commits whole
 * or leaves no trace, whatever happens to xlbd (kill -9, crash) between its
 * statements; readers (export, a second lbctl) never block the writer; and
 * the file can be inspected with sqlite3 by an operator.  synchronous=NORMAL
 * is enough in WAL mode: a commit is durable once it reaches the OS, which
 * survives any xlbd crash; only a power loss may drop the last commits, and a
 * power loss also empties the BPF maps, so store and maps stay consistent.
 *
 * The store keeps the whole state; a change saves the new state inside the
 * caller's transaction (delete + insert: states are small, and one code path
 * is easier to trust than one per edit).
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_sqlite.h"

static const struct xlb_store_ops sqlite_ops;

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS vips("
	" id INTEGER PRIMARY KEY, address TEXT NOT NULL, port INTEGER NOT NULL,"
	" proto TEXT NOT NULL, flags INTEGER NOT NULL, encap TEXT NOT NULL,"
	" hc_type TEXT NOT NULL, hc_port INTEGER NOT NULL, hc_path TEXT NOT NULL,"
	" hc_interval_ms INTEGER NOT NULL, hc_timeout_ms INTEGER NOT NULL,"
	" hc_rise INTEGER NOT NULL, hc_fall INTEGER NOT NULL,"
	" hc_via TEXT NOT NULL DEFAULT 'direct',"
	" UNIQUE(address, port, proto));"
	"CREATE TABLE IF NOT EXISTS reals("
	" id INTEGER PRIMARY KEY, vip_id INTEGER NOT NULL REFERENCES vips(id) ON DELETE CASCADE,"
	" address TEXT NOT NULL, weight INTEGER NOT NULL, state TEXT NOT NULL,"
	" UNIQUE(vip_id, address));"
	/* Health verdicts by real id and address (a reused id with another address is not it). */
	"CREATE TABLE IF NOT EXISTS health("
	" real_id INTEGER PRIMARY KEY, address TEXT NOT NULL, up INTEGER NOT NULL);"
	/* Attributes added after schema 1, by object and id (a table of its own:
	 * stores written before them load unchanged, with the defaults). */
	"CREATE TABLE IF NOT EXISTS ext("
	" kind TEXT NOT NULL, id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
	" PRIMARY KEY(kind, id, key));"
	"INSERT OR IGNORE INTO meta VALUES('schema_version', '1');"
	"INSERT OR IGNORE INTO meta VALUES('next_real_id', '1');"
	"INSERT OR IGNORE INTO meta VALUES('revision', '0');";

static int exec(struct sqlite_store *s, const char *sql, struct xlb_err *err)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return xlb_sqlite_err(s, err, sql);
	return 0;
}

struct xlb_store *xlb_store__open(const char *dir, struct xlb_err *err)
{
	struct sqlite_store *s;
	char path[4096];
	int ret;

	if (snprintf(path, sizeof(path), "%s/xlb.db", dir) >= (int)sizeof(path)) {
		xlb_err_set(err, -ENAMETOOLONG, "state dir path too long");
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (mkdir(dir, 0750) && errno != EEXIST) {
		ret = -errno;
		xlb_err_set(err, ret, "cannot create state dir %s: %s", dir, strerror(-ret));
		errno = -ret;
		return NULL;
	}
	s = xlb_store_alloc(sizeof(*s), &sqlite_ops, err);
	if (!s)
		return NULL;
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
						 SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		xlb_err_set(err, -EIO, "store: cannot open %s: %s", path,
			    s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	ret = exec(s, "PRAGMA journal_mode=WAL;", err);
	ret = ret ?: exec(s, "PRAGMA synchronous=NORMAL;", err);
	ret = ret ?: exec(s, "PRAGMA foreign_keys=ON;", err);
	ret = ret ?: exec(s, "BEGIN IMMEDIATE;", err);
	ret = ret ?: exec(s, schema, err);
	if (ret) {
		sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
		goto fail;
	}
	if (exec(s, "COMMIT;", err))
		goto fail;
	{
		/* WAL must have taken: refuse to run on a filesystem without it. */
		sqlite3_stmt *st;
		bool wal = false;

		if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode;", -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW)
				wal = !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
			sqlite3_finalize(st);
		}
		if (!wal) {
			xlb_err_set(err, -EIO, "store: %s does not support WAL mode", path);
			goto fail;
		}
	}
	return &s->base;
fail:
	sqlite3_close(s->db);
	free(s);
	errno = EIO;
	return NULL;
}

static void sqlite_rollback(struct xlb_store *base);

static void sqlite_close(struct xlb_store *base)
{
	struct sqlite_store *s = sqlite_of(base);

	if (s->in_txn)
		sqlite_rollback(base);
	sqlite3_close(s->db);
	free(s);
}

static int sqlite_begin(struct xlb_store *base, struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);

	if (s->in_txn)
		return xlb_err_set(err, -EBUSY, "store: transaction already open");
	if (exec(s, "BEGIN IMMEDIATE;", err))
		return err ? err->code : -EIO;
	s->in_txn = true;
	return 0;
}

static int sqlite_commit(struct xlb_store *base, struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);

	if (!s->in_txn)
		return xlb_err_set(err, -EINVAL, "store: no transaction open");
	if (exec(s, "COMMIT;", err)) {
		int code = err ? err->code : -EIO;

		sqlite_rollback(base);
		return code;
	}
	s->in_txn = false;
	return 0;
}

static void sqlite_rollback(struct xlb_store *base)
{
	struct sqlite_store *s = sqlite_of(base);

	if (s->in_txn) {
		sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
		s->in_txn = false;
	}
}

static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

static int col_parse_fail(struct xlb_err *err, const char *what, const char *val);

/*
 * The ext table: per VIP "affinity" (seconds) and "allow" (comma-separated
 * prefixes), per real "server_id"; only what differs from the default.
 */
static int ext_put(struct sqlite_store *s, sqlite3_stmt *st, const char *kind, uint32_t id,
		   const char *key, const char *value, struct xlb_err *err)
{
	sqlite3_reset(st);
	bind_text(st, 1, kind);
	sqlite3_bind_int64(st, 2, id);
	bind_text(st, 3, key);
	bind_text(st, 4, value);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : xlb_sqlite_err(s, err, "insert ext");
}

static int ext_save(struct sqlite_store *s, const struct xlb_state *state, struct xlb_err *err)
{
	char buf[XLB_ALLOW_PER_VIP * 48], p[64];
	sqlite3_stmt *st = NULL;
	int ret;

	ret = exec(s, "DELETE FROM ext;", err);
	if (ret)
		return ret;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO ext VALUES(?1,?2,?3,?4);", -1, &st, NULL) != SQLITE_OK)
		return xlb_sqlite_err(s, err, "prepare");
	for (size_t i = 0; !ret && i < state->vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &state->vips[i];

		if (v->affinity_s) {
			snprintf(buf, sizeof(buf), "%u", v->affinity_s);
			ret = ext_put(s, st, "vip", v->id, "affinity", buf, err);
		}
		buf[0] = 0;
		for (size_t a = 0; a < v->allow_cnt; a++) {
			if (a)
				strcat(buf, ",");
			strcat(buf, xlb_prefix_str(&v->allow[a], p, sizeof(p)));
		}
		if (!ret && v->allow_cnt)
			ret = ext_put(s, st, "vip", v->id, "allow", buf, err);
		for (size_t j = 0; !ret && j < v->real_cnt; j++) {
			if (!v->reals[j].server_id)
				continue;
			snprintf(buf, sizeof(buf), "%u", v->reals[j].server_id);
			ret = ext_put(s, st, "real", v->reals[j].id, "server_id", buf, err);
		}
	}
	sqlite3_finalize(st);
	return ret;
}

static int ext_apply(struct xlb_vip_cfg *v, struct xlb_real_cfg *r, const char *key,
		     const char *value, struct xlb_err *err)
{
	char buf[XLB_ALLOW_PER_VIP * 48], *save = NULL;
	unsigned long n;
	char *end;

	errno = 0;
	if (r && !strcmp(key, "server_id")) {
		n = strtoul(value, &end, 10);
		if (*end || errno || n > XLB_SERVER_ID_MAX)
			return col_parse_fail(err, "server id", value);
		r->server_id = (uint32_t)n;
	} else if (v && !strcmp(key, "affinity")) {
		n = strtoul(value, &end, 10);
		if (*end || errno || n > 65535)
			return col_parse_fail(err, "affinity", value);
		v->affinity_s = (uint16_t)n;
	} else if (v && !strcmp(key, "allow")) {
		snprintf(buf, sizeof(buf), "%s", value);
		v->allow_cnt = 0;
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (v->allow_cnt >= XLB_ALLOW_PER_VIP ||
			    xlb_prefix_parse(t, &v->allow[v->allow_cnt]))
				return col_parse_fail(err, "allow prefix", t);
			v->allow_cnt++;
		}
	}
	/* Keys of a later version are ignored: this one cannot act on them. */
	return 0;
}

static int ext_load(struct sqlite_store *s, struct xlb_state *st, struct xlb_err *err)
{
	sqlite3_stmt *q = NULL;
	int ret = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT kind, id, key, value FROM ext;", -1, &q, NULL) != SQLITE_OK)
		return xlb_sqlite_err(s, err, "prepare");
	while (!ret && sqlite3_step(q) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(q, 0);
		uint32_t id = (uint32_t)sqlite3_column_int64(q, 1);
		const char *key = (const char *)sqlite3_column_text(q, 2);
		const char *value = (const char *)sqlite3_column_text(q, 3);

		if (!kind || !key || !value)
			continue;
		for (size_t i = 0; !ret && i < st->vip_cnt; i++) {
			struct xlb_vip_cfg *v = &st->vips[i];

			if (!strcmp(kind, "vip") && v->id == id)
				ret = ext_apply(v, NULL, key, value, err);
			for (size_t j = 0; !ret && !strcmp(kind, "real") && j < v->real_cnt; j++)
				if (v->reals[j].id == id)
					ret = ext_apply(NULL, &v->reals[j], key, value, err);
		}
	}
	sqlite3_finalize(q);
	return ret;
}

static int sqlite_save(struct xlb_store *base, const struct xlb_state *state, struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);
	sqlite3_stmt *vst = NULL, *rst = NULL, *mst = NULL;
	char buf[64];
	int ret;

	if (!s->in_txn)
		return xlb_err_set(err, -EINVAL, "store: save outside a transaction");
	ret = exec(s, "DELETE FROM reals; DELETE FROM vips;", err);
	if (ret)
		return ret;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT INTO vips VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14);",
			       -1, &vst, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO reals VALUES(?1,?2,?3,?4,?5);", -1, &rst,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "UPDATE meta SET value=?1 WHERE key='next_real_id';", -1,
			       &mst, NULL) != SQLITE_OK) {
		ret = xlb_sqlite_err(s, err, "prepare");
		goto out;
	}
	for (size_t i = 0; i < state->vip_cnt; i++) {
		const struct xlb_vip_cfg *v = &state->vips[i];

		sqlite3_reset(vst);
		sqlite3_bind_int64(vst, 1, v->id);
		bind_text(vst, 2, xlb_addr_str(&v->addr, buf, sizeof(buf)));
		sqlite3_bind_int(vst, 3, v->port);
		bind_text(vst, 4, xlb_proto_name(v->proto));
		sqlite3_bind_int64(vst, 5, v->flags);
		bind_text(vst, 6, xlb_encap_name(v->encap));
		bind_text(vst, 7, xlb_hc_type_name(v->hc.type));
		sqlite3_bind_int(vst, 8, v->hc.port);
		bind_text(vst, 9, v->hc.path);
		sqlite3_bind_int64(vst, 10, v->hc.interval_ms);
		sqlite3_bind_int64(vst, 11, v->hc.timeout_ms);
		sqlite3_bind_int(vst, 12, v->hc.rise);
		sqlite3_bind_int(vst, 13, v->hc.fall);
		bind_text(vst, 14, v->hc.via_encap ? "encap" : "direct");
		if (sqlite3_step(vst) != SQLITE_DONE) {
			ret = xlb_sqlite_err(s, err, "insert VIP");
			goto out;
		}
		for (size_t j = 0; j < v->real_cnt; j++) {
			const struct xlb_real_cfg *r = &v->reals[j];

			sqlite3_reset(rst);
			sqlite3_bind_int64(rst, 1, r->id);
			sqlite3_bind_int64(rst, 2, v->id);
			bind_text(rst, 3, xlb_addr_str(&r->addr, buf, sizeof(buf)));
			sqlite3_bind_int64(rst, 4, r->weight);
			bind_text(rst, 5, xlb_real_state_name(r->state));
			if (sqlite3_step(rst) != SQLITE_DONE) {
				ret = xlb_sqlite_err(s, err, "insert real");
				goto out;
			}
		}
	}
	snprintf(buf, sizeof(buf), "%u", state->next_real_id);
	bind_text(mst, 1, buf);
	if (sqlite3_step(mst) != SQLITE_DONE)
		ret = xlb_sqlite_err(s, err, "update meta");
	if (!ret)
		ret = ext_save(s, state, err);
	if (!ret)
		ret = exec(s, "UPDATE meta SET value=CAST(value AS INTEGER)+1 WHERE key='revision';", err);
out:
	sqlite3_finalize(vst);
	sqlite3_finalize(rst);
	sqlite3_finalize(mst);
	return ret;
}

static int col_parse_fail(struct xlb_err *err, const char *what, const char *val)
{
	return xlb_err_set(err, -EUCLEAN, "store: corrupt %s \"%.64s\"", what, val ? val : "(null)");
}

static int sqlite_load(struct xlb_store *base, struct xlb_state *ret_state, struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);
	sqlite3_stmt *vst = NULL, *rst = NULL, *mst = NULL;
	struct xlb_state st;
	int ret = 0;

	xlb_state_init(&st);
	if (sqlite3_prepare_v2(s->db,
			       "SELECT id,address,port,proto,flags,encap,hc_type,hc_port,hc_path,"
			       "hc_interval_ms,hc_timeout_ms,hc_rise,hc_fall,hc_via FROM vips ORDER BY id;",
			       -1, &vst, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
			       "SELECT id,address,weight,state FROM reals WHERE vip_id=?1 ORDER BY id;",
			       -1, &rst, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key='next_real_id';", -1, &mst,
			       NULL) != SQLITE_OK) {
		ret = xlb_sqlite_err(s, err, "prepare");
		goto out;
	}
	if (sqlite3_step(mst) == SQLITE_ROW)
		st.next_real_id = (uint32_t)strtoul((const char *)sqlite3_column_text(mst, 0), NULL, 10);
	while ((ret = sqlite3_step(vst)) == SQLITE_ROW) {
		struct xlb_vip_cfg v = { 0 }, *vips;
		const char *t;

		v.id = (uint32_t)sqlite3_column_int64(vst, 0);
		t = (const char *)sqlite3_column_text(vst, 1);
		if (xlb_addr_parse(t, &v.addr)) {
			ret = col_parse_fail(err, "VIP address", t);
			goto out;
		}
		v.port = (uint16_t)sqlite3_column_int(vst, 2);
		t = (const char *)sqlite3_column_text(vst, 3);
		if (xlb_proto_parse(t, &v.proto)) {
			ret = col_parse_fail(err, "protocol", t);
			goto out;
		}
		v.flags = (uint32_t)sqlite3_column_int64(vst, 4);
		t = (const char *)sqlite3_column_text(vst, 5);
		if (xlb_encap_parse(t, &v.encap)) {
			ret = col_parse_fail(err, "encap", t);
			goto out;
		}
		t = (const char *)sqlite3_column_text(vst, 6);
		if (xlb_hc_type_parse(t, &v.hc.type)) {
			ret = col_parse_fail(err, "health check type", t);
			goto out;
		}
		v.hc.port = (uint16_t)sqlite3_column_int(vst, 7);
		t = (const char *)sqlite3_column_text(vst, 8);
		snprintf(v.hc.path, sizeof(v.hc.path), "%s", t ? t : "/");
		v.hc.interval_ms = (uint32_t)sqlite3_column_int64(vst, 9);
		v.hc.timeout_ms = (uint32_t)sqlite3_column_int64(vst, 10);
		v.hc.rise = (uint8_t)sqlite3_column_int(vst, 11);
		v.hc.fall = (uint8_t)sqlite3_column_int(vst, 12);
		t = (const char *)sqlite3_column_text(vst, 13);
		v.hc.via_encap = t && !strcmp(t, "encap");

		sqlite3_reset(rst);
		sqlite3_bind_int64(rst, 1, v.id);
		while ((ret = sqlite3_step(rst)) == SQLITE_ROW) {
			struct xlb_real_cfg r = { 0 }, *reals;

			r.id = (uint32_t)sqlite3_column_int64(rst, 0);
			t = (const char *)sqlite3_column_text(rst, 1);
			if (xlb_addr_parse(t, &r.addr)) {
				free(v.reals);
				ret = col_parse_fail(err, "real address", t);
				goto out;
			}
			r.weight = (uint32_t)sqlite3_column_int64(rst, 2);
			t = (const char *)sqlite3_column_text(rst, 3);
			if (xlb_real_state_parse(t, &r.state)) {
				free(v.reals);
				ret = col_parse_fail(err, "real state", t);
				goto out;
			}
			reals = realloc(v.reals, (v.real_cnt + 1) * sizeof(*reals));
			if (!reals) {
				free(v.reals);
				ret = xlb_err_set(err, -ENOMEM, "out of memory");
				goto out;
			}
			v.reals = reals;
			v.reals[v.real_cnt++] = r;
		}
		if (ret != SQLITE_DONE) {
			free(v.reals);
			ret = xlb_sqlite_err(s, err, "read reals");
			goto out;
		}
		vips = realloc(st.vips, (st.vip_cnt + 1) * sizeof(*vips));
		if (!vips) {
			free(v.reals);
			ret = xlb_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		st.vips = vips;
		st.vips[st.vip_cnt++] = v;
	}
	if (ret != SQLITE_DONE) {
		ret = xlb_sqlite_err(s, err, "read VIPs");
		goto out;
	}
	ret = ext_load(s, &st, err);
out:
	sqlite3_finalize(vst);
	sqlite3_finalize(rst);
	sqlite3_finalize(mst);
	if (ret)
		xlb_state_free(&st);
	else
		*ret_state = st;
	return ret;
}

static int sqlite_save_settings(struct xlb_store *base, const struct xlb_settings *set,
				struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);
	char ifaces[XLB_MAX_IFACES * XLB_IFNAME_LEN + 8] = "", mac[32], sql[1024];
	sqlite3_stmt *st;
	int ret = 0;

	for (size_t i = 0; i < set->iface_cnt; i++) {
		if (i)
			strcat(ifaces, ",");
		strcat(ifaces, set->ifaces[i]);
	}
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", set->gw_mac[0], set->gw_mac[1],
		 set->gw_mac[2], set->gw_mac[3], set->gw_mac[4], set->gw_mac[5]);
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO settings VALUES(?1, ?2);", -1, &st,
			       NULL) != SQLITE_OK)
		return xlb_sqlite_err(s, err, "prepare");
	{
		struct {
			const char *k;
			char v[sizeof(ifaces)];
		} kv[11];
		char a[64];

		snprintf(kv[0].v, sizeof(kv[0].v), "%s", ifaces);
		kv[0].k = "interfaces";
		snprintf(kv[1].v, sizeof(kv[1].v), "%s", mac);
		kv[1].k = "gateway_mac";
		snprintf(kv[2].v, sizeof(kv[2].v), "%u", set->ring_size);
		kv[2].k = "ring_size";
		snprintf(kv[3].v, sizeof(kv[3].v), "%u", set->lru_size);
		kv[3].k = "lru_size";
		snprintf(kv[4].v, sizeof(kv[4].v), "%u", set->max_vips);
		kv[4].k = "max_vips";
		snprintf(kv[5].v, sizeof(kv[5].v), "%u", set->max_reals);
		kv[5].k = "max_reals";
		snprintf(kv[6].v, sizeof(kv[6].v), "%s",
			 set->src4.family ? xlb_addr_str(&set->src4, a, sizeof(a)) : "");
		kv[6].k = "src4";
		snprintf(kv[7].v, sizeof(kv[7].v), "%u", set->src4_plen);
		kv[7].k = "src4_plen";
		snprintf(kv[8].v, sizeof(kv[8].v), "%s",
			 set->src6.family ? xlb_addr_str(&set->src6, a, sizeof(a)) : "");
		kv[8].k = "src6";
		snprintf(kv[9].v, sizeof(kv[9].v), "%u", set->src6_plen);
		kv[9].k = "src6_plen";
		snprintf(kv[10].v, sizeof(kv[10].v), "%u:%u", set->gue_port, set->max_new_flows_per_sec);
		kv[10].k = "gue_port:flood";
		if (!s->in_txn && exec(s, "BEGIN IMMEDIATE;", err)) {
			sqlite3_finalize(st);
			return err ? err->code : -EIO;
		}
		for (size_t i = 0; i < 11 && !ret; i++) {
			sqlite3_reset(st);
			bind_text(st, 1, kv[i].k);
			bind_text(st, 2, kv[i].v);
			if (sqlite3_step(st) != SQLITE_DONE)
				ret = xlb_sqlite_err(s, err, "save settings");
		}
		sqlite3_finalize(st);
		(void)sql;
		if (!s->in_txn) {
			if (ret)
				sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
			else
				ret = exec(s, "COMMIT;", err);
		}
	}
	return ret;
}

static int sqlite_load_settings(struct xlb_store *base, struct xlb_settings *ret_set,
				struct xlb_err *err)
{
	struct sqlite_store *s = sqlite_of(base);
	struct xlb_settings set;
	sqlite3_stmt *st;
	int rows = 0, rc;

	xlb_settings_default(&set);
	if (sqlite3_prepare_v2(s->db, "SELECT key, value FROM settings;", -1, &st, NULL) != SQLITE_OK)
		return xlb_sqlite_err(s, err, "prepare");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		rows++;
		if (!k || !v)
			continue;
		if (!strcmp(k, "interfaces")) {
			char tmp[XLB_MAX_IFACES * XLB_IFNAME_LEN + 8], *save = NULL, *tok;

			snprintf(tmp, sizeof(tmp), "%s", v);
			set.iface_cnt = 0;
			for (tok = strtok_r(tmp, ",", &save); tok && set.iface_cnt < XLB_MAX_IFACES;
			     tok = strtok_r(NULL, ",", &save))
				snprintf(set.ifaces[set.iface_cnt++], XLB_IFNAME_LEN, "%s", tok);
		} else if (!strcmp(k, "gateway_mac")) {
			xlb_mac_parse(v, set.gw_mac);
		} else if (!strcmp(k, "ring_size")) {
			set.ring_size = (uint32_t)strtoul(v, NULL, 10);
		} else if (!strcmp(k, "lru_size")) {
			set.lru_size = (uint32_t)strtoul(v, NULL, 10);
		} else if (!strcmp(k, "max_vips")) {
			set.max_vips = (uint32_t)strtoul(v, NULL, 10);
		} else if (!strcmp(k, "max_reals")) {
			set.max_reals = (uint32_t)strtoul(v, NULL, 10);
		} else if (!strcmp(k, "src4")) {
			if (*v)
				xlb_addr_parse(v, &set.src4);
		} else if (!strcmp(k, "src4_plen")) {
			set.src4_plen = (uint8_t)strtoul(v, NULL, 10);
		} else if (!strcmp(k, "src6")) {
			if (*v)
				xlb_addr_parse(v, &set.src6);
		} else if (!strcmp(k, "src6_plen")) {
			set.src6_plen = (uint8_t)strtoul(v, NULL, 10);
		} else if (!strcmp(k, "gue_port:flood")) {
			unsigned int g = 0, f = 0;

			if (sscanf(v, "%u:%u", &g, &f) == 2) {
				set.gue_port = (uint16_t)g;
				set.max_new_flows_per_sec = f;
			}
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return xlb_sqlite_err(s, err, "read settings");
	if (!rows)
		return -ENOENT;
	*ret_set = set;
	return 0;
}

static const struct xlb_store_ops sqlite_ops = {
	.kind = "sqlite",
	.close = sqlite_close,
	.load = sqlite_load,
	.load_settings = sqlite_load_settings,
	.save_settings = sqlite_save_settings,
	.begin = sqlite_begin,
	.save = sqlite_save,
	.commit = sqlite_commit,
	.rollback = sqlite_rollback,
	.info = xlb_sqlite_info,
	.save_health = xlb_sqlite_save_health,
	.load_health = xlb_sqlite_load_health,
};
