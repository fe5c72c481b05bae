// SPDX-License-Identifier: MIT
/*
 * precision.c - which scalars a path's safety depended on (the kernel's
 * precision tracking, __mark_chain_precision() and backtrack_insn()).
 *
 * Scalars start imprecise, and a checkpoint compares only its precise
 * scalars when pruning: a value nothing depended on may differ freely.  A
 * scalar becomes precise when a decision used its exact value (a helper's
 * size argument, pointer arithmetic, a branch the bounds decided, a constant
 * map key...).  Then the path is walked backwards, instruction by
 * instruction, through the history each state keeps of its segment since
 * the previous checkpoint: the set of registers and stack slots the value
 * came from is carried back (r1 = r2 moves the need to r2, r1 += r2 adds
 * r2, r1 = 5 ends it, a fill moves it to the stack slot, a spill back to
 * the register), and at each checkpoint on the way the registers and slots
 * still in the set are marked precise.  When the walk cannot follow (a
 * value through memory other than the stack), every scalar of every
 * checkpoint of the path is marked precise, as the kernel falls back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

#define ARGS_MASK 0x3eu /* r1-r5 */

/* The backtracking set: registers and stack slots, per frame. */
struct bt {
	int frame;
	uint16_t regs[XBPF_MAX_CALL_FRAMES];
	uint64_t stack[XBPF_MAX_CALL_FRAMES];
};

static bool bt_empty(const struct bt *bt)
{
	for (int i = 0; i <= bt->frame; i++)
		if (bt->regs[i] || bt->stack[i])
			return false;
	return true;
}

static bool reg_set(const struct bt *bt, int r)
{
	return bt->regs[bt->frame] & (1u << r);
}

static void set_reg(struct bt *bt, int r)
{
	bt->regs[bt->frame] |= 1u << r;
}

static void clear_reg(struct bt *bt, int r)
{
	bt->regs[bt->frame] &= ~(1u << r);
}

/* Linked registers of a conditional jump: if one is needed, all are. */
static void sync_linked(struct bt *bt, const struct xv_hist *h)
{
	bool any = false;

	if (!h || h->linked_cnt < 2)
		return;
	for (int i = 0; i < h->linked_cnt && !any; i++) {
		int fr = h->linked[i] >> 8, n = h->linked[i] & 0x7f;

		any = (h->linked[i] & 0x80) ? bt->stack[fr] & (1ull << n) : bt->regs[fr] & (1u << n);
	}
	if (!any)
		return;
	for (int i = 0; i < h->linked_cnt; i++) {
		int fr = h->linked[i] >> 8, n = h->linked[i] & 0x7f;

		if (h->linked[i] & 0x80)
			bt->stack[fr] |= 1ull << n;
		else
			bt->regs[fr] |= 1u << n;
	}
}

static const struct xv_hist *hist_entry(const struct xv_state *st, uint32_t cnt, int idx)
{
	return cnt && st->hist[cnt - 1].idx == idx ? &st->hist[cnt - 1] : NULL;
}

/* The insn executed before idx in st's segment; -ENOENT at its start. */
static int prev_insn(const struct xv_env *env, const struct xv_state *st, int idx, uint32_t *cnt)
{
	if (idx == st->first_insn_idx) {
		if (*cnt == 0 || (*cnt == 1 && st->hist[0].idx == idx))
			return -ENOENT;
	}
	if (*cnt && st->hist[*cnt - 1].idx == idx) {
		(*cnt)--;
		return st->hist[*cnt].prev_idx;
	}
	idx--;
	if (idx > 0 && env->aux[idx].is_ldimm64_hi)
		idx--;
	return idx;
}

/*
 * Carry the set back over insn idx; subseq is the insn executed after it.
 * 0, or -ENOTSUP when the set cannot be followed (fall back to all precise).
 */
static int backtrack_insn(struct xv_env *env, int idx, int subseq, const struct xv_hist *h,
			  struct bt *bt)
{
	const struct xbpf_insn *insn = &env->insns[idx];
	uint8_t cls = XBPF_CLASS(insn->code), op = XBPF_OP(insn->code);
	int d = insn->dst_reg, s = insn->src_reg;

