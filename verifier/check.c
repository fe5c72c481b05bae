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

#define MAX_PACKET_OFF 0xffff
#define MAX_VAR_OFF (1 << 29)
#define HELPER_TAIL_CALL 12

enum { SRC_OP, DST_OP, DST_OP_NO_MARK };

static struct xv_func_state *cur_frame(struct xv_env *env)
{
	return env->cur->frame[env->cur->curframe];
}

static struct xv_reg *cur_regs(struct xv_env *env)
{
	return cur_frame(env)->regs;
}

static bool is_pointer(const struct xv_reg *reg)
{
	return reg->type != SCALAR_VALUE && reg->type != NOT_INIT;
}

static bool is_pkt(const struct xv_reg *reg)
{
	return reg->type == PTR_TO_PACKET || reg->type == PTR_TO_PACKET_META;
}

static void mark_not_init(struct xv_reg *reg)
{
	memset(reg, 0, sizeof(*reg));
	reg->type = NOT_INIT;
}

static void mark_ptr(struct xv_reg *reg, enum xv_reg_type type)
{
	xv_mark_known(reg, 0);
	reg->type = type;
}

static int check_reg_arg(struct xv_env *env, int regno, int t)
{
	struct xv_reg *regs = cur_regs(env);

	if (regno >= XV_MAX_REG) {
		xv_err(env, "R%d is invalid\n", regno);
		return -EINVAL;
	}
	if (t == SRC_OP) {
		if (regs[regno].type == NOT_INIT) {
			xv_err(env, "R%d !read_ok\n", regno);
			return -EACCES;
		}
		return 0;
	}
	if (regno == XBPF_REG_FP) {
		xv_err(env, "frame pointer is read only\n");
		return -EACCES;
	}
	if (t == DST_OP)
		xv_mark_unknown(&regs[regno]);
	regs[regno].written = true;
	return 0;
}

/* ---- stack ------------------------------------------------------------- */

static void update_stack_depth(struct xv_env *env, const struct xv_func_state *f, int off)
{
	struct xv_subprog *sp = &env->subprog[f->subprogno];

	int depth = (-off + XV_SLOT - 1) & ~(XV_SLOT - 1);

	if (depth > sp->stack_depth)
		sp->stack_depth = depth;
}

static int grow_stack(struct xv_func_state *f, int off)
{
	return xv_frame_grow(f, off);
}

/* Byte at fp+off (off < 0) lives in slot (-off-1)/8, at index (off+512)%8. */
static uint8_t *slot_byte(struct xv_func_state *f, int off)
{
	int spi = (-off - 1) / XV_SLOT;

	return &f->stack[spi].slot_type[(off + XBPF_STACK_SIZE) % XV_SLOT];
}

static int stack_access_bounds(struct xv_env *env, int regno, int off, int size, bool write)
{
	if (off < -XBPF_STACK_SIZE || off + size > 0 || size <= 0) {
		xv_err(env, "invalid%s stack R%d off=%d size=%d\n", write ? " write to" : " read from",
		       regno, off, size);
		return -EACCES;
	}
	return 0;
}

static int stack_write(struct xv_env *env, struct xv_func_state *f, int regno, int off, int size,
		       const struct xv_reg *value, bool value_known_zero)
{
	int spi = (-off - 1) / XV_SLOT, err;
	struct xv_stack_slot *slot;

	err = grow_stack(f, off);
	if (err)
		return err;
	update_stack_depth(env, f, off);
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
		uint8_t *t = slot_byte(f, off + i);

		*t = value_known_zero ? STACK_ZERO : STACK_MISC;
	}
	return 0;
}

static int stack_read(struct xv_env *env, struct xv_func_state *f, int off, int size,
		      struct xv_reg *dst)
{
	int spi = (-off - 1) / XV_SLOT;
	struct xv_stack_slot *slot;
	bool all_zero = true;

