// SPDX-License-Identifier: MIT
/*
 * map_lpm.c - lpm_trie: longest prefix match over a binary trie of the
 * kernel's shape (nodes carry a prefix, intermediate nodes only route).
 *
 * Nodes come from a pool sized at create time (every leaf plus as many
 * intermediates) and are recycled; writers hold the map's lock, readers
 * follow child pointers with acquire loads and no lock.  A reader only
 * descends to nodes with a longer prefix, so even a walk that meets a
 * recycled node ends within max_prefixlen + 1 steps.
 */
#include <stdlib.h>

#include "core_impl.h"

#define LPM_IM 1 /* intermediate node: no value */

struct lpm_node {
	_Atomic(struct lpm_node *) child[2];
	struct lpm_node *free_next;
	uint32_t prefixlen;
	uint32_t flags;
	uint8_t data[]; /* data_size bytes rounded up to 8, then the value */
};

struct lpm_trie {
	pthread_mutex_t lock;
	_Atomic(struct lpm_node *) root;
	uint32_t data_size;
	uint32_t max_prefixlen;
	uint32_t data_stride;
	size_t node_size;
	uint8_t *pool;
	uint32_t pool_cnt;
	uint32_t pool_used; /* nodes ever handed out; the rest stays untouched */
	struct lpm_node *free_head;
	uint32_t n_entries;
};

static uint8_t *node_value(const struct lpm_trie *t, struct lpm_node *n)
{
	return n->data + t->data_stride;
}

/* Pointer-linked nodes: private state only (map_shm.c refuses to share it). */
static size_t lpm_mem_size(const struct xbpf_map *map)
{
	return 0;
}

static int lpm_init(struct xbpf_map *map, bool fresh)
{
	struct lpm_trie *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->data_size = map->spec.key_size - 4;
	t->max_prefixlen = t->data_size * 8;
	t->data_stride = XBPF_ROUND_UP(t->data_size, 8);
	t->node_size = sizeof(struct lpm_node) + t->data_stride + map->stride;
	/* leaves + intermediates + one spare for replacement */
	t->pool_cnt = 2 * map->spec.max_entries + 1;
	t->pool = calloc(t->pool_cnt, t->node_size);
	if (!t->pool) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	map->priv = t;
	return 0;
}

static void lpm_free(struct xbpf_map *map)
{
	struct lpm_trie *t = map->priv;

	pthread_mutex_destroy(&t->lock);
	free(t->pool);
	free(t);
}

static struct lpm_node *node_get(struct lpm_trie *t)
{
	struct lpm_node *n = t->free_head;

	if (n)
		t->free_head = n->free_next;
	else if (t->pool_used < t->pool_cnt)
		n = (struct lpm_node *)(t->pool + (size_t)t->pool_used++ * t->node_size);
	if (n) {
		atomic_store_explicit(&n->child[0], NULL, memory_order_relaxed);
		atomic_store_explicit(&n->child[1], NULL, memory_order_relaxed);
		n->flags = 0;
	}
	return n;
}

static void node_put(struct lpm_trie *t, struct lpm_node *n)
{
	n->free_next = t->free_head;
	t->free_head = n;
}

static uint32_t extract_bit(const uint8_t *data, uint32_t idx)
{
	return !!(data[idx / 8] & (1u << (7 - idx % 8)));
}

/* Leading bits node and key share, up to the shorter prefix. */
static uint32_t match_len(const struct lpm_trie *t, const struct lpm_node *n,
			  const uint8_t *key_data, uint32_t key_prefixlen)
{
	uint32_t limit = n->prefixlen < key_prefixlen ? n->prefixlen : key_prefixlen;
	uint32_t prefixlen = 0, i;

	for (i = 0; i < t->data_size; i++) {
		uint8_t diff = n->data[i] ^ key_data[i];

		if (diff) {
			prefixlen += __builtin_clz((uint32_t)diff) - 24;
			break;
		}
		prefixlen += 8;
		if (prefixlen >= limit)
			break;
	}
	return prefixlen < limit ? prefixlen : limit;
}

