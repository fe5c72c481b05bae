// SPDX-License-Identifier: MIT
/*
 * maps.c - the map front end: spec validation, the bpf(2)-style control
 * API, maps of maps and the array families.
 *
 * Every family keeps its values in preallocated storage so that a program's
 * lookup is a pointer computation or a lock-free list walk; writers
 * serialise on per-bucket (hash) or per-map (trie, ring) locks, never on a
 * global one.  As with the kernel's preallocated maps, an element deleted
 * while a packet thread still holds its value pointer is recycled: the
 * program then sees the new contents, never unmapped memory.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "core_impl.h"

static const struct {
	enum xbpf_map_type type;
	const char *name;
} map_type_names[] = {
	{ XBPF_MAP_HASH, "hash" },
	{ XBPF_MAP_ARRAY, "array" },
	{ XBPF_MAP_PERCPU_HASH, "percpu_hash" },
	{ XBPF_MAP_PERCPU_ARRAY, "percpu_array" },
	{ XBPF_MAP_LRU_HASH, "lru_hash" },
	{ XBPF_MAP_LRU_PERCPU_HASH, "lru_percpu_hash" },
	{ XBPF_MAP_LPM_TRIE, "lpm_trie" },
	{ XBPF_MAP_ARRAY_OF_MAPS, "array_of_maps" },
	{ XBPF_MAP_HASH_OF_MAPS, "hash_of_maps" },
	{ XBPF_MAP_DEVMAP, "devmap" },
	{ XBPF_MAP_PROG_ARRAY, "prog_array" },
	{ XBPF_MAP_RINGBUF, "ringbuf" },
};

int xbpf_map_type_from_name(const char *name, enum xbpf_map_type *ret_type)
{
	size_t i;

	if (!name || !ret_type)
		return xbpf_err(-EINVAL);
	for (i = 0; i < sizeof(map_type_names) / sizeof(map_type_names[0]); i++) {
		if (!strcmp(map_type_names[i].name, name)) {
			*ret_type = map_type_names[i].type;
			return 0;
		}
	}
	return xbpf_err(-EINVAL);
}

const char *xbpf_map_type_name(enum xbpf_map_type type)
{
	size_t i;

	for (i = 0; i < sizeof(map_type_names) / sizeof(map_type_names[0]); i++)
		if (map_type_names[i].type == type)
			return map_type_names[i].name;
	return NULL;
}

const char *xbpf_map__name(const struct xbpf_map *map)
{
	return map ? map->spec.name : NULL;
}

const struct xbpf_map_spec *xbpf_map__spec(const struct xbpf_map *map)
{
	return map ? &map->spec : NULL;
}

int xbpf_map__nr_cpus(const struct xbpf_map *map)
{
	return map ? map->nr_cpus : xbpf_err(-EINVAL);
}

/* ---- maps of maps: id <-> pointer ------------------------------------------- */

static bool inner_matches(const struct xbpf_map_spec *want, const struct xbpf_map *inner)
{
	const struct xbpf_map_spec *have = &inner->spec;

	if (want->type != have->type || want->key_size != have->key_size ||
	    want->value_size != have->value_size ||
	    (want->map_flags & ~BPF_F_INNER_MAP) != (have->map_flags & ~BPF_F_INNER_MAP))
		return false;
	/* BPF_F_INNER_MAP lets inner maps differ in size, as in the kernel */
	return (want->map_flags & BPF_F_INNER_MAP) || want->max_entries == have->max_entries;
}

