/* SPDX-License-Identifier: MIT */
/*
 * test_jit_isa.c - every ALU, jump, load/store and atomic form, for every
 * register pair (R0-R9, so rax/rcx/rdx as operands of shifts and divisions
 * are covered) and the edge values of the ISA (0, -1, INT_MIN, shift counts
 * at and beyond the width), JIT against the reference interpreter, blinding
 * off and on.  Each program also dumps every register, so a back end that
 * clobbers a register it should not is caught too.
 */
#include <stdlib.h>
#include <string.h>

#include "jit_test.h"

#define PAIRS 6
#define DEPTH 256

static const uint64_t edge[] = {
	0, 1, 2, 3, 5, 31, 32, 33, 63, 64, 65, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0x100000000ULL, 0x17fffffffULL,
	0x7fffffffffffffffULL, 0x8000000000000000ULL, 0xffffffffffffffffULL,
	0xfffffffffffffffeULL, 0xffffffff80000000ULL, 0x00000000fffffffeULL,
	0x123456789abcdef0ULL, 0xfedcba9876543210ULL,
};
#define NEDGE (sizeof(edge) / sizeof(edge[0]))

typedef void (*emit_case_fn)(struct tprog *p, uint8_t dst, uint8_t src, int variant);

static uint64_t pick(void)
{
	return t_rand() % 3 ? edge[t_rand() % NEDGE] : t_rand();
}

/*
 * One program: R0-R9 distinct values; PAIRS times: dst = a, src = b, the
 * case, result slot <- dst (and src, for ops that write it); finally all
 * registers and the stack are dumped.
 */
static int check_case(const char *what, emit_case_fn fn, uint8_t dst, uint8_t src, int variant)
{
	struct tprog p;
	struct xbpf_exec_prog e;
	uint8_t want[DUMP_MAX];
	size_t want_len;
	uint64_t r, rj;
	int bad = 0;

	tprog_init(&p);
	tprog_func(&p, DEPTH);
	for (uint8_t i = 0; i <= 9; i++)
		tprog_ld_imm64(&p, i, 0x1111111111111111ULL * (i + 1) ^ 0x0f0f0f0f);
	for (int off = 8; off <= DEPTH; off += 8)
		tprog_add(&p, I(ST(DW, XBPF_REG_FP, -off, (int32_t)(0x5a5a0000 + off))));
	for (int k = 0; k < PAIRS; k++) {
		tprog_ld_imm64(&p, src, pick());
		tprog_ld_imm64(&p, dst, pick());
		fn(&p, dst, src, variant);
		tprog_add(&p, I(STX(DW, XBPF_REG_FP, dst, -8 * (k + 1) - 96)));
		tprog_add(&p, I(STX(DW, XBPF_REG_FP, src, -8 * (k + 1) - 160)));
	}
	for (uint8_t i = 0; i <= 9; i++)
		tprog_add(&p, I(STX(DW, XBPF_REG_FP, i, -8 * (i + 1))));
	tprog_add(&p, I(MOV64X(1, XBPF_REG_FP)));
	tprog_add(&p, I(A64K(ADD, 1, -DEPTH)));
	tprog_add(&p, I(MOV64K(2, DEPTH)));
	tprog_add(&p, I(CALL_HELPER(TH_DUMP)));
	tprog_add(&p, I(EXIT()));
	e = tprog_exec(&p);

	if (ref_run(&e, 0, 0, &r)) {
		fprintf(stderr, "%s: reference failed\n", what);
		bad = 1;
		goto out;
	}
	want_len = th_dump_len;
	memcpy(want, th_dump, want_len);
	if (have_interp()) {
		th_dump_len = 0;
		run_interp(&e, 0, 0, &rj);
		if (th_dump_len != want_len || memcmp(want, th_dump, want_len)) {
			fprintf(stderr, "%s dst r%u src r%u variant %d: product interpreter differs\n", what,
				dst, src, variant);
			bad = 1;
		}
	}
	for (int blind = 0; blind < 2; blind++) {
		int err = run_jit(&e, blind, 0, 0, &rj);

		if (err) {
			fprintf(stderr, "%s dst r%u src r%u v%d blind %d: compile error %d\n", what, dst, src,
				variant, blind, err);
			bad = 1;
			continue;
		}
		if (th_dump_len != want_len || memcmp(want, th_dump, want_len)) {
			fprintf(stderr, "%s dst r%u src r%u variant %d blind %d: differs\n", what, dst, src,
				variant, blind);
			for (size_t i = 0; i < want_len; i += 8) {
				uint64_t a, b;

				memcpy(&a, want + i, 8);
				memcpy(&b, th_dump + i, 8);
				if (a != b)
					fprintf(stderr, "  [fp-%zu] ref %016llx jit %016llx\n", want_len - i,
						(unsigned long long)a, (unsigned long long)b);
			}
			bad = 1;
		}
	}
out:
	if (bad && t_failures == 0)
		dump_prog(&e);
	t_failures += bad;
	tprog_free(&p);
	return bad;
}

/* ---- cases ---------------------------------------------------------------- */

