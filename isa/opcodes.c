/* SPDX-License-Identifier: MIT */
/*
 * opcodes.c - the opcode table: which of the 256 opcodes exist and what each
 * one carries, expanded from the one opcode list (XBPF_OPCODES in
 * xbpf_isa.h).  The encoding checks, the disassembler, the verifier and the
 * JIT back ends ask this table; the interpreter expands the same list into
 * its dispatch tables.  So they cannot disagree about what an encoding means.
 *
 * Also the program-structure helpers every part shares: which function
 * holds an instruction.
 */
#include "xbpf_isa.h"

#define OPDESC(CODE, NAME, MNEMONIC, FMT, SIZE, IS64, SRC)                                         \
	[CODE] = { MNEMONIC, XBPF_FMT_##FMT, SIZE, IS64, SRC },

const struct xbpf_opdesc xbpf_opcode_table[256] = { XBPF_OPCODES(OPDESC) };

uint32_t xbpf_func_of(const uint32_t *func_start, uint32_t func_cnt, uint32_t idx)
{
	uint32_t lo = 0, hi = func_cnt;

	/* Invariant: func_start[lo] <= idx, and idx < func_start[hi] (if hi < cnt). */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (func_start[mid] <= idx)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int xbpf_func_at(const uint32_t *func_start, uint32_t func_cnt, int64_t idx)
{
	uint32_t f;

	if (!func_cnt || idx < 0 || idx > UINT32_MAX)
		return -1;
	f = xbpf_func_of(func_start, func_cnt, (uint32_t)idx);
	return func_start[f] == idx ? (int)f : -1;
}