int xbpf_map__set_inner(struct xbpf_map *outer, uint32_t id, struct xbpf_map *inner)
{
	size_t i;
	int err = 0;

	if (!outer || !inner || !__xbpf_is_map_of_maps(outer->spec.type) || __xbpf_is_map_of_maps(inner->spec.type))
		return xbpf_err(-EINVAL);
	if (!inner_matches(&outer->inner_spec, inner))
		return xbpf_err(-EINVAL);
	pthread_mutex_lock(&outer->reg_lock);
	for (i = 0; i < outer->reg_cnt; i++) {
		if (outer->reg[i].id == id) {
			outer->reg[i].map = inner;
			goto out;
		}
	}
	if (outer->reg_cnt == outer->reg_cap) {
		size_t cap = outer->reg_cap ? outer->reg_cap * 2 : 8;
		struct xbpf_inner_ref *reg = realloc(outer->reg, cap * sizeof(*reg));

		if (!reg) {
			err = -ENOMEM;
			goto out;
		}
		outer->reg = reg;
		outer->reg_cap = cap;
	}
	outer->reg[outer->reg_cnt++] = (struct xbpf_inner_ref){ .id = id, .map = inner };
out:
	pthread_mutex_unlock(&outer->reg_lock);
	return xbpf_err(err);
}

static struct xbpf_map *inner_by_id(struct xbpf_map *outer, uint32_t id)
{
	struct xbpf_map *found = NULL;
	size_t i;

	pthread_mutex_lock(&outer->reg_lock);
	for (i = 0; i < outer->reg_cnt; i++)
		if (outer->reg[i].id == id)
			found = outer->reg[i].map;
	pthread_mutex_unlock(&outer->reg_lock);
	return found;
}

static int id_by_inner(struct xbpf_map *outer, const struct xbpf_map *inner, uint32_t *ret_id)
{
	int err = -ENOENT;
	size_t i;

	pthread_mutex_lock(&outer->reg_lock);
	for (i = 0; i < outer->reg_cnt; i++) {
		if (outer->reg[i].map == inner) {
			*ret_id = outer->reg[i].id;
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&outer->reg_lock);
	return err;
}

/* ---- control plane ---------------------------------------------------------- */

int xbpf_map__lookup(struct xbpf_map *map, const void *key, void *value)
{
	const uint8_t *raw;

	if (!map || !value || (!key && map->spec.key_size))
		return xbpf_err(-EINVAL);
	if (map->spec.type == XBPF_MAP_RINGBUF)
		return xbpf_err(-ENOTSUP);
	if (map->spec.type == XBPF_MAP_PROG_ARRAY)
		return xbpf_err(-EOPNOTSUPP); /* slots hold this process's loaded programs */
	raw = map->ops->lookup_raw(map, key);
	if (!raw)
		return xbpf_err(-ENOENT);
	if (__xbpf_is_map_of_maps(map->spec.type)) {
		struct xbpf_map *inner = atomic_load_explicit((_Atomic(struct xbpf_map *) *)raw,
							      memory_order_acquire);
		uint32_t id;

		if (!inner || id_by_inner(map, inner, &id))
			return xbpf_err(-ENOENT);
		memcpy(value, &id, sizeof(id));
		return 0;
	}
	if (!map->percpu) {
		memcpy(value, raw, map->spec.value_size);
		if (map->spec.has_spin_lock) /* a lock is no data (check_and_init_map_value()) */
			memset((uint8_t *)value + map->spec.spin_lock_off, 0, 4);
		return 0;
	}
	/* whole 8-byte slots: the kernel's copy_map_value_long() round-trips the padding too */
	memcpy(value, raw, (size_t)map->cpu_vals * map->stride);
	return 0;
}

int xbpf_map__update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags)
{
	if (!map || !value || (!key && map->spec.key_size))
		return xbpf_err(-EINVAL);
	if (flags > XBPF_EXIST)
		return xbpf_err(-EINVAL);
	if (map->frozen)
		return xbpf_err(-EPERM);
	if (map->spec.type == XBPF_MAP_RINGBUF)
		return xbpf_err(-ENOTSUP);
	/* A program array's slots hold loaded programs: xbpf_vm__prog_array_update(). */
	if (map->spec.type == XBPF_MAP_PROG_ARRAY)
		return xbpf_err(-EOPNOTSUPP);
	if (__xbpf_is_map_of_maps(map->spec.type)) {
		uint32_t id;
		struct xbpf_map *inner;

		memcpy(&id, value, sizeof(id));
		inner = inner_by_id(map, id);
		if (!inner)
			return xbpf_err(-EBADF); /* the kernel's answer to a bad fd */
		return xbpf_err(map->ops->update(map, key, &inner, flags, -1));
	}
	return xbpf_err(map->ops->update(map, key, value, flags, -1));
}

