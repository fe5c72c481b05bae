/* SPDX-License-Identifier: MIT */
/*
 * tprog.c - growable test programs, the tests' deterministic random numbers
 * and a program listing; no helpers, so binaries that link the real runtime
 * core can use the program generator too.
 */
#include <stdlib.h>
#include <string.h>

#include "jit_test.h"

void tprog_init(struct tprog *p)
{
	memset(p, 0, sizeof(*p));
	p->func_cnt = 1;
}

void tprog_free(struct tprog *p)
{
	free(p->insns);
	memset(p, 0, sizeof(*p));
}

void tprog_add(struct tprog *p, struct xbpf_insn insn)
{
	if (p->cnt == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->insns = realloc(p->insns, p->cap * sizeof(*p->insns));
		if (!p->insns)
			abort();
	}
	p->insns[p->cnt++] = insn;
}

void tprog_ld_imm64(struct tprog *p, uint8_t dst, uint64_t v)
{
	tprog_add(p, I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, dst, 0, 0, (int32_t)(uint32_t)v)));
	tprog_add(p, I(INSN(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32))));
}

void tprog_func(struct tprog *p, uint16_t stack_depth)
{
	if (p->cnt == 0) {
		p->stack_depth[0] = stack_depth;
		return;
	}
	p->func_start[p->func_cnt] = p->cnt;
	p->stack_depth[p->func_cnt] = stack_depth;
	p->func_cnt++;
}

struct xbpf_exec_prog tprog_exec(const struct tprog *p)
{
	struct xbpf_exec_prog e = {
		.insns = p->insns,
		.insn_cnt = p->cnt,
		.func_cnt = p->func_cnt,
		.func_start = p->func_start,
		.stack_depth = p->stack_depth,
		.verified = true,
	};
	return e;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

void t_srand(uint64_t seed)
{
	rng_state = seed ? seed : 1;
}

uint64_t t_rand(void)
{
	/* xorshift64*: deterministic per seed, so failures reproduce. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

void dump_prog(const struct xbpf_exec_prog *prog)
{
	uint32_t f = 0;

	for (uint32_t i = 0; i < prog->insn_cnt; i++) {
		const struct xbpf_insn *in = &prog->insns[i];

		if (f < prog->func_cnt && prog->func_start[f] == i)
			fprintf(stderr, "func %u (stack %u):\n", f, prog->stack_depth[f]), f++;
		fprintf(stderr, "  %4u: code=%02x dst=%u src=%u off=%d imm=%d\n", i, in->code, in->dst_reg,
			in->src_reg, in->off, in->imm);
	}
}
