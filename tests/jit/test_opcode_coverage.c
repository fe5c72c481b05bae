/* SPDX-License-Identifier: MIT */
/*
 * test_opcode_coverage.c - for every one of the 256 opcodes, what each part
 * of xbpf does with it: the encoding checker and the disassembler (isa/),
 * the verifier, the interpreter and both JIT back ends (x86-64 and arm64;
 * both are compiled in, the host's also runs).
 *
 * Each valid opcode is tried in a few encodings (K and X forms, signed
 * division, sign-extending moves, byte-swap widths, every atomic operation,
 * every ld_imm64 kind, helper / bpf-to-bpf / kfunc calls) plus one with a
 * reserved field set; each invalid opcode in one encoding.  Every encoding
 * sits in a small SCHED_CLS program that sets its operands up, folds the
 * registers and stack it may touch into R0 and exits, so that the verifier
 * can accept it and the engines can run it.  The test fails when
 *   - the disassembler and the checker disagree,
 *   - the interpreter, the x86-64 JIT and the arm64 JIT (with and without
 *     constant blinding) do not support exactly the same encodings,
 *   - the verifier accepts an encoding an engine lacks, or an engine runs a
 *     checked encoding the verifier refuses,
 *   - anything accepts what the checker refuses, or
 *   - the host's JIT returns another R0 than the interpreter.
 * The printed table is the coverage record: per opcode, how many of its
 * encodings each part supports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "insn.h"
#include "xbpf_verifier.h"

#include "test_check.h"

#define MAX_VARIANTS 16
#define MAX_INSNS 32
#define TEST_SLOT 7 /* where the instruction under test sits */

struct variant {
	struct xbpf_insn insn[2];
	const char *what;
};

enum part { CHECKER, DISASM, VERIFIER, INTERP, JIT_X86, JIT_ARM64, NR_PARTS };

static const char *const part_name[NR_PARTS] = {
	"checker", "disasm", "verifier", "interp", "x86-64", "arm64",
};

static const struct xbpf_map_spec test_map = {
	.name = "cov", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1,
};

static uint8_t packet[64];

static struct variant *add(struct variant *v, int *n, struct xbpf_insn insn, const char *what)
{
	struct variant *r = &v[(*n)++];

	memset(r, 0, sizeof(*r));
	r->insn[0] = insn;
	r->what = what;
	return r;
}

static struct variant *add_ldimm64(struct variant *v, int *n, uint8_t src, int32_t lo, int32_t hi,
				   const char *what)
{
	struct variant *r = add(v, n, I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, src ? 9 : 7, src, 0, lo)), what);

	r->insn[1] = I(INSN(0, 0, 0, 0, hi));
	return r;
}

