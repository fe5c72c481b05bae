// SPDX-License-Identifier: MIT
/*
 * liveness.c - which stack slots a checkpoint must compare: the kernel's
 * (6.18) path-insensitive stack liveness, without its call-chain keys.
 *
 * The path walk reports every stack read (a fill, a helper reading its
 * argument memory, ...) at the instruction that made it, as slot bits of
 * the frame read, counted from the reader's frame (delta 0 its own, 1 its
 * caller's, ...), and every instruction that wrote a whole 8-byte slot of
 * its own frame on each visit.  From those, a backward data flow over each
 * subprogram's control flow keeps, per instruction, the slots that may be
 * read after it before being written (live_in = reads | live_out - writes);
 * a callee's reads of its callers' slots flow on to its call sites.  A
 * slot a checkpoint finds dead at its instruction cannot change what
 * happens below it, so pruning ignores it.
 *
 * The facts only grow (more reads, fewer definite writes), and each new
 * fact is pushed backwards at once, so the sets are always up to date and
 * the cost stays proportional to what changes.  Soundness is the kernel's
 * argument: two states that agree on every live slot take the same paths,
 * so a read that could tell them apart would already have been seen.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

#define OUTER (XBPF_MAX_CALL_FRAMES - 1)

struct xv_liveness {
	int n;
	uint64_t *live;		   /* live_in of the own frame, per insn */
	uint64_t (*outer)[OUTER];  /* live_in of the callers' frames, delta 1.. (lazily) */
	uint64_t *must_write;	   /* own slots written whole on every visit so far */
	uint8_t *visited;
	int *pred_start, *preds;   /* intra-subprogram predecessors, CSR */
	int *call_start, *calls;   /* per subprogram: the pseudo calls into it */
	struct work {
		int insn, delta;
		uint64_t bits;
	} *work;
	int work_cnt, work_cap;
	uint64_t cur_write;	   /* whole own slots the current insn wrote */
};

static int push_work(struct xv_liveness *l, int insn, int delta, uint64_t bits)
{
	if (!bits)
		return 0;
	if (l->work_cnt == l->work_cap) {
		int cap = l->work_cap ? l->work_cap * 2 : 256;
		struct work *w = realloc(l->work, cap * sizeof(*w));

		if (!w)
			return -ENOMEM;
		l->work = w;
		l->work_cap = cap;
	}
	l->work[l->work_cnt++] = (struct work){ insn, delta, bits };
	return 0;
}

static uint64_t *live_of(struct xv_liveness *l, int insn, int delta)
{
	return delta ? &l->outer[insn][delta - 1] : &l->live[insn];
}

/* bits live before insn (delta: whose frame), and everything that follows from it. */
static int add_live(struct xv_env *env, int insn, int delta, uint64_t bits)
{
	struct xv_liveness *l = env->liveness;
	int err = push_work(l, insn, delta, bits);

	while (!err && l->work_cnt) {
		struct work w = l->work[--l->work_cnt];
		uint64_t *live = live_of(l, w.insn, w.delta), add = w.bits & ~*live;
		int sp;

		if (!add)
			continue;
		*live |= add;
		for (int p = l->pred_start[w.insn]; !err && p < l->pred_start[w.insn + 1]; p++) {
			int q = l->preds[p];

			err = push_work(l, q, w.delta, w.delta ? add : add & ~l->must_write[q]);
		}
		/* A callee's reads of its caller's slots are reads at each call into it. */
		sp = env->aux[w.insn].subprog;
		if (w.delta && env->subprog[sp].start == w.insn)
			for (int c = l->call_start[sp]; !err && c < l->call_start[sp + 1]; c++)
				err = push_work(l, l->calls[c], w.delta - 1, add);
	}
	l->work_cnt = 0;
	return err;
}

