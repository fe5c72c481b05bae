/* SPDX-License-Identifier: MIT */
/*
 * test_helper_support.c - a program the verifier accepts (it judges calls
 * as the kernel does) but that calls a helper without a userspace
 * implementation (the tracing reads, fib_lookup, ...) is refused when an
 * engine loads it, with a message naming the helper; it is never left to
 * fault when the call is reached.  And every implemented helper has a
 * prototype, so the verifier never lets a call reach a helper it has not
 * judged.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>

#include "insn.h"
#include "test_check.h"
#include "xbpf_engine.h"
#include "xbpf_verifier.h"

static const struct {
	const char *name, *msg;
	struct xbpf_insn insns[8];
	size_t cnt;
} cases[] = {
	{ "probe_read_kernel", "4: helper bpf_probe_read_kernel#113 is not supported in userspace",
	  { MOV64X(1, 10), A64K(ADD, 1, -8), MOV64K(2, 8), MOV64K(3, 0),
	    CALL_HELPER(BPF_FUNC_probe_read_kernel), MOV64K(0, 2), EXIT() }, 7 },
	{ "fib_lookup", "4: helper bpf_fib_lookup#69 is not supported in userspace",
	  { MOV64X(2, 10), A64K(ADD, 2, -64), MOV64K(3, 64), MOV64K(4, 0),
	    CALL_HELPER(BPF_FUNC_fib_lookup), MOV64K(0, 2), EXIT() }, 7 },
	{ "get_current_pid_tgid", "0: helper bpf_get_current_pid_tgid#14 is not supported in userspace",
	  { CALL_HELPER(BPF_FUNC_get_current_pid_tgid), MOV64K(0, 2), EXIT() }, 3 },
};

int main(void)
{
	static const enum xbpf_engine_kind kinds[] = { XBPF_ENGINE_INTERP, XBPF_ENGINE_JIT };
	static char log[65536];
	size_t without = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xbpf_object *obj = xbpf_object__open_raw(cases[i].insns, cases[i].cnt,
								XBPF_PROG_XDP, NULL, 0, NULL);
		struct xbpf_prog *prog = obj ? xbpf_object__next_prog(obj, NULL) : NULL;
		struct xbpf_verify_info info;
		XBPF_OPTS(xbpf_verify_opts, vopts, .log_buf = log, .log_size = sizeof(log));

		CHECK(prog, "%s: open_raw: %s", cases[i].name, strerror(errno));
		if (!prog)
			continue;
		/* The verifier accepts it: the refusal below is the engine's. */
		CHECK(xbpf_verify(prog, &vopts, &info) == 0, "%s: verifier rejects:\n%s", cases[i].name, log);
		for (size_t k = 0; k < 2; k++) {
			XBPF_OPTS(xbpf_vm_opts, opts, .engine = kinds[k], .log_buf = log,
				  .log_size = sizeof(log));
			struct xbpf_vm *vm;

			log[0] = '\0';
			errno = 0;
			vm = xbpf_vm__new(prog, &opts);
			CHECK(!vm && errno == EOPNOTSUPP, "%s on %s: vm %p errno %d", cases[i].name,
			      xbpf_engine_name(kinds[k]), (void *)vm, errno);
			CHECK(strstr(log, cases[i].msg), "%s on %s: log lacks \"%s\":\n%s", cases[i].name,
			      xbpf_engine_name(kinds[k]), cases[i].msg, log);
			xbpf_vm__free(vm);
		}
		xbpf_object__close(obj);
	}
	for (int id = 1; id < __BPF_FUNC_MAX_ID; id++) {
		const struct xbpf_helper_proto *p = xbpf_helper_proto(id);

		CHECK(p || !xbpf_helper_impl(id), "helper #%d is implemented but has no prototype", id);
		if (p && !xbpf_helper_impl(id)) {
			printf("verified only (refused at engine load): bpf_%s#%d\n", p->name, id);
			without++;
		}
	}
	printf("%zu helpers verified but not run in userspace\n", without);
	TEST_DONE("helper-support");
}