	sync_linked(bt, h);
	if (cls == XBPF_ALU || cls == XBPF_ALU64) {
		if (!reg_set(bt, d))
			return 0;
		if (op == XBPF_END || op == XBPF_NEG)
			return 0;
		if (op == XBPF_MOV) {
			clear_reg(bt, d);
			if (XBPF_SRC(insn->code) == XBPF_X && s != XBPF_REG_FP)
				set_reg(bt, s);
		} else if (XBPF_SRC(insn->code) == XBPF_X && s != XBPF_REG_FP) {
			set_reg(bt, s);
		}
	} else if (cls == XBPF_LDX) {
		if (!reg_set(bt, d))
			return 0;
		clear_reg(bt, d);
		/* Only a fill from the stack carries the value on. */
		if (h && (h->flags & XV_HIST_STACK))
			bt->stack[h->frame] |= 1ull << h->spi;
	} else if (cls == XBPF_STX || cls == XBPF_ST) {
		if (reg_set(bt, d))
			return -ENOTSUP; /* pointer arithmetic on a scalar base */
		if (!h || !(h->flags & XV_HIST_STACK))
			return 0;
		if (!(bt->stack[h->frame] & (1ull << h->spi)))
			return 0;
		bt->stack[h->frame] &= ~(1ull << h->spi);
		if (cls == XBPF_STX && XBPF_MODE(insn->code) != XBPF_ATOMIC)
			set_reg(bt, s);
	} else if (cls == XBPF_JMP || cls == XBPF_JMP32) {
		if (op == XBPF_CALL && s == XBPF_PSEUDO_CALL) {
			/* Leaving the callee backwards: only its arguments go on, in the caller. */
			if ((bt->regs[bt->frame] & ~ARGS_MASK) || bt->stack[bt->frame])
				return -EFAULT;
			if (bt->frame == 0)
				return -EFAULT;
			bt->regs[bt->frame - 1] |= bt->regs[bt->frame] & ARGS_MASK;
			bt->regs[bt->frame] = 0;
			bt->frame--;
		} else if (op == XBPF_CALL && xv_is_callback_helper(insn) && subseq != idx + 1) {
			/*
			 * Leaving a callback backwards, to the helper call that
			 * entered it: its R1-R5 came from the helper, not from the
			 * caller's registers, so nothing goes on.
			 */
			if ((bt->regs[bt->frame] & ~ARGS_MASK) || bt->stack[bt->frame] || !bt->frame)
				return -EFAULT;
			bt->regs[bt->frame] = 0;
			bt->frame--;
		} else if (op == XBPF_CALL) {
			/* A helper sets r0 and clobbers r1-r5. */
			clear_reg(bt, 0);
			if (bt->regs[bt->frame] & ARGS_MASK)
				return -EFAULT;
		} else if (op == XBPF_EXIT) {
			bool r0 = reg_set(bt, 0) && subseq > 0 &&
				  xbpf_insn_is_pseudo_call(&env->insns[subseq - 1]);

			/* A callback's exit back to its helper: R1-R5 there are the helper's to set. */
			if (subseq >= 0 && env->aux[subseq].calls_callback)
				bt->regs[bt->frame] &= ~ARGS_MASK;
			if (bt->regs[bt->frame] & ARGS_MASK)
				return -EFAULT;
			clear_reg(bt, 0);
			/* Into the callee, backwards. */
			if (bt->frame + 1 >= XBPF_MAX_CALL_FRAMES)
				return -EFAULT;
			bt->frame++;
			bt->regs[bt->frame] = r0 ? 1u : 0;
			bt->stack[bt->frame] = 0;
		} else if (XBPF_SRC(insn->code) == XBPF_X && op != XBPF_JA) {
			if (reg_set(bt, d) || reg_set(bt, s)) {
				set_reg(bt, d);
				set_reg(bt, s);
			}
		}
	} else if (cls == XBPF_LD) {
		if (!reg_set(bt, d))
			return 0;
		clear_reg(bt, d);
		if (XBPF_MODE(insn->code) == XBPF_ABS || XBPF_MODE(insn->code) == XBPF_IND)
			return -ENOTSUP;
	}
	sync_linked(bt, h);
	return 0;
}

void xv_mark_all_scalars_imprecise(struct xv_state *st)
{
	for (int i = 0; i <= st->curframe; i++) {
		struct xv_func_state *f = st->frame[i];

		for (int r = 0; r < XV_MAX_REG; r++)
			f->regs[r].precise = false;
		for (int s = 0; s < f->nslots; s++)
			f->stack[s].spilled.precise = false;
	}
}

/* The big hammer: every scalar of every checkpoint on the current path. */
static void mark_all_precise(struct xv_env *env)
{
	for (struct xv_explored *e = env->cur->parent; e; e = e->parent) {
		struct xv_state *st = &e->st;

		for (int i = 0; i <= st->curframe; i++) {
			struct xv_func_state *f = st->frame[i];

			for (int r = 0; r < XBPF_REG_FP; r++)
				if (f->regs[r].type == SCALAR_VALUE)
					f->regs[r].precise = true;
			for (int s = 0; s < f->nslots; s++)
				if (f->stack[s].slot_type[XV_SLOT - 1] == STACK_SPILL &&
				    f->stack[s].spilled.type == SCALAR_VALUE)
					f->stack[s].spilled.precise = true;
		}
	}
}

