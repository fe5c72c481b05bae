/* SPDX-License-Identifier: MIT */
/*
 * test_hostile.c - hostile bytecode against the VM's structural checks and
 * the interpreter, without a verifier in the way (skip_verify).
 *
 * Random instruction streams (biased towards the jump and call classes,
 * where structure can break) must either load or be refused with EINVAL and
 * a message in the log; never crash.  Loaded programs that touch no memory
 * and call no helper then run: they must come back (a result or an
 * interpreter stop), however their calls and jumps are tangled.  Forward
 * jumps only, so no run needs the endless-loop budget; recursion is allowed
 * and must hit the frame limit cleanly.  Fixed seed: failures reproduce.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "isa_corpus.h"
#include "insn.h"

#define PROGRAMS 20000
#define MAX_LEN 24

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static struct xbpf_insn random_insn(size_t len)
{
	static const uint8_t classes[] = { XBPF_ALU, XBPF_ALU64, XBPF_JMP, XBPF_JMP32, XBPF_JMP, XBPF_LD };
	struct xbpf_insn insn;
	uint64_t r = rnd();

	memcpy(&insn, &r, sizeof(insn));
	switch (rnd() % 4) {
	case 0: /* fully random */
		break;
	case 1: /* a known class, small operands */
		insn.code = (insn.code & 0xf8) | classes[rnd() % sizeof(classes)];
		insn.off = (int16_t)((int)(rnd() % (2 * len + 3)) - (int)len - 1);
		insn.imm = (int32_t)((int)(rnd() % (2 * len + 3)) - (int)len - 1);
		break;
	case 2: /* a bpf-to-bpf call anywhere, or out of range */
		insn = I(CALL_PC((int32_t)((int)(rnd() % (2 * len + 3)) - (int)len - 1)));
		break;
	default:
		insn = I(EXIT());
		break;
	}
	return insn;
}

/* Runnable: no memory access, no helper, no backward jump. */
static bool harmless(const struct xbpf_insn *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += xbpf_insn_len(&p[i])) {
		uint8_t class = XBPF_CLASS(p[i].code), op = XBPF_OP(p[i].code);

		if (class == XBPF_LDX || class == XBPF_ST || class == XBPF_STX ||
		    (class == XBPF_LD && p[i].code != (XBPF_LD | XBPF_DW | XBPF_IMM)))
			return false;
		if (class == XBPF_JMP || class == XBPF_JMP32) {
			if (op == XBPF_CALL && p[i].src_reg != XBPF_PSEUDO_CALL)
				return false;
			if (op == XBPF_CALL || op == XBPF_EXIT)
				continue;
			if (p[i].code == (XBPF_JMP32 | XBPF_JA) ? p[i].imm < 0 : p[i].off < 0)
				return false;
		}
	}
	return true;
}

int main(void)
{
	size_t loaded = 0, refused = 0, ran = 0, stopped = 0;
	struct xbpf_insn p[MAX_LEN];
	int i, failures = 0;

	for (i = 0; i < PROGRAMS; i++) {
		size_t n = 1 + rnd() % MAX_LEN, k;
		struct xbpf_object *obj;
		struct xbpf_vm *vm;
		char log[256] = "";
		XBPF_OPTS(xbpf_vm_opts, opts, .skip_verify = true, .log_level = 1, .log_buf = log,
			  .log_size = sizeof(log));

		for (k = 0; k < n; k++)
			p[k] = random_insn(n);
		if (rnd() % 2)
			p[n - 1] = I(EXIT());
		obj = xbpf_object__open_raw(p, n, XBPF_PROG_RAW_MEM, NULL, 0, NULL);
		if (!obj) {
			fprintf(stderr, "FAIL program %d: open_raw: %s\n", i, strerror(errno));
			failures++;
			continue;
		}
		errno = 0;
		vm = xbpf_vm__new(xbpf_object__next_prog(obj, NULL), &opts);
		if (!vm) {
			refused++;
			if (errno != EINVAL || !log[0]) {
				fprintf(stderr, "FAIL program %d: refused with errno %d, log '%s'\n", i, errno, log);
				failures++;
			}
		} else {
			loaded++;
			if (harmless(p, n)) {
				struct xbpf_test_run_opts topts = { .sz = sizeof(topts), .repeat = 1 };
				int err = xbpf_vm__test_run(vm, &topts);

				ran++;
				if (err)
					stopped++;
				if (err && err != -E2BIG && err != -EINVAL) {
					fprintf(stderr, "FAIL program %d: run ended with %d\n", i, err);
					failures++;
				}
			}
		}
		xbpf_vm__free(vm);
		xbpf_object__close(obj);
	}
	printf("%d hostile programs: %zu loaded (%zu ran, %zu stopped by the interpreter), %zu refused\n",
	       PROGRAMS, loaded, ran, stopped, refused);
	if (!loaded || !refused || !ran) {
		fprintf(stderr, "FAIL: the generator no longer reaches every outcome\n");
		failures++;
	}
	return failures ? 1 : 0;
}
