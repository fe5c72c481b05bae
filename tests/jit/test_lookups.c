/* SPDX-License-Identifier: MIT */
/*
 * test_lookups.c - bpf_map_lookup_elem() at call sites whose map is known
 * (jit/lookup.c): the JIT inlines array and per-CPU array lookups and calls
 * the map family's own (key-size specialised) lookup for hash maps; the
 * interpreter has its own handlers for them.  Every engine (interpreter,
 * JIT, JIT with constant blinding) must return what the map holds, as the
 * control-plane API reads it: keys in and out of range, present and
 * missing, per-CPU values on several CPUs (also a CPU id beyond the map's
 * CPU count, which the helper folds), LRU and per-CPU hash maps, a key size
 * without a specialised lookup, an LPM trie, and a map of maps (whose inner
 * lookup has no known map and keeps the generic helper).  The test also
 * checks which plan each call site got, so the paths it names are the ones
 * it ran.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "insn.h"

#include "test_check.h"

#define NR_CPUS 4
#define MISSING 0xdead
#define KEY_MAX 40

enum { M_ARRAY, M_PCPU_ARRAY, M_HASH40, M_HASH6, M_LRU20, M_PCPU_HASH8, M_LPM, M_OUTER, M_CNT };

static const struct xbpf_map_spec inner_spec = {
	.name = "inner", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 4,
};

static const struct xbpf_map_spec specs[M_CNT] = {
	[M_ARRAY] = { .name = "array", .type = XBPF_MAP_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 8 },
	[M_PCPU_ARRAY] = { .name = "pcpu_array", .type = XBPF_MAP_PERCPU_ARRAY, .key_size = 4, .value_size = 8,
			   .max_entries = 8 },
	[M_HASH40] = { .name = "hash40", .type = XBPF_MAP_HASH, .key_size = 40, .value_size = 8, .max_entries = 16 },
	[M_HASH6] = { .name = "hash6", .type = XBPF_MAP_HASH, .key_size = 6, .value_size = 8, .max_entries = 16 },
	[M_LRU20] = { .name = "lru20", .type = XBPF_MAP_LRU_HASH, .key_size = 20, .value_size = 8, .max_entries = 16 },
	[M_PCPU_HASH8] = { .name = "pcpu_hash8", .type = XBPF_MAP_PERCPU_HASH, .key_size = 8, .value_size = 8,
			   .max_entries = 16 },
	[M_LPM] = { .name = "lpm", .type = XBPF_MAP_LPM_TRIE, .key_size = 8, .value_size = 8, .max_entries = 16,
		    .map_flags = 1 /* BPF_F_NO_PREALLOC, as the kernel requires */ },
	[M_OUTER] = { .name = "outer", .type = XBPF_MAP_ARRAY_OF_MAPS, .key_size = 4, .value_size = 4,
		      .max_entries = 2, .inner = &inner_spec },
};

/* The plan the call site must get (the inner lookup of M_OUTER: none). */
static const enum xbpf_lookup_kind want_kind[M_CNT] = {
	[M_ARRAY] = XBPF_LOOKUP_ARRAY,	 [M_PCPU_ARRAY] = XBPF_LOOKUP_PERCPU_ARRAY,
	[M_HASH40] = XBPF_LOOKUP_CALL,	 [M_HASH6] = XBPF_LOOKUP_CALL,
	[M_LRU20] = XBPF_LOOKUP_CALL,	 [M_PCPU_HASH8] = XBPF_LOOKUP_CALL,
	[M_LPM] = XBPF_LOOKUP_CALL,	 [M_OUTER] = XBPF_LOOKUP_CALL,
};

struct lookup_case {
	int map;
	uint8_t key[KEY_MAX];
	uint32_t inner_key; /* M_OUTER: the key of the second lookup */
};

/*
 * XDP: the key on the stack at fp-48, r0 = lookup(map, key); NULL gives
 * MISSING, else the value's low 32 bits (for M_OUTER first the inner map's
 * element inner_key).
 */
static size_t build(const struct lookup_case *c, struct xbpf_insn *p)
{
	uint32_t ksize = specs[c->map].key_size;
	size_t n = 0, null_at[2], nulls = 0;

	for (uint32_t off = 0; off < ksize; off += 8) {
		uint64_t w = 0;

		memcpy(&w, c->key + off, ksize - off < 8 ? ksize - off : 8);
		p[n++] = I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, 1, 0, 0, (int32_t)(uint32_t)w));
		p[n++] = I(INSN(0, 0, 0, 0, (int32_t)(uint32_t)(w >> 32)));
		p[n++] = I(STX(DW, 10, 1, (int16_t)(-48 + (int)off)));
	}
	p[n++] = I(ST(W, 10, -56, (int32_t)c->inner_key));
	p[n++] = I(MOV64X(2, 10));
	p[n++] = I(A64K(ADD, 2, -48));
	p[n++] = I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, 1, XBPF_PSEUDO_MAP_FD, 0, c->map));
	p[n++] = I(INSN(0, 0, 0, 0, 0));
	p[n++] = I(CALL_HELPER(BPF_FUNC_map_lookup_elem));
	null_at[nulls++] = n;
	p[n++] = I(JK(JEQ, 0, 0, 0));
	if (c->map == M_OUTER) {
		p[n++] = I(MOV64X(1, 0));
		p[n++] = I(MOV64X(2, 10));
		p[n++] = I(A64K(ADD, 2, -56));
		p[n++] = I(CALL_HELPER(BPF_FUNC_map_lookup_elem));
		null_at[nulls++] = n;
		p[n++] = I(JK(JEQ, 0, 0, 0));
	}
	p[n++] = I(LDX(DW, 0, 0, 0));
	p[n++] = I(MOV32X(0, 0));
	p[n++] = I(EXIT());
	for (size_t k = 0; k < nulls; k++)
		p[null_at[k]].off = (int16_t)(n - null_at[k] - 1);
	p[n++] = I(MOV64K(0, MISSING));
	p[n++] = I(EXIT());
	return n;
}

