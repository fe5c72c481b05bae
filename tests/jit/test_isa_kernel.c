/* SPDX-License-Identifier: MIT */
/*
 * test_isa_kernel.c - the ISA corpus against the running kernel.
 *
 * Every case the kernel verifier can accept is loaded as an XDP program
 * behind a prologue that bounds-checks the packet and hands the body the
 * RAW_MEM convention (R1 = packet data, R2 = its length), then run with
 * BPF_PROG_TEST_RUN over the case's memory.  The kernel's 32-bit retval must
 * equal the low half of the interpreter's R0 and of the expected value.  A
 * second variant calls the body as a subprogram and returns R0 >> 32, so the
 * high halves are compared too (skipped for cases that already use all 8
 * frames).  Cases the kernel must refuse are loaded bare and the kernel's log
 * must hold the expected message.  Finally each accepted program's
 * instructions, as the kernel prints them at log level 2, must read exactly
 * as our disassembler prints them.
 *
 * Raw bpf(2) syscalls keep this independent of libbpf.  Exits 77 when the
 * kernel refuses BPF to this process.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "isa_corpus.h"
#include "insn.h"

#define PKT_MIN 64
#define LOG_SIZE (16u << 20)
#define PROLOGUE_LEN 10
#define PROLOGUE_HI_LEN 12

static char *log_buf;
static int failures;

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int prog_load_type(const struct xbpf_insn *insns, size_t cnt, int log_level, uint32_t log_size,
			  enum bpf_prog_type type)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)cnt;
	attr.license = (uintptr_t) "GPL";
	attr.log_level = log_level;
	if (log_level) {
		attr.log_buf = (uintptr_t)log_buf;
		attr.log_size = log_size;
	}
	log_buf[0] = '\0';
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

static int prog_load(const struct xbpf_insn *insns, size_t cnt, int log_level, uint32_t log_size)
{
	return prog_load_type(insns, cnt, log_level, log_size, BPF_PROG_TYPE_XDP);
}

static int prog_run(int fd, const struct isa_case *c, uint32_t *ret_retval)
{
	uint8_t pkt[PKT_MIN + 256] = { 0 }, out[sizeof(pkt)];
	uint32_t size = c->mem_len > PKT_MIN ? c->mem_len : PKT_MIN;
	union bpf_attr attr;
	int err;

	if (c->mem_len > sizeof(pkt))
		return -E2BIG;
	if (c->mem_len)
		memcpy(pkt, c->mem, c->mem_len);
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = fd;
	attr.test.data_in = (uintptr_t)pkt;
	attr.test.data_size_in = size;
	attr.test.data_out = (uintptr_t)out;
	attr.test.data_size_out = sizeof(out);
	attr.test.repeat = 1;
	err = sys_bpf(BPF_PROG_TEST_RUN, &attr);
	if (err)
		return -errno;
	*ret_retval = attr.test.retval;
	return 0;
}

/*
 * Packet bounds check, then R1 = data, R2 = mem_len.  `hi`: call the body as
 * a function and return the high half of its R0.
 */
static struct xbpf_insn *wrap(const struct isa_case *c, bool hi, size_t *ret_cnt)
{
	size_t pro = hi ? PROLOGUE_HI_LEN : PROLOGUE_LEN, n = 0;
	struct xbpf_insn *p = calloc(pro + c->insn_cnt, sizeof(*p));
	int32_t len = (int32_t)c->mem_len;

	if (!p)
		return NULL;
	p[n++] = I(LDX(W, 2, 1, 0)); /* xdp_md->data */
	p[n++] = I(LDX(W, 3, 1, 4)); /* xdp_md->data_end */
	p[n++] = I(MOV64X(1, 2));
	p[n++] = I(MOV64X(4, 2));
	p[n++] = I(A64K(ADD, 4, len));
	if (hi) {
		p[n++] = I(JX(JGT, 4, 3, 4));
		p[n++] = I(MOV64K(2, len));
		p[n++] = I(CALL_PC(4));
		p[n++] = I(A64K(RSH, 0, 32));
		p[n++] = I(EXIT());
	} else {
		p[n++] = I(JX(JGT, 4, 3, 2));
		p[n++] = I(MOV64K(2, len));
		p[n++] = I(JA(2));
	}
	p[n++] = I(MOV64K(0, 0xdead));
	p[n++] = I(EXIT());
	memcpy(p + n, c->insns, c->insn_cnt * sizeof(*p));
	*ret_cnt = n + c->insn_cnt;
	return p;
}

#define FAIL(c, ...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "FAIL %s: ", (c)->name);                                           \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		failures++;                                                                        \
	} while (0)

