// SPDX-License-Identifier: MIT
/*
 * test_log.c - the verifier log and result info: the kernel's level-2
 * layout ("N: (op) insn ; registers"), the summary lines, the failing
 * instruction before the message at level 0, err_insn/err_msg, and
 * truncation into a small buffer without overflow.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn.h"
#include "xbpf_verifier.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL line %d: ", __LINE__);                                        \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static char logbuf[1 << 16];

static int verify(const struct xbpf_insn *insns, size_t cnt, int level, size_t log_size,
		  struct xbpf_verify_info *info)
{
	struct xbpf_verify_opts opts = { .sz = sizeof(opts), .log_level = level, .log_buf = logbuf,
					 .log_size = log_size };
	struct xbpf_object *obj = xbpf_object__open_raw(insns, cnt, XBPF_PROG_XDP, NULL, 0, NULL);
	int err;

	if (!obj) {
		printf("FAIL: open_raw\n");
		exit(1);
	}
	memset(logbuf, 'X', sizeof(logbuf));
	err = xbpf_verify(xbpf_object__next_prog(obj, NULL), &opts, info);
	xbpf_object__close(obj);
	return err;
}

int main(void)
{
	const struct xbpf_insn pkt_prog[] = {
		LDX(W, 2, 1, XDP_MD(data)), LDX(W, 3, 1, XDP_MD(data_end)),
		MOV64X(4, 2), A64K(ADD, 4, 14), JX(JGT, 4, 3, 1),
		LDX(B, 0, 2, 0), MOV64K(0, 2), EXIT(),
	};
	const struct xbpf_insn bad_prog[] = {
		MOV64K(0, 0), LDX(W, 2, 1, XDP_MD(data)), LDX(B, 0, 2, 0), EXIT(),
	};
	const struct xbpf_insn calls_prog[] = {
		ST(DW, 10, -8, 0), CALL_PC(2), MOV64K(0, 1), EXIT(),
		ST(DW, 10, -40, 0), MOV64K(0, 2), EXIT(),
	};
	const struct xbpf_insn long_loop[] = {
		MOV64K(0, 0), A64K(ADD, 0, 1), JK(JLT, 0, 600000, -2),
		EXIT(),
	};
	struct xbpf_verify_info info;
	unsigned int per_insn = ~0u;
	const char *stats;
	int err;

	/* level 2: every instruction with the registers it touched */
	err = verify(pkt_prog, 8, 2, sizeof(logbuf), &info);
	CHECK(!err && info.accepted, "pkt_prog rejected: %s", info.err_msg);
	CHECK(strstr(logbuf, "0: R1=ctx() R10=fp0\n"), "initial state line:\n%s", logbuf);
	CHECK(strstr(logbuf, "0: (61) r2 = *(u32 *)(r1 +0)          ; R1=ctx() R2=pkt(r=0)\n"),
	      "insn line with registers:\n%s", logbuf);
	CHECK(strstr(logbuf, "4: (2d) if r4 > r3 goto pc+1          ; R3=pkt_end() R4=pkt(off=14,r=14)\n"),
	      "range proof shown:\n%s", logbuf);
	CHECK(strstr(logbuf, "R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=255,var_off=(0x0; 0xff))"),
	      "scalar ranges grouped as the kernel does:\n%s", logbuf);
	CHECK(strstr(logbuf, "\nfrom 4 to 6: "), "branch state line:\n%s", logbuf);
	CHECK(strstr(logbuf, "processed 10 insns (limit 1000000) max_states_per_insn"),
	      "summary line:\n%s", logbuf);
	CHECK(info.insn_processed == 10, "insn_processed %u", info.insn_processed);
	CHECK(!info.log_truncated, "not truncated");

	/* level 0: just the failing insn, the message and the summary */
	err = verify(bad_prog, 4, 0, sizeof(logbuf), &info);
	CHECK(err == -EACCES && !info.accepted, "bad_prog: err %d", err);
	CHECK(info.err_insn == 2, "err_insn %d", info.err_insn);
	CHECK(!strcmp(info.err_msg, "invalid access to packet, off=0 size=1, R2(id=0,off=0,r=0)"),
	      "err_msg '%s'", info.err_msg);
	CHECK(!strncmp(logbuf, "2: (71) r0 = *(u8 *)(r2 +0)\ninvalid access to packet", 50),
	      "level-0 log starts with the failing insn:\n%s", logbuf);
	CHECK(strstr(logbuf, "processed 3 insns"), "summary on failure:\n%s", logbuf);

	/*
	 * stack depth per subprogram, joined by '+'; the call frames at level 2
	 * (level 1 keeps only the summary of an accepted program, as the kernel's)
	 */
	err = verify(calls_prog, 7, 2, sizeof(logbuf), &info);
	CHECK(!err, "calls_prog: %s", info.err_msg);
	CHECK(strstr(logbuf, "stack depth 8+40\n"), "stack depth line:\n%s", logbuf);
	CHECK(info.func_cnt == 2 && info.func_start[1] == 4 && info.stack_depth[0] == 8 &&
	      info.stack_depth[1] == 40, "func info %u %u %u %u", info.func_cnt, info.func_start[1],
	      info.stack_depth[0], info.stack_depth[1]);
	CHECK(strstr(logbuf, "caller:\n") && strstr(logbuf, "callee:\n frame1: R1=ctx() R10=fp0"),
	      "call frames shown:\n%s", logbuf);

	/* truncation: bounded, NUL-terminated, flagged, verdict unchanged */
	err = verify(pkt_prog, 8, 2, 64, &info);
	CHECK(!err && info.log_truncated, "truncated run: err %d trunc %d", err, info.log_truncated);
	CHECK(strlen(logbuf) == 63 && logbuf[64] == 'X', "log stays inside its 64 bytes");
	err = verify(pkt_prog, 8, 2, 0, &info);
	CHECK(!err && !info.log_truncated, "no log buffer");

	/*
	 * A counting loop that runs into the 1M limit: checkpoints that never
	 * prune are evicted, so each visit of a prune point compares against a
	 * handful of states, not an ever-full list (a libFuzzer timeout in
	 * xv_states_equal, corpus/regress/fuzz_verifier-timeout-f626...).
	 */
	err = verify(long_loop, 4, 0, sizeof(logbuf), &info);
	CHECK(err == -E2BIG || err == -EACCES || err == -EINVAL, "long loop: err %d", err);
	CHECK(strstr(info.err_msg, "BPF program is too large"), "long loop: %s", info.err_msg);
	stats = strstr(logbuf, "max_states_per_insn ");
	if (stats)
		sscanf(stats, "max_states_per_insn %u", &per_insn);
	CHECK(per_insn <= 8, "long loop keeps max_states_per_insn %u (no eviction?)\n%s", per_insn,
	      stats ? stats : logbuf);

	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("log: all checks passed\n");
	return 0;
}
