/* SPDX-License-Identifier: MIT */
/*
 * test_vm.c - the engines' front end (jit/vm.c): argument and option
 * checks, verifier results, structural refusals, engine choice, JIT image
 * facts, test_run semantics (repeats keep the packet as the kernel does,
 * interpreter stops reported as errors).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "isa_corpus.h"
#include "engine_impl.h"
#include "insn.h"
#include "xbpf_verifier.h"

#include "test_check.h"

/* XDP: flip the first packet byte, return XDP_PASS. */
static const struct xbpf_insn xdp_flip[] = {
	LDX(W, 2, 1, 0), LDX(W, 3, 1, 4), MOV64X(4, 2), A64K(ADD, 4, 1), JX(JGT, 4, 3, 3),
	LDX(B, 5, 2, 0), A64K(XOR, 5, 0xff), STX(B, 2, 5, 0), MOV64K(0, 2), EXIT(),
};

/* RAW_MEM: main calls f(r1 = 20), f returns r1 + 22. */
static const struct xbpf_insn two_funcs[] = {
	MOV64K(1, 20), CALL_PC(1), EXIT(), MOV64X(0, 1), A64K(ADD, 0, 22), EXIT(),
};

static const struct xbpf_insn recursion[] = {
	MOV64K(0, 0), CALL_PC(1), EXIT(), CALL_PC(-1), EXIT(),
};

static struct xbpf_prog *open_prog(const struct xbpf_insn *insns, size_t cnt, enum xbpf_prog_type type,
				   struct xbpf_object **ret_obj)
{
	*ret_obj = xbpf_object__open_raw(insns, cnt, type, NULL, 0, NULL);
	return *ret_obj ? xbpf_object__next_prog(*ret_obj, NULL) : NULL;
}

static void test_args(void)
{
	struct {
		struct xbpf_vm_opts opts;
		uint64_t future_field;
	} big;
	struct xbpf_object *obj;
	struct xbpf_prog *prog = open_prog(two_funcs, 6, XBPF_PROG_RAW_MEM, &obj);
	struct xbpf_test_run_opts topts = { .sz = sizeof(topts) };
	const void *code;
	size_t size;

	CHECK(!strcmp(xbpf_engine_name(XBPF_ENGINE_INTERP), "interp"), "interp name");
	CHECK(!strcmp(xbpf_engine_name(XBPF_ENGINE_JIT), "jit"), "jit name");
	CHECK(!strcmp(xbpf_engine_name((enum xbpf_engine_kind)99), "unknown"), "unknown name");

	errno = 0;
	CHECK(!xbpf_vm__new(NULL, NULL) && errno == EINVAL, "NULL prog");
	/* A newer caller's non-zero field we do not know: refused. */
	memset(&big, 0, sizeof(big));
	big.opts.sz = sizeof(big);
	big.opts.skip_verify = true;
	big.future_field = 1;
	errno = 0;
	CHECK(!xbpf_vm__new(prog, &big.opts) && errno == EINVAL, "unknown trailing option");
	big.future_field = 0;
	{
		struct xbpf_vm *vm = xbpf_vm__new(prog, &big.opts);

		CHECK(vm, "zero trailing option accepted: %s", strerror(errno));
		xbpf_vm__free(vm);
	}
	CHECK(xbpf_vm__test_run(NULL, &topts) == -EINVAL, "test_run NULL vm");
	CHECK(xbpf_vm__jit_func(NULL, 0, &code, &size) == -EINVAL, "jit_func NULL vm");
	CHECK(xbpf_vm__free(NULL) == NULL, "free NULL");
	CHECK(xbpf_vm__exec(NULL, NULL, 0) == 0, "exec NULL vm");
	xbpf_object__close(obj);
}

