// SPDX-License-Identifier: MIT
/*
 * tnum.c - known-bits arithmetic for the verifier.
 *
 * Every operation returns a tnum that contains every concrete result of
 * applying the operation to members of its operands (soundness); exactness
 * is best effort.  Multiplication is done by shift-and-add over the bits of
 * one operand, adding either the known product or an all-unknown term.
 */
#include <stdio.h>

#include "tnum.h"

const struct tnum tnum_unknown = { .value = 0, .mask = UINT64_MAX };

struct tnum tnum_const(uint64_t value)
{
	return TNUM(value, 0);
}

struct tnum tnum_range(uint64_t min, uint64_t max)
{
	uint64_t chi = min ^ max, delta;
	int bits;

	if (!chi)
		return tnum_const(min);
	bits = 64 - __builtin_clzll(chi);
	/* The values differ somewhere in the low `bits` bits: those are unknown. */
	if (bits > 63)
		return tnum_unknown;
	delta = (1ULL << bits) - 1;
	return TNUM(min & ~delta, delta);
}

struct tnum tnum_lshift(struct tnum a, uint8_t shift)
{
	return TNUM(a.value << shift, a.mask << shift);
}

struct tnum tnum_rshift(struct tnum a, uint8_t shift)
{
	return TNUM(a.value >> shift, a.mask >> shift);
}

struct tnum tnum_arshift(struct tnum a, uint8_t min_shift, uint8_t insn_bitness)
{
	if (insn_bitness == 32)
		return TNUM((uint32_t)(((int32_t)a.value) >> min_shift),
			    (uint32_t)(((int32_t)a.mask) >> min_shift));
	return TNUM((uint64_t)(((int64_t)a.value) >> min_shift),
		    (uint64_t)(((int64_t)a.mask) >> min_shift));
}

struct tnum tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sm = a.mask + b.mask;
	uint64_t sv = a.value + b.value;
	uint64_t sigma = sm + sv;
	uint64_t chi = sigma ^ sv;
	uint64_t mu = chi | a.mask | b.mask;

	return TNUM(sv & ~mu, mu);
}

struct tnum tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t dv = a.value - b.value;
	uint64_t alpha = dv + a.mask;
	uint64_t beta = dv - b.mask;
	uint64_t chi = alpha ^ beta;
	uint64_t mu = chi | a.mask | b.mask;

	return TNUM(dv & ~mu, mu);
}

struct tnum tnum_neg(struct tnum a)
{
	return tnum_sub(tnum_const(0), a);
}

struct tnum tnum_and(struct tnum a, struct tnum b)
{
	uint64_t alpha = a.value | a.mask;
	uint64_t beta = b.value | b.mask;
	uint64_t v = a.value & b.value;

	return TNUM(v, alpha & beta & ~v);
}

struct tnum tnum_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;
	uint64_t mu = a.mask | b.mask;

	return TNUM(v, mu & ~v);
}

struct tnum tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t v = a.value ^ b.value;
	uint64_t mu = a.mask | b.mask;

	return TNUM(v & ~mu, mu);
}

/*
 * Long multiplication over known bits, as Linux 6.18 does it: a known one
 * in a adds b, an unknown bit adds b or nothing (the union of both sums).
 */
struct tnum tnum_mul(struct tnum a, struct tnum b)
{
	struct tnum acc = tnum_const(0);

	while (a.value || a.mask) {
		if (a.value & 1)
			acc = tnum_add(acc, b);
		else if (a.mask & 1)
			acc = tnum_union(acc, tnum_add(acc, b));
		a = tnum_rshift(a, 1);
		b = tnum_lshift(b, 1);
	}
	return acc;
}

/*
 * The smallest member of t above z (t's largest when none is, its
 * smallest when z is below it), as the kernel's tnum_step().  Members are
 * value + x for the submasks x of mask, in the order of x: the answer is
 * value + the smallest submask >= z - value + 1.
 */
uint64_t tnum_step(struct tnum t, uint64_t z)
{
	uint64_t tmax = t.value | t.mask, d, prefix = 0, best = 0;

	if (z >= tmax)
		return tmax;
	if (z < t.value)
		return t.value;
	d = z - t.value + 1; /* 1 <= d <= mask */
	for (int bit = 63; bit >= 0; bit--) {
		uint64_t b = 1ULL << bit;

		if (d & b) {
			if (!(t.mask & b))
				return t.value + best; /* d's bit cannot be matched: above it, bigger */
			prefix |= b;
		} else if (t.mask & b) {
			best = prefix | b; /* bigger than d from here on, the smallest so far */
		}
	}
	return t.value + prefix; /* d itself is a submask */
}

/* Every value either tnum may hold. */
struct tnum tnum_union(struct tnum a, struct tnum b)
{
	uint64_t v = a.value & b.value;
	uint64_t mu = (a.value ^ b.value) | a.mask | b.mask;

	return TNUM(v & ~mu, mu);
}

struct tnum tnum_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;
	uint64_t mu = a.mask & b.mask;

	return TNUM(v & ~mu, mu);
}

struct tnum tnum_cast(struct tnum a, uint8_t size)
{
	if (size >= 8)
		return a;
	a.value &= (1ULL << (size * 8)) - 1;
	a.mask &= (1ULL << (size * 8)) - 1;
	return a;
}

bool tnum_is_const(struct tnum a)
{
	return !a.mask;
}

bool tnum_is_unknown(struct tnum a)
{
	return !~a.mask;
}

bool tnum_equals_const(struct tnum a, uint64_t b)
{
	return tnum_is_const(a) && a.value == b;
}

bool tnum_is_aligned(struct tnum a, uint64_t size)
{
	if (!size)
		return true;
	return !((a.value | a.mask) & (size - 1));
}

bool tnum_in(struct tnum a, struct tnum b)
{
	if (b.mask & ~a.mask)
		return false;
	b.value &= ~a.mask;
	return a.value == b.value;
}

struct tnum tnum_subreg(struct tnum a)
{
	return tnum_cast(a, 4);
}

struct tnum tnum_clear_subreg(struct tnum a)
{
	return tnum_lshift(tnum_rshift(a, 32), 32);
}

struct tnum tnum_with_subreg(struct tnum reg, struct tnum subreg)
{
	return tnum_or(tnum_clear_subreg(reg), tnum_subreg(subreg));
}

struct tnum tnum_const_subreg(struct tnum a, uint32_t value)
{
	return tnum_with_subreg(a, tnum_const(value));
}

bool tnum_subreg_is_const(struct tnum a)
{
	return !(tnum_subreg(a)).mask;
}

int tnum_strn(char *str, size_t size, struct tnum a)
{
	return snprintf(str, size, "(0x%llx; 0x%llx)", (unsigned long long)a.value,
			(unsigned long long)a.mask);
}