/* The encodings tried for one opcode; the last one always sets a reserved field. */
static int variants_of(uint8_t code, struct variant *v)
{
	const struct xbpf_opdesc *d = xbpf_opcode_desc(code);
	uint8_t op = XBPF_OP(code);
	bool x = XBPF_SRC(code) == XBPF_X;
	int n = 0;

	switch (d->fmt) {
	case XBPF_FMT_ALU:
		if (x) {
			add(v, &n, I(INSN(code, 7, 8, 0, 0)), "reg");
			if (op == XBPF_DIV || op == XBPF_MOD)
				add(v, &n, I(INSN(code, 7, 8, 1, 0)), "signed");
			if (op == XBPF_MOV) {
				add(v, &n, I(INSN(code, 7, 8, 8, 0)), "sx8");
				add(v, &n, I(INSN(code, 7, 8, 16, 0)), "sx16");
				add(v, &n, I(INSN(code, 7, 8, 32, 0)), "sx32");
			}
			add(v, &n, I(INSN(code, 7, 8, 0, 1)), "reserved imm");
		} else {
			add(v, &n, I(INSN(code, 7, 0, 0, 3)), "imm");
			if (op == XBPF_DIV || op == XBPF_MOD)
				add(v, &n, I(INSN(code, 7, 0, 1, -3)), "signed");
			add(v, &n, I(INSN(code, 7, 1, 0, 3)), "reserved src");
		}
		break;
	case XBPF_FMT_ALU_UN:
		if (op == XBPF_END) {
			add(v, &n, I(INSN(code, 7, 0, 0, 16)), "16");
			add(v, &n, I(INSN(code, 7, 0, 0, 32)), "32");
			add(v, &n, I(INSN(code, 7, 0, 0, 64)), "64");
			add(v, &n, I(INSN(code, 7, 0, 0, 8)), "reserved width");
		} else {
			add(v, &n, I(INSN(code, 7, 0, 0, 0)), "neg");
			add(v, &n, I(INSN(code, 7, 0, 0, 1)), "reserved imm");
		}
		break;
	case XBPF_FMT_LDIMM64:
		add_ldimm64(v, &n, 0, 0x55667788, 0x11223344, "imm64");
		add_ldimm64(v, &n, XBPF_PSEUDO_FUNC, 0, 0, "func");
		add_ldimm64(v, &n, XBPF_PSEUDO_MAP_FD, 0, 0, "map");
		add_ldimm64(v, &n, XBPF_PSEUDO_MAP_VALUE, 0, 0, "map value");
		add_ldimm64(v, &n, XBPF_PSEUDO_MAP_IDX, 0, 0, "map idx");
		add_ldimm64(v, &n, XBPF_PSEUDO_MAP_IDX_VALUE, 0, 0, "map idx value");
		add_ldimm64(v, &n, XBPF_PSEUDO_BTF_ID, 1, 0, "btf id");
		add_ldimm64(v, &n, 0, 1, 0, "reserved off")->insn[0].off = 1;
		break;
	case XBPF_FMT_LDABS:
		if (XBPF_MODE(code) == XBPF_ABS)
			add(v, &n, I(INSN(code, 0, 0, 0, 14)), "abs");
		else
			add(v, &n, I(INSN(code, 0, 8, 0, 9)), "ind");
		add(v, &n, I(INSN(code, 1, 0, 0, 14)), "reserved dst");
		break;
	case XBPF_FMT_LDX:
		add(v, &n, I(INSN(code, 7, 10, -8, 0)), "stack");
		add(v, &n, I(INSN(code, 7, 10, -8, 1)), "reserved imm");
		break;
	case XBPF_FMT_ST:
		add(v, &n, I(INSN(code, 10, 0, -16, 77)), "stack");
		add(v, &n, I(INSN(code, 10, 1, -16, 77)), "reserved src");
		break;
	case XBPF_FMT_STX:
		add(v, &n, I(INSN(code, 10, 8, -16, 0)), "stack");
		add(v, &n, I(INSN(code, 10, 8, -16, 1)), "reserved imm");
		break;
	case XBPF_FMT_ATOMIC: {
		static const struct {
			int32_t imm;
			const char *what;
		} ops[] = {
			{ XBPF_ADD, "add" }, { XBPF_ADD | XBPF_FETCH, "fetch_add" },
			{ XBPF_AND, "and" }, { XBPF_AND | XBPF_FETCH, "fetch_and" },
			{ XBPF_OR, "or" },   { XBPF_OR | XBPF_FETCH, "fetch_or" },
			{ XBPF_XOR, "xor" }, { XBPF_XOR | XBPF_FETCH, "fetch_xor" },
			{ XBPF_XCHG, "xchg" }, { XBPF_CMPXCHG, "cmpxchg" },
		};

		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			add(v, &n, I(INSN(code, 10, 8, -8, ops[i].imm)), ops[i].what);
		add(v, &n, I(INSN(code, 10, 8, -8, 0x02)), "reserved op");
		break;
	}
	case XBPF_FMT_JA:
		if (d->is64)
			add(v, &n, I(INSN(code, 0, 0, 1, 0)), "ja");
		else
			add(v, &n, I(INSN(code, 0, 0, 0, 1)), "gotol");
		add(v, &n, I(INSN(code, 0, 1, d->is64, !d->is64)), "reserved src");
		break;
	case XBPF_FMT_JCOND:
		if (x)
			add(v, &n, I(INSN(code, 7, 8, 1, 0)), "reg");
		else
			add(v, &n, I(INSN(code, 7, 0, 1, 5)), "imm");
		add(v, &n, I(INSN(code, 7, x ? 8 : 1, 1, x ? 1 : 5)), x ? "reserved imm" : "reserved src");
		break;
	case XBPF_FMT_CALL:
		add(v, &n, I(INSN(code, 0, 0, 0, BPF_FUNC_get_smp_processor_id)), "helper");
		add(v, &n, I(INSN(code, 0, XBPF_PSEUDO_CALL, 0, 0)), "bpf-to-bpf");
		add(v, &n, I(INSN(code, 0, XBPF_PSEUDO_KFUNC_CALL, 0, 1)), "kfunc");
		add(v, &n, I(INSN(code, 1, 0, 0, BPF_FUNC_get_smp_processor_id)), "reserved dst");
		break;
	case XBPF_FMT_EXIT:
		add(v, &n, I(INSN(code, 0, 0, 0, 0)), "exit");
		add(v, &n, I(INSN(code, 0, 0, 0, 1)), "reserved imm");
		break;
	case XBPF_FMT_INVALID:
		add(v, &n, I(INSN(code, 7, 8, 0, 0)), "invalid");
		break;
	}
	return n;
}

