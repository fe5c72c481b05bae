/* SPDX-License-Identifier: MIT */
/* ref_interp.h - reference interpreter used as the JIT tests' oracle. */
#ifndef XBPF_TEST_REF_INTERP_H
#define XBPF_TEST_REF_INTERP_H

#include <errno.h>
#include <stdint.h>

#include "engine_impl.h"

/* Run prog with R1, R2; 0 and *ret = R0, or -EINVAL on a fault it detects. */
int ref_run(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2, uint64_t *ret);

#endif
