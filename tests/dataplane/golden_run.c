// SPDX-License-Identifier: MIT
/*
 * golden_run - run a golden packet table (see xlbtab.py for the format)
 * against one program of a BPF object, under the kernel (BPF_PROG_TEST_RUN
 * through libbpf) or under xlb's userspace engines (interpreter, JIT).
 * Every row's return value, drop/pass reason counter, output bytes and
 * requested stat deltas must match the table.
 *
 *   golden_run ENGINE OBJ PROG TABLE [REASON_MAP]
 *
 * ENGINE diff-interp / diff-jit runs every row on the kernel and on the
 * engine side by side; rows with "expect any" (fuzz tables) must then give
 * the same error, return value, output bytes and reason counts on both.
 *   ENGINE: kernel | interp | jit | interp-noverify | jit-noverify
 *   (-noverify: xlb's verifier is not run, to tell engine faults from
 *   verifier verdicts)
 *
 * Exit 0: all rows match; 1: a mismatch (each printed); 77: the engine is
 * not available here.  Built without XLB_HAVE_KERNEL (the arm64 cross
 * build, under qemu-user) only the userspace engines and tables without
 * rodata lines can run: the rows' expected bytes come from scapy.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef XLB_HAVE_KERNEL
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif
#include <linux/bpf.h>

#ifdef XLB_HAVE_XBPF
#include "xbpf_engine.h"
#endif

#include "xlb_shared.h"

#define MAX_PKT 8192
#define MAX_STATS 16

struct engine {
	const char *name;
	int (*update)(struct engine *e, const char *map, const void *key, const void *val);
	int (*delete)(struct engine *e, const char *map, const void *key);
	int (*clear)(struct engine *e, const char *map);
	int (*ring)(struct engine *e, uint32_t vip, uint32_t half, const uint32_t *reals, int n);
	/* Sum over CPUs of the first u64 of map[key]. */
	int (*stat)(struct engine *e, const char *map, uint32_t key, uint64_t *sum);
	/* A shared (not per-CPU) map's value; its size in *len. */
	int (*lookup)(struct engine *e, const char *map, const void *key, void *val, size_t *len);
	int (*run)(struct engine *e, const void *in, uint32_t len, uint32_t mark, uint32_t ifindex,
		   void *out, uint32_t *out_len, uint32_t *retval);
	bool is_xdp;
#ifdef XLB_HAVE_KERNEL
	/* kernel */
	struct bpf_object *obj;
	int prog_fd;
	int nr_cpus;
#endif
#ifdef XLB_HAVE_XBPF
	struct xbpf_object *xobj;
	struct xbpf_vm *vm;
#endif
};

static int hex_decode(const char *hex, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(hex), i;

	if (n % 2 || n / 2 > cap)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		out[i] = b;
	}
	*len = n / 2;
	return 0;
}

/*
 * The CPU the next run happens on ("cpu N" in a table; 0 otherwise): the
 * kernel runs BPF_PROG_TEST_RUN on the caller's CPU, xlb's engines on the
 * CPU they are told.  Per-CPU maps (stats, flood window) follow it.
 */
static int run_cpu;

/* On purpose: the kernel runs the program on the caller's CPU, and a row's
 * expected per-CPU counters (stats, flood window) are those of one known
 * CPU: 0, or the row's "cpu N", which is how rows move a flow between CPUs
 * to check the shared connection table. */
static int pin_cpu(int cpu)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	return sched_setaffinity(0, sizeof(cpus), &cpus) ? -errno : 0;
}

/* ---- feature switches (const volatile rodata) --------------------------- */

#define MAX_RODATA 8

struct rodata_set {
	char var[64];
	uint8_t val[8];
	size_t len;
};

static struct rodata_set rodata[MAX_RODATA];
static int nr_rodata;

/* Table lines "size MAP N": the map's max_entries, set before load (xlb_shared.h, "Sizes"). */
#define MAX_SIZES 8

struct map_size_set {
	char map[64];
	uint32_t max_entries;
};

static struct map_size_set sizes[MAX_SIZES];
static int nr_sizes;
/* The ring size the program was loaded with: rodata xlb_ring_size, else the built-in. */
static uint32_t ring_size = XLB_RING_SIZE;

#ifdef XLB_HAVE_KERNEL
/*
 * Offset of `var` in the object's .rodata, from its BTF as libbpf fixes it
 * up at open time (the compiler leaves DATASEC offsets 0).
 */
