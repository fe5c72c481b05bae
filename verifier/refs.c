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

int xv_check_resource_leak(struct xv_env *env, const char *prefix)
{
	struct xv_state *st = env->cur;
	bool leak = false;

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
