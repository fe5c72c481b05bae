// SPDX-License-Identifier: MIT
/*
 * stack.c - the stack of each call frame, as the kernel models it.
 *
 * The frame is a row of 8-byte slots with a type per byte (slot_type[],
 * indexed as the kernel does: byte fp+off is slot_type[(-off-1) % 8] of
 * slot (-off-1) / 8, so index 7 is the slot's lowest address):
 *
 *   STACK_SPILL    part of a spilled register, whose full state is kept in
 *                  the slot (a scalar may be spilled with 1, 2, 4 or 8 bytes
 *                  at the slot's start, a pointer only whole)
 *   STACK_MISC     some data
 *   STACK_ZERO     known zero
 *   STACK_INVALID  never written; a privileged loader may read it as data
 *
 * A slot "holds a spill" when its lowest byte is STACK_SPILL.  Fills give
 * the register back (whole, or narrowed when the read is no larger than
 * the spill and starts at the slot), else data of the bytes' kinds; a
 * pointer can only come back whole.  Writes that touch a spill without
 * replacing it turn the spill's bytes into STACK_MISC.  These rules are
 * the kernel's check_stack_{read,write}_{fixed,var}_off() for a privileged
 * loader (allow_ptr_leaks, allow_uninit_stack, bpf_capable).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"


static uint8_t *stype(struct xv_func_state *f, int off)
{
	int slot = -off - 1;

	return &f->stack[slot / XV_SLOT].slot_type[slot % XV_SLOT];
}

static bool is_spilled_reg(const struct xv_stack_slot *s)
{
	return s->slot_type[XV_SLOT - 1] == STACK_SPILL;
}

static bool is_spilled_scalar(const struct xv_stack_slot *s)
{
	return is_spilled_reg(s) && s->spilled.type == SCALAR_VALUE;
}

/* The kernel's is_spillable_regtype(): every pointer type we have. */
static bool is_spillable(enum xv_reg_type t)
{
	return t != SCALAR_VALUE && t != NOT_INIT;
}

static void scrub_spilled(struct xv_stack_slot *s)
{
	for (int i = 0; i < XV_SLOT; i++)
		if (s->slot_type[i] != STACK_INVALID)
			s->slot_type[i] = STACK_MISC;
}

/* STACK_MISC, except that STACK_ZERO and STACK_INVALID stay (mark_stack_slot_misc). */
static void mark_misc(uint8_t *t)
{
	if (*t != STACK_ZERO && *t != STACK_INVALID)
		*t = STACK_MISC;
}

static void save_register_state(struct xv_stack_slot *s, const struct xv_reg *reg, int size)
{
	int i;

	s->spilled = *reg;
	s->spilled.written = false;
	for (i = XV_SLOT; i > XV_SLOT - size; i--)
		s->slot_type[i - 1] = STACK_SPILL;
	for (; i; i--)
		mark_misc(&s->slot_type[i - 1]);
}

/* Bit width of the value (fls64 of umax). */
static int reg_width(const struct xv_reg *reg)
{
	return reg->umax_value ? 64 - __builtin_clzll(reg->umax_value) : 0;
}

static bool is_const_zero(const struct xv_reg *reg)
{
	return reg->type == SCALAR_VALUE && tnum_equals_const(reg->var_off, 0);
}

static struct xv_func_state *ptr_frame(struct xv_env *env, const struct xv_reg *reg)
{
	return env->cur->frame[reg->frameno];
}