static const uint8_t alu_ops[] = {
	XBPF_ADD, XBPF_SUB, XBPF_MUL, XBPF_DIV, XBPF_OR, XBPF_AND, XBPF_LSH, XBPF_RSH,
	XBPF_MOD, XBPF_XOR, XBPF_MOV, XBPF_ARSH,
};
static const char *const alu_names[] = {
	"add", "sub", "mul", "div", "or", "and", "lsh", "rsh", "mod", "xor", "mov", "arsh",
};

/* variant: bit 0 ALU64, bit 1 register source, bit 2 signed (div/mod) or movsx */
static int cur_op;

static void case_alu(struct tprog *p, uint8_t dst, uint8_t src, int v)
{
	uint8_t op = alu_ops[cur_op];
	uint8_t cls = v & 1 ? XBPF_ALU64 : XBPF_ALU;
	int16_t off = 0;

	if (v & 4)
		off = op == XBPF_MOV ? (int16_t)(8 << (t_rand() % (v & 1 ? 3 : 2))) : 1;
	if (v & 2) {
		tprog_add(p, I(INSN(cls | op | XBPF_X, dst, src, off, 0)));
	} else {
		int32_t imm = (int32_t)pick();

		if (op == XBPF_LSH || op == XBPF_RSH || op == XBPF_ARSH)
			imm = (int32_t)(t_rand() % (v & 1 ? 64 : 32));
		if ((op == XBPF_DIV || op == XBPF_MOD) && imm == 0)
			imm = -1;
		tprog_add(p, I(INSN(cls | op | XBPF_K, dst, 0, off, imm)));
	}
}

static void case_unary(struct tprog *p, uint8_t dst, uint8_t src, int v)
{
	static const struct xbpf_insn forms[] = {
		INSN(XBPF_ALU | XBPF_NEG, 0, 0, 0, 0),
		INSN(XBPF_ALU64 | XBPF_NEG, 0, 0, 0, 0),
		INSN(XBPF_ALU | XBPF_END | XBPF_TO_LE, 0, 0, 0, 16),
		INSN(XBPF_ALU | XBPF_END | XBPF_TO_LE, 0, 0, 0, 32),
		INSN(XBPF_ALU | XBPF_END | XBPF_TO_LE, 0, 0, 0, 64),
		INSN(XBPF_ALU | XBPF_END | XBPF_TO_BE, 0, 0, 0, 16),
		INSN(XBPF_ALU | XBPF_END | XBPF_TO_BE, 0, 0, 0, 32),
		INSN(XBPF_ALU | XBPF_END | XBPF_TO_BE, 0, 0, 0, 64),
		INSN(XBPF_ALU64 | XBPF_END | XBPF_TO_LE, 0, 0, 0, 16),
		INSN(XBPF_ALU64 | XBPF_END | XBPF_TO_LE, 0, 0, 0, 32),
		INSN(XBPF_ALU64 | XBPF_END | XBPF_TO_LE, 0, 0, 0, 64),
	};
	struct xbpf_insn insn = forms[v];

	insn.dst_reg = dst;
	tprog_add(p, insn);
}
#define NUNARY 11

static const uint8_t conds[] = {
	XBPF_JEQ, XBPF_JGT, XBPF_JGE, XBPF_JSET, XBPF_JNE, XBPF_JSGT,
	XBPF_JSGE, XBPF_JLT, XBPF_JLE, XBPF_JSLT, XBPF_JSLE,
};

/* variant: index into conds * 4 + (bit 0 JMP32, bit 1 register) */
static void case_jump(struct tprog *p, uint8_t dst, uint8_t src, int v)
{
	uint8_t op = conds[v / 4];
	uint8_t cls = v & 1 ? XBPF_JMP32 : XBPF_JMP;

	/* Sometimes compare against itself (dst == src when the pair says so). */
	if (v & 2)
		tprog_add(p, I(INSN(cls | op | XBPF_X, dst, src, 2, 0)));
	else
		tprog_add(p, I(INSN(cls | op | XBPF_K, dst, 0, 2, (int32_t)pick())));
	tprog_add(p, I(A64K(ADD, dst, 1)));
	tprog_add(p, I(A64K(ADD, src, 0x100)));
	tprog_add(p, I(A64K(XOR, dst, 0x1000)));
}

