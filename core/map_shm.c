// SPDX-License-Identifier: MIT
/*
 * map_shm.c - making maps: spec checks, and where a map's storage lives:
 * private memory, or a file that several processes map at once (shared
 * maps, a userspace "bpffs").
 *
 * Why: the DPDK path runs the balancer inside xlb-dpdk while xlbd programs
 * its maps, and either process may restart (even after kill -9) without the
 * other losing the connection table.  The kernel keeps its maps alive
 * through bpffs pins; here a map's storage is a file, normally on tmpfs
 * under a runtime directory (/run/xlb-dpdk/maps/NAME), mapped MAP_SHARED by
 * every process that opens it, and alive as long as the file is.
 *
 * Design:
 * - Position-independent layouts, not a fixed mapping address.  Every
 *   family keeps its whole state (locks, counters, free lists, hash
 *   chains, ring positions) in one area, and links inside it are offsets
 *   from the area's storage, never pointers.  Each process maps the file
 *   wherever its address space has room (a fixed address would collide
 *   with DPDK's own reservations and with ASLR) and builds a process-local
 *   view (struct xbpf_map, map->priv) over it.  The lock-free readers of
 *   the hash maps and the control plane's double-buffered rings work
 *   across processes unchanged: they only ever relied on the ordering of
 *   stores into that memory, which MAP_SHARED pages keep between
 *   processes as between threads.
 * - One storage format for private and shared maps: a header (magic,
 *   layout version, the spec and CPU count, sizes), then the family area.
 *   Private maps are the same bytes in calloc'ed memory, so every map test
 *   exercises the layout the shared maps use.
 * - Creation is atomic: the file is built under a temporary name, fully
 *   laid out, then link()ed to its name.  A process that loses the race
 *   (EEXIST) attaches to the winner's map; nobody ever sees a half-built
 *   map.  Attaching checks the header against the wanted spec and refuses
 *   a file that holds another map (-EEXIST), another layout version or
 *   another word order (-EPROTO): nothing silently reinterprets a map.
 * - Locks in the area carry the owner's pid (lock.c), so a process killed
 *   inside a writer section does not wedge the others.
 * - Not shareable: maps of maps, whose values are process-local map
 *   handles; -EOPNOTSUPP.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_impl.h"

static int storage_private(struct xbpf_map *map);
static void storage_free(struct xbpf_map *map);

/* ---- specs ------------------------------------------------------------------------ */

static bool is_percpu(enum xbpf_map_type type)
{
	return type == XBPF_MAP_PERCPU_ARRAY || type == XBPF_MAP_PERCPU_HASH ||
	       type == XBPF_MAP_LRU_PERCPU_HASH;
}

/* Largest value the kernel accepts for per-CPU maps (PCPU_MIN_UNIT_SIZE). */
#define XBPF_PERCPU_VALUE_MAX 32768
/*
 * Refuse maps whose storage would exceed this: a typo, not a real map.
 * Fuzz builds lower it: ASan's calloc() zeroes big blocks eagerly.
 */
#ifndef XBPF_MAP_MEM_MAX
#define XBPF_MAP_MEM_MAX (1ull << 32)
#endif

