/* SPDX-License-Identifier: MIT */
/*
 * state_impl.h - private to libxlbctl's state model: model.c (basics) <-
 * validate.c (checks, validation, ids) <- state.c (edits).
 */
#ifndef XLB_STATE_IMPL_H
#define XLB_STATE_IMPL_H

#include "xlb_control.h"

/* One VIP or real on its own: families, addresses, ranges, names. */
int xlb__check_vip(const struct xlb_vip_cfg *v, struct xlb_err *err);
int xlb__check_real(const struct xlb_real_cfg *r, struct xlb_err *err);
/* A real may not have the address of any VIP of st. */
int xlb__check_real_not_vip(const struct xlb_state *st, const struct xlb_real_cfg *r,
			    struct xlb_err *err);
/* A free VIP id / the next free real id (round robin, from st->next_real_id). */
int xlb__alloc_vip_id(const struct xlb_state *st, const struct xlb_settings *set, uint32_t *ret);
int xlb__alloc_real_id(struct xlb_state *st, const struct xlb_settings *set, uint32_t *ret);

#endif /* XLB_STATE_IMPL_H */