int xbpf_map__delete(struct xbpf_map *map, const void *key)
{
	if (!map || (!key && map->spec.key_size))
		return xbpf_err(-EINVAL);
	if (map->frozen)
		return xbpf_err(-EPERM);
	if (map->spec.type == XBPF_MAP_RINGBUF)
		return xbpf_err(-ENOTSUP);
	return xbpf_err(map->ops->delete(map, key));
}

int xbpf_map__freeze(struct xbpf_map *map)
{
	if (!map)
		return xbpf_err(-EINVAL);
	if (map->frozen)
		return xbpf_err(-EBUSY);
	map->frozen = true;
	return 0;
}

bool xbpf_map__is_frozen(const struct xbpf_map *map)
{
	return map && map->frozen;
}

int xbpf_map__get_next_key(struct xbpf_map *map, const void *key, void *next_key)
{
	if (!map || !next_key)
		return xbpf_err(-EINVAL);
	if (map->spec.type == XBPF_MAP_RINGBUF)
		return xbpf_err(-ENOTSUP);
	return xbpf_err(map->ops->get_next_key(map, key, next_key));
}

/* ---- data plane ------------------------------------------------------------- */

static void *array_lookup_raw(struct xbpf_map *map, const void *key);

void *xbpf_map__lookup_elem(struct xbpf_map *map, const void *key)
{
	uint8_t *raw;

	if (!map || !key || map->spec.type == XBPF_MAP_RINGBUF)
		return NULL;
	/* arrays (most lookups of a packet) without the indirect call */
	if (map->ops == &__xbpf_array_ops)
		raw = array_lookup_raw(map, key);
	else
		raw = map->ops->lookup_raw(map, key);
	if (!raw)
		return NULL;
	if (__xbpf_is_map_of_maps(map->spec.type))
		return atomic_load_explicit((_Atomic(void *) *)raw, memory_order_acquire);
	if (map->percpu)
		raw += (size_t)__xbpf_map_cpu(map) * map->stride;
	return raw;
}

static uint64_t lookup_fn_generic(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4, uint64_t a5)
{
	(void)a3, (void)a4, (void)a5;
	return (uintptr_t)xbpf_map__lookup_elem((struct xbpf_map *)(uintptr_t)map, (const void *)(uintptr_t)key);
}

static uint64_t lookup_fn_array(uint64_t map, uint64_t key, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct xbpf_map *m = (struct xbpf_map *)(uintptr_t)map;
	uint8_t *raw = __xbpf_array_elem(m, (const void *)(uintptr_t)key);

	(void)a3, (void)a4, (void)a5;
	if (raw && m->percpu)
		raw += (size_t)__xbpf_map_cpu(m) * m->stride;
	return (uintptr_t)raw;
}

void __xbpf_map_lookup_plan(const struct xbpf_map *map, struct xbpf_lookup_plan *ret_plan)
{
	memset(ret_plan, 0, sizeof(*ret_plan));
	ret_plan->kind = XBPF_LOOKUP_CALL;
	ret_plan->fn = lookup_fn_generic;
	ret_plan->map = map;
	if (!map)
		return;
	if (map->ops == &__xbpf_array_ops) {
		ret_plan->kind = map->percpu ? XBPF_LOOKUP_PERCPU_ARRAY : XBPF_LOOKUP_ARRAY;
		ret_plan->base = map->priv;
		ret_plan->max_entries = map->spec.max_entries;
		ret_plan->elem_size = map->cpu_vals * map->stride;
		ret_plan->cpu_size = map->percpu ? map->stride : 0;
		ret_plan->nr_cpus = (uint32_t)map->nr_cpus;
		ret_plan->fn = lookup_fn_array;
		if (map->percpu && (__xbpf_cpu_tls_offset() < INT32_MIN || __xbpf_cpu_tls_offset() > INT32_MAX))
			ret_plan->kind = XBPF_LOOKUP_CALL; /* not reachable as a 32-bit displacement */
		ret_plan->cpu_tls_off = (int32_t)__xbpf_cpu_tls_offset();
	} else if (map->ops == &__xbpf_htab_ops && !__xbpf_is_map_of_maps(map->spec.type)) {
		ret_plan->fn = __xbpf_htab_lookup_fn(map);
	}
}

