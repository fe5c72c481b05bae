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

/* __check_mem_access(): [off, off + size) inside [0, mem_size). */
static int mem_in_bounds(struct xv_env *env, int regno, int off, int size, uint32_t mem_size,
			 bool zero_ok)
{
	const struct xv_reg *reg = &cur_regs(env)[regno];
	bool size_ok = size > 0 || (size == 0 && zero_ok);

	if (off >= 0 && size_ok && (uint64_t)off + size <= mem_size)
		return 0;
	if (reg->type == PTR_TO_MAP_VALUE)
		xv_err(env, "invalid access to map value, value_size=%u off=%d size=%d\n", mem_size, off,
		       size);
	else if (reg->type == PTR_TO_PACKET || reg->type == PTR_TO_PACKET_META ||
		 reg->type == PTR_TO_PACKET_END)
		xv_err(env, "invalid access to packet, off=%d size=%d, R%d(id=%u,off=%d,r=%u)\n", off,
		       size, regno, reg->id, off, mem_size);
	else
		xv_err(env, "invalid access to memory, mem_size=%u off=%d size=%d\n", mem_size, off, size);
	return -EACCES;
}

/* check_mem_region_access(): every offset the register's bounds allow. */
static int mem_region_access(struct xv_env *env, int regno, int off, int size, uint32_t mem_size,
			     bool zero_ok)
{
	const struct xv_reg *reg = &cur_regs(env)[regno];
	int err;

	if (reg->smin_value < 0 &&
	    (reg->smin_value == INT64_MIN || off + reg->smin_value != (int32_t)(off + reg->smin_value) ||
	     reg->smin_value + off < 0)) {
		xv_err(env, "R%d min value is negative, either use unsigned index or do a if (index >=0) check.\n",
		       regno);
		return -EACCES;
	}
	err = mem_in_bounds(env, regno, (int)(reg->smin_value + off), size, mem_size, zero_ok);
	if (err) {
		xv_err(env, "R%d min value is outside of the allowed memory range\n", regno);
		return err;
	}
	if (reg->umax_value >= MAX_VAR_OFF) {
		xv_err(env, "R%d unbounded memory access, make sure to bounds check any such access\n",
		       regno);
		return -EACCES;
	}
	err = mem_in_bounds(env, regno, (int)(reg->umax_value + off), size, mem_size, zero_ok);
	if (err) {
		xv_err(env, "R%d max value is outside of the allowed memory range\n", regno);
		return err;
	}
	return 0;
}

int xv_check_mem_region(struct xv_env *env, int regno, int off, int size, uint32_t mem_size,
			bool zero_ok)
{
	return mem_region_access(env, regno, off, size, mem_size, zero_ok);
}

int xv_check_map_access(struct xv_env *env, int regno, int off, int size, bool zero_ok)
{
	const struct xv_reg *reg = &cur_regs(env)[regno];
	const struct xbpf_map_spec *map = reg->map;
	int err = mem_region_access(env, regno, off, size, map ? map->value_size : 0, zero_ok);

	/* A lock is reached by bpf_spin_lock() only: no byte of it by any access. */
	if (!err && map && map->has_spin_lock &&
	    reg->smin_value + off < (int64_t)map->spin_lock_off + 4 &&
	    (int64_t)map->spin_lock_off < (int64_t)(reg->umax_value + off + size)) {
		xv_err(env, "bpf_spin_lock cannot be accessed directly by load/store\n");
		return -EACCES;
	}
	return err;
}

/* BPF_F_RDONLY_PROG / BPF_F_WRONLY_PROG maps (check_map_access_type()). */
int xv_check_map_access_type(struct xv_env *env, int regno, int off, int size, bool write)
{
	const struct xbpf_map_spec *map = cur_regs(env)[regno].map;
	uint32_t flags = map ? map->map_flags : 0;

	if (write && (flags & XBPF_F_RDONLY_PROG)) {
		xv_err(env, "write into map forbidden, value_size=%u off=%d size=%d\n", map->value_size,
		       off, size);
		return -EACCES;
	}
	if (!write && !(flags & XBPF_F_RDONLY_PROG) && (flags & XBPF_F_WRONLY_PROG)) {
		xv_err(env, "read from map forbidden, value_size=%u off=%d size=%d\n", map->value_size,
		       off, size);
		return -EACCES;
	}
	return 0;
}

