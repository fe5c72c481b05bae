// SPDX-License-Identifier: MIT
/*
 * test_loader.c - the ELF loader and linker on a real clang object
 * (progs/calls.bpf.c): programs by section, subprograms linked behind their
 * callers exactly once, call offsets landing on function starts, BTF maps
 * and their specs, map-in-map slots, global data contents, line info.
 */
#include <stdbool.h>
#include <unistd.h>

#include "xbpf.h"
#include "testutil.h"

static const struct xbpf_insn *check_links(const struct xbpf_prog *prog)
{
	const struct xbpf_insn *insns = xbpf_prog__insns(prog);
	size_t cnt = xbpf_prog__insn_cnt(prog), nf = xbpf_prog__func_cnt(prog), i, j;
	struct xbpf_func_desc f, g;
	uint32_t next = 0;

	/* functions tile the program, main first, each name once */
	for (j = 0; j < nf; j++) {
		CHECK_EQ(xbpf_prog__func(prog, j, &f), 0);
		CHECK_EQ(f.start, next);
		next = f.start + f.len;
		for (i = 0; i < j; i++) {
			xbpf_prog__func(prog, i, &g);
			CHECK(strcmp(f.name, g.name));
		}
	}
	CHECK_EQ(next, cnt);
	CHECK_EQ(xbpf_prog__func(prog, nf, &f), -ENOENT);
	xbpf_prog__func(prog, 0, &f);
	CHECK(!strcmp(f.name, xbpf_prog__name(prog)));
	/* every bpf-to-bpf call lands on a function start; no pseudo src left unresolved */
	for (i = 0; i < cnt; i++) {
		if (xbpf_insn_is_pseudo_call(&insns[i])) {
			int64_t t = (int64_t)i + insns[i].imm + 1;
			bool ok = false;

			for (j = 0; j < nf; j++) {
				xbpf_prog__func(prog, j, &f);
				if (f.start == t)
					ok = true;
			}
			CHECK(ok);
		}
		if (insns[i].code == (XBPF_LD | XBPF_DW | XBPF_IMM))
			i++;
	}
	return insns;
}

static bool has_func(const struct xbpf_prog *prog, const char *name)
{
	struct xbpf_func_desc f;
	size_t j;

	for (j = 0; j < xbpf_prog__func_cnt(prog); j++)
		if (!xbpf_prog__func(prog, j, &f) && !strcmp(f.name, name))
			return true;
	return false;
}

