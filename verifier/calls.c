// SPDX-License-Identifier: MIT
/*
 * calls.c - helper calls against their prototypes, and bpf-to-bpf calls:
 * a call pushes a frame that gets R1-R5, exit pops it and hands R0 back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

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
void xv_clear_all_pkt_pointers(struct xv_env *env)
{
	xv_for_each_reg(env, env->cur, clear_pkt_one, NULL);
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

/*
 * size bytes at the pointer in regno, read by a helper, or written when
 * `write` (check_helper_mem_access()).  *raw_regno is set when the helper
 * fills uninitialized stack at a constant offset, so the caller marks the
 * bytes written once the call is done.
 */
static int check_helper_mem(struct xv_env *env, int regno, int size, bool write, bool zero_ok,
			    bool raw_mode, int *raw_regno)
{
	struct xv_reg *reg = &cur_regs(env)[regno];

	switch (reg->type) {
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		return xv_check_packet_access(env, regno, reg->off, size, zero_ok);
	case PTR_TO_MAP_VALUE:
		if (xv_check_map_access_type(env, regno, reg->off, size, write))
			return -EACCES;
		return xv_check_map_access(env, regno, reg->off, size, zero_ok);
	case PTR_TO_RINGBUF_MEM:
		return xv_check_mem_region(env, regno, reg->off, size, reg->mem_size, zero_ok);
	case PTR_TO_MEM:
		return xv_check_mem_region(env, regno, reg->off, size, reg->mem_size, zero_ok);
	case PTR_TO_MAP_KEY:
		return xv_check_mem_region(env, regno, reg->off, size,
					   reg->map ? reg->map->key_size : 0, zero_ok);
	case PTR_TO_STACK:
		if (raw_mode && tnum_is_const(reg->var_off) && raw_regno)
			*raw_regno = regno;
		return xv_check_stack_range(env, regno, reg->off, size, zero_ok, write,
					    raw_mode && tnum_is_const(reg->var_off));
	default:
		/* Zero bytes from NULL are fine, whatever the pointer type. */
		if (zero_ok && size == 0 && reg->type == SCALAR_VALUE && xv_reg_is_const(reg) &&
		    reg->var_off.value == 0)
			return 0;
		xv_err(env, "R%d type=%s expected=fp\n", regno, xv_reg_type_str(reg->type));
		return -EACCES;
	}
}

#define H_MAP_LOOKUP 1
#define H_TAIL_CALL 12
#define H_SPIN_LOCK 93
#define H_SPIN_UNLOCK 94
#define H_PERF_EVENT_OUTPUT 25
#define H_REDIRECT_MAP 51
#define H_RINGBUF_OUTPUT 130
#define H_RINGBUF_RESERVE 131
#define H_RINGBUF_QUERY 134
#define H_MAP_LOOKUP_PERCPU 195

static bool is_percpu_map(uint32_t type)
{
	return type == XBPF_MAP_PERCPU_HASH || type == XBPF_MAP_PERCPU_ARRAY ||
	       type == XBPF_MAP_LRU_PERCPU_HASH;
}

static bool for_each_map(uint32_t type)
{
	return type == XBPF_MAP_ARRAY || type == XBPF_MAP_PERCPU_ARRAY || type == XBPF_MAP_HASH ||
	       type == XBPF_MAP_PERCPU_HASH || type == XBPF_MAP_LRU_HASH ||
	       type == XBPF_MAP_LRU_PERCPU_HASH;
}

