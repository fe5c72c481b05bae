/* SPDX-License-Identifier: MIT */
/*
 * testbed.h - the test and benchmark harness (libtestbed): what the tests,
 * the benchmarks, `xbpf run` and xlb-demo use to run one program under
 * several engines and compare them.
 *
 *  - engines: one interface over the three ways to run a program, the
 *    interpreter and the JIT (jit/xbpf_engine.h) and the kernel;
 *  - the kernel as the reference engine (testbed_kobj): load an object
 *    through libbpf (or raw instructions through bpf_prog_load()), reach its
 *    maps by name or index, run it with BPF_PROG_TEST_RUN.  kernel.c
 *    implements it with libbpf; kernel_none.c (builds without libbpf, e.g.
 *    the arm64 cross build) returns -EOPNOTSUPP everywhere;
 *  - the seeds' L4 LB fixture: the two programs of seed patches 004
 *    (test_l4lb_noinline, tc) and 005 (test_xdp_noinline, XDP), built at run
 *    time by testbed/build-seed-progs.py, and the setup their 2017
 *    test_progs.c harness gave them (VIP, ring, real, test packets,
 *    expected results, stats).
 */
#ifndef XBPF_TESTBED_H
#define XBPF_TESTBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xbpf.h"
#include "xbpf_engine.h"

/* ---- engines ------------------------------------------------------------ */

enum testbed_engine_kind {
	TESTBED_ENGINE_INTERP,
	TESTBED_ENGINE_JIT,
	TESTBED_ENGINE_KERNEL,
};

const char *testbed_engine_kind_name(enum testbed_engine_kind kind);
int testbed_engine_kind_from_name(const char *name, enum testbed_engine_kind *ret_kind);

/* What to load: an ELF object, or a raw instruction file with its maps. */
struct testbed_prog_src {
	const char *path;
	const char *prog_name; /* NULL: the first program */
	enum xbpf_prog_type raw_type;
	const struct xbpf_map_spec *maps;
	size_t map_cnt;
};

struct testbed_engine_opts {
	bool skip_verify;
	int log_level;
	char *log_buf;
	size_t log_size;
};

struct testbed_engine;

/*
 * Load the program into the engine.  -EOPNOTSUPP: this build or machine lacks
 * the engine; -EACCES/-EINVAL: the verifier (ours or the kernel's) rejected
 * it, opts->log_buf says why.
 */
int testbed_engine__open(enum testbed_engine_kind kind, const struct testbed_prog_src *src,
		      const struct testbed_engine_opts *opts, struct testbed_engine **ret_engine);
struct testbed_engine *testbed_engine__close(struct testbed_engine *engine);

enum testbed_engine_kind testbed_engine__kind(const struct testbed_engine *engine);
/* The userspace VM (NULL for the kernel engine). */
struct xbpf_vm *testbed_engine__vm(const struct testbed_engine *engine);
/* The kernel engine's program fd; -EINVAL for a userspace engine. */
int testbed_engine__kernel_prog_fd(const struct testbed_engine *engine);

int testbed_engine__map_spec(struct testbed_engine *engine, const char *map, struct xbpf_map_spec *ret_spec);
/* Values per key as lookups return them: 1, or the CPU count of a per-CPU map. */
int testbed_engine__map_value_cnt(struct testbed_engine *engine, const char *map);
int testbed_engine__map_update(struct testbed_engine *engine, const char *map, const void *key,
			    const void *value);
/* Per-CPU maps: value receives map_value_cnt values, each rounded up to 8 bytes. */
int testbed_engine__map_lookup(struct testbed_engine *engine, const char *map, const void *key, void *value);

int testbed_engine__test_run(struct testbed_engine *engine, struct xbpf_test_run_opts *opts);

/* One run of a packet, as a cell of the demos' side-by-side tables. */
struct tool_run_cell {
	int err;
	uint32_t retval;
	uint32_t len;
	uint8_t out[XBPF_FRAME_MAX_DATA + 128];
};

/* Run data once on engine (NULL engine: err -EOPNOTSUPP) into ret_cell. */
void testbed_engine__run_cell(struct testbed_engine *engine, const void *data, uint32_t len,
			   struct tool_run_cell *ret_cell);

/* The verifier's reason in a log: its last line before the summary lines. */
const char *tool_log_reason(const char *log, char *buf, size_t len);

/*
 * The demos' two columns: the kernel engine and a userspace engine of `kind`
 * on src.  A program xbpf's verifier rejects still runs, unverified, and
 * *ret_note says so; an engine that cannot open is NULL (for the userspace
 * one, *ret_user_err says why).  Messages go to stdout, as the demos print.
 */
void testbed_engine__open_pair(enum testbed_engine_kind kind, const struct testbed_prog_src *src,
			    const char *name, struct testbed_engine **ret_kern,
			    struct testbed_engine **ret_user, const char **ret_note, int *ret_user_err);

