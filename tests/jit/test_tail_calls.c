/* SPDX-License-Identifier: MIT */
/*
 * test_tail_calls.c - bpf_tail_call() at run time: programs of one object
 * (progs/tail_chain.bpf.c) in one prog_array, the entry program run over
 * packets that pick each slot.  Every run is compared with the kernel's
 * BPF_PROG_TEST_RUN of the same object (return value, packet, the runs
 * counter that shows how many programs ran, the 33-tail-call limit among
 * them), on the interpreter and with the JIT asked for (tail-calling
 * programs fall back to the interpreter, the rest are JITed).  Without the
 * kernel (cross builds) the two engine setups are compared with each other.
 *
 *   test_tail_calls OBJ
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "xbpf_engine.h"

#ifdef WITH_KERNEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>
#endif

#define PKT_LEN 64

/* Slot i of the prog_array holds slots[i]. */
static const char *const slots[] = { "mark", "finish", "again", "from_sub" };
#define NSLOTS (sizeof(slots) / sizeof(slots[0]))
/* First packet bytes: each slot, and an empty one. */
static const unsigned char picks[] = { 0, 1, 2, 3, 5 };
#define NPICKS (sizeof(picks) / sizeof(picks[0]))

struct result {
	uint32_t retval;
	unsigned char out[2];
	uint64_t runs;
};

static void packet(unsigned char *pkt, unsigned char pick)
{
	for (int i = 0; i < PKT_LEN; i++)
		pkt[i] = (unsigned char)(i * 7 + 1);
	pkt[0] = pick;
}

#ifdef WITH_KERNEL
/* The kernel's results; 0, or -1 when it cannot run BPF here. */
static int kernel_results(const char *path, struct result *res)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	int jmp, runs, entry, err = -1;

	if (!obj || bpf_object__load(obj))
		goto out;
	jmp = bpf_object__find_map_fd_by_name(obj, "jmp");
	runs = bpf_object__find_map_fd_by_name(obj, "runs");
	entry = bpf_program__fd(bpf_object__find_program_by_name(obj, "entry"));
	for (uint32_t i = 0; i < NSLOTS; i++) {
		int fd = bpf_program__fd(bpf_object__find_program_by_name(obj, slots[i]));

		if (bpf_map_update_elem(jmp, &i, &fd, 0))
			goto out;
	}
	for (size_t p = 0; p < NPICKS; p++) {
		unsigned char pkt[PKT_LEN], out[PKT_LEN + 256];
		uint32_t zero = 0;
		uint64_t n = 0;
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = pkt, .data_size_in = PKT_LEN,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		packet(pkt, picks[p]);
		if (bpf_map_update_elem(runs, &zero, &n, 0) || bpf_prog_test_run_opts(entry, &t) ||
		    bpf_map_lookup_elem(runs, &zero, &n))
			goto out;
		res[p] = (struct result){ .retval = t.retval, .out = { out[0], out[1] }, .runs = n };
	}
	err = 0;
out:
	bpf_object__close(obj);
	return err;
}
#endif

/* xlb's results with every program loaded for engine `kind`. */
static int xlb_results(const char *path, enum xbpf_engine_kind kind, struct result *res)
{
	struct xbpf_object *obj = xbpf_object__open_file(path, NULL);
	struct xbpf_vm *vms[NSLOTS] = { 0 }, *entry = NULL;
	struct xbpf_map *jmp, *runs;
	XBPF_OPTS(xbpf_vm_opts, o, .engine = kind);
	int err = -1;

	CHECK(obj, "open %s: %s", path, strerror(errno));
	if (!obj)
		return -1;
	jmp = xbpf_object__find_map(obj, "jmp");
	runs = xbpf_object__find_map(obj, "runs");
	entry = xbpf_vm__new(xbpf_object__find_prog(obj, "entry"), &o);
	CHECK(jmp && runs && entry, "maps and entry program");
	if (!jmp || !runs || !entry)
		goto out;
	/* Tail-calling programs are the interpreter's; the end of the chain is the JIT's if asked. */
	CHECK(xbpf_vm__engine(entry) == XBPF_ENGINE_INTERP, "entry runs in the interpreter");
	for (uint32_t i = 0; i < NSLOTS; i++) {
		vms[i] = xbpf_vm__new(xbpf_object__find_prog(obj, slots[i]), &o);
		CHECK(vms[i], "load %s: %s", slots[i], strerror(errno));
		if (!vms[i] || xbpf_vm__prog_array_update(jmp, i, vms[i]))
			goto out;
	}
	if (kind == XBPF_ENGINE_JIT)
		CHECK(xbpf_vm__engine(vms[1]) == XBPF_ENGINE_JIT, "finish is JITed");
	for (size_t p = 0; p < NPICKS; p++) {
		unsigned char pkt[PKT_LEN], out[PKT_LEN + 256];
		uint32_t zero = 0;
		uint64_t n = 0;
		struct xbpf_test_run_opts t = { .sz = sizeof(t), .data_in = pkt, .data_size_in = PKT_LEN,
						.data_out = out, .data_size_out = sizeof(out), .repeat = 1 };

		packet(pkt, picks[p]);
		if (xbpf_map__update(runs, &zero, &n, 0) || xbpf_vm__test_run(entry, &t) ||
		    xbpf_map__lookup(runs, &zero, &n))
			goto out;
		res[p] = (struct result){ .retval = t.retval, .out = { out[0], out[1] }, .runs = n };
	}
	err = 0;
out:
	/* Programs leave the slots before they are freed. */
	for (uint32_t i = 0; i < NSLOTS; i++) {
		if (jmp)
			xbpf_vm__prog_array_update(jmp, i, NULL);
		xbpf_vm__free(vms[i]);
	}
	xbpf_vm__free(entry);
	xbpf_object__close(obj);
	return err;
}

