/* SPDX-License-Identifier: MIT */
/*
 * kernel_engine.h - the kernel as a reference engine for the tools: load an
 * object through libbpf (or raw instructions through bpf_prog_load()), reach
 * its maps by name or index and run it with BPF_PROG_TEST_RUN.
 *
 * kernel_engine.c implements it with libbpf; kernel_engine_none.c (builds
 * without libbpf, e.g. the arm64 cross build) returns -EOPNOTSUPP everywhere.
 * Meson picks one of the two.
 */
#ifndef XBPF_TOOLS_KERNEL_ENGINE_H
#define XBPF_TOOLS_KERNEL_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "xbpf.h"

struct kern_obj;

/* True when this build can run programs in the kernel. */
bool kern_engine_available(void);

/* Possible CPUs: per-CPU map values hold this many 8-byte-rounded values. */
int kern_nr_cpus(void);

/* Load the ELF object at path through libbpf; prog_name NULL: the first program. */
int kern_obj__open_file(const char *path, const char *prog_name, struct kern_obj **ret_obj);

/*
 * Load raw instructions as a program of `type`; each map spec is created
 * (named map0, map1, ...) and an ld_imm64 with src_reg 1 and imm N gets the
 * fd of maps[N], as `xbpf --map` promises.
 */
int kern_obj__open_insns(const struct xbpf_insn *insns, size_t cnt, enum xbpf_prog_type type,
			 const struct xbpf_map_spec *maps, size_t map_cnt, struct kern_obj **ret_obj);

struct kern_obj *kern_obj__close(struct kern_obj *obj);

/* Kernel verifier log of the last failed load (may be empty). */
const char *kern_obj_last_log(void);

int kern_obj__map_update(struct kern_obj *obj, const char *map, const void *key, const void *value);
/* Per-CPU maps: value receives kern_nr_cpus() values, each rounded up to 8 bytes. */
int kern_obj__map_lookup(struct kern_obj *obj, const char *map, const void *key, void *value);
int kern_obj__map_get_next_key(struct kern_obj *obj, const char *map, const void *key, void *next_key);

/* Type and sizes of a map (name: as in the object; raw programs: map0, map1, ...). */
int kern_obj__map_info(struct kern_obj *obj, const char *map, struct xbpf_map_spec *ret_spec);

/* The loaded program's fd (a tail-call target for the benchmarks' wrapper); -EOPNOTSUPP without a kernel engine. */
int kern_obj__prog_fd(const struct kern_obj *obj);

/* BPF_PROG_TEST_RUN with the same opts the userspace engines take. */
int kern_obj__test_run(struct kern_obj *obj, struct xbpf_test_run_opts *opts);

#endif /* XBPF_TOOLS_KERNEL_ENGINE_H */
