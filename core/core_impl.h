/* SPDX-License-Identifier: MIT */
/*
 * core_impl.h - private structures of the runtime core (loader, maps,
 * helpers, contexts).  Nothing here is part of the public contract; what the
 * verifier and the engines share with the core is in libxbpf_internal.h.
 */
#ifndef XBPF_CORE_IMPL_H
#define XBPF_CORE_IMPL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/bpf.h>

#include "libxbpf_internal.h"

/* ---- maps -------------------------------------------------------------- */

#define XBPF_MAX_CPUS 1024
#define XBPF_F_KNOWN_MAP_FLAGS                                                                     \
	(BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | \
	 BPF_F_ZERO_SEED | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | BPF_F_MMAPABLE | BPF_F_INNER_MAP)

struct xbpf_map;

/*
 * One map family.  `cpu` < 0 means `value` holds every CPU's value (the
 * syscall layout, each rounded to 8 bytes); otherwise only that CPU's.
 * Values of maps of maps are stored as struct xbpf_map pointers here; the
 * id <-> pointer translation happens in maps.c.
 *
 * Storage: a family keeps its whole state in map->area, mem_size() bytes
 * that map_shm.c allocates (private: calloc; shared: a file mapped by every
 * process using the map), laid out with offsets only, never pointers, so
 * that each process may map it at another address.  init() builds the
 * process-local view (map->priv) over it: with `fresh` it also lays the
 * zeroed area out; without, the area was laid out by another process.
 * Families that are not position-independent (shareable false) allocate
 * their own private state in init() and ignore the area.
 */
struct xbpf_map_ops {
	bool shareable;
	size_t (*mem_size)(const struct xbpf_map *map);
	int (*init)(struct xbpf_map *map, bool fresh);
	/* Free the process-local view (not the area). */
	void (*free)(struct xbpf_map *map);
	/* Value storage of key (all CPUs, stride apart) or NULL. */
	void *(*lookup_raw)(struct xbpf_map *map, const void *key);
	int (*update)(struct xbpf_map *map, const void *key, const void *value, uint64_t flags, int cpu);
	int (*delete)(struct xbpf_map *map, const void *key);
	int (*get_next_key)(struct xbpf_map *map, const void *key, void *next_key);
};

struct xbpf_inner_ref {
	uint32_t id;
	struct xbpf_map *map;
};

struct xbpf_map {
	struct xbpf_map_spec spec;
	struct xbpf_map_spec inner_spec; /* copy of spec.inner, which points here */
	const struct xbpf_map_ops *ops;
	int nr_cpus;
	bool percpu;
	uint32_t val_size; /* stored bytes per value (8 for maps of maps) */
	uint32_t stride;   /* val_size rounded up to 8 */
	uint32_t cpu_vals; /* values per key: nr_cpus or 1 */

	/* maps of maps: the inner maps reachable by id */
	pthread_mutex_t reg_lock;
	struct xbpf_inner_ref *reg;
	size_t reg_cnt, reg_cap;

	/* storage (map_shm.c): header, then the family's area */
	uint8_t *mem;
	size_t mem_len;
	uint8_t *area;
	bool shared;   /* mem is a MAP_SHARED file mapping */
	bool attached; /* shared storage that existed before (re-attached) */
	/*
	 * Frozen (BPF_MAP_FREEZE): the control plane can no longer change it,
	 * so the verifier may read a read-only map's contents as constants.
	 */
	bool frozen;

	void *priv; /* family state: the process-local view */
};

/*
 * A map value written by an update: every byte but a bpf_spin_lock's, which
 * stays as it is (fresh: zero), as the kernel's copy_map_value() skips it.
 */
static inline void __xbpf_value_write(const struct xbpf_map *map, uint8_t *dst, const void *src,
				      bool fresh)
{
	uint32_t off = map->spec.spin_lock_off;

	if (!map->spec.has_spin_lock) {
		memcpy(dst, src, map->val_size);
		return;
	}
	memcpy(dst, src, off);
	memcpy(dst + off + 4, (const uint8_t *)src + off + 4, map->val_size - off - 4);
	if (fresh)
		memset(dst + off, 0, 4);
}

/* Storage header size: the family area starts this far into the storage. */
#define XBPF_MAP_HDR_SIZE 256

static inline bool __xbpf_is_map_of_maps(enum xbpf_map_type type)
{
	return type == XBPF_MAP_ARRAY_OF_MAPS || type == XBPF_MAP_HASH_OF_MAPS;
}

extern const struct xbpf_map_ops __xbpf_array_ops;
extern const struct xbpf_map_ops __xbpf_fd_array_ops; /* array_of_maps, devmap */
extern const struct xbpf_map_ops __xbpf_htab_ops;
extern const struct xbpf_map_ops __xbpf_lpm_ops;
extern const struct xbpf_map_ops __xbpf_ringbuf_ops;

