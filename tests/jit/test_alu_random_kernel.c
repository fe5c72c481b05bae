/* SPDX-License-Identifier: MIT */
/*
 * test_alu_random_kernel.c - random ALU programs, interpreter vs kernel.
 *
 * Each program loads R0-R9 with edge values (0, -1, INT_MIN of both widths,
 * shift counts around the widths, random bits), runs a random sequence of
 * ALU and ALU64 instructions (every operation including sdiv/smod, movsx,
 * byte swaps; divisors and shift counts in registers may be anything) and
 * folds all ten registers into R0.  The kernel runs each program twice as
 * XDP (R0's low half, then its high half) and must agree with the
 * interpreter's 64-bit R0, as must the host JIT.  Fixed seed: failures reproduce.
 * Exits 77 when the kernel refuses BPF to this process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa_corpus.h"
#include "insn.h"
#include "random_kernel.h"

#define PROGRAMS 2000
#define BODY_LEN 24
#define MAX_LEN (10 * 2 + BODY_LEN + 2 * 10 + 3)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t edge_value(void)
{
	static const uint64_t edges[] = {
		0, 1, 2, 7, 31, 32, 33, 63, 64, 65, 0xffffffffffffffffull, 0x8000000000000000ull,
		0x7fffffffffffffffull, 0x80000000ull, 0x7fffffffull, 0xffffffffull, 0x100000000ull,
		0xffffffff80000000ull, 0x80, 0x8000, 0xff, 0xffff,
	};

	return rnd() % 3 ? edges[rnd() % (sizeof(edges) / sizeof(edges[0]))] : rnd();
}

static int32_t edge_imm(void)
{
	static const int32_t imms[] = { 0, 1, -1, 2, -2, 7, 31, 32, 63, INT32_MIN, INT32_MAX, 0xff, 0xffff };

	return rnd() % 2 ? imms[rnd() % (sizeof(imms) / sizeof(imms[0]))] : (int32_t)rnd();
}

/* One random ALU instruction the kernel verifier accepts on scalars. */
static struct xbpf_insn random_alu(void)
{
	static const uint8_t ops[] = {
		XBPF_ADD, XBPF_SUB, XBPF_MUL, XBPF_DIV, XBPF_OR, XBPF_AND, XBPF_LSH, XBPF_RSH,
		XBPF_NEG, XBPF_MOD, XBPF_XOR, XBPF_MOV, XBPF_ARSH, XBPF_END,
	};
	bool alu64 = rnd() % 2, x = rnd() % 2;
	uint8_t op = ops[rnd() % sizeof(ops)];
	uint8_t class = alu64 ? XBPF_ALU64 : XBPF_ALU;
	uint8_t dst = rnd() % 10, src = rnd() % 10;
	int width = alu64 ? 64 : 32;
	int32_t imm = edge_imm();
	int16_t off = 0;

	switch (op) {
	case XBPF_NEG:
		return I(INSN(class | XBPF_NEG, dst, 0, 0, 0));
	case XBPF_END: {
		static const int32_t widths[] = { 16, 32, 64 };

		if (alu64)
			return I(BSWAP(dst, widths[rnd() % 3]));
		return rnd() % 2 ? I(BE(dst, widths[rnd() % 3])) : I(LE(dst, widths[rnd() % 3]));
	}
	case XBPF_DIV:
	case XBPF_MOD:
		off = rnd() % 2; /* signed v4 variants */
		if (!x && imm == 0)
			imm = 3; /* the verifier refuses a constant zero divisor */
		break;
	case XBPF_LSH:
	case XBPF_RSH:
	case XBPF_ARSH:
		if (!x)
			imm = (int32_t)(rnd() % width);
		break;
	case XBPF_MOV:
		if (x && rnd() % 2) {
			static const int16_t sx[] = { 8, 16, 32 };

			off = sx[rnd() % (alu64 ? 3 : 2)];
		}
		break;
	}
	if (x)
		return I(INSN(class | op | XBPF_X, dst, src, off, 0));
	return I(INSN(class | op | XBPF_K, dst, 0, off, imm));
}

static size_t build(struct xbpf_insn *p, bool hi)
{
	size_t n = 0;
	int r, k;

	for (r = 0; r < 10; r++) {
		uint64_t v = edge_value();

		p[n++] = I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, r, 0, 0, (int32_t)(uint32_t)v));
		p[n++] = I(INSN(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32)));
	}
	for (k = 0; k < BODY_LEN; k++)
		p[n++] = random_alu();
	for (r = 1; r < 10; r++) {
		p[n++] = I(A64K(MUL, 0, 0x9e3779b1));
		p[n++] = I(A64X(XOR, 0, r));
	}
	if (hi)
		p[n++] = I(A64K(RSH, 0, 32));
	p[n++] = I(EXIT());
	return n;
}

static char log_buf[1 << 16]; /* the kernel verifier's log, for FAIL lines */

int main(void)
{
	struct xbpf_insn probe[] = { MOV64K(0, 0), EXIT() }, p[MAX_LEN];
	uint32_t retval;
	int i, failures = 0, err;

	err = random_kernel_run(probe, 2, log_buf, sizeof(log_buf), &retval);
	if (err == -EPERM || err == -EACCES || err == -ENOSYS) {
		printf("SKIP: the kernel refuses BPF here: %s\n", strerror(-err));
		return 77;
	}
	for (i = 0; i < PROGRAMS; i++) {
		uint64_t seed = rng_state;
		struct isa_case c = { .name = "random" };
		struct isa_result res;
		int hi;

		c.insns = p;
		c.insn_cnt = build(p, false);
		if (isa_corpus_run(&c, XBPF_ENGINE_INTERP, false, &res) || res.load_err || res.run_err) {
			fprintf(stderr, "FAIL program %d (seed %#llx): interpreter refused it\n", i,
				(unsigned long long)seed);
			failures++;
			continue;
		}
		if (random_kernel_check_jit(&c, &res, i))
			failures++;
		for (hi = 0; hi < 2; hi++) {
			uint32_t mine = hi ? (uint32_t)(res.r0 >> 32) : (uint32_t)res.r0;

			if (hi) {
				/* Same program, high half: rebuild from the same seed. */
				rng_state = seed;
				build(p, true);
			}
			err = random_kernel_run(p, c.insn_cnt + hi, log_buf, sizeof(log_buf), &retval);
			if (err) {
				fprintf(stderr, "FAIL program %d (seed %#llx): kernel: %s\n%s\n", i,
					(unsigned long long)seed, strerror(-err), log_buf);
				failures++;
				break;
			}
			if (retval != mine) {
				char text[128];
				size_t k;

				fprintf(stderr, "FAIL program %d (seed %#llx) %s half: kernel %#x, interpreter %#x\n",
					i, (unsigned long long)seed, hi ? "high" : "low", retval, mine);
				for (k = 0; k < c.insn_cnt + hi; k += xbpf_insn_len(&p[k])) {
					xbpf_disasm_insn(p, c.insn_cnt + hi, k, NULL, text, sizeof(text));
					fprintf(stderr, "  %3zu: %s\n", k, text);
				}
				failures++;
				break;
			}
		}
	}
	printf("%d random ALU programs compared with the kernel, %d failure(s)\n", PROGRAMS, failures);
	return failures ? 1 : 0;
}
