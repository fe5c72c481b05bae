/* SPDX-License-Identifier: MIT */
/*
 * fuzz_vm.c - libFuzzer target: bytes as instructions through the encoding
 * checks, the disassembler, the VM's structural checks (skip_verify) and,
 * for programs that touch no memory, call no helper and jump only forward,
 * the interpreter.
 * scripts/fuzz.sh runs it (seeds: tests/jit/corpus/fuzz_vm/, crashers
 * land in tests/jit/corpus/regress/); the same file built with
 * -DXBPF_FUZZ_REPLAY and linked with tests/lib/fuzz_replay.c is a plain test
 * replaying both directories.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xbpf_engine.h"

static bool runnable(const struct xbpf_insn *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += xbpf_insn_len(&p[i])) {
		uint8_t class = XBPF_CLASS(p[i].code);

		if (class == XBPF_LDX || class == XBPF_ST || class == XBPF_STX ||
		    (class == XBPF_LD && p[i].code != (XBPF_LD | XBPF_DW | XBPF_IMM)) ||
		    (p[i].code == (XBPF_JMP | XBPF_CALL) && p[i].src_reg != XBPF_PSEUDO_CALL))
			return false;
		/* Backward jumps would only spend the endless-loop budget, slowly. */
		if ((class == XBPF_JMP || class == XBPF_JMP32) && XBPF_OP(p[i].code) != XBPF_CALL &&
		    XBPF_OP(p[i].code) != XBPF_EXIT &&
		    (p[i].code == (XBPF_JMP32 | XBPF_JA) ? p[i].imm < 0 : p[i].off < 0))
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xbpf_insn insns[256];
	size_t n = size / sizeof(struct xbpf_insn), i;
	struct xbpf_object *obj;
	struct xbpf_vm *vm;
	char text[160];

	if (!n || n > 256)
		return 0;
	memcpy(insns, data, n * sizeof(struct xbpf_insn));
	for (i = 0; i < n; i++)
		xbpf_disasm_insn(insns, n, i, NULL, text, sizeof(text));

	obj = xbpf_object__open_raw(insns, n, XBPF_PROG_RAW_MEM, NULL, 0, NULL);
	if (!obj)
		return 0;
	{
		XBPF_OPTS(xbpf_vm_opts, opts, .skip_verify = true);

		vm = xbpf_vm__new(xbpf_object__next_prog(obj, NULL), &opts);
	}
	if (vm && runnable(insns, n)) {
		struct xbpf_test_run_opts topts = { .sz = sizeof(topts), .repeat = 1 };

		xbpf_vm__test_run(vm, &topts);
	}
	xbpf_vm__free(vm);
	xbpf_object__close(obj);
	return 0;
}

#ifdef XBPF_FUZZ_REPLAY
static int quiet(enum xbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* Called by tests/lib/fuzz_replay.c's main() before the corpus replays. */
void fuzz_replay_setup(void);
void fuzz_replay_setup(void)
{
	xbpf_set_print(quiet);
}
#endif