/* Kernel-style checks of a spec; -EINVAL or -E2BIG. */
static int check_spec(const struct xbpf_map_spec *spec, int nr_cpus)
{
	uint64_t per_key, total;

	if (spec->map_flags & ~XBPF_F_KNOWN_MAP_FLAGS)
		return -EINVAL;
	switch (spec->type) {
	case XBPF_MAP_ARRAY:
	case XBPF_MAP_PERCPU_ARRAY:
		if (spec->key_size != 4 || !spec->value_size || !spec->max_entries)
			return -EINVAL;
		break;
	case XBPF_MAP_HASH:
	case XBPF_MAP_PERCPU_HASH:
	case XBPF_MAP_LRU_HASH:
	case XBPF_MAP_LRU_PERCPU_HASH:
		if (!spec->key_size || !spec->value_size || !spec->max_entries)
			return -EINVAL;
		if (spec->key_size > XBPF_STACK_SIZE)
			return -E2BIG;
		if ((spec->type == XBPF_MAP_HASH || spec->type == XBPF_MAP_PERCPU_HASH) &&
		    (spec->map_flags & BPF_F_NO_COMMON_LRU))
			return -EINVAL;
		break;
	case XBPF_MAP_LPM_TRIE:
		/* prefixlen (u32) + 1..256 data bytes; the kernel insists on NO_PREALLOC */
		if (spec->key_size < 5 || spec->key_size > 4 + 256 || !spec->value_size ||
		    !spec->max_entries || !(spec->map_flags & BPF_F_NO_PREALLOC))
			return -EINVAL;
		if (spec->value_size > 4096)
			return -E2BIG;
		break;
	case XBPF_MAP_ARRAY_OF_MAPS:
	case XBPF_MAP_HASH_OF_MAPS:
		if (!spec->key_size || spec->value_size != 4 || !spec->max_entries || !spec->inner)
			return -EINVAL;
		if (spec->type == XBPF_MAP_ARRAY_OF_MAPS && spec->key_size != 4)
			return -EINVAL;
		if (spec->key_size > XBPF_STACK_SIZE)
			return -E2BIG;
		if (__xbpf_is_map_of_maps(spec->inner->type) || spec->inner->inner)
			return -EINVAL; /* one level only, as the kernel */
		{
			int err = check_spec(spec->inner, nr_cpus);

			if (err)
				return err;
		}
		break;
	case XBPF_MAP_DEVMAP:
		if (spec->key_size != 4 || (spec->value_size != 4 && spec->value_size != 8) ||
		    !spec->max_entries)
			return -EINVAL;
		break;
	case XBPF_MAP_PROG_ARRAY:
		if (spec->key_size != 4 || spec->value_size != 4 || !spec->max_entries)
			return -EINVAL;
		break;
	case XBPF_MAP_RINGBUF:
		if (spec->key_size || spec->value_size || spec->max_entries < XBPF_PAGE_SIZE ||
		    (spec->max_entries & (spec->max_entries - 1)))
			return -EINVAL;
		if (spec->max_entries > (1u << 30))
			return -E2BIG;
		return 0;
	default:
		return -EINVAL;
	}
	/* A bpf_spin_lock: in hash and array values, inside the value, with its BTF (map_check_btf()). */
	if (spec->has_spin_lock) {
		if (!spec->value_btf || spec->spin_lock_off % 4 || spec->spin_lock_off + 4 > spec->value_size)
			return -EINVAL;
		if (spec->type != XBPF_MAP_HASH && spec->type != XBPF_MAP_ARRAY)
			return -EOPNOTSUPP;
	}
	if (is_percpu(spec->type) && spec->value_size > XBPF_PERCPU_VALUE_MAX)
		return -E2BIG;
	/* key + value per entry, every CPU: must not overflow nor be absurd */
	per_key = XBPF_ROUND_UP((uint64_t)spec->key_size, 8) + 64 +
		  XBPF_ROUND_UP((uint64_t)spec->value_size, 8) * (is_percpu(spec->type) ? nr_cpus : 1);
	if (__builtin_mul_overflow(per_key, (uint64_t)spec->max_entries, &total) ||
	    total > XBPF_MAP_MEM_MAX)
		return -E2BIG;
	return 0;
}

static const struct xbpf_map_ops *map_ops(enum xbpf_map_type type)
{
	switch (type) {
	case XBPF_MAP_ARRAY:
	case XBPF_MAP_PERCPU_ARRAY:
		return &__xbpf_array_ops;
	case XBPF_MAP_ARRAY_OF_MAPS:
	case XBPF_MAP_DEVMAP:
	case XBPF_MAP_PROG_ARRAY:
		return &__xbpf_fd_array_ops;
	case XBPF_MAP_HASH:
	case XBPF_MAP_PERCPU_HASH:
	case XBPF_MAP_LRU_HASH:
	case XBPF_MAP_LRU_PERCPU_HASH:
	case XBPF_MAP_HASH_OF_MAPS:
		return &__xbpf_htab_ops;
	case XBPF_MAP_LPM_TRIE:
		return &__xbpf_lpm_ops;
	case XBPF_MAP_RINGBUF:
		return &__xbpf_ringbuf_ops;
	}
	return NULL;
}