int __xbpf_map_update_prog(struct xbpf_map *map, const void *key, const void *value, uint64_t flags);
int __xbpf_map_delete_prog(struct xbpf_map *map, const void *key);
int __xbpf_ringbuf_output(struct xbpf_map *map, const void *data, uint64_t size, uint64_t flags);
/* bpf_ringbuf_reserve(): a busy record of size bytes in one piece, or NULL (no room, flags). */
void *__xbpf_ringbuf_reserve(struct xbpf_map *map, uint64_t size, uint64_t flags);
/* bpf_ringbuf_submit() / bpf_ringbuf_discard() of a record reserve returned. */
void __xbpf_ringbuf_commit(void *sample, bool discard);
/* bpf_ringbuf_query(): BPF_RB_AVAIL_DATA, _RING_SIZE, _CONS_POS, _PROD_POS; 0 for other flags. */
uint64_t __xbpf_ringbuf_query(struct xbpf_map *map, uint64_t flags);
/* Fill a freshly created single-entry array (global data) with contents. */
int __xbpf_map_init_value(struct xbpf_map *map, const void *data, size_t size);

static inline uint32_t __xbpf_thread_cpu(void);

/* Current CPU, clamped to the map's CPU count. */
static inline uint32_t __xbpf_map_cpu(const struct xbpf_map *map)
{
	int cpu = (int)__xbpf_thread_cpu();

	if (cpu < 0)
		cpu = 0;
	/* the CPU is almost always in range: no division on the packet path */
	if ((uint32_t)cpu < (uint32_t)map->nr_cpus)
		return (uint32_t)cpu;
	return (uint32_t)cpu % (uint32_t)map->nr_cpus;
}

/*
 * array / percpu_array: the element of key (all CPUs' values for per-CPU
 * maps), NULL out of range.  Inline: it is the commonest lookup of a packet.
 */
static inline uint8_t *__xbpf_array_elem(const struct xbpf_map *map, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= map->spec.max_entries)
		return NULL;
	return (uint8_t *)map->priv + (size_t)idx * map->cpu_vals * map->stride;
}

/*
 * A spin lock for short writer sections (readers never take it).  It may
 * live in storage shared between processes, so the word holds the owner's
 * pid: a waiter that has spun long checks whether the owner still exists
 * and takes over the lock of a process killed inside its section (every
 * writer section keeps the structure readable at each store, so the worst
 * a dead writer leaves is one leaked element).
 */
typedef struct {
	_Atomic uint32_t owner;
} xbpf_spinlock_t;

extern uint32_t __xbpf_lock_pid;
void __xbpf_spin_lock_slow(xbpf_spinlock_t *lock);
static inline void xbpf_spin_lock(xbpf_spinlock_t *lock)
{
	uint32_t free_word = 0;

	if (!atomic_compare_exchange_strong_explicit(&lock->owner, &free_word, __xbpf_lock_pid,
						     memory_order_acquire, memory_order_relaxed))
		__xbpf_spin_lock_slow(lock);
}
static inline void xbpf_spin_unlock(xbpf_spinlock_t *lock)
{
	atomic_store_explicit(&lock->owner, 0, memory_order_release);
}

/* ---- contexts ------------------------------------------------------------ */

/* sizeof(struct xdp_frame) on 64-bit kernels: the head adjust floor. */
#define XBPF_XDP_FRAME_SIZE 40
/* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) on x86-64: test_run tailroom. */
#define XBPF_SKB_SHINFO_SIZE 320
#define XBPF_PAGE_SIZE 4096
#define XBPF_ETH_HLEN 14
/* NET_SKB_PAD + NET_IP_ALIGN, as test_run reserves for skbs. */
#define XBPF_SKB_HEADROOM 64

/*
 * A run context.  The UAPI image comes first so that R1 (pointing at it) can
 * be cast back to the whole struct by the helpers.
 */
struct xbpf_run_ctx {
	union {
		struct xdp_md xdp;
		struct __sk_buff skb;
	} md;
	enum xbpf_prog_type type;
	uint8_t *frame;	     /* the low-arena frame: hard start */
	uint32_t frame_size; /* bytes usable from frame (data_hard_end) */
	bool external;	     /* frame is the caller's buffer (xbpf_run_ctx__set_xdp_buf) */
	bool meta_valid;
	uint32_t l2_pulled;  /* socket filters: ETH_HLEN pulled before the run */
	uint32_t pkt_len;    /* skb: wire length as test_run keeps it (cb->pkt_len) */
	/*
	 * XDP: lowest data_meta and highest data_end since the last reset
	 * (dirty_hi NULL: the frame's contents are unknown).  Programs write
	 * only inside [data_meta, data_end), and only bpf_xdp_adjust_head/
	 * _meta/_tail move those outwards, so reset zeroes [dirty_lo, dirty_hi)
	 * around the restored packet instead of the whole slot.
	 */
	uint8_t *dirty_lo, *dirty_hi;

