/* SPDX-License-Identifier: MIT */
/*
 * test_isa_verified.c - the ISA corpus through our verifier, then the
 * interpreter on the verified path (fast dispatch, the verifier's function
 * boundaries and stack depths).  Every case the verifier accepts must give
 * its expected result; every case the kernel refuses (and every hostile
 * program the interpreter would have to stop) must be refused.  Cases the
 * kernel accepts but our verifier refuses are listed: RAW_MEM memory is not
 * something a verifier can prove bounds for, so those are expected.
 */
#include <stdio.h>

#include "isa_corpus.h"

int main(void)
{
	const struct isa_case *cases;
	size_t cnt, i, accepted = 0, refused = 0;
	int failures = 0;

	cases = isa_corpus_cases(&cnt);
	for (i = 0; i < cnt; i++) {
		const struct isa_case *c = &cases[i];
		bool must_refuse = c->kernel_reject || (c->flags & (ISA_F_INTERP_ONLY | ISA_F_NO_KERNEL));
		struct isa_result res;
		const char *why;

		if (isa_corpus_run(c, XBPF_ENGINE_INTERP, true, &res)) {
			fprintf(stderr, "FAIL %s: setup\n", c->name);
			failures++;
			continue;
		}
		if (res.load_err) {
			refused++;
			if (!must_refuse && c->mem_len == 0)
				printf("note %s: refused by our verifier, accepted by the kernel\n", c->name);
			continue;
		}
		accepted++;
		if (must_refuse) {
			fprintf(stderr, "FAIL %s: our verifier accepts what the kernel refuses (%s)\n", c->name,
				c->kernel_reject ? c->kernel_reject : c->kernel_skip);
			failures++;
			continue;
		}
		why = isa_corpus_judge(c, &res);
		if (why) {
			fprintf(stderr, "FAIL %s [verified]: %s (r0 %#llx expected %#llx)\n", c->name, why,
				(unsigned long long)res.r0, (unsigned long long)c->expect);
			failures++;
		}
	}
	printf("verified path: %zu accepted and checked, %zu refused\n", accepted, refused);
	if (!accepted) {
		fprintf(stderr, "FAIL: the verifier accepted nothing\n");
		failures++;
	}
	return failures ? 1 : 0;
}
