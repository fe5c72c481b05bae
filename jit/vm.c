/* SPDX-License-Identifier: MIT */
/*
 * vm.c - the engines' front end: verify, resolve maps, find functions,
 * prepare the interpreter or a JIT image, run and test-run.
 *
 * A program reaches an engine only through here.  Verified programs take
 * their function boundaries and stack depths from the verifier.  Programs
 * run with skip_verify get the structural checks the kernel does before its
 * verifier proper (encodings, subprogram boundaries from pseudo calls, jumps
 * staying inside their function, functions ending in exit or a jump) so that
 * the interpreter never leaves the instruction array; their memory accesses
 * stay unproven, and each function gets a full 512-byte frame.
 *
 * A JIT that cannot compile falls back to the interpreter with a WARN
 * (DPDK's bpf_load.c does the same).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_impl.h"
#include "xbpf_verifier.h"


struct xbpf_vm {
	const struct xbpf_prog *prog;
	enum xbpf_prog_type type;
	enum xbpf_engine_kind engine;
	struct xbpf_insn *insns; /* maps resolved */
	size_t insn_cnt;
	uint32_t *func_start;
	uint16_t *stack_depth;
	uint16_t *call_frame_size;
	struct xbpf_call_plans plans; /* lookups whose map is known */
	struct xbpf_exec_prog exec;
	struct xbpf_verify_info info;
	struct xbpf_jit_image image;
	xbpf_jit_entry_fn jit_entry; /* NULL: interpreter */
	struct xbpf_interp_code *interp; /* decoded for the interpreter (when it runs) */
	struct xbpf_tail_target tail;	 /* what a prog_array slot holding this program points at */
};

const char *xbpf_engine_name(enum xbpf_engine_kind kind)
{
	switch (kind) {
	case XBPF_ENGINE_INTERP:
		return "interp";
	case XBPF_ENGINE_JIT:
		return "jit";
	}
	return "unknown";
}


