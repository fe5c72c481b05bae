/* SPDX-License-Identifier: MIT */
/*
 * test_jit_calls.c - bpf-to-bpf calls in the JIT: 8-frame chains with large
 * frames, callees writing their caller's stack, R6-R9 surviving calls and
 * helpers, calls to the first and the last function of the image, jumps
 * whose distance crosses the short/long encoding boundary in many
 * subprograms.  Expected values are computed here in C; the reference
 * interpreter must agree too.
 */
#include <stdlib.h>
#include <string.h>

#include "jit_test.h"

static void expect(const char *what, struct tprog *p, uint64_t r1, uint64_t want)
{
	struct xbpf_exec_prog e = tprog_exec(p);
	uint64_t got;
	int err;

	err = ref_run(&e, r1, 0, &got);
	CHECK(!err && got == want, "%s (r1=%llu): reference gives %llx (err %d), want %llx", what,
	      (unsigned long long)r1, (unsigned long long)got, err, (unsigned long long)want);
	for (int blind = 0; blind < 2; blind++) {
		err = run_jit(&e, blind, r1, 0, &got);
		CHECK(!err && got == want, "%s (r1=%llu, blind %d): JIT gives %llx (err %d), want %llx",
		      what, (unsigned long long)r1, blind, (unsigned long long)got, err,
		      (unsigned long long)want);
	}
}

/*
 * Chain of 8 functions, 64-byte frames (8 * 64 = 512, the combined limit).
 * Function k fills its frame with k * 0x0101010101010101 + slot, writes
 * 0x100 + k into the last slot of its caller's frame through R1, calls k + 1
 * with R1 = its own frame, then sums its frame (which its callee modified).
 */
static void test_deep_chain(void)
{
	const int n = XBPF_MAX_CALL_FRAMES, depth = XBPF_STACK_SIZE / XBPF_MAX_CALL_FRAMES;
	uint64_t want = 0;
	struct tprog p;

	tprog_init(&p);
	for (int k = 0; k < n; k++) {
		tprog_func(&p, (uint16_t)depth);
		for (int s = 0; s < depth / 8; s++) {
			tprog_ld_imm64(&p, 3, 0x0101010101010101ULL * (uint64_t)k + (uint64_t)s);
			tprog_add(&p, I(STX(DW, XBPF_REG_FP, 3, (int16_t)(-depth + 8 * s))));
		}
		if (k > 0) {
			tprog_add(&p, I(MOV64K(3, 0x100 + k)));
			tprog_add(&p, I(STX(DW, 1, 3, depth - 8))); /* caller's slot fp-8 */
		}
		tprog_add(&p, I(MOV64K(6, 0)));
		if (k + 1 < n) {
			tprog_add(&p, I(MOV64X(1, XBPF_REG_FP)));
			tprog_add(&p, I(A64K(ADD, 1, -depth)));
			tprog_add(&p, I(CALL_PC(0))); /* patched below */
			tprog_add(&p, I(MOV64X(6, 0)));
		}
		for (int s = 0; s < depth / 8; s++) {
			tprog_add(&p, I(LDX(DW, 3, XBPF_REG_FP, (int16_t)(-depth + 8 * s))));
			tprog_add(&p, I(A64X(ADD, 6, 3)));
		}
		tprog_add(&p, I(MOV64X(0, 6)));
		tprog_add(&p, I(EXIT()));
	}
	for (uint32_t i = 0; i < p.cnt; i++)
		if (xbpf_insn_is_pseudo_call(&p.insns[i])) {
			uint32_t f = 0;

			while (p.func_start[f] <= i)
				f++;
			p.insns[i].imm = (int32_t)(p.func_start[f] - i - 1);
		}
	for (int k = n - 1; k >= 0; k--) {
		uint64_t sum = want;

		for (int s = 0; s < depth / 8; s++) {
			uint64_t v = 0x0101010101010101ULL * (uint64_t)k + (uint64_t)s;

			if (s == depth / 8 - 1 && k + 1 < n)
				v = 0x100 + (uint64_t)k + 1; /* written by the callee */
			sum += v;
		}
		want = sum;
	}
	expect("8-frame chain", &p, 0, want);
	tprog_free(&p);
}

/*
 * R6-R9 hold constants across a bpf call whose callee clobbers R6-R9 and
 * calls a helper, and across a helper call in the caller.
 */
