// SPDX-License-Identifier: MIT
/*
 * refs.c - the references a path holds (the kernel's reference state):
 * acquired by a helper (a ringbuf record), released by another or by the
 * NULL side of a check, and none left when the main program exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

/* A new reference held by the path, acquired at insn_idx (acquire_reference()). */
int xv_acquire_reference(struct xv_env *env, int insn_idx, uint32_t *ret_id)
{
	struct xv_state *st = env->cur;

	if (st->acquired_refs == st->refs_cap) {
		uint32_t cap = st->refs_cap ? 2 * st->refs_cap : 4;
		struct xv_ref *r = realloc(st->refs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		st->refs = r;
		st->refs_cap = cap;
	}
	st->refs[st->acquired_refs++] = (struct xv_ref){
		.id = ++env->id_gen, .insn_idx = insn_idx, .type = XV_REF_PTR,
	};
	*ret_id = env->id_gen;
	return 0;
}

int xv_release_ref_state(struct xv_state *st, uint32_t id)
{
	for (uint32_t i = 0; i < st->acquired_refs; i++) {
		if (st->refs[i].type != XV_REF_PTR || st->refs[i].id != id)
			continue;
		/* The rest keep their order, as the kernel's do (it shows in logs and leaks). */
		memmove(&st->refs[i], &st->refs[i + 1], (st->acquired_refs - i - 1) * sizeof(*st->refs));
		st->acquired_refs--;
		return 0;
	}
	return -EINVAL;
}

static void invalidate_ref_one(struct xv_env *env, struct xv_reg *reg, void *priv)
{
	uint32_t id = *(const uint32_t *)priv;

	/* Privileged: a released pointer is a number now (mark_reg_invalid()). */
	if (reg->ref_obj_id == id) {
		bool w = reg->written;

		xv_mark_unknown(reg);
		reg->written = w;
	}
}

/* Release reference id and every copy of the pointer, in every frame (release_reference()). */
int xv_release_reference(struct xv_env *env, uint32_t id)
{
	int err = xv_release_ref_state(env->cur, id);

	if (!err)
		xv_for_each_reg(env, env->cur, invalidate_ref_one, &id);
	return err;
}

const struct xv_ref *xv_held_lock(const struct xv_state *st)
{
	for (uint32_t i = 0; i < st->acquired_refs; i++)
		if (st->refs[i].type == XV_REF_LOCK)
			return &st->refs[i];
	return NULL;
}

int xv_process_spin_lock(struct xv_env *env, int regno, bool lock)
{
	struct xv_state *st = env->cur;
	struct xv_reg *reg = &cur_regs(env)[regno];
	const struct xbpf_map_spec *map = reg->map;
	const struct xv_ref *held = xv_held_lock(st);
	int64_t off = (int64_t)reg->var_off.value + reg->off;

	if (!tnum_is_const(reg->var_off)) {
		xv_err(env, "R%d doesn't have constant offset. bpf_spin_lock has to be at the constant offset\n",
		       regno);
		return -EINVAL;
	}
	if (!map->value_btf) {
		xv_err(env, "map '%.15s' has to have BTF in order to use bpf_spin_lock\n", map->name);
		return -EINVAL;
	}
	if (!map->has_spin_lock) {
		xv_err(env, "map '%.15s' has no valid bpf_spin_lock\n", map->name);
		return -EINVAL;
	}
	if (off != map->spin_lock_off) {
		xv_err(env, "off %lld doesn't point to 'struct bpf_spin_lock' that is at %u\n",
		       (long long)off, map->spin_lock_off);
		return -EINVAL;
	}
	if (lock) {
		if (held) {
			xv_err(env, "Locking two bpf_spin_locks are not allowed\n");
			return -EINVAL;
		}
		if (st->acquired_refs == st->refs_cap) {
			uint32_t cap = st->refs_cap ? 2 * st->refs_cap : 4;
			struct xv_ref *r = realloc(st->refs, cap * sizeof(*r));

			if (!r)
				return -ENOMEM;
			st->refs = r;
			st->refs_cap = cap;
		}
		st->refs[st->acquired_refs++] = (struct xv_ref){
			.id = reg->id, .insn_idx = env->insn_idx, .type = XV_REF_LOCK, .ptr = map,
		};
		return 0;
	}
	if (!held) {
		xv_err(env, "bpf_spin_unlock without taking a lock\n");
		return -EINVAL;
	}
	if (held->id != reg->id || held->ptr != map) {
		xv_err(env, "bpf_spin_unlock of different lock\n");
		return -EINVAL;
	}
	memmove((struct xv_ref *)held, held + 1,
		(size_t)(st->refs + st->acquired_refs - held - 1) * sizeof(*held));
	st->acquired_refs--;
	return 0;
}

int xv_check_resource_leak(struct xv_env *env, const char *prefix, bool check_lock)
{
	struct xv_state *st = env->cur;
	bool leak = false;

	if (check_lock && xv_held_lock(st)) {
		xv_err(env, "%s cannot be used inside bpf_spin_lock-ed region\n", prefix);
		return -EINVAL;
	}
	if (st->curframe)
		return 0;
	for (uint32_t i = 0; i < st->acquired_refs; i++) {
		if (st->refs[i].type != XV_REF_PTR)
			continue;
		xv_err(env, "Unreleased reference id=%u alloc_insn=%d\n", st->refs[i].id,
		       st->refs[i].insn_idx);
		leak = true;
	}
	if (leak) {
		xv_err(env, "%s would lead to reference leak\n", prefix);
		return -EINVAL;
	}
	return 0;
}
