/* SPDX-License-Identifier: MIT */
/*
 * xbpf_verifier.h - a userspace eBPF verifier modelled on the Linux one:
 * CFG and subprogram checks, abstract interpretation of registers and stack
 * across up to 8 call frames, 512-byte combined stack, helper prototypes,
 * context access rules and state pruning.  Every userspace engine refuses a
 * program it rejects.
 */
#ifndef XBPF_VERIFIER_H
#define XBPF_VERIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xbpf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's limit on processed instructions. */
#define XBPF_VERIFY_INSN_LIMIT 1000000

struct xbpf_verify_opts {
	size_t sz;
	/* 0: errors only; 1: states at branches; 2: every instruction (kernel's levels). */
	int log_level;
	/* Log sink; the log is truncated (and the result flagged) when it fills up. */
	char *log_buf;
	size_t log_size;
	/* The kernel's BPF_PROG_LOAD prog_flags that change verification (XBPF_F_*). */
	uint32_t prog_flags;
	size_t : 0;
};
#define xbpf_verify_opts__last_field prog_flags

/* prog_flags, with the kernel's BPF_F_* values. */
#define XBPF_F_STRICT_ALIGNMENT (1u << 0) /* every access aligned, packets as if NET_IP_ALIGN 2 */
#define XBPF_F_ANY_ALIGNMENT (1u << 1)	  /* no effect: alignment is not checked unless strict */
#define XBPF_F_TEST_RND_HI32 (1u << 2)	  /* no effect on verification */
#define XBPF_F_TEST_STATE_FREQ (1u << 3)  /* a checkpoint at every prune point */

struct xbpf_verify_info {
	bool accepted;
	/*
	 * The verifier judged the program and refused it (any rejection,
	 * limits included).  accepted and rejected both false: it could not
	 * run at all (-ENOMEM).
	 */
	bool rejected;
	uint32_t insn_processed;
	uint32_t func_cnt;
	uint32_t func_start[XBPF_MAX_SUBPROGS]; /* first insn of each subprogram */
	uint16_t stack_depth[XBPF_MAX_SUBPROGS]; /* bytes, as "stack depth 8+32+0" */
	/* On rejection: the instruction and the kernel's wording. */
	int err_insn;
	char err_msg[256];
	/* Source line of err_insn from BTF line info, "" when unknown. */
	char err_line[256];
	bool log_truncated;
};

/*
 * Verify a linked program (xbpf_prog__insns()) against its type's context and
 * helper set and its object's maps.  Returns 0 when accepted; on rejection
 * the kernel's errno for it (-EACCES, -EINVAL, -E2BIG for the limits, ...)
 * with ret_info->rejected set and ret_info->err_* saying why; other -errno
 * (-ENOMEM) when it could not run at all.  ret_info may be NULL.
 */
int xbpf_verify(const struct xbpf_prog *prog, const struct xbpf_verify_opts *opts,
		struct xbpf_verify_info *ret_info);

#ifdef __cplusplus
}
#endif

#endif /* XBPF_VERIFIER_H */