static void test_callee_saved(void)
{
	static const uint64_t v[4] = { 0x1111222233334444ULL, 0x5555666677778888ULL,
				       0x9999aaaabbbbccccULL, 0xddddeeeeffff0000ULL };
	struct tprog p;

	tprog_init(&p);
	tprog_func(&p, 8);
	for (int i = 0; i < 4; i++)
		tprog_ld_imm64(&p, (uint8_t)(6 + i), v[i]);
	tprog_add(&p, I(CALL_PC(0)));
	uint32_t call_at = p.cnt - 1;
	tprog_add(&p, I(CALL_HELPER(TH_MIX)));
	tprog_add(&p, I(MOV64X(0, 6)));
	tprog_add(&p, I(A64X(XOR, 0, 7)));
	tprog_add(&p, I(A64K(LSH, 0, 1)));
	tprog_add(&p, I(A64X(XOR, 0, 8)));
	tprog_add(&p, I(A64K(LSH, 0, 1)));
	tprog_add(&p, I(A64X(XOR, 0, 9)));
	tprog_add(&p, I(EXIT()));
	tprog_func(&p, 40);
	p.insns[call_at].imm = (int32_t)(p.cnt - call_at - 1);
	for (int i = 0; i < 4; i++)
		tprog_add(&p, I(MOV64K((uint8_t)(6 + i), -1)));
	tprog_add(&p, I(CALL_HELPER(TH_MIX)));
	tprog_add(&p, I(MOV64K(6, 7)));
	tprog_add(&p, I(EXIT()));
	expect("R6-R9 across calls", &p, 0, ((v[0] ^ v[1]) << 1 ^ v[2]) << 1 ^ v[3]);
	tprog_free(&p);
}

/*
 * Calls at both ends of the image: main (at offset 0) is re-entered from the
 * last function, which sits at the very end of the image; r1 bounds the
 * recursion (a test of the back end only: the verifier forbids recursion).
 * main(n) = n == 0 ? 1 : 2 * last(n); last(n) = main(n - 1) + n.
 */
static void test_image_ends(void)
{
	struct tprog p;
	uint32_t c1, c2;

	tprog_init(&p);
	tprog_func(&p, 16);
	tprog_add(&p, I(JK(JNE, 1, 0, 2)));
	tprog_add(&p, I(MOV64K(0, 1)));
	tprog_add(&p, I(EXIT()));
	c1 = p.cnt;
	tprog_add(&p, I(CALL_PC(0)));
	tprog_add(&p, I(A64K(LSH, 0, 1)));
	tprog_add(&p, I(EXIT()));
	/* filler functions in between */
	for (int f = 0; f < 20; f++) {
		tprog_func(&p, 8);
		tprog_add(&p, I(MOV64K(0, f)));
		tprog_add(&p, I(EXIT()));
	}
	tprog_func(&p, 16);
	p.insns[c1].imm = (int32_t)(p.cnt - c1 - 1);
	tprog_add(&p, I(MOV64X(6, 1)));
	tprog_add(&p, I(STX(DW, XBPF_REG_FP, 1, -8)));
	tprog_add(&p, I(A64K(ADD, 1, -1)));
	c2 = p.cnt;
	tprog_add(&p, I(CALL_PC(-(int32_t)c2 - 1)));
	tprog_add(&p, I(LDX(DW, 2, XBPF_REG_FP, -8)));
	tprog_add(&p, I(A64X(ADD, 0, 2)));
	tprog_add(&p, I(A64X(SUB, 0, 6))); /* R6 survived: + n - n */
	tprog_add(&p, I(A64X(ADD, 0, 6)));
	tprog_add(&p, I(EXIT()));
	for (uint64_t n = 0; n <= 3; n++) {
		uint64_t want = 1;

		for (uint64_t k = 1; k <= n; k++)
			want = 2 * (want + k);
		expect("calls to the image's first and last function", &p, n, want);
	}
	tprog_free(&p);
}

/* Many small subprograms called from main: rel32 calls back and forth. */
static void test_many_funcs(void)
{
	const int n = 200;
	uint32_t calls[200];
	uint64_t want = 0;
	struct tprog p;

	tprog_init(&p);
	tprog_func(&p, 8);
	tprog_add(&p, I(MOV64K(6, 0)));
	for (int k = 1; k < n; k++) {
		tprog_add(&p, I(MOV64K(1, k)));
		calls[k] = p.cnt;
		tprog_add(&p, I(CALL_PC(0)));
		tprog_add(&p, I(A64X(ADD, 6, 0)));
		want += 3 * (uint64_t)k + 1;
	}
	tprog_add(&p, I(MOV64X(0, 6)));
	tprog_add(&p, I(EXIT()));
	for (int k = 1; k < n; k++) {
		tprog_func(&p, (uint16_t)(8 * (k % 5 + 1)));
		p.insns[calls[k]].imm = (int32_t)(p.cnt - calls[k] - 1);
		tprog_add(&p, I(MOV64X(0, 1)));
		tprog_add(&p, I(A64K(MUL, 0, 3)));
		tprog_add(&p, I(STX(DW, XBPF_REG_FP, 0, -8)));
		tprog_add(&p, I(LDX(DW, 0, XBPF_REG_FP, -8)));
		tprog_add(&p, I(A64K(ADD, 0, 1)));
		tprog_add(&p, I(EXIT()));
	}
	expect("199 subprograms", &p, 0, want);
	tprog_free(&p);
}

