/* SPDX-License-Identifier: MIT */
/*
 * test_jit_kernel.c - the kernel as the reference: random XDP programs
 * (progen, PROGEN_XDP: calls, branches, stack, packet and map value accesses
 * behind the checks the verifier wants) are loaded into the kernel with
 * libbpf and run with BPF_PROG_TEST_RUN, and run by the host JIT (and the
 * reference interpreter) over the same packet and map contents.  Return
 * value, output packet, the data map and the result map (R0-R9 and the main
 * stack) must match.  Native only (suite 'kernel').
 *
 * usage: test-jit-kernel [N] [first-seed]   (default 150 programs)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "progen.h"

#ifndef FUZZ_DEFAULT_N
#define FUZZ_DEFAULT_N 150
#endif

#define PKT_HEADROOM 256

/* struct xdp_md as the kernel's UAPI lays it out */
struct xdp_ctx {
	uint32_t data, data_end, data_meta, ingress_ifindex, rx_queue_index, egress_ifindex;
};

struct world {
	uint8_t pkt[256];
	uint32_t pkt_len;
	uint8_t data_vals[PROGEN_DATA_ENTRIES][PROGEN_DATA_VALUE];
};

struct outcome {
	uint32_t retval;
	uint8_t pkt[256];
	uint32_t pkt_len;
	uint8_t data_vals[PROGEN_DATA_ENTRIES][PROGEN_DATA_VALUE];
	uint8_t result[PROGEN_RESULT_VALUE];
};

static int kernel_rejects, compared, mismatches;
static char vlog[1 << 24];

static void make_world(struct world *w, uint64_t seed)
{
	t_srand(seed * 7919 + 1);
	w->pkt_len = 64 + (uint32_t)(t_rand() % 65);
	for (uint32_t i = 0; i < w->pkt_len; i++)
		w->pkt[i] = (uint8_t)t_rand();
	for (int k = 0; k < PROGEN_DATA_ENTRIES; k++)
		for (int i = 0; i < PROGEN_DATA_VALUE; i++)
			w->data_vals[k][i] = (uint8_t)t_rand();
}

/* 1: ran; 0: the kernel refused the program; -1: setup error */
static int run_kernel(const struct tprog *p, const struct world *w, struct outcome *out)
{
	struct xbpf_insn *insns = malloc(p->cnt * sizeof(*insns));
	int data_fd = -1, result_fd = -1, prog_fd = -1, ret = -1;
	uint8_t zero[PROGEN_RESULT_VALUE] = { 0 };
	uint32_t key;

	if (!insns)
		return -1;
	data_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pg_data", 4, PROGEN_DATA_VALUE, PROGEN_DATA_ENTRIES, NULL);
	result_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pg_result", 4, PROGEN_RESULT_VALUE, 1, NULL);
	if (data_fd < 0 || result_fd < 0) {
		fprintf(stderr, "bpf_map_create: %s\n", strerror(errno));
		goto out;
	}
	for (key = 0; key < PROGEN_DATA_ENTRIES; key++)
		if (bpf_map_update_elem(data_fd, &key, w->data_vals[key], BPF_ANY))
			goto out;
	key = 0;
	if (bpf_map_update_elem(result_fd, &key, zero, BPF_ANY))
		goto out;

	memcpy(insns, p->insns, p->cnt * sizeof(*insns));
	for (uint32_t i = 0; i < p->cnt; i++)
		if (insns[i].code == (XBPF_LD | XBPF_DW | XBPF_IMM) && insns[i].src_reg == XBPF_PSEUDO_MAP_FD)
			insns[i].imm = insns[i].imm == PROGEN_MAP_DATA ? data_fd : result_fd;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "progen", "GPL", (const struct bpf_insn *)insns, p->cnt, NULL);
	if (prog_fd < 0) {
		int load_err = errno;

		if (kernel_rejects++ == 0) {
			/* again with a log, only to explain */
			LIBBPF_OPTS(bpf_prog_load_opts, lopts, .log_buf = vlog, .log_size = sizeof(vlog),
				    .log_level = 1);
			size_t len;

			vlog[0] = 0;
			bpf_prog_load(BPF_PROG_TYPE_XDP, "progen", "GPL", (const struct bpf_insn *)insns, p->cnt,
				      &lopts);
			len = strlen(vlog);
			fprintf(stderr, "kernel rejected a generated program (%s); verifier log tail:\n%s\n",
				strerror(load_err), vlog + (len > 1500 ? len - 1500 : 0));
		}
		ret = 0;
		goto out;
	}
	{
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = w->pkt, .data_size_in = w->pkt_len,
			    .data_out = out->pkt, .data_size_out = sizeof(out->pkt), .repeat = 1);

		if (bpf_prog_test_run_opts(prog_fd, &topts)) {
			fprintf(stderr, "BPF_PROG_TEST_RUN: %s\n", strerror(errno));
			goto out;
		}
		out->retval = topts.retval;
		out->pkt_len = topts.data_size_out;
	}
	for (key = 0; key < PROGEN_DATA_ENTRIES; key++)
		if (bpf_map_lookup_elem(data_fd, &key, out->data_vals[key]))
			goto out;
	key = 0;
	if (bpf_map_lookup_elem(result_fd, &key, out->result))
		goto out;
	ret = 1;
