/* SPDX-License-Identifier: MIT */
/*
 * jit_rewrite.c - the rewrites of a program between the checks and the
 * back ends, each a copy that is longer than the original: inlined map
 * lookups (call sites whose map is known, lookup.c) and constant blinding
 * (after the kernel's bpf_jit_blind_constants()).
 *
 * Both go through rewrite(): every instruction expands into a few, jump,
 * gotol, call and callback offsets of the original instructions are
 * recomputed for the new positions (the instruction that carries the
 * original's offset is the expansion's "carrier"), jumps inside an
 * expansion keep their own, function starts move along, and helper call
 * targets chosen by a rewrite (call_fn) follow their calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine_impl.h"

#define LD_IMM64 (XBPF_LD | XBPF_DW | XBPF_IMM)
#define MAX_EXPANSION 16

void __xbpf_rewritten_free(struct xbpf_rewritten *r)
{
	if (!r)
		return;
	free(r->insns);
	free(r->func_start);
	free(r->call_fn);
	free(r);
}

/*
 * Expand the instruction at slot idx of prog into out[] (at most
 * MAX_EXPANSION slots) and return the slot count; out_fn[k] is the call
 * target of out[k] (NULL: the helper by its id), *ret_carrier the slot of
 * out[] that carries the original's jump or function reference.
 */
typedef int (*expand_fn)(const struct xbpf_exec_prog *prog, uint32_t idx, struct xbpf_insn *out,
			 xbpf_helper_fn *out_fn, int *ret_carrier);

static int copy_insn(const struct xbpf_exec_prog *prog, uint32_t idx, struct xbpf_insn *out,
		     xbpf_helper_fn *out_fn, int *ret_carrier)
{
	const struct xbpf_insn *insn = &prog->insns[idx];

	out[0] = insn[0];
	out_fn[0] = prog->call_fn ? prog->call_fn[idx] : NULL;
	*ret_carrier = 0;
	if (insn->code == LD_IMM64) {
		out[1] = insn[1];
		return 2;
	}
	return 1;
}

static int insn_slots(const struct xbpf_exec_prog *prog, uint32_t idx)
{
	return prog->insns[idx].code == LD_IMM64 && idx + 1 < prog->insn_cnt ? 2 : 1;
}