static int rodata_offset(const char *path, const char *var, uint32_t *off)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	const struct btf_var_secinfo *vs;
	const struct btf_type *t = NULL;
	struct btf *btf;
	int id, i, err = -ENOENT;

	if (!obj)
		return -errno;
	btf = bpf_object__btf(obj);
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (id > 0)
		t = btf__type_by_id(btf, id);
	for (i = 0, vs = t ? btf_var_secinfos(t) : NULL; t && i < btf_vlen(t); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (!strcmp(btf__name_by_offset(btf, v->name_off), var)) {
			*off = vs->offset;
			err = 0;
			break;
		}
	}
	bpf_object__close(obj);
	return err;
}

/* Patch the switches into a copy of .rodata's initial value. */
static int apply_rodata(const char *path, uint8_t *data, size_t size)
{
	uint32_t off = 0;
	int i, err;

	for (i = 0; i < nr_rodata; i++) {
		err = rodata_offset(path, rodata[i].var, &off);
		if (err)
			return err;
		if (off + rodata[i].len > size)
			return -ERANGE;
		memcpy(data + off, rodata[i].val, rodata[i].len);
	}
	return 0;
}
#endif

/* Table lines "rodata VAR HEX", applied before the program is loaded. */
static int scan_rodata(const char *table)
{
	char *line = NULL, var[64], hex[17];
	size_t cap = 0;
	FILE *f = fopen(table, "r");

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned int n;

		if (sscanf(line, "size %63s %u", var, &n) == 2 && nr_sizes < MAX_SIZES) {
			snprintf(sizes[nr_sizes].map, sizeof(sizes[nr_sizes].map), "%s", var);
			sizes[nr_sizes++].max_entries = n;
		}
		if (sscanf(line, "rodata %63s %16s", var, hex) == 2 && nr_rodata < MAX_RODATA) {
			struct rodata_set *r = &rodata[nr_rodata++];
			size_t i;

			snprintf(r->var, sizeof(r->var), "%s", var);
			r->len = strlen(hex) / 2;
			for (i = 0; i < r->len; i++) {
				unsigned int b;

				sscanf(hex + 2 * i, "%2x", &b);
				r->val[i] = b;
			}
			if (!strcmp(var, "xlb_ring_size") && r->len == 4)
				memcpy(&ring_size, r->val, 4);
		}
	}
	free(line);
	fclose(f);
	return 0;
}


/*
 * A stat name is MAP or MAP:WORD; WORD indexes the __u64 summed over CPUs
 * (0, packets, by default; 2 is new_flows in struct xlb_lb_counter).
 */
static int stat_name(const char *name, char *map, size_t len, unsigned int *word)
{
	const char *colon = strchr(name, ':');

	*word = colon ? (unsigned int)strtoul(colon + 1, NULL, 10) : 0;
	snprintf(map, len, "%.*s", colon ? (int)(colon - name) : (int)strlen(name), name);
	return 0;
}

/* ---- kernel ------------------------------------------------------------ */
#ifdef XLB_HAVE_KERNEL

static int k_map(struct engine *e, const char *name, struct bpf_map **ret)
{
	*ret = bpf_object__find_map_by_name(e->obj, name);
	return *ret ? 0 : -ENOENT;
}

