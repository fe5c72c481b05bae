/* SPDX-License-Identifier: MIT */
/*
 * lookup.c - bpf_map_lookup_elem() calls whose map is known where they are
 * made, so that the engines can do the lookup the cheapest way the map
 * allows (core's struct xbpf_lookup_plan): the JIT inlines array and per-CPU
 * array lookups and calls the map family's own lookup for the rest, the
 * interpreter gives such calls their own handlers.  The kernel does the
 * same with its verifier's map_ptr per call (map_gen_lookup).
 *
 * The map is known when R1 is set, in the call's basic block, by an
 * ld_imm64 that referred to a map (XBPF_PSEUDO_MAP_FD before resolution;
 * its resolved value is the map).  That is how clang emits every lookup of
 * a global map; anything else (a map from a map of maps, R1 set on another
 * path into the block) keeps the generic helper.  The walk back from the
 * call stops at the block's start (a jump target or function entry) and at
 * anything that may write R1, so it is sound without the verifier.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"

#define BLOCK_START 1 /* control can enter other than from the previous slot */
#define SECOND_SLOT 2 /* the second half of an ld_imm64 */

static uint8_t *slot_kinds(const struct xbpf_exec_prog *prog)
{
	uint8_t *kind = calloc(prog->insn_cnt + 1, 1);

	if (!kind)
		return NULL;
	for (uint32_t f = 0; f < prog->func_cnt; f++)
		kind[prog->func_start[f]] |= BLOCK_START;
	for (uint32_t i = 0; i < prog->insn_cnt; i += xbpf_insn_len(&prog->insns[i])) {
		const struct xbpf_insn *insn = &prog->insns[i];
		int64_t t;

		if (xbpf_insn_len(insn) == 2)
			kind[i + 1] |= SECOND_SLOT;
		if (!xbpf_insn_is_jump(insn))
			continue;
		t = xbpf_jump_target(insn, i);
		if (t >= 0 && t <= prog->insn_cnt)
			kind[t] |= BLOCK_START;
	}
	return kind;
}

/* May insn (not a call) leave another value in R1? */
static bool writes_r1(const struct xbpf_insn *insn)
{
	switch (xbpf_opcode_desc(insn->code)->fmt) {
	case XBPF_FMT_ALU:
	case XBPF_FMT_ALU_UN:
	case XBPF_FMT_LDX:
	case XBPF_FMT_LDIMM64:
		return insn->dst_reg == 1;
	case XBPF_FMT_ATOMIC:
		return (insn->imm & XBPF_FETCH) && insn->src_reg == 1;
	case XBPF_FMT_ST:
	case XBPF_FMT_STX:
	case XBPF_FMT_JCOND:
		return false;
	default:
		return true; /* calls and LD_ABS clobber R1-R5; the rest end the block */
	}
}

/* The map R1 holds at the call in slot idx, or NULL. */
static const struct xbpf_map *map_at_call(const struct xbpf_exec_prog *prog, const struct xbpf_insn *orig,
					  const uint8_t *kind, uint32_t idx)
{
	uint32_t j = idx;

	while (j > 0 && !(kind[j] & BLOCK_START)) {
		const struct xbpf_insn *insn;

		j--;
		if (kind[j] & SECOND_SLOT)
			j--; /* step onto the ld_imm64's first slot */
		insn = &prog->insns[j];
		if (!writes_r1(insn))
			continue;
		if (insn->code != (XBPF_LD | XBPF_DW | XBPF_IMM) || orig[j].src_reg != XBPF_PSEUDO_MAP_FD)
			return NULL;
		return (const struct xbpf_map *)(uintptr_t)((uint32_t)insn[0].imm |
							    (uint64_t)(uint32_t)insn[1].imm << 32);
	}
	return NULL;
}

int __xbpf_lookup_plans(const struct xbpf_exec_prog *prog, const struct xbpf_insn *orig,
			struct xbpf_call_plans *ret)
{
	uint8_t *kind;
	uint32_t n = 0;

	memset(ret, 0, sizeof(*ret));
	kind = slot_kinds(prog);
	ret->at = calloc(prog->insn_cnt, sizeof(*ret->at));
	ret->plans = calloc(prog->insn_cnt, sizeof(*ret->plans));
	if (!kind || !ret->at || !ret->plans) {
		free(kind);
		__xbpf_lookup_plans_free(ret);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < prog->insn_cnt; i += xbpf_insn_len(&prog->insns[i])) {
		const struct xbpf_insn *insn = &prog->insns[i];
		const struct xbpf_map *map;

		if (!xbpf_insn_is_helper_call(insn) || insn->imm != BPF_FUNC_map_lookup_elem)
			continue;
		map = map_at_call(prog, orig, kind, i);
		if (!map)
			continue;
		__xbpf_map_lookup_plan(map, &ret->plans[n]);
		ret->at[i] = &ret->plans[n++];
	}
	free(kind);
	ret->cnt = n;
	return 0;
}

void __xbpf_lookup_plans_free(struct xbpf_call_plans *plans)
{
	free(plans->at);
	free(plans->plans);
	memset(plans, 0, sizeof(*plans));
}