static void compare(const char *what, const struct result *a, const struct result *b)
{
	for (size_t p = 0; p < NPICKS; p++)
		CHECK(a[p].retval == b[p].retval && !memcmp(a[p].out, b[p].out, 2) &&
		      a[p].runs == b[p].runs,
		      "%s, slot %u: retval %u/%u, packet %02x %02x / %02x %02x, runs %llu/%llu", what,
		      picks[p], a[p].retval, b[p].retval, a[p].out[0], a[p].out[1], b[p].out[0],
		      b[p].out[1], (unsigned long long)a[p].runs, (unsigned long long)b[p].runs);
}

/* A program of another type is refused by the array, which is left as it was. */
static void check_type_refused(void)
{
	static const struct xbpf_insn ret0[] = {
		{ .code = XBPF_ALU64 | XBPF_MOV | XBPF_K, .dst_reg = 0 },
		{ .code = XBPF_JMP | XBPF_EXIT },
	};
	struct xbpf_map_spec spec = { .name = "pa", .type = XBPF_MAP_PROG_ARRAY, .key_size = 4,
				      .value_size = 4, .max_entries = 2 };
	struct xbpf_object *xdp = xbpf_object__open_raw(ret0, 2, XBPF_PROG_XDP, NULL, 0, NULL);
	struct xbpf_object *tc = xbpf_object__open_raw(ret0, 2, XBPF_PROG_SCHED_CLS, NULL, 0, NULL);
	struct xbpf_map *map = xbpf_map__create(&spec, 1);
	struct xbpf_vm *a = xbpf_vm__new(xbpf_object__next_prog(xdp, NULL), NULL);
	struct xbpf_vm *b = xbpf_vm__new(xbpf_object__next_prog(tc, NULL), NULL);
	uint32_t key = 0, value = 0;

	CHECK(map && a && b, "raw programs and a prog_array");
	CHECK(xbpf_vm__prog_array_update(map, 0, a) == 0, "xdp program in slot 0");
	CHECK(xbpf_vm__prog_array_update(map, 1, b) == -EINVAL, "a tc program beside it is refused");
	CHECK(xbpf_vm__prog_array_update(map, 2, a) == -EINVAL, "slot past the end refused");
	CHECK(xbpf_map__update(map, &key, &value, 0) == -EOPNOTSUPP, "no fd-style update in userspace");
	CHECK(xbpf_vm__prog_array_update(map, 0, NULL) == 0, "slot emptied");
	xbpf_vm__free(a);
	xbpf_vm__free(b);
	xbpf_map__free(map);
	xbpf_object__close(xdp);
	xbpf_object__close(tc);
}

int main(int argc, char **argv)
{
	struct result interp[NPICKS], jit[NPICKS];

	if (argc != 2) {
		fprintf(stderr, "usage: test_tail_calls OBJ\n");
		return 2;
	}
	check_type_refused();
	CHECK(!xlb_results(argv[1], XBPF_ENGINE_INTERP, interp), "interpreter runs");
	CHECK(!xlb_results(argv[1], XBPF_ENGINE_JIT, jit), "JIT runs");
	compare("interpreter vs JIT setup", interp, jit);
#ifdef WITH_KERNEL
	{
		struct result kern[NPICKS];

		if (kernel_results(argv[1], kern)) {
			printf("note: the kernel cannot run BPF here (%s): no kernel comparison\n",
			       strerror(errno));
		} else {
			compare("kernel vs interpreter", kern, interp);
			compare("kernel vs JIT setup", kern, jit);
			printf("compared with the kernel's BPF_PROG_TEST_RUN\n");
		}
	}
#else
	/* The kernel's MAX_TAIL_CALL_CNT: entry, then `again` through 33 tail calls. */
	CHECK(interp[2].runs == 1 + 33, "runs through slot 2: %llu",
	      (unsigned long long)interp[2].runs);
#endif
	for (size_t p = 0; p < NPICKS; p++)
		printf("slot %u: retval %u, packet %02x %02x, %llu programs ran\n", picks[p],
		       interp[p].retval, interp[p].out[0], interp[p].out[1],
		       (unsigned long long)interp[p].runs);
	TEST_DONE("tail calls");
}
