// SPDX-License-Identifier: MIT
/*
 * map_lpm.c - lpm_trie: longest prefix match over a binary trie of the
 * kernel's shape (nodes carry a prefix, intermediate nodes only route).
 *
 * Nodes come from a pool sized at create time (every leaf plus as many
 * intermediates), in the map's storage area, and are recycled; writers hold
 * the map's lock (in the area too, so other processes' writers wait), readers
 * follow child pointers with acquire loads and no lock.  A reader only
 * descends to nodes with a longer prefix, so even a walk that meets a
 * recycled node ends within max_prefixlen + 1 steps.
 */
#include <stdlib.h>

#include "core_impl.h"

#define LPM_IM 1 /* intermediate node: no value */

/*
 * Links are byte offsets from the map's storage (0: none), never pointers,
 * so that processes mapping a shared map at different addresses agree on
 * them (map_shm.c).  No node sits at offset 0: the header comes first.
 */
struct lpm_node {
	_Atomic uint64_t child[2];
	uint64_t free_next;
	uint32_t prefixlen;
	uint32_t flags;
	uint8_t data[]; /* data_size bytes rounded up to 8, then the value */
};

/* The trie's state, in the storage area (shared by every process using it). */
struct lpm_shared {
	xbpf_spinlock_t lock;
	uint32_t n_entries;
	_Atomic uint64_t root;
	uint64_t free_head;
	uint64_t node_size;
	uint64_t pool_off; /* from the storage */
	uint32_t pool_cnt;
	uint32_t pool_used; /* nodes ever handed out; the rest stays untouched */
};

/* This process's view. */
struct lpm_trie {
	struct lpm_shared *s;
	uint8_t *base; /* map->mem: offsets count from here */
	uint8_t *pool;
	uint32_t data_size;
	uint32_t max_prefixlen;
	uint32_t data_stride;
	size_t node_size;
	uint32_t pool_cnt;
};

static inline struct lpm_node *N(const struct lpm_trie *t, uint64_t off)
{
	return off ? (struct lpm_node *)(t->base + off) : NULL;
}

static inline uint64_t OFF(const struct lpm_trie *t, const struct lpm_node *n)
{
	return n ? (uint64_t)((const uint8_t *)n - t->base) : 0;
}

static inline struct lpm_node *child_get(const struct lpm_trie *t, struct lpm_node *n, uint32_t bit,
					 memory_order mo)
{
	return N(t, atomic_load_explicit(&n->child[bit], mo));
}

static inline void child_set(const struct lpm_trie *t, _Atomic uint64_t *slot, struct lpm_node *c,
			     memory_order mo)
{
	atomic_store_explicit(slot, OFF(t, c), mo);
}

static uint8_t *node_value(const struct lpm_trie *t, struct lpm_node *n)
{
	return n->data + t->data_stride;
}

static void lpm_geometry(const struct xbpf_map *map, struct lpm_trie *t, struct lpm_shared *g)
{
	t->data_size = map->spec.key_size - 4;
	t->max_prefixlen = t->data_size * 8;
	t->data_stride = XBPF_ROUND_UP(t->data_size, 8);
	t->node_size = sizeof(struct lpm_node) + t->data_stride + map->stride;
	/* leaves + intermediates + one spare for replacement */
	t->pool_cnt = 2 * map->spec.max_entries + 1;
	memset(g, 0, sizeof(*g));
	g->node_size = t->node_size;
	g->pool_cnt = t->pool_cnt;
	g->pool_off = XBPF_MAP_HDR_SIZE + XBPF_ROUND_UP(sizeof(struct lpm_shared), 64);
}

static size_t lpm_mem_size(const struct xbpf_map *map)
{
	struct lpm_trie t;
	struct lpm_shared g;

	lpm_geometry(map, &t, &g);
	return g.pool_off - XBPF_MAP_HDR_SIZE + (size_t)g.pool_cnt * g.node_size;
}

static int lpm_init(struct xbpf_map *map, bool fresh)
{
	struct lpm_shared *s = (struct lpm_shared *)map->area, g;
	struct lpm_trie *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	lpm_geometry(map, t, &g);
	if (fresh) {
		*s = g;
	} else if (s->node_size != g.node_size || s->pool_cnt != g.pool_cnt ||
		   s->pool_off != g.pool_off) {
		free(t);
		return -EPROTO; /* another process laid this area out differently */
	}
	t->s = s;
	t->base = map->mem;
	t->pool = map->mem + g.pool_off;
	map->priv = t;
	return 0;
}

static void lpm_free(struct xbpf_map *map)
{
	free(map->priv);
}

static struct lpm_node *node_get(struct lpm_trie *t)
{
	struct lpm_shared *s = t->s;
	struct lpm_node *n = N(t, s->free_head);

	if (n)
		s->free_head = n->free_next;
	else if (s->pool_used < t->pool_cnt)
		n = (struct lpm_node *)(t->pool + (size_t)s->pool_used++ * t->node_size);
	if (n) {
		atomic_store_explicit(&n->child[0], 0, memory_order_relaxed);
		atomic_store_explicit(&n->child[1], 0, memory_order_relaxed);
		n->flags = 0;
	}
	return n;
}

static void node_put(struct lpm_trie *t, struct lpm_node *n)
{
	n->free_next = t->s->free_head;
	t->s->free_head = OFF(t, n);
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
	for (n = N(t, atomic_load_explicit(&t->s->root, memory_order_acquire)); n;) {
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
		n = child_get(t, n, extract_bit(kdata, plen), memory_order_acquire);
	}
	return found ? node_value(t, found) : NULL;
}