int xv_check_packet_access(struct xv_env *env, int regno, int off, int size, bool zero_ok)
{
	const struct xv_reg *reg = &cur_regs(env)[regno];
	int err;

	if (reg->smin_value < 0) {
		xv_err(env, "R%d min value is negative, either use unsigned index or do a if (index >=0) check.\n",
		       regno);
		return -EACCES;
	}
	err = reg->range < 0 ? -EINVAL : mem_in_bounds(env, regno, off, size, (uint32_t)reg->range, zero_ok);
	if (err) {
		xv_err(env, "R%d offset is outside of the packet\n", regno);
		return err;
	}
	return 0;
}

/* __check_ptr_off_reg(): a pointer used as it came, at most with a fixed offset. */
int xv_check_ptr_off_reg(struct xv_env *env, const struct xv_reg *reg, int regno, bool fixed_off_ok)
{
	const char *t = xv_reg_type_str(reg->type);
	char tn[48];

	if (reg->off < 0) {
		xv_err(env, "negative offset %s ptr R%d off=%d disallowed\n", t, regno, reg->off);
		return -EACCES;
	}
	if (!fixed_off_ok && reg->off) {
		xv_err(env, "dereference of modified %s ptr R%d off=%d disallowed\n", t, regno, reg->off);
		return -EACCES;
	}
	if (!tnum_is_const(reg->var_off) || reg->var_off.value) {
		tnum_strn(tn, sizeof(tn), reg->var_off);
		xv_err(env, "variable %s access var_off=%s disallowed\n", t, tn);
		return -EACCES;
	}
	return 0;
}

static void tnum_str_or_const(char *buf, size_t size, struct tnum t)
{
	if (tnum_is_const(t))
		snprintf(buf, size, "%" PRId64, (int64_t)t.value);
	else
		tnum_strn(buf, size, t);
}

/* check_ptr_alignment(): the stack always, the rest in strict mode (packets as if NET_IP_ALIGN 2). */
int xv_check_ptr_alignment(struct xv_env *env, const struct xv_reg *reg, int off, int size,
			   bool strict_once)
{
	bool strict = env->strict_alignment || strict_once;
	const char *desc = "";
	struct tnum at;
	char tn[48];

	switch (reg->type) {
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		if (!strict || size == 1)
			return 0;
		at = tnum_add(reg->var_off, tnum_const((uint64_t)(int64_t)(2 + reg->off + off)));
		if (!tnum_is_aligned(at, size)) {
			tnum_str_or_const(tn, sizeof(tn), reg->var_off);
			xv_err(env, "misaligned packet access off %d+%s+%d+%d size %d\n", 2, tn, reg->off,
			       off, size);
			return -EACCES;
		}
		return 0;
	case PTR_TO_MAP_VALUE:
		desc = "value ";
		break;
	case PTR_TO_CTX:
		desc = "context ";
		break;
	case PTR_TO_STACK:
		desc = "stack ";
		strict = true;
		break;
	default:
		break;
	}
	if (!strict || size == 1)
		return 0;
	at = tnum_add(reg->var_off, tnum_const((uint64_t)(int64_t)(reg->off + off)));
	if (!tnum_is_aligned(at, size)) {
		tnum_str_or_const(tn, sizeof(tn), reg->var_off);
		xv_err(env, "misaligned %saccess off %s+%d+%d size %d\n", desc, tn, reg->off, off, size);
		return -EACCES;
	}
	return 0;
}

/*
 * A load from a map value: a constant when the map is frozen read-only and
 * the offset is known (bpf_map_direct_read()), else unknown.  The bounds
 * are checked already.
 */
static int map_value_read(struct xv_env *env, const struct xv_reg *reg, int off, int size,
			  bool is_ldsx, struct xv_reg *dst)
{
	const uint8_t *value = NULL;
	uint64_t val;
	int64_t map_off;

	if (tnum_is_const(reg->var_off) && env->map_rdonly_value && env->map_spec &&
	    env->map_spec(env->map_priv, reg->map_idx) == reg->map)
		value = env->map_rdonly_value(env->map_priv, reg->map_idx);
	if (!value) {
		xv_mark_unknown(dst);
		return 0;
	}
	map_off = off + (int64_t)reg->var_off.value;
	switch (size) {
	case 1: {
		uint8_t v = value[map_off];

		val = is_ldsx ? (uint64_t)(int64_t)(int8_t)v : v;
		break;
	}
	case 2: {
		uint16_t v;

		memcpy(&v, value + map_off, sizeof(v));
		val = is_ldsx ? (uint64_t)(int64_t)(int16_t)v : v;
		break;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, value + map_off, sizeof(v));
		val = is_ldsx ? (uint64_t)(int64_t)(int32_t)v : v;
		break;
	}
	case 8:
		memcpy(&val, value + map_off, sizeof(val));
		break;
	default:
		return -EINVAL;
	}
	xv_mark_known(dst, val);
	return 0;
}