int xv_stack_bounds(struct xv_env *env, int regno, int off, int size, bool write)
{
	struct xv_reg *reg = &cur_regs(env)[regno];
	struct xv_func_state *f = ptr_frame(env, reg);
	const char *extra = write ? " write to" : " read from";
	int64_t min_off, max_off;
	struct xv_subprog *sp;
	char tn[48];
	int err;

	if (tnum_is_const(reg->var_off)) {
		min_off = (int64_t)reg->var_off.value + off;
		max_off = min_off + size;
	} else {
		if (reg->smax_value >= MAX_VAR_OFF || reg->smin_value <= -MAX_VAR_OFF) {
			xv_err(env, "invalid unbounded variable-offset%s stack R%d\n", extra, regno);
			return -EACCES;
		}
		min_off = reg->smin_value + off;
		max_off = reg->smax_value + off + size;
	}
	if (min_off < -XBPF_STACK_SIZE || min_off > -1 || max_off > 0 || size < 0) {
		if (tnum_is_const(reg->var_off)) {
			xv_err(env, "invalid%s stack R%d off=%d size=%d\n", extra, regno, off, size);
		} else {
			tnum_strn(tn, sizeof(tn), reg->var_off);
			xv_err(env, "invalid variable-offset%s stack R%d var_off=%s off=%d size=%d\n",
			       extra, regno, tn, off, size);
		}
		return min_off > -1 || max_off > 0 ? -EINVAL : -EACCES;
	}
	err = xv_frame_grow(f, (int)min_off);
	if (err)
		return err;
	sp = &env->subprog[f->subprogno];
	/* Depth in whole slots, as the kernel's grow_stack_state() counts it. */
	if (sp->stack_depth < ((-min_off + XV_SLOT - 1) & ~(XV_SLOT - 1)))
		sp->stack_depth = (int)((-min_off + XV_SLOT - 1) & ~(XV_SLOT - 1));
	return 0;
}

/* ---- writes ------------------------------------------------------------- */

/* A spill or fill: the path's history records the slot, for precision backtracking. */
static int spilled(struct xv_env *env, const struct xv_func_state *f, int spi)
{
	return xv_push_hist(env, XV_HIST_STACK, (uint8_t)f->frameno, (uint8_t)spi, NULL, 0);
}

static uint64_t slot_bits(int min_off, int max_off)
{
	uint64_t bits = 0;

	for (int i = min_off; i < max_off; i++)
		bits |= 1ull << ((-i - 1) / XV_SLOT);
	return bits;
}

static int write_fixed_off(struct xv_env *env, struct xv_func_state *f, int off, int size,
			   int value_regno)
{
	const struct xbpf_insn *insn = &env->insns[env->insn_idx];
	struct xv_reg *reg = value_regno >= 0 ? &cur_regs(env)[value_regno] : NULL;
	int slot = -off - 1, spi = slot / XV_SLOT;
	struct xv_stack_slot *s = &f->stack[spi];
	bool st_imm = XBPF_CLASS(insn->code) == XBPF_ST;
	uint8_t type = STACK_MISC;
	int err;

	if (!(off % XV_SLOT) && size == XV_SLOT)
		xv_stack_mark_write(env, f->frameno, spi);
	if (reg && !(off % XV_SLOT) && reg->type == SCALAR_VALUE) {
		/* A value wider than the spill keeps no link to its register. */
		bool fits = reg_width(reg) <= 8 * size;

		if (fits && !reg->id && !tnum_is_const(reg->var_off))
			reg->id = ++env->id_gen, reg->link_off = 0, reg->link32 = false;
		save_register_state(s, reg, size);
		if (!fits)
			s->spilled.id = 0, s->spilled.link_off = 0, s->spilled.link32 = false;
		return spilled(env, f, spi);
	}
	if (!reg && !(off % XV_SLOT) && st_imm) {
		struct xv_reg imm;

		xv_mark_known(&imm, (uint64_t)(int64_t)insn->imm);
		save_register_state(s, &imm, size);
		return spilled(env, f, spi);
	}
	if (reg && is_spillable(reg->type)) {
		if (size != XV_SLOT) {
			xv_err(env, "invalid size of register spill\n");
			return -EACCES;
		}
		if (f != cur_frame(env) && reg->type == PTR_TO_STACK) {
			xv_err(env, "cannot spill pointers to stack into stack frame of the caller\n");
			return -EINVAL;
		}
		save_register_state(s, reg, size);
		return spilled(env, f, spi);
	}
	/* Plain data: whatever spill the slot held is gone. */
	mark_not_init(&s->spilled);
	if (is_spilled_reg(s))
		scrub_spilled(s);
	if ((reg && is_const_zero(reg)) || (!reg && st_imm && insn->imm == 0)) {
		/* STACK_ZERO stands for the register's exact value. */
		if (reg) {
			err = xv_mark_precise(env, value_regno);
			if (err)
				return err;
		}
		type = STACK_ZERO;
	}
	for (int i = 0; i < size; i++)
		f->stack[spi].slot_type[(slot - i) % XV_SLOT] = type;
	return 0;
}