int __xbpf_map_update_prog(struct xbpf_map *map, const void *key, const void *value, uint64_t flags)
{
	if (flags > XBPF_EXIST)
		return -EINVAL;
	switch (map->spec.type) {
	case XBPF_MAP_RINGBUF:
	case XBPF_MAP_ARRAY_OF_MAPS:
	case XBPF_MAP_HASH_OF_MAPS:
	case XBPF_MAP_DEVMAP:
	case XBPF_MAP_PROG_ARRAY:
		return -EOPNOTSUPP; /* the kernel's verifier refuses these */
	default:
		break;
	}
	return map->ops->update(map, key, value, flags, map->percpu ? (int)__xbpf_map_cpu(map) : -1);
}

int __xbpf_map_delete_prog(struct xbpf_map *map, const void *key)
{
	switch (map->spec.type) {
	case XBPF_MAP_PROG_ARRAY:
	case XBPF_MAP_RINGBUF:
	case XBPF_MAP_ARRAY_OF_MAPS:
	case XBPF_MAP_HASH_OF_MAPS:
		return -EOPNOTSUPP;
	default:
		break;
	}
	return map->ops->delete(map, key);
}

int __xbpf_prog_array_update(struct xbpf_map *map, uint32_t key, const void *prog)
{
	if (!map || map->spec.type != XBPF_MAP_PROG_ARRAY)
		return -EINVAL;
	if (!prog)
		return map->ops->delete(map, &key);
	return map->ops->update(map, &key, &prog, XBPF_ANY, -1);
}

const void *__xbpf_prog_array_get(struct xbpf_map *map, uint32_t key)
{
	const void *raw;

	if (key >= map->spec.max_entries)
		return NULL;
	raw = map->ops->lookup_raw(map, &key);
	return raw ? atomic_load_explicit((_Atomic(const void *) *)raw, memory_order_acquire) : NULL;
}

int __xbpf_map_init_value(struct xbpf_map *map, const void *data, size_t size)
{
	uint32_t zero = 0;
	uint8_t *raw;

	if (map->spec.type != XBPF_MAP_ARRAY || size > map->spec.value_size)
		return -EINVAL;
	raw = map->ops->lookup_raw(map, &zero);
	if (!raw)
		return -EINVAL;
	memcpy(raw, data, size);
	return 0;
}

/* ---- array, percpu_array ---------------------------------------------------- */

static size_t array_mem_size(const struct xbpf_map *map)
{
	return (size_t)map->spec.max_entries * map->cpu_vals * map->stride;
}

/* Arrays, slot arrays and the ring buffer: the area is the state, no view. */
static int area_init(struct xbpf_map *map, bool fresh)
{
	map->priv = map->area;
	return 0;
}

static void area_free(struct xbpf_map *map)
{
}

static void *array_lookup_raw(struct xbpf_map *map, const void *key)
{
	return __xbpf_array_elem(map, key);
}

/*
 * Every CPU's value of a per-CPU element, in whole 8-byte words as the
 * kernel's bpf_long_memcpy() copies them: a program reading an 8-byte
 * field while the control plane rewrites it sees the old or the new word,
 * which xlb's fast-path epochs rely on (dataplane/xlb_shared.h).  The
 * stride is a multiple of 8 and elements are 8-aligned.
 */
