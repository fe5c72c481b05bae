// SPDX-License-Identifier: MIT
/*
 * rte_bpf_compare - xlb's engines next to DPDK 22.11's own librte_bpf.
 *
 *   rte_bpf_compare BALANCER_OBJ CALLFREE_OBJ [FRAMES]
 *
 * 1. The balancer: xlb's verifier accepts it and its JIT compiles it,
 *    bpf-to-bpf calls and all (counted in the linked image), while
 *    rte_bpf_elf_load() refuses it.  DPDK's reason is printed as DPDK logs
 *    it; the test checks the refusal is about the calls: with every map
 *    symbol and every global variable it trips on given to librte_bpf as
 *    an external variable (so data is not what it trips on) it still
 *    refuses, naming the first call to a subprogram (a relocation against
 *    .text / a pseudo call).
 * 2. A call-free program (callfree.bpf.c, no call, map or helper): loaded
 *    by both, run over FRAMES frames (crafted ones for every class, then
 *    random frames mutated from valid ones, seed printed) on xlb's
 *    interpreter, xlb's JIT, librte_bpf's interpreter and librte_bpf's
 *    JIT: all four must return the same 64-bit value for every frame, and
 *    every class must have been seen.
 * Exit 0 pass, 1 mismatch, 77 when the EAL cannot start here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_bpf.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "xbpf.h"
#include "xbpf_engine.h"

#include "callfree.h"

static int failures;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			failures++;                                        \
		}                                                          \
	} while (0)

/* DPDK's log, captured so the test can read why librte_bpf refused. */
static char dpdk_log[16384];
static FILE *dpdk_log_f;

static void log_capture_reset(void)
{
	if (dpdk_log_f)
		fclose(dpdk_log_f);
	memset(dpdk_log, 0, sizeof(dpdk_log));
	dpdk_log_f = fmemopen(dpdk_log, sizeof(dpdk_log) - 1, "w");
	setvbuf(dpdk_log_f, NULL, _IONBF, 0);
	rte_openlog_stream(dpdk_log_f);
}

static struct xbpf_prog *first_prog(struct xbpf_object *obj)
{
	return xbpf_object__next_prog(obj, NULL);
}

static struct xbpf_vm *vm_of(struct xbpf_prog *prog, enum xbpf_engine_kind kind)
{
	XBPF_OPTS(xbpf_vm_opts, o, .engine = kind);
	struct xbpf_vm *vm = xbpf_vm__new(prog, &o);

	CHECK(vm, "xlb's engines refuse %s: %s", xbpf_prog__name(prog), strerror(errno));
	CHECK(!vm || xbpf_vm__engine(vm) == kind, "%s did not get the %s", xbpf_prog__name(prog),
	      xbpf_engine_name(kind));
	return vm;
}

/* ---- 1. the balancer ---------------------------------------------------- */

