// SPDX-License-Identifier: MIT
/*
 * branch.c - conditional jumps: decide them when the bounds allow, else
 * fork the path and narrow both sides (scalar bounds, linked registers,
 * null checks by id, packet ranges against pkt_end).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

/* ---- branches ---------------------------------------------------------- */

struct null_mark {
	uint32_t id;
	bool is_null;
};

static void mark_null_one(struct xv_env *env, struct xv_reg *reg, void *priv)
{
	struct null_mark *m = priv;

	if (!xv_type_may_be_null(reg->type) || reg->id != m->id)
		return;
	if (m->is_null) {
		bool w = reg->written;

		xv_mark_known(reg, 0);
		reg->written = w;
	} else {
		reg->type = reg->type == CONST_PTR_TO_MAP_OR_NULL ? CONST_PTR_TO_MAP :
			    reg->type == PTR_TO_RINGBUF_MEM_OR_NULL ? PTR_TO_RINGBUF_MEM :
			    reg->type == PTR_TO_MEM_OR_NULL	    ? PTR_TO_MEM :
								      PTR_TO_MAP_VALUE;
		/* ref_obj_id stays: the record is released by it; a locked value's id names its lock */
		if (!(reg->type == PTR_TO_MAP_VALUE && reg->map && reg->map->has_spin_lock))
			reg->id = 0;
	}
}

static void mark_ptr_or_null_regs(struct xv_env *env, struct xv_state *st, uint32_t id,
				  uint32_t ref_obj_id, bool is_null)
{
	struct null_mark m = { id, is_null };

	/* NULL: nothing was acquired on this side (the kernel's release_reference_nomark()). */
	if (is_null && ref_obj_id && ref_obj_id == id)
		xv_release_ref_state(st, id);
	xv_for_each_reg(env, st, mark_null_one, &m);
}

struct pkt_mark {
	enum xv_reg_type type;
	uint32_t id;
	int range;
};

static void pkt_range_one(struct xv_env *env, struct xv_reg *reg, void *priv)
{
	struct pkt_mark *m = priv;

	if (reg->type == m->type && reg->id == m->id && reg->range < m->range)
		reg->range = m->range;
}

static void find_good_pkt_pointers(struct xv_env *env, struct xv_state *st, const struct xv_reg *dst,
				   bool right_open)
{
	struct pkt_mark m = { dst->type, dst->id, dst->off };

	if (dst->off < 0 || (dst->off == 0 && right_open))
		return;
	if (dst->umax_value > MAX_PACKET_OFF || dst->umax_value + dst->off > MAX_PACKET_OFF)
		return;
	if (right_open)
		m.range++;
	xv_for_each_reg(env, st, pkt_range_one, &m);
}

static bool init_pkt_ptr(const struct xv_reg *reg, enum xv_reg_type t)
{
	return reg->type == t && reg->off == 0 && tnum_equals_const(reg->var_off, 0);
}

/* this_st: fall-through state, other_st: jump-taken state. */
static bool try_match_pkt_pointers(struct xv_env *env, const struct xbpf_insn *insn,
				   struct xv_reg *dst, struct xv_reg *src, struct xv_state *this_st,
				   struct xv_state *other_st)
{
	uint8_t op = XBPF_OP(insn->code);
	bool fwd = (dst->type == PTR_TO_PACKET && src->type == PTR_TO_PACKET_END) ||
		   (dst->type == PTR_TO_PACKET_META && init_pkt_ptr(src, PTR_TO_PACKET));
	bool rev = (dst->type == PTR_TO_PACKET_END && src->type == PTR_TO_PACKET) ||
		   (init_pkt_ptr(dst, PTR_TO_PACKET) && src->type == PTR_TO_PACKET_META);

	if (XBPF_CLASS(insn->code) == XBPF_JMP32 || (!fwd && !rev))
		return false;
	switch (op) {
	case XBPF_JGT: /* pkt' > end: fall-through has pkt' <= end */
		if (fwd)
			find_good_pkt_pointers(env, this_st, dst, false);
		else
			find_good_pkt_pointers(env, other_st, src, true);
		break;
	case XBPF_JLT:
		if (fwd)
			find_good_pkt_pointers(env, other_st, dst, true);
		else
			find_good_pkt_pointers(env, this_st, src, false);
		break;
	case XBPF_JGE:
		if (fwd)
			find_good_pkt_pointers(env, this_st, dst, true);
		else
			find_good_pkt_pointers(env, other_st, src, false);
		break;
	case XBPF_JLE:
		if (fwd)
			find_good_pkt_pointers(env, other_st, dst, false);
		else
			find_good_pkt_pointers(env, this_st, src, true);
		break;
	default:
		return false;
	}
	return true;
}

struct linked {
	const struct xv_reg *src;
};

static void sync_linked_one(struct xv_env *env, struct xv_reg *reg, void *priv)
{
	struct linked *l = priv;

	const struct xv_reg *known = l->src;
	struct xv_reg tmp, delta;

	if (reg->type != SCALAR_VALUE || reg->id != known->id || reg == known)
		return;
	tmp = *known;
	if (reg->link_off != known->link_off || reg->link32 != known->link32) {
		/* reg = known + (reg's offset - known's offset), in the links' width. */
		xv_mark_known(&delta, (uint64_t)((int64_t)reg->link_off - known->link_off));
		xv_scalar_alu(env, &tmp, &delta, XBPF_ADD, false);
		if (reg->link32)
			xv_zext_32_to_64(&tmp);
		else if (known->link32 && reg->umax_value <= UINT32_MAX)
			xv_zext_32_to_64(&tmp);
		else if (known->link32)
			return; /* reg's high half is not implied by a 32-bit relation */
	}
	tmp.id = reg->id;
	tmp.link_off = reg->link_off;
	tmp.link32 = reg->link32;
	tmp.written = reg->written;
	*reg = tmp;
}