static void test_verified_and_not(void)
{
	XBPF_OPTS(xbpf_vm_opts, verify_opts, .engine = XBPF_ENGINE_INTERP);
	XBPF_OPTS(xbpf_vm_opts, skip_opts, .engine = XBPF_ENGINE_INTERP, .skip_verify = true);
	struct xbpf_object *obj;
	struct xbpf_prog *prog = open_prog(two_funcs, 6, XBPF_PROG_RAW_MEM, &obj);
	const struct xbpf_verify_info *info;
	struct xbpf_vm *vm;
	const void *code;
	size_t size;

	vm = xbpf_vm__new(prog, &verify_opts);
	CHECK(vm, "verified load: %s", strerror(errno));
	if (vm) {
		info = xbpf_vm__verify_info(vm);
		CHECK(info->accepted && info->func_cnt == 2 && info->func_start[1] == 3,
		      "verifier info: accepted %d funcs %u", info->accepted, info->func_cnt);
		CHECK(xbpf_vm__engine(vm) == XBPF_ENGINE_INTERP, "engine interp");
		CHECK(xbpf_vm__exec(vm, NULL, 0) == 42, "verified exec");
		CHECK(xbpf_vm__jit_func(vm, 0, &code, &size) == -ENOENT, "no JIT image for the interpreter");
		xbpf_vm__free(vm);
	}
	vm = xbpf_vm__new(prog, &skip_opts);
	CHECK(vm, "unverified load: %s", strerror(errno));
	if (vm) {
		info = xbpf_vm__verify_info(vm);
		CHECK(!info->accepted && info->func_cnt == 0, "verify info zeroed when skipped");
		CHECK(xbpf_vm__exec(vm, NULL, 0) == 42, "unverified exec");
		xbpf_vm__free(vm);
	}
	xbpf_object__close(obj);

	/* The verifier refuses recursion; without it the interpreter stops it. */
	prog = open_prog(recursion, 5, XBPF_PROG_RAW_MEM, &obj);
	errno = 0;
	vm = xbpf_vm__new(prog, &verify_opts);
	CHECK(!vm && errno != 0, "recursion refused by the verifier");
	xbpf_vm__free(vm);
	vm = xbpf_vm__new(prog, &skip_opts);
	CHECK(vm, "recursion loads without the verifier");
	if (vm) {
		struct xbpf_test_run_opts topts = { .sz = sizeof(topts), .repeat = 1 };

		CHECK(xbpf_vm__test_run(vm, &topts) == -E2BIG && errno == E2BIG, "recursion stopped: -E2BIG");
		xbpf_vm__free(vm);
	}
	xbpf_object__close(obj);
}

static void test_jit(void)
{
	XBPF_OPTS(xbpf_vm_opts, opts, .engine = XBPF_ENGINE_JIT);
	struct xbpf_object *obj;
	struct xbpf_prog *prog = open_prog(two_funcs, 6, XBPF_PROG_RAW_MEM, &obj);
	struct xbpf_vm *vm;
	const void *code0, *code1;
	size_t size0, size1;

	if (!__xbpf_jit_host_arch) {
		printf("note: no JIT back end here, JIT checks skipped\n");
		xbpf_object__close(obj);
		return;
	}
	vm = xbpf_vm__new(prog, &opts);
	CHECK(vm && xbpf_vm__engine(vm) == XBPF_ENGINE_JIT, "JIT engine chosen");
	if (vm) {
		CHECK(xbpf_vm__exec(vm, NULL, 0) == 42, "JIT exec");
		CHECK(!xbpf_vm__jit_func(vm, 0, &code0, &size0) && size0 > 0, "JIT func 0");
		CHECK(!xbpf_vm__jit_func(vm, 1, &code1, &size1) && size1 > 0 && code1 > code0,
		      "JIT func 1 after func 0");
		CHECK(xbpf_vm__jit_func(vm, 2, &code0, &size0) == -ENOENT, "no func 2");
		xbpf_vm__free(vm);
	}
	xbpf_object__close(obj);
}

static void test_run_repeats(void)
{
	XBPF_OPTS(xbpf_vm_opts, opts, .engine = XBPF_ENGINE_INTERP);
	struct xbpf_object *obj;
	struct xbpf_prog *prog = open_prog(xdp_flip, sizeof(xdp_flip) / sizeof(xdp_flip[0]),
					   XBPF_PROG_XDP, &obj);
	uint8_t pkt[64] = { 0x0f }, out[64];
	struct xbpf_vm *vm;
	int repeat;

	vm = xbpf_vm__new(prog, &opts);
	CHECK(vm, "XDP program loads: %s", strerror(errno));
	if (!vm) {
		xbpf_object__close(obj);
		return;
	}
	/* As in the kernel's bpf_test_run(): every run sees the previous one's packet. */
	for (repeat = 1; repeat <= 4; repeat++) {
		XBPF_OPTS(xbpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt),
			  .data_out = out, .data_size_out = sizeof(out), .repeat = repeat);

		memset(out, 0xaa, sizeof(out));
		CHECK(!xbpf_vm__test_run(vm, &topts), "test_run repeat %d", repeat);
		CHECK(topts.retval == 2, "XDP_PASS");
		CHECK(topts.data_size_out == sizeof(pkt), "output size %u", topts.data_size_out);
		CHECK(out[0] == (repeat % 2 ? 0xf0 : 0x0f), "repeat %d: first byte %#x", repeat, out[0]);
		CHECK(!memcmp(out + 1, pkt + 1, sizeof(pkt) - 1), "rest of the packet untouched");
	}
	{
		XBPF_OPTS(xbpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt), .repeat = -1);

		CHECK(xbpf_vm__test_run(vm, &topts) == -EINVAL, "negative repeat refused");
	}
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
}

int main(void)
{
	test_args();
	test_verified_and_not();
	test_jit();
	test_run_repeats();
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("vm: all tests passed\n");
	return 0;
}