	update_stack_depth(env, f, off);
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
		uint8_t t = *slot_byte(f, o);

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

/* ---- memory access ----------------------------------------------------- */

static int check_map_access(struct xv_env *env, int regno, int off, int size)
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

static int check_packet_access(struct xv_env *env, int regno, int off, int size)
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
 * A stack access through reg: 0 and *ret_off for a constant offset; 1 and
 * [*ret_off, *ret_max] for a variable one (allowed when privileged, as the
 * whole range is inside the frame).
 */
static int check_stack_ptr_off(struct xv_env *env, int regno, const struct xv_reg *reg, int off,
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
	return stack_access_bounds(env, regno, off, size, write);
}

/* A write somewhere in [lo, hi + size): every byte it may touch becomes data. */
static int stack_write_var(struct xv_env *env, struct xv_func_state *f, int lo, int hi, int size)
{
	int err = grow_stack(f, lo);

	if (err)
		return err;
	update_stack_depth(env, f, lo);
	for (int o = lo; o < hi + size; o++) {
		struct xv_stack_slot *slot = &f->stack[(-o - 1) / XV_SLOT];

		if (slot->slot_type[XV_SLOT - 1] == STACK_SPILL) {
			for (int b = 0; b < XV_SLOT; b++)
				slot->slot_type[b] = STACK_MISC;
			mark_not_init(&slot->spilled);
		}
		*slot_byte(f, o) = STACK_MISC;
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
		err = check_map_access(env, regno, off, size);
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

		err = check_stack_ptr_off(env, regno, reg, off, size, write, &soff, &smax);
		if (err < 0)
			return err;
		if (err == 1) {
			/* Variable offset: writes scrub the range, reads give a number. */
			if (write) {
				err = stack_write_var(env, f, soff, smax, size);
			} else {
				update_stack_depth(env, f, soff);
				xv_coerce_reg_to_size(&loaded, size);
				err = 0;
			}
		} else if (write)
			err = stack_write(env, f, regno, soff, size, value,
					  value ? (value->type == SCALAR_VALUE &&
						   tnum_equals_const(value->var_off, 0))
						: imm_zero);
		else
			err = stack_read(env, f, soff, size, &loaded);
		break;
	}
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		if (write && !xv_prog_may_access_pkt(env->type, true)) {
			xv_err(env, "cannot write into packet\n");
			return -EACCES;
		}
		err = check_packet_access(env, regno, off, size);
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

static int check_ldx(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	struct xv_reg *regs = cur_regs(env);
	int err;

	err = check_reg_arg(env, insn->src_reg, SRC_OP);
	err = err ?: check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
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

static int check_st_stx(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	bool is_stx = XBPF_CLASS(insn->code) == XBPF_STX;
	int err;

	if (is_stx) {
		err = check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	}
	err = check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	return check_mem_access(env, insn->dst_reg, insn->off, size, true,
				is_stx ? insn->src_reg : -1, !is_stx && insn->imm == 0);
}

static int check_atomic(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	struct xv_reg *regs = cur_regs(env);
	enum xv_reg_type t;
	int load_reg = -1, err;

	err = check_reg_arg(env, insn->src_reg, SRC_OP);
	err = err ?: check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if (insn->imm == XBPF_CMPXCHG) {
		err = check_reg_arg(env, 0, SRC_OP);
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

/* ---- ALU --------------------------------------------------------------- */

static const char *op_name(uint8_t op)
{
	static const char *const names[16] = { "+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
					       "neg", "%=", "^=", "=", "s>>=", "endian", "?", "?" };

	return names[op >> 4];
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
	if (ptr->type == PTR_TO_MAP_VALUE_OR_NULL || ptr->type == CONST_PTR_TO_MAP_OR_NULL) {
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

static int check_alu(struct xv_env *env, const struct xbpf_insn *insn)
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
		err = check_reg_arg(env, insn->dst_reg, SRC_OP);
		if (err)
			return err;
		if (is_pointer(dst)) {
			xv_err(env, "R%d pointer arithmetic prohibited\n", insn->dst_reg);
			return -EACCES;
		}
		err = check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
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
		err = check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
		src = &regs[insn->src_reg];
	} else {
		xv_mark_known(&imm_reg, alu32 ? (uint64_t)(uint32_t)insn->imm : (uint64_t)(int64_t)insn->imm);
		src = &imm_reg;
	}
	if (op == XBPF_MOV) {
		err = check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
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
	err = check_reg_arg(env, insn->dst_reg, SRC_OP);
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

		return adjust_ptr_alu(env, insn, dst, &regs[insn->dst_reg], &off);
	}
	if (is_pointer(src)) {
		struct xv_reg off = *dst;

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

/* ---- pending paths and checkpoints -------------------------------------- */

static int push_stack(struct xv_env *env, int insn_idx, int prev_idx, struct xv_state **ret)
{
	struct xv_pending *p;

	if (env->pending_cnt >= XV_MAX_PENDING) {
		xv_err(env, "The sequence of %d jumps is too complex.\n", env->pending_cnt);
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

static void update_branch_counts(struct xv_explored *e)
{
	while (e) {
		if (--e->branches)
			break;
		e = e->parent;
	}
}

/* Take the next pending path; -ENOENT when none is left. */
static int pop_stack(struct xv_env *env)
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
static int is_state_visited(struct xv_env *env, int idx)
{
	struct xv_insn_aux *aux = &env->aux[idx];
	bool add = env->jmps_processed - env->prev_jmps_processed >= 2 &&
		   env->insn_processed - env->prev_insn_processed >= 8;
	struct xv_explored *e, *n, **pprev;

	pprev = &aux->explored;
	while ((e = *pprev)) {
		if (e->branches) {
			/* Still being explored above us: a loop. */
			if (states_maybe_looping(&e->st, env->cur) &&
			    xv_states_equal(env, &e->st, env->cur, true)) {
				xv_err(env, "infinite loop detected at insn %d\n", idx);
				return -EINVAL;
			}
			if (env->jmps_processed - env->prev_jmps_processed < 20 &&
			    env->insn_processed - env->prev_insn_processed < 100)
				add = false;
		} else if (xv_states_equal(env, &e->st, env->cur, false)) {
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

/* ---- branches ---------------------------------------------------------- */

typedef void (*reg_visit_fn)(struct xv_env *env, struct xv_reg *reg, void *priv);

/* Every register and spilled register of every frame of st. */
static void for_each_reg(struct xv_env *env, struct xv_state *st, reg_visit_fn fn, void *priv)
{
	for (int i = 0; i <= st->curframe; i++) {
		struct xv_func_state *f = st->frame[i];

		for (int r = 0; r < XV_MAX_REG; r++)
			fn(env, &f->regs[r], priv);
		for (int s = 0; s < f->nslots; s++)
			if (f->stack[s].slot_type[XV_SLOT - 1] == STACK_SPILL)
				fn(env, &f->stack[s].spilled, priv);
	}
}

struct null_mark {
	uint32_t id;
	bool is_null;
};

static void mark_null_one(struct xv_env *env, struct xv_reg *reg, void *priv)
{
	struct null_mark *m = priv;

	if ((reg->type != PTR_TO_MAP_VALUE_OR_NULL && reg->type != CONST_PTR_TO_MAP_OR_NULL) ||
	    reg->id != m->id)
		return;
	if (m->is_null) {
		bool w = reg->written;

		xv_mark_known(reg, 0);
		reg->written = w;
	} else {
		reg->type = reg->type == CONST_PTR_TO_MAP_OR_NULL ? CONST_PTR_TO_MAP : PTR_TO_MAP_VALUE;
		reg->id = 0;
	}
}

static void mark_ptr_or_null_regs(struct xv_env *env, struct xv_state *st, uint32_t id, bool is_null)
{
	struct null_mark m = { id, is_null };

	for_each_reg(env, st, mark_null_one, &m);
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
	for_each_reg(env, st, pkt_range_one, &m);
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
		for_each_reg(env, st, sync_linked_one, &l);
}

static struct xv_reg *state_reg(struct xv_state *st, int regno)
{
	return &st->frame[st->curframe]->regs[regno];
}

static int check_cond_jmp(struct xv_env *env, const struct xbpf_insn *insn, int *insn_idx)
{
	uint8_t op = XBPF_OP(insn->code);
	bool is32 = XBPF_CLASS(insn->code) == XBPF_JMP32;
	bool use_src = XBPF_SRC(insn->code) == XBPF_X;
	struct xv_reg *regs = cur_regs(env);
	struct xv_reg *dst = &regs[insn->dst_reg], *src, imm_reg;
	struct xv_state *other;
	int pred = -1, err, target = *insn_idx + insn->off + 1;

	err = check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if (use_src) {
		err = check_reg_arg(env, insn->src_reg, SRC_OP);
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
		   dst->type == PTR_TO_MAP_VALUE && (op == XBPF_JEQ || op == XBPF_JNE)) {
		pred = op == XBPF_JNE;
	}
	if (pred == 1) {
		*insn_idx = target;
		return 0;
	}
	if (pred == 0) {
		(*insn_idx)++;
		return 0;
	}
	err = push_stack(env, target, *insn_idx, &other);
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
		   (dst->type == PTR_TO_MAP_VALUE_OR_NULL || dst->type == CONST_PTR_TO_MAP_OR_NULL)) {
		uint32_t id = dst->id;

		/* JEQ: taken side is null.  JNE: fall-through side is null. */
		mark_ptr_or_null_regs(env, other, id, op == XBPF_JEQ);
		mark_ptr_or_null_regs(env, env->cur, id, op == XBPF_JNE);
	} else if (use_src) {
		try_match_pkt_pointers(env, insn, dst, src, env->cur, other);
	}
	return 0;
}

/* ---- ld_imm64, ld_abs -------------------------------------------------- */

static int check_ld_imm(struct xv_env *env, const struct xbpf_insn *insn)
{
	struct xv_reg *regs = cur_regs(env);
	struct xv_reg *dst = &regs[insn->dst_reg];
	const struct xbpf_map_spec *spec;
	int err;

	err = check_reg_arg(env, insn->dst_reg, DST_OP);
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

static void clobber_caller_saved(struct xv_env *env)
{
	struct xv_reg *regs = cur_regs(env);

	for (int r = 1; r <= 5; r++) {
		mark_not_init(&regs[r]);
		regs[r].written = true;
	}
}

static int check_ld_abs(struct xv_env *env, const struct xbpf_insn *insn)
{
	struct xv_reg *regs = cur_regs(env);
	int size = xbpf_opcode_desc(insn->code)->size, err;

	if (env->type != XBPF_PROG_SOCKET_FILTER && env->type != XBPF_PROG_SCHED_CLS &&
	    env->type != XBPF_PROG_SCHED_ACT) {
		xv_err(env, "BPF_LD_[ABS|IND] instructions not allowed for this program type\n");
		return -EINVAL;
	}
	err = check_reg_arg(env, 6, SRC_OP);
	if (err)
		return err;
	if (regs[6].type != PTR_TO_CTX) {
		xv_err(env, "at the time of BPF_LD_ABS|IND R6 != pointer to skb\n");
		return -EINVAL;
	}
	if (XBPF_MODE(insn->code) == XBPF_IND) {
		err = check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	}
	clobber_caller_saved(env);
	xv_mark_unknown(&regs[0]);
	xv_coerce_reg_to_size(&regs[0], size);
	regs[0].written = true;
	return 0;
}

/* ---- calls ------------------------------------------------------------- */

static void clear_pkt_one(struct xv_env *env, struct xv_reg *reg, void *priv)
{
	if (reg->type == PTR_TO_PACKET || reg->type == PTR_TO_PACKET_META ||
	    reg->type == PTR_TO_PACKET_END) {
		bool w = reg->written;

		xv_mark_unknown(reg);
		reg->written = w;
	}
}

/* Packet-moving helpers invalidate every packet pointer, in every frame. */
static void clear_all_pkt_pointers(struct xv_env *env)
{
	for_each_reg(env, env->cur, clear_pkt_one, NULL);
}

static int check_size_arg(struct xv_env *env, int regno, bool zero_ok, uint64_t *ret_max,
			  uint64_t *ret_min)
{
	struct xv_reg *reg = &cur_regs(env)[regno];

	if (reg->type != SCALAR_VALUE) {
		xv_err(env, "R%d type=%s expected=scalar\n", regno, xv_reg_type_str(reg->type));
		return -EACCES;
	}
	if (reg->smin_value < 0) {
		xv_err(env, "R%d min value is negative, either use unsigned or 'var &= const'\n", regno);
		return -EACCES;
	}
	if (reg->umin_value == 0 && !zero_ok) {
		xv_err(env, "R%d invalid zero-sized read: u64=[%" PRIu64 ",%" PRIu64 "]\n", regno,
		       reg->umin_value, reg->umax_value);
		return -EACCES;
	}
	if (reg->umax_value >= (1u << 29)) {
		xv_err(env, "R%d unbounded memory access, use 'var &= const' or 'if (var < const)'\n",
		       regno);
		return -EACCES;
	}
	*ret_max = reg->umax_value;
	*ret_min = reg->umin_value;
	return 0;
}

/* size bytes at the pointer in regno, read (or written when `write`) by a helper. */
static int check_helper_mem(struct xv_env *env, int regno, int size, bool write, bool zero_ok)
{
	struct xv_reg *reg = &cur_regs(env)[regno];

	if (size == 0 && zero_ok)
		return 0;
	if (size == 0) {
		xv_err(env, "invalid zero-sized read\n");
		return -EACCES;
	}
	switch (reg->type) {
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		return check_packet_access(env, regno, 0, size);
	case PTR_TO_MAP_VALUE:
		return check_map_access(env, regno, 0, size);
	case PTR_TO_STACK: {
		struct xv_func_state *f = env->cur->frame[reg->frameno];
		int off;

		if (!tnum_is_const(reg->var_off)) {
			char tn[48];

			tnum_strn(tn, sizeof(tn), reg->var_off);
			xv_err(env, "R%d variable stack access prohibited for !root, var_off=%s\n",
			       regno, tn);
			return -EACCES;
		}
		off = reg->off + (int)reg->var_off.value;
		if (off < -XBPF_STACK_SIZE || off + size > 0) {
			xv_err(env, "invalid%s stack R%d off=%d size=%d\n", write ? " write to" : " read from",
			       regno, off, size);
			return -EACCES;
		}
		if (grow_stack(f, off))
			return -EACCES;
		update_stack_depth(env, f, off);
		for (int i = 0; i < size; i++) {
			uint8_t *t = slot_byte(f, off + i);
			struct xv_stack_slot *slot = &f->stack[(-(off + i) - 1) / XV_SLOT];

			if (write) {
				if (*t == STACK_SPILL) {
					for (int b = 0; b < XV_SLOT; b++)
						slot->slot_type[b] = STACK_MISC;
					mark_not_init(&slot->spilled);
				}
				*t = STACK_MISC;
			}
			/* Reads of uninitialized bytes are fine for a privileged loader. */
		}
		return 0;
	}
	default:
		xv_err(env, "R%d type=%s expected=fp, pkt, pkt_meta, map_value\n", regno,
		       xv_reg_type_str(reg->type));
		return -EACCES;
	}
}

#define H_MAP_LOOKUP 1
#define H_PERF_EVENT_OUTPUT 25
#define H_REDIRECT_MAP 51
#define H_RINGBUF_OUTPUT 130

/* The kernel's check_map_func_compatibility(), for the map types we have. */
static int check_map_func_compat(struct xv_env *env, const struct xbpf_map_spec *map,
				 const struct xbpf_helper_proto *p)
{
	bool ok = true;

	switch (map->type) {
	case XBPF_MAP_RINGBUF:
		ok = p->id == H_RINGBUF_OUTPUT;
		break;
	case XBPF_MAP_DEVMAP:
		ok = p->id == H_REDIRECT_MAP || p->id == H_MAP_LOOKUP;
		break;
	case XBPF_MAP_ARRAY_OF_MAPS:
	case XBPF_MAP_HASH_OF_MAPS:
		ok = p->id == H_MAP_LOOKUP;
		break;
	default:
		break;
	}
	switch (p->id) {
	case H_REDIRECT_MAP:
		ok = ok && map->type == XBPF_MAP_DEVMAP;
		break;
	case H_RINGBUF_OUTPUT:
		ok = ok && map->type == XBPF_MAP_RINGBUF;
		break;
	case H_PERF_EVENT_OUTPUT:
		ok = false; /* needs a perf event array, which the runtime does not have */
		break;
	default:
		break;
	}
	if (!ok) {
		xv_err(env, "cannot pass map_type %u into func bpf_%s#%d\n", map->type, p->name, p->id);
		return -EINVAL;
	}
	return 0;
}

static int check_helper_call(struct xv_env *env, const struct xbpf_insn *insn)
{
	const struct xbpf_helper_proto *p = xbpf_helper_proto(insn->imm);
	struct xv_reg *regs = cur_regs(env);
	const struct xbpf_map_spec *map = NULL;
	int32_t map_idx = -1;
	int err;

	if (!p) {
		xv_err(env, "invalid func unknown#%d\n", insn->imm);
		return -EINVAL;
	}
	if (!(p->prog_types & XBPF_PROG_BIT(env->type))) {
		xv_err(env, "program of this type cannot use helper bpf_%s#%d\n", p->name, insn->imm);
		return -EINVAL;
	}
	for (int a = 0; a < 5; a++) {
		int regno = a + 1;
		struct xv_reg *reg = &regs[regno];
		enum xbpf_arg_type at = p->args[a];
		uint64_t umax = 0, umin = 0;

		if (at == XBPF_ARG_NONE)
			continue;
		err = check_reg_arg(env, regno, SRC_OP);
		if (err)
			return err;
		switch (at) {
		case XBPF_ARG_ANYTHING:
			break;
		case XBPF_ARG_CONST_MAP_PTR:
			if (reg->type != CONST_PTR_TO_MAP) {
				xv_err(env, "R%d type=%s expected=map_ptr\n", regno,
				       xv_reg_type_str(reg->type));
				return -EACCES;
			}
			map = reg->map;
			map_idx = reg->map_idx;
			break;
		case XBPF_ARG_PTR_TO_MAP_KEY:
		case XBPF_ARG_PTR_TO_MAP_VALUE:
			if (!map) {
				xv_err(env, "invalid map_ptr to access map->%s\n",
				       at == XBPF_ARG_PTR_TO_MAP_KEY ? "key" : "value");
				return -EACCES;
			}
			err = check_helper_mem(env, regno,
					       at == XBPF_ARG_PTR_TO_MAP_KEY ? map->key_size : map->value_size,
					       false, false);
			if (err)
				return err;
			break;
		case XBPF_ARG_PTR_TO_MEM:
		case XBPF_ARG_PTR_TO_MEM_OR_NULL:
		case XBPF_ARG_PTR_TO_UNINIT_MEM:
			if (at == XBPF_ARG_PTR_TO_MEM_OR_NULL && xv_reg_is_const(reg) &&
			    reg->var_off.value == 0)
				break;
			if (!is_pointer(reg)) {
				xv_err(env, "R%d type=%s expected=fp, pkt, pkt_meta, map_value\n", regno,
				       xv_reg_type_str(reg->type));
				return -EACCES;
			}
			break; /* size checked with the next argument */
		case XBPF_ARG_CONST_SIZE:
		case XBPF_ARG_CONST_SIZE_OR_ZERO:
		case XBPF_ARG_CONST_ALLOC_SIZE_OR_ZERO: {
			bool zero_ok = at != XBPF_ARG_CONST_SIZE;
			enum xbpf_arg_type prev = a ? p->args[a - 1] : XBPF_ARG_NONE;

			err = check_size_arg(env, regno, zero_ok, &umax, &umin);
			if (err)
				return err;
			if (prev == XBPF_ARG_PTR_TO_MEM || prev == XBPF_ARG_PTR_TO_MEM_OR_NULL ||
			    prev == XBPF_ARG_PTR_TO_UNINIT_MEM) {
				struct xv_reg *mem = &regs[regno - 1];

				/* NULL is memory of size zero only (the kernel checks umax). */
				if (prev == XBPF_ARG_PTR_TO_MEM_OR_NULL && xv_reg_is_const(mem) &&
				    mem->var_off.value == 0 && mem->type == SCALAR_VALUE) {
					if (umax == 0 && zero_ok)
						break;
					xv_err(env, "R%d type=%s expected=fp\n", regno - 1,
					       xv_reg_type_str(mem->type));
					return -EACCES;
				}
				err = check_helper_mem(env, regno - 1, (int)umax,
						       prev == XBPF_ARG_PTR_TO_UNINIT_MEM, zero_ok);
				if (err)
					return err;
			}
			break;
		}
		case XBPF_ARG_PTR_TO_CTX:
			if (reg->type != PTR_TO_CTX) {
				xv_err(env, "R%d type=%s expected=ctx\n", regno, xv_reg_type_str(reg->type));
				return -EACCES;
			}
			if (reg->off || !tnum_equals_const(reg->var_off, 0)) {
				xv_err(env, "dereference of modified ctx ptr R%d off=%d disallowed\n",
				       regno, reg->off);
				return -EACCES;
			}
			break;
		default:
			break;
		}
	}
	if (map) {
		err = check_map_func_compat(env, map, p);
		if (err)
			return err;
	}
	if (p->changes_pkt_data)
		clear_all_pkt_pointers(env);
	clobber_caller_saved(env);
	switch (p->ret) {
	case XBPF_RET_VOID:
		mark_not_init(&regs[0]);
		break;
	case XBPF_RET_PTR_TO_MAP_VALUE_OR_NULL:
		if (!map) {
			xv_err(env, "kernel subsystem misconfigured verifier\n");
			return -EINVAL;
		}
		if ((map->type == XBPF_MAP_ARRAY_OF_MAPS || map->type == XBPF_MAP_HASH_OF_MAPS) &&
		    map->inner) {
			/* The value of a map of maps is a map: usable after a null check. */
			mark_ptr(&regs[0], CONST_PTR_TO_MAP_OR_NULL);
			regs[0].map = map->inner;
		} else {
			mark_ptr(&regs[0], PTR_TO_MAP_VALUE_OR_NULL);
			regs[0].map = map;
		}
		regs[0].map_idx = map_idx;
		regs[0].id = ++env->id_gen;
		break;
	default:
		xv_mark_unknown(&regs[0]);
		break;
	}
	regs[0].written = true;
	return 0;
}

static int check_func_call(struct xv_env *env, const struct xbpf_insn *insn, int *insn_idx)
{
	struct xv_state *st = env->cur;
	struct xv_func_state *caller = cur_frame(env), *callee;
	int target = *insn_idx + insn->imm + 1, subprog;

	if (st->curframe + 1 >= XBPF_MAX_CALL_FRAMES) {
		xv_err(env, "the call stack of %d frames is too deep\n", st->curframe + 2);
		return -E2BIG;
	}
	subprog = xv_find_subprog(env, target);
	if (subprog < 0) {
		xv_err(env, "verifier bug. No program starts at insn %d\n", target);
		return -EFAULT;
	}
	callee = xv_frame_new();
	if (!callee)
		return -ENOMEM;
	callee->callsite = *insn_idx;
	callee->frameno = st->curframe + 1;
	callee->subprogno = subprog;
	for (int r = 0; r < XV_MAX_REG; r++)
		mark_not_init(&callee->regs[r]);
	for (int r = 1; r <= 5; r++)
		callee->regs[r] = caller->regs[r];
	mark_ptr(&callee->regs[XBPF_REG_FP], PTR_TO_STACK);
	callee->regs[XBPF_REG_FP].frameno = callee->frameno;
	for (int r = 1; r <= 5; r++)
		mark_not_init(&caller->regs[r]);
	st->frame[++st->curframe] = callee;
	if (env->log.level) {
		xv_log_printf(&env->log, "caller:\n");
		xv_print_state(env, caller, true);
		xv_log_printf(&env->log, "\ncallee:\n");
		xv_print_state(env, callee, true);
		xv_log_printf(&env->log, "\n");
	}
	*insn_idx = target;
	return 0;
}

static int prepare_func_exit(struct xv_env *env, int *insn_idx)
{
	struct xv_state *st = env->cur;
	struct xv_func_state *callee = cur_frame(env), *caller = st->frame[st->curframe - 1];
	struct xv_reg *r0 = &callee->regs[0];

	if (r0->type == PTR_TO_STACK) {
		xv_err(env, "cannot return stack pointer to the caller\n");
		return -EINVAL;
	}
	caller->regs[0] = *r0;
	caller->regs[0].written = true;
	if (env->log.level) {
		xv_log_printf(&env->log, "returning from callee:\n");
		xv_print_state(env, callee, true);
		xv_log_printf(&env->log, "\nto caller at %d:\n", callee->callsite + 1);
		xv_print_state(env, caller, true);
		xv_log_printf(&env->log, "\n");
	}
	*insn_idx = callee->callsite + 1;
	xv_frame_free(callee);
	st->frame[st->curframe--] = NULL;
	return 0;
}

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

static int init_state(struct xv_env *env)
{
	struct xv_func_state *f;

	env->cur = xv_state_new();
	if (!env->cur)
		return -ENOMEM;
	f = xv_frame_new();
	if (!f)
		return -ENOMEM;
	env->cur->frame[0] = f;
	f->callsite = -1;
	for (int r = 0; r < XV_MAX_REG; r++)
		mark_not_init(&f->regs[r]);
	mark_ptr(&f->regs[1], PTR_TO_CTX);
	/* RAW_MEM runs with the memory's length in R2: a value, not known here. */
	if (env->type == XBPF_PROG_RAW_MEM)
		xv_mark_unknown(&f->regs[2]);
	mark_ptr(&f->regs[XBPF_REG_FP], PTR_TO_STACK);
	return 0;
}

static int static_subprog_checks(struct xv_env *env)
{
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

/* One instruction, dispatched on its format in the opcode table (isa/). */
static int do_one(struct xv_env *env, const struct xbpf_insn *insn, bool *path_done)
{
	int err = 0;

	switch (xbpf_opcode_desc(insn->code)->fmt) {
	case XBPF_FMT_ALU:
	case XBPF_FMT_ALU_UN:
		err = check_alu(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_LDX:
		err = check_ldx(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_ST:
	case XBPF_FMT_STX:
		err = check_st_stx(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_ATOMIC:
		err = check_atomic(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_LDIMM64:
		err = check_ld_imm(env, insn);
		env->insn_idx += 2;
		break;
	case XBPF_FMT_LDABS:
		err = check_ld_abs(env, insn);
		env->insn_idx++;
		break;
	case XBPF_FMT_CALL:
		env->jmps_processed++;
		if (insn->src_reg == XBPF_PSEUDO_CALL) {
			err = check_func_call(env, insn, &env->insn_idx);
		} else if (insn->src_reg == 0) {
			err = check_helper_call(env, insn);
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
		/* A callee may return nothing: only the caller's reads of R0 are checked. */
		if (env->cur->curframe) {
			err = prepare_func_exit(env, &env->insn_idx);
			break;
		}
		err = check_reg_arg(env, 0, SRC_OP);
		if (err)
			break;
		*path_done = true;
		break;
	case XBPF_FMT_JCOND:
		err = check_cond_jmp(env, insn, &env->insn_idx);
		break;
	default:
		xv_err(env, "unknown insn class %d\n", XBPF_CLASS(insn->code));
		err = -EINVAL;
	}
	return err;
}

int xv_do_check(struct xv_env *env)
{
	int err;
	bool print_state = true;

	err = static_subprog_checks(env);
	err = err ?: init_state(env);
	if (err)
		return err;
	env->insn_idx = 0;
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
			err = is_state_visited(env, idx);
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
			err = do_one(env, insn, &path_done);
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
		update_branch_counts(env->cur->parent);
		env->cur->parent = NULL;
		if (pop_stack(env))
			break;
		print_state = true;
	}
	return 0;
}
