/* SPDX-License-Identifier: MIT */
/*
 * test_isa.c - unit tests of the instruction core: the opcode table, the
 * encoding checks (kernel verifier wording) and the disassembler (kernel
 * xlated syntax).  Expected strings are the kernel's output for the same
 * encodings; tests/isa/test_isa_kernel.c checks the same against the running
 * kernel's verifier log.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_cases.h"
#include "insn.h"
#include "xbpf_isa.h"

#include "test_check.h"

static void test_table(void)
{
	int valid = 0, code;
	const struct xbpf_opdesc *d;

	for (code = 0; code < 256; code++) {
		d = xbpf_opcode_desc(code);
		if (d->fmt == XBPF_FMT_INVALID) {
			CHECK(d->mnemonic == NULL, "invalid opcode %02x has a mnemonic", code);
			continue;
		}
		valid++;
		CHECK(d->mnemonic != NULL, "opcode %02x has no mnemonic", code);
		switch (XBPF_CLASS(code)) {
		case XBPF_ALU64:
		case XBPF_JMP:
			CHECK(d->is64 || d->fmt == XBPF_FMT_LDIMM64, "%02x should be 64-bit", code);
			break;
		case XBPF_ALU:
		case XBPF_JMP32:
			CHECK(!d->is64, "%02x should be 32-bit", code);
			break;
		}
	}
	/* ALU 27, ALU64 26, JMP 25, JMP32 23, LD 7, LDX 7, ST 4, STX 6. */
	CHECK(valid == 125, "%d valid opcodes, expected 125", valid);

	d = xbpf_opcode_desc(0x0f);
	CHECK(d->fmt == XBPF_FMT_ALU && d->is64 && d->uses_src_reg && !strcmp(d->mnemonic, "add64"),
	      "0x0f add64 reg");
	d = xbpf_opcode_desc(0x04);
	CHECK(d->fmt == XBPF_FMT_ALU && !d->is64 && !d->uses_src_reg, "0x04 add32 imm");
	d = xbpf_opcode_desc(0x18);
	CHECK(d->fmt == XBPF_FMT_LDIMM64 && d->size == 8 && !d->uses_src_reg, "0x18 lddw");
	d = xbpf_opcode_desc(0x61);
	CHECK(d->fmt == XBPF_FMT_LDX && d->size == 4 && d->uses_src_reg, "0x61 ldxw");
	d = xbpf_opcode_desc(0x91);
	CHECK(d->fmt == XBPF_FMT_LDX && d->size == 1 && !strcmp(d->mnemonic, "ldxsb"), "0x91 ldxsb");
	d = xbpf_opcode_desc(0x7a);
	CHECK(d->fmt == XBPF_FMT_ST && d->size == 8 && !d->uses_src_reg, "0x7a stdw");
	d = xbpf_opcode_desc(0xdb);
	CHECK(d->fmt == XBPF_FMT_ATOMIC && d->size == 8 && d->uses_src_reg, "0xdb atomic64");
	d = xbpf_opcode_desc(0xd7);
	CHECK(d->fmt == XBPF_FMT_ALU_UN && d->is64, "0xd7 bswap");
	d = xbpf_opcode_desc(0x06);
	CHECK(d->fmt == XBPF_FMT_JA && !d->is64, "0x06 gotol");
	d = xbpf_opcode_desc(0x2d);
	CHECK(d->fmt == XBPF_FMT_JCOND && d->is64 && d->uses_src_reg, "0x2d jgt reg");
	d = xbpf_opcode_desc(0x85);
	CHECK(d->fmt == XBPF_FMT_CALL && !d->uses_src_reg, "0x85 call");
	/* Not in the ISA: DW sign-extending load, JMP32 call/exit, ALU64 to_be, DW atomics on ST. */
	CHECK(xbpf_opcode_desc(0x99)->fmt == XBPF_FMT_INVALID, "0x99");
	CHECK(xbpf_opcode_desc(0x86)->fmt == XBPF_FMT_INVALID, "0x86");
	CHECK(xbpf_opcode_desc(0x96)->fmt == XBPF_FMT_INVALID, "0x96");
	CHECK(xbpf_opcode_desc(0xdf)->fmt == XBPF_FMT_INVALID, "0xdf");
	CHECK(xbpf_opcode_desc(0x8f)->fmt == XBPF_FMT_INVALID, "0x8f neg64 reg");
	CHECK(xbpf_opcode_desc(0xd3)->fmt == XBPF_FMT_INVALID, "0xd3 atomic16");
	CHECK(xbpf_opcode_desc(0x38)->fmt == XBPF_FMT_INVALID, "0x38 ldabsdw");
	CHECK(xbpf_opcode_desc(0x00)->fmt == XBPF_FMT_INVALID, "0x00");
}