static int map_setup(struct xbpf_map *map, const struct xbpf_map_spec *spec, int nr_cpus)
{
	int err;

	if (!nr_cpus) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		nr_cpus = n < 1 ? 1 : n > XBPF_MAX_CPUS ? XBPF_MAX_CPUS : (int)n;
	}
	err = check_spec(spec, nr_cpus);
	if (err)
		return err;
	map->spec = *spec;
	if (!spec->has_spin_lock)
		map->spec.spin_lock_off = 0;
	map->spec.name[sizeof(map->spec.name) - 1] = '\0';
	map->spec.inner = NULL;
	if (spec->inner && __xbpf_is_map_of_maps(spec->type)) {
		map->inner_spec = *spec->inner;
		map->inner_spec.inner = NULL;
		map->spec.inner = &map->inner_spec;
	}
	map->ops = map_ops(spec->type);
	map->nr_cpus = nr_cpus;
	map->percpu = is_percpu(spec->type);
	map->val_size = __xbpf_is_map_of_maps(spec->type) || spec->type == XBPF_MAP_PROG_ARRAY ?
				sizeof(void *) : spec->value_size;
	map->stride = XBPF_ROUND_UP(map->val_size, 8);
	map->cpu_vals = map->percpu ? (uint32_t)nr_cpus : 1;
	pthread_mutex_init(&map->reg_lock, NULL);
	return 0;
}

static void map_teardown(struct xbpf_map *map)
{
	if (!map->ops)
		return; /* never set up */
	pthread_mutex_destroy(&map->reg_lock);
	free(map->reg);
	map->reg = NULL;
	map->ops = NULL;
}

struct xbpf_map *xbpf_map__create(const struct xbpf_map_spec *spec, int nr_cpus)
{
	struct xbpf_map *map;
	int err;

	if (!spec || nr_cpus < 0 || nr_cpus > XBPF_MAX_CPUS)
		return xbpf_err_ptr(-EINVAL);
	map = calloc(1, sizeof(*map));
	if (!map)
		return xbpf_err_ptr(-ENOMEM);
	err = map_setup(map, spec, nr_cpus);
	if (!err)
		err = storage_private(map);
	if (err) {
		map_teardown(map);
		free(map);
		return xbpf_err_ptr(err);
	}
	return map;
}

struct xbpf_map *xbpf_map__free(struct xbpf_map *map)
{
	if (!map)
		return NULL;
	map->ops->free(map);
	storage_free(map);
	map_teardown(map);
	free(map);
	return NULL;
}

/* ---- the storage header -------------------------------------------------------- */

#define MAP_MAGIC "XBPFMAP"
/* Bump when a family's area layout changes at the same size (a new size is refused by the size check). */
#define MAP_LAYOUT 1
#define MAP_BYTE_ORDER 0x0102030405060708ull

struct map_hdr {
	char magic[8];
	uint32_t layout;
	uint32_t hdr_size;
	uint64_t byte_order;
	uint64_t mem_len;
	char name[XBPF_MAP_NAME_LEN];
	uint32_t type, key_size, value_size, max_entries, map_flags;
	uint32_t nr_cpus;
	/* value_btf | has_spin_lock << 1, and the lock's offset (zero in files from before). */
	uint32_t btf_flags, spin_lock_off;
};

_Static_assert(sizeof(struct map_hdr) <= XBPF_MAP_HDR_SIZE, "map header too big");

static size_t storage_len(const struct xbpf_map *map)
{
	return XBPF_MAP_HDR_SIZE + map->ops->mem_size(map);
}

