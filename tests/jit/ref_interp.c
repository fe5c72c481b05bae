/* SPDX-License-Identifier: MIT */
/*
 * ref_interp.c - a deliberately plain reference interpreter for the JIT tests.
 *
 * It is written straight from the ISA description (kernel semantics: 32-bit
 * results zero-extended, shift counts masked, x/0 = 0, x%0 = x, signed
 * INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0) with no attempt at speed, so the JIT
 * tests do not depend on the engine under test agreeing with itself.  The
 * product interpreter (interp.c) is compared as well where it is linked.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_interp.h"
#include "xbpf.h"

#define MAX_STEPS 10000000

struct frame {
	uint64_t saved[4]; /* R6-R9 of the caller */
	uint64_t fp;
	uint32_t ret_pc;
	uint8_t stack[XBPF_STACK_SIZE] __attribute__((aligned(16)));
};

static int func_of(const struct xbpf_exec_prog *prog, uint32_t pc)
{
	int f = 0;

	for (uint32_t i = 0; i < prog->func_cnt; i++)
		if (prog->func_start[i] <= pc)
			f = (int)i;
	return f;
}

static uint64_t alu(uint8_t op, bool w, int16_t off, uint64_t d, uint64_t s, bool *ok)
{
	if (!w) {
		uint32_t a = (uint32_t)d, b = (uint32_t)s;

		switch (op) {
		case XBPF_ADD: return (uint32_t)(a + b);
		case XBPF_SUB: return (uint32_t)(a - b);
		case XBPF_MUL: return (uint32_t)(a * b);
		case XBPF_OR: return a | b;
		case XBPF_AND: return a & b;
		case XBPF_XOR: return a ^ b;
		case XBPF_LSH: return (uint32_t)(a << (b & 31));
		case XBPF_RSH: return a >> (b & 31);
		case XBPF_ARSH: return (uint32_t)((int32_t)a >> (b & 31));
		case XBPF_NEG: return (uint32_t)-a;
		case XBPF_MOV:
			if (off == 8)
				return (uint32_t)(int32_t)(int8_t)b;
			if (off == 16)
				return (uint32_t)(int32_t)(int16_t)b;
			return b;
		case XBPF_DIV:
			if (!b)
				return 0;
			if (off) {
				if ((int32_t)b == -1)
					return (uint32_t)-a;
				return (uint32_t)((int32_t)a / (int32_t)b);
			}
			return a / b;
		case XBPF_MOD:
			if (!b)
				return a;
			if (off) {
				if ((int32_t)b == -1)
					return 0;
				return (uint32_t)((int32_t)a % (int32_t)b);
			}
			return a % b;
		}
	} else {
		switch (op) {
		case XBPF_ADD: return d + s;
		case XBPF_SUB: return d - s;
		case XBPF_MUL: return d * s;
		case XBPF_OR: return d | s;
		case XBPF_AND: return d & s;
		case XBPF_XOR: return d ^ s;
		case XBPF_LSH: return d << (s & 63);
		case XBPF_RSH: return d >> (s & 63);
		case XBPF_ARSH: return (uint64_t)((int64_t)d >> (s & 63));
		case XBPF_NEG: return -d;
		case XBPF_MOV:
			if (off == 8)
				return (uint64_t)(int64_t)(int8_t)s;
			if (off == 16)
				return (uint64_t)(int64_t)(int16_t)s;
			if (off == 32)
				return (uint64_t)(int64_t)(int32_t)s;
			return s;
		case XBPF_DIV:
			if (!s)
				return 0;
			if (off) {
				if ((int64_t)s == -1)
					return -d;
				return (uint64_t)((int64_t)d / (int64_t)s);
			}
			return d / s;
		case XBPF_MOD:
			if (!s)
				return d;
			if (off) {
				if ((int64_t)s == -1)
					return 0;
				return (uint64_t)((int64_t)d % (int64_t)s);
			}
			return d % s;
		}
	}
	*ok = false;
	return 0;
}

