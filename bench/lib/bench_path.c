// SPDX-License-Identifier: MIT
/*
 * bench_path.c - see bench_path.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_frame.h"
#include "bench_path.h"

struct bench_path {
	struct bpf_object *obj;
	int wrapper_fd, null_fd, frame_fd, target_fd;
};

static int silent(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

int bench_path__open(const char *path, struct bench_path **ret_bp)
{
	struct bench_path *bp = calloc(1, sizeof(*bp));
	struct bpf_program *wrapper, *null;
	int err;

	if (!bp)
		return -ENOMEM;
	libbpf_set_print(silent);
	bp->obj = bpf_object__open_file(path, NULL);
	if (!bp->obj) {
		err = -errno;
		goto err_free;
	}
	err = bpf_object__load(bp->obj);
	if (err)
		goto err_close;
	wrapper = bpf_object__find_program_by_name(bp->obj, "bench_pristine");
	null = bpf_object__find_program_by_name(bp->obj, "bench_null");
	bp->frame_fd = bpf_object__find_map_fd_by_name(bp->obj, "bench_frame");
	bp->target_fd = bpf_object__find_map_fd_by_name(bp->obj, "bench_target");
	if (!wrapper || !null || bp->frame_fd < 0 || bp->target_fd < 0) {
		err = -ENOENT;
		goto err_close;
	}
	bp->wrapper_fd = bpf_program__fd(wrapper);
	bp->null_fd = bpf_program__fd(null);
	*ret_bp = bp;
	return 0;

err_close:
	bpf_object__close(bp->obj);
err_free:
	free(bp);
	return err;
}

struct bench_path *bench_path__close(struct bench_path *bp)
{
	if (bp) {
		bpf_object__close(bp->obj);
		free(bp);
	}
	return NULL;
}

int bench_path_pin_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : cpu;
}

/* Sum of a case's counter over CPUs. */
static int counter_read(struct testbed_engine *e, const struct bench_counter *ctr, uint64_t *ret)
{
	int cnt = testbed_engine__map_value_cnt(e, ctr->map), err;
	struct xbpf_map_spec spec;
	uint8_t *vals;
	size_t stride;

	if (cnt < 0)
		return cnt;
	err = testbed_engine__map_spec(e, ctr->map, &spec);
	if (err)
		return err;
	if (ctr->off + 8 > spec.value_size)
		return -ERANGE;
	stride = cnt > 1 ? (spec.value_size + 7) / 8 * 8 : spec.value_size;
	vals = calloc((size_t)cnt, stride);
	if (!vals)
		return -ENOMEM;
	err = testbed_engine__map_lookup(e, ctr->map, &ctr->key, vals);
	*ret = 0;
	for (int i = 0; !err && i < cnt; i++) {
		uint64_t v;

		memcpy(&v, vals + (size_t)i * stride + ctr->off, sizeof(v));
		*ret += v;
	}
	free(vals);
	return err;
}

static int counters_read(const struct bench_case *c, uint64_t *vals)
{
	for (int i = 0; i < BENCH_COUNTERS_MAX && c->counters[i].map; i++) {
		int err = counter_read(c->engine, &c->counters[i], &vals[i]);

		if (err)
			return err;
	}
	return 0;
}

static int counters_check(const struct bench_case *c, const uint64_t *before, int runs, char *why,
			  size_t why_len)
{
	uint64_t after[BENCH_COUNTERS_MAX];
	int err = counters_read(c, after);

	if (err) {
		snprintf(why, why_len, "%s: cannot read its counters: %s", c->name, strerror(-err));
		return err;
	}
	for (int i = 0; i < BENCH_COUNTERS_MAX && c->counters[i].map; i++) {
		const struct bench_counter *ctr = &c->counters[i];
		uint64_t want = (uint64_t)runs * ctr->per_run;

		if (after[i] - before[i] != want) {
			snprintf(why, why_len, "%s: %s[%u]+%u moved by %llu in %d runs, the named path moves it by %llu",
				 c->name, ctr->map, ctr->key, ctr->off, (unsigned long long)(after[i] - before[i]),
				 runs, (unsigned long long)want);
			return -EPROTO;
		}
	}
	return 0;
}