static void hdr_fill(const struct xbpf_map *map, struct map_hdr *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAP_MAGIC, sizeof(MAP_MAGIC));
	h->layout = MAP_LAYOUT;
	h->hdr_size = XBPF_MAP_HDR_SIZE;
	h->byte_order = MAP_BYTE_ORDER;
	h->mem_len = map->mem_len;
	memcpy(h->name, map->spec.name, sizeof(h->name));
	h->type = map->spec.type;
	h->key_size = map->spec.key_size;
	h->value_size = map->spec.value_size;
	h->max_entries = map->spec.max_entries;
	h->map_flags = map->spec.map_flags;
	h->btf_flags = (uint32_t)map->spec.value_btf | (uint32_t)map->spec.has_spin_lock << 1;
	h->spin_lock_off = map->spec.spin_lock_off;
	h->nr_cpus = (uint32_t)map->nr_cpus;
}

/* Lay a fresh, zeroed storage out and build the view. */
static int storage_init(struct xbpf_map *map, uint8_t *mem, size_t len, bool fresh)
{
	int err;

	map->mem = mem;
	map->mem_len = len;
	map->area = mem + XBPF_MAP_HDR_SIZE;
	if (fresh)
		hdr_fill(map, (struct map_hdr *)mem);
	err = map->ops->init(map, fresh);
	if (err) {
		map->mem = map->area = NULL;
		map->mem_len = 0;
	}
	return err;
}

static int storage_private(struct xbpf_map *map)
{
	size_t len = storage_len(map);
	uint8_t *mem = calloc(1, len);
	int err;

	if (!mem)
		return -ENOMEM;
	err = storage_init(map, mem, len, true);
	if (err)
		free(mem);
	return err;
}

static void storage_free(struct xbpf_map *map)
{
	if (!map->mem)
		return;
	if (map->shared)
		munmap(map->mem, map->mem_len);
	else
		free(map->mem);
	map->mem = map->area = NULL;
}

/* ---- shared storage -------------------------------------------------------------- */

static bool shareable(const struct xbpf_map *map)
{
	/* Slots of maps of maps and program arrays hold this process's pointers. */
	return map->ops->shareable && map->spec.type != XBPF_MAP_ARRAY_OF_MAPS &&
	       map->spec.type != XBPF_MAP_HASH_OF_MAPS && map->spec.type != XBPF_MAP_PROG_ARRAY;
}

static int map_shared(struct xbpf_map *map, int fd, size_t len, bool fresh)
{
	uint8_t *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err;

	if (mem == MAP_FAILED)
		return -errno;
	map->shared = true;
	err = storage_init(map, mem, len, fresh);
	if (err) {
		munmap(mem, len);
		map->shared = false;
	}
	return err;
}

/* Build the map under a temporary name, then link it in: -EEXIST if someone was first. */
static int create_file(struct xbpf_map *map, const char *path)
{
	static _Atomic unsigned int seq;
	size_t len = storage_len(map);
	char tmp[4096];
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", path, (int)getpid(),
		     atomic_fetch_add(&seq, 1)) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
	if (fd < 0)
		return -errno;
	err = ftruncate(fd, (off_t)len) ? -errno : map_shared(map, fd, len, true);
	if (!err && link(tmp, path)) {
		err = -errno;
		storage_free(map);
		map->ops->free(map);
		map->priv = NULL;
		map->shared = false;
	}
	unlink(tmp);
	close(fd);
	return err;
}

static bool hdr_matches(const struct map_hdr *h, const struct xbpf_map_spec *spec)
{
	return h->type == (uint32_t)spec->type && h->key_size == spec->key_size &&
	       h->value_size == spec->value_size && h->max_entries == spec->max_entries &&
	       h->map_flags == spec->map_flags &&
	       /* a lock changes what the value is; BTF alone does not */
	       !!(h->btf_flags & 2) == spec->has_spin_lock &&
	       h->spin_lock_off == (spec->has_spin_lock ? spec->spin_lock_off : 0);
}