/* Messages of the structural check go where the verifier log would. */
__attribute__((format(printf, 2, 3))) static void vm_log(const struct xbpf_vm_opts *opts,
							 const char *fmt, ...)
{
	char *buf = OPTS_GET(opts, log_buf, NULL);
	size_t size = OPTS_GET(opts, log_size, 0);
	va_list ap;

	if (!buf || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool ld_abs_allowed(enum xbpf_prog_type type)
{
	return type == XBPF_PROG_SOCKET_FILTER || type == XBPF_PROG_SCHED_CLS ||
	       type == XBPF_PROG_SCHED_ACT;
}

/*
 * skip_verify: the kernel's pre-verifier checks (resolve_pseudo_ldimm64(),
 * check_subprogs()), with its messages.  Fills vm->func_start/stack_depth.
 */
static int structural_check(struct xbpf_vm *vm, const struct xbpf_insn *insns, size_t cnt,
			    const struct xbpf_vm_opts *opts)
{
	uint32_t *starts = NULL;
	bool *second_half = NULL;
	size_t i, nstarts = 0, f;
	int err = -EINVAL;

	if (!cnt || cnt > (1u << 24)) {
		vm_log(opts, "invalid program length %zu\n", cnt);
		return -EINVAL;
	}
	starts = calloc(XBPF_MAX_SUBPROGS + 1, sizeof(*starts));
	second_half = calloc(cnt, sizeof(*second_half));
	if (!starts || !second_half) {
		err = -ENOMEM;
		goto out;
	}
	starts[nstarts++] = 0;
	for (i = 0; i < cnt; i += xbpf_insn_len(&insns[i])) {
		const struct xbpf_insn *insn = &insns[i];
		const char *msg;
		int64_t target;

		if (xbpf_insn_check(insns, cnt, i, &msg)) {
			vm_log(opts, "%zu: %s\n", i, msg);
			goto out;
		}
		if (XBPF_CLASS(insn->code) == XBPF_LD && XBPF_MODE(insn->code) != XBPF_IMM &&
		    !ld_abs_allowed(vm->type)) {
			vm_log(opts, "%zu: BPF_LD_[ABS|IND] instructions not allowed for this program type\n", i);
			goto out;
		}
		if (xbpf_insn_len(insn) == 2)
			second_half[i + 1] = true;
		if (!xbpf_insn_is_func_ref(insn))
			continue;
		target = xbpf_func_ref_target(insn, i);
		if (target < 0 || target >= (int64_t)cnt) {
			vm_log(opts, "%zu: call to invalid destination\n", i);
			goto out;
		}
		if (nstarts > XBPF_MAX_SUBPROGS) {
			vm_log(opts, "too many subprograms\n");
			goto out;
		}
		starts[nstarts++] = (uint32_t)target;
	}
	qsort(starts, nstarts, sizeof(*starts), cmp_u32);
	for (i = 1, f = 1; i < nstarts; i++)
		if (starts[i] != starts[f - 1])
			starts[f++] = starts[i];
	nstarts = f;
	if (nstarts > XBPF_MAX_SUBPROGS) {
		vm_log(opts, "too many subprograms\n");
		goto out;
	}

	for (f = 0; f < nstarts; f++) {
		size_t start = starts[f], end = f + 1 < nstarts ? starts[f + 1] : cnt;
		const struct xbpf_insn *last = &insns[end - 1];

		if (second_half[start]) {
			vm_log(opts, "%zu: call into the middle of ldimm64 insn\n", start);
			goto out;
		}
		for (i = start; i < end; i += xbpf_insn_len(&insns[i])) {
			const struct xbpf_insn *insn = &insns[i];
			int64_t target;

			if (!xbpf_insn_is_jump(insn))
				continue;
			target = xbpf_jump_target(insn, i);
			if (target < (int64_t)start || target >= (int64_t)end) {
				vm_log(opts, "jump out of range from insn %zu to %lld\n", i, (long long)target);
				goto out;
			}
			if (second_half[target]) {
				vm_log(opts, "jump into the middle of ldimm64 insn %lld\n", (long long)target - 1);
				goto out;
			}
		}
		if (second_half[end - 1] || !xbpf_insn_ends_block(last)) {
			vm_log(opts, "last insn is not an exit or jmp\n");
			goto out;
		}
	}

	vm->func_start = calloc(nstarts, sizeof(*vm->func_start));
	vm->stack_depth = calloc(nstarts, sizeof(*vm->stack_depth));
	if (!vm->func_start || !vm->stack_depth) {
		err = -ENOMEM;
		goto out;
	}
	for (f = 0; f < nstarts; f++) {
		vm->func_start[f] = starts[f];
		vm->stack_depth[f] = XBPF_STACK_SIZE;
	}
	vm->exec.func_cnt = (uint32_t)nstarts;
	err = 0;
out:
	free(starts);
	free(second_half);
	return err;
}

static int take_verifier_funcs(struct xbpf_vm *vm)
{
	uint32_t n = vm->info.func_cnt ? vm->info.func_cnt : 1;

	if (n > XBPF_MAX_SUBPROGS)
		return -EINVAL;
	vm->func_start = calloc(n, sizeof(*vm->func_start));
	vm->stack_depth = calloc(n, sizeof(*vm->stack_depth));
	if (!vm->func_start || !vm->stack_depth)
		return -ENOMEM;
	if (vm->info.func_cnt) {
		memcpy(vm->func_start, vm->info.func_start, n * sizeof(*vm->func_start));
		memcpy(vm->stack_depth, vm->info.stack_depth, n * sizeof(*vm->stack_depth));
	}
	vm->exec.func_cnt = n;
	return 0;
}

/*
 * After map resolution, what no engine runs (unresolved references, kfuncs)
 * is refused for all of them at once, so the interpreter and both JITs run
 * the same set of programs.
 */
/*
 * A helper the verifier knows (it judged the program as the kernel would)
 * may still have no userspace implementation (the tracing reads,
 * fib_lookup, ...): such a program is refused here, at load, never left to
 * fault when the call is reached.  Unknown ids in unverified programs still
 * fault at run time, as the kernel's interpreter would refuse them.
 */
static int check_helpers_implemented(const struct xbpf_vm *vm, const struct xbpf_vm_opts *opts)
{
	for (size_t i = 0; i < vm->insn_cnt; i += xbpf_insn_len(&vm->insns[i])) {
		const struct xbpf_insn *insn = &vm->insns[i];
		const struct xbpf_helper_proto *p;

		if (insn->code != (XBPF_JMP | XBPF_CALL) || insn->src_reg != 0)
			continue;
		p = xbpf_helper_proto(insn->imm);
		/* bpf_tail_call is the interpreter's own (L_TAIL_CALL). */
		if (!p || xbpf_helper_impl(insn->imm) || insn->imm == BPF_FUNC_tail_call)
			continue;
		pr_warn("prog '%s': insn %zu: helper bpf_%s#%d is not supported in userspace\n",
			xbpf_prog__name(vm->prog), i, p->name, p->id);
		vm_log(opts, "%zu: helper bpf_%s#%d is not supported in userspace\n", i, p->name,
		       p->id);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int check_engine_insns(struct xbpf_vm *vm, const struct xbpf_vm_opts *opts)
{
	const char *msg = NULL;

	for (size_t i = 0; i < vm->insn_cnt; i += xbpf_insn_len(&vm->insns[i])) {
		if (__xbpf_engine_check_insn(vm->insns, (uint32_t)vm->insn_cnt, (uint32_t)i, &msg)) {
			vm_log(opts, "%zu: %s\n", i, msg);
			return -EINVAL;
		}
	}
	return check_helpers_implemented(vm, opts);
}

/* The interpreter's frame size of each call's callee, so that calls need no search. */
static int precompute_call_frames(struct xbpf_vm *vm)
{
	size_t i;

	vm->call_frame_size = calloc(vm->insn_cnt, sizeof(*vm->call_frame_size));
	if (!vm->call_frame_size)
		return -ENOMEM;
	for (i = 0; i < vm->insn_cnt; i++) {
		const struct xbpf_insn *insn = &vm->insns[i];
		int64_t target = xbpf_func_ref_target(insn, i);

		if (!xbpf_insn_is_pseudo_call(insn) || target < 0 || target >= (int64_t)vm->insn_cnt)
			continue;
		vm->call_frame_size[i] = (uint16_t)__xbpf_interp_frame_size(&vm->exec, (uint32_t)target);
	}
	vm->exec.call_frame_size = vm->call_frame_size;
	return 0;
}

static bool has_tail_call(const struct xbpf_vm *vm)
{
	for (size_t i = 0; i < vm->insn_cnt; i += xbpf_insn_len(&vm->insns[i]))
		if (vm->insns[i].code == (XBPF_JMP | XBPF_CALL) && vm->insns[i].src_reg == 0 &&
		    vm->insns[i].imm == BPF_FUNC_tail_call)
			return true;
	return false;
}

static void prepare_jit(struct xbpf_vm *vm, const struct xbpf_vm_opts *opts)
{
	const struct xbpf_jit_arch *arch = __xbpf_jit_host_arch;
	int err;

	/* The JITs do not replace a running frame: tail-calling programs are interpreted. */
	if (has_tail_call(vm)) {
		pr_info("prog '%s': JIT refuses bpf_tail_call (the interpreter runs it), falling back to the interpreter\n",
			xbpf_prog__name(vm->prog));
		return;
	}
	if (!arch) {
		pr_warn("prog '%s': JIT failed (no JIT for this architecture), falling back to the interpreter\n",
			xbpf_prog__name(vm->prog));
		return;
	}
	err = __xbpf_jit_compile(arch, &vm->exec, OPTS_GET(opts, blind_constants, false), &vm->image);
	if (err) {
		pr_warn("prog '%s': JIT failed (%s: %s), falling back to the interpreter\n",
			xbpf_prog__name(vm->prog), arch->name, strerror(-err));
		memset(&vm->image, 0, sizeof(vm->image));
		return;
	}
	vm->jit_entry = (xbpf_jit_entry_fn)vm->image.code;
	vm->engine = XBPF_ENGINE_JIT;
}

struct xbpf_vm *xbpf_vm__new(const struct xbpf_prog *prog, const struct xbpf_vm_opts *opts)
{
	const struct xbpf_insn *orig;
	struct xbpf_vm *vm;
	size_t orig_cnt;
	int err;

	if (!prog || !OPTS_VALID(opts, xbpf_vm_opts)) {
		errno = EINVAL;
		return NULL;
	}
	vm = calloc(1, sizeof(*vm));
	if (!vm) {
		errno = ENOMEM;
		return NULL;
	}
	vm->prog = prog;
	vm->type = xbpf_prog__type(prog);
	vm->engine = XBPF_ENGINE_INTERP;
	orig = xbpf_prog__insns(prog);
	orig_cnt = xbpf_prog__insn_cnt(prog);

	if (OPTS_GET(opts, skip_verify, false)) {
		err = structural_check(vm, orig, orig_cnt, opts);
	} else {
		XBPF_OPTS(xbpf_verify_opts, vopts, .log_level = OPTS_GET(opts, log_level, 0),
			  .log_buf = OPTS_GET(opts, log_buf, NULL),
			  .log_size = OPTS_GET(opts, log_size, 0), );

		err = xbpf_verify(prog, &vopts, &vm->info);
		if (!err)
			err = take_verifier_funcs(vm);
		vm->exec.verified = !err;
	}
	if (err)
		goto err_free;

	err = xbpf_prog__resolve_maps(prog, &vm->insns, &vm->insn_cnt);
	if (err)
		goto err_free;
	if (vm->insn_cnt != orig_cnt || vm->insn_cnt > UINT32_MAX) {
		err = -EINVAL;
		goto err_free;
	}
	err = check_engine_insns(vm, opts);
	if (err)
		goto err_free;
	vm->exec.insns = vm->insns;
	vm->exec.insn_cnt = (uint32_t)vm->insn_cnt;
	vm->exec.func_start = vm->func_start;
	vm->exec.stack_depth = vm->stack_depth;
	err = precompute_call_frames(vm);
	if (err)
		goto err_free;
	err = __xbpf_lookup_plans(&vm->exec, orig, &vm->plans);
	if (err)
		goto err_free;
	if (vm->plans.cnt)
		vm->exec.lookup_plan = vm->plans.at;
	vm->exec.tail_lookup = __xbpf_prog_array_get;

	if (OPTS_GET(opts, engine, XBPF_ENGINE_INTERP) == XBPF_ENGINE_JIT)
		prepare_jit(vm, opts);
	if (!vm->jit_entry) {
		err = __xbpf_interp_prepare(&vm->exec, &vm->interp);
		if (err)
			goto err_free;
	}
	vm->tail = (struct xbpf_tail_target){ .type = vm->type, .interp = vm->interp,
					      .jit_entry = vm->jit_entry };
	return vm;

err_free:
	xbpf_vm__free(vm);
	errno = -err;
	return NULL;
}

struct xbpf_vm *xbpf_vm__free(struct xbpf_vm *vm)
{
	if (!vm)
		return NULL;
	if (vm->image.code)
		__xbpf_jit_image_free(&vm->image);
	__xbpf_interp_code_free(vm->interp);
	free(vm->insns);
	free(vm->func_start);
	free(vm->stack_depth);
	free(vm->call_frame_size);
	__xbpf_lookup_plans_free(&vm->plans);
	free(vm);
	return NULL;
}

int xbpf_vm__prog_array_update(struct xbpf_map *map, uint32_t key, struct xbpf_vm *vm)
{
	const struct xbpf_map_spec *spec = xbpf_map__spec(map);

	if (!spec || spec->type != XBPF_MAP_PROG_ARRAY || key >= spec->max_entries)
		return xbpf_err(-EINVAL);
	/* One program type per array, as the kernel's owner check. */
	for (uint32_t k = 0; vm && k < spec->max_entries; k++) {
		const struct xbpf_tail_target *t = __xbpf_prog_array_get(map, k);

		if (t && k != key && t->type != vm->type)
			return xbpf_err(-EINVAL);
	}
	return xbpf_err(__xbpf_prog_array_update(map, key, vm ? &vm->tail : NULL));
}

enum xbpf_engine_kind xbpf_vm__engine(const struct xbpf_vm *vm)
{
	return vm ? vm->engine : XBPF_ENGINE_INTERP;
}

const struct xbpf_verify_info *xbpf_vm__verify_info(const struct xbpf_vm *vm)
{
	return vm ? &vm->info : NULL;
}

static inline uint64_t vm_run(struct xbpf_vm *vm, uint64_t r1, uint64_t r2, int *ret_err)
{
	if (vm->jit_entry) {
		*ret_err = 0;
		return vm->jit_entry(r1, r2);
	}
	return __xbpf_interp_exec(vm->interp, r1, r2, ret_err);
}

uint64_t xbpf_vm__exec(struct xbpf_vm *vm, void *r1, uint64_t r2)
{
	int err;

	if (!vm)
		return 0;
	return vm_run(vm, (uintptr_t)r1, r2, &err);
}

/*
 * The thread's CPU time, as the kernel's test_run timer, which stops while
 * its loop yields the CPU (bpf_test_timer_continue()): durations leave out
 * the time other processes ran.
 */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * BPF_PROG_TEST_RUN: the context is built once and the program runs
 * `repeat` times over it, so that, as in the kernel, a program that changes
 * its packet sees its own previous changes on the next run (the kernel's
 * bpf_test_run() does not restore the packet either; tests compare the two).
 */
int xbpf_vm__test_run(struct xbpf_vm *vm, struct xbpf_test_run_opts *opts)
{
	struct xbpf_run_ctx *ctx = NULL;
	uint64_t t0, elapsed, r0 = 0, r1, r2;
	int repeat, i, err, fault = 0;

	if (!vm || !opts || !OPTS_VALID(opts, xbpf_test_run_opts) || opts->repeat < 0) {
		errno = EINVAL;
		return -EINVAL;
	}
	repeat = opts->repeat ? opts->repeat : 1;
	xbpf_set_cpu((int)opts->cpu);
	err = xbpf_run_ctx__new(vm->type, opts, &ctx);
	if (!err)
		err = xbpf_run_ctx__reset(ctx);
	if (err)
		goto out;
	r1 = (uintptr_t)xbpf_run_ctx__r1(ctx);
	r2 = xbpf_run_ctx__r2(ctx);

	t0 = now_ns();
	if (vm->jit_entry) {
		for (i = 0; i < repeat; i++)
			r0 = vm->jit_entry(r1, r2);
	} else {
		for (i = 0; i < repeat && !fault; i++)
			r0 = __xbpf_interp_exec(vm->interp, r1, r2, &fault);
	}
	elapsed = now_ns() - t0;
	if (fault) {
		err = fault;
		goto out;
	}
	opts->retval = (uint32_t)r0;
	opts->duration = (uint32_t)(elapsed / (uint64_t)repeat);
	err = xbpf_run_ctx__finish(ctx, opts);
out:
	xbpf_run_ctx__free(ctx);
	if (err) {
		errno = -err;
		return err;
	}
	return 0;
}

int xbpf_vm__jit_func(const struct xbpf_vm *vm, size_t idx, const void **ret_code, size_t *ret_size)
{
	if (!vm || !ret_code || !ret_size) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (!vm->jit_entry || !vm->image.func_off || idx >= vm->image.func_cnt) {
		errno = ENOENT;
		return -ENOENT;
	}
	*ret_code = (const uint8_t *)vm->image.code + vm->image.func_off[idx];
	*ret_size = vm->image.func_off[idx + 1] - vm->image.func_off[idx];
	return 0;
}