static void copy_percpu_words(uint8_t *dst, const void *value, size_t len)
{
	_Atomic uint64_t *d = (_Atomic uint64_t *)(void *)dst;

	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w;

		memcpy(&w, (const uint8_t *)value + i * 8, 8);
		atomic_store_explicit(&d[i], w, memory_order_relaxed);
	}
}

static void copy_values(struct xbpf_map *map, uint8_t *dst, const void *value, int cpu)
{
	if (!map->percpu) {
		__xbpf_value_write(map, dst, value, false);
		return;
	}
	if (cpu >= 0) {
		memcpy(dst + (size_t)cpu * map->stride, value, map->val_size);
		return;
	}
	copy_percpu_words(dst, value, (size_t)map->cpu_vals * map->stride);
}

static int array_update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags,
			int cpu)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= map->spec.max_entries)
		return -E2BIG;
	if (flags == XBPF_NOEXIST)
		return -EEXIST; /* every element of an array exists */
	copy_values(map, array_lookup_raw(map, key), value, cpu);
	return 0;
}

static int array_delete(struct xbpf_map *map, const void *key)
{
	return -EINVAL;
}

static int array_get_next_key(struct xbpf_map *map, const void *key, void *next_key)
{
	uint32_t idx = 0, next;

	if (key)
		memcpy(&idx, key, sizeof(idx));
	if (!key || idx >= map->spec.max_entries) {
		next = 0;
	} else {
		if (idx == map->spec.max_entries - 1)
			return -ENOENT;
		next = idx + 1;
	}
	memcpy(next_key, &next, sizeof(next));
	return 0;
}

const struct xbpf_map_ops __xbpf_array_ops = {
	.shareable = true,
	.mem_size = array_mem_size,
	.init = area_init,
	.free = area_free,
	.lookup_raw = array_lookup_raw,
	.update = array_update,
	.delete = array_delete,
	.get_next_key = array_get_next_key,
};

/*
 * array_of_maps and devmap: slots that may be empty.  A slot's value is
 * published with a release store of its `used` word after the value.
 */
struct fd_slot_hdr {
	_Atomic uint64_t used;
};

static size_t fd_slot_size(const struct xbpf_map *map)
{
	return sizeof(struct fd_slot_hdr) + map->stride;
}

static size_t fd_array_mem_size(const struct xbpf_map *map)
{
	return (size_t)map->spec.max_entries * fd_slot_size(map);
}

static struct fd_slot_hdr *fd_slot(struct xbpf_map *map, uint32_t idx)
{
	return (struct fd_slot_hdr *)((uint8_t *)map->priv + (size_t)idx * fd_slot_size(map));
}

static void *fd_array_lookup_raw(struct xbpf_map *map, const void *key)
{
	struct fd_slot_hdr *slot;
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= map->spec.max_entries)
		return NULL;
	slot = fd_slot(map, idx);
	if (!atomic_load_explicit(&slot->used, memory_order_acquire))
		return NULL;
	return slot + 1;
}

static int fd_array_update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags,
			   int cpu)
{
	struct fd_slot_hdr *slot;
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= map->spec.max_entries)
		return -E2BIG;
	if (flags == XBPF_NOEXIST)
		return -EEXIST;
	slot = fd_slot(map, idx);
	if (map->spec.type == XBPF_MAP_DEVMAP) {
		uint32_t v[2] = { 0, 0 };

		memcpy(v, value, map->spec.value_size);
		if (v[1]) /* a devmap program fd: not available in userspace */
			return -EOPNOTSUPP;
		if (!v[0]) {
			/* ifindex 0 empties the slot, as in the kernel */
			atomic_store_explicit(&slot->used, 0, memory_order_release);
			return 0;
		}
		atomic_store_explicit(&slot->used, 0, memory_order_release);
		memcpy(slot + 1, v, map->spec.value_size);
		atomic_store_explicit(&slot->used, 1, memory_order_release);
		return 0;
	}
	/* array_of_maps, prog_array: value is the inner map's or the loaded program's pointer */
	atomic_store_explicit((_Atomic(void *) *)(slot + 1), *(void *const *)value,
			      memory_order_release);
	atomic_store_explicit(&slot->used, 1, memory_order_release);
	return 0;
}