	/* input kept for reset */
	uint8_t *data_in;
	uint32_t data_size_in;
	uint32_t meta_len_in; /* XDP: metadata bytes at the start of data_in */
	union {
		struct xdp_md xdp;
		struct __sk_buff skb;
	} md_in;
	bool has_ctx_in;
	uint32_t ctx_size;
	uint8_t *raw; /* RAW_MEM: the malloc'ed copy */
};

/* Per-thread run state shared by helpers and contexts. */
struct xbpf_thread_state {
	int cpu;
	enum xbpf_prog_type prog_type;
	struct xbpf_redirect redirect;
	uint64_t prandom;
	/* the skb's tunnel metadata (ip_tunnel_info) that bpf_skb_set_tunnel_key() set this run */
	struct xbpf_tunnel_info {
		bool set;
		bool ipv6;
		uint16_t flags; /* IP_TUNNEL_*_BIT positions, as ip_tunnel_flags_to_be16() reads them */
		uint32_t id;
		uint8_t tos, ttl;
		uint32_t label;
		uint32_t dst[4], src[4]; /* host order words, as the program gave them */
	} tunnel;
};
/*
 * One per thread, in static TLS (initial-exec): its address is the same
 * offset from the thread pointer in every thread, so JITed code can read
 * the CPU id without a call (__xbpf_cpu_tls_offset()).
 */
extern __thread struct xbpf_thread_state __xbpf_thread_state __attribute__((tls_model("initial-exec")));

static inline struct xbpf_thread_state *__xbpf_thread(void)
{
	return &__xbpf_thread_state;
}

static inline uint32_t __xbpf_thread_cpu(void)
{
	return (uint32_t)__xbpf_thread_state.cpu;
}

/* The cheapest bpf_map_lookup_elem() of a hash family map: (map, key) -> value or NULL. */
xbpf_helper_fn __xbpf_htab_lookup_fn(const struct xbpf_map *map);

