// SPDX-License-Identifier: MIT
/*
 * alu.c - ALU instructions: scalar arithmetic goes to bounds.c, pointer
 * arithmetic (adjust_ptr_alu) keeps the fixed offset in reg->off and the
 * variable part in the pointer's own bounds, with the kernel's limits.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

/* ---- ALU --------------------------------------------------------------- */

static const char *op_name(uint8_t op)
{
	static const char *const names[16] = { "+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
					       "neg", "%=", "^=", "=", "s>>=", "endian", "?", "?" };

	return names[op >> 4];
}

static void mark_reg32_known(struct xv_reg *reg, uint64_t imm)
{
	reg->var_off = tnum_with_subreg(reg->var_off, tnum_const((uint32_t)imm));
	reg->s32_min_value = reg->s32_max_value = (int32_t)imm;
	reg->u32_min_value = reg->u32_max_value = (uint32_t)imm;
}

static int sanity_check_offset(struct xv_env *env, const struct xv_reg *reg, int regno)
{
	const char *t = xv_reg_type_str(reg->type);

	if (reg->off >= MAX_VAR_OFF || reg->off <= -MAX_VAR_OFF) {
		xv_err(env, "%s pointer offset %d is not allowed\n", t, reg->off);
		return -EACCES;
	}
	if (reg->smin_value <= -MAX_VAR_OFF) {
		xv_err(env, "value %" PRId64 " makes %s pointer be out of bounds\n", reg->smin_value, t);
		return -EACCES;
	}
	return 0;
}

static int adjust_ptr_alu(struct xv_env *env, const struct xbpf_insn *insn, struct xv_reg *dst,
			  const struct xv_reg *ptr, const struct xv_reg *off_reg)
{
	uint8_t op = XBPF_OP(insn->code);
	bool known = tnum_is_const(off_reg->var_off);
	int64_t val = (int64_t)off_reg->var_off.value;
	struct xv_reg res = *ptr, var;
	const char *tstr = xv_reg_type_str(ptr->type);

	if (XBPF_CLASS(insn->code) != XBPF_ALU64) {
		/* Privileged: a 32-bit difference of pointers is a plain number. */
		if (op == XBPF_SUB) {
			xv_mark_unknown(dst); /* all 64 bits unknown, as in the kernel */
			dst->written = true;
			return 0;
		}
		xv_err(env, "R%d 32-bit pointer arithmetic prohibited\n", insn->dst_reg);
		return -EACCES;
	}
	if (ptr->type == PTR_TO_MAP_VALUE_OR_NULL || ptr->type == CONST_PTR_TO_MAP_OR_NULL ||
	    ptr->type == PTR_TO_RINGBUF_MEM_OR_NULL || ptr->type == PTR_TO_MEM_OR_NULL) {
		xv_err(env, "R%d pointer arithmetic on %s prohibited, null-check it first\n",
		       insn->dst_reg, tstr);
		return -EACCES;
	}
	if (ptr->type == PTR_TO_PACKET_END ||
	    (ptr->type == CONST_PTR_TO_MAP && !(known && val == 0 && op == XBPF_ADD))) {
		xv_err(env, "R%d pointer arithmetic on %s prohibited\n", insn->dst_reg, tstr);
		return -EACCES;
	}
	if (op == XBPF_AND || op == XBPF_OR || op == XBPF_XOR) {
		xv_err(env, "R%d bitwise operator %s on pointer prohibited\n", insn->dst_reg,
		       op_name(op));
		return -EACCES;
	}
	if (op != XBPF_ADD && op != XBPF_SUB) {
		xv_err(env, "R%d pointer arithmetic with %s operator prohibited\n", insn->dst_reg,
		       op_name(op));
		return -EACCES;
	}
	if (off_reg->smin_value == INT64_MIN && !known) {
		xv_err(env, "math between %s pointer and register with unbounded min value is not allowed\n",
		       tstr);
		return -EACCES;
	}
	if (known && (val >= MAX_VAR_OFF || val <= -MAX_VAR_OFF)) {
		xv_err(env, "math between %s pointer and %" PRId64 " is not allowed\n", tstr, val);
		return -EACCES;
	}
	if (!known && off_reg->smin_value <= -MAX_VAR_OFF) {
		xv_err(env, "value %" PRId64 " makes %s pointer be out of bounds\n", off_reg->smin_value,
		       tstr);
		return -EACCES;
	}
	if (op == XBPF_SUB && ptr->type == PTR_TO_STACK) {
		xv_err(env, "R%d subtraction from stack pointer prohibited\n", insn->dst_reg);
		return -EACCES;
	}
	if (known) {
		res.off = op == XBPF_ADD ? ptr->off + (int32_t)val : ptr->off - (int32_t)val;
	} else {
		/* The variable part is tracked like a scalar in the pointer's own bounds. */
		var = *ptr;
		var.type = SCALAR_VALUE;
		xv_scalar_alu(env, &var, off_reg, op, false);
		res.var_off = var.var_off;
		res.smin_value = var.smin_value;
		res.smax_value = var.smax_value;
		res.umin_value = var.umin_value;
		res.umax_value = var.umax_value;
		res.s32_min_value = var.s32_min_value;
		res.s32_max_value = var.s32_max_value;
		res.u32_min_value = var.u32_min_value;
		res.u32_max_value = var.u32_max_value;
		if (is_pkt(ptr)) {
			res.id = ++env->id_gen;
			res.range = 0;
		}
	}
	res.type = ptr->type;
	if (sanity_check_offset(env, &res, insn->dst_reg))
		return -EACCES;
	res.written = true;
	*dst = res;
	return 0;
}