static bool k_percpu(struct bpf_map *m)
{
	enum bpf_map_type t = bpf_map__type(m);

	return t == BPF_MAP_TYPE_PERCPU_ARRAY || t == BPF_MAP_TYPE_PERCPU_HASH ||
	       t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static int k_update(struct engine *e, const char *name, const void *key, const void *val)
{
	struct bpf_map *m;
	uint8_t *buf;
	size_t vs;
	int err, i;

	if ((err = k_map(e, name, &m)))
		return err;
	if (!k_percpu(m))
		return bpf_map_update_elem(bpf_map__fd(m), key, val, BPF_ANY) ? -errno : 0;
	vs = (bpf_map__value_size(m) + 7) & ~7u;
	buf = calloc(e->nr_cpus, vs);
	for (i = 0; i < e->nr_cpus; i++)
		memcpy(buf + i * vs, val, bpf_map__value_size(m));
	err = bpf_map_update_elem(bpf_map__fd(m), key, buf, BPF_ANY) ? -errno : 0;
	free(buf);
	return err;
}

static int k_delete(struct engine *e, const char *name, const void *key)
{
	struct bpf_map *m;
	int err;

	if ((err = k_map(e, name, &m)))
		return err;
	return bpf_map_delete_elem(bpf_map__fd(m), key) ? -errno : 0;
}

static int k_clear(struct engine *e, const char *name)
{
	uint8_t key[256];
	struct bpf_map *m;
	int err;

	if ((err = k_map(e, name, &m)))
		return err;
	while (!bpf_map_get_next_key(bpf_map__fd(m), NULL, key))
		if (bpf_map_delete_elem(bpf_map__fd(m), key))
			return -errno;
	return 0;
}

static int k_ring(struct engine *e, uint32_t vip, uint32_t half, const uint32_t *reals, int n)
{
	uint32_t *keys, *vals, count = ring_size, i;
	struct bpf_map *m;
	int err;

	if ((err = k_map(e, "xlb_rings", &m)))
		return err;
	keys = malloc(sizeof(*keys) * ring_size);
	vals = malloc(sizeof(*vals) * ring_size);
	for (i = 0; i < ring_size; i++) {
		keys[i] = (vip * XLB_RING_HALVES + half) * ring_size + i;
		vals[i] = reals[i % n];
	}
	err = bpf_map_update_batch(bpf_map__fd(m), keys, vals, &count, NULL) ? -errno : 0;
	free(keys);
	free(vals);
	return err;
}

static int k_stat(struct engine *e, const char *name, uint32_t key, uint64_t *sum)
{
	struct bpf_map *m;
	uint8_t *buf;
	size_t vs;
	unsigned int word;
	char map[64];
	int err, i;

	stat_name(name, map, sizeof(map), &word);
	if ((err = k_map(e, map, &m)))
		return err;
	if ((word + 1) * 8 > bpf_map__value_size(m))
		return -EINVAL;
	vs = (bpf_map__value_size(m) + 7) & ~7u;
	buf = calloc(e->nr_cpus, vs);
	err = bpf_map_lookup_elem(bpf_map__fd(m), &key, buf) ? -errno : 0;
	*sum = 0;
	for (i = 0; !err && i < e->nr_cpus; i++)
		*sum += *(uint64_t *)(buf + i * vs + word * 8);
	free(buf);
	return err;
}

static int k_lookup(struct engine *e, const char *name, const void *key, void *val, size_t *len)
{
	struct bpf_map *m;
	int err;

	if ((err = k_map(e, name, &m)))
		return err;
	if (k_percpu(m))
		return -EINVAL;
	*len = bpf_map__value_size(m);
	return bpf_map_lookup_elem(bpf_map__fd(m), key, val) ? -errno : 0;
}

static int k_run(struct engine *e, const void *in, uint32_t len, uint32_t mark, uint32_t ifindex,
		 void *out, uint32_t *out_len, uint32_t *retval)
{
	struct xdp_md xctx = { .data = 0, .data_end = len, .ingress_ifindex = ifindex };
	struct __sk_buff sctx = { .mark = mark };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = in, .data_size_in = len,
		.data_out = out, .data_size_out = MAX_PKT);
	int err;

	if (e->is_xdp && ifindex) {
		opts.ctx_in = &xctx;
		opts.ctx_size_in = sizeof(xctx);
	} else if (!e->is_xdp) {
		opts.ctx_in = &sctx;
		opts.ctx_size_in = sizeof(sctx);
	}
	if ((err = pin_cpu(run_cpu)))
		return err;
	err = bpf_prog_test_run_opts(e->prog_fd, &opts);
	if (err)
		return -errno;
	*out_len = opts.data_size_out;
	*retval = opts.retval;
	return 0;
}

static int kernel_open(struct engine *e, const char *path, const char *prog_name)
{
	struct bpf_program *prog, *p;
	int err;

	libbpf_set_print(NULL);
	e->obj = bpf_object__open_file(path, NULL);
	if (!e->obj)
		return -errno;
	prog = bpf_object__find_program_by_name(e->obj, prog_name);
	if (!prog)
		return -ENOENT;
	bpf_object__for_each_program(p, e->obj)
		bpf_program__set_autoload(p, p == prog);
	for (int i = 0; i < nr_sizes; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(e->obj, sizes[i].map);

		err = m ? bpf_map__set_max_entries(m, sizes[i].max_entries) : -ENOENT;
		if (err)
			return err;
	}
	if (nr_rodata) {
		struct bpf_map *ro = bpf_object__find_map_by_name(e->obj, ".rodata");
		const void *init;
		size_t size = 0;
		uint8_t *data;

		init = ro ? bpf_map__initial_value(ro, &size) : NULL;
		if (!init)
			return -ENOENT;
		data = malloc(size);
		memcpy(data, init, size);
		err = apply_rodata(path, data, size) ?: bpf_map__set_initial_value(ro, data, size);
		free(data);
		if (err)
			return err;
	}
	err = bpf_object__load(e->obj);
	if (err)
		return err;
	e->prog_fd = bpf_program__fd(prog);
	e->is_xdp = bpf_program__type(prog) == BPF_PROG_TYPE_XDP;
	e->nr_cpus = libbpf_num_possible_cpus();
	e->update = k_update;
	e->delete = k_delete;
	e->clear = k_clear;
	e->ring = k_ring;
	e->stat = k_stat;
	e->lookup = k_lookup;
	e->run = k_run;
	return 0;
}