out:
	if (prog_fd >= 0)
		close(prog_fd);
	if (data_fd >= 0)
		close(data_fd);
	if (result_fd >= 0)
		close(result_fd);
	free(insns);
	return ret;
}

/* Userspace: the JIT (engine 0), the reference (1) or the product (2) interpreter. */
static int run_user(const struct tprog *p, const struct world *w, int engine, bool blind, struct outcome *out)
{
	static uint8_t *arena;
	struct fake_map *data_map, *result_map;
	struct xdp_ctx *ctx;
	struct tprog q = *p;
	struct xbpf_exec_prog e;
	uint64_t r0;
	int err;

	if (!arena) {
		/* data/data_end are 32-bit: the packet lives below 4 GiB */
#ifdef MAP_32BIT
		arena = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
#else
		arena = mmap((void *)0x40000000UL, 1 << 16, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
#endif
		if (arena == MAP_FAILED || (uintptr_t)arena + (1 << 16) > UINT32_MAX) {
			arena = NULL;
			return -ENOMEM;
		}
	}
	memset(arena, 0, 1 << 16);
	ctx = (struct xdp_ctx *)arena;
	memcpy(arena + 1024 + PKT_HEADROOM, w->pkt, w->pkt_len);
	ctx->data = (uint32_t)(uintptr_t)(arena + 1024 + PKT_HEADROOM);
	ctx->data_end = ctx->data + w->pkt_len;
	ctx->data_meta = ctx->data;
	data_map = (struct fake_map *)(arena + 4096);
	data_map->value_size = PROGEN_DATA_VALUE;
	data_map->max_entries = PROGEN_DATA_ENTRIES;
	memcpy(data_map->data, w->data_vals, sizeof(w->data_vals));
	result_map = (struct fake_map *)(arena + 8192);
	result_map->value_size = PROGEN_RESULT_VALUE;
	result_map->max_entries = 1;

	q.insns = malloc(p->cnt * sizeof(*q.insns));
	if (!q.insns)
		return -ENOMEM;
	memcpy(q.insns, p->insns, p->cnt * sizeof(*q.insns));
	for (uint32_t i = 0; i < q.cnt; i++)
		if (q.insns[i].code == (XBPF_LD | XBPF_DW | XBPF_IMM) && q.insns[i].src_reg == XBPF_PSEUDO_MAP_FD) {
			uint64_t addr = (uintptr_t)(q.insns[i].imm == PROGEN_MAP_DATA ? data_map : result_map);

			q.insns[i].src_reg = 0;
			q.insns[i].imm = (int32_t)(uint32_t)addr;
			q.insns[i + 1].imm = (int32_t)(uint32_t)(addr >> 32);
		}
	e = tprog_exec(&q);
	if (engine == 0)
		err = run_jit(&e, blind, (uintptr_t)ctx, 0, &r0);
	else if (engine == 1)
		err = ref_run(&e, (uintptr_t)ctx, 0, &r0);
	else
		err = run_interp(&e, (uintptr_t)ctx, 0, &r0);
	free(q.insns);
	if (err)
		return err;
	out->retval = (uint32_t)r0;
	out->pkt_len = ctx->data_end - ctx->data;
	memcpy(out->pkt, (void *)(uintptr_t)ctx->data, out->pkt_len);
	memcpy(out->data_vals, data_map->data, sizeof(out->data_vals));
	memcpy(out->result, result_map->data, sizeof(out->result));
	return 0;
}

static bool same(const char *what, uint64_t seed, const struct outcome *a, const struct outcome *b)
{
	if (a->retval != b->retval)
		fprintf(stderr, "seed %llu %s: retval %u vs %u\n", (unsigned long long)seed, what, a->retval, b->retval);
	else if (a->pkt_len != b->pkt_len || memcmp(a->pkt, b->pkt, a->pkt_len))
		fprintf(stderr, "seed %llu %s: packets differ\n", (unsigned long long)seed, what);
	else if (memcmp(a->data_vals, b->data_vals, sizeof(a->data_vals)))
		fprintf(stderr, "seed %llu %s: data map differs\n", (unsigned long long)seed, what);
	else if (memcmp(a->result, b->result, sizeof(a->result))) {
		fprintf(stderr, "seed %llu %s: registers/stack differ\n", (unsigned long long)seed, what);
		for (size_t i = 0; i < sizeof(a->result); i += 8) {
			uint64_t x, y;

			memcpy(&x, a->result + i, 8);
			memcpy(&y, b->result + i, 8);
			if (x != y)
				fprintf(stderr, "  +%zu: %016llx vs %016llx\n", i, (unsigned long long)x,
					(unsigned long long)y);
		}
	} else {
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : FUZZ_DEFAULT_N;
	uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	static struct outcome kern, jit, ref;
	static struct world w;

	require_jit();
	{
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pg_probe", 4, 4, 1, NULL);

		if (fd < 0) {
			printf("SKIP: cannot create BPF maps (%s): needs root / CAP_BPF\n", strerror(errno));
			return 77;
		}
		close(fd);
	}
	for (long i = 0; i < n; i++) {
		uint64_t seed = first + (uint64_t)i;
		struct progen_opts o = {
			.mode = PROGEN_XDP,
			.seed = seed,
			.max_funcs = 1 + (int)(seed % 6),
			.body_blocks = 12 + (int)(seed % 5) * 6,
			.long_padding = seed % 4 == 0,
		};
		struct tprog p;
		int k;

		progen_generate(&p, &o);
		make_world(&w, seed);
		memset(&kern, 0, sizeof(kern));
		k = run_kernel(&p, &w, &kern);
		if (k < 0) {
			tprog_free(&p);
			return 1;
		}
		memset(&ref, 0, sizeof(ref));
		if (run_user(&p, &w, 1, false, &ref)) {
			fprintf(stderr, "seed %llu: reference interpreter failed\n", (unsigned long long)seed);
			mismatches++;
		}
		if (have_interp()) {
			static struct outcome prod;

			memset(&prod, 0, sizeof(prod));
			if (run_user(&p, &w, 2, false, &prod) || !same("product interpreter vs reference", seed, &prod, &ref))
				mismatches++;
		}
		for (int blind = 0; blind < 2; blind++) {
			int err;

			memset(&jit, 0, sizeof(jit));
			err = run_user(&p, &w, 0, blind, &jit);
			if (err) {
				fprintf(stderr, "seed %llu: JIT failed: %d\n", (unsigned long long)seed, err);
				mismatches++;
				continue;
			}
			if (!same(blind ? "JIT (blinded) vs reference" : "JIT vs reference", seed, &jit, &ref))
				mismatches++;
			if (k == 1 && !same(blind ? "JIT (blinded) vs kernel" : "JIT vs kernel", seed, &jit, &kern))
				mismatches++;
		}
		compared += k == 1;
		if (mismatches && i < 10000 && getenv("PROGEN_DUMP")) {
			struct xbpf_exec_prog e = tprog_exec(&p);

			dump_prog(&e);
		}
		tprog_free(&p);
	}
	printf("%ld programs: %d compared with the kernel, %d refused by it, %d mismatches%s\n", n, compared,
	       kernel_rejects, mismatches, have_interp() ? " (product interpreter compared too)" : "");
	if (kernel_rejects * 10 > n) {
		fprintf(stderr, "the kernel refused more than 10%% of the generated programs: generator bug\n");
		return 1;
	}
	return mismatches ? 1 : 0;
}
