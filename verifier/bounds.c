// SPDX-License-Identifier: MIT
/*
 * bounds.c - what the verifier knows about a scalar: known bits (tnum) plus
 * signed and unsigned ranges, 64-bit and for the low 32 bits.
 *
 * The five views describe the same set of values, so after every change
 * xv_reg_bounds_sync() lets each view tighten the others (the kernel's
 * reg_bounds_sync()): ranges from bits, 32-bit ranges from 64-bit ones when
 * the high half is fixed and back, signed from unsigned when no sign
 * boundary is crossed, and bits from the unsigned range.  ALU ops compute
 * both widths, as the kernel does, so JMP32 refinements keep working after
 * 64-bit arithmetic.  Everything here is sound first: a view that cannot be
 * computed exactly becomes "anything".
 */
#include <errno.h>
#include <string.h>

#include "verifier_impl.h"

#define U32_MAX UINT32_MAX
#define S32_MIN INT32_MIN
#define S32_MAX INT32_MAX
#define U64_MAX UINT64_MAX
#define S64_MIN INT64_MIN
#define S64_MAX INT64_MAX

#define max_t(a, b) ((a) > (b) ? (a) : (b))
#define min_t(a, b) ((a) < (b) ? (a) : (b))

static void mark_unbounded(struct xv_reg *reg)
{
	reg->smin_value = S64_MIN;
	reg->smax_value = S64_MAX;
	reg->umin_value = 0;
	reg->umax_value = U64_MAX;
	reg->s32_min_value = S32_MIN;
	reg->s32_max_value = S32_MAX;
	reg->u32_min_value = 0;
	reg->u32_max_value = U32_MAX;
}

static void mark_unbounded64(struct xv_reg *reg)
{
	reg->smin_value = S64_MIN;
	reg->smax_value = S64_MAX;
	reg->umin_value = 0;
	reg->umax_value = U64_MAX;
}

static void mark_unbounded32(struct xv_reg *reg)
{
	reg->s32_min_value = S32_MIN;
	reg->s32_max_value = S32_MAX;
	reg->u32_min_value = 0;
	reg->u32_max_value = U32_MAX;
}

void xv_mark_unknown(struct xv_reg *reg)
{
	memset(reg, 0, sizeof(*reg));
	reg->type = SCALAR_VALUE;
	reg->var_off = tnum_unknown;
	mark_unbounded(reg);
}

void xv_mark_known(struct xv_reg *reg, uint64_t imm)
{
	memset(reg, 0, sizeof(*reg));
	reg->type = SCALAR_VALUE;
	reg->var_off = tnum_const(imm);
	reg->smin_value = reg->smax_value = (int64_t)imm;
	reg->umin_value = reg->umax_value = imm;
	reg->s32_min_value = reg->s32_max_value = (int32_t)imm;
	reg->u32_min_value = reg->u32_max_value = (uint32_t)imm;
}

bool xv_reg_is_const(const struct xv_reg *reg)
{
	return reg->type == SCALAR_VALUE && tnum_is_const(reg->var_off);
}

static void update_reg32_bounds(struct xv_reg *reg)
{
	struct tnum v = tnum_subreg(reg->var_off);

	reg->s32_min_value = max_t(reg->s32_min_value, (int32_t)(v.value | (v.mask & (1u << 31))));
	reg->s32_max_value = min_t(reg->s32_max_value, (int32_t)(v.value | (v.mask & S32_MAX)));
	reg->u32_min_value = max_t(reg->u32_min_value, (uint32_t)v.value);
	reg->u32_max_value = min_t(reg->u32_max_value, (uint32_t)(v.value | v.mask));
}

/* A constant, in place (the kernel's ___mark_reg_known(): type, ids and marks kept). */
static void set_known(struct xv_reg *reg, uint64_t imm)
{
	reg->var_off = tnum_const(imm);
	reg->smin_value = reg->smax_value = (int64_t)imm;
	reg->umin_value = reg->umax_value = imm;
	reg->s32_min_value = reg->s32_max_value = (int32_t)imm;
	reg->u32_min_value = reg->u32_max_value = (uint32_t)imm;
}

static void update_reg64_bounds(struct xv_reg *reg)
{
	struct tnum v = reg->var_off;
	uint64_t next, tmax = v.value | v.mask;
	bool umin_in_tnum;

	reg->smin_value = max_t(reg->smin_value, (int64_t)(v.value | (v.mask & (1ULL << 63))));
	reg->smax_value = min_t(reg->smax_value, (int64_t)(v.value | (v.mask & S64_MAX)));
	reg->umin_value = max_t(reg->umin_value, v.value);
	reg->umax_value = min_t(reg->umax_value, tmax);

	/*
	 * Linux 6.18: when the u64 range and the tnum share a single value,
	 * that value is the register's - umin itself, the tnum's largest
	 * member, or the one member strictly between.
	 */
	next = tnum_step(v, reg->umin_value);
	umin_in_tnum = (reg->umin_value & ~v.mask) == v.value;
	if (umin_in_tnum && next > reg->umax_value)
		set_known(reg, reg->umin_value);
	else if (!umin_in_tnum && next == tmax)
		set_known(reg, tmax);
	else if (!umin_in_tnum && next <= reg->umax_value && tnum_step(v, next) > reg->umax_value)
		set_known(reg, next);
}