static int quiet(enum xbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	XBPF_OPTS(xbpf_object_open_opts, opts, .nr_cpus = 2);
	struct xbpf_object *obj;
	struct xbpf_prog *xdp, *tc, *sock;
	const struct xbpf_map_spec *sp;
	struct xbpf_map *m;
	uint32_t zero = 0, k, id;
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s calls.bpf.o\n", argv[0]);
		return 2;
	}
	obj = xbpf_object__open_file(argv[1], &opts);
	CHECK(obj);
	if (!obj)
		TEST_DONE();
	CHECK(!strcmp(xbpf_object__license(obj), "GPL"));
	CHECK(!strcmp(xbpf_object__name(obj), strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1]));

	/* programs in section order, typed by section */
	xdp = xbpf_object__next_prog(obj, NULL);
	tc = xbpf_object__next_prog(obj, xdp);
	sock = xbpf_object__next_prog(obj, tc);
	CHECK(xdp && tc && sock && !xbpf_object__next_prog(obj, sock));
	if (!xdp || !tc || !sock)
		TEST_DONE();
	CHECK(!strcmp(xbpf_prog__name(xdp), "xdp_main") && xbpf_prog__type(xdp) == XBPF_PROG_XDP);
	CHECK(!strcmp(xbpf_prog__name(tc), "tc_main") && xbpf_prog__type(tc) == XBPF_PROG_SCHED_CLS);
	CHECK(!strcmp(xbpf_prog__name(sock), "sock_main") &&
	      xbpf_prog__type(sock) == XBPF_PROG_SOCKET_FILTER);
	CHECK(!strcmp(xbpf_prog__section(tc), "tc"));
	CHECK(xbpf_object__find_prog(obj, "tc_main") == tc);
	CHECK(!xbpf_object__find_prog(obj, "middle") && errno == ENOENT);

	/* xdp_main -> middle -> {leaf -> global_helper -> mix, mix}: five functions, once each */
	check_links(xdp);
	CHECK_EQ(xbpf_prog__func_cnt(xdp), 5);
	CHECK(has_func(xdp, "middle") && has_func(xdp, "leaf") && has_func(xdp, "global_helper") &&
	      has_func(xdp, "mix"));
	check_links(tc);
	CHECK_EQ(xbpf_prog__func_cnt(tc), 3); /* tc_main, global_helper, mix */
	CHECK(has_func(tc, "global_helper") && !has_func(tc, "leaf"));
	check_links(sock);
	CHECK_EQ(xbpf_prog__func_cnt(sock), 1);

	/* maps: BTF maps, then .data, .rodata, .bss */
	CHECK_EQ(xbpf_object__map_cnt(obj), 13);
	/* BTF DATASEC order, as libbpf numbers them (checked against libbpf in test_libbpf_compare) */
	const char *names[] = { "inner0", "inner1", "outer", "stats", "ports", "prefixes", "lru",
				"events", "houter", "flows", ".data", ".rodata", ".bss" };
	for (i = 0; i < 13; i++) {
		m = xbpf_object__map(obj, i);
		CHECK(m && !strcmp(xbpf_map__name(m), names[i]));
	}
	sp = xbpf_map__spec(xbpf_object__find_map(obj, "flows"));
	CHECK(sp && sp->type == XBPF_MAP_HASH && sp->key_size == 4 && sp->value_size == 8 &&
	      sp->max_entries == 128);
	sp = xbpf_map__spec(xbpf_object__find_map(obj, "stats"));
	CHECK(sp && sp->type == XBPF_MAP_PERCPU_ARRAY && sp->value_size == 24);
	CHECK_EQ(xbpf_map__nr_cpus(xbpf_object__find_map(obj, "stats")), 2);
	sp = xbpf_map__spec(xbpf_object__find_map(obj, "lru"));
	CHECK(sp && sp->type == XBPF_MAP_LRU_HASH && sp->key_size == 12 && sp->value_size == 4);
	sp = xbpf_map__spec(xbpf_object__find_map(obj, "prefixes"));
	CHECK(sp && sp->type == XBPF_MAP_LPM_TRIE && sp->key_size == 8 && sp->map_flags == 1);
	sp = xbpf_map__spec(xbpf_object__find_map(obj, "events"));
	CHECK(sp && sp->type == XBPF_MAP_RINGBUF && sp->max_entries == 4096 && !sp->key_size);
	sp = xbpf_map__spec(xbpf_object__find_map(obj, "ports"));
	CHECK(sp && sp->type == XBPF_MAP_DEVMAP && sp->value_size == 4);
	sp = xbpf_map__spec(xbpf_object__find_map(obj, "houter"));
	CHECK(sp && sp->type == XBPF_MAP_HASH_OF_MAPS && sp->value_size == 4 && sp->inner &&
	      sp->inner->type == XBPF_MAP_ARRAY && sp->inner->value_size == 8 &&
	      sp->inner->max_entries == 4);

	/* outer = { [0] = &inner0, [2] = &inner1 }: slots hold the inner maps' object indexes */
	m = xbpf_object__find_map(obj, "outer");
	CHECK(xbpf_map__lookup_elem(m, &zero) == (void *)xbpf_object__find_map(obj, "inner0"));
	k = 1;
	CHECK(!xbpf_map__lookup_elem(m, &k));
	k = 2;
	CHECK(xbpf_map__lookup_elem(m, &k) == (void *)xbpf_object__find_map(obj, "inner1"));
	CHECK_EQ(xbpf_map__lookup(m, &k, &id), 0);
	CHECK_EQ(id, 1);

	/* global data */
	uint32_t *data = xbpf_map__lookup_elem(xbpf_object__find_map(obj, ".data"), &zero);
	uint32_t *rodata = xbpf_map__lookup_elem(xbpf_object__find_map(obj, ".rodata"), &zero);
	uint64_t *bss = xbpf_map__lookup_elem(xbpf_object__find_map(obj, ".bss"), &zero);
	CHECK(data && *data == 7);
	CHECK(rodata && *rodata == 3);
	CHECK(bss && bss[3] == 0);
	CHECK_EQ(xbpf_map__spec(xbpf_object__find_map(obj, ".bss"))->value_size, 32);

	/* .rodata is frozen once open (libbpf freezes it at load): no update, no delete */
	struct xbpf_map *ro = xbpf_object__find_map(obj, ".rodata");
	struct xbpf_map *rw = xbpf_object__find_map(obj, ".data");
	uint32_t ro_new[64] = { 99 }, rw_old = data ? *data : 0;

	CHECK(xbpf_map__is_frozen(ro));
	CHECK(!xbpf_map__is_frozen(rw));
	CHECK(xbpf_map__spec(ro)->value_size <= sizeof(ro_new));
	CHECK_EQ(xbpf_map__update(ro, &zero, ro_new, XBPF_ANY), -EPERM);
	CHECK(rodata && *rodata == 3);
	CHECK_EQ(xbpf_map__freeze(ro), -EBUSY);
	/* any other map freezes on demand (BPF_MAP_FREEZE), and then refuses updates too */
	CHECK_EQ(xbpf_map__freeze(rw), 0);
	CHECK(xbpf_map__is_frozen(rw));
	CHECK_EQ(xbpf_map__update(rw, &zero, ro_new, XBPF_ANY), -EPERM);
	CHECK(data && *data == rw_old);

	/* map references: every ld_imm64 with a pseudo src names a valid map */
	int bss_refs = 0;
	for (i = 0; i < xbpf_prog__insn_cnt(xdp); i++) {
		const struct xbpf_insn *in = &xbpf_prog__insns(xdp)[i];

		if (in->code != (XBPF_LD | XBPF_DW | XBPF_IMM))
			continue;
		if (in->src_reg == XBPF_PSEUDO_MAP_FD || in->src_reg == XBPF_PSEUDO_MAP_VALUE)
			CHECK((size_t)in->imm < xbpf_object__map_cnt(obj));
		if (in->src_reg == XBPF_PSEUDO_MAP_VALUE && in->imm == 12) /* .bss: &scratch */
			CHECK_EQ(in[1].imm, bss_refs++ * 0);
		i++;
	}
	CHECK_EQ(bss_refs, 1);
	for (struct xbpf_prog *p = NULL; (p = xbpf_object__next_prog(obj, p));) {
		struct xbpf_insn *res;
		size_t cnt;

		int rerr = xbpf_prog__resolve_maps(p, &res, &cnt);

		CHECK_EQ(rerr, 0);
		if (!rerr) {
			for (i = 0; i < cnt; i++) {
				if (res[i].code == (XBPF_LD | XBPF_DW | XBPF_IMM)) {
					CHECK_EQ(res[i].src_reg, 0);
					i++;
				}
			}
			free(res);
		}
	}

	/* line info: main's first insn is in xdp_main, the callee regions map to their source */
	struct xbpf_line_desc line;
	struct xbpf_func_desc f;
	CHECK_EQ(xbpf_prog__line(xdp, 0, &line), 0);
	CHECK(line.file && strstr(line.file, "calls.bpf.c"));
	CHECK(line.line > 100);
	for (i = 0; i < xbpf_prog__func_cnt(xdp); i++) {
		xbpf_prog__func(xdp, i, &f);
		if (!strcmp(f.name, "mix")) {
			CHECK_EQ(xbpf_prog__line(xdp, f.start, &line), 0);
			CHECK(line.text && strstr(line.text, "factor"));
		}
	}
	CHECK_EQ(xbpf_prog__line(xdp, 100000, &line), -ENOENT);
	xbpf_object__close(obj);

	/* load-time settings: map sizes and global values, all or nothing */
	{
		const struct xbpf_map_size sizes[] = { { "flows", 300 }, { "lru", 32 } };
		const uint32_t nine = 9, counter0 = 11, seven = 7;
		const struct xbpf_global_value globals[] = { { "factor", &nine, sizeof(nine) },
							     { "counter", &counter0, sizeof(counter0) },
							     { "factor2", &seven, sizeof(seven) } };
		XBPF_OPTS(xbpf_object_open_opts, lo, .map_sizes = sizes, .map_size_cnt = 2,
			  .globals = globals, .global_cnt = 3);
		const struct xbpf_map_size unknown[] = { { "flows", 300 }, { "nope", 1 } };
		const struct xbpf_map_size zero_size[] = { { "flows", 0 } };
		const uint16_t short_val = 1;
		const struct xbpf_global_value bad_size[] = { { "factor", &short_val, 2 } };
		const struct xbpf_global_value bad_name[] = { { "no_such_var", &nine, 4 } };

		obj = xbpf_object__open_file(argv[1], &lo);
		CHECK(obj);
		sp = obj ? xbpf_map__spec(xbpf_object__find_map(obj, "flows")) : NULL;
		CHECK(sp && sp->max_entries == 300);
		sp = obj ? xbpf_map__spec(xbpf_object__find_map(obj, "lru")) : NULL;
		CHECK(sp && sp->max_entries == 32);
		sp = obj ? xbpf_map__spec(xbpf_object__find_map(obj, "stats")) : NULL;
		CHECK(sp && sp->max_entries == 8); /* not named: as built */
		rodata = obj ? xbpf_map__lookup_elem(xbpf_object__find_map(obj, ".rodata"), &zero) : NULL;
		data = obj ? xbpf_map__lookup_elem(xbpf_object__find_map(obj, ".data"), &zero) : NULL;
		CHECK(rodata && rodata[0] == 9 && rodata[1] == 7);
		CHECK(data && *data == 11);
		xbpf_object__close(obj);

		xbpf_print_fn old_print = xbpf_set_print(quiet);

		lo.map_sizes = unknown;
		lo.global_cnt = 0;
		CHECK(!xbpf_object__open_file(argv[1], &lo) && errno == ENOENT);
		lo.map_sizes = zero_size;
		lo.map_size_cnt = 1;
		CHECK(!xbpf_object__open_file(argv[1], &lo) && errno == EINVAL);
		lo.map_size_cnt = 0;
		lo.globals = bad_size;
		lo.global_cnt = 1;
		CHECK(!xbpf_object__open_file(argv[1], &lo) && errno == EINVAL);
		lo.globals = bad_name;
		CHECK(!xbpf_object__open_file(argv[1], &lo) && errno == ENOENT);
		xbpf_set_print(old_print);
	}

	/* open_any: raw files must be a non-empty multiple of 8 */
	{
		char path[] = "/tmp/xbpf-c2-rawXXXXXX";
		int fd = mkstemp(path);
		struct xbpf_insn prog[2] = { { .code = XBPF_ALU64 | XBPF_MOV | XBPF_K, .imm = 1 },
					     { .code = XBPF_JMP | XBPF_EXIT } };

		xbpf_set_print(quiet);
		CHECK(fd >= 0);
		CHECK(write(fd, prog, sizeof(prog)) == sizeof(prog));
		obj = xbpf_object__open_any(path, XBPF_PROG_RAW_MEM, NULL, 0, NULL);
		CHECK(obj && xbpf_prog__insn_cnt(xbpf_object__next_prog(obj, NULL)) == 2);
		CHECK(obj && xbpf_prog__type(xbpf_object__next_prog(obj, NULL)) == XBPF_PROG_RAW_MEM);
		xbpf_object__close(obj);
		CHECK(write(fd, prog, 3) == 3);
		CHECK(!xbpf_object__open_any(path, XBPF_PROG_RAW_MEM, NULL, 0, NULL) && errno == EINVAL);
		CHECK(ftruncate(fd, 0) == 0);
		CHECK(!xbpf_object__open_any(path, XBPF_PROG_RAW_MEM, NULL, 0, NULL) && errno == EINVAL);
		close(fd);
		unlink(path);
		obj = xbpf_object__open_any(argv[1], XBPF_PROG_RAW_MEM, NULL, 0, NULL);
		CHECK(obj && xbpf_object__map_cnt(obj) == 13);
		xbpf_object__close(obj);
		CHECK(!xbpf_object__open_file("/nonexistent/x.o", NULL) && errno == ENOENT);
	}
	TEST_DONE();
}
