// SPDX-License-Identifier: MIT
/*
 * verifier.c - xbpf_verify(): the pass pipeline.
 *
 * Design, after the kernel's bpf_check():
 *
 *   encoding   every instruction alone, through the ISA's opcode table
 *   subprogs   split the program at bpf-to-bpf call targets; jumps stay
 *              inside their subprogram, each one ends in exit or goto
 *   cfg        depth-first walk: reachability, prune points
 *   liveness   backward dataflow of registers, so pruning ignores dead ones
 *   do_check   abstract interpretation, one path at a time, across call
 *              frames; checkpoints at prune points cut paths that reach a
 *              state already proven safe (check.c, state.c)
 *   stack      combined stack of every call chain <= 512 bytes
 *
 * Every pass works on one struct xv_env and returns 0 or -errno; the first
 * failure stops the pipeline and its message, instruction and source line
 * land in struct xbpf_verify_info.  The verifier never runs or rewrites the
 * program: it only sees unresolved instructions (maps by object index).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

static const struct xbpf_map_spec *prog_map_spec(void *priv, int idx)
{
	const struct xbpf_prog *prog = priv;
	struct xbpf_object *obj = xbpf_prog__object(prog);
	struct xbpf_map *map;

	if (!obj || idx < 0 || (size_t)idx >= xbpf_object__map_cnt(obj))
		return NULL;
	map = xbpf_object__map(obj, idx);
	return map ? xbpf_map__spec(map) : NULL;
}

/*
 * The kernel reads a map's contents as constants when programs cannot
 * write it (BPF_F_RDONLY_PROG) and user space no longer can (frozen), and
 * the map gives a direct address: a single-entry array.
 */
static const void *prog_map_rdonly_value(void *priv, int idx)
{
	const struct xbpf_prog *prog = priv;
	struct xbpf_object *obj = xbpf_prog__object(prog);
	struct xbpf_map *map;
	const struct xbpf_map_spec *spec;
	uint32_t zero = 0;

	if (!obj || idx < 0 || (size_t)idx >= xbpf_object__map_cnt(obj))
		return NULL;
	map = xbpf_object__map(obj, idx);
	spec = map ? xbpf_map__spec(map) : NULL;
	if (!spec || !xbpf_map__is_frozen(map) || !(spec->map_flags & XBPF_F_RDONLY_PROG) ||
	    spec->type != XBPF_MAP_ARRAY || spec->max_entries != 1)
		return NULL;
	return xbpf_map__lookup_elem(map, &zero);
}

/*
 * The kernel inlines each bpf_loop call it found fit (optimize_bpf_loop())
 * and its reported stack depth includes the three slots for the loop's
 * variables, after aligning the function's depth to 8 bytes.
 */
static void add_loop_inline_stack(struct xv_env *env)
{
	for (int sp = 0; sp < env->subprog_cnt; sp++) {
		int depth = env->subprog[sp].stack_depth, extra = 0;

		for (int i = env->subprog[sp].start; i < env->subprog[sp].end; i++)
			if (env->aux[i].loop_inline)
				extra = 3 * XV_SLOT + (((depth + 7) & ~7) - depth);
		env->subprog[sp].stack_depth += extra;
	}
}

static void print_summary(struct xv_env *env)
{
	struct xv_log *log = &env->log;

	if (!xv_log_on(log))
		return;
	xv_log_printf(log, "stack depth ");
	for (int i = 0; i < env->subprog_cnt; i++)
		xv_log_printf(log, "%s%d", i ? "+" : "", env->subprog[i].stack_depth);
	if (!env->subprog_cnt)
		xv_log_printf(log, "0");
	xv_log_printf(log, "\n");
	xv_log_printf(log,
		      "processed %u insns (limit %d) max_states_per_insn %u total_states %u "
		      "peak_states %u mark_read %u\n",
		      env->insn_processed, XBPF_VERIFY_INSN_LIMIT, env->max_states_per_insn,
		      env->total_states, env->peak_states, 0u);
}