static struct xbpf_map *inner_map;

/* Fill every map through the control-plane API. */
static int fill(struct xbpf_object *obj)
{
	uint64_t v[NR_CPUS];
	uint8_t key[KEY_MAX];
	uint32_t id = 3, k;
	int err = 0;

	for (k = 0; k < 8; k++) {
		uint64_t a = 1000 + k;

		for (int c = 0; c < NR_CPUS; c++)
			v[c] = 100u * (uint64_t)c + k;
		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_ARRAY), &k, &a, XBPF_ANY);
		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_PCPU_ARRAY), &k, v, XBPF_ANY);
	}
	for (k = 0; k < 5; k++) {
		uint64_t a = 2000 + k;

		memset(key, 0, sizeof(key));
		key[0] = (uint8_t)k;
		key[39] = 0x5a;
		key[17] = (uint8_t)(k * 3);
		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_HASH40), key, &a, XBPF_ANY);
		a += 100;
		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_HASH6), key, &a, XBPF_ANY);
		a += 100;
		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_LRU20), key, &a, XBPF_ANY);
		for (int c = 0; c < NR_CPUS; c++)
			v[c] = 3000u + 10u * (uint64_t)c + k;
		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_PCPU_HASH8), key, v, XBPF_ANY);
	}
	{
		/* 10.0.0.0/8 -> 4000, 10.1.0.0/16 -> 4001 */
		uint8_t k8[8] = { 8, 0, 0, 0, 10, 0, 0, 0 }, k16[8] = { 16, 0, 0, 0, 10, 1, 0, 0 };
		uint64_t a = 4000, b = 4001;

		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_LPM), k8, &a, XBPF_ANY);
		err = err ?: xbpf_map__update(xbpf_object__map(obj, M_LPM), k16, &b, XBPF_ANY);
	}
	inner_map = xbpf_map__create(&inner_spec, NR_CPUS);
	if (!inner_map)
		return -errno;
	for (k = 0; k < 4; k++) {
		uint64_t a = 5000 + k;

		err = err ?: xbpf_map__update(inner_map, &k, &a, XBPF_ANY);
	}
	k = 1;
	err = err ?: xbpf_map__set_inner(xbpf_object__map(obj, M_OUTER), id, inner_map);
	err = err ?: xbpf_map__update(xbpf_object__map(obj, M_OUTER), &k, &id, XBPF_ANY);
	return err;
}

/* What the lookup must give on CPU cpu, from the control-plane API. */
static uint32_t expected(struct xbpf_object *obj, const struct lookup_case *c, int cpu)
{
	struct xbpf_map *map = xbpf_object__map(obj, c->map);
	uint64_t v[NR_CPUS];
	uint32_t id;

	if (c->map == M_OUTER) {
		if (xbpf_map__lookup(map, c->key, &id) || xbpf_map__lookup(inner_map, &c->inner_key, v))
			return MISSING;
		return (uint32_t)v[0];
	}
	if (xbpf_map__lookup(map, c->key, v))
		return MISSING;
	if (c->map == M_PCPU_ARRAY || c->map == M_PCPU_HASH8)
		return (uint32_t)v[cpu % NR_CPUS];
	return (uint32_t)v[0];
}

/* The plans jit/lookup.c gives the program's call sites, in order: kinds, -1 for none. */
static void check_plans(const struct xbpf_prog *prog, const struct lookup_case *c, const char *what)
{
	struct xbpf_insn *insns;
	size_t cnt;
	uint32_t start = 0, calls = 0;
	uint16_t depth = 64;
	struct xbpf_call_plans plans;

	if (xbpf_prog__resolve_maps(prog, &insns, &cnt)) {
		CHECK(0, "%s: resolve", what);
		return;
	}
	struct xbpf_exec_prog e = {
		.insns = insns, .insn_cnt = (uint32_t)cnt, .func_cnt = 1, .func_start = &start,
		.stack_depth = &depth,
	};
	CHECK(!__xbpf_lookup_plans(&e, xbpf_prog__insns(prog), &plans), "%s: plans", what);
	for (uint32_t i = 0; i < cnt; i += xbpf_insn_len(&insns[i])) {
		if (!xbpf_insn_is_helper_call(&insns[i]))
			continue;
		if (calls++ == 0)
			CHECK(plans.at[i] && plans.at[i]->kind == want_kind[c->map], "%s: first lookup plan %d",
			      what, plans.at[i] ? (int)plans.at[i]->kind : -1);
		else
			CHECK(!plans.at[i], "%s: the inner lookup's map is not known, yet it got a plan", what);
	}
	__xbpf_lookup_plans_free(&plans);
	free(insns);
}