static int rewrite(const struct xbpf_exec_prog *prog, expand_fn expand, struct xbpf_rewritten **ret)
{
	uint32_t cnt = prog->insn_cnt, cap = cnt * 2 + MAX_EXPANSION, n = 0, i;
	uint32_t *newidx = calloc(cnt + 1, sizeof(*newidx));
	uint32_t *carrier = calloc(cnt + 1, sizeof(*carrier));
	struct xbpf_rewritten *r = calloc(1, sizeof(*r));
	bool any_fn = false;
	int err = -ENOMEM;

	if (!r || !newidx || !carrier)
		goto out;
	r->insns = malloc((size_t)cap * sizeof(*r->insns));
	r->call_fn = calloc(cap, sizeof(*r->call_fn));
	r->func_start = calloc(prog->func_cnt, sizeof(*r->func_start));
	if (!r->insns || !r->call_fn || !r->func_start)
		goto out;

	for (i = 0; i < cnt;) {
		struct xbpf_insn tmp[MAX_EXPANSION];
		xbpf_helper_fn fns[MAX_EXPANSION] = { NULL };
		int slots = insn_slots(prog, i), c = 0, k;

		if (slots == 1 && prog->insns[i].code == LD_IMM64) {
			tmp[0] = prog->insns[i]; /* truncated ld_imm64: the structure check refuses it */
			k = 1;
		} else {
			k = expand(prog, i, tmp, fns, &c);
		}
		if (n + (uint32_t)k > cap) {
			struct xbpf_insn *ni;
			xbpf_helper_fn *nf;

			cap = cap * 2 + MAX_EXPANSION;
			ni = realloc(r->insns, (size_t)cap * sizeof(*ni));
			if (ni)
				r->insns = ni;
			nf = realloc(r->call_fn, (size_t)cap * sizeof(*nf));
			if (nf)
				r->call_fn = nf;
			if (!ni || !nf)
				goto out;
		}
		memcpy(&r->insns[n], tmp, (size_t)k * sizeof(tmp[0]));
		for (int s = 0; s < k; s++) {
			r->call_fn[n + s] = fns[s];
			any_fn |= fns[s] != NULL;
		}
		newidx[i] = n;
		carrier[i] = n + (uint32_t)c;
		if (slots == 2)
			newidx[i + 1] = n + 1;
		n += (uint32_t)k;
		i += (uint32_t)slots;
	}
	newidx[cnt] = n;

	err = -E2BIG;
	for (i = 0; i < cnt; i += insn_slots(prog, i)) {
		const struct xbpf_insn *insn = &prog->insns[i];
		bool func_ref = xbpf_insn_is_func_ref(insn);
		struct xbpf_insn *to;
		int64_t t, rel;

		if (!xbpf_insn_is_jump(insn) && !func_ref)
			continue;
		t = func_ref ? xbpf_func_ref_target(insn, i) : xbpf_jump_target(insn, i);
		if (t < 0 || t > cnt) {
			err = -ENOTSUP;
			goto out;
		}
		to = &r->insns[carrier[i]];
		rel = (int64_t)newidx[t] - carrier[i] - 1;
		if (insn->code == (XBPF_JMP32 | XBPF_JA) || func_ref) {
			if (rel < INT32_MIN || rel > INT32_MAX)
				goto out;
			to->imm = (int32_t)rel;
		} else {
			if (rel < INT16_MIN || rel > INT16_MAX)
				goto out;
			to->off = (int16_t)rel;
		}
	}
	for (i = 0; i < prog->func_cnt; i++) {
		if (prog->func_start[i] >= cnt) {
			err = -EINVAL;
			goto out;
		}
		r->func_start[i] = newidx[prog->func_start[i]];
	}
	if (!any_fn) {
		free(r->call_fn);
		r->call_fn = NULL;
	}
	r->prog = *prog;
	r->prog.insns = r->insns;
	r->prog.insn_cnt = n;
	r->prog.func_start = r->func_start;
	r->prog.call_fn = r->call_fn;
	r->prog.lookup_plan = NULL; /* the call sites have moved */
	r->prog.call_frame_size = NULL;
	*ret = r;
	r = NULL;
	err = 0;
out:
	free(newidx);
	free(carrier);
	__xbpf_rewritten_free(r);
	return err;
}

static struct xbpf_insn mk(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct xbpf_insn insn = { .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };

	return insn;
}

/* ---- inlined map lookups ------------------------------------------------- */

/*
 * bpf_map_lookup_elem(map, key) with the key pointer in R2 and the result
 * in R0, R1-R5 dead after it (the call would have clobbered them):
 *
 *   r0 = *(u32 *)(r2 + 0)
 *   if w0 >= max_entries goto null
 *   r0 *= elem_size
 *   [per-CPU:  r1 = cpu (internal insn)
 *              if w1 >= nr_cpus goto slow
 *              r1 *= cpu_size
 *              r0 += r1]
 *   r1 = base ll
 *   r0 += r1
 *   goto done
 * null:
 *   r0 = 0
 *   [goto done
 * slow:
 *   r1 = map ll
 *   call plan.fn]
 * done:
 *
 * The result is the helper's: NULL out of range, the element (this CPU's
 * value) otherwise.  A CPU id beyond the map's CPU count (which the helper
 * folds modulo) takes the slow path, the map family's own lookup.
 */
static int expand_array_lookup(const struct xbpf_lookup_plan *p, const struct xbpf_insn *map_ld,
			       struct xbpf_insn *out, xbpf_helper_fn *out_fn)
{
	uint64_t base = (uintptr_t)p->base;
	bool percpu = p->kind == XBPF_LOOKUP_PERCPU_ARRAY;
	int n = 0, j_null, j_slow = -1, j_done, j_done2 = -1;