static void test_check(void)
{
	size_t i;

	for (i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		const struct check_case *c = &check_cases[i];
		const char *msg = NULL;
		int err = xbpf_insn_check(c->insn, c->cnt, 0, &msg);

		if (!c->msg) {
			CHECK(err == 0, "case %zu (code %02x): unexpected error '%s'", i, c->insn[0].code,
			      msg ? msg : "");
		} else {
			CHECK(err == -EINVAL && msg && !strcmp(msg, c->msg),
			      "case %zu (code %02x): got %d '%s', expected '%s'", i, c->insn[0].code,
			      err, msg ? msg : "(null)", c->msg);
		}
	}
	CHECK(xbpf_insn_check(check_cases[0].insn, 1, 1, NULL) == -EINVAL, "idx out of range");
	CHECK(xbpf_insn_check(NULL, 0, 0, NULL) == -EINVAL, "NULL insns");
}

/* Every one of the 2^16 code/register combinations: never crash, check and disasm agree. */
static void test_exhaustive(void)
{
	struct xbpf_insn insn[2] = { { 0 }, { 0 } };
	char buf[160];
	int code, regs;

	for (code = 0; code < 256; code++) {
		for (regs = 0; regs < 256; regs++) {
			int chk, dis;

			insn[0].code = code;
			insn[0].dst_reg = regs & 15;
			insn[0].src_reg = regs >> 4;
			insn[0].imm = code == 0xd4 || code == 0xdc || code == 0xd7 ? 16 : 0;
			chk = xbpf_insn_check(insn, 2, 0, NULL);
			dis = xbpf_disasm_insn(insn, 2, 0, NULL, buf, sizeof(buf));
			CHECK((chk == 0) == (dis > 0), "code %02x regs %02x: check %d disasm %d (%s)",
			      code, regs, chk, dis, buf);
			if (chk == 0)
				CHECK(xbpf_opcode_desc(code)->fmt != XBPF_FMT_INVALID,
				      "code %02x accepted but not in the table", code);
		}
	}
}

/* The opcode list and the table agree; names and mnemonics are unique. */
#define LIST_ENTRY(CODE, NAME, MN, FMT, SIZE, IS64, SRC)                                           \
	{ CODE, #NAME, MN, XBPF_FMT_##FMT, SIZE, IS64, SRC },

static const struct {
	int code;
	const char *name, *mnemonic;
	enum xbpf_opfmt fmt;
	int size;
	bool is64, src;
} opcode_list[] = { XBPF_OPCODES(LIST_ENTRY) };

static void test_list(void)
{
	size_t n = sizeof(opcode_list) / sizeof(opcode_list[0]);
	bool seen[256] = { false };

	CHECK(n == 125, "opcode list has %zu entries, expected 125", n);
	for (size_t i = 0; i < n; i++) {
		const struct xbpf_opdesc *d = xbpf_opcode_desc(opcode_list[i].code);

		CHECK(!seen[opcode_list[i].code], "opcode %02x listed twice", opcode_list[i].code);
		seen[opcode_list[i].code] = true;
		CHECK(d->fmt == opcode_list[i].fmt && d->size == opcode_list[i].size &&
		      d->is64 == opcode_list[i].is64 && d->uses_src_reg == opcode_list[i].src &&
		      !strcmp(d->mnemonic, opcode_list[i].mnemonic),
		      "%s: table and list differ", opcode_list[i].name);
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(opcode_list[k].name, opcode_list[i].name),
			      "name %s used twice", opcode_list[i].name);
	}
}

/* Jump targets and the function of an instruction. */
static void test_structure_helpers(void)
{
	static const uint32_t starts[] = { 0, 5, 9, 30 };
	struct xbpf_insn ja = JA(-3), gotol = { .code = XBPF_JMP32 | XBPF_JA, .imm = 100 };
	struct xbpf_insn jc = JK(JEQ, 1, 0, 7), call = CALL_PC(-4), ex = EXIT();

	CHECK(xbpf_insn_is_jump(&ja) && xbpf_insn_is_jump(&gotol) && xbpf_insn_is_jump(&jc),
	      "ja, gotol, jeq are jumps");
	CHECK(!xbpf_insn_is_jump(&call) && !xbpf_insn_is_jump(&ex), "call and exit are not jumps");
	CHECK(xbpf_jump_target(&ja, 10) == 8, "ja target");
	CHECK(xbpf_jump_target(&gotol, 10) == 111, "gotol target from imm");
	CHECK(xbpf_jump_target(&jc, 10) == 18, "jeq target");
	CHECK(xbpf_insn_is_func_ref(&call) && xbpf_func_ref_target(&call, 10) == 7, "call target");
	CHECK(xbpf_insn_ends_block(&ja) && xbpf_insn_ends_block(&gotol) && xbpf_insn_ends_block(&ex) &&
	      !xbpf_insn_ends_block(&jc) && !xbpf_insn_ends_block(&call), "block ends");

	for (uint32_t i = 0; i < 40; i++) {
		uint32_t want = i < 5 ? 0 : i < 9 ? 1 : i < 30 ? 2 : 3;

		CHECK(xbpf_func_of(starts, 4, i) == want, "func_of(%u) = %u, want %u", i,
		      xbpf_func_of(starts, 4, i), want);
		CHECK(xbpf_func_at(starts, 4, i) == (starts[want] == i ? (int)want : -1),
		      "func_at(%u)", i);
	}
	CHECK(xbpf_func_of(starts, 1, 12) == 0, "one function");
	CHECK(xbpf_func_at(starts, 4, -1) == -1 && xbpf_func_at(starts, 0, 0) == -1, "func_at bounds");
}