static int fd_array_delete(struct xbpf_map *map, const void *key)
{
	struct fd_slot_hdr *slot;
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= map->spec.max_entries)
		return -EINVAL;
	slot = fd_slot(map, idx);
	if (!atomic_exchange_explicit(&slot->used, 0, memory_order_acq_rel))
		return -ENOENT;
	if (map->spec.type == XBPF_MAP_ARRAY_OF_MAPS || map->spec.type == XBPF_MAP_PROG_ARRAY)
		atomic_store_explicit((_Atomic(void *) *)(slot + 1), NULL, memory_order_release);
	return 0;
}

/* devmaps share; arrays of maps hold process-local handles (refused in map_shm.c) */
const struct xbpf_map_ops __xbpf_fd_array_ops = {
	.shareable = true,
	.mem_size = fd_array_mem_size,
	.init = area_init,
	.free = area_free,
	.lookup_raw = fd_array_lookup_raw,
	.update = fd_array_update,
	.delete = fd_array_delete,
	.get_next_key = array_get_next_key,
};

/* ---- ringbuf ------------------------------------------------------------------ */

/*
 * Records are an 8-byte header (u32 length, u32 reserved) and the data
 * rounded up to 8 bytes, like the kernel's.  A record reserved by
 * bpf_ringbuf_reserve() carries the BUSY bit in its length until it is
 * submitted or discarded (DISCARD bit): the consumer stops at a busy one
 * and skips discarded ones, in order, as the kernel's does.  A reserved
 * record is handed to the program as one piece of memory, and the kernel
 * maps its ring twice to get that across the end.  Here the ring's data is
 * followed by a shadow of the same size: a record that crosses the end is
 * reserved in one piece running into the shadow, and its submit copies the
 * part past the end to the start of the ring before the record stops being
 * busy (the consumer never reads the shadow).  So the ring takes exactly the
 * reservations the kernel's takes.  The header's second word holds the
 * record's offset in the ring, as the kernel's holds its page offset, for
 * submit to find the ring.  (A ring file of the shadowless size is refused by
 * its size, map_shm.c; other maps' files are unchanged.)  Producers serialise on a spin lock (the
 * kernel's does too); the consumer is the control thread.
 */
#define RINGBUF_HDR_SZ 8
#define RINGBUF_BUSY (1u << 31)
#define RINGBUF_DISCARD (1u << 30)
/* The kernel's RINGBUF_MAX_RECORD_SZ. */
#define RINGBUF_MAX_RECORD (UINT32_MAX / 4)

struct ringbuf {
	xbpf_spinlock_t lock;
	_Atomic uint64_t prod;
	_Atomic uint64_t cons;
	uint64_t mask;
	uint8_t data[];
};

/* The ring and its shadow (untouched pages of a shared or anonymous mapping cost nothing). */
static size_t ringbuf_mem_size(const struct xbpf_map *map)
{
	return sizeof(struct ringbuf) + 2 * (size_t)map->spec.max_entries;
}

static int ringbuf_init(struct xbpf_map *map, bool fresh)
{
	struct ringbuf *rb = (struct ringbuf *)map->area;

	if (fresh)
		rb->mask = map->spec.max_entries - 1;
	else if (rb->mask != map->spec.max_entries - 1)
		return -EPROTO;
	map->priv = rb;
	return 0;
}

static void ring_copy_in(struct ringbuf *rb, uint64_t pos, const void *src, size_t len)
{
	size_t off = pos & rb->mask, first = rb->mask + 1 - off;

	if (first > len)
		first = len;
	memcpy(rb->data + off, src, first);
	memcpy(rb->data, (const uint8_t *)src + first, len - first);
}