/*
 * The program around the instruction under test: R6 = ctx, R7/R8 operands,
 * two initialised stack slots, a branch never taken (R8 is 5) that keeps
 * the slot after the instruction reachable for the CFG check; after it a
 * skippable R0 += 100 (the target of jumps) and a fold of R7, R8 and both
 * slots into R0.  A second function
 * (R0 = 42) is the target of bpf-to-bpf calls and callback references.
 * Returns the slot count; *ret_func1 is the second function's start or 0.
 */
static uint32_t build(const struct variant *v, struct xbpf_insn *out, uint32_t *ret_func1)
{
	static const struct xbpf_insn head[TEST_SLOT] = {
		MOV64X(6, 1), MOV64K(7, 0x1234), MOV64K(8, 5), MOV64K(0, 0),
		STX(DW, 10, 7, -8), STX(DW, 10, 8, -16), JK(JEQ, 8, 99, 0),
	};
	static const struct xbpf_insn tail[] = {
		A64K(ADD, 0, 100), A64X(XOR, 0, 7), A64X(ADD, 0, 8), LDX(DW, 9, 10, -8),
		A64X(XOR, 0, 9), LDX(DW, 9, 10, -16), A64X(ADD, 0, 9), EXIT(),
	};
	static const struct xbpf_insn func1[] = { MOV64K(0, 42), EXIT() };
	uint32_t n = TEST_SLOT, len = xbpf_insn_len(&v->insn[0]);
	struct xbpf_insn *insn = &out[TEST_SLOT];

	memcpy(out, head, sizeof(head));
	out[TEST_SLOT - 1].off = (int16_t)len;
	memcpy(insn, v->insn, len * sizeof(*insn));
	n += len;
	*ret_func1 = 0;
	if (insn->code == (XBPF_JMP | XBPF_EXIT)) {
		out[n++] = I(EXIT()); /* the never-taken branch's target */
		return n;
	}
	memcpy(&out[n], tail, sizeof(tail));
	n += sizeof(tail) / sizeof(tail[0]);
	if (xbpf_insn_is_func_ref(insn)) {
		insn->imm = (int32_t)(n - TEST_SLOT - 1);
		*ret_func1 = n;
		memcpy(&out[n], func1, sizeof(func1));
		n += sizeof(func1) / sizeof(func1[0]);
	}
	return n;
}

struct result {
	bool ok[NR_PARTS];
	bool ran;	/* the interpreter ran it to the end */
	uint32_t r0;
};

static struct xbpf_prog *open_prog(const struct xbpf_insn *insns, uint32_t cnt, struct xbpf_object **ret_obj)
{
	*ret_obj = xbpf_object__open_raw(insns, cnt, XBPF_PROG_SCHED_CLS, &test_map, 1, NULL);
	return *ret_obj ? xbpf_object__next_prog(*ret_obj, NULL) : NULL;
}

static int test_run(struct xbpf_vm *vm, uint32_t *ret_r0)
{
	struct xbpf_test_run_opts opts = {
		.sz = sizeof(opts), .data_in = packet, .data_size_in = sizeof(packet),
	};
	int err = xbpf_vm__test_run(vm, &opts);

	*ret_r0 = opts.retval;
	return err;
}

/* Compile with arch the way the VM would hand the program over (maps resolved, unverified). */
static bool jit_compiles(const struct xbpf_jit_arch *arch, const struct xbpf_prog *prog,
			 const uint32_t *func_start, uint32_t func_cnt, const char *what)
{
	uint16_t depth[2] = { XBPF_STACK_SIZE, XBPF_STACK_SIZE };
	struct xbpf_jit_image img;
	struct xbpf_insn *insns;
	size_t cnt;
	int plain, blinded;

	if (xbpf_prog__resolve_maps(prog, &insns, &cnt))
		return false;
	struct xbpf_exec_prog exec = {
		.insns = insns, .insn_cnt = (uint32_t)cnt, .func_cnt = func_cnt,
		.func_start = func_start, .stack_depth = depth,
	};
	plain = __xbpf_jit_compile(arch, &exec, false, &img);
	__xbpf_jit_image_free(&img);
	blinded = __xbpf_jit_compile(arch, &exec, true, &img);
	__xbpf_jit_image_free(&img);
	free(insns);
	CHECK((plain == 0) == (blinded == 0), "%s: %s JIT %d plain, %d blinded", what, arch->name,
	      plain, blinded);
	return plain == 0 && blinded == 0;
}

