/* SPDX-License-Identifier: MIT */
/*
 * test_isa_kernel.c - xbpf_insn_check() speaks the kernel verifier's words:
 * every malformed encoding of check_cases.h is loaded into the running
 * kernel and the kernel's log must contain exactly the message we give.
 * R0-R9 are initialized first and the bad instruction sits behind a branch
 * on an unknown value with padding after it, so that no other complaint
 * (uninitialized register, unreachable or out-of-range instruction) can come
 * first.
 * Exits 77 when the kernel refuses BPF to this process.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check_cases.h"

#define PRE 11
#define PAD 8
#define LOG_SIZE 65536

static char log_buf[LOG_SIZE];

static int prog_load(const struct xbpf_insn *insns, size_t cnt, bool with_log)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS; /* LD_ABS is allowed here */
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)cnt;
	attr.license = (uintptr_t) "GPL";
	if (with_log) {
		attr.log_level = 1;
		attr.log_buf = (uintptr_t)log_buf;
		attr.log_size = sizeof(log_buf);
	}
	log_buf[0] = '\0';
	return (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

int main(void)
{
	struct xbpf_insn prog[PRE + 2 + PAD + 1];
	struct xbpf_insn probe[] = { MOV64K(0, 0), EXIT() };
	size_t i, compared = 0;
	int failures = 0, fd;

	fd = prog_load(probe, 2, false);
	if (fd < 0) {
		printf("SKIP: the kernel refuses BPF_PROG_LOAD here: %s\n", strerror(errno));
		return 77;
	}
	close(fd);

	for (i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		const struct check_case *c = &check_cases[i];
		size_t n = 0, k;

		if (!c->msg)
			continue;
		prog[n++] = I(MOV64X(6, 1)); /* R6 = ctx, for LD_ABS */
		prog[n++] = I(LDX(W, 2, 1, 0)); /* skb->len: unknown to the verifier */
		for (k = 0; k < 10; k++)
			if (k != 1 && k != 2 && k != 6)
				prog[n++] = I(MOV64K(k, 0));
		prog[n++] = I(JK(JEQ, 2, 0, (int16_t)c->cnt)); /* the padding stays reachable */
		for (k = 0; k < c->cnt; k++)
			prog[n++] = c->insn[k];
		for (k = 0; k < PAD; k++)
			prog[n++] = I(MOV64K(0, 0));
		prog[n++] = I(EXIT());

		fd = prog_load(prog, n, true);
		if (fd >= 0) {
			close(fd);
			fprintf(stderr, "FAIL case %zu (code %02x): the kernel accepted it, we say '%s'\n", i,
				c->insn[0].code, c->msg);
			failures++;
			continue;
		}
		if (!strstr(log_buf, c->msg)) {
			fprintf(stderr, "FAIL case %zu (code %02x): we say '%s', the kernel says:\n%s\n", i,
				c->insn[0].code, c->msg, log_buf);
			failures++;
			continue;
		}
		compared++;
	}
	printf("%zu encoding errors worded as the kernel words them\n", compared);
	return failures ? 1 : 0;
}