/*
 * A value that is -1 or 0 (a mask compilers build with a shift or a
 * subtraction) and'ed or or'ed with a constant: walk the two values apart,
 * the insn again with 0 on a pushed path and -1 here (maybe_fork_scalars()).
 */
static int maybe_fork_scalars(struct xv_env *env, const struct xbpf_insn *insn, struct xv_reg *dst)
{
	struct xv_state *other;
	struct xv_reg *o;
	bool alu32;
	int err;

	if (dst->smin_value == -1 && dst->smax_value == 0)
		alu32 = false;
	else if (dst->s32_min_value == -1 && dst->s32_max_value == 0)
		alu32 = true;
	else
		return 0;
	err = xv_push_stack(env, env->insn_idx, env->insn_idx, &other);
	if (err)
		return err;
	o = &other->frame[other->curframe]->regs[insn->dst_reg];
	if (alu32) {
		mark_reg32_known(o, 0);
		mark_reg32_known(dst, UINT64_MAX);
	} else {
		bool w = o->written;

		xv_mark_known(o, 0);
		o->written = w;
		w = dst->written;
		xv_mark_known(dst, UINT64_MAX);
		dst->written = w;
	}
	return 0;
}

int xv_check_alu(struct xv_env *env, const struct xbpf_insn *insn)
{
	struct xv_reg *regs = cur_regs(env);
	uint8_t op = XBPF_OP(insn->code);
	bool alu32 = XBPF_CLASS(insn->code) == XBPF_ALU;
	bool use_src = XBPF_SRC(insn->code) == XBPF_X;
	struct xv_reg *dst = &regs[insn->dst_reg];
	struct xv_reg imm_reg;
	const struct xv_reg *src;
	int err;

	if (op == XBPF_END || op == XBPF_NEG) {
		err = xv_check_reg_arg(env, insn->dst_reg, SRC_OP);
		if (err)
			return err;
		/* Privileged: a negated or byte-swapped pointer is just a number. */
		if (is_pointer(dst))
			return xv_check_reg_arg(env, insn->dst_reg, DST_OP);
		err = xv_check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
		if (err)
			return err;
		if (op == XBPF_NEG) {
			xv_mark_known(&imm_reg, 0);
			xv_scalar_alu(env, &imm_reg, dst, XBPF_SUB, alu32);
			*dst = imm_reg;
		} else if (alu32 && XBPF_SRC(insn->code) == XBPF_TO_LE) {
			xv_coerce_reg_to_size(dst, insn->imm / 8);
		} else {
			xv_mark_unknown(dst);
			if (insn->imm < 64)
				xv_coerce_reg_to_size(dst, insn->imm / 8);
		}
		dst->written = true;
		return 0;
	}
	if (use_src) {
		err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
		src = &regs[insn->src_reg];
	} else {
		xv_mark_known(&imm_reg, alu32 ? (uint64_t)(uint32_t)insn->imm : (uint64_t)(int64_t)insn->imm);
		src = &imm_reg;
	}
	if (op == XBPF_MOV) {
		err = xv_check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
		if (err)
			return err;
		if (use_src && insn->off) {
			/* movsx */
			struct xv_reg v = *src;

			if (is_pointer(&v)) {
				xv_mark_unknown(dst);
			} else {
				*dst = v;
				dst->id = 0;
				if (alu32)
					xv_coerce_subreg_to_size_sx(dst, insn->off / 8);
				else
					xv_coerce_reg_to_size_sx(dst, insn->off / 8);
			}
		} else if (use_src && !alu32) {
			struct xv_reg *s = &regs[insn->src_reg];

			if (s->type == SCALAR_VALUE && !s->id && !tnum_is_const(s->var_off)) {
				s->id = ++env->id_gen;
				s->link_off = 0;
				s->link32 = false;
			}
			*dst = *s;
		} else if (use_src) {
			if (is_pointer(src)) {
				xv_mark_unknown(dst);
				xv_coerce_reg_to_size(dst, 4);
			} else if (src->umax_value <= UINT32_MAX) {
				/* Fits in 32 bits: the copy is exact, keep them linked. */
				struct xv_reg *s = &regs[insn->src_reg];

				if (!s->id && !tnum_is_const(s->var_off)) {
					s->id = ++env->id_gen;
					s->link_off = 0;
					s->link32 = false;
				}
				*dst = *s;
			} else {
				*dst = *src;
				dst->id = 0;
				dst->link_off = 0;
				dst->link32 = false;
				xv_zext_32_to_64(dst);
			}
		} else {
			*dst = imm_reg;
		}
		dst->written = true;
		return 0;
	}
	err = xv_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if ((op == XBPF_DIV || op == XBPF_MOD) && !use_src && insn->imm == 0) {
		xv_err(env, "div by zero\n");
		return -EINVAL;
	}
	if ((op == XBPF_LSH || op == XBPF_RSH || op == XBPF_ARSH) && !use_src &&
	    (insn->imm < 0 || insn->imm >= (alu32 ? 32 : 64))) {
		xv_err(env, "invalid shift %d\n", insn->imm);
		return -EINVAL;
	}
	if (is_pointer(dst) && is_pointer(src)) {
		/* Privileged: the difference of two pointers is a plain number. */
		if (op != XBPF_SUB) {
			xv_err(env, "R%d pointer %s pointer prohibited\n", insn->dst_reg, op_name(op));
			return -EACCES;
		}
		/* Like the kernel, not even zero-extended for 32-bit ops. */
		xv_mark_unknown(dst);
		dst->written = true;
		return 0;
	}
	if (is_pointer(dst)) {
		struct xv_reg off = *src;

		/* The pointer's bounds come from the scalar's: it must be precise. */
		if (use_src && (err = xv_mark_precise(env, insn->src_reg)))
			return err;
		return adjust_ptr_alu(env, insn, dst, &regs[insn->dst_reg], &off);
	}
	if (is_pointer(src)) {
		struct xv_reg off = *dst;

		err = xv_mark_precise(env, insn->dst_reg);
		if (err)
			return err;
		if (op == XBPF_SUB && !alu32) {
			xv_err(env, "R%d tried to subtract pointer from scalar\n", insn->dst_reg);
			return -EACCES;
		}
		return adjust_ptr_alu(env, insn, dst, src, &off);
	}
	{
		/* reg += const keeps the link, remembering the offset. */
		bool src_const = alu32 ? tnum_subreg_is_const(src->var_off) : tnum_is_const(src->var_off);
		int64_t k = alu32 ? (int64_t)(int32_t)src->var_off.value : (int64_t)src->var_off.value;
		int64_t new_off = (int64_t)dst->link_off + (op == XBPF_SUB ? -k : k);
		uint32_t id = dst->id;
		bool link = id && src_const && (op == XBPF_ADD || op == XBPF_SUB) &&
			    new_off >= INT32_MIN && new_off <= INT32_MAX && (alu32 || !dst->link32);
		bool link32 = dst->link32 || alu32;

		if ((op == XBPF_AND || op == XBPF_OR) && tnum_is_const(src->var_off)) {
			err = maybe_fork_scalars(env, insn, dst);
			if (err)
				return err;
		}
		err = xv_scalar_alu(env, dst, src, op, alu32);
		if (link) {
			dst->id = id;
			dst->link_off = (int32_t)new_off;
			dst->link32 = link32;
		} else {
			dst->id = 0;
			dst->link_off = 0;
			dst->link32 = false;
		}
	}
	dst->written = true;
	return err;
}