	out[n++] = mk(XBPF_LDX | XBPF_MEM | XBPF_W, 0, 2, 0, 0);
	j_null = n;
	out[n++] = mk(XBPF_JMP32 | XBPF_JGE | XBPF_K, 0, 0, 0, (int32_t)p->max_entries);
	out[n++] = mk(XBPF_ALU64 | XBPF_MUL | XBPF_K, 0, 0, 0, (int32_t)p->elem_size);
	if (percpu) {
		out[n++] = mk(XBPF_ALU64 | XBPF_MOV | XBPF_K, 1, 0, XBPF_OFF_CPU_ID, p->cpu_tls_off);
		j_slow = n;
		out[n++] = mk(XBPF_JMP32 | XBPF_JGE | XBPF_K, 1, 0, 0, (int32_t)p->nr_cpus);
		out[n++] = mk(XBPF_ALU64 | XBPF_MUL | XBPF_K, 1, 0, 0, (int32_t)p->cpu_size);
		out[n++] = mk(XBPF_ALU64 | XBPF_ADD | XBPF_X, 0, 1, 0, 0);
	}
	out[n++] = mk(LD_IMM64, 1, 0, 0, (int32_t)(uint32_t)base);
	out[n++] = mk(0, 0, 0, 0, (int32_t)(uint32_t)(base >> 32));
	out[n++] = mk(XBPF_ALU64 | XBPF_ADD | XBPF_X, 0, 1, 0, 0);
	j_done = n;
	out[n++] = mk(XBPF_JMP | XBPF_JA, 0, 0, 0, 0);
	out[j_null].off = (int16_t)(n - j_null - 1);
	out[n++] = mk(XBPF_ALU64 | XBPF_MOV | XBPF_K, 0, 0, 0, 0);
	if (percpu) {
		j_done2 = n;
		out[n++] = mk(XBPF_JMP | XBPF_JA, 0, 0, 0, 0);
		out[j_slow].off = (int16_t)(n - j_slow - 1);
		out[n++] = map_ld[0];
		out[n++] = map_ld[1];
		out_fn[n] = p->fn;
		out[n++] = mk(XBPF_JMP | XBPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
		out[j_done2].off = (int16_t)(n - j_done2 - 1);
	}
	out[j_done].off = (int16_t)(n - j_done - 1);
	return n;
}

/* The ld_imm64 (resolved: src_reg 0) that loads the plan's map: rebuilt from R1's value. */
static void map_load(const struct xbpf_lookup_plan *p, struct xbpf_insn out[2])
{
	uint64_t map = (uintptr_t)p->map;

	out[0] = mk(LD_IMM64, 1, 0, 0, (int32_t)(uint32_t)map);
	out[1] = mk(0, 0, 0, 0, (int32_t)(uint32_t)(map >> 32));
}

static int expand_lookup(const struct xbpf_exec_prog *prog, uint32_t idx, struct xbpf_insn *out,
			 xbpf_helper_fn *out_fn, int *ret_carrier)
{
	const struct xbpf_lookup_plan *p = prog->lookup_plan ? prog->lookup_plan[idx] : NULL;
	struct xbpf_insn ld[2];

	if (!p)
		return copy_insn(prog, idx, out, out_fn, ret_carrier);
	*ret_carrier = 0;
	if (p->kind == XBPF_LOOKUP_ARRAY || p->kind == XBPF_LOOKUP_PERCPU_ARRAY) {
		map_load(p, ld);
		return expand_array_lookup(p, ld, out, out_fn);
	}
	out[0] = prog->insns[idx];
	out_fn[0] = p->fn;
	return 1;
}

int __xbpf_jit_inline_lookups(const struct xbpf_exec_prog *prog, struct xbpf_rewritten **ret)
{
	*ret = NULL;
	if (!prog->lookup_plan)
		return 0;
	return rewrite(prog, expand_lookup, ret);
}

/* ---- constant blinding ------------------------------------------------- */

static uint64_t random_u64(void)
{
	uint64_t v = 0;

	/* Blinding needs unpredictability, not cryptographic strength. */
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)rand() << 32 ^ (uint64_t)rand() ^ (uint64_t)(uintptr_t)&v;
	return v;
}