static int write_var_off(struct xv_env *env, struct xv_func_state *f, int ptr_regno, int off, int size,
			 int value_regno)
{
	const struct xbpf_insn *insn = &env->insns[env->insn_idx];
	struct xv_reg *ptr = &cur_regs(env)[ptr_regno];
	struct xv_reg *value = value_regno >= 0 ? &cur_regs(env)[value_regno] : NULL;
	int min_off = (int)(ptr->smin_value + off), max_off = (int)(ptr->smax_value + off + size);
	bool writing_zero = (value && is_const_zero(value)) ||
			    (!value && XBPF_CLASS(insn->code) == XBPF_ST && insn->imm == 0);

	bool zero_used = false;

	for (int i = min_off; i < max_off; i++) {
		int slot = -i - 1, spi = slot / XV_SLOT;
		struct xv_stack_slot *s = &f->stack[spi];
		uint8_t *t = &s->slot_type[slot % XV_SLOT], new_type = STACK_MISC;

		/* A zero written over a spilled zero keeps the spill. */
		if (writing_zero && *t == STACK_SPILL && is_spilled_scalar(s) &&
		    tnum_equals_const(s->spilled.var_off, 0)) {
			zero_used = true;
			continue;
		}
		mark_not_init(&s->spilled);
		if (writing_zero && *t == STACK_ZERO) {
			new_type = STACK_ZERO;
			zero_used = true;
		}
		*t = new_type;
	}
	return zero_used && value_regno >= 0 ? xv_mark_precise(env, value_regno) : 0;
}

int xv_stack_write(struct xv_env *env, int ptr_regno, int off, int size, int value_regno)
{
	struct xv_reg *ptr = &cur_regs(env)[ptr_regno];
	struct xv_func_state *f = ptr_frame(env, ptr);

	if (tnum_is_const(ptr->var_off))
		return write_fixed_off(env, f, off + (int)ptr->var_off.value, size, value_regno);
	return write_var_off(env, f, ptr_regno, off, size, value_regno);
}

/* ---- reads -------------------------------------------------------------- */

/* Zeros if every byte of [min_off, max_off) is STACK_ZERO, else unknown data. */
static void mark_reg_stack_read(struct xv_env *env, struct xv_func_state *f, int min_off, int max_off,
				int dst_regno)
{
	struct xv_reg *dst = &cur_regs(env)[dst_regno];
	int i;

	for (i = min_off; i < max_off; i++)
		if (*stype(f, i) != STACK_ZERO)
			break;
	if (i == max_off)
		xv_mark_known(dst, 0);
	else
		xv_mark_unknown(dst);
	dst->written = true;
}

