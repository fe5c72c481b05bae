// SPDX-License-Identifier: MIT
/*
 * The kernel backend, the connection table (xlb_conns, one table for all
 * CPUs: xlb_shared.h): one flow's entry, the entries of a VIP or a real,
 * flushing them, active flows per real.  Walks read the table in batches
 * (BPF_MAP_LOOKUP_BATCH: a few syscalls for 64k entries), else key by key.
 * They see the table as it is while packets keep changing it: an entry
 * added during a walk may be missed, which is what a snapshot of a live
 * table means.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel.h"

#define BATCH 1024

static void dp_to_ip(const union xlb_addr *a, __u8 family, struct xlb_ip *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->family = family == XLB_FAMILY_V4 ? AF_INET : AF_INET6;
	memcpy(ret->bytes, a->bytes, family == XLB_FAMILY_V4 ? 4 : 16);
}

static void from_entry(const struct xlb_flow_key *k, const struct xlb_conn *v, struct xlb_dp_conn *c)
{
	dp_to_ip(&k->src, k->family, &c->client);
	dp_to_ip(&k->dst, k->family, &c->vip);
	c->cport = ntohs(k->sport);
	c->vport = ntohs(k->dport);
	c->proto = k->proto;
	c->real_id = v->real_num;
	c->hash = v->hash;
	c->state = v->state;
	c->atime_ns = v->atime_ns;
}

static bool selected(const struct xlb_flow_key *k, const struct xlb_conn *v,
		     const struct xlb_conn_filter *f)
{
	struct xlb_ip dst;

	if (!f)
		return true;
	dp_to_ip(&k->dst, k->family, &dst);
	return xlb_addr_eq(&dst, &f->vip) && k->proto == f->proto &&
	       (!f->vport || ntohs(k->dport) == f->vport) && (!f->real_id || v->real_num == f->real_id);
}

/* Call fn on every entry; fn returns 1 to delete it.  Returns entries visited or -errno. */
static int walk(struct kernel *k, int (*fn)(const struct xlb_flow_key *, const struct xlb_conn *, void *),
		void *priv)
{
	struct xlb_flow_key *keys = calloc(BATCH, sizeof(*keys)), cur, next;
	struct xlb_conn *vals = calloc(BATCH, sizeof(*vals)), v;
	struct xlb_flow_key *del = NULL;
	size_t ndel = 0, cap = 0;
	__u64 in = 0, out;
	bool first = true, batched = true;
	int fd = k->fd[KM_CONNS], n = 0, ret = 0;
	void *prev = NULL;

	if (!keys || !vals) {
		ret = -ENOMEM;
		goto out;
	}
	/* Deletions wait until the walk is over: deleting under a batch cursor loses entries. */
	while (batched) {
		__u32 cnt = BATCH;
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		ret = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &cnt, &o) ? -errno : 0;
		first = false;
		if (ret && ret != -ENOENT && !cnt) {
			if (n == 0 && (ret == -EINVAL || ret == -ENOTSUP || ret == -EOPNOTSUPP))
				batched = false; /* old kernel: key by key below */
			else
				goto out;
			break;
		}
		for (__u32 i = 0; i < cnt; i++, n++) {
			if (fn(&keys[i], &vals[i], priv) != 1)
				continue;
			if (ndel == cap) {
				struct xlb_flow_key *d = realloc(del, (cap = cap ? cap * 2 : 256) * sizeof(*d));

				if (!d) {
					ret = -ENOMEM;
					goto out;
				}
				del = d;
			}
			del[ndel++] = keys[i];
		}
		if (ret == -ENOENT)
			break;
		in = out;
	}
	ret = 0;
	if (!batched) {
		while (!bpf_map_get_next_key(fd, prev, &next)) {
			cur = next;
			prev = &cur;
			if (bpf_map_lookup_elem(fd, &cur, &v))
				continue;
			n++;
			if (fn(&cur, &v, priv) == 1 && !bpf_map_delete_elem(fd, &cur))
				prev = NULL; /* restart: the walk order changed */
		}
	}
	for (size_t i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, &del[i]);
out:
	free(keys);
	free(vals);
	free(del);
	return ret ? ret : n;
}

int kernel_conn_lookup(struct xlb_backend *be, const struct xlb_dp_conn *key, struct xlb_dp_conn *ret)
{
	struct kernel *k = be->priv;
	struct xlb_flow_key fk = { 0 };
	struct xlb_conn v;
	__u8 fam;

	kernel_to_dp_addr(&key->client, &fk.src, &fam);
	kernel_to_dp_addr(&key->vip, &fk.dst, &fk.family);
	fk.sport = htons(key->cport);
	fk.dport = htons(key->vport);
	fk.proto = key->proto;
	if (bpf_map_lookup_elem(k->fd[KM_CONNS], &fk, &v))
		return errno == ENOENT ? 0 : -errno;
	from_entry(&fk, &v, ret);
	return 1;
}

struct list_ctx {
	const struct xlb_conn_filter *f;
	struct xlb_dp_conn *ret;
	size_t max, n;
	bool flush;
};

static int list_one(const struct xlb_flow_key *key, const struct xlb_conn *v, void *priv)
{
	struct list_ctx *c = priv;

	if (!selected(key, v, c->f))
		return 0;
	if (c->ret && c->n < c->max)
		from_entry(key, v, &c->ret[c->n]);
	c->n++;
	return c->flush ? 1 : 0;
}

int kernel_conn_list(struct xlb_backend *be, const struct xlb_conn_filter *f, struct xlb_dp_conn *ret,
		     size_t max)
{
	struct list_ctx c = { f, ret, max, 0, false };
	int r = walk(be->priv, list_one, &c);

	return r < 0 ? r : (int)c.n;
}

int kernel_conn_flush(struct xlb_backend *be, const struct xlb_conn_filter *f)
{
	struct list_ctx c = { f, NULL, 0, 0, true };
	int r = walk(be->priv, list_one, &c);

	return r < 0 ? r : (int)c.n;
}

struct active_ctx {
	uint32_t *active;
	size_t n;
	uint64_t now, udp_timeout;
};

static int active_one(const struct xlb_flow_key *key, const struct xlb_conn *v, void *priv)
{
	struct active_ctx *c = priv;
	bool active;

	if (key->proto == IPPROTO_UDP)
		active = c->now - v->atime_ns <= c->udp_timeout;
	else
		active = v->state == XLB_CONN_ESTABLISHED;
	if (active && v->real_num < c->n)
		c->active[v->real_num]++;
	return 0;
}

int kernel_conn_active(struct xlb_backend *be, uint32_t *active, size_t n, uint64_t udp_timeout_ns)
{
	struct active_ctx c = { active, n, kernel_now_ns(),
				udp_timeout_ns ? udp_timeout_ns : XLB_UDP_TIMEOUT_NS_DEFAULT };
	int r;

	memset(active, 0, n * sizeof(*active));
	r = walk(be->priv, active_one, &c);
	return r < 0 ? r : 0;
}