/* The kernel's check_map_func_compatibility(), for the map types we have. */
static int check_map_func_compat(struct xv_env *env, const struct xbpf_map_spec *map,
				 const struct xbpf_helper_proto *p)
{
	bool ok = true;

	switch (map->type) {
	case XBPF_MAP_RINGBUF:
		ok = p->id == H_RINGBUF_OUTPUT || p->id == H_RINGBUF_QUERY ||
		     p->id == H_RINGBUF_RESERVE;
		break;
	case XBPF_MAP_DEVMAP:
		ok = p->id == H_REDIRECT_MAP || p->id == H_MAP_LOOKUP;
		break;
	case XBPF_MAP_ARRAY_OF_MAPS:
	case XBPF_MAP_HASH_OF_MAPS:
		ok = p->id == H_MAP_LOOKUP;
		break;
	case XBPF_MAP_PROG_ARRAY:
		ok = p->id == H_TAIL_CALL;
		break;
	default:
		break;
	}
	switch (p->id) {
	case H_TAIL_CALL:
		/* With subprograms too: this kernel's JIT allows tail calls in them. */
		ok = ok && map->type == XBPF_MAP_PROG_ARRAY;
		break;
	case H_REDIRECT_MAP:
		ok = ok && map->type == XBPF_MAP_DEVMAP;
		break;
	case H_RINGBUF_OUTPUT:
	case H_RINGBUF_QUERY:
	case H_RINGBUF_RESERVE:
		ok = ok && map->type == XBPF_MAP_RINGBUF;
		break;
	case H_MAP_LOOKUP_PERCPU:
		ok = ok && is_percpu_map(map->type);
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

/* The kernel's license_is_gpl_compatible(); a raw program without an object is GPL. */
static bool prog_is_gpl(const struct xv_env *env)
{
	static const char *const gpl[] = { "GPL", "GPL v2", "GPL and additional rights",
					   "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL" };
	const struct xbpf_object *obj = env->prog ? xbpf_prog__object(env->prog) : NULL;
	const char *license = obj ? xbpf_object__license(obj) : "GPL";

	for (size_t i = 0; i < sizeof(gpl) / sizeof(gpl[0]); i++)
		if (license && !strcmp(license, gpl[i]))
			return true;
	return false;
}

/* The memory argument at regno, size bytes (a fixed size or the next argument's bounds). */
static bool is_mem_arg(enum xbpf_arg_type at)
{
	return at == XBPF_ARG_PTR_TO_MEM || at == XBPF_ARG_PTR_TO_MEM_OR_NULL ||
	       at == XBPF_ARG_PTR_TO_UNINIT_MEM || at == XBPF_ARG_PTR_TO_RW_MEM ||
	       at == XBPF_ARG_PTR_TO_FIXED_MEM;
}

/*
 * The callback's first walk from a helper that calls it (push_callback_call()):
 * a pending path enters the callback in a new frame, with its arguments as
 * the helper gives them; this path goes on past the call as if the helper
 * were done.  The callback's exit comes back to the helper call, which
 * pushes the next walk until the states converge (prune.c) or, for
 * bpf_loop, the walks reach the loop count's largest value.
 */
static int callback_call(struct xv_env *env, const struct xbpf_insn *insn, int subprog,
			 const struct xbpf_map_spec *map)
{
	struct xv_state *st = env->cur, *cb;
	struct xv_func_state *caller = cur_frame(env), *callee;
	struct xv_reg *regs = caller->regs;
	int err;

	if (insn->imm == HELPER_FOR_EACH_MAP_ELEM && !for_each_map(map->type)) {
		/* Maps without a for_each walk (the kernel's map_for_each_callback). */
		xv_err(env, "callback function not allowed for map\n");
		return -524; /* ENOTSUPP, as the kernel answers */
	}
	if (insn->imm == HELPER_LOOP) {
		struct xv_insn_aux *aux = &env->aux[env->insn_idx];
		bool flags0 = xv_reg_is_const(&regs[4]) && regs[4].var_off.value == 0;

		/*
		 * The kernel inlines a bpf_loop whose callback and zero flags are
		 * the same on every path, and reports the three stack slots that
		 * takes (update_loop_inline_state()); a zero flags it relied on.
		 */
		if (flags0 && (err = xv_mark_precise(env, 4)))
			return err;
		if (!aux->loop_inline_seen) {
			aux->loop_inline_seen = true;
			aux->loop_inline = flags0;
			aux->loop_callback = subprog;
		} else if (aux->loop_inline) {
			aux->loop_inline = flags0 && aux->loop_callback == subprog;
		}
		/* Whether the loop is done is decided on R1's bounds. */
		err = xv_mark_precise(env, 1);
		if (err)
			return err;
		if (caller->callback_depth >= regs[1].umax_value) {
			caller->callback_depth = 0;
			if (env->log.level >= 2)
				xv_log_printf(&env->log, "frame%d bpf_loop iteration limit reached\n",
					      st->curframe);
			return 0;
		}
	}
	if (st->curframe + 1 >= XBPF_MAX_CALL_FRAMES) {
		xv_err(env, "the call stack of %d frames is too deep\n", st->curframe + 2);
		return -E2BIG;
	}
	err = xv_push_stack(env, env->subprog[subprog].start, env->insn_idx, &cb);
	if (err)
		return err;
	callee = xv_frame_new();
	if (!callee)
		return -ENOMEM;
	callee->callsite = env->insn_idx;
	callee->frameno = cb->curframe + 1;
	callee->subprogno = subprog;
	callee->in_callback_fn = true;
	for (int r = 0; r < XV_MAX_REG; r++)
		mark_not_init(&callee->regs[r]);
	mark_ptr(&callee->regs[XBPF_REG_FP], PTR_TO_STACK);
	callee->regs[XBPF_REG_FP].frameno = callee->frameno;
	if (insn->imm == HELPER_LOOP) {
		/* callback(u64 index, void *ctx) */
		xv_mark_unknown(&callee->regs[1]);
		callee->regs[2] = regs[3];
	} else {
		/* callback(struct bpf_map *map, void *key, void *value, void *ctx) */
		callee->regs[1] = regs[1];
		mark_ptr(&callee->regs[2], PTR_TO_MAP_KEY);
		callee->regs[2].map = map;
		mark_ptr(&callee->regs[3], PTR_TO_MAP_VALUE);
		callee->regs[3].map = map;
		callee->regs[4] = regs[3];
	}
	cb->frame[++cb->curframe] = callee;
	cb->callback_unroll_depth++;
	cb->frame[cb->curframe - 1]->callback_depth++;
	caller->callback_depth = 0;
	return 0;
}

int xv_check_helper_call(struct xv_env *env, const struct xbpf_insn *insn)
{
	const struct xbpf_helper_proto *p = xbpf_helper_proto(insn->imm);
	struct xv_reg *regs = cur_regs(env);
	const struct xbpf_map_spec *map = NULL;
	int32_t map_idx = -1;
	int err, raw_regno = -1, raw_size = 0, release_regno = 0;
	int64_t const_key = -1;
	/* The reference an argument carries (at most one), the size of a record asked for. */
	uint32_t ref_obj_id = 0, mem_size = 0;
	int callback = -1; /* the subprogram an XBPF_ARG_PTR_TO_FUNC names */

	if (!p) {
		xv_err(env, "invalid func unknown#%d\n", insn->imm);
		return -EINVAL;
	}
	if (!(p->prog_types & XBPF_PROG_BIT(env->type))) {
		xv_err(env, "program of this type cannot use helper bpf_%s#%d\n", p->name, insn->imm);
		return -EINVAL;
	}
	if (p->gpl_only && !prog_is_gpl(env)) {
		xv_err(env, "cannot call GPL-restricted function from non-GPL compatible program\n");
		return -EINVAL;
	}
	for (int a = 0; a < 5; a++) {
		int regno = a + 1;
		struct xv_reg *reg = &regs[regno];
		enum xbpf_arg_type at = p->args[a];
		uint64_t umax = 0, umin = 0;

		if (at == XBPF_ARG_NONE)
			continue;
		err = xv_check_reg_arg(env, regno, SRC_OP);
		if (err)
			return err;
		if (at != XBPF_ARG_ANYTHING && is_pkt(reg) && !p->pkt_access) {
			xv_err(env, "helper access to the packet is not allowed\n");
			return -EACCES;
		}
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
					       false, false, false, NULL);
			if (err)
				return err;
			if (at == XBPF_ARG_PTR_TO_MAP_KEY &&
			    (map->type == XBPF_MAP_ARRAY || map->type == XBPF_MAP_PERCPU_ARRAY) &&
			    xv_stack_const_key(env, regno, (int)map->key_size, &const_key))
				const_key = -1;
			break;
		case XBPF_ARG_PTR_TO_MEM:
		case XBPF_ARG_PTR_TO_MEM_OR_NULL:
		case XBPF_ARG_PTR_TO_UNINIT_MEM:
		case XBPF_ARG_PTR_TO_RW_MEM:
		case XBPF_ARG_PTR_TO_FIXED_MEM:
			if (at == XBPF_ARG_PTR_TO_MEM_OR_NULL && xv_reg_is_const(reg) &&
			    reg->var_off.value == 0)
				break;
			if (!is_pointer(reg)) {
				xv_err(env, "R%d type=%s expected=fp, pkt, pkt_meta, map_value\n", regno,
				       xv_reg_type_str(reg->type));
				return -EACCES;
			}
			if (at != XBPF_ARG_PTR_TO_FIXED_MEM)
				break; /* size checked with the next argument */
			/* MEM_FIXED_SIZE | MEM_WRITE | MEM_ALIGNED: initialized, written, aligned. */
			err = check_helper_mem(env, regno, p->arg_size[a], true, false, false, NULL);
			err = err ?: xv_check_ptr_alignment(env, reg, 0, p->arg_size[a], true);
			if (err)
				return err;
			break;
		case XBPF_ARG_CONST_ALLOC_SIZE_OR_ZERO:
			if (reg->type != SCALAR_VALUE) {
				xv_err(env, "R%d type=%s expected=scalar\n", regno,
				       xv_reg_type_str(reg->type));
				return -EACCES;
			}
			/* The kernel's message, its stray quote included. */
			if (!tnum_is_const(reg->var_off)) {
				xv_err(env, "R%d is not a known constant'\n", regno);
				return -EACCES;
			}
			mem_size = (uint32_t)reg->var_off.value;
			err = xv_mark_precise(env, regno);
			if (err)
				return err;
			break;
		case XBPF_ARG_PTR_TO_FUNC:
			if (reg->type != PTR_TO_FUNC) {
				xv_err(env, "R%d type=%s expected=func\n", regno, xv_reg_type_str(reg->type));
				return -EACCES;
			}
			err = xv_check_ptr_off_reg(env, reg, regno, false);
			if (err)
				return err;
			callback = (int)reg->subprogno;
			break;
		case XBPF_ARG_PTR_TO_STACK_OR_NULL:
			if (xv_reg_is_const(reg) && reg->var_off.value == 0)
				break;
			if (reg->type != PTR_TO_STACK) {
				xv_err(env, "R%d type=%s expected=fp\n", regno, xv_reg_type_str(reg->type));
				return -EACCES;
			}
			break;
		case XBPF_ARG_PTR_TO_RINGBUF_MEM_RELEASE:
			if (reg->type != PTR_TO_RINGBUF_MEM) {
				xv_err(env, "R%d type=%s expected=ringbuf_mem\n", regno,
				       xv_reg_type_str(reg->type));
				return -EACCES;
			}
			if (reg->off) {
				xv_err(env, "R%d must have zero offset when passed to release func or trusted arg to kfunc\n",
				       regno);
				return -EINVAL;
			}
			err = xv_check_ptr_off_reg(env, reg, regno, false);
			if (err)
				return err;
			if (!reg->ref_obj_id) {
				xv_err(env, "R%d must be referenced when passed to release function\n", regno);
				return -EINVAL;
			}
			release_regno = regno;
			break;
		case XBPF_ARG_CONST_SIZE:
		case XBPF_ARG_CONST_SIZE_OR_ZERO: {
			bool zero_ok = at != XBPF_ARG_CONST_SIZE;
			enum xbpf_arg_type prev = a ? p->args[a - 1] : XBPF_ARG_NONE;

			err = check_size_arg(env, regno, zero_ok, &umax, &umin);
			if (err)
				return err;
			if (is_mem_arg(prev) && prev != XBPF_ARG_PTR_TO_FIXED_MEM) {
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
				/* UNINIT and RW memory is written by the helper (MEM_WRITE). */
				err = check_helper_mem(env, regno - 1, (int)umax,
						       prev == XBPF_ARG_PTR_TO_UNINIT_MEM ||
						       prev == XBPF_ARG_PTR_TO_RW_MEM, zero_ok,
						       prev == XBPF_ARG_PTR_TO_UNINIT_MEM &&
						       tnum_is_const(regs[regno].var_off),
						       &raw_regno);
				raw_size = (int)umax;
				/* The access was judged by the size's bounds. */
				err = err ?: xv_mark_precise(env, regno);
				if (err)
					return err;
			}
			break;
		}
		case XBPF_ARG_PTR_TO_SPIN_LOCK:
			if (reg->type != PTR_TO_MAP_VALUE) {
				xv_err(env, "R%d type=%s expected=map_value, ptr_\n", regno,
				       xv_reg_type_str(reg->type));
				return -EACCES;
			}
			err = xv_process_spin_lock(env, regno, p->id == H_SPIN_LOCK);
			if (err)
				return err;
			break;
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
			/* A kind this verifier does not check must never pass unchecked. */
			xv_err(env, "helper bpf_%s#%d: argument %d kind not supported by xlb's verifier\n",
			       p->name, p->id, regno);
			return -EINVAL;
		}
		if (at != XBPF_ARG_ANYTHING && reg->ref_obj_id) {
			if (ref_obj_id) {
				xv_err(env, "verifier bug: more than one arg with ref_obj_id R%d %u %u\n",
				       regno, reg->ref_obj_id, ref_obj_id);
				return -EFAULT;
			}
			ref_obj_id = reg->ref_obj_id;
		}
	}
	/* record_func_key(): a tail call's map, and a constant index the JIT may patch in. */
	if (p->id == H_TAIL_CALL) {
		struct xv_reg *idx = &regs[3];

		if (!map || map->type != XBPF_MAP_PROG_ARRAY) {
			xv_err(env, "expected prog array map for tail call"); /* no newline, as the kernel's */
			return -EINVAL;
		}
		if (xv_reg_is_const(idx) && idx->var_off.value < map->max_entries &&
		    (err = xv_mark_precise(env, 3)))
			return err;
		/* The called program never releases what this one holds. */
		err = xv_check_resource_leak(env, "tail_call", true);
		if (err)
			return err;
	}
	/* Uninitialized stack the helper filled is data now, byte by byte as the kernel does. */
	for (int i = 0; raw_regno >= 0 && i < raw_size; i++) {
		err = xv_check_mem_access(env, raw_regno, i, 1, true, -1, false, false);
		if (err)
			return err;
	}
	if (release_regno && (!ref_obj_id || xv_release_reference(env, ref_obj_id))) {
		xv_err(env, "func bpf_%s#%d reference has not been acquired before\n", p->name, p->id);
		return -EINVAL;
	}
	if (callback >= 0) {
		err = callback_call(env, insn, callback, map);
		if (err)
			return err;
	}
	/* After the callback's walk is pushed, as the kernel orders it. */
	if (map) {
		err = check_map_func_compat(env, map, p);
		if (err)
			return err;
	}
	if (p->changes_pkt_data)
		xv_clear_all_pkt_pointers(env);
	xv_clobber_caller_saved(env);
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
		} else if (p->id == H_MAP_LOOKUP && const_key >= 0 &&
			   const_key < map->max_entries) {
			/* An array lookup with a constant key in range cannot miss. */
			mark_ptr(&regs[0], PTR_TO_MAP_VALUE);
			regs[0].map = map;
		} else {
			mark_ptr(&regs[0], PTR_TO_MAP_VALUE_OR_NULL);
			regs[0].map = map;
		}
		regs[0].map_idx = map_idx;
		/* A value with a lock keeps an id even when it cannot be NULL: the lock's identity. */
		if (regs[0].type != PTR_TO_MAP_VALUE || (map && map->has_spin_lock))
			regs[0].id = ++env->id_gen;
		break;
	case XBPF_RET_PTR_TO_RINGBUF_MEM_OR_NULL:
		/* One id for the null check, then the reference's, which replaces it (as in the kernel). */
		mark_ptr(&regs[0], PTR_TO_RINGBUF_MEM_OR_NULL);
		regs[0].mem_size = mem_size;
		regs[0].id = ++env->id_gen;
		err = xv_acquire_reference(env, env->insn_idx, &regs[0].id);
		if (err)
			return err;
		regs[0].ref_obj_id = regs[0].id;
		break;
	default:
		xv_mark_unknown(&regs[0]);
		break;
	}
	regs[0].written = true;
	return 0;
}

