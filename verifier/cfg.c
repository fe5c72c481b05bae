// SPDX-License-Identifier: MIT
/*
 * cfg.c - the static passes that run before the path walk.
 *
 * Subprograms start at insn 0 and at every bpf-to-bpf call target; each one
 * must keep its jumps inside itself and end in exit or goto, so control can
 * only move between them through call and exit.  The CFG walk is a
 * depth-first search over the whole program (calls are edges to the
 * callee): it finds unreachable code and marks the prune points the path
 * walk checkpoints at.  Back-edges are fine: like the kernel for a
 * privileged loader, loops are left to the path walk, which proves them
 * bounded or reports an infinite loop.  Register liveness is a backward
 * dataflow per instruction so that state pruning can ignore dead registers.
 * The stack check walks the static call graph, dead calls included, as the
 * kernel's check_max_stack_depth() does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

#define XV_HELPER_TAIL_CALL 12

static bool is_ldimm64(const struct xbpf_insn *insn)
{
	return insn->code == (XBPF_LD | XBPF_DW | XBPF_IMM);
}

int xv_check_encoding(struct xv_env *env)
{
	for (int i = 0; i < env->insn_cnt; i++) {
		const struct xbpf_insn *insn = &env->insns[i];
		const char *msg = NULL;

		/* The rest of the encoding is checked where a path reaches it (check.c). */
		if (xbpf_insn_check_load(env->insns, env->insn_cnt, i, &msg)) {
			env->insn_idx = i;
			xv_err(env, "%s", msg ? msg : "invalid instruction");
			return -EINVAL;
		}
		if (is_ldimm64(insn)) {
			if (i + 1 < env->insn_cnt)
				env->aux[i + 1].is_ldimm64_hi = true;
			i++;
		}
	}
	return 0;
}