static int kernel_run(int prog_fd, const struct bench_case *c, int repeat, uint32_t *ret_ns,
		      uint32_t *ret_retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = c->pkt, .data_size_in = c->len, .repeat = repeat);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*ret_ns = opts.duration;
	*ret_retval = opts.retval;
	return 0;
}

/* Wrapper + target minus wrapper + bench_null, both with the frame of c. */
static int kernel_time(struct bench_path *bp, const struct bench_case *c, int repeat, double *ret_ns,
		       uint32_t *ret_retval)
{
	struct bench_frame frame = { .len = c->len };
	int target = testbed_engine__kernel_prog_fd(c->engine);
	uint32_t key = 0, t_null, t_prog, rv_null;
	int err;

	if (!bp || target < 0 || c->len < 8 || c->len > BENCH_FRAME_MAX)
		return -EINVAL;
	memcpy(frame.words, c->pkt, c->len);
	if (bpf_map_update_elem(bp->frame_fd, &key, &frame, 0) ||
	    bpf_map_update_elem(bp->target_fd, &key, &bp->null_fd, 0))
		return -errno;
	err = kernel_run(bp->wrapper_fd, c, repeat, &t_null, &rv_null);
	if (err)
		return err;
	if (bpf_map_update_elem(bp->target_fd, &key, &target, 0))
		return -errno;
	err = kernel_run(bp->wrapper_fd, c, repeat, &t_prog, ret_retval);
	if (err)
		return err;
	/* XDP_DROP from the null target: the wrapper restored the frame and tail-called */
	if (rv_null != XDP_DROP)
		return -EPROTO;
	*ret_ns = (double)t_prog - (double)t_null;
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* bench_null's twin for a userspace engine: r0 = XDP_DROP; exit, on the same engine kind. */
static struct xbpf_vm *user_null_vm(enum xbpf_engine_kind kind, struct xbpf_object **ret_obj)
{
	static const struct xbpf_insn null_prog[] = {
		{ .code = XBPF_ALU64 | XBPF_MOV | XBPF_K, .dst_reg = 0, .imm = 1 },
		{ .code = XBPF_JMP | XBPF_EXIT },
	};
	struct xbpf_vm_opts vopts = { .sz = sizeof(vopts), .engine = kind };
	struct xbpf_object *obj = xbpf_object__open_raw(null_prog, 2, XBPF_PROG_XDP, NULL, 0, NULL);
	struct xbpf_prog *prog = obj ? xbpf_object__next_prog(obj, NULL) : NULL;
	struct xbpf_vm *vm = prog ? xbpf_vm__new(prog, &vopts) : NULL;

	if (!vm)
		xbpf_object__close(obj);
	*ret_obj = vm ? obj : NULL;
	return vm;
}

#define USER_TRIES 3

/* `repeat` x (restore, run vm): ns in all. */
static double user_loop(struct xbpf_vm *vm, struct xbpf_run_ctx *ctx, int repeat, uint64_t *ret_r0)
{
	double t0 = now_ns();

	for (int i = 0; i < repeat; i++) {
		xbpf_run_ctx__reset(ctx);
		*ret_r0 = xbpf_vm__exec(vm, xbpf_run_ctx__r1(ctx), xbpf_run_ctx__r2(ctx));
	}
	return now_ns() - t0;
}

/*
 * The kernel wrapper's semantics in userspace: restore + run the program,
 * minus restore + run a null program on the same engine, so both kinds
 * subtract the same things (the restore, one program entry and exit).
 */
static int user_time(const struct bench_case *c, int repeat, double *ret_ns, uint32_t *ret_retval)
{
	struct xbpf_vm *vm = testbed_engine__vm(c->engine), *null_vm;
	XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = c->pkt, .data_size_in = c->len);
	struct xbpf_run_ctx *ctx = NULL;
	struct xbpf_object *null_obj;
	uint64_t r0 = 0, null_r0 = 0;
	double t_null, t_prog;
	int err;

	if (!vm)
		return -EINVAL;
	null_vm = user_null_vm(xbpf_vm__engine(vm), &null_obj);
	if (!null_vm)
		return -ENOMEM;
	err = xbpf_run_ctx__new(XBPF_PROG_XDP, &opts, &ctx);
	if (err)
		goto out;
	xbpf_set_cpu(0); /* the CPU testbed_engine__test_run() (the warm-up run) uses */
	/*
	 * The clock here is the wall clock: a preempted loop would count its
	 * neighbour's time (the kernel's own timer leaves that out).  So each
	 * loop runs USER_TRIES times, alternating, and the least disturbed of
	 * each counts.
	 */
	t_null = t_prog = 1e300;
	for (int k = 0; k < USER_TRIES; k++) {
		double n = user_loop(null_vm, ctx, repeat, &null_r0), p = user_loop(vm, ctx, repeat, &r0);

		t_null = n < t_null ? n : t_null;
		t_prog = p < t_prog ? p : t_prog;
	}
	xbpf_run_ctx__free(ctx);
	*ret_retval = (uint32_t)r0;
	*ret_ns = (t_prog - t_null) / repeat;
	err = null_r0 == 1 ? 0 : -EPROTO;
out:
	xbpf_vm__free(null_vm);
	xbpf_object__close(null_obj);
	return err;
}

