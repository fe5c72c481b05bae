/* SPDX-License-Identifier: MIT */
/*
 * test_jit_fuzz.c - differential fuzzing: random programs (progen) run by
 * the reference interpreter and by the host JIT, with and without constant
 * blinding; registers and stack of the main function must match byte for
 * byte.  `test-jit-fuzz [N] [first-seed]` (default 300 programs).
 *
 * Debugging a failing seed: FUZZ_MIN=1 turns instructions into nops while
 * the difference stays and lists what is left; FUZZ_LOG=1 makes callees log
 * their return values so the first diverging call shows; FUZZ_NOHELPERS,
 * FUZZ_NOPAD and FUZZ_ONEFUNC switch generator features off.
 */
#include <stdlib.h>
#include <string.h>

#include "progen.h"

#ifndef FUZZ_DEFAULT_N
#define FUZZ_DEFAULT_N 300
#endif

static int run_one(uint64_t seed, bool verbose)
{
	struct progen_opts o = {
		.seed = seed,
		.max_funcs = 1 + (int)(seed % 8),
		.body_blocks = 20 + (int)(seed % 7) * 15,
		.helpers = true,
		.long_padding = seed % 3 == 0,
	};
	uint8_t want[DUMP_MAX];
	size_t want_len;
	struct tprog p;
	struct xbpf_exec_prog e;
	uint64_t r_ref, r_jit;
	int err, bad = 0;

	if (getenv("FUZZ_NOHELPERS"))
		o.helpers = false;
	if (getenv("FUZZ_NOPAD"))
		o.long_padding = false;
	if (getenv("FUZZ_ONEFUNC"))
		o.max_funcs = 1;
	o.log_returns = getenv("FUZZ_LOG") != NULL;
	progen_raw(&p, &o);
	e = tprog_exec(&p);

	th_dump_len = 0;
	th_log_len = 0;
	err = ref_run(&e, 0, 0, &r_ref);
	if (err) {
		fprintf(stderr, "seed %llu: reference interpreter failed: %d\n", (unsigned long long)seed, err);
		bad = 1;
		goto out;
	}
	want_len = th_dump_len;
	memcpy(want, th_dump, want_len);
	if (have_interp()) {
		uint64_t r_int;

		th_dump_len = 0;
		run_interp(&e, 0, 0, &r_int);
		if (r_int != r_ref || th_dump_len != want_len || memcmp(want, th_dump, want_len)) {
			fprintf(stderr, "seed %llu: product interpreter differs from the reference\n",
				(unsigned long long)seed);
			bad = 1;
		}
	}
	if (o.log_returns) {
		static uint64_t ref_log[4096];
		size_t ref_len = th_log_len;

		memcpy(ref_log, th_log, sizeof(ref_log));
		th_log_len = 0;
		run_jit(&e, false, 0, 0, &r_jit);
		for (size_t i = 0; i < ref_len && i < th_log_len; i += 2)
			if (ref_log[i + 1] != th_log[i + 1]) {
				fprintf(stderr, "return #%zu of func %llu: ref %llx jit %llx\n", i / 2,
					(unsigned long long)ref_log[i], (unsigned long long)ref_log[i + 1],
					(unsigned long long)th_log[i + 1]);
				break;
			}
		th_log_len = 0;
	}

	for (int blind = 0; blind < 2; blind++) {
		th_dump_len = 0;
		memset(th_dump, 0, sizeof(th_dump));
		err = run_jit(&e, blind, 0, 0, &r_jit);
		if (err) {
			fprintf(stderr, "seed %llu blind %d: JIT compile failed: %d\n",
				(unsigned long long)seed, blind, err);
			bad = 1;
			continue;
		}
		if (r_jit != r_ref || th_dump_len != want_len || memcmp(want, th_dump, want_len)) {
			fprintf(stderr, "seed %llu blind %d: JIT result differs (r0 %llx vs %llx)\n",
				(unsigned long long)seed, blind, (unsigned long long)r_jit,
				(unsigned long long)r_ref);
			for (size_t i = 0; i + 8 <= want_len && i + 8 <= th_dump_len; i += 8) {
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
	if (bad && verbose)
		dump_prog(&e);
	tprog_free(&p);
	return bad;
}

static bool differs(const struct tprog *p)
{
	struct xbpf_exec_prog e = tprog_exec(p);
	uint8_t want[DUMP_MAX];
	size_t len;
	uint64_t r;

	if (ref_run(&e, 0, 0, &r))
		return false;
	len = th_dump_len;
	memcpy(want, th_dump, len);
	return !run_jit(&e, false, 0, 0, &r) && (th_dump_len != len || memcmp(want, th_dump, len));
}

/* Debug aid (FUZZ_MIN=1): turn instructions into nops while the difference stays. */
static void minimize(uint64_t seed)
{
	struct progen_opts o = {
		.seed = seed,
		.max_funcs = 1 + (int)(seed % 8),
		.body_blocks = 20 + (int)(seed % 7) * 15,
		.helpers = !getenv("FUZZ_NOHELPERS"),
		.long_padding = seed % 3 == 0 && !getenv("FUZZ_NOPAD"),
	};
	struct tprog p;
	bool progress = true;

	progen_raw(&p, &o);
	if (!differs(&p))
		return;
	while (progress) {
		progress = false;
		for (uint32_t k = 0; k < p.cnt; k++) {
			struct xbpf_insn save = p.insns[k];
			uint8_t cls = XBPF_CLASS(save.code);
			bool ok = cls == XBPF_ALU || cls == XBPF_ALU64 || (cls == XBPF_JMP32 && save.code != (XBPF_JMP32 | XBPF_JA)) ||
				  (cls == XBPF_JMP && XBPF_OP(save.code) != XBPF_EXIT && XBPF_OP(save.code) != XBPF_JA) ||
				  ((cls == XBPF_LDX || cls == XBPF_STX || cls == XBPF_ST) &&
				   (save.dst_reg == XBPF_REG_FP || save.src_reg == XBPF_REG_FP));

			if (k > 0 && p.insns[k - 1].code == (XBPF_LD | XBPF_DW | XBPF_IMM))
				ok = false;
			if (cls == XBPF_ALU64 && save.src_reg == XBPF_REG_FP)
				ok = false;
			for (uint32_t b = k > 12 ? k - 12 : 0; b <= k; b++)
				if (p.insns[b].code == (XBPF_JMP | XBPF_CALL))
					ok = false;
			if (k > 0 && p.insns[k - 1].code == (XBPF_ALU64 | XBPF_MOV | XBPF_X) &&
			    p.insns[k - 1].src_reg == XBPF_REG_FP)
				ok = false;
			if (!ok || save.code == (XBPF_JMP | XBPF_JA))
				continue;
			p.insns[k] = I(JA(0));
			if (differs(&p))
				progress = true;
			else
				p.insns[k] = save;
		}
	}
	{
		struct xbpf_exec_prog e = tprog_exec(&p);

		for (uint32_t k = 0; k < p.cnt; k++)
			if (p.insns[k].code == (XBPF_JMP | XBPF_JA) && p.insns[k].off == 0)
				p.insns[k].code = 0xff; /* hide nops in the listing */
		for (uint32_t k = 0, f = 0; k < p.cnt; k++) {
			const struct xbpf_insn *in = &e.insns[k];

			if (f < p.func_cnt && p.func_start[f] == k)
				fprintf(stderr, "func %u (stack %u):\n", f, p.stack_depth[f]), f++;
			if (in->code != 0xff)
				fprintf(stderr, "  %4u: code=%02x dst=%u src=%u off=%d imm=%d\n", k, in->code,
					in->dst_reg, in->src_reg, in->off, in->imm);
		}
	}
	tprog_free(&p);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : FUZZ_DEFAULT_N;
	uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	int failed = 0;

	require_jit();
	if (getenv("FUZZ_MIN")) {
		minimize(first);
		return 0;
	}
	for (long i = 0; i < n; i++) {
		if (run_one(first + (uint64_t)i, failed == 0))
			failed++;
	}
	if (th_misaligned)
		fprintf(stderr, "helper calls with a misaligned stack: %d\n", th_misaligned);
	printf("%ld programs, %d failed (oracles: reference interpreter%s)\n", n, failed,
	       have_interp() ? ", product interpreter" : "");
	return failed || th_misaligned ? 1 : 0;
}
