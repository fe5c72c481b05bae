/* SPDX-License-Identifier: MIT */
/*
 * xbpf.h - the shared BPF runtime core: ELF loader and linker, userspace
 * maps, helpers and program contexts.
 *
 * The verifier (verifier/xbpf_verifier.h) and the execution engines
 * (jit/xbpf_engine.h: interpreter, x86-64 and arm64 JITs) are built on top of
 * this library; the DPDK fallback path and the tests use all three.
 *
 * Conventions (libbpf's): opaque handles reached through object__verb()
 * functions; int functions return 0 or -errno and set errno; pointer
 * functions return NULL and set errno; destructors accept NULL and return
 * NULL; option structs start with `size_t sz` and are declared with
 * XBPF_OPTS().
 */
#ifndef XBPF_CORE_XBPF_H
#define XBPF_CORE_XBPF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xbpf_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- option structs ---------------------------------------------------- */

/* Declare and zero an option struct with its size filled in. */
#define XBPF_OPTS(TYPE, NAME, ...)                                                                 \
	struct TYPE NAME = ({                                                                      \
		memset(&NAME, 0, sizeof(struct TYPE));                                             \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };                           \
	})

/* ---- logging ----------------------------------------------------------- */

enum xbpf_print_level {
	XBPF_WARN,
	XBPF_INFO,
	XBPF_DEBUG,
};

typedef int (*xbpf_print_fn)(enum xbpf_print_level level, const char *fmt, va_list args);

/* Route library messages (default: WARN and INFO to stderr). Returns the old callback. */
xbpf_print_fn xbpf_set_print(xbpf_print_fn fn);

/* ---- maps -------------------------------------------------------------- */

/* Values equal the kernel's BPF_MAP_TYPE_* so specs convert one to one. */
enum xbpf_map_type {
	XBPF_MAP_HASH = 1,
	XBPF_MAP_ARRAY = 2,
	XBPF_MAP_PROG_ARRAY = 3, /* slots of loaded programs, for bpf_tail_call() (xbpf_engine.h) */
	XBPF_MAP_PERCPU_HASH = 5,
	XBPF_MAP_PERCPU_ARRAY = 6,
	XBPF_MAP_LRU_HASH = 9,
	XBPF_MAP_LRU_PERCPU_HASH = 10,
	XBPF_MAP_LPM_TRIE = 11,
	XBPF_MAP_ARRAY_OF_MAPS = 12,
	XBPF_MAP_HASH_OF_MAPS = 13,
	XBPF_MAP_DEVMAP = 14,
	XBPF_MAP_RINGBUF = 27,
};

/* Map update flags, as the kernel's. */
#define XBPF_ANY 0
#define XBPF_NOEXIST 1
#define XBPF_EXIST 2

#define XBPF_MAP_NAME_LEN 64

struct xbpf_map_spec {
	char name[XBPF_MAP_NAME_LEN];
	enum xbpf_map_type type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t map_flags;
	/* array_of_maps / hash_of_maps: the spec every inner map must match. */
	const struct xbpf_map_spec *inner;
	/*
	 * The value's BTF, as a map created with btf_value_type_id: value_btf
	 * says it has one (a BTF-defined map with __type(value, T)); a
	 * struct bpf_spin_lock member of T sits at spin_lock_off
	 * (has_spin_lock; hash and array maps only), a real lock that
	 * bpf_spin_lock() takes and control-plane updates leave alone.
	 */
	bool value_btf;
	bool has_spin_lock;
	uint32_t spin_lock_off;
};

struct xbpf_map;

/* Map type from the kernel's lower-case name without BPF_MAP_TYPE_ ("lru_hash"); -EINVAL if unknown. */
int xbpf_map_type_from_name(const char *name, enum xbpf_map_type *ret_type);
const char *xbpf_map_type_name(enum xbpf_map_type type);

/*
 * Create a map.  Per-CPU maps keep nr_cpus values per key (0: the number of
 * configured CPUs).  Returns NULL and sets errno on an invalid spec.
 */
struct xbpf_map *xbpf_map__create(const struct xbpf_map_spec *spec, int nr_cpus);
struct xbpf_map *xbpf_map__free(struct xbpf_map *map);

/*
 * Shared maps, the userspace counterpart of bpffs pins: the map's storage
 * is the file `path` (normally on tmpfs under a runtime directory, e.g.
 * /run/xlb-dpdk/maps/NAME), mapped by every process that opens it, so one
 * process runs programs on the map while another programs it, and either
 * may restart (even after kill -9) and find the same contents.  With spec:
 * re-attach when the file holds a map of exactly this spec (and nr_cpus,
 * unless 0), create it atomically when it is missing, refuse a file that
 * holds another map (-EEXIST) or another storage layout (-EPROTO).  spec
 * NULL: attach only (-ENOENT when missing), the spec comes from the file.
 * The file outlives every handle, like a pin: unlink it to remove the map.
 * Maps of maps cannot be shared (-EOPNOTSUPP).
 */