static void balancer(const char *path)
{
	struct rte_bpf_xsym xsym[64];
	static uint64_t dummy_var[64][64];
	struct rte_bpf_prm prm = { .prog_arg = { .type = RTE_BPF_ARG_PTR, .size = 64 } };
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	struct xbpf_prog *prog;
	struct xbpf_vm *vm;
	size_t calls = 0, n = 0;
	struct rte_bpf *bpf;

	CHECK(obj, "xlb cannot open %s", path);
	if (!obj)
		return;
	prog = first_prog(obj);
	for (size_t i = 0; i < xbpf_prog__insn_cnt(prog); i++) {
		const struct xbpf_insn *insn = &xbpf_prog__insns(prog)[i];

		calls += xbpf_insn_is_pseudo_call(insn);
	}
	printf("balancer: %s, %zu insns, %zu functions, %zu bpf-to-bpf calls\n",
	       xbpf_prog__name(prog), xbpf_prog__insn_cnt(prog), xbpf_prog__func_cnt(prog), calls);
	CHECK(calls > 0, "the balancer has no bpf-to-bpf call (test vacuous)");
	vm = vm_of(prog, XBPF_ENGINE_JIT);
	printf("balancer: xlb's verifier accepts it, xlb's %s runs it\n",
	       vm ? xbpf_engine_name(xbpf_vm__engine(vm)) : "(nothing)");
	xbpf_vm__free(vm);

	/* as it is */
	log_capture_reset();
	bpf = rte_bpf_elf_load(&prm, path, "xdp");
	printf("librte_bpf, the object as it is: %s (rte_errno %d: %s)\n  DPDK says: %s",
	       bpf ? "LOADED" : "refused", rte_errno, rte_strerror(rte_errno),
	       dpdk_log[0] ? dpdk_log : "(nothing)\n");
	CHECK(!bpf, "librte_bpf loaded the balancer");
	rte_bpf_destroy(bpf);

	/* every map symbol resolved as an external variable: the calls remain */
	for (; n < xbpf_object__map_cnt(obj) && n < 64; n++) {
		const struct xbpf_map *m = xbpf_object__map(obj, n);

		xsym[n] = (struct rte_bpf_xsym){ .name = xbpf_map__name(m), .type = RTE_BPF_XTYPE_VAR,
						 .var = { .val = dummy_var[n],
							  .desc = { .type = RTE_BPF_ARG_PTR,
								    .size = sizeof(dummy_var[n]) } } };
	}
	prm.xsym = xsym;
	/*
	 * It stops at the first relocation it cannot resolve: "resolve_xsym(
	 * NAME, BYTE OFFSET)".  A global variable (.rodata, .data: an ld_imm64
	 * of a named symbol) gets an external variable too, and the load is
	 * tried again, until the relocation named is a call into .text (the
	 * section symbol has no name), i.e. the instruction there a bpf-to-bpf
	 * call: that is what librte_bpf cannot load.
	 */
	for (int tries = 0;; tries++) {
		const char *at, *comma;
		const struct xbpf_insn *insn;
		static char var_names[64][64];
		unsigned int off = 0;
		char name[64] = "";

		prm.nb_xsym = (uint32_t)n;
		log_capture_reset();
		bpf = rte_bpf_elf_load(&prm, path, "xdp");
		printf("librte_bpf, %zu maps and variables given as external symbols: %s (rte_errno %d: %s)\n"
		       "  DPDK says: %s",
		       n, bpf ? "LOADED" : "refused", rte_errno, rte_strerror(rte_errno),
		       dpdk_log[0] ? dpdk_log : "(nothing)\n");
		CHECK(!bpf, "librte_bpf loaded the balancer with its maps and variables resolved");
		at = strstr(dpdk_log, "resolve_xsym(");
		comma = at ? strchr(at, ',') : NULL;
		CHECK(comma && sscanf(comma + 1, " %u)", &off) == 1 && off % 8 == 0 &&
			      off / 8 < xbpf_prog__insn_cnt(prog),
		      "librte_bpf's refusal names no relocation in the program: %s", dpdk_log);
		if (bpf || !comma || off % 8 || off / 8 >= xbpf_prog__insn_cnt(prog))
			break;
		snprintf(name, sizeof(name), "%.*s", (int)(comma - at - 13), at + 13);
		insn = &xbpf_prog__insns(prog)[off / 8];
		if (xbpf_insn_is_pseudo_call(insn)) {
			printf("balancer: librte_bpf stops at insn %u, a bpf-to-bpf call (call pc%+d)\n",
			       off / 8, insn->imm);
			break;
		}
		CHECK(name[0] && insn->code == (XBPF_LD | XBPF_DW | XBPF_IMM) && n < 64 && tries < 64,
		      "the relocation librte_bpf trips on (byte %u, symbol \"%s\") is neither a bpf-to-bpf "
		      "call nor a global variable", off, name);
		if (!name[0] || insn->code != (XBPF_LD | XBPF_DW | XBPF_IMM) || n >= 64 || tries >= 64)
			break;
		snprintf(var_names[n], sizeof(var_names[n]), "%s", name);
		xsym[n] = (struct rte_bpf_xsym){ .name = var_names[n], .type = RTE_BPF_XTYPE_VAR,
						 .var = { .val = dummy_var[n],
							  .desc = { .type = RTE_BPF_ARG_PTR,
								    .size = sizeof(dummy_var[n]) } } };
		n++;
	}
	rte_bpf_destroy(bpf);
	rte_openlog_stream(NULL);
	xbpf_object__close(obj);
}

/* ---- 2. the call-free program on both ---------------------------------------- */

