/* SPDX-License-Identifier: MIT */
/*
 * test_calls_random_kernel.c - random multi-function programs, interpreter
 * vs kernel: the calling convention under stress.
 *
 * main loads R1-R9, then makes calls with fresh R1-R5 arguments, mixing R0
 * into R6-R9 after each one.  Each callee computes on its arguments, keeps a
 * value in its own stack slot, clobbers R6-R9 (the engine must restore the
 * caller's), may call a later function (no recursion; up to 8 frames) and
 * returns a value folded from all of that.  main finally folds R0 and R6-R9
 * into R0.  The kernel runs each program as XDP twice (low, then high half
 * of R0) and must agree with the interpreter, as must the host JIT.  Fixed seed.
 * Exits 77 when the kernel refuses BPF to this process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa_corpus.h"
#include "insn.h"
#include "random_kernel.h"

#define PROGRAMS 300
#define MAX_FUNCS 8
#define FUNC_CAP 160
#define PROG_CAP (MAX_FUNCS * FUNC_CAP + 2)

static uint64_t rng_state = 0x452821e638d01377ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

struct func {
	struct xbpf_insn insns[FUNC_CAP];
	size_t n;
	int call_to[FUNC_CAP]; /* function index for call slots, -1 otherwise */
};

static void emit(struct func *f, struct xbpf_insn insn, int call_to)
{
	if (f->n >= FUNC_CAP)
		abort();
	f->call_to[f->n] = call_to;
	f->insns[f->n++] = insn;
}

static void emit_ldimm64(struct func *f, int reg, uint64_t v)
{
	emit(f, I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, reg, 0, 0, (int32_t)(uint32_t)v)), -1);
	emit(f, I(INSN(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32))), -1);
}

/* A random ALU op between two registers of `regs` (dst != R10). */
static void emit_alu(struct func *f, const int *regs, int nregs)
{
	static const uint8_t ops[] = { XBPF_ADD, XBPF_SUB, XBPF_MUL, XBPF_XOR, XBPF_OR, XBPF_AND,
				       XBPF_LSH, XBPF_RSH, XBPF_ARSH, XBPF_DIV, XBPF_MOD, XBPF_MOV };
	uint8_t class = rnd() % 2 ? XBPF_ALU64 : XBPF_ALU;
	uint8_t op = ops[rnd() % sizeof(ops)];
	int dst = regs[rnd() % nregs], src = regs[rnd() % nregs];

	emit(f, I(INSN(class | op | XBPF_X, dst, src, 0, 0)), -1);
}

/* Function `idx` of `cnt`: callee convention as described at the top. */
static void gen_callee(struct func *f, int idx, int cnt)
{
	static const int args[] = { 1, 2, 3, 4, 5 };
	int k, steps = 2 + (int)(rnd() % 6);

	f->n = 0;
	for (k = 0; k < steps; k++)
		emit_alu(f, args, 5);
	emit(f, I(STX(DW, 10, (int)(1 + rnd() % 5), -8)), -1);
	for (k = 6; k <= 9; k++)
		emit(f, I(MOV64X(k, (int)(1 + rnd() % 5))), -1); /* clobber the caller's R6-R9 */
	emit(f, I(MOV64X(0, (int)(1 + rnd() % 5))), -1);
	if (idx + 1 < cnt && rnd() % 3) {
		int target = idx + 1 + (int)(rnd() % (cnt - idx - 1));

		emit(f, I(MOV64X(6, 0)), -1); /* R0 so far survives the call in R6 */
		emit(f, I(CALL_PC(0)), target);
		emit(f, I(A64X(XOR, 0, 6)), -1);
	}
	emit(f, I(LDX(DW, 1, 10, -8)), -1);
	emit(f, I(A64K(MUL, 0, 0x9e3779b1)), -1);
	emit(f, I(A64X(ADD, 0, 1)), -1);
	emit(f, I(EXIT()), -1);
}