static bool cond(uint8_t op, bool w, uint64_t d, uint64_t s)
{
	if (!w) {
		d = (uint32_t)d;
		s = (uint32_t)s;
		switch (op) {
		case XBPF_JSGT: return (int32_t)d > (int32_t)s;
		case XBPF_JSGE: return (int32_t)d >= (int32_t)s;
		case XBPF_JSLT: return (int32_t)d < (int32_t)s;
		case XBPF_JSLE: return (int32_t)d <= (int32_t)s;
		}
	}
	switch (op) {
	case XBPF_JEQ: return d == s;
	case XBPF_JNE: return d != s;
	case XBPF_JGT: return d > s;
	case XBPF_JGE: return d >= s;
	case XBPF_JLT: return d < s;
	case XBPF_JLE: return d <= s;
	case XBPF_JSET: return d & s;
	case XBPF_JSGT: return (int64_t)d > (int64_t)s;
	case XBPF_JSGE: return (int64_t)d >= (int64_t)s;
	case XBPF_JSLT: return (int64_t)d < (int64_t)s;
	case XBPF_JSLE: return (int64_t)d <= (int64_t)s;
	}
	return false;
}

static uint64_t load(uint64_t addr, uint8_t size, bool sx)
{
	switch (size) {
	case XBPF_B: return sx ? (uint64_t)(int64_t) * (int8_t *)addr : *(uint8_t *)addr;
	case XBPF_H: return sx ? (uint64_t)(int64_t) * (int16_t *)addr : *(uint16_t *)addr;
	case XBPF_W: return sx ? (uint64_t)(int64_t) * (int32_t *)addr : *(uint32_t *)addr;
	default: return *(uint64_t *)addr;
	}
}

static void store(uint64_t addr, uint8_t size, uint64_t v)
{
	switch (size) {
	case XBPF_B: *(uint8_t *)addr = (uint8_t)v; break;
	case XBPF_H: *(uint16_t *)addr = (uint16_t)v; break;
	case XBPF_W: *(uint32_t *)addr = (uint32_t)v; break;
	default: *(uint64_t *)addr = v; break;
	}
}

static bool atomic(const struct xbpf_insn *insn, uint64_t *r, uint64_t addr)
{
	bool w = XBPF_SIZE(insn->code) == XBPF_DW;
	uint64_t old = w ? *(uint64_t *)addr : *(uint32_t *)addr, src = r[insn->src_reg], v;
	int op = insn->imm & ~XBPF_FETCH;

	if (insn->imm == XBPF_CMPXCHG) {
		uint64_t cmp = w ? r[0] : (uint32_t)r[0];

		if (old == cmp)
			store(addr, XBPF_SIZE(insn->code), src);
		r[0] = old;
		return true;
	}
	if (insn->imm == XBPF_XCHG) {
		v = src;
	} else {
		switch (op) {
		case XBPF_ADD: v = old + src; break;
		case XBPF_OR: v = old | src; break;
		case XBPF_AND: v = old & src; break;
		case XBPF_XOR: v = old ^ src; break;
		default: return false;
		}
	}
	store(addr, XBPF_SIZE(insn->code), v);
	if (insn->imm & XBPF_FETCH)
		r[insn->src_reg] = old;
	return true;
}

