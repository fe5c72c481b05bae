/* SPDX-License-Identifier: MIT */
/*
 * random_kernel.h - what the random-program kernel tests
 * (test_alu_random_kernel.c, test_calls_random_kernel.c) share: running raw
 * instructions as XDP in the kernel, and checking the host JIT against the
 * interpreter's result.  Native builds only.
 */
#ifndef RANDOM_KERNEL_H
#define RANDOM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "isa_corpus.h"

/*
 * Load p[0..n) as an XDP program (verifier log into log/log_size) and run it
 * once on a 64-byte zero packet: 0 with its 32-bit return value in
 * *ret_retval, or -errno of the load or the run.
 */
int random_kernel_run(const struct xbpf_insn *p, size_t n, char *log, size_t log_size,
		      uint32_t *ret_retval);

/*
 * The host JIT (if there is a back end) must run case c and agree with the
 * interpreter's result on all 64 bits of R0: 0 if so (or no JIT), 1 after
 * printing a FAIL line naming program i.
 */
int random_kernel_check_jit(const struct isa_case *c, const struct isa_result *interp, int i);

#endif