/* A program that leaves its packet alone: each engine's own test_run with repeat. */
static int in_place_time(const struct bench_case *c, int repeat, double *ret_ns, uint32_t *ret_retval)
{
	XBPF_OPTS(xbpf_test_run_opts, opts, .data_in = c->pkt, .data_size_in = c->len, .repeat = repeat);
	int err = testbed_engine__test_run(c->engine, &opts);

	*ret_ns = opts.duration;
	*ret_retval = opts.retval;
	return err;
}

/* Timed by user_time(): an XDP case on a userspace engine. */
static bool user_engine(const struct bench_case *c)
{
	return (!c->type || c->type == XBPF_PROG_XDP) && testbed_engine__kind(c->engine) != TESTBED_ENGINE_KERNEL;
}

int bench_path__time(struct bench_path *bp, const struct bench_case *c, int repeat, double *ret_ns,
		     char *why, size_t why_len)
{
	uint64_t before[BENCH_COUNTERS_MAX];
	uint32_t retval = 0;
	int err, runs;

	if (!c || !c->engine || repeat < 1) {
		snprintf(why, why_len, "bad case");
		return -EINVAL;
	}
	err = counters_read(c, before);
	if (err) {
		snprintf(why, why_len, "%s: cannot read its counters: %s", c->name, strerror(-err));
		return err;
	}
	if (c->type && c->type != XBPF_PROG_XDP)
		err = in_place_time(c, repeat, ret_ns, &retval);
	else if (testbed_engine__kind(c->engine) == TESTBED_ENGINE_KERNEL)
		err = kernel_time(bp, c, repeat, ret_ns, &retval);
	else
		err = user_time(c, repeat, ret_ns, &retval);
	if (err) {
		snprintf(why, why_len, "%s: %s", c->name,
			 err == -EPROTO ? "the wrapper did not restore the frame" : strerror(-err));
		return err;
	}
	if (retval != c->retval) {
		snprintf(why, why_len, "%s: returned %u, the named path returns %u", c->name, retval, c->retval);
		return -EPROTO;
	}
	/* the userspace engines ran the program USER_TRIES loops of `repeat` (see user_time) */
	runs = user_engine(c) ? repeat * USER_TRIES : repeat;
	return counters_check(c, before, runs, why, why_len);
}

void bench_path__interleave(struct bench_path *bp, const struct bench_case *cases, int n, int rounds,
			    int repeat, double *ns, int *errs, char (*whys)[BENCH_WHY_MAX])
{
	for (int i = 0; i < n; i++) {
		/* one untimed run first: the state the path needs (an established flow in the LRU) */
		XBPF_OPTS(xbpf_test_run_opts, warm, .data_in = cases[i].pkt, .data_size_in = cases[i].len);

		if (!cases[i].engine) {
			errs[i] = -ENOENT;
			snprintf(whys[i], BENCH_WHY_MAX, "%s: program not available", cases[i].name);
			continue;
		}
		errs[i] = testbed_engine__test_run(cases[i].engine, &warm);
		snprintf(whys[i], BENCH_WHY_MAX, "%s: %s", cases[i].name, errs[i] ? strerror(-errs[i]) : "");
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < n; i++)
			if (!errs[i])
				errs[i] = bench_path__time(bp, &cases[i], repeat, &ns[i * rounds + r], whys[i],
							   BENCH_WHY_MAX);
}