/* The kernel's __reg32_deduce_bounds() (6.18). */
static void reg32_deduce(struct xv_reg *reg)
{
	/* Fixed high half: the 64-bit range bounds the low half too. */
	if ((reg->umin_value >> 32) == (reg->umax_value >> 32)) {
		reg->u32_min_value = max_t(reg->u32_min_value, (uint32_t)reg->umin_value);
		reg->u32_max_value = min_t(reg->u32_max_value, (uint32_t)reg->umax_value);
		if ((int32_t)reg->umin_value <= (int32_t)reg->umax_value) {
			reg->s32_min_value = max_t(reg->s32_min_value, (int32_t)reg->umin_value);
			reg->s32_max_value = min_t(reg->s32_max_value, (int32_t)reg->umax_value);
		}
	}
	if ((reg->smin_value >> 32) == (reg->smax_value >> 32)) {
		if ((uint32_t)reg->smin_value <= (uint32_t)reg->smax_value) {
			reg->u32_min_value = max_t(reg->u32_min_value, (uint32_t)reg->smin_value);
			reg->u32_max_value = min_t(reg->u32_max_value, (uint32_t)reg->smax_value);
		}
		if ((int32_t)reg->smin_value <= (int32_t)reg->smax_value) {
			reg->s32_min_value = max_t(reg->s32_min_value, (int32_t)reg->smin_value);
			reg->s32_max_value = min_t(reg->s32_max_value, (int32_t)reg->smax_value);
		}
	}
	/* High halves two apart by one, low half crossing from negative to positive. */
	if ((uint32_t)(reg->umin_value >> 32) + 1 == (uint32_t)(reg->umax_value >> 32) &&
	    (int32_t)reg->umin_value < 0 && (int32_t)reg->umax_value >= 0) {
		reg->s32_min_value = max_t(reg->s32_min_value, (int32_t)reg->umin_value);
		reg->s32_max_value = min_t(reg->s32_max_value, (int32_t)reg->umax_value);
	}
	if ((uint32_t)((uint64_t)reg->smin_value >> 32) + 1 ==
		    (uint32_t)((uint64_t)reg->smax_value >> 32) &&
	    (int32_t)reg->smin_value < 0 && (int32_t)reg->smax_value >= 0) {
		reg->s32_min_value = max_t(reg->s32_min_value, (int32_t)reg->smin_value);
		reg->s32_max_value = min_t(reg->s32_max_value, (int32_t)reg->smax_value);
	}
	/* No sign boundary crossed: signed and unsigned agree. */
	if ((int32_t)reg->u32_min_value <= (int32_t)reg->u32_max_value) {
		reg->s32_min_value = max_t(reg->s32_min_value, (int32_t)reg->u32_min_value);
		reg->s32_max_value = min_t(reg->s32_max_value, (int32_t)reg->u32_max_value);
	}
	if ((uint32_t)reg->s32_min_value <= (uint32_t)reg->s32_max_value) {
		reg->u32_min_value = max_t(reg->u32_min_value, (uint32_t)reg->s32_min_value);
		reg->u32_max_value = min_t(reg->u32_max_value, (uint32_t)reg->s32_max_value);
	} else if (reg->u32_max_value < (uint32_t)reg->s32_min_value) {
		/* The signed range wraps and the unsigned one meets only its positive part. */
		reg->s32_min_value = (int32_t)reg->u32_min_value;
		reg->u32_max_value = min_t(reg->u32_max_value, (uint32_t)reg->s32_max_value);
	} else if ((uint32_t)reg->s32_max_value < reg->u32_min_value) {
		/* ... or only its negative part. */
		reg->s32_max_value = (int32_t)reg->u32_max_value;
		reg->u32_min_value = max_t(reg->u32_min_value, (uint32_t)reg->s32_min_value);
	}
}

/* The kernel's __reg64_deduce_bounds() (6.18). */
static void reg64_deduce(struct xv_reg *reg)
{
	if ((int64_t)reg->umin_value <= (int64_t)reg->umax_value) {
		reg->smin_value = max_t(reg->smin_value, (int64_t)reg->umin_value);
		reg->smax_value = min_t(reg->smax_value, (int64_t)reg->umax_value);
	}
	if ((uint64_t)reg->smin_value <= (uint64_t)reg->smax_value) {
		reg->umin_value = max_t(reg->umin_value, (uint64_t)reg->smin_value);
		reg->umax_value = min_t(reg->umax_value, (uint64_t)reg->smax_value);
	} else if (reg->umax_value < (uint64_t)reg->smin_value) {
		/* The signed range wraps and the unsigned one meets only its positive part. */
		reg->smin_value = (int64_t)reg->umin_value;
		reg->umax_value = min_t(reg->umax_value, (uint64_t)reg->smax_value);
	} else if ((uint64_t)reg->smax_value < reg->umin_value) {
		/* ... or only its negative part. */
		reg->smax_value = (int64_t)reg->umax_value;
		reg->umin_value = max_t(reg->umin_value, (uint64_t)reg->smin_value);
	}
}

