// SPDX-License-Identifier: MIT
/*
 * check.c - the path walk (the kernel's do_check()).
 *
 * One abstract state (registers and stack of every active call frame) is
 * pushed through the program one instruction at a time.  A conditional
 * jump whose outcome is not known pushes a copy of the state for the taken
 * side on a stack of pending paths and continues with the fall-through side;
 * both copies are narrowed by what the comparison proves (scalar bounds,
 * null checks by id, packet ranges against data_end).  A path ends at the
 * exit of the main frame, or when it reaches a prune point in a state
 * covered by a checkpoint (state.c), and the next pending path is popped.
 *
 * Memory is only reachable through typed pointers: the context (ctx.c
 * rules), the stack of any active frame (8-byte slots, spills keep the
 * register's full state), map values (value_size from the map spec) and the
 * packet (bytes below the proven range).  Helper calls are checked against
 * the runtime core's prototypes; bpf-to-bpf calls push a frame that gets
 * R1-R5 and returns R0.  We verify as the kernel does for a privileged
 * loader: pointer leaks and uninitialized stack reads are allowed, loops are
 * allowed if the walk proves them bounded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

/* ---- the walk ---------------------------------------------------------- */

static const char *helper_name_cb(void *priv, int32_t id)
{
	const struct xbpf_helper_proto *p = xbpf_helper_proto(id);

	return p ? p->name : NULL;
}