static int read_fixed_off(struct xv_env *env, struct xv_func_state *f, int off, int size, int dst_regno)
{
	int slot = -off - 1, spi = slot / XV_SLOT;
	struct xv_stack_slot *s = &f->stack[spi];
	struct xv_reg *regs = cur_regs(env);
	const uint8_t *types = s->slot_type;
	int err = xv_stack_mark_read(env, f->frameno, 1ull << spi);

	if (err)
		return err;
	if (!is_spilled_reg(s)) {
		for (int i = 0; i < size; i++) {
			uint8_t t = types[(slot - i) % XV_SLOT];

			if (t != STACK_MISC && t != STACK_ZERO && t != STACK_INVALID) {
				xv_err(env, "invalid read from stack off %d+%d size %d\n", off, i, size);
				return -EACCES;
			}
		}
		if (dst_regno >= 0)
			mark_reg_stack_read(env, f, off, off + size, dst_regno);
		return 0;
	}
	{
		const struct xv_reg *sp_reg = &s->spilled;
		int spill_size = 1;
		bool fill = true;

		for (int i = XV_SLOT - 1; i > 0 && types[i - 1] == STACK_SPILL; i--)
			spill_size++;
		if (size == XV_SLOT && spill_size == XV_SLOT) {
			if (dst_regno >= 0) {
				regs[dst_regno] = *sp_reg;
				regs[dst_regno].written = true;
			}
			return spilled(env, f, spi);
		}
		if (sp_reg->type != SCALAR_VALUE) {
			xv_err(env, "invalid size of register fill\n");
			return -EACCES;
		}
		if (dst_regno < 0)
			return 0;
		if (size <= spill_size && !(off % XV_SLOT)) {
			/* A narrow fill of a value as narrow stays linked to it. */
			struct xv_reg *sp = &s->spilled;

			if (size == 4 && spill_size == 4 && reg_width(sp) <= 32 && !sp->id &&
			    !tnum_is_const(sp->var_off))
				sp->id = ++env->id_gen, sp->link_off = 0, sp->link32 = false;
			regs[dst_regno] = *sp;
			if (reg_width(sp) > size * 8)
				regs[dst_regno].id = 0, regs[dst_regno].link_off = 0,
				regs[dst_regno].link32 = false;
		} else {
			int spill_cnt = 0, zero_cnt = 0;

			for (int i = 0; i < size; i++) {
				uint8_t t = types[(slot - i) % XV_SLOT];

				if (t == STACK_SPILL)
					spill_cnt++;
				else if (t == STACK_ZERO)
					zero_cnt++;
				else if (t != STACK_MISC && t != STACK_INVALID) {
					xv_err(env, "invalid read from stack off %d+%d size %d\n", off, i,
					       size);
					return -EACCES;
				}
			}
			/* A zero fill from the spill is still a fill; the rest is plain data. */
			fill = spill_cnt == size && tnum_equals_const(sp_reg->var_off, 0);
			if (fill || zero_cnt == size)
				xv_mark_known(&regs[dst_regno], 0);
			else
				xv_mark_unknown(&regs[dst_regno]);
		}
		regs[dst_regno].written = true;
		return fill ? spilled(env, f, spi) : 0;
	}
}

/*
 * Every byte of [min_off, max_off + size) must be readable: data, zeros,
 * never written, or part of a spill.  clobber: a helper writes there, so
 * it all becomes data (check_stack_range_initialized()).
 */
static int range_initialized(struct xv_env *env, int regno, struct xv_func_state *f, int min_off,
			     int max_off, int size, bool clobber)
{
	const struct xv_reg *reg = &cur_regs(env)[regno];

	for (int i = min_off; i < max_off + size; i++) {
		int slot = -i - 1;
		struct xv_stack_slot *s = &f->stack[slot / XV_SLOT];
		uint8_t *t = &s->slot_type[slot % XV_SLOT];
		char tn[48];

		if (*t == STACK_MISC)
			continue;
		if (*t == STACK_ZERO || *t == STACK_INVALID) {
			if (clobber)
				*t = STACK_MISC;
			continue;
		}
		if (is_spilled_reg(s)) {
			if (clobber) {
				xv_mark_unknown(&s->spilled);
				scrub_spilled(s);
			}
			continue;
		}
		if (tnum_is_const(reg->var_off)) {
			xv_err(env, "invalid read from stack R%d off %d+%d size %d\n", regno, min_off,
			       i - min_off, size);
		} else {
			tnum_strn(tn, sizeof(tn), reg->var_off);
			xv_err(env, "invalid read from stack R%d var_off %s+%d size %d\n", regno, tn,
			       i - min_off, size);
		}
		return -EACCES;
	}
	return 0;
}

