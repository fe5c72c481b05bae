// SPDX-License-Identifier: MIT
/*
 * map_shm.c - where a map's storage lives: private memory, or a file that
 * several processes map at once (shared maps, a userspace "bpffs").
 *
 * Why: the DPDK path runs the balancer inside xlb-dpdk while xlbd programs
 * its maps, and either process may restart (even after kill -9) without the
 * other losing the connection table.  The kernel keeps its maps alive
 * through bpffs pins; here a map's storage is a file, normally on tmpfs
 * under a runtime directory (/run/xlb/dpdk/maps/NAME), mapped MAP_SHARED by
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
 * - Locks in the area carry the owner's pid (core_impl.h), so a process
 *   killed inside a writer section does not wedge the others.
 * - Not shareable: maps of maps (their values are process-local map
 *   handles) and lpm_trie (pointer-linked nodes); -EOPNOTSUPP.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_impl.h"

/* ---- owner-tagged spin locks ------------------------------------------------- */

uint32_t __xbpf_lock_pid;

static void refresh_lock_pid(void)
{
	__xbpf_lock_pid = (uint32_t)getpid();
}

__attribute__((constructor)) static void lock_pid_init(void)
{
	refresh_lock_pid();
	pthread_atfork(NULL, NULL, refresh_lock_pid);
}

static bool owner_is_dead(uint32_t owner)
{
	return owner && owner != __xbpf_lock_pid && kill((pid_t)owner, 0) < 0 && errno == ESRCH;
}

void __xbpf_spin_lock_slow(xbpf_spinlock_t *lock)
{
	unsigned int spins = 0, yields = 0;
	uint32_t seen = 0;

	for (;;) {
		uint32_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);

		if (!owner && atomic_compare_exchange_weak_explicit(&lock->owner, &owner, __xbpf_lock_pid,
								     memory_order_acquire,
								     memory_order_relaxed))
			return;
		if (++spins <= 64)
			continue;
		spins = 0;
		sched_yield();
		if (owner != seen) {
			seen = owner;
			yields = 0;
		}
		/* the same owner for ~a thousand yields: is it still alive? */
		if (++yields >= 1024) {
			yields = 0;
			if (owner_is_dead(owner) &&
			    atomic_compare_exchange_strong_explicit(&lock->owner, &owner, __xbpf_lock_pid,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				pr_warn("maps: took over a lock held by pid %u, which died holding it\n",
					owner);
				return;
			}
		}
	}
}

/* ---- the storage header -------------------------------------------------------- */

#define MAP_MAGIC "XBPFMAP"
/* Bump when any family's area layout changes. */
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

int __xbpf_map_storage_private(struct xbpf_map *map)
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

void __xbpf_map_storage_free(struct xbpf_map *map)
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
	return map->ops->shareable && map->spec.type != XBPF_MAP_ARRAY_OF_MAPS &&
	       map->spec.type != XBPF_MAP_HASH_OF_MAPS;
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
		__xbpf_map_storage_free(map);
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
	       h->map_flags == spec->map_flags;
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
		pr_warn("maps: %s holds another map (%s, key %u, value %u, max %u, flags %#x, %u CPUs)\n",
			path, xbpf_map_type_name(h.type) ?: "?", h.key_size, h.value_size,
			h.max_entries, h.map_flags, h.nr_cpus);
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
	if (h.nr_cpus < 1 || h.nr_cpus > XBPF_MAX_CPUS) {
		err = -EPROTO;
		goto out;
	}
	err = __xbpf_map_setup(map, &spec, (int)h.nr_cpus);
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
		err = __xbpf_map_setup(map, spec, nr_cpus);
		if (!err && !shareable(map))
			err = -EOPNOTSUPP;
		if (!err)
			err = create_file(map, path);
		if (err != -EEXIST)
			break;
		__xbpf_map_teardown(map);
		memset(map, 0, sizeof(*map));
	}
	if (err) {
		if (err == -EOPNOTSUPP)
			pr_warn("maps: %s: %s maps cannot be shared\n", path,
				xbpf_map_type_name(map->spec.type) ?: "these");
		__xbpf_map_teardown(map);
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