/* Rewrite insn into out[] (at most 5 slots); returns the slot count. */
static int blind_one(const struct xbpf_insn *insn, struct xbpf_insn *out)
{
	uint8_t cls = XBPF_CLASS(insn->code), op = XBPF_OP(insn->code);
	uint32_t rnd = (uint32_t)random_u64();
	const uint8_t ax = XBPF_REG_AX;

	switch (cls) {
	case XBPF_ALU:
	case XBPF_ALU64:
		if (XBPF_SRC(insn->code) != XBPF_K || op == XBPF_NEG || op == XBPF_END ||
		    (op == XBPF_MOV && insn->off))
			break;
		out[0] = mk(cls | XBPF_MOV | XBPF_K, ax, 0, 0, (int32_t)(rnd ^ (uint32_t)insn->imm));
		out[1] = mk(cls | XBPF_XOR | XBPF_K, ax, 0, 0, (int32_t)rnd);
		out[2] = mk(cls | op | XBPF_X, insn->dst_reg, ax, insn->off, 0);
		return 3;
	case XBPF_JMP:
	case XBPF_JMP32:
		if (!xbpf_insn_is_jump(insn) || op == XBPF_JA || XBPF_SRC(insn->code) != XBPF_K)
			break;
		/* ALU64 mov sign-extends, as a JMP's immediate is. */
		out[0] = mk(XBPF_ALU64 | XBPF_MOV | XBPF_K, ax, 0, 0, (int32_t)(rnd ^ (uint32_t)insn->imm));
		out[1] = mk(XBPF_ALU64 | XBPF_XOR | XBPF_K, ax, 0, 0, (int32_t)rnd);
		out[2] = mk(cls | op | XBPF_X, insn->dst_reg, ax, insn->off, 0);
		return 3;
	case XBPF_ST:
		if (XBPF_MODE(insn->code) != XBPF_MEM)
			break;
		out[0] = mk(XBPF_ALU64 | XBPF_MOV | XBPF_K, ax, 0, 0, (int32_t)(rnd ^ (uint32_t)insn->imm));
		out[1] = mk(XBPF_ALU64 | XBPF_XOR | XBPF_K, ax, 0, 0, (int32_t)rnd);
		out[2] = mk(XBPF_STX | XBPF_MEM | XBPF_SIZE(insn->code), insn->dst_reg, ax, insn->off, 0);
		return 3;
	case XBPF_LD:
		if (insn->code != LD_IMM64 || insn->src_reg == XBPF_PSEUDO_FUNC ||
		    insn->src_reg == XBPF_PSEUDO_BTF_ID) {
			break;
		} else {
			uint64_t v = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
			uint64_t r = random_u64(), x = v ^ r;

			/* ax = v ^ r; dst = r; dst ^= ax */
			out[0] = mk(LD_IMM64, ax, 0, 0, (int32_t)(uint32_t)x);
			out[1] = mk(0, 0, 0, 0, (int32_t)(uint32_t)(x >> 32));
			out[2] = mk(LD_IMM64, insn->dst_reg, 0, 0, (int32_t)(uint32_t)r);
			out[3] = mk(0, 0, 0, 0, (int32_t)(uint32_t)(r >> 32));
			out[4] = mk(XBPF_ALU64 | XBPF_XOR | XBPF_X, insn->dst_reg, ax, 0, 0);
			return 5;
		}
	}
	out[0] = insn[0];
	if (insn->code == LD_IMM64) {
		out[1] = insn[1];
		return 2;
	}
	return 1;
}

static int expand_blind(const struct xbpf_exec_prog *prog, uint32_t idx, struct xbpf_insn *out,
			xbpf_helper_fn *out_fn, int *ret_carrier)
{
	int k = blind_one(&prog->insns[idx], out);

	if (k == 3) {
		*ret_carrier = 2; /* a blinded jump ends its expansion */
		return k;
	}
	if (k == 5) {
		*ret_carrier = 0;
		return k;
	}
	return copy_insn(prog, idx, out, out_fn, ret_carrier);
}

/*
 * Blind every immediate an attacker could use to plant instruction bytes.
 * Jump, gotol and call offsets are recomputed for the longer program.
 */
int __xbpf_jit_blind(const struct xbpf_exec_prog *prog, struct xbpf_rewritten **ret)
{
	return rewrite(prog, expand_blind, ret);
}