/* Attach to an existing map file; want NULL: whatever map it holds. */
static int attach_file(struct xbpf_map *map, const char *path, const struct xbpf_map_spec *want,
		       int nr_cpus)
{
	struct xbpf_map_spec spec = {};
	struct map_hdr h;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < XBPF_MAP_HDR_SIZE ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, MAP_MAGIC, sizeof(MAP_MAGIC))) {
		pr_warn("maps: %s is not a map file\n", path);
		err = -EPROTO;
		goto out;
	}
	if (h.layout != MAP_LAYOUT || h.byte_order != MAP_BYTE_ORDER ||
	    h.hdr_size != XBPF_MAP_HDR_SIZE) {
		pr_warn("maps: %s has storage layout %u (this build: %u)\n", path, h.layout, MAP_LAYOUT);
		err = -EPROTO;
		goto out;
	}
	if ((want && !hdr_matches(&h, want)) || (nr_cpus && h.nr_cpus != (uint32_t)nr_cpus)) {
		pr_warn("maps: %s holds another map (%s, key %u, value %u, max %u, flags %#x, %u CPUs; "
			"asked for key %u, value %u, max %u, flags %#x)\n", path,
			xbpf_map_type_name(h.type) ?: "?", h.key_size, h.value_size, h.max_entries,
			h.map_flags, h.nr_cpus, want ? want->key_size : h.key_size,
			want ? want->value_size : h.value_size, want ? want->max_entries : h.max_entries,
			want ? want->map_flags : h.map_flags);
		err = -EEXIST;
		goto out;
	}
	memcpy(spec.name, h.name, sizeof(spec.name));
	spec.name[sizeof(spec.name) - 1] = '\0';
	spec.type = h.type;
	spec.key_size = h.key_size;
	spec.value_size = h.value_size;
	spec.max_entries = h.max_entries;
	spec.map_flags = h.map_flags;
	spec.value_btf = h.btf_flags & 1;
	spec.has_spin_lock = h.btf_flags & 2;
	spec.spin_lock_off = h.spin_lock_off;
	if (h.nr_cpus < 1 || h.nr_cpus > XBPF_MAX_CPUS) {
		err = -EPROTO;
		goto out;
	}
	err = map_setup(map, &spec, (int)h.nr_cpus);
	if (err)
		goto out;
	if (!shareable(map)) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (h.mem_len != storage_len(map) || (uint64_t)st.st_size != h.mem_len) {
		pr_warn("maps: %s: size %lld, its header says %llu\n", path, (long long)st.st_size,
			(unsigned long long)h.mem_len);
		err = -EPROTO;
		goto out;
	}
	err = map_shared(map, fd, h.mem_len, false);
	if (!err)
		map->attached = true;
out:
	close(fd);
	return err;
}

struct xbpf_map *xbpf_map__open_shared(const char *path, const struct xbpf_map_spec *spec, int nr_cpus)
{
	struct xbpf_map *map;
	int err, tries;

	if (!path || !*path || nr_cpus < 0 || nr_cpus > XBPF_MAX_CPUS)
		return xbpf_err_ptr(-EINVAL);
	map = calloc(1, sizeof(*map));
	if (!map)
		return xbpf_err_ptr(-ENOMEM);
	/* attach, else create; a lost creation race means the file exists now */
	for (tries = 0; tries < 2; tries++) {
		err = attach_file(map, path, spec, nr_cpus);
		if (err != -ENOENT || !spec)
			break;
		err = map_setup(map, spec, nr_cpus);
		if (!err && !shareable(map))
			err = -EOPNOTSUPP;
		if (!err)
			err = create_file(map, path);
		if (err != -EEXIST)
			break;
		map_teardown(map);
		memset(map, 0, sizeof(*map));
	}
	if (err) {
		if (err == -EOPNOTSUPP)
			pr_warn("maps: %s: %s maps cannot be shared\n", path,
				xbpf_map_type_name(map->spec.type) ?: "these");
		map_teardown(map);
		free(map);
		return xbpf_err_ptr(err);
	}
	return map;
}

bool xbpf_map__reattached(const struct xbpf_map *map)
{
	return map && map->attached;
}

bool xbpf_map__is_shared(const struct xbpf_map *map)
{
	return map && map->shared;
}