struct disasm_case {
	struct xbpf_insn insn[2];
	const char *text;
};

static const struct disasm_case disasm_cases[] = {
	{ { MOV64X(6, 1) }, "(bf) r6 = r1" },
	{ { LDX(W, 2, 1, 0) }, "(61) r2 = *(u32 *)(r1 +0)" },
	{ { LDX(DW, 2, 10, -8) }, "(79) r2 = *(u64 *)(r10 -8)" },
	{ { A64K(ADD, 1, 14) }, "(07) r1 += 14" },
	{ { A32K(ADD, 1, 14) }, "(04) w1 += 14" },
	{ { A32X(SUB, 1, 2) }, "(1c) w1 -= w2" },
	{ { A64K(MOV, 0, -1) }, "(b7) r0 = -1" },
	{ { A64K(ARSH, 3, 7) }, "(c7) r3 s>>= 7" },
	{ { A64X(LSH, 3, 4) }, "(6f) r3 <<= r4" },
	{ { A32K(RSH, 3, 31) }, "(74) w3 >>= 31" },
	{ { A64K(AND, 3, 0xff) }, "(57) r3 &= 255" },
	{ { A64X(XOR, 3, 3) }, "(af) r3 ^= r3" },
	{ { A64X(MOD, 3, 1) }, "(9f) r3 %= r1" },
	{ { CALL_HELPER(1) }, "(85) call bpf_map_lookup_elem#1" },
	{ { CALL_HELPER(44) }, "(85) call bpf_xdp_adjust_head#44" },
	{ { CALL_HELPER(100000) }, "(85) call unknown#100000" },
	{ { CALL_PC(3) }, "(85) call pc+3" },
	{ { CALL_PC(-7) }, "(85) call pc-7" },
	{ { JA(2) }, "(05) goto pc+2" },
	{ { JA(-1) }, "(05) goto pc-1" },
	{ { JX(JGT, 3, 2, 5) }, "(2d) if r3 > r2 goto pc+5" },
	{ { JK(JEQ, 1, 0, 3) }, "(15) if r1 == 0x0 goto pc+3" },
	{ { JK(JSGT, 1, -1, -3) }, "(65) if r1 s> 0xffffffff goto pc-3" },
	{ { J32X(JLT, 1, 2, 0) }, "(ae) if w1 < w2 goto pc+0" },
	{ { J32K(JSET, 1, 8, 1) }, "(46) if w1 & 0x8 goto pc+1" },
	{ { JX(JSLE, 1, 2, 1) }, "(dd) if r1 s<= r2 goto pc+1" },
	{ { JX(JNE, 1, 2, 1) }, "(5d) if r1 != r2 goto pc+1" },
	{ { ATOMIC(W, XBPF_ADD, 1, 2, 0) }, "(c3) lock *(u32 *)(r1 +0) += r2" },
	{ { ATOMIC(DW, XBPF_OR, 1, 2, 8) }, "(db) lock *(u64 *)(r1 +8) |= r2" },
	{ { ATOMIC(DW, XBPF_AND | XBPF_FETCH, 10, 2, -8) },
	  "(db) r2 = atomic64_fetch_and((u64 *)(r10 -8), r2)" },
	{ { ATOMIC(W, XBPF_XOR | XBPF_FETCH, 10, 2, -8) },
	  "(c3) r2 = atomic_fetch_xor((u32 *)(r10 -8), r2)" },
	{ { ATOMIC(DW, XBPF_XCHG, 10, 3, -16) }, "(db) r3 = atomic64_xchg((u64 *)(r10 -16), r3)" },
	{ { ATOMIC(W, XBPF_CMPXCHG, 10, 3, -4) },
	  "(c3) r0 = atomic_cmpxchg((u32 *)(r10 -4), r0, r3)" },
	{ { MOVSX64(1, 2, 8) }, "(bf) r1 = (s8)r2" },
	{ { MOVSX64(1, 2, 32) }, "(bf) r1 = (s32)r2" },
	{ { MOVSX32(1, 2, 16) }, "(bc) w1 = (s16)w2" },
	{ { LDXSX(H, 1, 2, 4) }, "(89) r1 = *(s16 *)(r2 +4)" },
	{ { LDXSX(B, 1, 2, -1) }, "(91) r1 = *(s8 *)(r2 -1)" },
	{ { S64X(DIV, 1, 2) }, "(3f) r1 s/= r2" },
	{ { S32K(MOD, 1, -3) }, "(94) w1 s%= -3" },
	{ { BSWAP(1, 16) }, "(d7) r1 = bswap16 r1" },
	{ { BE(1, 32) }, "(dc) r1 = be32 r1" },
	{ { LE(2, 64) }, "(d4) r2 = le64 r2" },
	{ { NEG64(4) }, "(87) r4 = -r4" },
	{ { NEG32(4) }, "(84) w4 = -w4" },
	{ { GOTOL(-70000) }, "(06) gotol pc-70000" },
	{ { EXIT() }, "(95) exit" },
	{ { STX(H, 10, 1, -2) }, "(6b) *(u16 *)(r10 -2) = r1" },
	{ { ST(B, 10, -1, 7) }, "(72) *(u8 *)(r10 -1) = 7" },
	{ { ST(DW, 1, 8, -2) }, "(7a) *(u64 *)(r1 +8) = -2" },
	{ { LDABS(H, 12) }, "(28) r0 = *(u16 *)skb[12]" },
	{ { LDIND(B, 7, 14) }, "(50) r0 = *(u8 *)skb[r7 + 14]" },
	{ { LDIMM64(1, 0x1122334455667788ull) }, "(18) r1 = 0x1122334455667788" },
	{ { LDIMM64(1, 0xffffffffull) }, "(18) r1 = 0xffffffff" },
	{ { LDIMM64_SRC(1, XBPF_PSEUDO_MAP_FD, 3) }, "(18) r1 = map[id:3]" },
};