int xv_liveness_init(struct xv_env *env)
{
	struct xv_liveness *l = calloc(1, sizeof(*l));
	int n = env->insn_cnt, succ[2], cnt, total = 0, ncalls = 0, ncb = 0;
	bool branch[2], *cbs;

	if (!l)
		return -ENOMEM;
	env->liveness = l;
	l->n = n;
	l->live = calloc(n, sizeof(*l->live));
	l->must_write = calloc(n, sizeof(*l->must_write));
	l->visited = calloc(n, 1);
	l->pred_start = calloc(n + 1, sizeof(int));
	l->call_start = calloc(env->subprog_cnt + 2, sizeof(int));
	if (!l->live || !l->must_write || !l->visited || !l->pred_start || !l->call_start)
		return -ENOMEM;
	/*
	 * Which callback a helper calls is only known on the path: every
	 * subprogram whose address the program takes counts as called from
	 * every helper call that calls back, so its reads of the caller's
	 * stack are live there.
	 */
	cbs = calloc(env->subprog_cnt + 1, sizeof(*cbs));
	if (!cbs)
		return -ENOMEM;
	for (int t = 0; t < n; t++) {
		const struct xbpf_insn *in = &env->insns[t];
		int sp;

		if (env->aux[t].is_ldimm64_hi || in->code != (XBPF_LD | XBPF_DW | XBPF_IMM) ||
		    in->src_reg != XBPF_PSEUDO_FUNC)
			continue;
		sp = xv_find_subprog(env, t + in->imm + 1);
		if (sp >= 0 && !cbs[sp])
			cbs[sp] = true, ncb++;
	}
	/* Count, then fill, the edges inside subprograms and the calls into each. */
	for (int pass = 0; pass < 2; pass++) {
		for (int t = 0; t < n; t++) {
			if (env->aux[t].is_ldimm64_hi)
				continue;
			if (ncb && xv_is_callback_helper(&env->insns[t])) {
				for (int sp = 0; sp < env->subprog_cnt; sp++) {
					if (!cbs[sp])
						continue;
					if (pass)
						l->calls[l->call_start[sp + 1]++] = t;
					else
						ncalls++, l->call_start[sp + 2]++;
				}
			}
			cnt = xv_insn_successors(env, t, succ, branch);
			for (int e = 0; e < cnt; e++) {
				bool call = XBPF_OP(env->insns[t].code) == XBPF_CALL &&
					    XBPF_CLASS(env->insns[t].code) == XBPF_JMP;

				if (succ[e] < 0 || succ[e] >= n)
					continue;
				if (call && branch[e]) {
					int sp = xv_find_subprog(env, succ[e]);

					if (sp < 0)
						continue;
					if (pass)
						l->calls[l->call_start[sp + 1]++] = t;
					else
						ncalls++, l->call_start[sp + 2]++;
					continue;
				}
				if (pass)
					l->preds[l->pred_start[succ[e] + 1]++] = t;
				else
					total++, l->pred_start[succ[e] + 1]++;
			}
		}
		if (pass)
			break;
		for (int t = 0; t < n; t++)
			l->pred_start[t + 1] += l->pred_start[t];
		for (int s = 0; s <= env->subprog_cnt; s++)
			l->call_start[s + 1] += l->call_start[s];
		l->preds = malloc((total ? total : 1) * sizeof(int));
		l->calls = malloc((ncalls ? ncalls : 1) * sizeof(int));
		if (!l->preds || !l->calls)
			return -ENOMEM;
		/*
		 * The second pass fills a list by advancing the next one's start:
		 * shift the predecessor starts by one (call counts went one further).
		 */
		memmove(l->pred_start + 1, l->pred_start, n * sizeof(int));
	}
	free(cbs);
	return 0;
}

void xv_liveness_free(struct xv_env *env)
{
	struct xv_liveness *l = env->liveness;

	if (!l)
		return;
	free(l->live);
	free(l->outer);
	free(l->must_write);
	free(l->visited);
	free(l->pred_start);
	free(l->preds);
	free(l->call_start);
	free(l->calls);
	free(l->work);
	free(l);
	env->liveness = NULL;
}

int xv_stack_mark_read(struct xv_env *env, uint32_t frameno, uint64_t slots)
{
	struct xv_liveness *l = env->liveness;
	int delta = env->cur->curframe - (int)frameno;

	if (!l || !slots || delta < 0 || delta > OUTER)
		return 0;
	if (delta && !l->outer) {
		l->outer = calloc(l->n, sizeof(*l->outer));
		if (!l->outer)
			return -ENOMEM;
	}
	if ((*live_of(l, env->insn_idx, delta) & slots) == slots)
		return 0;
	return add_live(env, env->insn_idx, delta, slots);
}

void xv_stack_mark_write(struct xv_env *env, uint32_t frameno, int spi)
{
	if (env->liveness && (int)frameno == env->cur->curframe && spi < 64)
		env->liveness->cur_write |= 1ull << spi;
}

void xv_stack_write_begin(struct xv_env *env)
{
	if (env->liveness)
		env->liveness->cur_write = 0;
}

/* The writes of the insn just walked: what was definitely written shrinks to them. */
int xv_stack_write_commit(struct xv_env *env, int insn)
{
	struct xv_liveness *l = env->liveness;
	uint64_t freed, out = 0;
	int succ[2], cnt;
	bool branch[2];

	if (!l)
		return 0;
	if (!l->visited[insn]) {
		l->visited[insn] = 1;
		l->must_write[insn] = l->cur_write;
		return 0;
	}
	freed = l->must_write[insn] & ~l->cur_write;
	if (!freed)
		return 0;
	l->must_write[insn] &= l->cur_write;
	/* Slots live after insn that its write used to hide are live before it now. */
	cnt = xv_insn_successors(env, insn, succ, branch);
	for (int e = 0; e < cnt; e++)
		if (succ[e] >= 0 && succ[e] < l->n &&
		    !(branch[e] && XBPF_OP(env->insns[insn].code) == XBPF_CALL))
			out |= l->live[succ[e]];
	return add_live(env, insn, 0, out & freed);
}

uint64_t xv_stack_live(const struct xv_env *env, int insn, int delta)
{
	const struct xv_liveness *l = env->liveness;

	if (!l)
		return ~0ull;
	if (!delta)
		return l->live[insn];
	if (delta > OUTER || !l->outer)
		return 0;
	return l->outer[insn][delta - 1];
}