/* The kernel's __reg_deduce_mixed_bounds(): 64-bit bounds tightened by the low half's. */
static void reg_deduce_mixed(struct xv_reg *reg)
{
	uint64_t new_umin, new_umax;
	int64_t new_smin, new_smax;

	new_umin = (reg->umin_value & ~(uint64_t)U32_MAX) | reg->u32_min_value;
	new_umax = (reg->umax_value & ~(uint64_t)U32_MAX) | reg->u32_max_value;
	reg->umin_value = max_t(reg->umin_value, new_umin);
	reg->umax_value = min_t(reg->umax_value, new_umax);
	new_smin = (int64_t)(((uint64_t)reg->smin_value & ~(uint64_t)U32_MAX) | reg->u32_min_value);
	new_smax = (int64_t)(((uint64_t)reg->smax_value & ~(uint64_t)U32_MAX) | reg->u32_max_value);
	reg->smin_value = max_t(reg->smin_value, new_smin);
	reg->smax_value = min_t(reg->smax_value, new_smax);
	/* After a sign-extending load: all-zero or all-one high half, positive low half. */
	if (reg->s32_min_value >= 0 && reg->smin_value >= S32_MIN && reg->smax_value <= S32_MAX) {
		reg->smin_value = reg->s32_min_value;
		reg->smax_value = reg->s32_max_value;
		reg->umin_value = (uint64_t)reg->s32_min_value;
		reg->umax_value = (uint64_t)reg->s32_max_value;
		reg->var_off = tnum_intersect(reg->var_off,
					      tnum_range((uint64_t)reg->smin_value, (uint64_t)reg->smax_value));
	}
}

static void reg_bound_offset(struct xv_reg *reg)
{
	struct tnum v64 = tnum_intersect(reg->var_off, tnum_range(reg->umin_value, reg->umax_value));
	struct tnum v32 = tnum_intersect(tnum_subreg(v64),
					 tnum_range(reg->u32_min_value, reg->u32_max_value));

	reg->var_off = tnum_or(tnum_clear_subreg(v64), v32);
}

static bool bounds_sane(const struct xv_reg *reg)
{
	return reg->umin_value <= reg->umax_value && reg->smin_value <= reg->smax_value &&
	       reg->u32_min_value <= reg->u32_max_value &&
	       reg->s32_min_value <= reg->s32_max_value &&
	       tnum_in(tnum_range(0, U64_MAX), reg->var_off) &&
	       (reg->var_off.value & reg->var_off.mask) == 0;
}

void xv_reg_bounds_sync(struct xv_reg *reg)
{
	update_reg32_bounds(reg);
	update_reg64_bounds(reg);
	for (int i = 0; i < 3; i++) {
		reg32_deduce(reg);
		reg64_deduce(reg);
		reg_deduce_mixed(reg);
	}
	reg_bound_offset(reg);
	update_reg32_bounds(reg);
	update_reg64_bounds(reg);
	if (!bounds_sane(reg) && reg->type == SCALAR_VALUE) {
		/* Contradictory knowledge: only on impossible paths; stay sound. */
		struct tnum keep = reg->var_off;

		mark_unbounded(reg);
		reg->var_off = (keep.value & keep.mask) ? tnum_unknown : keep;
		update_reg32_bounds(reg);
		update_reg64_bounds(reg);
	}
}

void xv_reg_bounds_from_var_off(struct xv_reg *reg)
{
	mark_unbounded(reg);
	xv_reg_bounds_sync(reg);
}

void xv_zext_32_to_64(struct xv_reg *reg)
{
	reg->var_off = tnum_subreg(reg->var_off);
	reg->umin_value = reg->u32_min_value;
	reg->umax_value = reg->u32_max_value;
	reg->smin_value = reg->umin_value;
	reg->smax_value = reg->umax_value;
	xv_reg_bounds_sync(reg);
}

void xv_coerce_reg_to_size(struct xv_reg *reg, int size)
{
	uint64_t mask = size >= 8 ? U64_MAX : (1ULL << (size * 8)) - 1;

	if (size >= 8)
		return;
	reg->var_off = tnum_cast(reg->var_off, size);
	if ((reg->umin_value & ~mask) == (reg->umax_value & ~mask)) {
		reg->umin_value &= mask;
		reg->umax_value &= mask;
	} else {
		reg->umin_value = 0;
		reg->umax_value = mask;
	}
	reg->smin_value = reg->umin_value;
	reg->smax_value = reg->umax_value;
	if (size >= 4) {
		reg->u32_min_value = reg->umin_value;
		reg->u32_max_value = reg->umax_value;
		reg->s32_min_value = S32_MIN;
		reg->s32_max_value = S32_MAX;
	} else {
		reg->u32_min_value = reg->umin_value;
		reg->u32_max_value = reg->umax_value;
		reg->s32_min_value = reg->u32_min_value;
		reg->s32_max_value = reg->u32_max_value;
	}
	xv_reg_bounds_sync(reg);
}