static void callfree(const char *path, unsigned long frames)
{
	struct rte_bpf_prm prm = { .prog_arg = { .type = RTE_BPF_ARG_PTR,
						 .size = sizeof(struct frame_rec) } };
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	struct xbpf_vm *interp, *jit;
	struct rte_bpf_jit rjit = { 0 };
	unsigned long seen[C_MAX] = { 0 }, mismatches = 0;
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	struct rte_bpf *bpf;
	struct frame_rec f;
	uint8_t b[FRAME_MAX];

	CHECK(obj, "xlb cannot open %s", path);
	if (!obj)
		return;
	interp = vm_of(first_prog(obj), XBPF_ENGINE_INTERP);
	jit = vm_of(first_prog(obj), XBPF_ENGINE_JIT);
	log_capture_reset();
	bpf = rte_bpf_elf_load(&prm, path, xbpf_prog__section(first_prog(obj)));
	CHECK(bpf, "librte_bpf refuses the call-free program: %s", dpdk_log);
	if (bpf)
		CHECK(!rte_bpf_get_jit(bpf, &rjit) && rjit.func, "librte_bpf has no JIT here");
	rte_openlog_stream(NULL);
	if (!interp || !jit || !bpf || !rjit.func)
		goto out;
	printf("call-free program: %zu insns; seed %u, %lu frames\n",
	       xbpf_prog__insn_cnt(first_prog(obj)), seed, frames);
	srand(seed);
	for (unsigned long i = 0; i < frames; i++) {
		unsigned int len = frame_valid(b, (int)i);
		uint64_t r[4];

		/* a third as they are, the rest with a few bytes or the length changed */
		if (i % 3)
			len = frame_mutate(b, len);
		frame_set(&f, b, len);
		r[0] = xbpf_vm__exec(interp, &f, 0);
		r[1] = xbpf_vm__exec(jit, &f, 0);
		r[2] = rte_bpf_exec(bpf, &f);
		r[3] = rjit.func(&f);
		if (r[0] != r[1] || r[0] != r[2] || r[0] != r[3]) {
			if (mismatches++ < 5)
				fprintf(stderr, "frame %lu (len %u): xlb interp %#llx xlb jit %#llx rte interp %#llx rte jit %#llx\n",
					i, len, (unsigned long long)r[0], (unsigned long long)r[1],
					(unsigned long long)r[2], (unsigned long long)r[3]);
		}
		seen[(r[0] & 0xff) < C_MAX ? r[0] & 0xff : 0]++;
	}
	CHECK(!mismatches, "%lu of %lu frames differ between the engines", mismatches, frames);
	printf("classes:");
	for (int c = 1; c < C_MAX; c++) {
		printf(" %d:%lu", c, seen[c]);
		CHECK(seen[c], "class %d never seen (the frames miss a path)", c);
	}
	printf("\ncall-free program: xlb interpreter, xlb JIT, librte_bpf interpreter and JIT agree on %lu frames\n",
	       frames - mismatches);
out:
	rte_bpf_destroy(bpf);
	xbpf_vm__free(interp);
	xbpf_vm__free(jit);
	xbpf_object__close(obj);
}

int main(int argc, char **argv)
{
	char prefix[64];
	char *eal[] = { argv[0], "--no-huge", "-m", "64", "--no-pci", "--no-telemetry",
			"--log-level=lib.eal:warning", prefix, NULL };
	unsigned long frames = argc > 3 ? strtoul(argv[3], NULL, 0) : 20000;

	if (argc < 3) {
		fprintf(stderr, "usage: rte_bpf_compare BALANCER_OBJ CALLFREE_OBJ [FRAMES]\n");
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=xlbrtebpf%d", (int)getpid());
	if (rte_eal_init(8, eal) < 0) {
		printf("SKIP: the EAL does not start here: %s\n", rte_strerror(rte_errno));
		return 77;
	}
	balancer(argv[1]);
	callfree(argv[2], frames);
	rte_eal_cleanup();
	snprintf(prefix, sizeof(prefix), "/var/run/dpdk/xlbrtebpf%d", (int)getpid());
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", prefix);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", prefix);
	}
	printf(failures ? "FAIL: %d check(s)\n" : "PASS\n", failures);
	return failures ? 1 : 0;
}