/*
 * Memory a global function may read and write: mem_size bytes at the
 * register, or NULL (check_mem_reg()).  A pointer that may be NULL is
 * checked as if it were not.
 */
static int check_mem_arg(struct xv_env *env, int regno, uint32_t mem_size)
{
	struct xv_reg *reg = &cur_regs(env)[regno], saved = *reg;
	int err;

	if (reg->type == SCALAR_VALUE && xv_reg_is_const(reg) && reg->var_off.value == 0)
		return 0;
	if (reg->type == PTR_TO_MAP_VALUE_OR_NULL)
		reg->type = PTR_TO_MAP_VALUE;
	else if (reg->type == PTR_TO_MEM_OR_NULL)
		reg->type = PTR_TO_MEM;
	err = check_helper_mem(env, regno, (int)mem_size, false, true, false, NULL);
	err = err ?: check_helper_mem(env, regno, (int)mem_size, true, true, false, NULL);
	*reg = saved;
	return err;
}

/* The caller's R1-R5 against a global function's BTF (btf_check_func_arg_match()). */
static int check_global_args(struct xv_env *env, const struct xbpf_func_sig *sig)
{
	for (int a = 0; a < sig->arg_cnt; a++) {
		int regno = a + 1;
		struct xv_reg *reg = &cur_regs(env)[regno];
		int err;

		switch (sig->args[a]) {
		case XBPF_FUNC_ARG_SCALAR:
			if (reg->type != SCALAR_VALUE) {
				xv_err(env, "R%d is not a scalar\n", regno);
				return -EINVAL;
			}
			break;
		case XBPF_FUNC_ARG_CTX:
			/* check_func_arg_reg_off(): a context pointer exactly as it came. */
			if (reg->type != SCALAR_VALUE && reg->type != PTR_TO_STACK && !is_pkt(reg) &&
			    reg->type != PTR_TO_MAP_VALUE && reg->type != PTR_TO_MEM &&
			    (err = xv_check_ptr_off_reg(env, reg, regno, false)))
				return err;
			if (reg->type != PTR_TO_CTX) {
				xv_err(env, "arg#%d expects pointer to ctx\n", a);
				return -EINVAL;
			}
			break;
		case XBPF_FUNC_ARG_MEM:
		case XBPF_FUNC_ARG_MEM_NONNULL:
			if (reg->type != SCALAR_VALUE && reg->type != PTR_TO_STACK && !is_pkt(reg) &&
			    reg->type != PTR_TO_MAP_VALUE && reg->type != PTR_TO_MEM &&
			    (err = xv_check_ptr_off_reg(env, reg, regno, false)))
				return err;
			if (sig->args[a] == XBPF_FUNC_ARG_MEM_NONNULL && reg->type == SCALAR_VALUE &&
			    xv_reg_is_const(reg) && reg->var_off.value == 0) {
				xv_err(env, "arg#%d is expected to be non-NULL\n", a);
				return -EINVAL;
			}
			if (check_mem_arg(env, regno, sig->mem_size[a]))
				return -EINVAL;
			if (sig->args[a] == XBPF_FUNC_ARG_MEM_NONNULL && xv_type_may_be_null(reg->type)) {
				xv_err(env, "arg#%d is expected to be non-NULL\n", a);
				return -EINVAL;
			}
			break;
		}
	}
	return 0;
}

