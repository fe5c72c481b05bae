// SPDX-License-Identifier: MIT
/*
 * prune.c - the stack of pending paths and the checkpoints at prune points
 * (the kernel's xv_push_stack/xv_pop_stack and xv_is_state_visited): a path that
 * reaches a state covered by a finished checkpoint stops there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

/* ---- pending paths and checkpoints -------------------------------------- */

int xv_push_stack(struct xv_env *env, int insn_idx, int prev_idx, struct xv_state **ret)
{
	struct xv_pending *p;

	/* Counted with the path being pushed, as the kernel's push_stack() does. */
	if (env->pending_cnt + 1 > XV_MAX_PENDING) {
		xv_err(env, "The sequence of %d jumps is too complex.\n", env->pending_cnt + 1);
		return -E2BIG;
	}
	if (env->pending_cnt == env->pending_cap) {
		int cap = env->pending_cap ? env->pending_cap * 2 : 64;
		struct xv_pending *n = realloc(env->pending, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		env->pending = n;
		env->pending_cap = cap;
	}
	p = &env->pending[env->pending_cnt];
	memset(p, 0, sizeof(*p));
	if (xv_state_copy(&p->st, env->cur)) {
		xv_state_clear(&p->st);
		return -ENOMEM;
	}
	env->pending_cnt++;
	p->insn_idx = insn_idx;
	p->prev_insn_idx = prev_idx;
	p->log_pos = env->log.pos;
	if (p->st.parent)
		p->st.parent->branches++;
	*ret = &p->st;
	return 0;
}

void xv_update_branch_counts(struct xv_explored *e)
{
	while (e) {
		if (--e->branches)
			break;
		e = e->parent;
	}
}

/* Take the next pending path; -ENOENT when none is left. */
int xv_pop_stack(struct xv_env *env)
{
	struct xv_pending *p;

	if (!env->pending_cnt)
		return -ENOENT;
	p = &env->pending[--env->pending_cnt];
	xv_state_clear(env->cur);
	*env->cur = p->st; /* takes the frames */
	memset(&p->st, 0, sizeof(p->st));
	env->insn_idx = p->insn_idx;
	env->prev_insn_idx = p->prev_insn_idx;
	if (env->log.level == 1)
		xv_log_reset(&env->log, p->log_pos);
	return 0;
}

static void clear_written(struct xv_state *st)
{
	for (int i = 0; i <= st->curframe; i++)
		for (int r = 0; r < XV_MAX_REG; r++)
			st->frame[i]->regs[r].written = false;
}

/*
 * Cheap test before the exact comparison of a loop check (the kernel's
 * states_maybe_looping): every register of the current frame must match
 * bit for bit in what defines its value.  A counting loop fails here on
 * the counter, so walking a long loop does not pay a full state
 * comparison per checkpoint per iteration.
 */
static bool states_maybe_looping(const struct xv_state *old, const struct xv_state *cur)
{
	const struct xv_func_state *fo, *fc;

	if (old->curframe != cur->curframe)
		return false;
	fo = old->frame[old->curframe];
	fc = cur->frame[cur->curframe];
	for (int r = 0; r < XV_MAX_REG; r++) {
		const struct xv_reg *a = &fo->regs[r], *b = &fc->regs[r];

		if (a->type != b->type || a->off != b->off || a->range != b->range ||
		    a->map != b->map || a->id != b->id || a->link_off != b->link_off ||
		    a->link32 != b->link32 || a->frameno != b->frameno ||
		    a->var_off.value != b->var_off.value || a->var_off.mask != b->var_off.mask ||
		    a->smin_value != b->smin_value || a->smax_value != b->smax_value ||
		    a->umin_value != b->umin_value || a->umax_value != b->umax_value ||
		    a->s32_min_value != b->s32_min_value || a->s32_max_value != b->s32_max_value ||
		    a->u32_min_value != b->u32_min_value || a->u32_max_value != b->u32_max_value)
			return false;
	}
	return true;
}

/* 1: pruned, 0: go on, <0: error. */
int xv_is_state_visited(struct xv_env *env, int idx)
{
	struct xv_insn_aux *aux = &env->aux[idx];
	/* A long history is expensive to backtrack through: checkpoint (the kernel's 40). */
	bool force = env->test_state_freq || env->cur->hist_cnt > 40 || aux->calls_callback;
	bool add = force || (env->jmps_processed - env->prev_jmps_processed >= 2 &&
			     env->insn_processed - env->prev_insn_processed >= 8);
	struct xv_explored *e, *n, **pprev;

	pprev = &aux->explored;
	while ((e = *pprev)) {
		if (e->branches && aux->calls_callback) {
			/*
			 * A callback's walks from this helper call have come back to
			 * a state within one still being walked: nothing new follows.
			 */
			if (xv_states_equal(env, &e->st, env->cur, XV_RANGE_WITHIN))
				goto hit;
			if (!force && env->jmps_processed - env->prev_jmps_processed < 20 &&
			    env->insn_processed - env->prev_insn_processed < 100)
				add = false;
		} else if (e->branches) {
			/* Still being explored above us: a loop (a callback's next walk is none). */
			if (states_maybe_looping(&e->st, env->cur) &&
			    e->st.callback_unroll_depth == env->cur->callback_unroll_depth &&
			    xv_states_equal(env, &e->st, env->cur, XV_EXACT)) {
				xv_err(env, "infinite loop detected at insn %d\n", idx);
				return -EINVAL;
			}
			if (!force && env->jmps_processed - env->prev_jmps_processed < 20 &&
			    env->insn_processed - env->prev_insn_processed < 100)
				add = false;
		} else if (xv_states_equal(env, &e->st, env->cur, XV_NOT_EXACT)) {
			/*
			 * What the checkpoint's safety rested on, this path's rests on
			 * too; the arrival here is history backtracking needs.
			 */
			int err;
hit:
			err = env->aux[idx].jmp_point ? xv_push_hist(env, 0, 0, 0, NULL, 0) : 0;
			err = err ?: xv_propagate_precision(env, &e->st);
			if (err)
				return err;
			e->hit_cnt++;
			return 1;
		}
		/*
		 * A checkpoint that keeps missing costs a comparison at every
		 * visit and prunes nothing: drop it (the kernel's heuristic,
		 * miss_cnt > 3 * hit_cnt + 3; misses are counted only when a
		 * new checkpoint would be added, so loop iterations do not
		 * evict what earlier ones recorded).  One still walked below
		 * is parked on env->evicted, as paths point at it.
		 */
		if (add)
			e->miss_cnt++;
		if (e->miss_cnt > e->hit_cnt * 3 + 3) {
			*pprev = e->next;
			aux->nr_states--;
			env->cur_states--;
			if (e->branches) {
				e->next = env->evicted;
				env->evicted = e;
			} else {
				xv_state_clear(&e->st);
				free(e);
			}
			continue;
		}
		pprev = &e->next;
	}
	if (!add || aux->nr_states >= XV_MAX_STATES_PER_INSN)
		return 0;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	/* The checkpoint gets its precision marks from what is walked below it. */
	xv_mark_all_scalars_imprecise(env->cur);
	env->cur->last_insn_idx = env->prev_insn_idx;
	if (xv_state_copy(&n->st, env->cur)) {
		xv_state_clear(&n->st);
		free(n);
		return -ENOMEM;
	}
	xv_state_clear_singular_ids(&n->st);
	n->insn_idx = idx;
	n->branches = 1;
	n->parent = env->cur->parent;
	n->st.parent = NULL;
	env->cur->parent = n;
	env->cur->first_insn_idx = idx;
	env->cur->hist_cnt = 0;
	n->next = aux->explored;
	aux->explored = n;
	aux->nr_states++;
	env->total_states++;
	env->cur_states++;
	if (env->cur_states > env->peak_states)
		env->peak_states = env->cur_states;
	if (aux->nr_states > env->max_states_per_insn)
		env->max_states_per_insn = aux->nr_states;
	env->prev_jmps_processed = env->jmps_processed;
	env->prev_insn_processed = env->insn_processed;
	clear_written(env->cur);
	return 0;
}

/* Drop every checkpoint and pending path and the current state (aux[] and the stack array stay). */
void xv_drop_states(struct xv_env *env)
{
	for (int i = 0; env->aux && i < env->insn_cnt; i++) {
		struct xv_explored *e = env->aux[i].explored;

		while (e) {
			struct xv_explored *next = e->next;

			xv_state_clear(&e->st);
			free(e);
			e = next;
		}
		env->aux[i].explored = NULL;
		env->aux[i].nr_states = 0;
	}
	while (env->evicted) {
		struct xv_explored *next = env->evicted->next;

		xv_state_clear(&env->evicted->st);
		free(env->evicted);
		env->evicted = next;
	}
	for (int i = 0; i < env->pending_cnt; i++)
		xv_state_clear(&env->pending[i].st);
	env->pending_cnt = 0;
	xv_state_free(env->cur);
	env->cur = NULL;
	env->cur_states = 0;
}
