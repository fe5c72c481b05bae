/* SPDX-License-Identifier: MIT */
/*
 * test_jit_far.c - jumps whose native distance exceeds the short branch
 * forms of the host JIT: arm64 B.cond reaches +-1 MiB, x86-64 rel8 +-127 B.
 *
 * A conditional jump skips a block of ~32000 cmpxchg instructions with an
 * offset that does not fit an addressing mode (9 A64 instructions each, so
 * more than 1 MiB of code), and a backward conditional jump re-runs it; the
 * same for gotol over a 300000-instruction block.  Every condition is tried
 * taken and not taken (64-bit immediate; 32-bit register for every other
 * one), so the long form's inverted condition is checked for each one.  The expected outcome
 * comes from evaluating the condition in C; the program's effects (counters
 * in memory, loop count) tell which way each jump went.
 *
 * Hermetic: links the JIT driver and the host back end, no runtime core.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "insn.h"

/* No helpers: the JIT asks for an implementation only when a program calls one. */
xbpf_helper_fn xbpf_helper_impl(int32_t id)
{
	return NULL;
}


struct prog {
	struct xbpf_insn *insns;
	uint32_t cnt, cap;
};

static void add(struct prog *p, struct xbpf_insn insn)
{
	if (p->cnt == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->insns = realloc(p->insns, p->cap * sizeof(*p->insns));
		if (!p->insns) {
			perror("realloc");
			exit(1);
		}
	}
	p->insns[p->cnt++] = insn;
}

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                                     \
			fprintf(stderr, "\n");                                                     \
		}                                                                                  \
	} while (0)

/* What a conditional jump decides, straight from the ISA's definition. */
static bool cond_holds(uint8_t op, bool is64, uint64_t a, uint64_t b)
{
	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	int64_t sa = is64 ? (int64_t)a : (int32_t)a, sb = is64 ? (int64_t)b : (int32_t)b;

	switch (op) {
	case XBPF_JEQ: return a == b;
	case XBPF_JNE: return a != b;
	case XBPF_JSET: return (a & b) != 0;
	case XBPF_JGT: return a > b;
	case XBPF_JGE: return a >= b;
	case XBPF_JLT: return a < b;
	case XBPF_JLE: return a <= b;
	case XBPF_JSGT: return sa > sb;
	case XBPF_JSGE: return sa >= sb;
	case XBPF_JSLT: return sa < sb;
	case XBPF_JSLE: return sa <= sb;
	}
	abort();
}

/* Atomic offset outside every load/store immediate form. */
#define FAR_OFF 4104
#define CMPXCHG_BLOCK 32000
#define GOTOL_BLOCK 300000

/*
 * r6 = a (R1), r7 = slots (R2), r8 = passes.
 * L:    r0 = 0; r3 = 5; r4 = r7 - FAR_OFF
 *       if r6 <op> b goto SKIP                  (forward, far)
 *       CMPXCHG_BLOCK x cmpxchg [r4 + FAR_OFF], r3
 *       lock *(u64 *)(r7 + 8) += 1
 * SKIP: r8 += 1
 *       if r8 < 2 goto L                        (backward, far)
 *       r0 = r8; exit
 * Taken: slots stay 0.  Not taken: slots[0] = 5, slots[1] = 2.  r0 = 2.
 */
static void build_cond(struct prog *p, uint8_t op, bool is64, bool use_reg, int32_t b)
{
	uint8_t cls = is64 ? XBPF_JMP : XBPF_JMP32;
	uint32_t loop, jmp;

	p->cnt = 0;
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 6, 1, 0, 0)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 7, 2, 0, 0)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 8, 0, 0, 0)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 9, 0, 0, b)));
	loop = p->cnt;
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 0, 0, 0, 0)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 3, 0, 0, 5)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 4, 7, 0, 0)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, 4, 0, 0, -FAR_OFF)));
	jmp = p->cnt;
	if (use_reg)
		add(p, I(INSN(cls | op | XBPF_X, 6, 9, 0, 0)));
	else
		add(p, I(INSN(cls | op | XBPF_K, 6, 0, 0, b)));
	for (int i = 0; i < CMPXCHG_BLOCK; i++)
		add(p, I(INSN(XBPF_STX | XBPF_ATOMIC | XBPF_DW, 4, 3, FAR_OFF, XBPF_CMPXCHG)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 5, 0, 0, 1)));
	add(p, I(INSN(XBPF_STX | XBPF_ATOMIC | XBPF_DW, 7, 5, 8, XBPF_ADD)));
	p->insns[jmp].off = (int16_t)(p->cnt - jmp - 1);
	add(p, I(INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, 8, 0, 0, 1)));
	add(p, I(INSN(XBPF_JMP | XBPF_JLT | XBPF_K, 8, 0, (int16_t)((int)loop - (int)p->cnt - 1), 2)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 0, 8, 0, 0)));
	add(p, I(INSN(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0)));
}

/*
 * Same shape with gotol: r5 counts the block's instructions that ran.
 * L:    if r6 <op> b goto +1; gotol SKIP; GOTOL_BLOCK x r5 += 1
 * SKIP: r8 += 1; if r8 >= 2 goto +1; gotol L; r0 = r5; exit
 */