static bool is_pseudo_func(const struct xbpf_insn *insn)
{
	return is_ldimm64(insn) && insn->src_reg == XBPF_PSEUDO_FUNC;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int add_subprog(struct xv_env *env, int off)
{
	if (off < 0 || off >= env->insn_cnt) {
		xv_err(env, "call to invalid destination\n");
		return -EINVAL;
	}
	for (int i = 0; i < env->subprog_cnt; i++)
		if (env->subprog[i].start == off)
			return 0;
	if (env->subprog_cnt >= XBPF_MAX_SUBPROGS) {
		xv_err(env, "too many subprograms\n");
		return -E2BIG;
	}
	env->subprog[env->subprog_cnt++].start = off;
	return 0;
}

int xv_find_subprog(const struct xv_env *env, int insn_idx)
{
	int lo = 0, hi = env->subprog_cnt - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (env->subprog[mid].start == insn_idx)
			return mid;
		if (env->subprog[mid].start < insn_idx)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -ENOENT;
}

int xv_find_subprogs(struct xv_env *env)
{
	const struct xbpf_insn *insns = env->insns;
	int err, sub = 0;

	env->subprog_cnt = 0;
	err = add_subprog(env, 0);
	if (err)
		return err;
	for (int i = 0; i < env->insn_cnt; i++) {
		/* Callbacks (ld_imm64 BPF_PSEUDO_FUNC) are subprograms too. */
		if (!xbpf_insn_is_pseudo_call(&insns[i]) && !is_pseudo_func(&insns[i]))
			continue;
		if (xbpf_insn_is_pseudo_call(&insns[i]))
			env->has_pseudo_call = true;
		env->insn_idx = i;
		err = add_subprog(env, i + insns[i].imm + 1);
		if (err)
			return err;
	}
	qsort(env->subprog, env->subprog_cnt, sizeof(env->subprog[0]), cmp_int);
	/* Sentinel: subprog[cnt].start is the end of the last one. */
	env->subprog[env->subprog_cnt].start = env->insn_cnt;
	for (int i = 0; i < env->subprog_cnt; i++)
		env->subprog[i].end = env->subprog[i + 1].start;

	for (int i = 0; i < env->insn_cnt; i++) {
		const struct xbpf_insn *insn = &insns[i];
		struct xv_subprog *sp = &env->subprog[sub];

		env->aux[i].subprog = sub;
		if (xbpf_insn_is_helper_call(insn) && insn->imm == XV_HELPER_TAIL_CALL)
			sp->has_tail_call = env->has_tail_call = true;
		if (XBPF_CLASS(insn->code) == XBPF_LD &&
		    (XBPF_MODE(insn->code) == XBPF_ABS || XBPF_MODE(insn->code) == XBPF_IND))
			sp->has_ld_abs = env->has_ld_abs = true;
		if (xbpf_insn_is_jump(insn)) {
			int off = (int)xbpf_jump_target(insn, i);

			if (off < sp->start || off >= sp->end) {
				env->insn_idx = i;
				xv_err(env, "jump out of range from insn %d to %d\n", i, off);
				return -EINVAL;
			}
		}
		if (i == sp->end - 1) {
			if (!xbpf_insn_ends_block(insn)) {
				env->insn_idx = i;
				xv_err(env, "last insn is not an exit or jmp\n");
				return -EINVAL;
			}
			sub++;
		}
	}
	return 0;
}

enum { UNSEEN = 0, DISCOVERED, EXPLORED };

/* Successors of insn t in CFG order; returns how many (<= 2). */
int xv_insn_successors(const struct xv_env *env, int t, int succ[2], bool branch[2])
{
	const struct xbpf_insn *insn = &env->insns[t];
	uint8_t cls = XBPF_CLASS(insn->code), op = XBPF_OP(insn->code);

	if (cls != XBPF_JMP && cls != XBPF_JMP32) {
		succ[0] = t + xbpf_insn_len(insn);
		branch[0] = false;
		return 1;
	}
	if (op == XBPF_EXIT)
		return 0;
	if (op == XBPF_CALL) {
		succ[0] = t + 1;
		branch[0] = false;
		if (insn->src_reg == XBPF_PSEUDO_CALL) {
			succ[1] = t + insn->imm + 1;
			branch[1] = true;
			return 2;
		}
		return 1;
	}
	if (op == XBPF_JA) {
		succ[0] = (int)xbpf_jump_target(insn, t);
		branch[0] = true;
		return 1;
	}
	succ[0] = t + 1;
	branch[0] = false;
	succ[1] = (int)xbpf_jump_target(insn, t);
	branch[1] = true;
	return 2;
}

/*
 * Prune points (checkpoints are made and compared there) and jump points
 * (arrivals are recorded in the path's history), where the kernel's
 * visit_insn() puts them: a conditional jump and its target, a goto's
 * target, the instruction after any call, a bpf-to-bpf call and its callee.
 */
static void mark_prune_points(struct xv_env *env)
{
	for (int t = 0; t < env->insn_cnt; t++) {
		const struct xbpf_insn *insn = &env->insns[t];
		uint8_t cls = XBPF_CLASS(insn->code), op = XBPF_OP(insn->code);
		int w;

		if (is_pseudo_func(insn)) {
			w = t + insn->imm + 1;
			env->aux[t].prune_point = true;
			if (t + 2 < env->insn_cnt)
				env->aux[t + 2].prune_point = env->aux[t + 2].jmp_point = true;
			if (w >= 0 && w < env->insn_cnt)
				env->aux[w].prune_point = env->aux[w].jmp_point = true;
			continue;
		}
		if (env->aux[t].is_ldimm64_hi || (cls != XBPF_JMP && cls != XBPF_JMP32) ||
		    op == XBPF_EXIT)
			continue;
		/*
		 * A helper that calls a callback is walked again each time the
		 * callback returns to it: a checkpoint there every time lets the
		 * iterations converge.
		 */
		if (xv_is_callback_helper(insn))
			env->aux[t].calls_callback = env->aux[t].prune_point = env->aux[t].jmp_point = true;
		if (op == XBPF_CALL) {
			if (t + 1 < env->insn_cnt)
				env->aux[t + 1].prune_point = env->aux[t + 1].jmp_point = true;
			if (insn->src_reg == XBPF_PSEUDO_CALL) {
				w = t + insn->imm + 1;
				env->aux[t].prune_point = true;
				if (w >= 0 && w < env->insn_cnt)
					env->aux[w].prune_point = env->aux[w].jmp_point = true;
			}
			continue;
		}
		if (op != XBPF_JA)
			env->aux[t].prune_point = true;
		w = (int)xbpf_jump_target(insn, t);
		if (w >= 0 && w < env->insn_cnt)
			env->aux[w].prune_point = env->aux[w].jmp_point = true;
	}
}

int xv_check_cfg(struct xv_env *env)
{
	int n = env->insn_cnt, sp = 0, err = 0;
	uint8_t *state = calloc(n, 1);
	uint8_t *next_edge = calloc(n, 1);
	int *stack = malloc(sizeof(int) * (n + 1));

	if (!state || !next_edge || !stack) {
		err = -ENOMEM;
		goto out;
	}
	state[0] = DISCOVERED;
	stack[sp++] = 0;
	while (sp) {
		int t = stack[sp - 1], succ[2], cnt;
		bool branch[2];

		cnt = xv_insn_successors(env, t, succ, branch);
		/* A callback's address: its body is reached from here (visit_func_call_insn()). */
		if (is_pseudo_func(&env->insns[t]))
			succ[cnt++] = t + env->insns[t].imm + 1;
		if (next_edge[t] < cnt) {
			int e = next_edge[t]++, w = succ[e];

			if (w < 0 || w >= n) {
				env->insn_idx = t;
				xv_err(env, "jump out of range from insn %d to %d\n", t, w);
				err = -EINVAL;
				goto out;
			}
			if (state[w] == UNSEEN) {
				state[w] = DISCOVERED;
				stack[sp++] = w;
			}
			/* DISCOVERED: a back-edge, allowed (loops are checked by the path walk). */
			continue;
		}
		state[t] = EXPLORED;
		sp--;
	}
	mark_prune_points(env);
	for (int i = 0; i < n; i++) {
		if (state[i] != EXPLORED) {
			env->insn_idx = i;
			xv_err(env, "unreachable insn %d\n", i);
			err = -EINVAL;
			goto out;
		}
		if (is_ldimm64(&env->insns[i])) {
			if (i + 1 < n && state[i + 1] != UNSEEN) {
				env->insn_idx = i;
				xv_err(env, "jump into the middle of ldimm64 insn %d\n", i);
				err = -EINVAL;
				goto out;
			}
			i++;
		}
	}
out:
	free(state);
	free(next_edge);
	free(stack);
	return err;
}

/* ---- register liveness ------------------------------------------------- */

#define R(n) (1u << (n))
#define ARGS_MASK (R(1) | R(2) | R(3) | R(4) | R(5))
#define CALLER_SAVED (R(0) | ARGS_MASK)

static uint16_t helper_args_mask(int32_t id)
{
	const struct xbpf_helper_proto *p = xbpf_helper_proto(id);
	uint16_t m = 0;

	if (!p)
		return ARGS_MASK;
	for (int i = 0; i < 5; i++)
		if (p->args[i] != XBPF_ARG_NONE)
			m |= R(i + 1);
	return m;
}

static void use_def(const struct xv_env *env, int t, uint16_t *use, uint16_t *def)
{
	const struct xbpf_insn *insn = &env->insns[t];
	uint8_t cls = XBPF_CLASS(insn->code), op = XBPF_OP(insn->code);
	uint16_t d = R(insn->dst_reg), s = R(insn->src_reg);

	*use = *def = 0;
	switch (cls) {
	case XBPF_ALU:
	case XBPF_ALU64:
		if (op == XBPF_MOV) {
			*use = XBPF_SRC(insn->code) == XBPF_X ? s : 0;
		} else {
			*use = d;
			if (XBPF_SRC(insn->code) == XBPF_X && op != XBPF_NEG && op != XBPF_END)
				*use |= s;
		}
		*def = d;
		break;
	case XBPF_LDX:
		*use = s;
		*def = d;
		break;
	case XBPF_ST:
		*use = d;
		break;
	case XBPF_STX:
		*use = d | s;
		if (XBPF_MODE(insn->code) == XBPF_ATOMIC) {
			if (insn->imm == XBPF_CMPXCHG) {
				*use |= R(0);
				*def = R(0);
			} else if (insn->imm & XBPF_FETCH) {
				*def = s;
			}
		}
		break;
	case XBPF_LD:
		if (is_ldimm64(insn)) {
			*def = d;
		} else {
			*use = R(6) | (XBPF_MODE(insn->code) == XBPF_IND ? s : 0);
			*def = CALLER_SAVED;
		}
		break;
	case XBPF_JMP:
	case XBPF_JMP32:
		if (op == XBPF_EXIT) {
			*use = R(0);
		} else if (op == XBPF_CALL) {
			*use = insn->src_reg == XBPF_PSEUDO_CALL ? ARGS_MASK : helper_args_mask(insn->imm);
			*def = CALLER_SAVED;
		} else if (op != XBPF_JA) {
			*use = d | (XBPF_SRC(insn->code) == XBPF_X ? s : 0);
		}
		break;
	}
	*use &= (uint16_t)~R(XBPF_REG_FP);
}

uint16_t xv_insn_regs(const struct xv_env *env, int idx)
{
	const struct xbpf_insn *insn = &env->insns[idx];
	uint16_t use, def, m;

	use_def(env, idx, &use, &def);
	m = use | def;
	if (XBPF_CLASS(insn->code) == XBPF_JMP && XBPF_OP(insn->code) == XBPF_CALL)
		m &= (uint16_t)~0x3e; /* clobbered arguments are not worth printing */
	if (insn->dst_reg == XBPF_REG_FP || (insn->src_reg == XBPF_REG_FP &&
					     (XBPF_CLASS(insn->code) == XBPF_LDX ||
					      XBPF_CLASS(insn->code) == XBPF_STX ||
					      XBPF_SRC(insn->code) == XBPF_X)))
		m |= 1u << XBPF_REG_FP;
	return m;
}

int xv_compute_liveness(struct xv_env *env)
{
	int n = env->insn_cnt;
	uint16_t *use = calloc(n, sizeof(*use)), *def = calloc(n, sizeof(*def));
	bool changed = true;

	if (!use || !def) {
		free(use);
		free(def);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		if (!env->aux[i].is_ldimm64_hi)
			use_def(env, i, &use[i], &def[i]);
	/* Iterate to a fixed point; backwards order converges fast. */
	while (changed) {
		changed = false;
		for (int t = n - 1; t >= 0; t--) {
			int succ[2], cnt;
			bool branch[2];
			uint16_t out = 0, in;

			if (env->aux[t].is_ldimm64_hi)
				continue;
			cnt = xv_insn_successors(env, t, succ, branch);
			for (int e = 0; e < cnt; e++) {
				/* Calls: only the return point is intra-procedural. */
				if (branch[e] && XBPF_OP(env->insns[t].code) == XBPF_CALL)
					continue;
				if (succ[e] >= 0 && succ[e] < n)
					out |= env->aux[succ[e]].live_before;
			}
			in = use[t] | (out & ~def[t]);
			if (in != env->aux[t].live_before) {
				env->aux[t].live_before = in;
				changed = true;
			}
		}
	}
	free(use);
	free(def);
	return 0;
}

/* ---- stack depth over the call graph ----------------------------------- */

/*
 * A frame's share of the combined stack: the kernel rounds to 16 bytes
 * when the program is JITed (round_up_stack_depth()), as every load on a
 * machine with the JIT on is.
 */
static int round_frame(int depth)
{
	return (depth + 15) & ~15;
}

static int stack_walk(struct xv_env *env, int idx, int frame, int depth)
{
	struct xv_subprog *sp = &env->subprog[idx];

	/* frame counts the calls above main, so a chain of 8 calls is "8 frames". */
	if (frame >= XBPF_MAX_CALL_FRAMES) {
		xv_err(env, "the call stack of %d frames is too deep !\n", frame);
		return -E2BIG;
	}
	/*
	 * A tail call unwinds only its own frame: with up to 33 of them in a
	 * chain, the frames below one may hold at most 256 bytes.
	 */
	if (idx && sp->has_tail_call && depth >= 256) {
		xv_err(env,
		       "tail_calls are not allowed when call stack of previous frames is %d bytes. Too large\n",
		       depth);
		return -EACCES;
	}
	depth += round_frame(sp->stack_depth);
	if (depth > XBPF_STACK_SIZE) {
		xv_err(env, "combined stack size of %d calls is %d. Too large\n", frame + 1, depth);
		return -EACCES;
	}
	for (int i = sp->start; i < sp->end; i++) {
		int callee, err;

		/* A callback's frame sits on its caller's, as a callee's does. */
		if (!xbpf_insn_is_pseudo_call(&env->insns[i]) && !is_pseudo_func(&env->insns[i]))
			continue;
		callee = xv_find_subprog(env, i + env->insns[i].imm + 1);
		if (callee < 0)
			return -EFAULT;
		env->insn_idx = i;
		err = stack_walk(env, callee, frame + 1, depth);
		if (err)
			return err;
	}
	return 0;
}

/* ---- func_info --------------------------------------------------------- */

/* Subprograms that move packet data, themselves or through a callee. */
static void mark_changes_pkt_data(struct xv_env *env)
{
	bool changed = true;

	for (int i = 0; i < env->insn_cnt; i++) {
		const struct xbpf_insn *insn = &env->insns[i];
		const struct xbpf_helper_proto *p;

		if (!xbpf_insn_is_helper_call(insn))
			continue;
		p = xbpf_helper_proto(insn->imm);
		/* A tail-called program may move the packet too. */
		if ((p && p->changes_pkt_data) || insn->imm == XV_HELPER_TAIL_CALL)
			env->subprog[env->aux[i].subprog].changes_pkt_data = true;
	}
	while (changed) {
		changed = false;
		for (int i = 0; i < env->insn_cnt; i++) {
			int callee;

			if (!xbpf_insn_is_pseudo_call(&env->insns[i]))
				continue;
			callee = xv_find_subprog(env, i + env->insns[i].imm + 1);
			if (callee >= 0 && env->subprog[callee].changes_pkt_data &&
			    !env->subprog[env->aux[i].subprog].changes_pkt_data) {
				env->subprog[env->aux[i].subprog].changes_pkt_data = true;
				changed = true;
			}
		}
	}
}

int xv_check_btf_func(struct xv_env *env)
{
	mark_changes_pkt_data(env);
	if (!env->sigs)
		return 0;
	env->insn_idx = 0;
	for (size_t i = 0; i < env->sig_cnt; i++) {
		if (i == 0 && env->sigs[i].insn) {
			xv_err(env, "nonzero insn_off %u for the first func info record\n", env->sigs[i].insn);
			return -EINVAL;
		}
		if (i && env->sigs[i].insn <= env->sigs[i - 1].insn) {
			xv_err(env, "same or smaller insn offset (%u) than previous func info record (%u)",
			       env->sigs[i].insn, env->sigs[i - 1].insn);
			return -EINVAL;
		}
	}
	if (env->sig_cnt != (size_t)env->subprog_cnt) {
		xv_err(env, "number of funcs in func_info doesn't match number of subprogs\n");
		return -EINVAL;
	}
	for (int i = 0; i < env->subprog_cnt; i++) {
		struct xv_subprog *sp = &env->subprog[i];

		if ((uint32_t)sp->start != env->sigs[i].insn) {
			xv_err(env, "func_info BTF section doesn't match subprog layout in BPF program\n");
			return -EINVAL;
		}
		sp->sig = &env->sigs[i];
		if (i && !sp->sig->ret_scalar && sp->has_ld_abs) {
			xv_err(env, "LD_ABS is only allowed in functions that return 'int'.\n");
			return -EINVAL;
		}
		if (i && !sp->sig->ret_scalar && sp->has_tail_call) {
			xv_err(env, "tail_call is only allowed in functions that return 'int'.\n");
			return -EINVAL;
		}
	}
	return 0;
}

int xv_check_max_stack_depth(struct xv_env *env)
{
	return stack_walk(env, 0, 0, 0);
}