int ref_run(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2, uint64_t *ret)
{
	struct frame *frames;
	uint64_t r[XBPF_REG_AX + 1] = { 0 };
	uint32_t pc = 0, depth = 0;
	long steps = 0;
	int err = -EINVAL;

	frames = calloc(XBPF_MAX_CALL_FRAMES, sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	r[1] = r1;
	r[2] = r2;
	r[10] = (uint64_t)(uintptr_t)(frames[0].stack + XBPF_STACK_SIZE);

	while (pc < prog->insn_cnt && steps++ < MAX_STEPS) {
		const struct xbpf_insn *insn = &prog->insns[pc];
		uint8_t cls = XBPF_CLASS(insn->code), op = XBPF_OP(insn->code);
		bool x = XBPF_SRC(insn->code) == XBPF_X, ok = true;
		uint64_t src;

		switch (cls) {
		case XBPF_ALU:
		case XBPF_ALU64: {
			bool w = cls == XBPF_ALU64;

			if (op == XBPF_END) {
				uint64_t d = r[insn->dst_reg];
				bool swap = w || x;

				if (insn->imm == 16)
					d = swap ? __builtin_bswap16((uint16_t)d) : (uint16_t)d;
				else if (insn->imm == 32)
					d = swap ? __builtin_bswap32((uint32_t)d) : (uint32_t)d;
				else if (insn->imm == 64)
					d = swap ? __builtin_bswap64(d) : d;
				else
					goto out;
				r[insn->dst_reg] = d;
				break;
			}
			src = x ? r[insn->src_reg] : (w ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);
			r[insn->dst_reg] = alu(op, w, insn->off, r[insn->dst_reg], src, &ok);
			if (!ok)
				goto out;
			break;
		}
		case XBPF_LD:
			if (insn->code != (XBPF_LD | XBPF_DW | XBPF_IMM))
				goto out;
			r[insn->dst_reg] = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
			pc++;
			break;
		case XBPF_LDX:
			r[insn->dst_reg] = load(r[insn->src_reg] + insn->off, XBPF_SIZE(insn->code),
						XBPF_MODE(insn->code) == XBPF_MEMSX);
			break;
		case XBPF_ST:
			store(r[insn->dst_reg] + insn->off, XBPF_SIZE(insn->code), (uint64_t)(int64_t)insn->imm);
			break;
		case XBPF_STX:
			if (XBPF_MODE(insn->code) == XBPF_ATOMIC) {
				if (!atomic(insn, r, r[insn->dst_reg] + insn->off))
					goto out;
				break;
			}
			store(r[insn->dst_reg] + insn->off, XBPF_SIZE(insn->code), r[insn->src_reg]);
			break;
		case XBPF_JMP:
		case XBPF_JMP32:
			if (op == XBPF_EXIT) {
				if (!depth) {
					*ret = r[0];
					err = 0;
					goto out;
				}
				depth--;
				memcpy(&r[6], frames[depth + 1].saved, sizeof(frames[0].saved));
				r[10] = frames[depth + 1].fp;
				pc = frames[depth + 1].ret_pc;
				continue;
			}
			if (op == XBPF_CALL) {
				if (insn->src_reg == XBPF_PSEUDO_CALL) {
					if (++depth >= XBPF_MAX_CALL_FRAMES)
						goto out;
					memcpy(frames[depth].saved, &r[6], sizeof(frames[0].saved));
					frames[depth].fp = r[10];
					frames[depth].ret_pc = pc + 1;
					r[10] = (uint64_t)(uintptr_t)(frames[depth].stack + XBPF_STACK_SIZE);
					pc = pc + insn->imm + 1;
					(void)func_of;
					continue;
				} else {
					xbpf_helper_fn fn = xbpf_helper_impl(insn->imm);

					if (!fn)
						goto out;
					r[0] = fn(r[1], r[2], r[3], r[4], r[5]);
					/* R1-R5 are clobbered: make reads of them visible */
					for (int i = 1; i <= 5; i++)
						r[i] = 0xdead0000beefULL + i;
				}
				break;
			}
			if (op == XBPF_JA) {
				pc += (cls == XBPF_JMP32 ? insn->imm : insn->off) + 1;
				continue;
			}
			src = x ? r[insn->src_reg] : (uint64_t)(int64_t)insn->imm;
			if (cond(op, cls == XBPF_JMP, r[insn->dst_reg], src)) {
				pc += insn->off + 1;
				continue;
			}
			break;
		default:
			goto out;
		}
		pc++;
	}
out:
	free(frames);
	return err;
}
