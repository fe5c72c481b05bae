/* SPDX-License-Identifier: MIT */
/*
 * jit_none.c - hosts without a JIT back end: the VM runs the interpreter.
 */
#include "engine_impl.h"

const struct xbpf_jit_arch *const __xbpf_jit_host_arch = NULL;
