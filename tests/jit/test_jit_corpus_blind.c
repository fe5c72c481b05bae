/* SPDX-License-Identifier: MIT */
/*
 * test_jit_corpus_blind.c - the ISA corpus (tests/jit/isa_corpus.c) on
 * the host's JIT through the VM with constant blinding on: every case must
 * still give its expected R0 and run as native code.  (isa-corpus-jit runs
 * the same cases unblinded.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "isa_corpus.h"

int main(void)
{
	const struct isa_case *cases;
	size_t cnt, ran = 0;
	int failures = 0;

	if (!__xbpf_jit_host_arch) {
		printf("SKIP: no JIT back end for this architecture\n");
		return 77;
	}
	cases = isa_corpus_cases(&cnt);
	for (size_t i = 0; i < cnt; i++) {
		const struct isa_case *c = &cases[i];
		XBPF_OPTS(xbpf_vm_opts, o, .engine = XBPF_ENGINE_JIT, .skip_verify = true, .blind_constants = true);
		struct xbpf_object *obj;
		struct xbpf_vm *vm;
		uint64_t r0;

		if ((c->flags & ISA_F_INTERP_ONLY) || c->load_err || c->run_err)
			continue;
		obj = xbpf_object__open_raw(c->insns, c->insn_cnt, c->type ? c->type : XBPF_PROG_RAW_MEM, NULL, 0,
					    NULL);
		vm = obj ? xbpf_vm__new(xbpf_object__next_prog(obj, NULL), &o) : NULL;
		if (!vm) {
			fprintf(stderr, "FAIL %s: load: %s\n", c->name, strerror(errno));
			failures++;
			xbpf_object__close(obj);
			continue;
		}
		if (xbpf_vm__engine(vm) != XBPF_ENGINE_JIT) {
			if (!(c->flags & ISA_F_LEGACY)) {
				fprintf(stderr, "FAIL %s: blinded JIT fell back to the interpreter\n", c->name);
				failures++;
			}
		} else if (c->type) {
			uint8_t out[256];
			XBPF_OPTS(xbpf_test_run_opts, t, .data_in = c->mem, .data_size_in = c->mem_len,
				  .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

			if (xbpf_vm__test_run(vm, &t) || t.retval != (uint32_t)c->expect) {
				fprintf(stderr, "FAIL %s: blinded retval %#x, expected %#llx\n", c->name, t.retval,
					(unsigned long long)c->expect);
				failures++;
			}
			ran++;
		} else {
			uint8_t *buf = malloc(c->mem_len ? c->mem_len : 1);

			if (buf && c->mem_len)
				memcpy(buf, c->mem, c->mem_len);
			r0 = buf ? xbpf_vm__exec(vm, buf, c->mem_len) : 0;
			free(buf);
			if (r0 != c->expect) {
				fprintf(stderr, "FAIL %s: blinded R0 %#llx, expected %#llx\n", c->name,
					(unsigned long long)r0, (unsigned long long)c->expect);
				failures++;
			}
			ran++;
		}
		xbpf_vm__free(vm);
		xbpf_object__close(obj);
	}
	printf("isa corpus, blinded JIT: %zu cases run, %d failures\n", ran, failures);
	return failures ? 1 : 0;
}