static void fill_err_line(struct xv_env *env)
{
	struct xbpf_line_desc line;
	struct xbpf_verify_info *info = env->info;

	if (!info || !env->prog || env->err_insn < 0)
		return;
	if (xbpf_prog__line(env->prog, env->err_insn, &line))
		return;
	snprintf(info->err_line, sizeof(info->err_line), "; %s @ %s:%u", line.text ? line.text : "",
		 line.file ? line.file : "?", line.line);
}

static void free_env(struct xv_env *env)
{
	xv_drop_states(env);
	free(env->aux);
	free(env->pending);
	xv_liveness_free(env);
}

/*
 * The pipeline over raw parts; xbpf_verify() feeds it a linked program.  Kept
 * separate so unit tests and fuzzers can drive it without an object.
 */
int xv_verify_env(struct xv_env *env)
{
	struct xbpf_verify_info *info = env->info;
	int err;

	if (env->insn_cnt <= 0 || env->insn_cnt > XBPF_VERIFY_INSN_LIMIT) {
		env->insn_idx = 0;
		xv_err(env, "invalid program length %d\n", env->insn_cnt);
		err = -EINVAL;
		goto out;
	}
	env->aux = calloc(env->insn_cnt, sizeof(*env->aux));
	if (!env->aux) {
		err = -ENOMEM;
		goto out;
	}
	err = xv_check_encoding(env);
	err = err ?: xv_find_subprogs(env);
	err = err ?: xv_check_btf_func(env);
	err = err ?: xv_check_cfg(env);
	err = err ?: xv_compute_liveness(env);
	err = err ?: xv_liveness_init(env);
	err = err ?: xv_do_check(env);
	if (!err) {
		env->insn_idx = 0;
		err = xv_check_max_stack_depth(env);
	}
	if (!err)
		add_loop_inline_stack(env);
out:
	if (err && err != -ENOMEM && !env->err_set)
		xv_err(env, "verification failed (%d)\n", err);
	print_summary(env);
	if (info) {
		info->accepted = !err;
		info->rejected = err && err != -ENOMEM;
		info->insn_processed = env->insn_processed;
		info->func_cnt = env->subprog_cnt;
		for (int i = 0; i < env->subprog_cnt; i++) {
			info->func_start[i] = env->subprog[i].start;
			info->stack_depth[i] = env->subprog[i].stack_depth;
		}
		info->err_insn = err ? env->err_insn : -1;
		if (!err)
			info->err_msg[0] = '\0';
		else
			fill_err_line(env);
		info->log_truncated = env->log.truncated;
	}
	free_env(env);
	return err;
}

int xbpf_verify(const struct xbpf_prog *prog, const struct xbpf_verify_opts *opts,
		struct xbpf_verify_info *ret_info)
{
	struct xv_env env = { 0 };
	struct xbpf_verify_info scratch;

	if (!ret_info)
		ret_info = &scratch;
	memset(ret_info, 0, sizeof(*ret_info));
	if (!prog || !OPTS_VALID(opts, xbpf_verify_opts))
		return -EINVAL;
	env.prog = prog;
	env.insns = xbpf_prog__insns(prog);
	env.insn_cnt = (int)xbpf_prog__insn_cnt(prog);
	env.type = xbpf_prog__type(prog);
	env.map_spec = prog_map_spec;
	env.map_rdonly_value = prog_map_rdonly_value;
	env.map_priv = (void *)prog;
	env.info = ret_info;
	env.sigs = __xbpf_prog_func_sigs(prog, &env.sig_cnt);
	env.err_insn = -1;
	if (OPTS_HAS(opts, log_size))
		xv_log_init(&env.log, opts->log_buf, opts->log_size, opts->log_level);
	else
		env.log.level = OPTS_GET(opts, log_level, 0);
	if (OPTS_GET(opts, prog_flags, 0) & ~(XBPF_F_STRICT_ALIGNMENT | XBPF_F_ANY_ALIGNMENT |
					      XBPF_F_TEST_RND_HI32 | XBPF_F_TEST_STATE_FREQ))
		return -EINVAL;
	env.strict_alignment = OPTS_GET(opts, prog_flags, 0) & XBPF_F_STRICT_ALIGNMENT;
	env.test_state_freq = OPTS_GET(opts, prog_flags, 0) & XBPF_F_TEST_STATE_FREQ;
	if (!env.insns)
		return -EINVAL;
	return xv_verify_env(&env);
}