static const char *test_ldimm64_text(void *priv, const struct xbpf_insn *insn, char *buf, size_t len)
{
	if (insn->src_reg != XBPF_PSEUDO_MAP_FD)
		return NULL;
	snprintf(buf, len, "map[id:%d]", insn->imm);
	return buf;
}

static const char *test_helper_name(void *priv, int32_t id)
{
	return id == 5000 ? "bpf_test_helper" : NULL;
}

static void test_disasm(void)
{
	struct xbpf_disasm_cbs cbs = { .ldimm64_text = test_ldimm64_text };
	char buf[160];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(disasm_cases) / sizeof(disasm_cases[0]); i++) {
		const struct disasm_case *c = &disasm_cases[i];
		size_t cnt = xbpf_insn_len(c->insn);

		ret = xbpf_disasm_insn(c->insn, cnt, 0, &cbs, buf, sizeof(buf));
		CHECK(ret == (int)cnt && !strcmp(buf, c->text), "disasm case %zu: got %d '%s', expected '%s'",
		      i, ret, buf, c->text);
	}

	/* Invalid input explains itself and reports -EINVAL. */
	{
		struct xbpf_insn bad[1] = { INSN(0xff, 0, 0, 0, 0) };

		ret = xbpf_disasm_insn(bad, 1, 0, NULL, buf, sizeof(buf));
		CHECK(ret == -EINVAL && strstr(buf, "unknown opcode ff"), "bad opcode: %d '%s'", ret, buf);
	}
	/* A short buffer is truncated, never overrun. */
	{
		char small[8];

		memset(small, 'x', sizeof(small));
		ret = xbpf_disasm_insn(disasm_cases[0].insn, 1, 0, NULL, small, 5);
		CHECK(ret == 1 && !strcmp(small, "(bf)") && small[5] == 'x', "truncation: '%s'", small);
	}
	/* Built-in helper names, and a callback that names helpers the table lacks. */
	{
		struct xbpf_insn call[1] = { CALL_HELPER(7) };
		struct xbpf_disasm_cbs named = { .helper_name = test_helper_name };

		ret = xbpf_disasm_insn(call, 1, 0, NULL, buf, sizeof(buf));
		CHECK(!strcmp(buf, "(85) call bpf_get_prandom_u32#7"), "builtin helper name: '%s'", buf);
		call[0].imm = 5000;
		ret = xbpf_disasm_insn(call, 1, 0, &named, buf, sizeof(buf));
		CHECK(!strcmp(buf, "(85) call bpf_test_helper#5000"), "callback helper name: '%s'", buf);
	}
}

int main(void)
{
	test_table();
	test_list();
	test_structure_helpers();
	test_check();
	test_exhaustive();
	test_disasm();
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("isa: all tests passed\n");
	return 0;
}