struct xbpf_map *xbpf_map__open_shared(const char *path, const struct xbpf_map_spec *spec, int nr_cpus);
/* The map's storage is a shared file / existed before this handle opened it. */
bool xbpf_map__is_shared(const struct xbpf_map *map);
bool xbpf_map__reattached(const struct xbpf_map *map);

/*
 * BPF_MAP_FREEZE: from now on xbpf_map__update()/__delete() fail (-EPERM);
 * programs keep the access their flags give them.  The loader freezes every
 * .rodata section once its load-time values are in (as libbpf does), so the
 * verifier reads those values as constants, like the kernel's.  -EBUSY when
 * already frozen.
 */
int xbpf_map__freeze(struct xbpf_map *map);
bool xbpf_map__is_frozen(const struct xbpf_map *map);

const char *xbpf_map__name(const struct xbpf_map *map);
const struct xbpf_map_spec *xbpf_map__spec(const struct xbpf_map *map);
int xbpf_map__nr_cpus(const struct xbpf_map *map);

/*
 * Control-plane access, with the semantics of the bpf(2) map commands: values
 * are copied.  For per-CPU maps `value` holds nr_cpus values, each rounded up
 * to 8 bytes, like bpf_map_lookup_elem() on a per-CPU map.  For maps of maps
 * the value is a uint32_t index of an inner map registered with
 * xbpf_map__set_inner().  Safe to call while packet threads run programs.
 */
int xbpf_map__lookup(struct xbpf_map *map, const void *key, void *value);
int xbpf_map__update(struct xbpf_map *map, const void *key, const void *value, uint64_t flags);
int xbpf_map__delete(struct xbpf_map *map, const void *key);
/* key NULL: first key.  Returns -ENOENT after the last key. */
int xbpf_map__get_next_key(struct xbpf_map *map, const void *key, void *next_key);
/* Maps of maps: make `inner` reachable as value `id` of outer updates. */
int xbpf_map__set_inner(struct xbpf_map *outer, uint32_t id, struct xbpf_map *inner);
/* Ring buffer: consume one record into buf; returns its length, -EAGAIN when empty. */
int xbpf_map__ringbuf_consume(struct xbpf_map *map, void *buf, size_t len);

/*
 * Dataplane access, as bpf_map_lookup_elem() inside a program: a pointer to
 * the value of the calling thread's CPU (see xbpf_set_cpu()), or NULL.
 * Lookups take no global lock.
 */
void *xbpf_map__lookup_elem(struct xbpf_map *map, const void *key);

/* ---- objects and programs ---------------------------------------------- */

struct xbpf_object;
struct xbpf_prog;

/* Load-time settings of xbpf_object_open_opts (below). */
struct xbpf_map_size {
	const char *name;      /* a BTF-defined map */
	uint32_t max_entries;  /* > 0 */
};

struct xbpf_global_value {
	const char *name;      /* a global variable, as its BTF names it */
	const void *value;
	size_t size;	       /* the variable's size exactly */
};

/* One function's BTF: the kernel's struct bpf_func_info (insn_off in instructions). */
struct xbpf_func_info {
	uint32_t insn_off;
	uint32_t type_id; /* a BTF FUNC */
};

struct xbpf_object_open_opts {
	size_t sz;
	/* Name for messages; default: file name or "raw". */
	const char *name;
	/* CPUs for per-CPU maps; 0: configured CPUs. */
	int nr_cpus;
	/*
	 * Directory of shared maps: every BTF-defined map is opened with
	 * xbpf_map__open_shared(pin_root_path/NAME) (created, or re-attached
	 * with its contents); global data sections stay private.  NULL: all
	 * maps private.
	 */
	const char *pin_root_path;
	/*
	 * Load-time settings, as libbpf's bpf_map__set_max_entries() and a
	 * .rodata patched before load: each map named in map_sizes gets that
	 * max_entries before it is created or re-attached (a shared map of
	 * another size is refused, -EEXIST), each variable named in globals
	 * starts with those bytes (`const volatile` switches and limits).  An
	 * unknown name or a size that is not the variable's fails the open
	 * (-ENOENT / -EINVAL): nothing is applied halfway.
	 */
	const struct xbpf_map_size *map_sizes;
	size_t map_size_cnt;
	const struct xbpf_global_value *globals;
	size_t global_cnt;
	/* xbpf_object__open_raw(): the program's license; default "GPL". */
	const char *license;
	/*
	 * xbpf_object__open_raw(): the program's BTF (a raw .BTF blob, as for
	 * BPF_BTF_LOAD) and its func_info records, as BPF_PROG_LOAD takes them:
	 * the verifier then types global functions from BTF.  Both or neither.
	 */
	const void *btf;
	size_t btf_size;
	const struct xbpf_func_info *func_info;
	size_t func_info_cnt;
	size_t : 0;
};
#define xbpf_object_open_opts__last_field func_info_cnt

