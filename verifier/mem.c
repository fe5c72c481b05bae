// SPDX-License-Identifier: MIT
/*
 * mem.c - loads, stores and atomics (check_mem_access() and its callers):
 * every access goes through a typed pointer, and each pointer type has its
 * own rule (map value bounds, packet range, ctx fields, stack slots).
 * Also ld_imm64 (map references) and the legacy LD_ABS/LD_IND.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

/* ---- memory access ----------------------------------------------------- */

int xv_check_map_access(struct xv_env *env, int regno, int off, int size)
{
	struct xv_reg *reg = &cur_regs(env)[regno];
	uint32_t vs = reg->map ? reg->map->value_size : 0;

	off += reg->off;
	if (reg->smin_value < 0 &&
	    (reg->smin_value == INT64_MIN || (off + reg->smin_value != (int32_t)(off + reg->smin_value)) ||
	     off + reg->smin_value < 0)) {
		xv_err(env, "R%d min value is negative, either use unsigned index or do a if (index >=0) check.\n",
		       regno);
		return -EACCES;
	}
	if (off + reg->smin_value < 0 || (uint64_t)(off + reg->smin_value) + size > vs) {
		xv_err(env, "invalid access to map value, value_size=%u off=%lld size=%d\n", vs,
		       (long long)(off + reg->smin_value), size);
		return -EACCES;
	}
	if (reg->umax_value >= MAX_VAR_OFF) {
		xv_err(env, "R%d unbounded memory access, make sure to bounds check any such access\n",
		       regno);
		return -EACCES;
	}
	if ((uint64_t)off + reg->umax_value + size > vs) {
		xv_err(env, "invalid access to map value, value_size=%u off=%lld size=%d\n", vs,
		       (long long)(off + reg->umax_value), size);
		return -EACCES;
	}
	return 0;
}

int xv_check_packet_access(struct xv_env *env, int regno, int off, int size)
{
	struct xv_reg *reg = &cur_regs(env)[regno];

	if (reg->smin_value < 0) {
		xv_err(env, "R%d min value is negative, either use unsigned index or do a if (index >=0) check.\n",
		       regno);
		return -EACCES;
	}
	off += reg->off;
	if (off < 0 || size > reg->range || off > reg->range - size) {
		xv_err(env, "invalid access to packet, off=%d size=%d, R%d(id=%u,off=%d,r=%d)\n", off,
		       size, regno, reg->id, off, reg->range);
		xv_err(env, "R%d offset is outside of the packet\n", regno);
		return -EACCES;
	}
	if (reg->umax_value + off > MAX_PACKET_OFF) {
		xv_err(env, "R%d unbounded memory access, make sure to bounds check any such access\n",
		       regno);
		return -EACCES;
	}
	return 0;
}

/*
 * Load or store of size bytes at regs[regno]+off.  value_regno: register
 * loaded into (read) or stored (write, -1 for an immediate).
 */