/* ---- userspace engines ------------------------------------------------- */

#endif /* XLB_HAVE_KERNEL */

#ifdef XLB_HAVE_XBPF
static int x_map(struct engine *e, const char *name, struct xbpf_map **ret)
{
	*ret = xbpf_object__find_map(e->xobj, name);
	return *ret ? 0 : -ENOENT;
}

static bool x_percpu(struct xbpf_map *m)
{
	enum xbpf_map_type t = xbpf_map__spec(m)->type;

	return t == XBPF_MAP_PERCPU_ARRAY || t == XBPF_MAP_PERCPU_HASH ||
	       t == XBPF_MAP_LRU_PERCPU_HASH;
}

static int x_update(struct engine *e, const char *name, const void *key, const void *val)
{
	struct xbpf_map *m;
	uint8_t *buf;
	size_t vs, vsz;
	int err, i, n;

	if ((err = x_map(e, name, &m)))
		return err;
	vsz = xbpf_map__spec(m)->value_size;
	if (!x_percpu(m))
		return xbpf_map__update(m, key, val, XBPF_ANY);
	n = xbpf_map__nr_cpus(m);
	vs = (vsz + 7) & ~7u;
	buf = calloc(n, vs);
	for (i = 0; i < n; i++)
		memcpy(buf + i * vs, val, vsz);
	err = xbpf_map__update(m, key, buf, XBPF_ANY);
	free(buf);
	return err;
}

static int x_delete(struct engine *e, const char *name, const void *key)
{
	struct xbpf_map *m;
	int err;

	if ((err = x_map(e, name, &m)))
		return err;
	return xbpf_map__delete(m, key);
}

static int x_clear(struct engine *e, const char *name)
{
	uint8_t key[256];
	struct xbpf_map *m;
	int err;

	if ((err = x_map(e, name, &m)))
		return err;
	while (!xbpf_map__get_next_key(m, NULL, key))
		if ((err = xbpf_map__delete(m, key)))
			return err;
	return 0;
}

static int x_ring(struct engine *e, uint32_t vip, uint32_t half, const uint32_t *reals, int n)
{
	struct xbpf_map *m;
	uint32_t i, key;
	int err;

	if ((err = x_map(e, "xlb_rings", &m)))
		return err;
	for (i = 0; i < ring_size; i++) {
		key = (vip * XLB_RING_HALVES + half) * ring_size + i;
		if ((err = xbpf_map__update(m, &key, &reals[i % n], XBPF_ANY)))
			return err;
	}
	return 0;
}

static int x_stat(struct engine *e, const char *name, uint32_t key, uint64_t *sum)
{
	struct xbpf_map *m;
	uint8_t *buf;
	size_t vs;
	unsigned int word;
	char map[64];
	int err, i, n;

	stat_name(name, map, sizeof(map), &word);
	if ((err = x_map(e, map, &m)))
		return err;
	if ((word + 1) * 8 > xbpf_map__spec(m)->value_size)
		return -EINVAL;
	n = xbpf_map__nr_cpus(m);
	vs = (xbpf_map__spec(m)->value_size + 7) & ~7u;
	buf = calloc(n, vs);
	err = xbpf_map__lookup(m, &key, buf);
	*sum = 0;
	for (i = 0; !err && i < n; i++)
		*sum += *(uint64_t *)(buf + i * vs + word * 8);
	free(buf);
	return err;
}

static int x_lookup(struct engine *e, const char *name, const void *key, void *val, size_t *len)
{
	struct xbpf_map *m;
	int err;

	if ((err = x_map(e, name, &m)))
		return err;
	if (x_percpu(m))
		return -EINVAL;
	*len = xbpf_map__spec(m)->value_size;
	return xbpf_map__lookup(m, key, val);
}

static int x_run(struct engine *e, const void *in, uint32_t len, uint32_t mark, uint32_t ifindex,
		 void *out, uint32_t *out_len, uint32_t *retval)
{
	struct xdp_md xctx = { .data = 0, .data_end = len, .ingress_ifindex = ifindex };
	struct __sk_buff sctx = { .mark = mark };
	struct xbpf_test_run_opts opts = {
		.sz = sizeof(opts),
		.data_in = in, .data_size_in = len,
		.data_out = out, .data_size_out = MAX_PKT,
	};
	int err;

	if (e->is_xdp && ifindex) {
		opts.ctx_in = &xctx;
		opts.ctx_size_in = sizeof(xctx);
	} else if (!e->is_xdp) {
		opts.ctx_in = &sctx;
		opts.ctx_size_in = sizeof(sctx);
	}
	xbpf_set_cpu(run_cpu);
	err = xbpf_vm__test_run(e->vm, &opts);
	if (err)
		return err < 0 ? err : -err;
	*out_len = opts.data_size_out;
	*retval = opts.retval;
	return 0;
}