static int64_t sext(uint64_t v, int size)
{
	int shift = 64 - size * 8;

	return (int64_t)(v << shift) >> shift;
}

void xv_coerce_reg_to_size_sx(struct xv_reg *reg, int size)
{
	if (tnum_is_const(reg->var_off)) {
		xv_mark_known(reg, (uint64_t)sext(reg->var_off.value, size));
		return;
	}
	/* Sign extension of an unknown narrow value: its signed range. */
	reg->var_off = tnum_unknown;
	mark_unbounded(reg);
	reg->smin_value = -(1LL << (size * 8 - 1));
	reg->smax_value = (1LL << (size * 8 - 1)) - 1;
	xv_reg_bounds_sync(reg);
}

void xv_coerce_subreg_to_size_sx(struct xv_reg *reg, int size)
{
	if (tnum_is_const(reg->var_off)) {
		xv_mark_known(reg, (uint32_t)sext(reg->var_off.value, size));
		return;
	}
	reg->var_off = tnum_unknown;
	mark_unbounded(reg);
	reg->s32_min_value = -(1 << (size * 8 - 1));
	reg->s32_max_value = (1 << (size * 8 - 1)) - 1;
	xv_zext_32_to_64(reg);
}

/* ---- ALU --------------------------------------------------------------- */

/*
 * add, sub, mul: the kernel's scalar{,32}_min_max_{add,sub,mul}() (6.18).
 * Unsigned add/sub keep the wrapped bounds when both ends wrap (or none
 * does); signed bounds and mul give up on any overflow.
 */
static void scalar_add(struct xv_reg *d, const struct xv_reg *s)
{
	int64_t a, b;
	int32_t a32, b32;
	uint64_t ua, ub;
	uint32_t ua32, ub32;
	bool lo, hi;

	if (__builtin_add_overflow(d->smin_value, s->smin_value, &a) ||
	    __builtin_add_overflow(d->smax_value, s->smax_value, &b)) {
		d->smin_value = S64_MIN;
		d->smax_value = S64_MAX;
	} else {
		d->smin_value = a;
		d->smax_value = b;
	}
	lo = __builtin_add_overflow(d->umin_value, s->umin_value, &ua);
	hi = __builtin_add_overflow(d->umax_value, s->umax_value, &ub);
	d->umin_value = ua;
	d->umax_value = ub;
	if (!lo && hi) {
		d->umin_value = 0;
		d->umax_value = U64_MAX;
	}
	if (__builtin_add_overflow(d->s32_min_value, s->s32_min_value, &a32) ||
	    __builtin_add_overflow(d->s32_max_value, s->s32_max_value, &b32)) {
		d->s32_min_value = S32_MIN;
		d->s32_max_value = S32_MAX;
	} else {
		d->s32_min_value = a32;
		d->s32_max_value = b32;
	}
	lo = __builtin_add_overflow(d->u32_min_value, s->u32_min_value, &ua32);
	hi = __builtin_add_overflow(d->u32_max_value, s->u32_max_value, &ub32);
	d->u32_min_value = ua32;
	d->u32_max_value = ub32;
	if (!lo && hi) {
		d->u32_min_value = 0;
		d->u32_max_value = U32_MAX;
	}
	d->var_off = tnum_add(d->var_off, s->var_off);
}

static void scalar_sub(struct xv_reg *d, const struct xv_reg *s)
{
	int64_t a, b;
	int32_t a32, b32;
	uint64_t ua, ub;
	uint32_t ua32, ub32;
	bool lo, hi;

	if (__builtin_sub_overflow(d->smin_value, s->smax_value, &a) ||
	    __builtin_sub_overflow(d->smax_value, s->smin_value, &b)) {
		d->smin_value = S64_MIN;
		d->smax_value = S64_MAX;
	} else {
		d->smin_value = a;
		d->smax_value = b;
	}
	lo = __builtin_sub_overflow(d->umin_value, s->umax_value, &ua);
	hi = __builtin_sub_overflow(d->umax_value, s->umin_value, &ub);
	d->umin_value = ua;
	d->umax_value = ub;
	if (lo && !hi) {
		d->umin_value = 0;
		d->umax_value = U64_MAX;
	}
	if (__builtin_sub_overflow(d->s32_min_value, s->s32_max_value, &a32) ||
	    __builtin_sub_overflow(d->s32_max_value, s->s32_min_value, &b32)) {
		d->s32_min_value = S32_MIN;
		d->s32_max_value = S32_MAX;
	} else {
		d->s32_min_value = a32;
		d->s32_max_value = b32;
	}
	lo = __builtin_sub_overflow(d->u32_min_value, s->u32_max_value, &ua32);
	hi = __builtin_sub_overflow(d->u32_max_value, s->u32_min_value, &ub32);
	d->u32_min_value = ua32;
	d->u32_max_value = ub32;
	if (lo && !hi) {
		d->u32_min_value = 0;
		d->u32_max_value = U32_MAX;
	}
	d->var_off = tnum_sub(d->var_off, s->var_off);
}