/* Mark what is still in the set in checkpoint st; drop what was already marked. */
static void mark_in_checkpoint(struct xv_state *st, struct bt *bt)
{
	for (int fr = bt->frame; fr >= 0; fr--) {
		struct xv_func_state *f = st->frame[fr];

		for (int r = 0; r < XBPF_REG_FP; r++) {
			struct xv_reg *reg = &f->regs[r];

			if (!(bt->regs[fr] & (1u << r)))
				continue;
			if (reg->type != SCALAR_VALUE || reg->precise)
				bt->regs[fr] &= ~(1u << r);
			else
				reg->precise = true;
		}
		for (int s = 0; s < 64; s++) {
			struct xv_stack_slot *slot;

			if (!(bt->stack[fr] & (1ull << s)))
				continue;
			slot = s < f->nslots ? &f->stack[s] : NULL;
			if (!slot || slot->slot_type[XV_SLOT - 1] != STACK_SPILL ||
			    slot->spilled.type != SCALAR_VALUE || slot->spilled.precise)
				bt->stack[fr] &= ~(1ull << s);
			else
				slot->spilled.precise = true;
		}
	}
}

static int backtrack(struct xv_env *env, struct bt *bt)
{
	const struct xv_state *st = env->cur;
	struct xv_explored *e = NULL;
	int last = env->insn_idx, first = st->first_insn_idx, subseq = -1, err;
	bool skip_first = true;

	if (bt_empty(bt))
		return 0;
	for (;;) {
		uint32_t cnt = st->hist_cnt;

		for (int i = last;;) {
			if (skip_first) {
				skip_first = false;
			} else {
				/* -ENOTSUP, or a set that cannot be (the kernel's verifier_bug): fall back. */
				err = backtrack_insn(env, i, subseq, hist_entry(st, cnt, i), bt);
				if (err)
					goto fallback;
			}
			if (bt_empty(bt))
				return 0;
			subseq = i;
			i = prev_insn(env, st, i, &cnt);
			if (i == -ENOENT)
				break;
			if (i < 0 || i >= env->insn_cnt)
				goto fallback;
		}
		e = e ? e->parent : env->cur->parent;
		if (!e)
			break;
		if (bt->frame != e->st.curframe)
			goto fallback; /* the walk lost track of the frames */
		mark_in_checkpoint(&e->st, bt);
		if (bt_empty(bt))
			return 0;
		st = &e->st;
		subseq = first;
		last = st->last_insn_idx;
		first = st->first_insn_idx;
		if (last < 0)
			break;
	}
	if (bt_empty(bt))
		return 0;
fallback:
	mark_all_precise(env);
	return 0;
}

int xv_mark_precise(struct xv_env *env, int regno)
{
	struct bt bt = { .frame = env->cur->curframe };

	if (cur_regs(env)[regno].type != SCALAR_VALUE)
		return 0;
	bt.regs[bt.frame] = 1u << regno;
	return backtrack(env, &bt);
}

int xv_mark_precise_slot(struct xv_env *env, int frame, int spi)
{
	struct bt bt = { .frame = env->cur->curframe };

	bt.stack[frame] = 1ull << spi;
	return backtrack(env, &bt);
}

int xv_propagate_precision(struct xv_env *env, const struct xv_state *old)
{
	struct bt bt = { .frame = env->cur->curframe };

	for (int fr = 0; fr <= old->curframe; fr++) {
		const struct xv_func_state *f = old->frame[fr];

		for (int r = 0; r < XBPF_REG_FP; r++)
			if (f->regs[r].type == SCALAR_VALUE && f->regs[r].precise)
				bt.regs[fr] |= 1u << r;
		for (int s = 0; s < f->nslots && s < 64; s++)
			if (f->stack[s].slot_type[XV_SLOT - 1] == STACK_SPILL &&
			    f->stack[s].spilled.type == SCALAR_VALUE && f->stack[s].spilled.precise)
				bt.stack[fr] |= 1ull << s;
	}
	return backtrack(env, &bt);
}

int xv_push_hist(struct xv_env *env, uint8_t flags, uint8_t frame, uint8_t spi,
		 const uint16_t *linked, int linked_cnt)
{
	struct xv_state *st = env->cur;
	struct xv_hist *h;

	if (st->hist_cnt && st->hist[st->hist_cnt - 1].idx == env->insn_idx &&
	    st->hist[st->hist_cnt - 1].prev_idx == env->prev_insn_idx) {
		h = &st->hist[st->hist_cnt - 1];
	} else {
		if (st->hist_cnt == st->hist_cap) {
			uint32_t cap = st->hist_cap ? st->hist_cap * 2 : 8;
			struct xv_hist *n = realloc(st->hist, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			st->hist = n;
			st->hist_cap = cap;
		}
		h = &st->hist[st->hist_cnt++];
		memset(h, 0, sizeof(*h));
		h->idx = env->insn_idx;
		h->prev_idx = env->prev_insn_idx;
	}
	if (flags & XV_HIST_STACK) {
		h->flags |= XV_HIST_STACK;
		h->frame = frame;
		h->spi = spi;
	}
	if (linked_cnt) {
		h->linked_cnt = (uint8_t)linked_cnt;
		memcpy(h->linked, linked, linked_cnt * sizeof(*linked));
	}
	return 0;
}