/* What the interpreter does with an opcode outside the table, bypassing every check. */
static bool interp_runs_raw(const struct xbpf_insn *insns, uint32_t cnt)
{
	uint32_t start = 0;
	uint16_t depth = XBPF_STACK_SIZE;
	struct xbpf_exec_prog exec = {
		.insns = insns, .insn_cnt = cnt, .func_cnt = 1, .func_start = &start,
		.stack_depth = &depth,
	};
	int err;

	__xbpf_interp_run_err(&exec, 0, 0, &err);
	return err != -EINVAL;
}

static void try_variant(uint8_t code, const struct variant *v, struct result *res, char *label)
{
	struct xbpf_insn insns[MAX_INSNS];
	uint32_t func1, starts[2] = { 0, 0 }, cnt = build(v, insns, &func1), func_cnt = func1 ? 2 : 1;
	struct xbpf_verify_info info;
	struct xbpf_object *obj;
	struct xbpf_prog *prog = open_prog(insns, cnt, &obj);
	char text[160];

	snprintf(label, 64, "%02x %s (%s)", code, xbpf_opcode_desc(code)->mnemonic ?: "-", v->what);
	memset(res, 0, sizeof(*res));
	starts[1] = func1;
	res->ok[CHECKER] = xbpf_insn_check(insns, cnt, TEST_SLOT, NULL) == 0;
	res->ok[DISASM] = xbpf_disasm_insn(insns, cnt, TEST_SLOT, NULL, text, sizeof(text)) > 0;
	if (!prog) {
		CHECK(!res->ok[CHECKER], "%s: checked encoding the loader refuses", label);
		return;
	}
	res->ok[VERIFIER] = xbpf_verify(prog, NULL, &info) == 0;

	/* The interpreter as the VM runs it (skip_verify: the engine's own coverage). */
	{
		struct xbpf_vm_opts o = { .sz = sizeof(o), .engine = XBPF_ENGINE_INTERP, .skip_verify = true };
		struct xbpf_vm *vm = xbpf_vm__new(prog, &o);

		if (vm && test_run(vm, &res->r0) == 0) {
			res->ok[INTERP] = res->ran = true;
		} else if (!vm && xbpf_opcode_desc(code)->fmt == XBPF_FMT_INVALID) {
			CHECK(!interp_runs_raw(insns, cnt), "%s: interpreter runs an unknown opcode", label);
		}
		xbpf_vm__free(vm);
	}
	res->ok[JIT_X86] = jit_compiles(&__xbpf_jit_x86_64, prog, starts, func_cnt, label);
	res->ok[JIT_ARM64] = jit_compiles(&__xbpf_jit_arm64, prog, starts, func_cnt, label);

	/* The host's JIT runs what it compiled, unverified and verified, with the interpreter's R0. */
	for (int verified = 0; __xbpf_jit_host_arch && res->ran && verified < 2; verified++) {
		struct xbpf_vm_opts o = { .sz = sizeof(o), .engine = XBPF_ENGINE_JIT, .skip_verify = !verified };
		struct xbpf_vm *vm;
		uint32_t r0;

		if (verified && !res->ok[VERIFIER])
			break;
		vm = xbpf_vm__new(prog, &o);
		CHECK(vm && xbpf_vm__engine(vm) == XBPF_ENGINE_JIT, "%s: host JIT did not take it (%s)",
		      label, verified ? "verified" : "unverified");
		if (vm && xbpf_vm__engine(vm) == XBPF_ENGINE_JIT) {
			CHECK(test_run(vm, &r0) == 0 && r0 == res->r0, "%s: JIT R0 %u, interpreter %u",
			      label, r0, res->r0);
		}
		xbpf_vm__free(vm);
	}
	xbpf_object__close(obj);
}

/*
 * Encodings the engines run (programs loaded with skip_verify) that the
 * verifier refuses, each with its reason.  An entry the verifier comes to
 * accept fails the test until it is removed here.
 */
static const struct {
	uint8_t code;
	const char *what, *why;
} verifier_gaps[] = {
	{ XBPF_LD | XBPF_DW | XBPF_IMM, "func",
	  "like the kernel, the verifier wants BTF func_info for a callback (this raw form has none)" },
};
#define NR_GAPS (sizeof(verifier_gaps) / sizeof(verifier_gaps[0]))
static int gap_seen[NR_GAPS];