int xv_stack_read(struct xv_env *env, int ptr_regno, int off, int size, int dst_regno)
{
	struct xv_reg *ptr = &cur_regs(env)[ptr_regno];
	struct xv_func_state *f = ptr_frame(env, ptr);
	int min_off, max_off, err;

	if (tnum_is_const(ptr->var_off))
		return read_fixed_off(env, f, off + (int)ptr->var_off.value, size, dst_regno);
	min_off = (int)(ptr->smin_value + off);
	max_off = (int)(ptr->smax_value + off);
	err = xv_stack_mark_read(env, f->frameno, slot_bits(min_off, max_off + size));
	err = err ?: range_initialized(env, ptr_regno, f, min_off, max_off, size, false);
	if (err)
		return err;
	if (dst_regno >= 0)
		mark_reg_stack_read(env, f, min_off, max_off + size, dst_regno);
	return 0;
}

int xv_check_stack_range(struct xv_env *env, int regno, int off, int size, bool zero_ok, bool write,
			 bool raw_mode)
{
	struct xv_reg *reg = &cur_regs(env)[regno];
	struct xv_func_state *f = ptr_frame(env, reg);
	int min_off, max_off, err;

	if (size == 0 && !zero_ok) {
		xv_err(env, "invalid zero-sized read\n");
		return -EACCES;
	}
	err = xv_stack_bounds(env, regno, off, size, write);
	if (err)
		return err;
	if (tnum_is_const(reg->var_off)) {
		min_off = max_off = (int)reg->var_off.value + off;
	} else {
		/* Uninitialized memory cannot be handed out at a variable offset. */
		raw_mode = false;
		min_off = (int)(reg->smin_value + off);
		max_off = (int)(reg->smax_value + off);
	}
	if (raw_mode)
		return 0;
	err = xv_stack_mark_read(env, f->frameno, slot_bits(min_off, max_off + size));
	return err ?: range_initialized(env, regno, f, min_off, max_off, size, write);
}

/*
 * The key an array lookup is made with, when the stack holds it as a
 * constant (get_constant_map_key()): zero bytes, or a scalar spilled with
 * exactly the key's size.  0 and *value, or -EOPNOTSUPP.
 */
int xv_stack_const_key(struct xv_env *env, int regno, int key_size, int64_t *value)
{
	const struct xv_reg *key = &cur_regs(env)[regno];
	struct xv_func_state *f;
	const struct xv_stack_slot *s;
	int slot, off, zero_size = 0, spill_size = 0;

	if (key->type != PTR_TO_STACK || !tnum_is_const(key->var_off))
		return -EOPNOTSUPP;
	f = ptr_frame(env, key);
	slot = -(key->off + (int)key->var_off.value) - 1;
	s = &f->stack[slot / XV_SLOT];
	off = slot % XV_SLOT;
	for (int i = off; i >= 0 && s->slot_type[i] == STACK_ZERO; i--)
		zero_size++;
	if (zero_size >= key_size) {
		*value = 0;
		return 0;
	}
	if (!is_spilled_scalar(s))
		return -EOPNOTSUPP;
	for (int i = off; i >= 0 && s->slot_type[i] == STACK_SPILL; i--)
		spill_size++;
	if (spill_size != key_size || !tnum_is_const(s->spilled.var_off))
		return -EOPNOTSUPP;
	*value = (int64_t)s->spilled.var_off.value;
	/* The verdict relies on the constant: it must be precise. */
	return xv_mark_precise_slot(env, (int)key->frameno, slot / XV_SLOT) ?: 0;
}