static void *lpm_lookup_raw(struct xbpf_map *map, const void *key)
{
	struct lpm_trie *t = map->priv;
	const uint8_t *kdata = (const uint8_t *)key + 4;
	struct lpm_node *n, *found = NULL;
	uint32_t key_prefixlen, last = 0;
	bool first = true;

	memcpy(&key_prefixlen, key, 4);
	if (key_prefixlen > t->max_prefixlen)
		key_prefixlen = t->max_prefixlen;
	for (n = atomic_load_explicit(&t->root, memory_order_acquire); n;) {
		uint32_t ml, plen = n->prefixlen, flags = n->flags;

		if (!first && plen <= last)
			break; /* recycled under us: prefixes only grow downwards */
		first = false;
		last = plen;
		ml = match_len(t, n, kdata, key_prefixlen);
		if (ml == t->max_prefixlen) {
			if (!(flags & LPM_IM))
				found = n;
			break;
		}
		if (ml < plen)
			break;
		if (!(flags & LPM_IM))
			found = n;
		n = atomic_load_explicit(&n->child[extract_bit(kdata, plen)], memory_order_acquire);
	}
	return found ? node_value(t, found) : NULL;
}

static int lpm_update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags,
		      int cpu)
{
	struct lpm_trie *t = map->priv;
	const uint8_t *kdata = (const uint8_t *)key + 4;
	_Atomic(struct lpm_node *) *slot;
	struct lpm_node *n, *new_node, *im;
	uint32_t prefixlen, ml = 0;
	int err = 0;

	memcpy(&prefixlen, key, 4);
	if (prefixlen > t->max_prefixlen)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	new_node = node_get(t);
	if (!new_node) {
		err = -ENOSPC;
		goto out;
	}
	new_node->prefixlen = prefixlen;
	memset(new_node->data, 0, t->data_stride);
	memcpy(new_node->data, kdata, t->data_size);
	memcpy(node_value(t, new_node), value, map->val_size);

	slot = &t->root;
	while ((n = atomic_load_explicit(slot, memory_order_relaxed))) {
		ml = match_len(t, n, kdata, prefixlen);
		if (n->prefixlen != ml || n->prefixlen == prefixlen || n->prefixlen == t->max_prefixlen)
			break;
		slot = &n->child[extract_bit(kdata, n->prefixlen)];
	}

	if (n && n->prefixlen == prefixlen && ml == prefixlen) {
		/* same prefix: replace the node (or fill an intermediate) */
		bool had_value = !(n->flags & LPM_IM);

		if (had_value && flags == XBPF_NOEXIST) {
			err = -EEXIST;
			goto out_put;
		}
		if (!had_value && flags == XBPF_EXIST) {
			err = -ENOENT;
			goto out_put;
		}
		if (!had_value && t->n_entries >= map->spec.max_entries) {
			err = -ENOSPC;
			goto out_put;
		}
		atomic_store_explicit(&new_node->child[0],
				      atomic_load_explicit(&n->child[0], memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&new_node->child[1],
				      atomic_load_explicit(&n->child[1], memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(slot, new_node, memory_order_release);
		if (!had_value)
			t->n_entries++;
		node_put(t, n);
		goto out;
	}
	if (flags == XBPF_EXIST) {
		err = -ENOENT;
		goto out_put;
	}
	if (t->n_entries >= map->spec.max_entries) {
		err = -ENOSPC;
		goto out_put;
	}
	if (!n) {
		atomic_store_explicit(slot, new_node, memory_order_release);
	} else if (ml == prefixlen) {
		/* new node is a prefix of n: it goes above n */
		atomic_store_explicit(&new_node->child[extract_bit(n->data, ml)], n, memory_order_relaxed);
		atomic_store_explicit(slot, new_node, memory_order_release);
	} else {
		/* diverge at bit ml: an intermediate node routes to both */
		im = node_get(t);
		if (!im) {
			err = -ENOSPC;
			goto out_put;
		}
		im->prefixlen = ml;
		im->flags = LPM_IM;
		memcpy(im->data, n->data, t->data_stride);
		if (extract_bit(kdata, ml)) {
			atomic_store_explicit(&im->child[0], n, memory_order_relaxed);
			atomic_store_explicit(&im->child[1], new_node, memory_order_relaxed);
		} else {
			atomic_store_explicit(&im->child[0], new_node, memory_order_relaxed);
			atomic_store_explicit(&im->child[1], n, memory_order_relaxed);
		}
		atomic_store_explicit(slot, im, memory_order_release);
	}
	t->n_entries++;
	goto out;
out_put:
	node_put(t, new_node);
out:
	pthread_mutex_unlock(&t->lock);
	return err;
}

static int lpm_delete(struct xbpf_map *map, const void *key)
{
	struct lpm_trie *t = map->priv;
	const uint8_t *kdata = (const uint8_t *)key + 4;
	_Atomic(struct lpm_node *) *trim, *trim2;
	struct lpm_node *n, *parent = NULL, *c0, *c1;
	uint32_t prefixlen, ml = 0;
	int err = 0;

	memcpy(&prefixlen, key, 4);
	if (prefixlen > t->max_prefixlen)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	trim = trim2 = &t->root;
	while ((n = atomic_load_explicit(trim, memory_order_relaxed))) {
		ml = match_len(t, n, kdata, prefixlen);
		if (n->prefixlen != ml || n->prefixlen == prefixlen)
			break;
		parent = n;
		trim2 = trim;
		trim = &n->child[extract_bit(kdata, n->prefixlen)];
	}
	if (!n || n->prefixlen != prefixlen || ml != prefixlen || (n->flags & LPM_IM)) {
		err = -ENOENT;
		goto out;
	}
	t->n_entries--;
	c0 = atomic_load_explicit(&n->child[0], memory_order_relaxed);
	c1 = atomic_load_explicit(&n->child[1], memory_order_relaxed);
	if (c0 && c1) {
		/* still routes two subtrees: keep it as an intermediate */
		n->flags |= LPM_IM;
		goto out;
	}
	if (parent && (parent->flags & LPM_IM) && !c0 && !c1) {
		/* the parent intermediate only routed to n: replace it by n's sibling */
		struct lpm_node *p0 = atomic_load_explicit(&parent->child[0], memory_order_relaxed);
		struct lpm_node *sib = p0 == n ? atomic_load_explicit(&parent->child[1],
									memory_order_relaxed)
					      : p0;

		atomic_store_explicit(trim2, sib, memory_order_release);
		node_put(t, parent);
		node_put(t, n);
		goto out;
	}
	atomic_store_explicit(trim, c0 ? c0 : c1, memory_order_release);
	node_put(t, n);
out:
	pthread_mutex_unlock(&t->lock);
	return err;
}

/* Post-order (children before parent, child 0 first), as the kernel's. */
static int lpm_collect(struct lpm_node *n, struct lpm_node **out, uint32_t *cnt, uint32_t cap,
		       uint32_t depth)
{
	if (!n || depth > 2 * 8 * 256 + 2)
		return 0;
	lpm_collect(atomic_load_explicit(&n->child[0], memory_order_relaxed), out, cnt, cap, depth + 1);
	lpm_collect(atomic_load_explicit(&n->child[1], memory_order_relaxed), out, cnt, cap, depth + 1);
	if (!(n->flags & LPM_IM) && *cnt < cap)
		out[(*cnt)++] = n;
	return 0;
}

static int lpm_get_next_key(struct xbpf_map *map, const void *key, void *next_key)
{
	struct lpm_trie *t = map->priv;
	struct lpm_node **nodes, *next = NULL;
	uint32_t cnt = 0, i, prefixlen;
	int err = 0;

	nodes = malloc(((size_t)map->spec.max_entries + 1) * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	pthread_mutex_lock(&t->lock);
	lpm_collect(atomic_load_explicit(&t->root, memory_order_relaxed), nodes, &cnt,
		    map->spec.max_entries + 1, 0);
	if (!cnt) {
		err = -ENOENT;
		goto out;
	}
	next = nodes[0];
	if (key) {
		memcpy(&prefixlen, key, 4);
		for (i = 0; i < cnt; i++) {
			if (nodes[i]->prefixlen == prefixlen &&
			    !memcmp(nodes[i]->data, (const uint8_t *)key + 4, t->data_size)) {
				if (i + 1 == cnt) {
					err = -ENOENT;
					goto out;
				}
				next = nodes[i + 1];
				break;
			}
		}
	}
	memcpy(next_key, &next->prefixlen, 4);
	memcpy((uint8_t *)next_key + 4, next->data, t->data_size);
out:
	pthread_mutex_unlock(&t->lock);
	free(nodes);
	return err;
}

const struct xbpf_map_ops __xbpf_lpm_ops = {
	.shareable = false,
	.mem_size = lpm_mem_size,
	.init = lpm_init,
	.free = lpm_free,
	.lookup_raw = lpm_lookup_raw,
	.update = lpm_update,
	.delete = lpm_delete,
	.get_next_key = lpm_get_next_key,
};