/*
 * Load or store of size bytes at regs[regno]+off (check_mem_access()).
 * value_regno: the register loaded into (read) or stored (write); -1 for
 * an immediate store or an access that only probes (atomics).
 */
int xv_check_mem_access(struct xv_env *env, int regno, int off, int size, bool write, int value_regno,
			bool strict_once, bool is_ldsx)
{
	struct xv_reg *regs = cur_regs(env);
	struct xv_reg *reg = &regs[regno];
	int err;

	err = xv_check_ptr_alignment(env, reg, off, size, strict_once);
	if (err)
		return err;
	off += reg->off;
	switch (reg->type) {
	case PTR_TO_MAP_VALUE:
		err = xv_check_map_access_type(env, regno, off, size, write);
		err = err ?: xv_check_map_access(env, regno, off, size, false);
		if (!err && !write && value_regno >= 0)
			err = map_value_read(env, reg, off, size, is_ldsx, &regs[value_regno]);
		break;
	case PTR_TO_CTX: {
		enum xv_reg_type t;

		err = xv_check_ptr_off_reg(env, reg, regno, false);
		if (err)
			return err;
		err = xv_check_ctx_access(env, off, size, write, &t);
		if (!err && !write && value_regno >= 0) {
			if (t == SCALAR_VALUE)
				xv_mark_unknown(&regs[value_regno]);
			else
				mark_ptr(&regs[value_regno], t);
		}
		break;
	}
	case PTR_TO_STACK:
		err = xv_stack_bounds(env, regno, off, size, write);
		if (err)
			return err;
		if (write)
			err = xv_stack_write(env, regno, off, size, value_regno);
		else
			err = xv_stack_read(env, regno, off, size, value_regno);
		break;
	case PTR_TO_MAP_KEY:
		err = mem_region_access(env, regno, off, size, reg->map ? reg->map->key_size : 0, false);
		if (!err && !write && value_regno >= 0)
			xv_mark_unknown(&regs[value_regno]);
		break;
	case PTR_TO_MEM:
	case PTR_TO_RINGBUF_MEM:
		/* Privileged: a pointer stored into the record is only a number to the reader. */
		err = mem_region_access(env, regno, off, size, reg->mem_size, false);
		if (!err && !write && value_regno >= 0)
			xv_mark_unknown(&regs[value_regno]);
		break;
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		if (write && !xv_prog_may_access_pkt(env->type, true)) {
			xv_err(env, "cannot write into packet\n");
			return -EACCES;
		}
		err = xv_check_packet_access(env, regno, off, size, false);
		if (!err && !write && value_regno >= 0)
			xv_mark_unknown(&regs[value_regno]);
		break;
	default:
		xv_err(env, "R%d invalid mem access '%s'\n", regno, xv_reg_type_str(reg->type));
		return -EACCES;
	}
	if (err)
		return err;
	if (!write && value_regno >= 0) {
		struct xv_reg *dst = &regs[value_regno];

		dst->written = true;
		if (size < XV_SLOT && dst->type == SCALAR_VALUE) {
			if (is_ldsx)
				xv_coerce_reg_to_size_sx(dst, size);
			else
				xv_coerce_reg_to_size(dst, size);
		}
	}
	return 0;
}

/*
 * The kernel rejects one instruction used through the context on one path
 * and through another pointer on another (save_aux_ptr_type()): its
 * rewrite of context accesses is per instruction.
 */
static int save_aux_ptr_type(struct xv_env *env, enum xv_reg_type type)
{
	enum xv_reg_type *prev = &env->aux[env->insn_idx].ptr_type;

	if (*prev == NOT_INIT)
		*prev = type;
	else if (type != *prev && (type == PTR_TO_CTX || *prev == PTR_TO_CTX)) {
		xv_err(env, "same insn cannot be used with different pointers\n");
		return -EINVAL;
	}
	return 0;
}