/*
 * Open an object produced by clang -target bpf: programs by section, .text
 * subprograms linked behind each program that calls them (main first, then
 * its callees, as libbpf links them), maps from BTF-defined .maps, global
 * data sections as single-entry array maps, license, BTF line info.
 * A malformed object yields NULL, errno set and a WARN message; never a crash.
 */
struct xbpf_object *xbpf_object__open_file(const char *path, const struct xbpf_object_open_opts *opts);
struct xbpf_object *xbpf_object__open_mem(const void *buf, size_t size,
					  const struct xbpf_object_open_opts *opts);

/*
 * Wrap a raw program (an array of instructions) in an object with one
 * program named "raw" of the given type.  An ld_imm64 with src_reg
 * XBPF_PSEUDO_MAP_FD and imm N refers to maps[N].
 */
struct xbpf_object *xbpf_object__open_raw(const struct xbpf_insn *insns, size_t insn_cnt,
					  enum xbpf_prog_type type, const struct xbpf_map_spec *maps,
					  size_t map_cnt, const struct xbpf_object_open_opts *opts);

/* Detect ELF by magic, otherwise treat the file as raw instructions. */
struct xbpf_object *xbpf_object__open_any(const char *path, enum xbpf_prog_type raw_type,
					  const struct xbpf_map_spec *maps, size_t map_cnt,
					  const struct xbpf_object_open_opts *opts);

struct xbpf_object *xbpf_object__close(struct xbpf_object *obj);

const char *xbpf_object__name(const struct xbpf_object *obj);
const char *xbpf_object__license(const struct xbpf_object *obj);
/* Iterate: prev NULL gives the first; NULL after the last. */
struct xbpf_prog *xbpf_object__next_prog(const struct xbpf_object *obj, const struct xbpf_prog *prev);
struct xbpf_prog *xbpf_object__find_prog(const struct xbpf_object *obj, const char *name);
size_t xbpf_object__map_cnt(const struct xbpf_object *obj);
/* Map by object index: the imm of a map-referencing ld_imm64. */
struct xbpf_map *xbpf_object__map(const struct xbpf_object *obj, size_t idx);
struct xbpf_map *xbpf_object__find_map(const struct xbpf_object *obj, const char *name);

/* Program type from a section name ("xdp", "tc", "classifier", "socket", ...). */
int xbpf_prog_type_from_section(const char *sec, enum xbpf_prog_type *ret_type);
/* Program type from its --type name ("xdp", "sched_cls", ...). */
int xbpf_prog_type_from_name(const char *name, enum xbpf_prog_type *ret_type);
const char *xbpf_prog_type_name(enum xbpf_prog_type type);

const char *xbpf_prog__name(const struct xbpf_prog *prog);
const char *xbpf_prog__section(const struct xbpf_prog *prog);
enum xbpf_prog_type xbpf_prog__type(const struct xbpf_prog *prog);
struct xbpf_object *xbpf_prog__object(const struct xbpf_prog *prog);
/* The linked instructions: main, then its callees. */
const struct xbpf_insn *xbpf_prog__insns(const struct xbpf_prog *prog);
size_t xbpf_prog__insn_cnt(const struct xbpf_prog *prog);

/* A function of a linked program, from the ELF symbol table. */
struct xbpf_func_desc {
	const char *name;
	uint32_t start; /* first instruction in the linked program */
	uint32_t len;	/* in instruction slots */
};
size_t xbpf_prog__func_cnt(const struct xbpf_prog *prog);
int xbpf_prog__func(const struct xbpf_prog *prog, size_t idx, struct xbpf_func_desc *ret_func);

/* Source position of an instruction, from BTF line info; -ENOENT if none. */
struct xbpf_line_desc {
	const char *file;
	const char *text; /* the source line itself, may be NULL */
	uint32_t line;
	uint32_t col;
};
int xbpf_prog__line(const struct xbpf_prog *prog, uint32_t insn_idx, struct xbpf_line_desc *ret_line);

