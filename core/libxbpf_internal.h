/* SPDX-License-Identifier: MIT */
/*
 * libxbpf_internal.h - the internals that the runtime core, the verifier and
 * the engines share (libbpf's libbpf_internal.h): the log macros, the
 * errno helpers, the versioned-options checks and the contexts' layouts
 * (context field offsets are offsetof() of the kernel's UAPI structs, since
 * program images run unchanged; no part spells an offset as a number).  Not installed, not part
 * of any public contract.
 */
#ifndef XBPF_LIBXBPF_INTERNAL_H
#define XBPF_LIBXBPF_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h> /* struct xdp_md, struct __sk_buff: the contexts' UAPI layouts */

#include "xbpf.h"

/* ---- logging ----------------------------------------------------------- */

void __xbpf_pr(enum xbpf_print_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_warn(fmt, ...) __xbpf_pr(XBPF_WARN, "libxbpf: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) __xbpf_pr(XBPF_INFO, "libxbpf: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) __xbpf_pr(XBPF_DEBUG, "libxbpf: " fmt, ##__VA_ARGS__)

/* Set errno from a negative code and return it (libbpf's libbpf_err()). */
static inline int xbpf_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static inline void *xbpf_err_ptr(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

#define XBPF_ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

/* Options struct checks, after libbpf's OPTS_VALID/OPTS_GET. */
bool __xbpf_opts_valid(const void *opts, size_t opts_sz, size_t user_sz, const char *type_name);
#define OPTS_VALID(opts, type)                                                                     \
	(!(opts) || __xbpf_opts_valid((opts), offsetofend(struct type, type##__last_field),       \
				      (opts)->sz, #type))
#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#define OPTS_HAS(opts, field) ((opts) && (opts)->sz >= offsetofend(typeof(*(opts)), field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* ---- map lookups at call sites whose map is known ------------------------- */

enum xbpf_lookup_kind {
	XBPF_LOOKUP_CALL,	   /* call plan.fn */
	XBPF_LOOKUP_ARRAY,	   /* base + key * elem_size */
	XBPF_LOOKUP_PERCPU_ARRAY, /* base + key * elem_size + cpu * cpu_size */
};

/*
 * How an engine that knows the map of a bpf_map_lookup_elem() call (R1 set
 * from its ld_imm64) can do the lookup cheapest, with the helper's result.
 * Arrays: the element of key (a u32 at R2) is at base + key * elem_size, or
 * NULL when key >= max_entries; per-CPU arrays add cpu * cpu_size, where
 * cpu is the thread's CPU id (xbpf_get_cpu(), an int at cpu_tls_off bytes
 * from the thread pointer) when below nr_cpus, and otherwise fn decides.
 * fn is right for every kind: (map, key) -> value pointer or NULL, without
 * the generic helper's dispatch.  Valid while the map exists.
 */
struct xbpf_lookup_plan {
	enum xbpf_lookup_kind kind;
	const struct xbpf_map *map;
	uint8_t *base;
	uint32_t max_entries;
	uint32_t elem_size;
	uint32_t cpu_size;
	uint32_t nr_cpus;
	int32_t cpu_tls_off; /* __xbpf_cpu_tls_offset() */
	xbpf_helper_fn fn;
};

void __xbpf_map_lookup_plan(const struct xbpf_map *map, struct xbpf_lookup_plan *ret_plan);

/* Offset of the thread's CPU id (an int) from the thread pointer: the same in every thread. */
intptr_t __xbpf_cpu_tls_offset(void);

/* ---- helpers that call back into the program (bpf_loop, for_each_map_elem) --- */

/*
 * How a helper calls the callback fn (the value the program loaded with
 * ld_imm64 BPF_PSEUDO_FUNC) with R1-R4: a JIT's value is the callback's
 * native entry, the interpreter's its instruction, so each engine gives its
 * own way.  Returns the callback's R0.
 */
typedef uint64_t (*xbpf_callback_call_fn)(void *priv, uint64_t fn, uint64_t r1, uint64_t r2,
					  uint64_t r3, uint64_t r4);

/* The kernel's BPF_MAX_LOOPS. */
#define XBPF_MAX_LOOPS (8u * 1024 * 1024)

/* bpf_loop(nr_loops, fn, ctx, flags), calling fn through call. */
uint64_t __xbpf_loop(uint64_t nr_loops, uint64_t fn, uint64_t ctx, uint64_t flags,
		     xbpf_callback_call_fn call, void *priv);
/* bpf_for_each_map_elem(map, fn, ctx, flags), calling fn through call. */
uint64_t __xbpf_for_each_map_elem(uint64_t map, uint64_t fn, uint64_t ctx, uint64_t flags,
				  xbpf_callback_call_fn call, void *priv);

/* ---- program arrays (bpf_tail_call) ------------------------------------------ */

/* Slot key of a prog_array map holds prog (an engine's loaded program), NULL empties it. */
int __xbpf_prog_array_update(struct xbpf_map *map, uint32_t key, const void *prog);
/* The loaded program in slot key, or NULL (empty or out of range). */
const void *__xbpf_prog_array_get(struct xbpf_map *map, uint32_t key);

/* ---- functions' BTF signatures (func_info) ------------------------------- */

#define XBPF_FUNC_MAX_ARGS 5

enum xbpf_func_arg {
	XBPF_FUNC_ARG_SCALAR = 1, /* int or enum */
	XBPF_FUNC_ARG_CTX,	  /* pointer to the program type's context struct */
	XBPF_FUNC_ARG_MEM,	  /* pointer to mem_size bytes, or NULL */
	XBPF_FUNC_ARG_MEM_NONNULL, /* pointer to mem_size bytes, never NULL (arg:nonnull) */
};

/*
 * One function of a program with BTF, as the kernel's btf_prepare_func_args()
 * types it.  err/err_msg: the kernel's errno and message when the prototype
 * cannot be typed (only reported for a global function).
 */
struct xbpf_func_sig {
	uint32_t insn; /* first instruction (func_info insn_off) */
	const char *name;
	bool global;	 /* BTF linkage global */
	bool ret_scalar; /* returns int or enum */
	int err;
	char err_msg[160];
	int arg_cnt;
	enum xbpf_func_arg args[XBPF_FUNC_MAX_ARGS];
	uint32_t mem_size[XBPF_FUNC_MAX_ARGS];
};

/* The program's func_info in order, or NULL (*ret_cnt 0) when it has no BTF. */
const struct xbpf_func_sig *__xbpf_prog_func_sigs(const struct xbpf_prog *prog, size_t *ret_cnt);

#endif /* XBPF_LIBXBPF_INTERNAL_H */
