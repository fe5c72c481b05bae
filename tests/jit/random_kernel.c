/* SPDX-License-Identifier: MIT */
/* random_kernel.c - see random_kernel.h. */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine_impl.h"
#include "random_kernel.h"

int random_kernel_run(const struct xbpf_insn *p, size_t n, char *log, size_t log_size,
		      uint32_t *ret_retval)
{
	uint8_t pkt[64] = { 0 }, out[64];
	union bpf_attr attr;
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.insns = (uintptr_t)p;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.log_level = 1;
	attr.log_buf = (uintptr_t)log;
	attr.log_size = (uint32_t)log_size;
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = fd;
	attr.test.data_in = (uintptr_t)pkt;
	attr.test.data_size_in = sizeof(pkt);
	attr.test.data_out = (uintptr_t)out;
	attr.test.data_size_out = sizeof(out);
	attr.test.repeat = 1;
	err = (int)syscall(__NR_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr));
	close(fd);
	if (err)
		return -errno;
	*ret_retval = attr.test.retval;
	return 0;
}

int random_kernel_check_jit(const struct isa_case *c, const struct isa_result *interp, int i)
{
	struct isa_result jit;

	if (!__xbpf_jit_host_arch)
		return 0;
	if (isa_corpus_run(c, XBPF_ENGINE_JIT, false, &jit) || jit.load_err || jit.run_err ||
	    jit.engine != XBPF_ENGINE_JIT) {
		fprintf(stderr, "FAIL program %d: the JIT did not run it\n", i);
		return 1;
	}
	if (jit.r0 != interp->r0) {
		fprintf(stderr, "FAIL program %d: JIT %#llx, interpreter %#llx\n", i,
			(unsigned long long)jit.r0, (unsigned long long)interp->r0);
		return 1;
	}
	return 0;
}