/* ---- helpers ----------------------------------------------------------- */

/*
 * Helper function as called by every engine: the five argument registers in,
 * R0 out.  Helpers that need the packet take the context in R1, as in the
 * kernel; per-run state (CPU, redirect target) is thread-local.
 */
typedef uint64_t (*xbpf_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5);

/* Argument and return kinds, after the kernel's bpf_func_proto. */
enum xbpf_arg_type {
	XBPF_ARG_NONE = 0,	       /* unused argument */
	XBPF_ARG_ANYTHING,	       /* any initialized value */
	XBPF_ARG_CONST_MAP_PTR,	       /* a map from ld_imm64 */
	XBPF_ARG_PTR_TO_MAP_KEY,       /* key_size readable bytes */
	XBPF_ARG_PTR_TO_MAP_VALUE,     /* value_size readable bytes */
	XBPF_ARG_PTR_TO_MEM,	       /* readable memory, size in the next argument */
	XBPF_ARG_PTR_TO_MEM_OR_NULL,   /* as above, or NULL */
	XBPF_ARG_PTR_TO_UNINIT_MEM,    /* writable memory, size in the next argument */
	XBPF_ARG_CONST_SIZE,	       /* constant-bounded size > 0 */
	XBPF_ARG_CONST_SIZE_OR_ZERO,   /* constant-bounded size >= 0 */
	XBPF_ARG_PTR_TO_CTX,	       /* the program context */
	XBPF_ARG_CONST_ALLOC_SIZE_OR_ZERO, /* a known constant size (ringbuf_reserve) */
	XBPF_ARG_PTR_TO_RW_MEM,	       /* initialized memory the helper also writes, size next */
	XBPF_ARG_PTR_TO_FIXED_MEM,     /* arg_size[] initialized bytes the helper writes, aligned */
	XBPF_ARG_PTR_TO_SPIN_LOCK,     /* the struct bpf_spin_lock of a map value */
	XBPF_ARG_PTR_TO_RINGBUF_MEM_RELEASE, /* a ringbuf_reserve() record, released by the call */
	XBPF_ARG_PTR_TO_FUNC,	       /* a static subprogram (ld_imm64 BPF_PSEUDO_FUNC): the callback */
	XBPF_ARG_PTR_TO_STACK_OR_NULL, /* the stack, or NULL (a callback's context) */
};

enum xbpf_ret_type {
	XBPF_RET_INTEGER = 0,
	XBPF_RET_VOID,
	XBPF_RET_PTR_TO_MAP_VALUE_OR_NULL,
	/* A record of the constant size asked for, or NULL; a reference to release. */
	XBPF_RET_PTR_TO_RINGBUF_MEM_OR_NULL,
};

/* Bit per program type in xbpf_helper_proto.prog_types. */
#define XBPF_PROG_BIT(type) (1u << (type))

struct xbpf_helper_proto {
	int32_t id; /* the kernel's BPF_FUNC_* number */
	const char *name;
	enum xbpf_ret_type ret;
	enum xbpf_arg_type args[5];
	bool changes_pkt_data; /* invalidates packet pointers in every frame */
	uint32_t prog_types;   /* XBPF_PROG_BIT() mask of program types allowed */
	bool pkt_access;       /* may take packet pointers as memory arguments */
	uint16_t arg_size[5];  /* XBPF_ARG_PTR_TO_FIXED_MEM: bytes */
	bool gpl_only;	       /* only for programs with a GPL-compatible license */
};

/*
 * Prototype of helper `id` as the kernel has it, or NULL for a helper xlb
 * does not know.  A known helper may still lack a userspace implementation.
 */
const struct xbpf_helper_proto *xbpf_helper_proto(int32_t id);
/* Implementation of helper `id` for the engines, or NULL (not supported in userspace). */
xbpf_helper_fn xbpf_helper_impl(int32_t id);

/* ---- contexts and runs ------------------------------------------------- */

/*
 * Program contexts use the kernel's UAPI layouts as they are (struct xdp_md,
 * struct __sk_buff), so one program image serves the kernel and every
 * userspace engine.  Their 32-bit data/data_end fields hold real addresses:
 * packet frames are allocated in an arena below 4 GiB.  Each frame has
 * XBPF_FRAME_HEADROOM bytes before the packet and XBPF_FRAME_TAILROOM after it
 * so that bpf_xdp_adjust_head/tail/meta work as in the kernel.
 */
#define XBPF_FRAME_HEADROOM 256
#define XBPF_FRAME_TAILROOM 256
#define XBPF_FRAME_MAX_DATA 4096

