/* SPDX-License-Identifier: MIT */
/*
 * test_isa_interp.c - the ISA corpus on the interpreter, twice: through the
 * VM front end (skip_verify: structural checks, budgeted dispatch table,
 * 512-byte frames) and straight through __xbpf_interp_run_err() as a
 * verified program would run (fast dispatch table, frames sized to what each
 * function touches, as the verifier's stack depths would size them).
 * No kernel needed: runs natively and on arm64 under qemu.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "isa_corpus.h"

static bool is_stack_access(const struct xbpf_insn *insn)
{
	switch (XBPF_CLASS(insn->code)) {
	case XBPF_LDX:
		return insn->src_reg == XBPF_REG_FP;
	case XBPF_ST:
	case XBPF_STX:
		return insn->dst_reg == XBPF_REG_FP;
	default:
		return false;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Functions from pseudo-call targets; stack depth from the lowest r10 offset used. */
static int run_direct(const struct isa_case *c, uint64_t *ret_r0, int *ret_err)
{
	uint32_t starts[XBPF_MAX_SUBPROGS + 1];
	uint16_t depth[XBPF_MAX_SUBPROGS + 1];
	struct xbpf_exec_prog prog = { 0 };
	size_t i, n = 1, f;
	uint8_t *mem;

	starts[0] = 0;
	for (i = 0; i < c->insn_cnt && n <= XBPF_MAX_SUBPROGS; i++)
		if (xbpf_insn_is_pseudo_call(&c->insns[i]))
			starts[n++] = (uint32_t)(i + c->insns[i].imm + 1);
	qsort(starts, n, sizeof(starts[0]), cmp_u32);
	for (i = 1, f = 1; i < n; i++)
		if (starts[i] != starts[f - 1])
			starts[f++] = starts[i];
	n = f;
	for (f = 0; f < n; f++) {
		size_t end = f + 1 < n ? starts[f + 1] : c->insn_cnt;
		int lowest = 0;

		for (i = starts[f]; i < end; i++)
			if (is_stack_access(&c->insns[i]) && c->insns[i].off < lowest)
				lowest = c->insns[i].off;
		depth[f] = (uint16_t)-lowest;
	}
	prog.insns = c->insns;
	prog.insn_cnt = (uint32_t)c->insn_cnt;
	prog.func_cnt = (uint32_t)n;
	prog.func_start = starts;
	prog.stack_depth = depth;
	prog.verified = true;

	mem = malloc(c->mem_len ? c->mem_len : 1);
	if (!mem)
		return -ENOMEM;
	if (c->mem_len)
		memcpy(mem, c->mem, c->mem_len);
	*ret_r0 = __xbpf_interp_run_err(&prog, (uintptr_t)mem, c->mem_len, ret_err);
	free(mem);
	return 0;
}

int main(void)
{
	const struct isa_case *cases;
	size_t cnt, i, direct = 0;
	int failures;

	failures = isa_corpus_check_all(XBPF_ENGINE_INTERP, stderr);

	cases = isa_corpus_cases(&cnt);
	for (i = 0; i < cnt; i++) {
		const struct isa_case *c = &cases[i];
		uint64_t r0;
		int err;

		/* Unverifiable programs run only with the budgeted table. */
		/* Context programs need the core's context: test_run covered them. */
		if (c->load_err || c->type || (c->flags & ISA_F_INTERP_ONLY && c->run_err != -E2BIG))
			continue;
		if (run_direct(c, &r0, &err)) {
			failures++;
			continue;
		}
		direct++;
		if (c->run_err ? err != c->run_err : (err || r0 != c->expect)) {
			fprintf(stderr, "FAIL %s [direct]: r0 %#llx err %d, expected %#llx err %d\n", c->name,
				(unsigned long long)r0, err, (unsigned long long)c->expect, c->run_err);
			failures++;
		}
	}
	fprintf(stderr, "direct verified-mode runs: %zu\n", direct);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("isa corpus: %zu cases, all passed on the interpreter\n", cnt);
	return 0;
}