/* variant: size index * 4 + bit 0 (sign-extending load) + bit 1 (imm store) */
static void case_mem(struct tprog *p, uint8_t dst, uint8_t src, int v)
{
	static const uint8_t sizes[] = { XBPF_B, XBPF_H, XBPF_W, XBPF_DW };
	uint8_t size = sizes[v / 4];
	int bytes = 1 << (v / 4);
	/* base register: src points at fp - 200, offsets reach both disp8 and disp32 */
	int16_t off1 = (int16_t)(t_rand() % 2 ? 200 - 8 * 3 : 8 + bytes * (int)(t_rand() % 4));
	int16_t off2 = (int16_t)(200 - 4 * bytes - 128 * (int)(t_rand() % 2));

	if (dst == src)
		return;
	tprog_add(p, I(MOV64X(src, XBPF_REG_FP)));
	tprog_add(p, I(A64K(ADD, src, -200)));
	if (v & 2)
		tprog_add(p, I(INSN(XBPF_ST | XBPF_MEM | size, src, 0, off1, (int32_t)pick())));
	else
		tprog_add(p, I(INSN(XBPF_STX | XBPF_MEM | size, src, dst, off1, 0)));
	tprog_add(p, I(INSN(XBPF_LDX | ((v & 1) && size != XBPF_DW ? XBPF_MEMSX : XBPF_MEM) | size, dst, src, off1, 0)));
	tprog_add(p, I(INSN(XBPF_STX | XBPF_MEM | size, src, dst, off2, 0)));
	tprog_ld_imm64(p, src, 0x77);
}

static const int32_t atomic_ops[] = {
	XBPF_ADD, XBPF_OR, XBPF_AND, XBPF_XOR,
	XBPF_ADD | XBPF_FETCH, XBPF_OR | XBPF_FETCH, XBPF_AND | XBPF_FETCH, XBPF_XOR | XBPF_FETCH,
	XBPF_XCHG, XBPF_CMPXCHG,
};

/* variant: op index * 2 + bit 0 (DW); dst holds the address, src the operand */
static void case_atomic(struct tprog *p, uint8_t dst, uint8_t src, int v)
{
	bool w = v & 1;
	int16_t off = (int16_t)(w ? -8 * (int)(1 + t_rand() % 4) : -4 * (int)(1 + t_rand() % 8));

	if (dst == src)
		return;
	if (t_rand() % 2) /* let cmpxchg match sometimes */
		tprog_add(p, I(INSN(XBPF_LDX | XBPF_MEM | (w ? XBPF_DW : XBPF_W), 0, XBPF_REG_FP, off - 200, 0)));
	tprog_add(p, I(MOV64X(dst, XBPF_REG_FP)));
	tprog_add(p, I(A64K(ADD, dst, -200)));
	tprog_add(p, I(INSN(XBPF_STX | XBPF_ATOMIC | (w ? XBPF_DW : XBPF_W), dst, src, off, atomic_ops[v / 2])));
	/* cmpxchg with dst R0 replaced the address: derive it again */
	tprog_add(p, I(MOV64X(dst, XBPF_REG_FP)));
	tprog_add(p, I(A64K(ADD, dst, -200)));
	tprog_add(p, I(INSN(XBPF_LDX | XBPF_MEM | (w ? XBPF_DW : XBPF_W), dst, dst, off, 0)));
}

int main(int argc, char **argv)
{
	char what[64];

	/* argv[2]: test every n-th register pair only (emulated cross runs) */
	int stride = argc > 2 ? atoi(argv[2]) : 1;

	/* argv[3] "no-bmi2": the x86-64 back end's plain encodings (shifts through cl) */
	if (argc > 3 && !strcmp(argv[3], "no-bmi2"))
		__xbpf_jit_x86_use_bmi2 = 0;

	require_jit();
	t_srand(argc > 1 ? strtoull(argv[1], NULL, 0) : 42);
	for (uint8_t d = 0; d <= 9; d++) {
		for (uint8_t s = 0; s <= 9; s++) {
			if (stride > 1 && (d * 10 + s) % stride)
				continue;
			for (cur_op = 0; cur_op < (int)sizeof(alu_ops); cur_op++) {
				for (int v = 0; v < 8; v++) {
					bool sx_ok = alu_ops[cur_op] == XBPF_DIV || alu_ops[cur_op] == XBPF_MOD ||
						     (alu_ops[cur_op] == XBPF_MOV && (v & 2));

					if ((v & 4) && !sx_ok)
						continue;
					if (!(v & 2) && s != (d + 1) % 10)
						continue; /* immediates: one src per dst is enough */
					snprintf(what, sizeof(what), "%s%s%s%s", alu_names[cur_op],
						 v & 1 ? "64" : "32", v & 2 ? " reg" : " imm",
						 v & 4 ? " signed" : "");
					check_case(what, case_alu, d, s, v);
				}
			}
			if (s == (d + 1) % 10)
				for (int v = 0; v < NUNARY; v++)
					check_case("unary", case_unary, d, s, v);
			for (int v = 0; v < (int)sizeof(conds) * 4; v++)
				if ((v & 2) || s == (d + 1) % 10)
					check_case("jump", case_jump, d, s, v);
			for (int v = 0; v < 16; v++)
				check_case("mem", case_mem, d, s, v);
			for (int v = 0; v < (int)(sizeof(atomic_ops) / sizeof(atomic_ops[0])) * 2; v++)
				check_case("atomic", case_atomic, d, s, v);
		}
	}
	if (th_misaligned)
		fprintf(stderr, "misaligned helper calls: %d\n", th_misaligned);
	printf("isa: %d failures (oracles: reference interpreter%s)\n", t_failures,
	       have_interp() ? ", product interpreter" : "");
	return t_failures || th_misaligned ? 1 : 0;
}