static int check_mem_access(struct xv_env *env, int regno, int off, int size, bool write,
			    int value_regno, bool imm_zero)
{
	struct xv_reg *regs = cur_regs(env);
	struct xv_reg *reg = &regs[regno];
	struct xv_reg loaded;
	const struct xv_reg *value = (write && value_regno >= 0) ? &regs[value_regno] : NULL;
	int err = 0;

	xv_mark_unknown(&loaded);
	switch (reg->type) {
	case PTR_TO_MAP_VALUE:
		err = xv_check_map_access(env, regno, off, size);
		if (!err && !write)
			xv_coerce_reg_to_size(&loaded, size);
		break;
	case PTR_TO_CTX: {
		enum xv_reg_type t;

		if (reg->off || !tnum_equals_const(reg->var_off, 0)) {
			if (!tnum_is_const(reg->var_off)) {
				char tn[48];

				tnum_strn(tn, sizeof(tn), reg->var_off);
				xv_err(env, "variable ctx access var_off=%s disallowed\n", tn);
				return -EACCES;
			}
			xv_err(env, "dereference of modified ctx ptr R%d off=%d disallowed\n", regno,
			       reg->off + (int)reg->var_off.value);
			return -EACCES;
		}
		err = xv_check_ctx_access(env, off, size, write, &t);
		if (!err && !write) {
			if (t == SCALAR_VALUE) {
				xv_coerce_reg_to_size(&loaded, size);
			} else {
				mark_ptr(&loaded, t);
			}
		}
		break;
	}
	case PTR_TO_STACK: {
		struct xv_func_state *f = env->cur->frame[reg->frameno];
		int soff, smax;

		err = xv_check_stack_ptr_off(env, regno, reg, off, size, write, &soff, &smax);
		if (err < 0)
			return err;
		if (err == 1) {
			/* Variable offset: writes scrub the range, reads give a number. */
			if (write) {
				err = xv_stack_write_var(env, f, soff, smax, size);
			} else {
				xv_update_stack_depth(env, f, soff);
				xv_coerce_reg_to_size(&loaded, size);
				err = 0;
			}
		} else if (write)
			err = xv_stack_write(env, f, regno, soff, size, value,
					     value ? (value->type == SCALAR_VALUE &&
					     tnum_equals_const(value->var_off, 0))
						: imm_zero);
		else
			err = xv_stack_read(env, f, soff, size, &loaded);
		break;
	}
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		if (write && !xv_prog_may_access_pkt(env->type, true)) {
			xv_err(env, "cannot write into packet\n");
			return -EACCES;
		}
		err = xv_check_packet_access(env, regno, off, size);
		if (!err && !write)
			xv_coerce_reg_to_size(&loaded, size);
		break;
	default:
		xv_err(env, "R%d invalid mem access '%s'\n", regno, xv_reg_type_str(reg->type));
		return -EACCES;
	}
	if (err)
		return err;
	if (!write && value_regno >= 0) {
		loaded.written = true;
		regs[value_regno] = loaded;
	}
	return 0;
}

int xv_check_ldx(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	struct xv_reg *regs = cur_regs(env);
	int err;

	err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
	err = err ?: xv_check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
	if (err)
		return err;
	err = check_mem_access(env, insn->src_reg, insn->off, size, false, insn->dst_reg, false);
	if (!err && XBPF_MODE(insn->code) == XBPF_MEMSX && regs[insn->dst_reg].type != SCALAR_VALUE) {
		/* A pointer field of the context cannot be sign-extended. */
		xv_err(env, "invalid bpf_context access off=%d size=%d\n", insn->off, size);
		return -EACCES;
	}
	if (err)
		return err;
	if (XBPF_MODE(insn->code) == XBPF_MEMSX && regs[insn->dst_reg].type == SCALAR_VALUE) {
		xv_coerce_reg_to_size_sx(&regs[insn->dst_reg], size);
		regs[insn->dst_reg].written = true;
	}
	return 0;
}

int xv_check_st_stx(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	bool is_stx = XBPF_CLASS(insn->code) == XBPF_STX;
	int err;

	if (is_stx) {
		err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	}
	err = xv_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	return check_mem_access(env, insn->dst_reg, insn->off, size, true,
				is_stx ? insn->src_reg : -1, !is_stx && insn->imm == 0);
}

int xv_check_atomic(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	struct xv_reg *regs = cur_regs(env);
	enum xv_reg_type t;
	int load_reg = -1, err;

	err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
	err = err ?: xv_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if (insn->imm == XBPF_CMPXCHG) {
		err = xv_check_reg_arg(env, 0, SRC_OP);
		if (err)
			return err;
		load_reg = 0;
	} else if (insn->imm & XBPF_FETCH) {
		load_reg = insn->src_reg;
	}
	t = regs[insn->dst_reg].type;
	if (t == PTR_TO_CTX || t == PTR_TO_PACKET || t == PTR_TO_PACKET_META) {
		xv_err(env, "BPF_ATOMIC stores into R%d %s is not allowed\n", insn->dst_reg,
		       xv_reg_type_str(t));
		return -EACCES;
	}
	err = check_mem_access(env, insn->dst_reg, insn->off, size, false, -1, false);
	err = err ?: check_mem_access(env, insn->dst_reg, insn->off, size, true, -1, false);
	if (err)
		return err;
	if (load_reg >= 0) {
		xv_mark_unknown(&regs[load_reg]);
		xv_coerce_reg_to_size(&regs[load_reg], size);
		regs[load_reg].written = true;
	}
	return 0;
}
/* ---- ld_imm64, ld_abs -------------------------------------------------- */