/* Kernel log level 2 prints "N: (xx) text   ; state"; compare text with ours. */
static int compare_disasm(const struct isa_case *c, const struct xbpf_insn *insns, size_t cnt)
{
	const char *line = log_buf;
	int compared = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char text[256], ours[256];
		unsigned int idx;
		int consumed = 0;

		if (sscanf(line, "%u: (%*2x)%n", &idx, &consumed) == 1 && consumed && idx < cnt) {
			const char *start = strchr(line, '(');
			size_t tlen = len - (size_t)(start - line);
			char *semi;

			if (tlen >= sizeof(text))
				tlen = sizeof(text) - 1;
			memcpy(text, start, tlen);
			text[tlen] = '\0';
			semi = strstr(text, " ;");
			if (semi)
				*semi = '\0';
			while (tlen && (text[strlen(text) - 1] == ' '))
				text[strlen(text) - 1] = '\0';
			xbpf_disasm_insn(insns, cnt, idx, NULL, ours, sizeof(ours));
			if (strcmp(text, ours)) {
				FAIL(c, "insn %u: kernel prints '%s', we print '%s'", idx, text, ours);
				return -1;
			}
			compared++;
		}
		line = nl ? nl + 1 : NULL;
	}
	return compared;
}

static void check_reject(const struct isa_case *c)
{
	int fd = prog_load(c->insns, c->insn_cnt, 1, LOG_SIZE);

	if (fd >= 0) {
		close(fd);
		FAIL(c, "the kernel accepted it");
		return;
	}
	if (!strstr(log_buf, c->kernel_reject))
		FAIL(c, "kernel log lacks '%s':\n%s", c->kernel_reject, log_buf);
}

static void check_case(const struct isa_case *c, size_t *disasm_lines)
{
	struct isa_result interp;
	struct xbpf_insn *p;
	uint32_t retval = 0;
	size_t cnt;
	int fd, err, variant;

	err = isa_corpus_run(c, XBPF_ENGINE_INTERP, false, &interp);
	if (err || interp.load_err || interp.run_err) {
		FAIL(c, "interpreter: setup %d load %d run %d", err, interp.load_err, interp.run_err);
		return;
	}
	if (c->type == XBPF_PROG_SCHED_CLS) {
		/* Context programs run bare over the packet. */
		fd = prog_load_type(c->insns, c->insn_cnt, 1, LOG_SIZE, BPF_PROG_TYPE_SCHED_CLS);
		if (fd < 0) {
			FAIL(c, "kernel load failed (%s):\n%s", strerror(errno), log_buf);
			return;
		}
		err = prog_run(fd, c, &retval);
		close(fd);
		if (err)
			FAIL(c, "BPF_PROG_TEST_RUN: %s", strerror(-err));
		else if (retval != interp.retval || retval != (uint32_t)c->expect)
			FAIL(c, "kernel %#x, interpreter %#x, expected %#x", retval, interp.retval,
			     (uint32_t)c->expect);
		return;
	}
	for (variant = 0; variant < 2; variant++) {
		bool hi = variant == 1;
		uint32_t want = hi ? (uint32_t)(c->expect >> 32) : (uint32_t)c->expect;
		uint32_t mine = hi ? (uint32_t)(interp.r0 >> 32) : (uint32_t)interp.r0;

		if (hi && (c->flags & ISA_F_MAX_DEPTH))
			continue;
		p = wrap(c, hi, &cnt);
		if (!p) {
			failures++;
			return;
		}
		fd = prog_load(p, cnt, 1, LOG_SIZE);
		if (fd < 0) {
			FAIL(c, "%s: kernel load failed (%s):\n%s", hi ? "hi" : "lo", strerror(errno), log_buf);
			free(p);
			continue;
		}
		err = prog_run(fd, c, &retval);
		close(fd);
		if (err)
			FAIL(c, "%s: BPF_PROG_TEST_RUN: %s", hi ? "hi" : "lo", strerror(-err));
		else if (retval != mine || retval != want)
			FAIL(c, "%s half: kernel %#x, interpreter %#x, expected %#x", hi ? "high" : "low",
			     retval, mine, want);

		if (!hi) {
			/* The same program at log level 2: the kernel's own disassembly. */
			fd = prog_load(p, cnt, 2, LOG_SIZE);
			if (fd >= 0) {
				int n = compare_disasm(c, p, cnt);

				if (n > 0)
					*disasm_lines += (size_t)n;
				close(fd);
			}
		}
		free(p);
	}
}

int main(void)
{
	struct xbpf_insn probe[] = { MOV64K(0, 0), EXIT() };
	const struct isa_case *cases;
	size_t cnt, i, ran = 0, rejected = 0, skipped = 0, disasm_lines = 0;
	int fd;

	log_buf = malloc(LOG_SIZE);
	if (!log_buf)
		return 1;
	fd = prog_load(probe, 2, 0, 0);
	if (fd < 0) {
		printf("SKIP: the kernel refuses BPF_PROG_LOAD here: %s\n", strerror(errno));
		return 77;
	}
	close(fd);

	cases = isa_corpus_cases(&cnt);
	for (i = 0; i < cnt; i++) {
		const struct isa_case *c = &cases[i];

		if (c->kernel_reject) {
			check_reject(c);
			rejected++;
		} else if (c->flags & ISA_F_NO_KERNEL) {
			printf("skip %s: the kernel verifier rejects it (%s)\n", c->name, c->kernel_skip);
			skipped++;
		} else {
			check_case(c, &disasm_lines);
			ran++;
		}
	}
	printf("kernel: %zu cases compared, %zu refusals checked, %zu skipped, %zu disassembly lines compared\n",
	       ran, rejected, skipped, disasm_lines);
	if (!disasm_lines) {
		fprintf(stderr, "FAIL: no disassembly line compared\n");
		failures++;
	}
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	return 0;
}