/* Number of helpers the program calls that the runtime does not provide. */
static int missing_helpers(const struct xbpf_prog *prog)
{
	const struct xbpf_insn *insns = xbpf_prog__insns(prog);
	size_t i, n = xbpf_prog__insn_cnt(prog);
	int missing = 0;

	for (i = 0; i < n; i++) {
		if (insns[i].code == 0x85 && insns[i].src_reg == 0 && !xbpf_helper_proto(insns[i].imm)) {
			printf("runtime lacks helper %d\n", insns[i].imm);
			missing++;
		}
	}
	return missing;
}

static int xbpf_open(struct engine *e, const char *path, const char *prog_name, bool jit,
		     bool skip_verify)
{
	struct xbpf_vm_opts vopts = { .sz = sizeof(vopts) };
	struct xbpf_map_size msizes[MAX_SIZES];
	struct xbpf_global_value globals[MAX_RODATA];
	struct xbpf_prog *prog;
	int i;

	/* The core's load-time options, as libbpf's set_max_entries and .rodata above. */
	for (i = 0; i < nr_sizes; i++)
		msizes[i] = (struct xbpf_map_size){ sizes[i].map, sizes[i].max_entries };
	for (i = 0; i < nr_rodata; i++)
		globals[i] = (struct xbpf_global_value){ rodata[i].var, rodata[i].val, rodata[i].len };
	XBPF_OPTS(xbpf_object_open_opts, oopts, .map_sizes = msizes, .map_size_cnt = nr_sizes,
		  .globals = globals, .global_cnt = nr_rodata);

	e->xobj = xbpf_object__open_file(path, &oopts);
	if (!e->xobj)
		return -errno;
	prog = xbpf_object__find_prog(e->xobj, prog_name);
	if (!prog)
		return -ENOENT;
	if (missing_helpers(prog))
		return 1;
	vopts.engine = jit ? XBPF_ENGINE_JIT : XBPF_ENGINE_INTERP;
	vopts.skip_verify = skip_verify;
	vopts.log_level = 1;
	vopts.log_buf = calloc(1, 1 << 20);
	vopts.log_size = 1 << 20;
	e->vm = xbpf_vm__new(prog, &vopts);
	if (!e->vm && vopts.log_buf[0]) {
		size_t len = strlen(vopts.log_buf);

		/* The end of the log says why. */
		printf("verifier log (last part):\n%s\n", vopts.log_buf + (len > 3000 ? len - 3000 : 0));
	}
	free(vopts.log_buf);
	if (e->vm) {
		printf("engine: %s\n", xbpf_engine_name(xbpf_vm__engine(e->vm)));
		/* A JIT that fell back to the interpreter is not the JIT under test. */
		if (jit && xbpf_vm__engine(e->vm) != XBPF_ENGINE_JIT) {
			printf("FAIL: the JIT did not compile %s\n", prog_name);
			return -ENOEXEC;
		}
	}
	if (!e->vm)
		return -errno;
	e->is_xdp = xbpf_prog__type(prog) == XBPF_PROG_XDP;
	e->update = x_update;
	e->delete = x_delete;
	e->clear = x_clear;
	e->ring = x_ring;
	e->stat = x_stat;
	e->lookup = x_lookup;
	e->run = x_run;
	return 0;
}
#endif

/* ---- the table --------------------------------------------------------- */

/* Verdicts seen in diff runs (retval 0..4, errors), to show what was covered. */
static unsigned int diff_seen[6];

