/* SPDX-License-Identifier: MIT */
/*
 * test_jit_vm.c - the JIT through the public engine API, on the real
 * runtime core: a verified two-function program that looks a value up in an
 * array map and calls a subprogram.  On a host with a back end (x86-64,
 * arm64 - the latter in the cross build under qemu) the VM must really run
 * native code, not fall back to the interpreter silently, and agree with the
 * interpreter and with the value the control plane stored.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine_impl.h" /* __xbpf_jit_host_arch: is there a back end at all? */
#include "insn.h"
#include "xbpf_engine.h"


static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
		}                                                                                  \
	} while (0)

/* v = lookup(map, 0)->value; r0 = v + sub(v) with sub(x) = 3 * x + 1. */
static const struct xbpf_insn prog_insns[] = {
	INSN(XBPF_ST | XBPF_MEM | XBPF_W, 10, 0, -4, 0),
	INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 2, 10, 0, 0),
	INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, 2, 0, 0, -4),
	INSN(XBPF_LD | XBPF_DW | XBPF_IMM, 1, XBPF_PSEUDO_MAP_FD, 0, 0),
	INSN(0, 0, 0, 0, 0),
	INSN(XBPF_JMP | XBPF_CALL, 0, 0, 0, 1 /* BPF_FUNC_map_lookup_elem */),
	INSN(XBPF_JMP | XBPF_JEQ | XBPF_K, 0, 0, 5, 0),
	INSN(XBPF_LDX | XBPF_MEM | XBPF_DW, 7, 0, 0, 0),
	INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 1, 7, 0, 0),
	INSN(XBPF_JMP | XBPF_CALL, 0, XBPF_PSEUDO_CALL, 0, 4),
	INSN(XBPF_ALU64 | XBPF_ADD | XBPF_X, 0, 7, 0, 0),
	INSN(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0),
	INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 0, 0, 0, 0),
	INSN(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0),
	/* sub */
	INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 0, 1, 0, 0),
	INSN(XBPF_ALU64 | XBPF_MUL | XBPF_K, 0, 0, 0, 3),
	INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, 0, 0, 0, 1),
	INSN(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0),
};

static struct xbpf_vm *make_vm(const struct xbpf_prog *prog, enum xbpf_engine_kind kind, bool blind,
			       char *log, size_t log_size)
{
	XBPF_OPTS(xbpf_vm_opts, opts, .engine = kind, .blind_constants = blind, .log_level = 1,
		  .log_buf = log, .log_size = log_size);

	return xbpf_vm__new(prog, &opts);
}

int main(void)
{
	static const struct xbpf_map_spec maps[] = {
		{ .name = "values", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1 },
	};
	static char log[16384];
	struct xbpf_object *obj;
	struct xbpf_prog *prog;
	uint32_t key = 0;
	uint64_t value;
	int err;

	if (!__xbpf_jit_host_arch) {
		printf("SKIP: no JIT back end for this host architecture\n");
		return 77;
	}
	obj = xbpf_object__open_raw(prog_insns, sizeof(prog_insns) / sizeof(prog_insns[0]), XBPF_PROG_RAW_MEM,
				    maps, 1, NULL);
	if (!obj) {
		fprintf(stderr, "FAIL: open_raw: %s\n", strerror(errno));
		return 1;
	}
	prog = xbpf_object__next_prog(obj, NULL);
	CHECK(prog, "no program in the raw object");

	for (int blind = 0; blind < 2 && prog; blind++) {
		struct xbpf_vm *jit, *interp;
		const void *code = NULL;
		size_t size = 0;

		log[0] = 0;
		jit = make_vm(prog, XBPF_ENGINE_JIT, blind, log, sizeof(log));
		interp = make_vm(prog, XBPF_ENGINE_INTERP, false, NULL, 0);
		CHECK(jit && interp, "xbpf_vm__new: %s\n%s", strerror(errno), log);
		if (!jit || !interp) {
			xbpf_vm__free(jit);
			xbpf_vm__free(interp);
			continue;
		}
		/* The point of this test: no silent fallback to the interpreter. */
		CHECK(xbpf_vm__engine(jit) == XBPF_ENGINE_JIT, "blind %d: JIT VM runs the %s", blind,
		      xbpf_engine_name(xbpf_vm__engine(jit)));
		CHECK(xbpf_vm__engine(interp) == XBPF_ENGINE_INTERP, "interpreter VM runs the %s",
		      xbpf_engine_name(xbpf_vm__engine(interp)));

		for (size_t f = 0; f < 2; f++) {
			err = xbpf_vm__jit_func(jit, f, &code, &size);
			CHECK(!err && code && size >= 8, "blind %d: jit_func(%zu) = %d, size %zu", blind, f, err, size);
#if defined(__aarch64__)
			/* Every arm64 function opens with stp x29, x30, [sp, #-16]! */
			if (!err && code && size >= 4) {
				uint32_t first;

				memcpy(&first, code, 4);
				CHECK(first == 0xa9bf7bfdu, "func %zu starts with %08x, not the arm64 prologue", f,
				      first);
			}
#endif
		}
		CHECK(xbpf_vm__jit_func(jit, 2, &code, &size) == -ENOENT, "jit_func past the last function");
		CHECK(xbpf_vm__jit_func(interp, 0, &code, &size) == -ENOENT, "jit_func on the interpreter");

		/* The control plane changes the value between runs, as xlbd does. */
		for (value = 0; value < 100000000; value = value * 7 + 3) {
			uint64_t want = value + 3 * value + 1;
			uint64_t got_jit, got_interp;

			err = xbpf_map__update(xbpf_object__map(obj, 0), &key, &value, XBPF_ANY);
			got_jit = xbpf_vm__exec(jit, NULL, 0);
			got_interp = xbpf_vm__exec(interp, NULL, 0);
			CHECK(!err && got_jit == want && got_interp == want,
			      "blind %d value %llu: update %d, jit %llu interp %llu want %llu", blind,
			      (unsigned long long)value, err, (unsigned long long)got_jit,
			      (unsigned long long)got_interp, (unsigned long long)want);
		}
		xbpf_vm__free(jit);
		xbpf_vm__free(interp);
	}
	xbpf_object__close(obj);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("PASS (%s JIT)\n", __xbpf_jit_host_arch->name);
	return 0;
}