/* The calling thread's CPU number for per-CPU maps and get_smp_processor_id. */
void xbpf_set_cpu(int cpu);
int xbpf_get_cpu(void);

/*
 * libbpf's bpf_test_run_opts, field for field, so one table drives the kernel
 * and the userspace engines.  ctx_in/ctx_out are struct xdp_md or
 * struct __sk_buff images as for BPF_PROG_TEST_RUN.
 */
struct xbpf_test_run_opts {
	size_t sz;
	const void *data_in;
	void *data_out;
	uint32_t data_size_in;
	uint32_t data_size_out; /* in: capacity of data_out; out: bytes written */
	const void *ctx_in;
	void *ctx_out;
	uint32_t ctx_size_in;
	uint32_t ctx_size_out;
	uint32_t retval;
	int repeat;
	uint32_t duration; /* mean ns per run */
	uint32_t flags;
	uint32_t cpu;
	size_t : 0;
};
#define xbpf_test_run_opts__last_field cpu

/* What an XDP program asked for beyond its return value. */
struct xbpf_redirect {
	uint32_t ifindex;     /* target of bpf_redirect / a devmap entry */
	uint64_t flags;
	struct xbpf_map *map; /* devmap used, or NULL */
};

/* A prepared context over a frame in the low arena (engines run on it). */
struct xbpf_run_ctx;

/*
 * Build the context for one run of a program of `type` from test-run input
 * (packet bytes, optional ctx image).  For XBPF_PROG_RAW_MEM the data is
 * plain memory passed in R1 with its length in R2.
 */
int xbpf_run_ctx__new(enum xbpf_prog_type type, const struct xbpf_test_run_opts *opts,
		      struct xbpf_run_ctx **ret_ctx);
struct xbpf_run_ctx *xbpf_run_ctx__free(struct xbpf_run_ctx *ctx);
/* Restore the input packet before a repeated run. */
int xbpf_run_ctx__reset(struct xbpf_run_ctx *ctx);
/* Value for R1 (and R2) when starting the program. */
void *xbpf_run_ctx__r1(struct xbpf_run_ctx *ctx);
uint64_t xbpf_run_ctx__r2(struct xbpf_run_ctx *ctx);
/* Copy the resulting packet and ctx image out, as BPF_PROG_TEST_RUN does. */
int xbpf_run_ctx__finish(struct xbpf_run_ctx *ctx, struct xbpf_test_run_opts *opts);
/*
 * XDP over a buffer the caller owns (the DPDK path runs programs over its
 * mbufs in place).  The buffer is [hard_start, hard_start + frame_size);
 * the packet is `len` bytes at `data_off`.  As in the kernel,
 * bpf_xdp_adjust_head may grow the packet into the headroom down to 40
 * bytes (an xdp_frame) above hard_start, adjust_tail up to the end of the
 * buffer, and metadata (adjust_meta) starts empty.  The whole buffer must
 * lie below 4 GiB (the 32-bit context fields above): -ERANGE otherwise;
 * a packet shorter than an Ethernet header is refused (-EINVAL), as
 * BPF_PROG_TEST_RUN refuses it and no driver hands one to XDP.
 * Setting a buffer also starts a run on this thread (clears the redirect
 * target), so R1 from xbpf_run_ctx__r1() serves every packet.
 */
int xbpf_run_ctx__new_xdp_buf(struct xbpf_run_ctx **ret_ctx);
int xbpf_run_ctx__set_xdp_buf(struct xbpf_run_ctx *ctx, void *hard_start, uint32_t frame_size,
			      uint32_t data_off, uint32_t len, uint32_t ingress_ifindex,
			      uint32_t rx_queue_index);
/* After a run: where the packet starts now and its length (metadata not included). */
void xbpf_run_ctx__xdp_buf(const struct xbpf_run_ctx *ctx, uint32_t *ret_data_off, uint32_t *ret_len);

/* Redirect target recorded by the last run on this thread. */
void xbpf_last_redirect(struct xbpf_redirect *ret_redirect);

/* ---- pre-run rewriting ------------------------------------------------- */

/*
 * Replace map references in ld_imm64 (XBPF_PSEUDO_MAP_FD / _VALUE) by the
 * addresses of the maps and values of prog's object, producing the image the
 * engines execute.  ret_insns is malloc'ed; the caller frees it.
 */
int xbpf_prog__resolve_maps(const struct xbpf_prog *prog, struct xbpf_insn **ret_insns, size_t *ret_cnt);

#ifdef __cplusplus
}
#endif

#endif /* XBPF_CORE_XBPF_H */