static void build_gotol(struct prog *p, uint8_t op, int32_t b)
{
	uint32_t loop, ja;

	p->cnt = 0;
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 6, 1, 0, 0)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 5, 0, 0, 0)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, 8, 0, 0, 0)));
	loop = p->cnt;
	add(p, I(INSN(XBPF_JMP | op | XBPF_K, 6, 0, 1, b)));
	ja = p->cnt;
	add(p, I(INSN(XBPF_JMP32 | XBPF_JA, 0, 0, 0, 0)));
	for (int i = 0; i < GOTOL_BLOCK; i++)
		add(p, I(INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, 5, 0, 0, 1)));
	p->insns[ja].imm = (int32_t)(p->cnt - ja - 1);
	add(p, I(INSN(XBPF_ALU64 | XBPF_ADD | XBPF_K, 8, 0, 0, 1)));
	add(p, I(INSN(XBPF_JMP | XBPF_JGE | XBPF_K, 8, 0, 1, 2)));
	add(p, I(INSN(XBPF_JMP32 | XBPF_JA, 0, 0, 0, (int32_t)loop - (int32_t)p->cnt - 1)));
	add(p, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_X, 0, 5, 0, 0)));
	add(p, I(INSN(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0)));
}

static int compile(const struct prog *p, struct xbpf_jit_image *img)
{
	static const uint32_t func_start[1] = { 0 };
	static const uint16_t stack_depth[1] = { 0 };
	struct xbpf_exec_prog e = {
		.insns = p->insns,
		.insn_cnt = p->cnt,
		.func_cnt = 1,
		.func_start = func_start,
		.stack_depth = stack_depth,
		.verified = true,
	};

	return __xbpf_jit_compile(__xbpf_jit_host_arch, &e, false, img);
}

static const uint8_t ops[] = { XBPF_JEQ, XBPF_JNE, XBPF_JSET, XBPF_JGT, XBPF_JGE, XBPF_JLT,
			       XBPF_JLE, XBPF_JSGT, XBPF_JSGE, XBPF_JSLT, XBPF_JSLE };
/* Operands around the interesting edges: equal, unsigned vs signed order, 32-bit halves. */
static const uint64_t values[] = { 5, 4, 6, 0, (uint64_t)-1, 0x80000005ull, 0x100000005ull, 0xffffffff00000004ull };

static void test_cond(void)
{
	struct prog p = {};
	uint64_t min_size = UINT64_MAX;

	for (size_t o = 0; o < sizeof(ops); o++) {
		for (int variant = 0; variant < 2; variant++) {
			bool is64 = variant == 0, use_reg = variant == 1;

			/* jmp32/reg on every other condition: compiles are slow under qemu. */
			if (variant == 1 && o % 2)
				continue;
			struct xbpf_jit_image img;
			int taken = 0, not_taken = 0;
			int err;

			build_cond(&p, ops[o], is64, use_reg, 5);
			err = compile(&p, &img);
			CHECK(!err, "cond op %#x variant %d: compile: %d", ops[o], variant, err);
			if (err)
				continue;
			if (img.size < min_size)
				min_size = img.size;
			for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
				uint64_t slots[2] = { 0, 0 };
				bool want = cond_holds(ops[o], is64, values[v], 5);
				uint64_t r0;

				r0 = ((xbpf_jit_entry_fn)img.code)(values[v], (uint64_t)(uintptr_t)slots);
				taken += want;
				not_taken += !want;
				CHECK(r0 == 2, "cond op %#x %s %s a=%#llx: backward far jump ran %llu times, want 2",
				      ops[o], is64 ? "jmp" : "jmp32", use_reg ? "reg" : "imm",
				      (unsigned long long)values[v], (unsigned long long)r0);
				CHECK(slots[0] == (want ? 0 : 5) && slots[1] == (want ? 0 : 2),
				      "cond op %#x %s %s a=%#llx: %s, but slots = %llu, %llu", ops[o],
				      is64 ? "jmp" : "jmp32", use_reg ? "reg" : "imm",
				      (unsigned long long)values[v], want ? "taken" : "not taken",
				      (unsigned long long)slots[0], (unsigned long long)slots[1]);
			}
			/* The operand table must exercise both outcomes of every condition. */
			CHECK(taken && not_taken, "cond op %#x variant %d: operands cover only one outcome", ops[o],
			      variant);
			__xbpf_jit_image_free(&img);
		}
	}
	printf("conditional jumps across %llu bytes of native code: checked\n", (unsigned long long)min_size);
#if defined(__aarch64__)
	/* Otherwise this test would not test the long form at all. */
	CHECK(min_size > (1u << 20) + 64, "image of %llu bytes does not exceed the B.cond range",
	      (unsigned long long)min_size);
#endif
	free(p.insns);
}

static void test_gotol(void)
{
	static const uint8_t gops[] = { XBPF_JEQ, XBPF_JSGT };
	struct prog p = {};

	for (size_t o = 0; o < sizeof(gops); o++) {
		struct xbpf_jit_image img;
		int err;

		build_gotol(&p, gops[o], 5);
		err = compile(&p, &img);
		CHECK(!err, "gotol op %#x: compile: %d", gops[o], err);
		if (err)
			continue;
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			bool skip_gotol = cond_holds(gops[o], true, values[v], 5);
			uint64_t r0 = ((xbpf_jit_entry_fn)img.code)(values[v], 0);
			uint64_t want = skip_gotol ? 2ull * GOTOL_BLOCK : 0;

			CHECK(r0 == want, "gotol op %#x a=%#llx: r0 = %llu, want %llu", gops[o],
			      (unsigned long long)values[v], (unsigned long long)r0, (unsigned long long)want);
		}
		printf("gotol across %zu bytes of native code: checked\n", img.size);
		__xbpf_jit_image_free(&img);
	}
	free(p.insns);
}

int main(void)
{
	if (!__xbpf_jit_host_arch) {
		printf("SKIP: no JIT back end for this host architecture\n");
		return 77;
	}
	test_cond();
	test_gotol();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
