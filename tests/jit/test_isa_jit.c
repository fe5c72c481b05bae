/* SPDX-License-Identifier: MIT */
/*
 * test_isa_jit.c - the ISA corpus on the host's JIT through the VM: every
 * case must give its expected R0, agree with the interpreter, and really run
 * as native code (a fallback to the interpreter counts as a failure).
 * Exits 77 on an architecture without a JIT back end.
 */
#include <stdio.h>

#include "engine_impl.h"
#include "isa_corpus.h"

int main(void)
{
	if (!__xbpf_jit_host_arch) {
		printf("SKIP: no JIT back end for this architecture\n");
		return 77;
	}
	return isa_corpus_check_all(XBPF_ENGINE_JIT, stderr) ? 1 : 0;
}