/*
 * In each of 64 subprograms a forward jump over `pad` additions and a
 * bounded backward loop over `pad` additions: pad sweeps the distance across
 * the rel8 limit, so some functions get short and some long encodings, and
 * the pass driver has to converge with a mix.
 */
static void test_jump_boundary(void)
{
	const int nf = 64;
	uint32_t calls[64];
	struct tprog p;

	tprog_init(&p);
	tprog_func(&p, 8);
	tprog_add(&p, I(MOV64X(7, 1)));
	tprog_add(&p, I(MOV64K(6, 0)));
	for (int k = 1; k < nf; k++) {
		tprog_add(&p, I(MOV64X(1, 7)));
		calls[k] = p.cnt;
		tprog_add(&p, I(CALL_PC(0)));
		tprog_add(&p, I(A64K(MUL, 6, 31)));
		tprog_add(&p, I(A64X(ADD, 6, 0)));
	}
	tprog_add(&p, I(MOV64X(0, 6)));
	tprog_add(&p, I(EXIT()));
	for (int k = 1; k < nf; k++) {
		int pad = 16 + k; /* 17..79 additions of 4-7 bytes each */

		tprog_func(&p, 8);
		p.insns[calls[k]].imm = (int32_t)(p.cnt - calls[k] - 1);
		tprog_add(&p, I(MOV64K(0, 0)));
		tprog_add(&p, I(MOV64K(3, 0)));
		/* if (r1 & 1) skip the padding */
		tprog_add(&p, I(JK(JSET, 1, 1, (int16_t)pad)));
		for (int i = 0; i < pad; i++)
			tprog_add(&p, I(A64K(ADD, 0, i % 2 ? 1 : 1000)));
		/* loop 3 times over the padding: r3 counts */
		uint32_t top = p.cnt;
		for (int i = 0; i < pad; i++)
			tprog_add(&p, I(A64K(ADD, 0, i % 2 ? 2 : 2000)));
		tprog_add(&p, I(A64K(ADD, 3, 1)));
		tprog_add(&p, I(JK(JLT, 3, 3, (int16_t)((int32_t)top - (int32_t)p.cnt - 1))));
		tprog_add(&p, I(EXIT()));
	}
	for (uint64_t r1 = 0; r1 < 2; r1++) {
		uint64_t want = 0;

		for (int k = 1; k < nf; k++) {
			int pad = 16 + k;
			uint64_t r0 = 0;

			for (int i = 0; i < pad; i++)
				r0 += r1 & 1 ? 0 : (i % 2 ? 1 : 1000);
			for (int i = 0; i < pad; i++)
				r0 += 3 * (uint64_t)(i % 2 ? 2 : 2000);
			want = want * 31 + r0;
		}
		expect("jumps across the rel8 boundary", &p, r1, want);
	}
	tprog_free(&p);
}

/* Unverified programs get a whole 512-byte frame per function. */
static void test_unverified_stack(void)
{
	struct tprog p;
	struct xbpf_exec_prog e;
	uint64_t got;
	int err;

	tprog_init(&p);
	tprog_func(&p, 0);
	tprog_add(&p, I(ST(DW, XBPF_REG_FP, -512, 41)));
	tprog_add(&p, I(LDX(DW, 0, XBPF_REG_FP, -512)));
	tprog_add(&p, I(A64K(ADD, 0, 1)));
	tprog_add(&p, I(EXIT()));
	e = tprog_exec(&p);
	e.verified = false;
	err = run_jit(&e, false, 0, 0, &got);
	CHECK(!err && got == 42, "unverified program using fp-512: err %d r0 %llu", err,
	      (unsigned long long)got);
	tprog_free(&p);
}

int main(void)
{
	require_jit();
	test_deep_chain();
	test_callee_saved();
	test_image_ends();
	test_many_funcs();
	test_jump_boundary();
	test_unverified_stack();
	CHECK(th_misaligned == 0, "%d helper calls saw a misaligned stack", th_misaligned);
	printf("calls: %d failures\n", t_failures);
	return t_failures ? 1 : 0;
}