static void ring_copy_out(struct ringbuf *rb, uint64_t pos, void *dst, size_t len)
{
	size_t off = pos & rb->mask, first = rb->mask + 1 - off;

	if (first > len)
		first = len;
	memcpy(dst, rb->data + off, first);
	memcpy((uint8_t *)dst + first, rb->data, len - first);
}

/* The length word of the record at pos (headers are 8-aligned: never split by the end). */
static _Atomic uint32_t *ring_hdr(struct ringbuf *rb, uint64_t pos)
{
	return (_Atomic uint32_t *)(void *)(rb->data + (pos & rb->mask));
}

/*
 * Room for need bytes at the producer position, under the lock: the
 * producer may run at most ring size - 1 bytes ahead of the consumer (the
 * kernel's rule).  The position of the room, or -1.
 */
static int64_t ring_claim(struct ringbuf *rb, uint64_t need)
{
	uint64_t prod = atomic_load_explicit(&rb->prod, memory_order_relaxed);
	uint64_t cons = atomic_load_explicit(&rb->cons, memory_order_acquire);

	if (prod + need - cons > rb->mask)
		return -1;
	return (int64_t)prod;
}

int __xbpf_ringbuf_output(struct xbpf_map *map, const void *data, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb;
	uint32_t hdr[2];
	uint64_t need;
	int64_t prod;

	if (map->spec.type != XBPF_MAP_RINGBUF)
		return -EINVAL;
	/* BPF_RB_NO_WAKEUP / BPF_RB_FORCE_WAKEUP only */
	if (flags & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return -EINVAL;
	rb = map->priv;
	if (size > RINGBUF_MAX_RECORD || size > rb->mask + 1 - RINGBUF_HDR_SZ)
		return -EAGAIN;
	need = RINGBUF_HDR_SZ + XBPF_ROUND_UP(size, 8);
	xbpf_spin_lock(&rb->lock);
	prod = ring_claim(rb, need);
	if (prod < 0) {
		xbpf_spin_unlock(&rb->lock);
		return -EAGAIN;
	}
	hdr[0] = (uint32_t)size;
	hdr[1] = 0;
	ring_copy_in(rb, (uint64_t)prod, hdr, sizeof(hdr));
	ring_copy_in(rb, (uint64_t)prod + RINGBUF_HDR_SZ, data, size);
	atomic_store_explicit(&rb->prod, (uint64_t)prod + need, memory_order_release);
	xbpf_spin_unlock(&rb->lock);
	return 0;
}

void *__xbpf_ringbuf_reserve(struct xbpf_map *map, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb;
	uint64_t need;
	int64_t prod;

	if (map->spec.type != XBPF_MAP_RINGBUF || flags)
		return NULL;
	rb = map->priv;
	need = RINGBUF_HDR_SZ + XBPF_ROUND_UP(size, 8);
	if (size > RINGBUF_MAX_RECORD || need > rb->mask + 1)
		return NULL;
	xbpf_spin_lock(&rb->lock);
	prod = ring_claim(rb, need);
	if (prod < 0) {
		xbpf_spin_unlock(&rb->lock);
		return NULL;
	}
	/* Busy until committed: the consumer waits at it. */
	atomic_store_explicit(ring_hdr(rb, (uint64_t)prod), (uint32_t)size | RINGBUF_BUSY,
			      memory_order_relaxed);
	atomic_store_explicit(ring_hdr(rb, (uint64_t)prod) + 1, (uint32_t)((uint64_t)prod & rb->mask),
			      memory_order_relaxed);
	atomic_store_explicit(&rb->prod, (uint64_t)prod + need, memory_order_release);
	xbpf_spin_unlock(&rb->lock);
	return rb->data + ((uint64_t)prod & rb->mask) + RINGBUF_HDR_SZ;
}

void __xbpf_ringbuf_commit(void *sample, bool discard)
{
	_Atomic uint32_t *hdr = (_Atomic uint32_t *)(void *)((uint8_t *)sample - RINGBUF_HDR_SZ);
	uint32_t len = atomic_load_explicit(hdr, memory_order_relaxed) & ~RINGBUF_BUSY;
	uint64_t off = atomic_load_explicit(hdr + 1, memory_order_relaxed);
	struct ringbuf *rb = (struct ringbuf *)(void *)((uint8_t *)hdr - off - offsetof(struct ringbuf, data));
	uint64_t end = off + RINGBUF_HDR_SZ + len;

	/* The part written past the end of the ring, into the shadow, goes to its start. */
	if (!discard && end > rb->mask + 1)
		memcpy(rb->data, rb->data + rb->mask + 1, end - (rb->mask + 1));

	/* Release: the record's bytes are visible before the consumer sees it done. */
	atomic_store_explicit(hdr, len | (discard ? RINGBUF_DISCARD : 0), memory_order_release);
}

uint64_t __xbpf_ringbuf_query(struct xbpf_map *map, uint64_t flags)
{
	struct ringbuf *rb = map->priv;
	uint64_t cons = atomic_load_explicit(&rb->cons, memory_order_acquire);
	uint64_t prod = atomic_load_explicit(&rb->prod, memory_order_acquire);

	switch (flags) {
	case BPF_RB_AVAIL_DATA:
		return prod - cons;
	case BPF_RB_RING_SIZE:
		return rb->mask + 1;
	case BPF_RB_CONS_POS:
		return cons;
	case BPF_RB_PROD_POS:
		return prod;
	default:
		return 0;
	}
}

int xbpf_map__ringbuf_consume(struct xbpf_map *map, void *buf, size_t len)
{
	struct ringbuf *rb;
	uint64_t cons, prod;
	uint32_t hdr;

	if (!map || map->spec.type != XBPF_MAP_RINGBUF || (!buf && len))
		return xbpf_err(-EINVAL);
	rb = map->priv;
	cons = atomic_load_explicit(&rb->cons, memory_order_relaxed);
	for (;;) {
		prod = atomic_load_explicit(&rb->prod, memory_order_acquire);
		if (cons == prod)
			return xbpf_err(-EAGAIN);
		hdr = atomic_load_explicit(ring_hdr(rb, cons), memory_order_acquire);
		if (hdr & RINGBUF_BUSY)
			return xbpf_err(-EAGAIN); /* reserved, not yet submitted: later ones wait */
		if (!(hdr & RINGBUF_DISCARD))
			break;
		cons += RINGBUF_HDR_SZ + XBPF_ROUND_UP(hdr & ~RINGBUF_DISCARD, 8);
		atomic_store_explicit(&rb->cons, cons, memory_order_release);
	}
	if (hdr > len)
		return xbpf_err(-ENOSPC); /* record stays; retry with a larger buffer */
	ring_copy_out(rb, cons + RINGBUF_HDR_SZ, buf, hdr);
	atomic_store_explicit(&rb->cons, cons + RINGBUF_HDR_SZ + XBPF_ROUND_UP(hdr, 8),
			      memory_order_release);
	return (int)hdr;
}

static void *ringbuf_lookup_raw(struct xbpf_map *map, const void *key)
{
	return NULL;
}

static int ringbuf_update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags,
			  int cpu)
{
	return -ENOTSUP;
}

static int ringbuf_delete(struct xbpf_map *map, const void *key)
{
	return -ENOTSUP;
}

static int ringbuf_get_next_key(struct xbpf_map *map, const void *key, void *next_key)
{
	return -ENOTSUP;
}

const struct xbpf_map_ops __xbpf_ringbuf_ops = {
	.shareable = true,
	.mem_size = ringbuf_mem_size,
	.init = ringbuf_init,
	.free = area_free,
	.lookup_raw = ringbuf_lookup_raw,
	.update = ringbuf_update,
	.delete = ringbuf_delete,
	.get_next_key = ringbuf_get_next_key,
};
