/* SPDX-License-Identifier: MIT */
/*
 * tool_engine.h - one interface over the three ways the tools run a program:
 * the interpreter, the JIT (both through jit/xbpf_engine.h) and the kernel
 * (kernel_engine.h).  `xbpf run`, the seed fixture test, the benchmark and
 * xlb-demo all compare engines through it.
 */
#ifndef XBPF_TOOLS_TOOL_ENGINE_H
#define XBPF_TOOLS_TOOL_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xbpf_engine.h"

enum tool_engine_kind {
	TOOL_ENGINE_INTERP,
	TOOL_ENGINE_JIT,
	TOOL_ENGINE_KERNEL,
};

const char *tool_engine_kind_name(enum tool_engine_kind kind);
int tool_engine_kind_from_name(const char *name, enum tool_engine_kind *ret_kind);

/* What to load: an ELF object, or a raw instruction file with its maps. */
struct tool_prog_src {
	const char *path;
	const char *prog_name; /* NULL: the first program */
	enum xbpf_prog_type raw_type;
	const struct xbpf_map_spec *maps;
	size_t map_cnt;
};

struct tool_engine_opts {
	bool skip_verify;
	int log_level;
	char *log_buf;
	size_t log_size;
};

struct tool_engine;

/*
 * Load the program into the engine.  -EOPNOTSUPP: this build or machine lacks
 * the engine; -EACCES/-EINVAL: the verifier (ours or the kernel's) rejected
 * it, opts->log_buf says why.
 */
int tool_engine__open(enum tool_engine_kind kind, const struct tool_prog_src *src,
		      const struct tool_engine_opts *opts, struct tool_engine **ret_engine);
struct tool_engine *tool_engine__close(struct tool_engine *engine);

enum tool_engine_kind tool_engine__kind(const struct tool_engine *engine);
/* The userspace VM (NULL for the kernel engine). */
struct xbpf_vm *tool_engine__vm(const struct tool_engine *engine);
/* The kernel engine's program fd; -EINVAL for a userspace engine. */
int tool_engine__kernel_prog_fd(const struct tool_engine *engine);

int tool_engine__map_spec(struct tool_engine *engine, const char *map, struct xbpf_map_spec *ret_spec);
/* Values per key as lookups return them: 1, or the CPU count of a per-CPU map. */
int tool_engine__map_value_cnt(struct tool_engine *engine, const char *map);
int tool_engine__map_update(struct tool_engine *engine, const char *map, const void *key,
			    const void *value);
/* Per-CPU maps: value receives map_value_cnt values, each rounded up to 8 bytes. */
int tool_engine__map_lookup(struct tool_engine *engine, const char *map, const void *key, void *value);

int tool_engine__test_run(struct tool_engine *engine, struct xbpf_test_run_opts *opts);

/* One run of a packet, as a cell of the demos' side-by-side tables. */
struct tool_run_cell {
	int err;
	uint32_t retval;
	uint32_t len;
	uint8_t out[XBPF_FRAME_MAX_DATA + 128];
};

/* Run data once on engine (NULL engine: err -EOPNOTSUPP) into ret_cell. */
void tool_engine__run_cell(struct tool_engine *engine, const void *data, uint32_t len,
			   struct tool_run_cell *ret_cell);

/* The verifier's reason in a log: its last line before the summary lines. */
const char *tool_log_reason(const char *log, char *buf, size_t len);

/*
 * The demos' two columns: the kernel engine and a userspace engine of `kind`
 * on src.  A program xbpf's verifier rejects still runs, unverified, and
 * *ret_note says so; an engine that cannot open is NULL (for the userspace
 * one, *ret_user_err says why).  Messages go to stdout, as the demos print.
 */
void tool_engine__open_pair(enum tool_engine_kind kind, const struct tool_prog_src *src,
			    const char *name, struct tool_engine **ret_kern,
			    struct tool_engine **ret_user, const char **ret_note, int *ret_user_err);

/* Read a raw instruction file (little-endian 8-byte insns); malloc'ed. */
int tool_read_raw_insns(const char *path, struct xbpf_insn **ret_insns, size_t *ret_cnt);
/* True when the file starts with the ELF magic. */
bool tool_file_is_elf(const char *path);

#endif /* XBPF_TOOLS_TOOL_ENGINE_H */