int xv_check_ldx(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	struct xv_reg *regs = cur_regs(env);
	bool ldsx = XBPF_MODE(insn->code) == XBPF_MEMSX;
	enum xv_reg_type src_type;
	int err;

	err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
	err = err ?: xv_check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
	if (err)
		return err;
	src_type = regs[insn->src_reg].type;
	err = xv_check_mem_access(env, insn->src_reg, insn->off, size, false, insn->dst_reg, false, ldsx);
	if (!err && ldsx && regs[insn->dst_reg].type != SCALAR_VALUE) {
		/* A pointer field of the context cannot be sign-extended. */
		xv_err(env, "invalid bpf_context access off=%d size=%d\n", insn->off, size);
		return -EACCES;
	}
	return err ?: save_aux_ptr_type(env, src_type);
}

int xv_check_st_stx(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	bool is_stx = XBPF_CLASS(insn->code) == XBPF_STX;
	enum xv_reg_type dst_type;
	int err;

	if (is_stx) {
		err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	}
	err = xv_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	dst_type = cur_regs(env)[insn->dst_reg].type;
	err = xv_check_mem_access(env, insn->dst_reg, insn->off, size, true, is_stx ? insn->src_reg : -1,
				  false, false);
	return err ?: save_aux_ptr_type(env, dst_type);
}

int xv_check_atomic(struct xv_env *env, const struct xbpf_insn *insn)
{
	int size = xbpf_opcode_desc(insn->code)->size;
	struct xv_reg *regs = cur_regs(env);
	enum xv_reg_type t;
	int load_reg = -1, err;

	err = xv_check_reg_arg(env, insn->src_reg, SRC_OP);
	err = err ?: xv_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (!err && insn->imm == XBPF_CMPXCHG)
		err = xv_check_reg_arg(env, 0, SRC_OP);
	if (err)
		return err;
	t = regs[insn->dst_reg].type;
	if (t == PTR_TO_CTX || t == PTR_TO_PACKET || t == PTR_TO_PACKET_META) {
		xv_err(env, "BPF_ATOMIC stores into R%d %s is not allowed\n", insn->dst_reg,
		       xv_reg_type_str(t));
		return -EACCES;
	}
	if (insn->imm & XBPF_FETCH) {
		load_reg = insn->imm == XBPF_CMPXCHG ? 0 : insn->src_reg;
		err = xv_check_reg_arg(env, load_reg, DST_OP);
		if (err)
			return err;
	}
	/* Read (and fill load_reg as a load would), then write the same bytes. */
	err = xv_check_mem_access(env, insn->dst_reg, insn->off, size, false, -1, true, false);
	if (!err && load_reg >= 0)
		err = xv_check_mem_access(env, insn->dst_reg, insn->off, size, false, load_reg, true,
					  false);
	return err ?: xv_check_mem_access(env, insn->dst_reg, insn->off, size, true, -1, true, false);
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
	if (insn->src_reg == XBPF_PSEUDO_FUNC) {
		/* A callback: the kernel wants BTF, and static linkage, for it. */
		int subprog = xv_find_subprog(env, env->insn_idx + insn->imm + 1);

		if (!env->sigs) {
			xv_err(env, "missing btf func_info\n");
			return -EINVAL;
		}
		if (subprog < 0 || !env->subprog[subprog].sig || env->subprog[subprog].sig->global) {
			xv_err(env, "callback function not static\n");
			return -EINVAL;
		}
		mark_ptr(dst, PTR_TO_FUNC);
		dst->subprogno = (uint32_t)subprog;
		dst->written = true;
		return 0;
	}
	if (insn->src_reg != XBPF_PSEUDO_MAP_FD && insn->src_reg != XBPF_PSEUDO_MAP_VALUE) {
		xv_err(env, "unrecognized bpf_ld_imm64 insn\n");
		return -EINVAL;
	}
	spec = env->map_spec ? env->map_spec(env->map_priv, insn->imm) : NULL;
	if (spec && spec->has_spin_lock &&
	    (env->type == XBPF_PROG_SOCKET_FILTER || env->type == XBPF_PROG_TRACEPOINT)) {
		xv_err(env, "%s progs cannot use bpf_spin_lock yet\n",
		       env->type == XBPF_PROG_SOCKET_FILTER ? "socket filter" : "tracing");
		return -EINVAL;
	}
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
	/* The load may end the program: nothing may be held across it. */
	err = err ?: xv_check_resource_leak(env, "BPF_LD_[ABS|IND]", true);
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