static int verifier_gap(uint8_t code, const char *what)
{
	for (size_t i = 0; i < NR_GAPS; i++)
		if (verifier_gaps[i].code == code && !strcmp(verifier_gaps[i].what, what))
			return (int)i;
	return -1;
}

static void judge(uint8_t code, const struct variant *v, const struct result *res, const char *label)
{
	bool engines = res->ok[INTERP];
	int gap = verifier_gap(code, v->what);

	CHECK(res->ok[DISASM] == res->ok[CHECKER], "%s: disassembler %d, checker %d", label,
	      res->ok[DISASM], res->ok[CHECKER]);
	CHECK(res->ok[JIT_X86] == engines && res->ok[JIT_ARM64] == engines,
	      "%s: interp %d, x86-64 JIT %d, arm64 JIT %d", label, engines, res->ok[JIT_X86],
	      res->ok[JIT_ARM64]);
	if (!res->ok[CHECKER]) {
		CHECK(!res->ok[VERIFIER] && !engines && !res->ok[JIT_X86] && !res->ok[JIT_ARM64],
		      "%s: accepted although the checker refuses it", label);
		return;
	}
	if (gap >= 0) {
		CHECK(engines && !res->ok[VERIFIER], "%s: listed as a verifier gap, but verifier %d, engines %d",
		      label, res->ok[VERIFIER], engines);
		gap_seen[gap]++;
		return;
	}
	CHECK(res->ok[VERIFIER] == engines, "%s: verifier %d, engines %d", label, res->ok[VERIFIER],
	      engines);
}

int main(void)
{
	int opcodes = 0, encodings = 0, checker_only = 0, invalid = 0;
	char checker_only_list[1024] = "";

	for (size_t i = 0; i < sizeof(packet); i++)
		packet[i] = (uint8_t)(i * 7 + 1);
	printf("code mnemonic    enc  %-8s %-8s %-8s %-8s %-8s %-8s\n", part_name[0], part_name[1],
	       part_name[2], part_name[3], part_name[4], part_name[5]);
	for (int code = 0; code < 256; code++) {
		const struct xbpf_opdesc *d = xbpf_opcode_desc((uint8_t)code);
		struct variant v[MAX_VARIANTS];
		int n = variants_of((uint8_t)code, v), count[NR_PARTS] = { 0 };

		for (int k = 0; k < n; k++) {
			struct result res;
			char label[64];

			try_variant((uint8_t)code, &v[k], &res, label);
			judge((uint8_t)code, &v[k], &res, label);
			for (int p = 0; p < NR_PARTS; p++)
				count[p] += res.ok[p];
			if (res.ok[CHECKER] && !res.ok[INTERP] && d->fmt != XBPF_FMT_INVALID) {
				checker_only++;
				snprintf(checker_only_list + strlen(checker_only_list),
					 sizeof(checker_only_list) - strlen(checker_only_list), "%s%s",
					 checker_only > 1 ? ", " : "", label);
			}
		}
		if (d->fmt == XBPF_FMT_INVALID) {
			invalid++;
			for (int p = 0; p < NR_PARTS; p++)
				CHECK(!count[p], "unknown opcode %02x accepted by the %s", code, part_name[p]);
			continue;
		}
		opcodes++;
		encodings += n;
		printf("%02x   %-10s %3d  %-8d %-8d %-8d %-8d %-8d %-8d\n", code, d->mnemonic, n, count[0],
		       count[1], count[2], count[3], count[4], count[5]);
	}
	printf("checked encodings no engine runs (references only the kernel resolves): %s\n",
	       checker_only_list);
	for (size_t i = 0; i < NR_GAPS; i++) {
		CHECK(gap_seen[i], "verifier gap %02x (%s) not met", verifier_gaps[i].code,
		      verifier_gaps[i].what);
		printf("verifier gap: %02x %s (%s): %s\n", verifier_gaps[i].code,
		       xbpf_opcode_desc(verifier_gaps[i].code)->mnemonic, verifier_gaps[i].what,
		       verifier_gaps[i].why);
	}
	CHECK(opcodes == 125, "%d opcodes in the table, expected 125", opcodes);
	if (failures) {
		fprintf(stderr, "opcode coverage: %d failure(s)\n", failures);
		return 1;
	}
	printf("opcode coverage: %d opcodes in %d encodings, %d unknown opcodes: interpreter, x86-64 "
	       "and arm64 JIT (plain and blinded) and verifier agree on every one but %zu listed "
	       "verifier gap(s); %d checked encodings are the kernel's alone\n",
	       opcodes, encodings, invalid, NR_GAPS, checker_only);
	return 0;
}