static int64_t min4(const int64_t *v)
{
	int64_t m = v[0];

	for (int i = 1; i < 4; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static int64_t max4(const int64_t *v)
{
	int64_t m = v[0];

	for (int i = 1; i < 4; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

static void scalar_mul(struct xv_reg *d, const struct xv_reg *s)
{
	int64_t p[4];
	int32_t p32[4];
	uint64_t ua, ub;
	uint32_t ua32, ub32;

	d->var_off = tnum_mul(d->var_off, s->var_off);
	if (__builtin_mul_overflow(d->umax_value, s->umax_value, &ub) ||
	    __builtin_mul_overflow(d->umin_value, s->umin_value, &ua)) {
		d->umin_value = 0;
		d->umax_value = U64_MAX;
	} else {
		d->umin_value = ua;
		d->umax_value = ub;
	}
	if (__builtin_mul_overflow(d->smin_value, s->smin_value, &p[0]) ||
	    __builtin_mul_overflow(d->smin_value, s->smax_value, &p[1]) ||
	    __builtin_mul_overflow(d->smax_value, s->smin_value, &p[2]) ||
	    __builtin_mul_overflow(d->smax_value, s->smax_value, &p[3])) {
		d->smin_value = S64_MIN;
		d->smax_value = S64_MAX;
	} else {
		d->smin_value = min4(p);
		d->smax_value = max4(p);
	}
	if (__builtin_mul_overflow(d->u32_max_value, s->u32_max_value, &ub32) ||
	    __builtin_mul_overflow(d->u32_min_value, s->u32_min_value, &ua32)) {
		d->u32_min_value = 0;
		d->u32_max_value = U32_MAX;
	} else {
		d->u32_min_value = ua32;
		d->u32_max_value = ub32;
	}
	if (__builtin_mul_overflow(d->s32_min_value, s->s32_min_value, &p32[0]) ||
	    __builtin_mul_overflow(d->s32_min_value, s->s32_max_value, &p32[1]) ||
	    __builtin_mul_overflow(d->s32_max_value, s->s32_min_value, &p32[2]) ||
	    __builtin_mul_overflow(d->s32_max_value, s->s32_max_value, &p32[3])) {
		d->s32_min_value = S32_MIN;
		d->s32_max_value = S32_MAX;
	} else {
		int64_t w[4] = { p32[0], p32[1], p32[2], p32[3] };

		d->s32_min_value = (int32_t)min4(w);
		d->s32_max_value = (int32_t)max4(w);
	}
}

static void scalar_bitop(struct xv_reg *d, const struct xv_reg *s, uint8_t op)
{
	bool dpos = d->smin_value >= 0, spos = s->smin_value >= 0;
	bool dpos32 = d->s32_min_value >= 0, spos32 = s->s32_min_value >= 0;
	uint64_t umax_and = min_t(d->umax_value, s->umax_value);
	uint32_t u32max_and = min_t(d->u32_max_value, s->u32_max_value);
	uint64_t umin_or = max_t(d->umin_value, s->umin_value);
	uint32_t u32min_or = max_t(d->u32_min_value, s->u32_min_value);

	if (op == XBPF_AND)
		d->var_off = tnum_and(d->var_off, s->var_off);
	else if (op == XBPF_OR)
		d->var_off = tnum_or(d->var_off, s->var_off);
	else
		d->var_off = tnum_xor(d->var_off, s->var_off);
	mark_unbounded(d);
	d->umin_value = d->var_off.value;
	d->umax_value = d->var_off.value | d->var_off.mask;
	d->u32_min_value = (uint32_t)d->var_off.value;
	d->u32_max_value = (uint32_t)(d->var_off.value | d->var_off.mask);
	if (op == XBPF_AND) {
		d->umax_value = min_t(d->umax_value, umax_and);
		d->u32_max_value = min_t(d->u32_max_value, u32max_and);
	} else if (op == XBPF_OR) {
		d->umin_value = max_t(d->umin_value, umin_or);
		d->u32_min_value = max_t(d->u32_min_value, u32min_or);
	}
	/* Both non-negative (AND: either) keeps the result non-negative. */
	if (op == XBPF_AND ? (dpos || spos) : (dpos && spos)) {
		if (d->umax_value <= S64_MAX) {
			d->smin_value = d->umin_value;
			d->smax_value = d->umax_value;
		}
	}
	if (op == XBPF_AND ? (dpos32 || spos32) : (dpos32 && spos32)) {
		if (d->u32_max_value <= S32_MAX) {
			d->s32_min_value = d->u32_min_value;
			d->s32_max_value = d->u32_max_value;
		}
	}
}

static void scalar_shift(struct xv_reg *d, uint64_t k, uint8_t op, bool alu32)
{
	if (alu32) {
		struct tnum sub = tnum_subreg(d->var_off);

		if (op == XBPF_LSH)
			d->var_off = tnum_subreg(tnum_lshift(sub, k));
		else if (op == XBPF_RSH)
			d->var_off = tnum_rshift(sub, k);
		else
			d->var_off = tnum_subreg(tnum_arshift(sub, k, 32));
		if (op == XBPF_RSH) {
			d->u32_min_value >>= k;
			d->u32_max_value >>= k;
			mark_unbounded64(d);
			d->s32_min_value = S32_MIN;
			d->s32_max_value = S32_MAX;
		} else if (op == XBPF_ARSH) {
			d->s32_min_value >>= k;
			d->s32_max_value >>= k;
			d->u32_min_value = 0;
			d->u32_max_value = U32_MAX;
		} else if ((uint64_t)d->u32_max_value << k > U32_MAX) {
			mark_unbounded32(d);
		} else {
			d->u32_min_value <<= k;
			d->u32_max_value <<= k;
			d->s32_min_value = S32_MIN;
			d->s32_max_value = S32_MAX;
		}
		mark_unbounded64(d);
		return;
	}
	if (op == XBPF_LSH) {
		d->var_off = tnum_lshift(d->var_off, k);
		if (k && d->umax_value > (U64_MAX >> k)) {
			mark_unbounded64(d);
		} else {
			d->umin_value <<= k;
			d->umax_value <<= k;
			d->smin_value = S64_MIN;
			d->smax_value = S64_MAX;
		}
	} else if (op == XBPF_RSH) {
		d->var_off = tnum_rshift(d->var_off, k);
		d->umin_value >>= k;
		d->umax_value >>= k;
		d->smin_value = S64_MIN;
		d->smax_value = S64_MAX;
	} else {
		d->var_off = tnum_arshift(d->var_off, k, 64);
		d->smin_value >>= k;
		d->smax_value >>= k;
		d->umin_value = 0;
		d->umax_value = U64_MAX;
	}
	mark_unbounded32(d);
}

int xv_scalar_alu(struct xv_env *env, struct xv_reg *dst, const struct xv_reg *src, uint8_t op,
		  bool alu32)
{
	struct xv_reg s = *src;
	bool src_known = alu32 ? tnum_subreg_is_const(s.var_off) : tnum_is_const(s.var_off);
	uint64_t width = alu32 ? 32 : 64;

	if (alu32) {
		/* Only the low halves take part. */
		xv_zext_32_to_64(&s);
		xv_zext_32_to_64(dst);
	}
	switch (op) {
	case XBPF_ADD:
		scalar_add(dst, &s);
		break;
	case XBPF_SUB:
		scalar_sub(dst, &s);
		break;
	case XBPF_MUL:
		scalar_mul(dst, &s);
		break;
	case XBPF_AND:
	case XBPF_OR:
	case XBPF_XOR:
		scalar_bitop(dst, &s, op);
		break;
	case XBPF_LSH:
	case XBPF_RSH:
	case XBPF_ARSH:
		if (!src_known || s.var_off.value >= width) {
			/* Like the kernel: anything, all 64 bits (not even zero-extended). */
			xv_mark_unknown(dst);
			return 0;
		}
		scalar_shift(dst, s.var_off.value, op, alu32);
		break;
	case XBPF_NEG:
		dst->var_off = tnum_neg(dst->var_off);
		mark_unbounded(dst);
		break;
	default:
		/* div, mod: not tracked, and like the kernel not zero-extended either. */
		xv_mark_unknown(dst);
		return 0;
	}
	dst->type = SCALAR_VALUE;
	xv_reg_bounds_sync(dst);
	if (alu32)
		xv_zext_32_to_64(dst);
	return 0;
}

/* ---- branches ---------------------------------------------------------- */

struct range {
	uint64_t umin, umax;
	int64_t smin, smax;
	struct tnum t;
};

static struct range view(const struct xv_reg *r, bool is32)
{
	struct range v;

	if (is32) {
		v.umin = r->u32_min_value;
		v.umax = r->u32_max_value;
		v.smin = r->s32_min_value;
		v.smax = r->s32_max_value;
		v.t = tnum_subreg(r->var_off);
	} else {
		v.umin = r->umin_value;
		v.umax = r->umax_value;
		v.smin = r->smin_value;
		v.smax = r->smax_value;
		v.t = r->var_off;
	}
	return v;
}

static uint8_t flip_op(uint8_t op)
{
	switch (op) {
	case XBPF_JGT: return XBPF_JLT;
	case XBPF_JGE: return XBPF_JLE;
	case XBPF_JLT: return XBPF_JGT;
	case XBPF_JLE: return XBPF_JGE;
	case XBPF_JSGT: return XBPF_JSLT;
	case XBPF_JSGE: return XBPF_JSLE;
	case XBPF_JSLT: return XBPF_JSGT;
	case XBPF_JSLE: return XBPF_JSGE;
	default: return op;
	}
}

static uint8_t negate_op(uint8_t op)
{
	switch (op) {
	case XBPF_JEQ: return XBPF_JNE;
	case XBPF_JNE: return XBPF_JEQ;
	case XBPF_JGT: return XBPF_JLE;
	case XBPF_JGE: return XBPF_JLT;
	case XBPF_JLT: return XBPF_JGE;
	case XBPF_JLE: return XBPF_JGT;
	case XBPF_JSGT: return XBPF_JSLE;
	case XBPF_JSGE: return XBPF_JSLT;
	case XBPF_JSLT: return XBPF_JSGE;
	case XBPF_JSLE: return XBPF_JSGT;
	default: return op;
	}
}

int xv_is_branch_taken(const struct xv_reg *reg, const struct xv_reg *val, uint8_t op, bool is32)
{
	struct range a = view(reg, is32), b = view(val, is32);

	switch (op) {
	case XBPF_JEQ:
		if (tnum_is_const(a.t) && tnum_is_const(b.t))
			return a.t.value == b.t.value;
		if (a.umin > b.umax || a.umax < b.umin || a.smin > b.smax || a.smax < b.smin)
			return 0;
		if ((a.t.value ^ b.t.value) & ~(a.t.mask | b.t.mask))
			return 0;
		return -1;
	case XBPF_JNE: {
		int r = xv_is_branch_taken(reg, val, XBPF_JEQ, is32);

		return r < 0 ? r : !r;
	}
	case XBPF_JSET:
		/* value bits are known ones, value|mask the possible ones */
		if (a.t.value & b.t.value)
			return 1;
		if (!((a.t.value | a.t.mask) & (b.t.value | b.t.mask)))
			return 0;
		return -1;
	case XBPF_JGT:
		if (a.umin > b.umax)
			return 1;
		if (a.umax <= b.umin)
			return 0;
		return -1;
	case XBPF_JGE:
		if (a.umin >= b.umax)
			return 1;
		if (a.umax < b.umin)
			return 0;
		return -1;
	case XBPF_JLT:
		return xv_is_branch_taken(val, reg, XBPF_JGT, is32);
	case XBPF_JLE:
		return xv_is_branch_taken(val, reg, XBPF_JGE, is32);
	case XBPF_JSGT:
		if (a.smin > b.smax)
			return 1;
		if (a.smax <= b.smin)
			return 0;
		return -1;
	case XBPF_JSGE:
		if (a.smin >= b.smax)
			return 1;
		if (a.smax < b.smin)
			return 0;
		return -1;
	case XBPF_JSLT:
		return xv_is_branch_taken(val, reg, XBPF_JSGT, is32);
	case XBPF_JSLE:
		return xv_is_branch_taken(val, reg, XBPF_JSGE, is32);
	}
	return -1;
}

/* Refine a (dst) and b (src) assuming "a op b" holds. */
static void swap_regs(struct xv_reg **a, struct xv_reg **b)
{
	struct xv_reg *t = *a;

	*a = *b;
	*b = t;
}

static void refine(struct xv_reg *a, struct xv_reg *b, uint8_t op, bool is32)
{
	if (is32) {
		switch (op) {
		case XBPF_JEQ: {
			uint32_t lo = max_t(a->u32_min_value, b->u32_min_value);
			uint32_t hi = min_t(a->u32_max_value, b->u32_max_value);
			int32_t slo = max_t(a->s32_min_value, b->s32_min_value);
			int32_t shi = min_t(a->s32_max_value, b->s32_max_value);
			struct tnum t = tnum_intersect(tnum_subreg(a->var_off), tnum_subreg(b->var_off));

			a->u32_min_value = b->u32_min_value = lo;
			a->u32_max_value = b->u32_max_value = hi;
			a->s32_min_value = b->s32_min_value = slo;
			a->s32_max_value = b->s32_max_value = shi;
			a->var_off = tnum_with_subreg(a->var_off, t);
			b->var_off = tnum_with_subreg(b->var_off, t);
			break;
		}
		case XBPF_JNE:
			if (tnum_subreg_is_const(b->var_off)) {
				uint32_t v = (uint32_t)b->var_off.value;

				if (a->u32_min_value == v && a->u32_min_value < a->u32_max_value)
					a->u32_min_value++;
				else if (a->u32_max_value == v && a->u32_min_value < a->u32_max_value)
					a->u32_max_value--;
				if (a->s32_min_value == (int32_t)v && a->s32_min_value < a->s32_max_value)
					a->s32_min_value++;
				else if (a->s32_max_value == (int32_t)v && a->s32_min_value < a->s32_max_value)
					a->s32_max_value--;
			}
			break;
		case XBPF_JSET: {
			/* One known-set bit is all a taken JSET can teach. */
			uint32_t v;

			if (!tnum_subreg_is_const(b->var_off))
				swap_regs(&a, &b);
			if (!tnum_subreg_is_const(b->var_off))
				break;
			v = (uint32_t)b->var_off.value;
			if (v && !(v & (v - 1)))
				a->var_off = tnum_with_subreg(a->var_off,
							      tnum_or(tnum_subreg(a->var_off), tnum_const(v)));
			break;
		}
		case XBPF_JGT:
			if (b->u32_min_value < U32_MAX)
				a->u32_min_value = max_t(a->u32_min_value, b->u32_min_value + 1);
			if (a->u32_max_value > 0)
				b->u32_max_value = min_t(b->u32_max_value, a->u32_max_value - 1);
			break;
		case XBPF_JGE:
			a->u32_min_value = max_t(a->u32_min_value, b->u32_min_value);
			b->u32_max_value = min_t(b->u32_max_value, a->u32_max_value);
			break;
		case XBPF_JSGT:
			if (b->s32_min_value < S32_MAX)
				a->s32_min_value = max_t(a->s32_min_value, b->s32_min_value + 1);
			if (a->s32_max_value > S32_MIN)
				b->s32_max_value = min_t(b->s32_max_value, a->s32_max_value - 1);
			break;
		case XBPF_JSGE:
			a->s32_min_value = max_t(a->s32_min_value, b->s32_min_value);
			b->s32_max_value = min_t(b->s32_max_value, a->s32_max_value);
			break;
		default:
			refine(b, a, flip_op(op), is32);
			break;
		}
		return;
	}
	switch (op) {
	case XBPF_JEQ: {
		uint64_t lo = max_t(a->umin_value, b->umin_value);
		uint64_t hi = min_t(a->umax_value, b->umax_value);
		int64_t slo = max_t(a->smin_value, b->smin_value);
		int64_t shi = min_t(a->smax_value, b->smax_value);
		struct tnum t = tnum_intersect(a->var_off, b->var_off);

		a->umin_value = b->umin_value = lo;
		a->umax_value = b->umax_value = hi;
		a->smin_value = b->smin_value = slo;
		a->smax_value = b->smax_value = shi;
		a->var_off = b->var_off = t;
		break;
	}
	case XBPF_JNE:
		if (tnum_is_const(b->var_off)) {
			uint64_t v = b->var_off.value;

			if (a->umin_value == v && a->umin_value < a->umax_value)
				a->umin_value++;
			else if (a->umax_value == v && a->umin_value < a->umax_value)
				a->umax_value--;
			if (a->smin_value == (int64_t)v && a->smin_value < a->smax_value)
				a->smin_value++;
			else if (a->smax_value == (int64_t)v && a->smin_value < a->smax_value)
				a->smax_value--;
		}
		break;
	case XBPF_JSET:
		if (!tnum_is_const(b->var_off))
			swap_regs(&a, &b);
		if (tnum_is_const(b->var_off) && b->var_off.value &&
		    !(b->var_off.value & (b->var_off.value - 1)))
			a->var_off = tnum_or(a->var_off, b->var_off);
		break;
	case XBPF_JGT:
		if (b->umin_value < U64_MAX)
			a->umin_value = max_t(a->umin_value, b->umin_value + 1);
		if (a->umax_value > 0)
			b->umax_value = min_t(b->umax_value, a->umax_value - 1);
		break;
	case XBPF_JGE:
		a->umin_value = max_t(a->umin_value, b->umin_value);
		b->umax_value = min_t(b->umax_value, a->umax_value);
		break;
	case XBPF_JSGT:
		if (b->smin_value < S64_MAX)
			a->smin_value = max_t(a->smin_value, b->smin_value + 1);
		if (a->smax_value > S64_MIN)
			b->smax_value = min_t(b->smax_value, a->smax_value - 1);
		break;
	case XBPF_JSGE:
		a->smin_value = max_t(a->smin_value, b->smin_value);
		b->smax_value = min_t(b->smax_value, a->smax_value);
		break;
	default:
		refine(b, a, flip_op(op), is32);
		break;
	}
}

/* "not (a JSET b)": the bits of b are clear in a. */
static void refine_jset_false(struct xv_reg *a, struct xv_reg *b, bool is32)
{
	bool b_const = is32 ? tnum_subreg_is_const(b->var_off) : tnum_is_const(b->var_off);

	if (!b_const)
		swap_regs(&a, &b);
	b_const = is32 ? tnum_subreg_is_const(b->var_off) : tnum_is_const(b->var_off);
	if (!b_const)
		return;
	/*
	 * The kernel forgets the ranges first (they may contradict the tnum on
	 * a dead branch) and derives them again from the narrowed bits.
	 */
	a->smin_value = INT64_MIN, a->smax_value = INT64_MAX;
	a->umin_value = 0, a->umax_value = UINT64_MAX;
	a->s32_min_value = INT32_MIN, a->s32_max_value = INT32_MAX;
	a->u32_min_value = 0, a->u32_max_value = UINT32_MAX;
	if (is32)
		a->var_off = tnum_with_subreg(a->var_off,
					      tnum_and(tnum_subreg(a->var_off),
						       tnum_const(~(uint64_t)(uint32_t)b->var_off.value)));
	else
		a->var_off = tnum_and(a->var_off, tnum_const(~b->var_off.value));
}

void xv_reg_set_min_max(struct xv_reg *t_dst, struct xv_reg *t_src, struct xv_reg *f_dst,
			struct xv_reg *f_src, uint8_t op, bool is32)
{
	if (op == XBPF_JSET) {
		refine(t_dst, t_src, op, is32);
		refine_jset_false(f_dst, f_src, is32);
	} else {
		refine(t_dst, t_src, op, is32);
		refine(f_dst, f_src, negate_op(op), is32);
	}
	xv_reg_bounds_sync(t_dst);
	xv_reg_bounds_sync(t_src);
	xv_reg_bounds_sync(f_dst);
	xv_reg_bounds_sync(f_src);
}