/* Registers copied from one another share an id: a bound proven on one holds for all. */
static void sync_linked_regs(struct xv_env *env, struct xv_state *st, const struct xv_reg *reg)
{
	struct linked l = { reg };

	if (reg->type == SCALAR_VALUE && reg->id)
		xv_for_each_reg(env, st, sync_linked_one, &l);
}

static struct xv_reg *state_reg(struct xv_state *st, int regno)
{
	return &st->frame[st->curframe]->regs[regno];
}

/*
 * Every scalar with this id, in every frame (collect_linked_regs()); past
 * XV_LINKED_MAX the rest lose the link, as the kernel does.
 */
static void collect_linked(struct xv_env *env, uint32_t id, uint16_t *linked, int *cnt)
{
	struct xv_state *st = env->cur;

	for (int i = 0; i <= st->curframe; i++) {
		struct xv_func_state *f = st->frame[i];

		for (int r = 0; r < XBPF_REG_FP; r++) {
			struct xv_reg *reg = &f->regs[r];

			if (reg->type != SCALAR_VALUE || reg->id != id)
				continue;
			if (*cnt < XV_LINKED_MAX)
				linked[(*cnt)++] = XV_LINK(i, 0, r);
			else
				reg->id = 0, reg->link_off = 0, reg->link32 = false;
		}
		for (int s = 0; s < f->nslots && s < 64; s++) {
			struct xv_reg *reg = &f->stack[s].spilled;

			if (f->stack[s].slot_type[XV_SLOT - 1] != STACK_SPILL ||
			    reg->type != SCALAR_VALUE || reg->id != id)
				continue;
			if (*cnt < XV_LINKED_MAX)
				linked[(*cnt)++] = XV_LINK(i, 1, s);
			else
				reg->id = 0, reg->link_off = 0, reg->link32 = false;
		}
	}
}

int xv_check_cond_jmp(struct xv_env *env, const struct xbpf_insn *insn, int *insn_idx)
{
	uint8_t op = XBPF_OP(insn->code);
	bool is32 = XBPF_CLASS(insn->code) == XBPF_JMP32;
	bool use_src = XBPF_SRC(insn->code) == XBPF_X;
	struct xv_reg *regs = cur_regs(env);
	struct xv_reg *dst = &regs[insn->dst_reg], *src, imm_reg;
	struct xv_state *other;
	int pred = -1, err, target = *insn_idx + insn->off + 1;

	err = xv_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if (use_src) {
		err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
		src = &regs[insn->src_reg];
	} else {
		xv_mark_known(&imm_reg, is32 ? (uint64_t)(uint32_t)insn->imm : (uint64_t)(int64_t)insn->imm);
		src = &imm_reg;
	}
	env->jmps_processed++;
	if (dst->type == SCALAR_VALUE && src->type == SCALAR_VALUE) {
		pred = xv_is_branch_taken(dst, src, op, is32);
	} else if (!is32 && xv_reg_is_const(src) && src->var_off.value == 0 &&
		   (dst->type == PTR_TO_MAP_VALUE || dst->type == PTR_TO_RINGBUF_MEM ||
		    dst->type == PTR_TO_MEM) &&
		   (op == XBPF_JEQ || op == XBPF_JNE)) {
		pred = op == XBPF_JNE;
	}
	if (pred >= 0) {
		/* The bounds decided the branch: the scalars compared must be precise. */
		if (dst->type == SCALAR_VALUE && (err = xv_mark_precise(env, insn->dst_reg)))
			return err;
		if (use_src && src->type == SCALAR_VALUE && (err = xv_mark_precise(env, insn->src_reg)))
			return err;
		*insn_idx = pred ? target : *insn_idx + 1;
		return 0;
	}
	/* Scalars linked to the ones compared get their bounds too: tell backtracking. */
	{
		uint16_t linked[XV_LINKED_MAX];
		int cnt = 0;

		if (use_src && src->type == SCALAR_VALUE && src->id)
			collect_linked(env, src->id, linked, &cnt);
		if (dst->type == SCALAR_VALUE && dst->id)
			collect_linked(env, dst->id, linked, &cnt);
		if (cnt > 1 && (err = xv_push_hist(env, 0, 0, 0, linked, cnt)))
			return err;
	}
	err = xv_push_stack(env, target, *insn_idx, &other);
	if (err)
		return err;
	(*insn_idx)++;
	if (dst->type == SCALAR_VALUE && src->type == SCALAR_VALUE) {
		struct xv_reg *o_dst = state_reg(other, insn->dst_reg);
		struct xv_reg o_imm = imm_reg;
		struct xv_reg *o_src = use_src ? state_reg(other, insn->src_reg) : &o_imm;

		xv_reg_set_min_max(o_dst, o_src, dst, src, op, is32);
		sync_linked_regs(env, other, o_dst);
		sync_linked_regs(env, env->cur, dst);
		if (use_src) {
			sync_linked_regs(env, other, o_src);
			sync_linked_regs(env, env->cur, src);
		}
	} else if (!is32 && (op == XBPF_JEQ || op == XBPF_JNE) && xv_reg_is_const(src) &&
		   src->var_off.value == 0 &&
		   xv_type_may_be_null(dst->type)) {
		uint32_t id = dst->id, ref = dst->ref_obj_id;

		/* JEQ: taken side is null.  JNE: fall-through side is null. */
		mark_ptr_or_null_regs(env, other, id, ref, op == XBPF_JEQ);
		mark_ptr_or_null_regs(env, env->cur, id, ref, op == XBPF_JNE);
	} else if (use_src) {
		try_match_pkt_pointers(env, insn, dst, src, env->cur, other);
	}
	return 0;
}