static int lpm_update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags,
		      int cpu)
{
	struct lpm_trie *t = map->priv;
	const uint8_t *kdata = (const uint8_t *)key + 4;
	_Atomic uint64_t *slot;
	struct lpm_node *n, *new_node, *im;
	uint32_t prefixlen, ml = 0;
	int err = 0;

	memcpy(&prefixlen, key, 4);
	if (prefixlen > t->max_prefixlen)
		return -EINVAL;
	xbpf_spin_lock(&t->s->lock);
	new_node = node_get(t);
	if (!new_node) {
		err = -ENOSPC;
		goto out;
	}
	new_node->prefixlen = prefixlen;
	memset(new_node->data, 0, t->data_stride);
	memcpy(new_node->data, kdata, t->data_size);
	memcpy(node_value(t, new_node), value, map->val_size);

	slot = &t->s->root;
	while ((n = N(t, atomic_load_explicit(slot, memory_order_relaxed)))) {
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
		if (!had_value && t->s->n_entries >= map->spec.max_entries) {
			err = -ENOSPC;
			goto out_put;
		}
		atomic_store_explicit(&new_node->child[0],
				      atomic_load_explicit(&n->child[0], memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&new_node->child[1],
				      atomic_load_explicit(&n->child[1], memory_order_relaxed),
				      memory_order_relaxed);
		child_set(t, slot, new_node, memory_order_release);
		if (!had_value)
			t->s->n_entries++;
		node_put(t, n);
		goto out;
	}
	if (flags == XBPF_EXIST) {
		err = -ENOENT;
		goto out_put;
	}
	if (t->s->n_entries >= map->spec.max_entries) {
		err = -ENOSPC;
		goto out_put;
	}
	if (!n) {
		child_set(t, slot, new_node, memory_order_release);
	} else if (ml == prefixlen) {
		/* new node is a prefix of n: it goes above n */
		child_set(t, &new_node->child[extract_bit(n->data, ml)], n, memory_order_relaxed);
		child_set(t, slot, new_node, memory_order_release);
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
			child_set(t, &im->child[0], n, memory_order_relaxed);
			child_set(t, &im->child[1], new_node, memory_order_relaxed);
		} else {
			child_set(t, &im->child[0], new_node, memory_order_relaxed);
			child_set(t, &im->child[1], n, memory_order_relaxed);
		}
		child_set(t, slot, im, memory_order_release);
	}
	t->s->n_entries++;
	goto out;
out_put:
	node_put(t, new_node);
out:
	xbpf_spin_unlock(&t->s->lock);
	return err;
}

static int lpm_delete(struct xbpf_map *map, const void *key)
{
	struct lpm_trie *t = map->priv;
	const uint8_t *kdata = (const uint8_t *)key + 4;
	_Atomic uint64_t *trim, *trim2;
	struct lpm_node *n, *parent = NULL, *c0, *c1;
	uint32_t prefixlen, ml = 0;
	int err = 0;

	memcpy(&prefixlen, key, 4);
	if (prefixlen > t->max_prefixlen)
		return -EINVAL;
	xbpf_spin_lock(&t->s->lock);
	trim = trim2 = &t->s->root;
	while ((n = N(t, atomic_load_explicit(trim, memory_order_relaxed)))) {
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
	t->s->n_entries--;
	c0 = child_get(t, n, 0, memory_order_relaxed);
	c1 = child_get(t, n, 1, memory_order_relaxed);
	if (c0 && c1) {
		/* still routes two subtrees: keep it as an intermediate */
		n->flags |= LPM_IM;
		goto out;
	}
	if (parent && (parent->flags & LPM_IM) && !c0 && !c1) {
		/* the parent intermediate only routed to n: replace it by n's sibling */
		struct lpm_node *p0 = child_get(t, parent, 0, memory_order_relaxed);
		struct lpm_node *sib = p0 == n ? child_get(t, parent, 1, memory_order_relaxed) : p0;

		child_set(t, trim2, sib, memory_order_release);
		node_put(t, parent);
		node_put(t, n);
		goto out;
	}
	child_set(t, trim, c0 ? c0 : c1, memory_order_release);
	node_put(t, n);
out:
	xbpf_spin_unlock(&t->s->lock);
	return err;
}

/* Post-order (children before parent, child 0 first), as the kernel's. */
static int lpm_collect(const struct lpm_trie *t, struct lpm_node *n, struct lpm_node **out,
		       uint32_t *cnt, uint32_t cap, uint32_t depth)
{
	if (!n || depth > 2 * 8 * 256 + 2)
		return 0;
	lpm_collect(t, child_get(t, n, 0, memory_order_relaxed), out, cnt, cap, depth + 1);
	lpm_collect(t, child_get(t, n, 1, memory_order_relaxed), out, cnt, cap, depth + 1);
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
	xbpf_spin_lock(&t->s->lock);
	lpm_collect(t, N(t, atomic_load_explicit(&t->s->root, memory_order_relaxed)), nodes, &cnt,
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
	xbpf_spin_unlock(&t->s->lock);
	free(nodes);
	return err;
}

const struct xbpf_map_ops __xbpf_lpm_ops = {
	.shareable = true,
	.mem_size = lpm_mem_size,
	.init = lpm_init,
	.free = lpm_free,
	.lookup_raw = lpm_lookup_raw,
	.update = lpm_update,
	.delete = lpm_delete,
	.get_next_key = lpm_get_next_key,
};
