/* SPDX-License-Identifier: MIT */
/*
 * xbpf_engine.h - execution engines for verified programs: the interpreter
 * and the x86-64 / arm64 JIT compilers, all running multi-function programs
 * (bpf-to-bpf calls) over the runtime core's maps, helpers and contexts.
 */
#ifndef XBPF_ENGINE_H
#define XBPF_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xbpf.h"

#ifdef __cplusplus
extern "C" {
#endif

enum xbpf_engine_kind {
	XBPF_ENGINE_INTERP = 0,
	XBPF_ENGINE_JIT, /* native code for the host: x86-64 or arm64 */
};

struct xbpf_vm_opts {
	size_t sz;
	enum xbpf_engine_kind engine;
	/*
	 * Run without the verifier (bpf_conformance programs and ISA tests that
	 * no verifier would accept); memory accesses are then not proven safe.
	 */
	bool skip_verify;
	/* JIT: blind constants of programs from untrusted sources. */
	bool blind_constants;
	/* Verifier log, as xbpf_verify_opts. */
	int log_level;
	char *log_buf;
	size_t log_size;
	size_t : 0;
};
#define xbpf_vm_opts__last_field log_size

struct xbpf_vm;

/*
 * Verify prog (unless skip_verify), resolve its maps and prepare the chosen
 * engine.  A JIT that cannot compile the program falls back to the
 * interpreter with a WARN message; xbpf_vm__engine() tells which runs.
 * Returns NULL with errno set (EACCES/EINVAL: rejected by the verifier).
 */
struct xbpf_vm *xbpf_vm__new(const struct xbpf_prog *prog, const struct xbpf_vm_opts *opts);
struct xbpf_vm *xbpf_vm__free(struct xbpf_vm *vm);

enum xbpf_engine_kind xbpf_vm__engine(const struct xbpf_vm *vm);
const char *xbpf_engine_name(enum xbpf_engine_kind kind);
/* Verifier result of the program (zeroed when skip_verify). */
const struct xbpf_verify_info *xbpf_vm__verify_info(const struct xbpf_vm *vm);

/* Run once with R1 = r1, R2 = r2; returns R0. */
uint64_t xbpf_vm__exec(struct xbpf_vm *vm, void *r1, uint64_t r2);

/* BPF_PROG_TEST_RUN in userspace: same inputs, same outputs. */
int xbpf_vm__test_run(struct xbpf_vm *vm, struct xbpf_test_run_opts *opts);

/* JIT image facts for `xbpf jit`: native bytes of function idx; -ENOENT if not JITed. */
int xbpf_vm__jit_func(const struct xbpf_vm *vm, size_t idx, const void **ret_code, size_t *ret_size);

/*
 * Put vm in slot key of a prog_array map (vm NULL empties the slot), as a
 * kernel prog array takes a program's fd: bpf_tail_call(ctx, map, key) then
 * runs it in place of the caller, at most 33 times a run.  Every program in
 * one array has the same program type (-EINVAL otherwise, nothing changed);
 * a vm must leave every slot before it is freed.  Tail-calling programs run
 * in the interpreter (the JITs refuse them); the programs they call may be
 * JITed.
 */
int xbpf_vm__prog_array_update(struct xbpf_map *map, uint32_t key, struct xbpf_vm *vm);

#ifdef __cplusplus
}
#endif

#endif /* XBPF_ENGINE_H */