static void print_insn(struct xv_env *env, int idx)
{
	struct xbpf_disasm_cbs cbs = { .helper_name = helper_name_cb, .priv = env };
	char buf[160];

	if (xbpf_disasm_insn(env->insns, env->insn_cnt, idx, &cbs, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(%02x) invalid", env->insns[idx].code);
	xv_log_printf(&env->log, "%d: %s", idx, buf);
}

/*
 * The entry state of subprog: main gets the context in R1; a global
 * function its arguments as its BTF types them (btf_prepare_func_args()):
 * scalars, the context, or memory of the pointed-to size that may be NULL.
 */
static int init_state(struct xv_env *env, int subprog)
{
	const struct xbpf_func_sig *sig = env->subprog[subprog].sig;
	struct xv_func_state *f;

	env->cur = xv_state_new();
	if (!env->cur)
		return -ENOMEM;
	f = xv_frame_new();
	if (!f)
		return -ENOMEM;
	env->cur->frame[0] = f;
	f->callsite = -1;
	f->subprogno = subprog;
	for (int r = 0; r < XV_MAX_REG; r++)
		mark_not_init(&f->regs[r]);
	mark_ptr(&f->regs[XBPF_REG_FP], PTR_TO_STACK);
	if (!subprog) {
		mark_ptr(&f->regs[1], PTR_TO_CTX);
		/* RAW_MEM runs with the memory's length in R2: a value, not known here. */
		if (env->type == XBPF_PROG_RAW_MEM)
			xv_mark_unknown(&f->regs[2]);
		return 0;
	}
	if (env->log.level)
		xv_log_printf(&env->log, "Validating %s() func#%d...\n", sig->name, subprog);
	if (sig->err) {
		xv_err(env, "%s", sig->err_msg);
		return sig->err;
	}
	for (int a = 0; a < sig->arg_cnt; a++) {
		struct xv_reg *reg = &f->regs[a + 1];

		switch (sig->args[a]) {
		case XBPF_FUNC_ARG_SCALAR:
			xv_mark_unknown(reg);
			break;
		case XBPF_FUNC_ARG_CTX:
			mark_ptr(reg, PTR_TO_CTX);
			break;
		case XBPF_FUNC_ARG_MEM:
			mark_ptr(reg, PTR_TO_MEM_OR_NULL);
			reg->mem_size = sig->mem_size[a];
			reg->id = ++env->id_gen;
			break;
		case XBPF_FUNC_ARG_MEM_NONNULL:
			mark_ptr(reg, PTR_TO_MEM);
			reg->mem_size = sig->mem_size[a];
			break;
		}
	}
	return 0;
}

static int static_subprog_checks(struct xv_env *env)
{
	/* With BTF these are allowed (xv_check_btf_func() has the rules). */
	if (env->sigs)
		return 0;
	for (int i = 1; i < env->subprog_cnt; i++) {
		struct xv_subprog *sp = &env->subprog[i];

		for (int j = sp->start; j < sp->end; j++) {
			const struct xbpf_insn *insn = &env->insns[j];

			env->insn_idx = j;
			if (sp->has_ld_abs && XBPF_CLASS(insn->code) == XBPF_LD &&
			    XBPF_MODE(insn->code) != XBPF_IMM) {
				xv_err(env, "LD_ABS is not allowed in subprogs without BTF\n");
				return -EINVAL;
			}
			if (sp->has_tail_call && xbpf_insn_is_helper_call(insn) &&
			    insn->imm == HELPER_TAIL_CALL) {
				xv_err(env, "tail_call is not allowed in subprogs without BTF\n");
				return -EINVAL;
			}
		}
	}
	return 0;
}

/*
 * A tail call in a subprogram: the called program's exit returns to this
 * frame's caller with its R0 (walked first), or the tail call fails and
 * the subprogram goes on (pushed), as the 6.18 kernel has it.
 */
static int tail_call_in_subprog(struct xv_env *env)
{
	struct xv_state *other;
	int err;

	err = xv_push_stack(env, env->insn_idx + 1, env->insn_idx, &other);
	if (err)
		return err;
	xv_mark_unknown(&cur_regs(env)[0]);
	cur_regs(env)[0].written = true;
	return xv_prepare_func_exit(env, &env->insn_idx);
}

/* One instruction, dispatched on its format in the opcode table (isa/). */
static int do_one(struct xv_env *env, const struct xbpf_insn *insn, bool *path_done)
{
	const char *msg = NULL;
	int err = 0;

	/* Reserved fields and register numbers: judged where a path gets, as the kernel does. */
	if (xbpf_insn_check(env->insns, env->insn_cnt, env->insn_idx, &msg)) {
		xv_err(env, "%s\n", msg ? msg : "invalid instruction");
		return -EINVAL;
	}
	switch (xbpf_opcode_desc(insn->code)->fmt) {
	case XBPF_FMT_ALU:
	case XBPF_FMT_ALU_UN:
		err = xv_check_alu(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_LDX:
		err = xv_check_ldx(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_ST:
	case XBPF_FMT_STX:
		err = xv_check_st_stx(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_ATOMIC:
		err = xv_check_atomic(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_LDIMM64:
		err = xv_check_ld_imm(env, insn);
		env->insn_idx += 2;
		break;
	case XBPF_FMT_LDABS:
		err = xv_check_ld_abs(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_CALL:
		env->jmps_processed++;
		/* Under a bpf_spin_lock only the unlock may be called (static subprograms too). */
		if (insn->src_reg == 0 && insn->imm != HELPER_SPIN_UNLOCK && xv_held_lock(env->cur)) {
			xv_err(env, "function calls are not allowed while holding a lock\n");
			return -EINVAL;
		}
		if (insn->src_reg == XBPF_PSEUDO_CALL) {
			err = xv_check_func_call(env, insn, &env->insn_idx);
		} else if (insn->src_reg == 0) {
			err = xv_check_helper_call(env, insn);
			if (!err && insn->imm == HELPER_TAIL_CALL && env->cur->curframe)
				err = tail_call_in_subprog(env);
			else
				env->insn_idx++;
		} else {
			xv_err(env, "unsupported call kind src_reg=%d\n", insn->src_reg);
			err = -EINVAL;
		}
		break;
	case XBPF_FMT_JA:
		env->jmps_processed++;
		env->insn_idx = (int)xbpf_jump_target(insn, env->insn_idx);
		break;
	case XBPF_FMT_EXIT:
		env->jmps_processed++;
		/* A subprogram may return with the lock held: its caller releases it. */
		err = xv_check_resource_leak(env, "BPF_EXIT instruction in main prog",
					     !env->cur->curframe);
		if (err)
			break;
		/* A callee may return nothing: only the caller's reads of R0 are checked. */
		if (env->cur->curframe) {
			err = xv_prepare_func_exit(env, &env->insn_idx);
			break;
		}
		err = xv_check_reg_arg(env, 0, SRC_OP);
		if (err)
			break;
		/* A global function hands back a scalar (check_return_code()). */
		if (cur_frame(env)->subprogno && cur_regs(env)[0].type != SCALAR_VALUE) {
			xv_err(env, "At subprogram exit the register R0 is not a scalar value (%s)\n",
			       xv_reg_type_str(cur_regs(env)[0].type));
			err = -EINVAL;
			break;
		}
		*path_done = true;
		break;
	case XBPF_FMT_JCOND:
		err = xv_check_cond_jmp(env, insn, &env->insn_idx);
		break;
	default:
		xv_err(env, "unknown insn class %d\n", XBPF_CLASS(insn->code));
		err = -EINVAL;
	}
	return err;
}

static int do_check_common(struct xv_env *env, int subprog)
{
	int err;
	bool print_state = true;

	err = init_state(env, subprog);
	if (err)
		return err;
	env->insn_idx = env->subprog[subprog].start;
	env->prev_insn_idx = -1;
	for (;;) {
		const struct xbpf_insn *insn;
		bool path_done = false;
		int idx = env->insn_idx;

		if (idx < 0 || idx >= env->insn_cnt || env->aux[idx].is_ldimm64_hi) {
			xv_err(env, "invalid insn idx %d insn_cnt %d\n", idx, env->insn_cnt);
			return -EFAULT;
		}
		insn = &env->insns[idx];
		if (++env->insn_processed > XBPF_VERIFY_INSN_LIMIT) {
			xv_err(env, "BPF program is too large. Processed %u insn\n", env->insn_processed);
			return -E2BIG;
		}
		if (env->aux[idx].prune_point) {
			err = xv_is_state_visited(env, idx);
			if (err < 0)
				return err;
			if (err == 1) {
				if (env->log.level) {
					if (env->prev_insn_idx >= 0 && print_state)
						xv_log_printf(&env->log, "from %d to %d: safe\n",
							      env->prev_insn_idx, idx);
					else
						xv_log_printf(&env->log, "%d: safe\n", idx);
				}
				path_done = true;
				goto path_end;
			}
		}
		env->aux[idx].seen = true;
		/* Arrivals at jump points go into the path's history (backtracking needs them). */
		if (env->aux[idx].jmp_point && env->prev_insn_idx >= 0) {
			err = xv_push_hist(env, 0, 0, 0, NULL, 0);
			if (err)
				return err;
		}
		if (env->log.level && print_state) {
			if (env->prev_insn_idx >= 0)
				xv_log_printf(&env->log, "\nfrom %d to %d:", env->prev_insn_idx, idx);
			else
				xv_log_printf(&env->log, "%d:", idx);
			xv_print_state(env, cur_frame(env), true);
			xv_log_printf(&env->log, "\n");
			print_state = false;
		}
		{
			size_t line = env->log.pos, after;
			int frame_before = env->cur->curframe;

			/* Kernel layout: "N: (op) insn", at level 2 then "; " and the registers it touched. */
			if (env->log.level) {
				print_insn(env, idx);
				xv_log_printf(&env->log, "\n");
			}
			after = env->log.pos;
			xv_stack_write_begin(env);
			err = do_one(env, insn, &path_done);
			err = err ?: xv_stack_write_commit(env, idx);
			if (err) {
				/* Without a log level, only the failing instruction precedes the message. */
				if (!env->log.level && xv_log_on(&env->log)) {
					char msg[512];
					size_t n = env->log.pos - line;

					if (n >= sizeof(msg))
						n = sizeof(msg) - 1;
					memcpy(msg, env->log.buf + line, n);
					msg[n] = '\0';
					xv_log_reset(&env->log, line);
					print_insn(env, idx);
					xv_log_printf(&env->log, "\n%s", msg);
				}
				env->err_insn = idx;
				return err;
			}
			if (env->log.level >= 2 && env->log.pos == after && after > line &&
			    env->cur->curframe == frame_before && !path_done) {
				uint16_t mask = xv_insn_regs(env, idx);
				int len = (int)(after - 1 - line);

				xv_log_reset(&env->log, after - 1);
				xv_log_printf(&env->log, "%*s; ", len < 38 ? 38 - len : 1, "");
				xv_print_regs(env, cur_frame(env), mask);
				xv_log_printf(&env->log, "\n");
			}
		}
		env->prev_insn_idx = idx;
path_end:
		if (!path_done)
			continue;
		xv_update_branch_counts(env->cur->parent);
		env->cur->parent = NULL;
		if (xv_pop_stack(env))
			break;
		print_state = true;
	}
	/* The kernel keeps a level-1 log only for what failed. */
	if (env->log.level == 1)
		xv_log_reset(&env->log, 0);
	xv_drop_states(env); /* each global function is walked from scratch */
	return 0;
}

/*
 * Main first; then every global function some verified path called, each
 * on its own from its BTF-typed arguments, until no new one is called
 * (the kernel's do_check_main() and do_check_subprogs()).
 */
int xv_do_check(struct xv_env *env)
{
	int err, new_cnt;

	err = static_subprog_checks(env);
	err = err ?: do_check_common(env, 0);
	if (err)
		return err;
	do {
		new_cnt = 0;
		for (int i = 1; i < env->subprog_cnt; i++) {
			struct xv_subprog *sp = &env->subprog[i];

			if (!xv_subprog_is_global(env, i) || !sp->called || sp->verified)
				continue;
			env->insn_idx = sp->start;
			err = do_check_common(env, i);
			if (err)
				return err;
			if (env->log.level)
				xv_log_printf(&env->log,
					      "Func#%d ('%s') is safe for any args that match its prototype\n",
					      i, sp->sig->name);
			sp->verified = true;
			new_cnt++;
		}
	} while (new_cnt);
	return 0;
}

