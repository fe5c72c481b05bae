// SPDX-License-Identifier: MIT
/*
 * stack.c - the stack of each call frame, in 8-byte slots with a type per
 * byte (the kernel's slot_type[]): a register spilled whole keeps its full
 * state, plain data is STACK_MISC or STACK_ZERO, never-written bytes are
 * STACK_INVALID (readable as garbage by a privileged loader).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

/* ---- stack ------------------------------------------------------------- */

void xv_update_stack_depth(struct xv_env *env, const struct xv_func_state *f, int off)
{
	struct xv_subprog *sp = &env->subprog[f->subprogno];

	int depth = (-off + XV_SLOT - 1) & ~(XV_SLOT - 1);

	if (depth > sp->stack_depth)
		sp->stack_depth = depth;
}

int xv_grow_stack(struct xv_func_state *f, int off)
{
	return xv_frame_grow(f, off);
}

/* Byte at fp+off (off < 0) lives in slot (-off-1)/8, at index (off+512)%8. */
uint8_t *xv_slot_byte(struct xv_func_state *f, int off)
{
	int spi = (-off - 1) / XV_SLOT;

	return &f->stack[spi].slot_type[(off + XBPF_STACK_SIZE) % XV_SLOT];
}

int xv_stack_access_bounds(struct xv_env *env, int regno, int off, int size, bool write)
{
	if (off < -XBPF_STACK_SIZE || off + size > 0 || size <= 0) {
		xv_err(env, "invalid%s stack R%d off=%d size=%d\n", write ? " write to" : " read from",
		       regno, off, size);
		return -EACCES;
	}
	return 0;
}

int xv_stack_write(struct xv_env *env, struct xv_func_state *f, int regno, int off, int size,
		   const struct xv_reg *value, bool value_known_zero)
{
	int spi = (-off - 1) / XV_SLOT, err;
	struct xv_stack_slot *slot;

	err = xv_grow_stack(f, off);
	if (err)
		return err;
	xv_update_stack_depth(env, f, off);
	slot = &f->stack[spi];
	if (value && size == XV_SLOT && !(off % XV_SLOT) && value->type != NOT_INIT) {
		if (f != cur_frame(env) && value->type == PTR_TO_STACK) {
			xv_err(env, "cannot spill pointers to stack into stack frame of the caller\n");
			return -EACCES;
		}
		slot->spilled = *value;
		slot->spilled.written = false;
		memset(slot->slot_type, STACK_SPILL, XV_SLOT);
		return 0;
	}
	if (value && value->type != SCALAR_VALUE && value->type != NOT_INIT) {
		/* A pointer stored with fewer than 8 bytes: only its bits survive. */
		value_known_zero = false;
	}
	/* A partial overwrite of a spill turns the rest of that slot into plain data. */
	if (slot->slot_type[XV_SLOT - 1] == STACK_SPILL || slot->slot_type[0] == STACK_SPILL) {
		for (int b = 0; b < XV_SLOT; b++)
			slot->slot_type[b] = STACK_MISC;
		mark_not_init(&slot->spilled);
	}
	for (int i = 0; i < size; i++) {
		uint8_t *t = xv_slot_byte(f, off + i);

		*t = value_known_zero ? STACK_ZERO : STACK_MISC;
	}
	return 0;
}

int xv_stack_read(struct xv_env *env, struct xv_func_state *f, int off, int size,
		  struct xv_reg *dst)
{
	int spi = (-off - 1) / XV_SLOT;
	struct xv_stack_slot *slot;
	bool all_zero = true;

	xv_update_stack_depth(env, f, off);
	if (spi >= f->nslots) {
		/* Never written: a privileged loader may read it as garbage. */
		if (dst) {
			xv_mark_unknown(dst);
			xv_coerce_reg_to_size(dst, size);
		}
		return 0;
	}
	slot = &f->stack[spi];
	if (slot->slot_type[XV_SLOT - 1] == STACK_SPILL) {
		if (size != XV_SLOT || off % XV_SLOT) {
			if (slot->spilled.type != SCALAR_VALUE) {
				xv_err(env, "invalid size of register fill\n");
				return -EACCES;
			}
			if (dst) {
				xv_mark_unknown(dst);
				xv_coerce_reg_to_size(dst, size);
			}
			return 0;
		}
		if (dst)
			*dst = slot->spilled;
		return 0;
	}
	for (int i = 0; i < size; i++) {
		int o = off + i;
		uint8_t t = *xv_slot_byte(f, o);

		if (-o - 1 >= f->nslots * XV_SLOT)
			t = STACK_INVALID;
		if (t != STACK_ZERO)
			all_zero = false;
		if (t == STACK_SPILL) {
			struct xv_stack_slot *s2 = &f->stack[(-o - 1) / XV_SLOT];

			if (s2->spilled.type != SCALAR_VALUE) {
				xv_err(env, "invalid size of register fill\n");
				return -EACCES;
			}
		}
	}
	if (dst) {
		if (all_zero) {
			xv_mark_known(dst, 0);
		} else {
			xv_mark_unknown(dst);
			xv_coerce_reg_to_size(dst, size);
		}
	}
	return 0;
}
int xv_check_stack_ptr_off(struct xv_env *env, int regno, const struct xv_reg *reg, int off,
			   int size, bool write, int *ret_off, int *ret_max)
{
	struct tnum at = tnum_add(reg->var_off, tnum_const((uint64_t)(int64_t)(off + reg->off)));
	char tn[48];

	if (!tnum_is_aligned(at, size)) {
		if (tnum_is_const(reg->var_off))
			snprintf(tn, sizeof(tn), "%lld", (long long)reg->var_off.value);
		else
			tnum_strn(tn, sizeof(tn), reg->var_off);
		xv_err(env, "misaligned stack access off %s+%d+%d size %d\n", tn, reg->off, off, size);
		return -EACCES;
	}
	if (!tnum_is_const(reg->var_off)) {
		int64_t lo = reg->smin_value + off + reg->off, hi = reg->smax_value + off + reg->off;

		if (reg->smin_value <= -XBPF_STACK_SIZE || reg->smax_value >= XBPF_STACK_SIZE ||
		    lo < -XBPF_STACK_SIZE || hi + size > 0) {
			tnum_strn(tn, sizeof(tn), reg->var_off);
			xv_err(env, "invalid variable-offset%s stack R%d var_off=%s off=%d size=%d\n",
			       write ? " write to" : " read from", regno, tn, off + reg->off, size);
			return -EACCES;
		}
		*ret_off = (int)lo;
		*ret_max = (int)hi;
		return 1;
	}
	off += reg->off + (int64_t)reg->var_off.value;
	*ret_off = off;
	return xv_stack_access_bounds(env, regno, off, size, write);
}

/* A write somewhere in [lo, hi + size): every byte it may touch becomes data. */
int xv_stack_write_var(struct xv_env *env, struct xv_func_state *f, int lo, int hi, int size)
{
	int err = xv_grow_stack(f, lo);

	if (err)
		return err;
	xv_update_stack_depth(env, f, lo);
	for (int o = lo; o < hi + size; o++) {
		struct xv_stack_slot *slot = &f->stack[(-o - 1) / XV_SLOT];

		if (slot->slot_type[XV_SLOT - 1] == STACK_SPILL) {
			for (int b = 0; b < XV_SLOT; b++)
				slot->slot_type[b] = STACK_MISC;
			mark_not_init(&slot->spilled);
		}
		*xv_slot_byte(f, o) = STACK_MISC;
	}
	return 0;
}