int xv_check_ld_imm(struct xv_env *env, const struct xbpf_insn *insn)
{
	struct xv_reg *regs = cur_regs(env);
	struct xv_reg *dst = &regs[insn->dst_reg];
	const struct xbpf_map_spec *spec;
	int err;

	err = xv_check_reg_arg(env, insn->dst_reg, DST_OP);
	if (err)
		return err;
	if (insn->src_reg == 0) {
		xv_mark_known(dst, (uint64_t)(uint32_t)insn[0].imm | ((uint64_t)(uint32_t)insn[1].imm << 32));
		dst->written = true;
		return 0;
	}
	if (insn->src_reg != XBPF_PSEUDO_MAP_FD && insn->src_reg != XBPF_PSEUDO_MAP_VALUE) {
		xv_err(env, "unrecognized bpf_ld_imm64 insn\n");
		return -EINVAL;
	}
	spec = env->map_spec ? env->map_spec(env->map_priv, insn->imm) : NULL;
	if (!spec) {
		xv_err(env, "fd %d is not pointing to valid bpf_map\n", insn->imm);
		return -EBADF;
	}
	if (insn->src_reg == XBPF_PSEUDO_MAP_FD) {
		mark_ptr(dst, CONST_PTR_TO_MAP);
	} else {
		if (spec->type != XBPF_MAP_ARRAY) {
			xv_err(env, "direct value access on map type %u is not supported\n", spec->type);
			return -EINVAL;
		}
		/* Like the kernel's array: one element, offset inside the value. */
		if (spec->max_entries != 1 || (uint32_t)insn[1].imm >= spec->value_size) {
			xv_err(env, "invalid access to map value pointer, value_size=%u off=%u\n",
			       spec->value_size, (uint32_t)insn[1].imm);
			return -EINVAL;
		}
		mark_ptr(dst, PTR_TO_MAP_VALUE);
		dst->off = insn[1].imm;
	}
	dst->map = spec;
	dst->map_idx = insn->imm;
	dst->written = true;
	return 0;
}

void xv_clobber_caller_saved(struct xv_env *env)
{
	struct xv_reg *regs = cur_regs(env);

	for (int r = 1; r <= 5; r++) {
		mark_not_init(&regs[r]);
		regs[r].written = true;
	}
}

int xv_check_ld_abs(struct xv_env *env, const struct xbpf_insn *insn)
{
	struct xv_reg *regs = cur_regs(env);
	int size = xbpf_opcode_desc(insn->code)->size, err;

	if (env->type != XBPF_PROG_SOCKET_FILTER && env->type != XBPF_PROG_SCHED_CLS &&
	    env->type != XBPF_PROG_SCHED_ACT) {
		xv_err(env, "BPF_LD_[ABS|IND] instructions not allowed for this program type\n");
		return -EINVAL;
	}
	err = xv_check_reg_arg(env, 6, SRC_OP);
	if (err)
		return err;
	if (regs[6].type != PTR_TO_CTX) {
		xv_err(env, "at the time of BPF_LD_ABS|IND R6 != pointer to skb\n");
		return -EINVAL;
	}
	if (XBPF_MODE(insn->code) == XBPF_IND) {
		err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	}
	xv_clobber_caller_saved(env);
	xv_mark_unknown(&regs[0]);
	xv_coerce_reg_to_size(&regs[0], size);
	regs[0].written = true;
	return 0;
}