/*
 * A call of a global function: verified on its own later (only if some
 * path calls it), so here only the arguments are checked against its BTF,
 * and the caller gets an unknown scalar in R0.
 */
static int check_global_call(struct xv_env *env, int subprog)
{
	struct xv_subprog *sp = &env->subprog[subprog];
	struct xv_reg *regs = cur_regs(env);
	int err;

	if (sp->sig->err) {
		xv_err(env, "%s", sp->sig->err_msg);
		err = sp->sig->err;
	} else {
		err = check_global_args(env, sp->sig);
	}
	if (err) {
		xv_err(env, "Caller passes invalid args into func#%d ('%s')\n", subprog, sp->sig->name);
		return err;
	}
	if (env->log.level)
		xv_log_printf(&env->log, "Func#%d ('%s') is global and assumed valid.\n", subprog,
			      sp->sig->name);
	if (sp->changes_pkt_data)
		xv_clear_all_pkt_pointers(env);
	sp->called = true;
	xv_clobber_caller_saved(env);
	xv_mark_unknown(&regs[0]);
	regs[0].written = true;
	return 0;
}

int xv_check_func_call(struct xv_env *env, const struct xbpf_insn *insn, int *insn_idx)
{
	struct xv_state *st = env->cur;
	struct xv_func_state *caller = cur_frame(env), *callee;
	int target = *insn_idx + insn->imm + 1, subprog;

	subprog = xv_find_subprog(env, target);
	if (subprog < 0) {
		xv_err(env, "verifier bug. No program starts at insn %d\n", target);
		return -EFAULT;
	}
	if (xv_subprog_is_global(env, subprog)) {
		int err;

		if (xv_held_lock(env->cur)) {
			xv_err(env, "global function calls are not allowed while holding a lock,\n"
				    "use static function instead\n");
			return -EINVAL;
		}
		err = check_global_call(env, subprog);

		(*insn_idx)++;
		return err;
	}
	if (st->curframe + 1 >= XBPF_MAX_CALL_FRAMES) {
		xv_err(env, "the call stack of %d frames is too deep\n", st->curframe + 2);
		return -E2BIG;
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

int xv_prepare_func_exit(struct xv_env *env, int *insn_idx)
{
	struct xv_state *st = env->cur;
	struct xv_func_state *callee = cur_frame(env), *caller = st->frame[st->curframe - 1];
	struct xv_reg *r0 = &callee->regs[0];

	bool in_callback = callee->in_callback_fn;
	int err;

	if (r0->type == PTR_TO_STACK) {
		xv_err(env, "cannot return stack pointer to the caller\n");
		return -EINVAL;
	}
	if (in_callback) {
		/* A callback tells its helper to go on (0) or stop (1); nothing else. */
		if (r0->type != SCALAR_VALUE) {
			xv_err(env, "R0 not a scalar value\n");
			return -EACCES;
		}
		err = xv_mark_precise(env, 0);
		if (err)
			return err;
		if (r0->smin_value < 0 || r0->smax_value > 1) {
			char has[64] = "";
			size_t n = 0;

			/* verbose_invalid_scalar()'s wording. */
			if (r0->smin_value > INT64_MIN)
				n += snprintf(has + n, sizeof(has) - n, " smin=%" PRId64, r0->smin_value);
			if (r0->smax_value < INT64_MAX)
				snprintf(has + n, sizeof(has) - n, " smax=%" PRId64, r0->smax_value);
			xv_err(env, "At callback return the register R0 has%s should have been in [0, 1]\n",
			       has[0] ? has : " unknown scalar value");
			return -EINVAL;
		}
		/* Back to the helper call, which may walk the callback again. */
		*insn_idx = callee->callsite;
	} else {
		caller->regs[0] = *r0;
		caller->regs[0].written = true;
		*insn_idx = callee->callsite + 1;
	}
	if (env->log.level) {
		xv_log_printf(&env->log, "returning from callee:\n");
		xv_print_state(env, callee, true);
		xv_log_printf(&env->log, "\nto caller at %d:\n", *insn_idx);
		xv_print_state(env, caller, true);
		xv_log_printf(&env->log, "\n");
	}
	xv_frame_free(callee);
	st->frame[st->curframe--] = NULL;
	/* Scalars nothing relied on that changed since the last walk widen, so walks converge. */
	if (in_callback)
		xv_widen_imprecise_scalars(env, *insn_idx);
	return 0;
}