static void gen_main(struct func *f, int cnt, bool hi)
{
	static const int saved[] = { 6, 7, 8, 9 };
	int order[MAX_FUNCS], r, c;

	f->n = 0;
	for (r = 0; r <= 9; r++)
		emit_ldimm64(f, r, rnd());
	/* Every function is called (the kernel refuses unreachable code), in a random order. */
	for (c = 0; c < cnt - 1; c++)
		order[c] = c + 1;
	for (c = cnt - 2; c > 0; c--) {
		int j = (int)(rnd() % (uint64_t)(c + 1)), t = order[c];

		order[c] = order[j];
		order[j] = t;
	}
	for (c = 0; c < cnt - 1; c++) {
		int target = order[c];

		for (r = 1; r <= 5; r++)
			emit_ldimm64(f, r, rnd() % 4 ? rnd() % 1000 : rnd());
		emit(f, I(CALL_PC(0)), target);
		emit(f, I(A64X(XOR, saved[rnd() % 4], 0)), -1);
		emit_alu(f, saved, 4);
	}
	for (r = 6; r <= 9; r++) {
		emit(f, I(A64K(MUL, 0, 0x9e3779b1)), -1);
		emit(f, I(A64X(XOR, 0, r)), -1);
	}
	if (hi)
		emit(f, I(A64K(RSH, 0, 32)), -1);
	emit(f, I(EXIT()), -1);
}

/* Lay the functions out one after the other and resolve call offsets. */
static size_t link_funcs(const struct func *funcs, int cnt, struct xbpf_insn *out)
{
	size_t start[MAX_FUNCS], n = 0, k;
	int i;

	for (i = 0; i < cnt; i++) {
		start[i] = n;
		n += funcs[i].n;
	}
	for (i = 0; i < cnt; i++) {
		for (k = 0; k < funcs[i].n; k++) {
			struct xbpf_insn insn = funcs[i].insns[k];

			if (funcs[i].call_to[k] >= 0)
				insn.imm = (int32_t)start[funcs[i].call_to[k]] - (int32_t)(start[i] + k + 1);
			out[start[i] + k] = insn;
		}
	}
	return n;
}

static char log_buf[1 << 16]; /* the kernel verifier's log, for FAIL lines */

int main(void)
{
	static struct func funcs[MAX_FUNCS];
	static struct xbpf_insn prog[PROG_CAP];
	struct xbpf_insn probe[] = { MOV64K(0, 0), EXIT() };
	size_t total_insns = 0;
	uint32_t retval;
	int i, failures = 0, err;

	err = random_kernel_run(probe, 2, log_buf, sizeof(log_buf), &retval);
	if (err == -EPERM || err == -EACCES || err == -ENOSYS) {
		printf("SKIP: the kernel refuses BPF here: %s\n", strerror(-err));
		return 77;
	}
	for (i = 0; i < PROGRAMS; i++) {
		int cnt = 2 + (int)(rnd() % (MAX_FUNCS - 1)), f, hi;
		uint64_t seed = rng_state;
		struct isa_case c = { .name = "random-calls" };
		struct isa_result res;

		for (hi = 0; hi < 2; hi++) {
			uint32_t mine;
			size_t n;

			rng_state = seed; /* the same program, then with R0 >> 32 */
			gen_main(&funcs[0], cnt, hi);
			for (f = 1; f < cnt; f++)
				gen_callee(&funcs[f], f, cnt);
			n = link_funcs(funcs, cnt, prog);
			if (!hi) {
				total_insns += n;
				c.insns = prog;
				c.insn_cnt = n;
				if (isa_corpus_run(&c, XBPF_ENGINE_INTERP, false, &res) || res.load_err ||
				    res.run_err) {
					fprintf(stderr, "FAIL program %d: interpreter refused it\n", i);
					failures++;
					break;
				}
				if (random_kernel_check_jit(&c, &res, i))
					failures++;
			}
			mine = hi ? (uint32_t)(res.r0 >> 32) : (uint32_t)res.r0;
			err = random_kernel_run(prog, n, log_buf, sizeof(log_buf), &retval);
			if (err) {
				fprintf(stderr, "FAIL program %d: kernel: %s\n%s\n", i, strerror(-err), log_buf);
				failures++;
				break;
			}
			if (retval != mine) {
				fprintf(stderr, "FAIL program %d (%d functions) %s half: kernel %#x, interpreter %#x\n",
					i, cnt, hi ? "high" : "low", retval, mine);
				failures++;
				break;
			}
		}
	}
	printf("%d random multi-function programs (%zu insns) compared with the kernel, %d failure(s)\n",
	       PROGRAMS, total_insns, failures);
	return failures ? 1 : 0;
}