static int run_case(const struct lookup_case *c, const char *what)
{
	static const int cpus[] = { 0, 1, 3, 5 /* beyond the maps' CPU count */ };
	struct xbpf_object_open_opts oo = { .sz = sizeof(oo), .nr_cpus = NR_CPUS };
	struct xbpf_insn insns[64];
	size_t n = build(c, insns);
	struct xbpf_object *obj = xbpf_object__open_raw(insns, n, XBPF_PROG_XDP, specs, M_CNT, &oo);
	struct xbpf_prog *prog = obj ? xbpf_object__next_prog(obj, NULL) : NULL;
	uint8_t pkt[64] = { 0 };
	int runs = 0;

	if (!prog || fill(obj)) {
		CHECK(0, "%s: open or fill: %s", what, strerror(errno));
		xbpf_object__close(obj);
		return 0;
	}
	check_plans(prog, c, what);
	for (int engine = 0; engine < 3; engine++) {
		struct xbpf_vm_opts vo = { .sz = sizeof(vo), .engine = engine ? XBPF_ENGINE_JIT : XBPF_ENGINE_INTERP,
					   .blind_constants = engine == 2 };
		struct xbpf_vm *vm = xbpf_vm__new(prog, &vo);

		if (!vm) {
			CHECK(0, "%s: engine %d refused: %s", what, engine, strerror(errno));
			continue;
		}
		if (engine && __xbpf_jit_host_arch)
			CHECK(xbpf_vm__engine(vm) == XBPF_ENGINE_JIT, "%s: the JIT fell back", what);
		for (size_t k = 0; k < sizeof(cpus) / sizeof(cpus[0]); k++) {
			struct xbpf_test_run_opts t = { .sz = sizeof(t), .data_in = pkt, .data_size_in = sizeof(pkt),
							.cpu = (uint32_t)cpus[k] };
			uint32_t want = expected(obj, c, cpus[k]);
			int err = xbpf_vm__test_run(vm, &t);

			CHECK(!err && t.retval == want, "%s: engine %d%s cpu %d: %d, R0 %u, want %u", what,
			      engine, engine == 2 ? " blinded" : "", cpus[k], err, t.retval, want);
			runs++;
		}
		xbpf_vm__free(vm);
	}
	xbpf_map__free(inner_map);
	inner_map = NULL;
	xbpf_object__close(obj);
	return runs;
}

int main(void)
{
	struct lookup_case cases[64];
	int n = 0, runs = 0;
	char what[64];

	memset(cases, 0, sizeof(cases));
	/* arrays: in range, the last, one past, far out */
	{
		static const uint32_t keys[] = { 0, 3, 7, 8, 0x80000000u, 0xffffffffu };

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			for (int m = M_ARRAY; m <= M_PCPU_ARRAY; m++) {
				cases[n].map = m;
				memcpy(cases[n].key, &keys[i], 4);
				n++;
			}
		}
	}
	/* hash families: present (0..4) and missing keys */
	for (uint8_t k = 0; k < 7; k += 2) {
		for (int m = M_HASH40; m <= M_PCPU_HASH8; m++) {
			cases[n].map = m;
			cases[n].key[0] = k;
			cases[n].key[17] = (uint8_t)(k * 3);
			cases[n].key[39] = 0x5a;
			n++;
		}
	}
	{
		/* LPM: 10.1.2.3 -> /16, 10.9.9.9 -> /8, 11.0.0.1 -> none */
		static const uint8_t addrs[3][4] = { { 10, 1, 2, 3 }, { 10, 9, 9, 9 }, { 11, 0, 0, 1 } };

		for (int i = 0; i < 3; i++) {
			cases[n].map = M_LPM;
			cases[n].key[0] = 32;
			memcpy(cases[n].key + 4, addrs[i], 4);
			n++;
		}
	}
	/* map of maps: outer key 1 holds the inner array; 0 is empty; inner keys in and out of range */
	for (uint32_t outer = 0; outer < 2; outer++) {
		for (uint32_t inner = 0; inner < 6; inner += 2) {
			cases[n].map = M_OUTER;
			memcpy(cases[n].key, &outer, 4);
			cases[n].inner_key = inner;
			n++;
		}
	}
	for (int i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "%s key[0]=%u", specs[cases[i].map].name, cases[i].key[0]);
		runs += run_case(&cases[i], what);
	}
	if (failures) {
		fprintf(stderr, "lookups: %d failure(s)\n", failures);
		return 1;
	}
	printf("lookups: %d cases, %d runs on interpreter, JIT and blinded JIT, 0 failures\n", n, runs);
	return 0;
}