/* Run one packet on the kernel and a userspace engine; 0 if they agree. */
static int diff_run(struct engine *k, struct engine *u, const char *row, const char *reason_map,
		    const uint8_t *in, size_t in_len, uint32_t mark, uint32_t ifindex)
{
	static uint8_t out_k[MAX_PKT], out_u[MAX_PKT];
	uint64_t before[2][XLB_REASON_MAX] = {}, after[2][XLB_REASON_MAX] = {};
	uint32_t len_k = 0, len_u = 0, ret_k = 0, ret_u = 0;
	struct engine *eng[2] = { k, u };
	int err_k, err_u, i, j, bad = 0;

	for (j = 0; j < 2; j++)
		for (i = 1; i < XLB_REASON_MAX; i++)
			eng[j]->stat(eng[j], reason_map, i, &before[j][i]);
	err_k = k->run(k, in, in_len, mark, ifindex, out_k, &len_k, &ret_k);
	err_u = u->run(u, in, in_len, mark, ifindex, out_u, &len_u, &ret_u);
	for (j = 0; j < 2; j++)
		for (i = 1; i < XLB_REASON_MAX; i++)
			eng[j]->stat(eng[j], reason_map, i, &after[j][i]);
	if (err_k != err_u) {
		printf("FAIL %s: kernel error %d, engine error %d\n", row, err_k, err_u);
		return 1;
	}
	diff_seen[err_k ? 5 : ret_k < 5 ? ret_k : 5]++;
	if (err_k)
		return 0;
	if (ret_k != ret_u) {
		printf("FAIL %s: kernel retval %u, engine %u\n", row, ret_k, ret_u);
		bad = 1;
	}
	if (len_k != len_u || memcmp(out_k, out_u, len_k)) {
		printf("FAIL %s: output differs (kernel %u bytes, engine %u)\n", row, len_k, len_u);
		bad = 1;
	}
	for (i = 1; i < XLB_REASON_MAX; i++) {
		if (after[0][i] - before[0][i] != after[1][i] - before[1][i]) {
			printf("FAIL %s: reason %s counted %llu (kernel) vs %llu (engine)\n", row,
			       xlb_reason_name(i), (unsigned long long)(after[0][i] - before[0][i]),
			       (unsigned long long)(after[1][i] - before[1][i]));
			bad = 1;
		}
	}
	return bad;
}

/*
 * "check MAP KEYHEX VALHEX[/MASKHEX]": the shared map's value at KEY equals
 * VAL in every byte whose mask byte is set (mask default: all); "check MAP
 * KEYHEX -": KEY has no entry.  1 if not (printed), 0 if it does, -errno if
 * the map cannot be read.
 */
static int check_value(struct engine *e, const char *row, const char *map, const char *khex,
		       char *vhex)
{
	static uint8_t key[256], want[512], mask[512], got[512];
	size_t klen, vlen, mlen = 0, len = 0, i;
	char *slash = strchr(vhex, '/');
	int err;

	if (!strcmp(vhex, "-")) {
		err = hex_decode(khex, key, sizeof(key), &klen) ?: e->lookup(e, map, key, got, &len);
		if (err == -ENOENT)
			return 0;
		if (!err)
			printf("FAIL %s: %s still has an entry %s\n", row, map, khex);
		return err ? err : 1;
	}
	if (slash)
		*slash = 0;
	err = hex_decode(khex, key, sizeof(key), &klen) ?: hex_decode(vhex, want, sizeof(want), &vlen);
	if (!err && slash)
		err = hex_decode(slash + 1, mask, sizeof(mask), &mlen);
	if (err)
		return err;
	if (!slash)
		memset(mask, 0xff, mlen = vlen);
	err = e->lookup(e, map, key, got, &len);
	if (err == -ENOENT) {
		printf("FAIL %s: %s has no entry %s\n", row, map, khex);
		return 1;
	}
	if (err)
		return err;
	if (len != vlen || mlen != vlen) {
		printf("FAIL %s: %s value is %zu bytes, the check gives %zu\n", row, map, len, vlen);
		return 1;
	}
	for (i = 0; i < len; i++) {
		if ((got[i] ^ want[i]) & mask[i]) {
			printf("FAIL %s: %s[%s] byte %zu is %02x, want %02x\n", row, map, khex, i, got[i],
			       want[i]);
			return 1;
		}
	}
	return 0;
}

struct pending_stat {
	char map[64];
	uint32_t key;
	int64_t delta;
	uint64_t before;
};