/* helpers_net.c: packet helpers and clocks beside helpers.c's (its impls table lists them). */
uint64_t __xbpf_h_xdp_get_buff_len(uint64_t r1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
uint64_t __xbpf_h_xdp_load_bytes(uint64_t r1, uint64_t offset, uint64_t buf, uint64_t len, uint64_t a5);
uint64_t __xbpf_h_xdp_store_bytes(uint64_t r1, uint64_t offset, uint64_t buf, uint64_t len, uint64_t a5);
uint64_t __xbpf_h_check_mtu(uint64_t r1, uint64_t ifindex, uint64_t mtu_len, uint64_t len_diff,
			    uint64_t flags);
uint64_t __xbpf_h_skb_vlan_push(uint64_t r1, uint64_t proto, uint64_t tci, uint64_t a4, uint64_t a5);
uint64_t __xbpf_h_skb_vlan_pop(uint64_t r1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
uint64_t __xbpf_h_ktime_get_coarse_ns(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
uint64_t __xbpf_h_ktime_get_tai_ns(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
uint64_t __xbpf_h_get_numa_node_id(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);

/* Low-arena frames: addresses below 4 GiB. */
void *__xbpf_frame_alloc(void);
void __xbpf_frame_free(void *frame);
#define XBPF_FRAME_SLOT (XBPF_FRAME_HEADROOM + XBPF_FRAME_MAX_DATA + XBPF_FRAME_TAILROOM)

static inline void *xbpf_u32_ptr(uint32_t v)
{
	return (void *)(uintptr_t)v;
}

static inline uint32_t xbpf_ptr_u32(const void *p)
{
	return (uint32_t)(uintptr_t)p;
}

/* ---- objects and programs -------------------------------------------------- */

struct xbpf_line {
	uint32_t insn;
	uint32_t line;
	uint32_t col;
	const char *file;
	const char *text;
};

struct xbpf_prog {
	struct xbpf_object *obj;
	char *name;
	char *section;
	enum xbpf_prog_type type;
	struct xbpf_insn *insns;
	size_t insn_cnt;
	struct xbpf_func_desc *funcs; /* names point into obj strings */
	size_t func_cnt;
	struct xbpf_line *lines; /* sorted by insn */
	size_t line_cnt;
	struct xbpf_func_sig *sigs; /* func_info, one per function; NULL without BTF */
	size_t sig_cnt;
};

struct xbpf_object {
	char *name;
	char license[128];
	struct xbpf_prog *progs;
	size_t prog_cnt;
	struct xbpf_map **maps;
	size_t map_cnt;
	/* strings the descriptors point into (function names, BTF strings) */
	char **strs;
	size_t str_cnt;
};

/* Keep a copy of s alive as long as obj; NULL on ENOMEM. */
const char *__xbpf_object_strdup(struct xbpf_object *obj, const char *s, size_t len);
struct xbpf_object *__xbpf_object_new(const char *name);
int __xbpf_object_add_map(struct xbpf_object *obj, struct xbpf_map *map);
struct xbpf_prog *__xbpf_object_add_prog(struct xbpf_object *obj);

/* ELF loading (elf.c/link.c/btf.c): fill obj from an ELF image. */
struct xbpf_elf_load_opts {
	int nr_cpus;
	const char *pin_root; /* shared maps' directory, or NULL */
	const struct xbpf_map_size *map_sizes;
	size_t map_size_cnt;
	const struct xbpf_global_value *globals;
	size_t global_cnt;
};
int __xbpf_elf_load(struct xbpf_object *obj, const void *buf, size_t size,
		    const struct xbpf_elf_load_opts *lopts);


/* ---- BTF (btf.c) ----------------------------------------------------------- */

struct btf_type;

/* A parsed, bounds-checked view of a .BTF section (points into the ELF image). */
struct xbpf_btf {
	const char *strs;
	uint32_t str_len;
	const struct btf_type **types; /* [nr_types + 1]; [0] is void (NULL) */
	uint32_t nr_types;
};

int __xbpf_btf_parse(const void *data, size_t size, struct xbpf_btf *btf);
void __xbpf_btf_free(struct xbpf_btf *btf);
/* Type by id, NULL for void or out of range. */
const struct btf_type *__xbpf_btf_type(const struct xbpf_btf *btf, uint32_t id);
/* Skip typedefs and qualifiers from id: the type reached (NULL: void, invalid, or a chain too long); *ret_id its id. */
const struct btf_type *__xbpf_btf_skip_mods(const struct xbpf_btf *btf, uint32_t id, uint32_t *ret_id);
/* String at off, NULL if off is outside the string section. */
const char *__xbpf_btf_str(const struct xbpf_btf *btf, uint32_t off);
/* Find a DATASEC by name: its type id or 0. */
uint32_t __xbpf_btf_find_datasec(const struct xbpf_btf *btf, const char *name);
/* Does DATASEC `name` hold a non-static variable (libbpf's "mmapable" rule)? */
bool __xbpf_btf_datasec_has_global(const struct xbpf_btf *btf, const char *name);
/* The variable `name` of a DATASEC: its section's name, offset and size; -ENOENT if none. */
int __xbpf_btf_find_var(const struct xbpf_btf *btf, const char *name, const char **ret_sec,
			uint32_t *ret_off, uint32_t *ret_size);

/* One BTF-defined map of the .maps section. */
struct xbpf_btf_map_def {
	char name[XBPF_MAP_NAME_LEN];
	uint32_t sec_off, sec_size; /* the variable's place in .maps */
	struct xbpf_map_spec spec;
	bool has_inner;
	struct xbpf_map_spec inner;
	uint32_t values_off; /* offset of the __array(values) slots in the variable */
};

/* Parse every map of DATASEC `.maps`; *ret_defs is malloc'ed. */
int __xbpf_btf_map_defs(const struct xbpf_btf *btf, struct xbpf_btf_map_def **ret_defs,
			size_t *ret_cnt);

/* Line info of .BTF.ext for one ELF section, insn offsets in instructions. */
struct xbpf_btf_line {
	uint32_t insn;
	uint32_t line;
	uint32_t col;
	const char *file;
	const char *text;
};
int __xbpf_btf_ext_lines(const struct xbpf_btf *btf, const void *ext, size_t ext_size,
			 const char *sec_name, struct xbpf_btf_line **ret_lines, size_t *ret_cnt);

/* func_info records of .BTF.ext for one ELF section (insn_off in instructions). */
int __xbpf_btf_ext_funcs(const struct xbpf_btf *btf, const void *ext, size_t ext_size,
			 const char *sec_name, struct xbpf_func_info **ret_recs, size_t *ret_cnt);
/* The signature of BTF FUNC type_id for a program of `type`; -EINVAL if not a FUNC. */
int __xbpf_btf_func_sig(const struct xbpf_btf *btf, uint32_t type_id, enum xbpf_prog_type type,
			struct xbpf_func_sig *sig);
/* Give prog its func_info (cnt records, insn offsets in the linked program). */
int __xbpf_prog_set_func_info(struct xbpf_object *obj, struct xbpf_prog *prog,
			      const struct xbpf_btf *btf, const struct xbpf_func_info *recs,
			      size_t cnt);

#endif /* XBPF_CORE_IMPL_H */