/* Read a raw instruction file (little-endian 8-byte insns); malloc'ed. */
int tool_read_raw_insns(const char *path, struct xbpf_insn **ret_insns, size_t *ret_cnt);
/* True when the file starts with the ELF magic. */
bool tool_file_is_elf(const char *path);

/* ---- the kernel as the reference engine --------------------------------- */

struct testbed_kobj;

/* True when this build can run programs in the kernel. */
bool testbed_kernel_available(void);

/* Possible CPUs: per-CPU map values hold this many 8-byte-rounded values. */
int testbed_kernel_nr_cpus(void);

/* Load the ELF object at path through libbpf; prog_name NULL: the first program. */
int testbed_kobj__open_file(const char *path, const char *prog_name, struct testbed_kobj **ret_obj);

/*
 * Load raw instructions as a program of `type`; each map spec is created
 * (named map0, map1, ...) and an ld_imm64 with src_reg 1 and imm N gets the
 * fd of maps[N], as `xbpf --map` promises.
 */
int testbed_kobj__open_insns(const struct xbpf_insn *insns, size_t cnt, enum xbpf_prog_type type,
			 const struct xbpf_map_spec *maps, size_t map_cnt, struct testbed_kobj **ret_obj);

struct testbed_kobj *testbed_kobj__close(struct testbed_kobj *obj);

/* Kernel verifier log of the last failed load (may be empty). */
const char *testbed_kobj_last_log(void);

int testbed_kobj__map_update(struct testbed_kobj *obj, const char *map, const void *key, const void *value);
/* Per-CPU maps: value receives testbed_kernel_nr_cpus() values, each rounded up to 8 bytes. */
int testbed_kobj__map_lookup(struct testbed_kobj *obj, const char *map, const void *key, void *value);
int testbed_kobj__map_get_next_key(struct testbed_kobj *obj, const char *map, const void *key, void *next_key);

/* Type and sizes of a map (name: as in the object; raw programs: map0, map1, ...). */
int testbed_kobj__map_info(struct testbed_kobj *obj, const char *map, struct xbpf_map_spec *ret_spec);

/* BPF_PROG_TEST_RUN with the same opts the userspace engines take. */
int testbed_kobj__test_run(struct testbed_kobj *obj, struct xbpf_test_run_opts *opts);

/* The loaded program's fd (a tail-call target for the benchmarks' wrapper); -EOPNOTSUPP without a kernel. */
int testbed_kobj__prog_fd(const struct testbed_kobj *obj);

/* ---- the seeds' L4 LB fixture ------------------------------------------- */

/* The harness's constants. */
#define SEED_MAGIC_VAL 0x1234
#define SEED_MAGIC_BYTES 123
#define SEED_NUM_ITER 100000
#define SEED_VIP_NUM 5

struct seed_lb_prog {
	const char *name;     /* object base name: test_l4lb_noinline */
	const char *prog;     /* program name in the object */
	enum xbpf_prog_type type;
	uint32_t expect_retval; /* the harness's expected action */
	const char *(*action_name)(uint32_t retval);
};

extern const struct seed_lb_prog seed_lb_progs[];
extern const size_t seed_lb_prog_cnt;

#define SEED_PKT_MAX 128

struct seed_lb_packet {
	const char *desc;
	uint8_t data[SEED_PKT_MAX];
	uint32_t len;
	bool harness; /* one of the harness's pkt_v4/pkt_v6 */
};

/* The harness's pkt_v4 and pkt_v6, then extra sample packets for the demo. */
size_t seed_lb_packets(const struct seed_lb_packet **ret_packets);

/* Fill vip_map, ch_rings and reals as the harness did. */
int seed_lb_setup(struct testbed_engine *engine);

/* Sum of the stats entry `key` over all CPUs, as the harness reads it. */
int seed_lb_stats(struct testbed_engine *engine, uint32_t key, uint64_t *ret_bytes, uint64_t *ret_pkts);

/* One test run of a packet and what came out (the output zeroed first). */
struct seed_lb_run {
	int err;
	uint32_t retval;
	uint32_t size;
	uint8_t out[SEED_PKT_MAX + 64];
};

/* Run `pkt` through the engine `repeat` times; the result in *res. */
void seed_lb_run(struct testbed_engine *engine, const struct seed_lb_packet *pkt, int repeat,
		 struct seed_lb_run *res);

/*
 * Run `script SEEDS_DIR OUTDIR` (build-seed-progs.py).  Returns 0 when built,
 * 77 when the seeds are absent, another positive status on failure.
 */
int seed_lb_build(const char *script, const char *seeds_dir, const char *outdir);

#endif /* XBPF_TESTBED_H */