int main(int argc, char **argv)
{
	static uint8_t in[MAX_PKT], out[MAX_PKT], want[MAX_PKT], key[256], val[4096];
	const char *reason_map = argc > 5 ? argv[5] : "xlb_reason_stats";
	struct pending_stat stats[MAX_STATS];
	int nstats = 0, failures = 0, rows = 0, runs = 0, lineno = 0, err;
	uint32_t mark = 0, ifindex = 0;
	struct engine e = {}, e2 = {};
	bool diff = !strncmp(argc > 1 ? argv[1] : "", "diff-", 5);
	char row[256] = "", *line = NULL;
	size_t cap = 0, in_len = 0;
	FILE *f;

	if (argc < 5) {
		fprintf(stderr, "usage: %s kernel|interp|jit[-noverify] OBJ PROG TABLE [REASON_MAP]\n",
			argv[0]);
		return 2;
	}
	/*
	 * Per-CPU maps (stats, the flood window): every run on CPU 0 unless a
	 * row says "cpu N" (the shared connection table across CPUs).
	 */
	pin_cpu(0);

	if (scan_rodata(argv[4])) {
		perror(argv[4]);
		return 1;
	}
	if (!strcmp(argv[1], "kernel") || diff) {
#ifdef XLB_HAVE_KERNEL
		err = kernel_open(&e, argv[2], argv[3]);
		if (err == -EPERM) {
			printf("SKIP: no permission to load BPF programs\n");
			return 77;
		}
#else
		printf("SKIP: built without the kernel engine\n");
		return 77;
#endif
	} else {
#ifdef XLB_HAVE_XBPF
		err = xbpf_open(&e, argv[2], argv[3], !strncmp(argv[1], "jit", 3),
				strstr(argv[1], "-noverify") != NULL);
		if (err == 1) {
			printf("SKIP: the userspace runtime lacks helpers this program calls\n");
			return 77;
		}
#else
		printf("SKIP: xlb's userspace engines are not built yet\n");
		return 77;
#endif
	}
	if (err) {
		fprintf(stderr, "%s: cannot open %s:%s: %s\n", argv[1], argv[2], argv[3], strerror(-err));
		return 1;
	}
	if (diff) {
#ifdef XLB_HAVE_XBPF
		err = xbpf_open(&e2, argv[2], argv[3], !strcmp(argv[1], "diff-jit"), false);
		if (err == 1) {
			printf("SKIP: the userspace runtime lacks helpers this program calls\n");
			return 77;
		}
		if (err) {
			fprintf(stderr, "%s: userspace engine cannot open %s:%s: %s\n", argv[1], argv[2],
				argv[3], strerror(-err));
			return 1;
		}
#else
		printf("SKIP: xlb's userspace engines are not built yet\n");
		return 77;
#endif
	}
	f = fopen(argv[4], "r");
	if (!f) {
		perror(argv[4]);
		return 1;
	}
	while (getline(&line, &cap, f) > 0) {
		char cmd[16], a[64], b[4096 * 2 + 1], c[MAX_PKT * 2 + 1];
		size_t klen, vlen;
		int n;

		lineno++;
		line[strcspn(line, "\n")] = 0;
		n = sscanf(line, "%15s %63s %8192s %16384s", cmd, a, b, c);
		if (n < 1 || cmd[0] == '#')
			continue;
		err = 0;
		if (!strcmp(cmd, "row")) {
			snprintf(row, sizeof(row), "%s", a);
			rows++;
		} else if (!strcmp(cmd, "update") && n == 4) {
			err = hex_decode(b, key, sizeof(key), &klen) ?:
			      hex_decode(c, val, sizeof(val), &vlen) ?: e.update(&e, a, key, val) ?:
			      (diff ? e2.update(&e2, a, key, val) : 0);
		} else if (!strcmp(cmd, "delete") && n == 3) {
			err = hex_decode(b, key, sizeof(key), &klen) ?: e.delete(&e, a, key);
			if (diff && (!err || err == -ENOENT))
				err = e2.delete(&e2, a, key);
			if (err == -ENOENT)
				err = 0;
		} else if (!strcmp(cmd, "clear")) {
			err = e.clear(&e, a) ?: (diff ? e2.clear(&e2, a) : 0);
		} else if (!strcmp(cmd, "ring") && n == 4) {
			uint32_t reals[64], vip = atoi(a), half = atoi(b);
			int nr = 0;
			char *tok, *save;

			for (tok = strtok_r(c, ",", &save); tok && nr < 64; tok = strtok_r(NULL, ",", &save))
				reals[nr++] = atoi(tok);
			err = nr ? e.ring(&e, vip, half, reals, nr) : -EINVAL;
			err = err ?: (diff ? e2.ring(&e2, vip, half, reals, nr) : 0);
		} else if (!strcmp(cmd, "rodata") || !strcmp(cmd, "size")) {
			/* applied before load by scan_rodata() */
		} else if (!strcmp(cmd, "mark")) {
			mark = strtoul(a, NULL, 0);
		} else if (!strcmp(cmd, "ifindex")) {
			ifindex = strtoul(a, NULL, 0);
		} else if (!strcmp(cmd, "cpu")) {
			run_cpu = atoi(a);
		} else if (!strcmp(cmd, "check") && n >= 4) {
			err = check_value(&e, row, a, b, c) ?: (diff ? check_value(&e2, row, a, b, c) : 0);
			if (err > 0) {
				failures++;
				err = 0;
			}
		} else if (!strcmp(cmd, "stat") && n == 4 && nstats < MAX_STATS) {
			snprintf(stats[nstats].map, sizeof(stats[nstats].map), "%s", a);
			stats[nstats].key = atoi(b);
			stats[nstats].delta = atoll(c);
			nstats++;
		} else if (!strcmp(cmd, "in")) {
			in_len = 0;
			if (n >= 2)
				err = hex_decode(line + 3, in, sizeof(in), &in_len);
		} else if (!strcmp(cmd, "expect") && !strcmp(a, "any")) {
			runs++;
			if (diff && diff_run(&e, &e2, row, reason_map, in, in_len, mark, ifindex))
				failures++;
			mark = ifindex = 0;
			run_cpu = 0;
			nstats = 0;
		} else if (!strcmp(cmd, "expect")) {
			uint32_t out_len = 0, retval = 0, reason = 0;
			uint64_t r_before = 0, r_after = 0, tot_before = 0, tot_after = 0, v;
			size_t want_len = 0;
			int i, rerr;
			bool want_err = !strcmp(a, "err");

			runs++;
			for (i = 0; i < nstats; i++)
				e.stat(&e, stats[i].map, stats[i].key, &stats[i].before);
			for (i = 1; i < XLB_REASON_MAX; i++) {
				if (!e.stat(&e, reason_map, i, &v))
					tot_before += v;
			}
			if (!want_err) {
				reason = atoi(b);
				if (reason)
					e.stat(&e, reason_map, reason, &r_before);
				if (strcmp(c, "-"))
					err = hex_decode(c, want, sizeof(want), &want_len);
			}
			rerr = e.run(&e, in, in_len, mark, ifindex, out, &out_len, &retval);
			mark = ifindex = 0;
			run_cpu = 0;
			if (want_err) {
				if (rerr != -atoi(b)) {
					printf("FAIL %s: want error %s, got %d (retval %u)\n", row, b, rerr, retval);
					failures++;
				}
				nstats = 0;
				continue;
			}
			if (rerr) {
				printf("FAIL %s: run error %s\n", row, strerror(-rerr));
				failures++;
				nstats = 0;
				continue;
			}
			if (retval != (uint32_t)atoi(a)) {
				printf("FAIL %s: retval %u, want %s\n", row, retval, a);
				failures++;
			}
			for (i = 1; i < XLB_REASON_MAX; i++) {
				if (!e.stat(&e, reason_map, i, &v))
					tot_after += v;
			}
			if (reason)
				e.stat(&e, reason_map, reason, &r_after);
			if (reason && r_after != r_before + 1) {
				printf("FAIL %s: reason %s counted %llu times, want 1\n", row,
				       xlb_reason_name(reason), (unsigned long long)(r_after - r_before));
				failures++;
			}
			if (tot_after != tot_before + (reason ? 1 : 0)) {
				printf("FAIL %s: %llu reasons counted, want %d\n", row,
				       (unsigned long long)(tot_after - tot_before), reason ? 1 : 0);
				failures++;
			}
			for (i = 0; i < nstats; i++) {
				if ((rerr = e.stat(&e, stats[i].map, stats[i].key, &v))) {
					printf("FAIL %s: cannot read %s[%u]: %d\n", row, stats[i].map,
					       stats[i].key, rerr);
					failures++;
					continue;
				}
				if ((int64_t)(v - stats[i].before) != stats[i].delta) {
					printf("FAIL %s: %s[%u] grew by %lld, want %lld\n", row, stats[i].map,
					       stats[i].key, (long long)(v - stats[i].before),
					       (long long)stats[i].delta);
					failures++;
				}
			}
			nstats = 0;
			if (strcmp(c, "-") && (out_len != want_len || memcmp(out, want, want_len))) {
				printf("FAIL %s: output differs (len %u, want %zu)\n  got  ", row, out_len,
				       want_len);
				for (i = 0; i < (int)out_len; i++)
					printf("%02x", out[i]);
				printf("\n  want ");
				for (i = 0; i < (int)want_len; i++)
					printf("%02x", want[i]);
				printf("\n");
				failures++;
			}
		} else {
			err = -EINVAL;
		}
		if (err) {
			printf("FAIL %s: table line %d (%s %s): %s\n", row, lineno, cmd, a, strerror(-err));
			failures++;
		}
	}
	free(line);
	fclose(f);
	if (diff)
		printf("kernel verdicts: aborted %u drop %u pass %u tx %u redirect %u error %u\n",
		       diff_seen[0], diff_seen[1], diff_seen[2], diff_seen[3], diff_seen[4], diff_seen[5]);
	printf("%s: %d rows, %d runs, %d failures\n", argv[1], rows, runs, failures);
	return failures ? 1 : 0;
}
