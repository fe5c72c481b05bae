// SPDX-License-Identifier: MIT
/*
 * state.c - verifier states: copying, pruning comparison and printing.
 *
 * Pruning asks whether the current state is covered by a checkpoint whose
 * paths were all proven safe: every register the rest of the program may
 * read (liveness from cfg.c) must be at least as constrained now as it was
 * then (a scalar range inside the old range and known bits compatible, the
 * same pointer kind with the same offset, a packet range at least as long,
 * same map), and every stack slot the old state relied on must hold
 * something at least as good.  Ids must map consistently between the two
 * states, or null checks and range proofs could be wrongly shared.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "verifier_impl.h"

struct xv_state *xv_state_new(void)
{
	return calloc(1, sizeof(struct xv_state));
}

struct xv_func_state *xv_frame_new(void)
{
	return calloc(1, sizeof(struct xv_func_state));
}

void xv_frame_free(struct xv_func_state *f)
{
	if (!f)
		return;
	free(f->stack);
	free(f);
}

int xv_frame_grow(struct xv_func_state *f, int off)
{
	int need = (-off + XV_SLOT - 1) / XV_SLOT;

	if (need > XV_MAX_SLOTS)
		return -EACCES;
	if (need > f->cap) {
		int cap = need < 4 ? 4 : need;
		struct xv_stack_slot *n = realloc(f->stack, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->stack = n;
		f->cap = cap;
	}
	for (int s = f->nslots; s < need; s++)
		memset(&f->stack[s], 0, sizeof(f->stack[s]));
	if (need > f->nslots)
		f->nslots = need;
	return 0;
}

void xv_state_clear(struct xv_state *st)
{
	for (int i = 0; i < XBPF_MAX_CALL_FRAMES; i++) {
		xv_frame_free(st->frame[i]);
		st->frame[i] = NULL;
	}
	st->curframe = 0;
	free(st->refs);
	st->refs = NULL;
	st->acquired_refs = st->refs_cap = 0;
	free(st->hist);
	st->hist = NULL;
	st->hist_cnt = st->hist_cap = 0;
}

void xv_state_free(struct xv_state *st)
{
	if (!st)
		return;
	xv_state_clear(st);
	free(st);
}

int xv_state_copy(struct xv_state *dst, const struct xv_state *src)
{
	for (int i = 0; i < XBPF_MAX_CALL_FRAMES; i++) {
		const struct xv_func_state *f = i <= src->curframe ? src->frame[i] : NULL;
		struct xv_func_state *d = dst->frame[i];
		struct xv_stack_slot *stack;
		int cap;

		if (!f) {
			xv_frame_free(d);
			dst->frame[i] = NULL;
			continue;
		}
		if (!d) {
			d = dst->frame[i] = xv_frame_new();
			if (!d)
				return -ENOMEM;
		}
		if (d->cap < f->nslots) {
			stack = realloc(d->stack, f->nslots * sizeof(*stack));
			if (!stack)
				return -ENOMEM;
			d->stack = stack;
			d->cap = f->nslots;
		}
		stack = d->stack;
		cap = d->cap;
		memcpy(d, f, sizeof(*d));
		d->stack = stack;
		d->cap = cap;
		if (f->nslots)
			memcpy(d->stack, f->stack, f->nslots * sizeof(*stack));
	}
	if (dst->refs_cap < src->acquired_refs) {
		struct xv_ref *r = realloc(dst->refs, src->acquired_refs * sizeof(*r));

		if (!r)
			return -ENOMEM;
		dst->refs = r;
		dst->refs_cap = src->acquired_refs;
	}
	if (src->acquired_refs)
		memcpy(dst->refs, src->refs, src->acquired_refs * sizeof(*dst->refs));
	dst->acquired_refs = src->acquired_refs;
	dst->callback_unroll_depth = src->callback_unroll_depth;
	dst->curframe = src->curframe;
	dst->parent = src->parent;
	dst->first_insn_idx = src->first_insn_idx;
	dst->last_insn_idx = src->last_insn_idx;
	if (dst->hist_cap < src->hist_cnt) {
		struct xv_hist *h = realloc(dst->hist, src->hist_cnt * sizeof(*h));

		if (!h)
			return -ENOMEM;
		dst->hist = h;
		dst->hist_cap = src->hist_cnt;
	}
	if (src->hist_cnt)
		memcpy(dst->hist, src->hist, src->hist_cnt * sizeof(*dst->hist));
	dst->hist_cnt = src->hist_cnt;
	return 0;
}

/* An operand read (SRC_OP) must be set; a destination must not be the frame pointer. */
int xv_check_reg_arg(struct xv_env *env, int regno, int t)
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

void xv_for_each_reg(struct xv_env *env, struct xv_state *st, reg_visit_fn fn, void *priv)
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

/* ---- comparison -------------------------------------------------------- */

#define ID_MAP_SIZE 128

struct id_map {
	uint32_t old[ID_MAP_SIZE], cur[ID_MAP_SIZE];
	int cnt;
	uint32_t tmp_id;
};

static bool check_ids(struct id_map *m, uint32_t old, uint32_t cur)
{
	if (!old && !cur)
		return true;
	if (!old || !cur)
		return false;
	for (int i = 0; i < m->cnt; i++) {
		if (m->old[i] == old)
			return m->cur[i] == cur;
		if (m->cur[i] == cur)
			return false;
	}
	if (m->cnt == ID_MAP_SIZE)
		return false;
	m->old[m->cnt] = old;
	m->cur[m->cnt++] = cur;
	return true;
}

static bool range_within(const struct xv_reg *old, const struct xv_reg *cur)
{
	return old->umin_value <= cur->umin_value && old->umax_value >= cur->umax_value &&
	       old->smin_value <= cur->smin_value && old->smax_value >= cur->smax_value &&
	       old->u32_min_value <= cur->u32_min_value &&
	       old->u32_max_value >= cur->u32_max_value &&
	       old->s32_min_value <= cur->s32_min_value &&
	       old->s32_max_value >= cur->s32_max_value;
}

static bool regs_exact(const struct xv_reg *a, const struct xv_reg *b, struct id_map *m)
{
	return a->type == b->type && a->off == b->off && a->range == b->range && a->map == b->map &&
	       a->mem_size == b->mem_size &&
	       a->frameno == b->frameno && a->link_off == b->link_off &&
	       a->link32 == b->link32 && a->var_off.value == b->var_off.value &&
	       a->var_off.mask == b->var_off.mask && a->smin_value == b->smin_value &&
	       a->smax_value == b->smax_value && a->umin_value == b->umin_value &&
	       a->umax_value == b->umax_value && a->s32_min_value == b->s32_min_value &&
	       a->s32_max_value == b->s32_max_value && a->u32_min_value == b->u32_min_value &&
	       a->u32_max_value == b->u32_max_value && a->subprogno == b->subprogno &&
	       check_ids(m, a->id, b->id) && check_ids(m, a->ref_obj_id, b->ref_obj_id);
}

static bool regsafe(const struct xv_reg *old, const struct xv_reg *cur, struct id_map *m,
		    enum xv_cmp exact)
{
	if (exact == XV_EXACT)
		return regs_exact(old, cur, m);
	if (old->type == NOT_INIT)
		return true;
	if (old->type != cur->type)
		return false;
	switch (old->type) {
	case SCALAR_VALUE:
		/* Nothing relied on the old value: any scalar will do (precision.c). */
		if (!old->precise && exact == XV_NOT_EXACT)
			return true;
		/* A link the old state relied on must exist now too. */
		if (old->id && (old->link_off != cur->link_off || old->link32 != cur->link32 ||
				!check_ids(m, old->id, cur->id ? cur->id : 0x80000000u | ++m->tmp_id)))
			return false;
		return range_within(old, cur) && tnum_in(old->var_off, cur->var_off);
	/* ids: the identity of the lock a map value may hold */
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MAP_KEY:
		return old->map == cur->map && old->off == cur->off && range_within(old, cur) &&
		       tnum_in(old->var_off, cur->var_off) && check_ids(m, old->id, cur->id);
	case PTR_TO_MAP_VALUE_OR_NULL:
	case CONST_PTR_TO_MAP_OR_NULL:
		return old->map == cur->map && old->off == cur->off && range_within(old, cur) &&
		       tnum_in(old->var_off, cur->var_off) && check_ids(m, old->id, cur->id);
	case PTR_TO_MEM:
	case PTR_TO_MEM_OR_NULL:
		return old->mem_size == cur->mem_size && old->off == cur->off &&
		       range_within(old, cur) && tnum_in(old->var_off, cur->var_off) &&
		       check_ids(m, old->id, cur->id);
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		/* A longer proven range is fine, a shorter one is not. */
		return old->range <= cur->range && old->off == cur->off && range_within(old, cur) &&
		       tnum_in(old->var_off, cur->var_off) && check_ids(m, old->id, cur->id);
	case PTR_TO_STACK:
		return old->frameno == cur->frameno && old->off == cur->off && range_within(old, cur) &&
		       tnum_in(old->var_off, cur->var_off);
	case CONST_PTR_TO_MAP:
		return old->map == cur->map && old->map_idx == cur->map_idx;
	case PTR_TO_RINGBUF_MEM:
	case PTR_TO_RINGBUF_MEM_OR_NULL:
	case PTR_TO_FUNC:
		return regs_exact(old, cur, m);
	default:
		return old->off == cur->off && range_within(old, cur) &&
		       tnum_in(old->var_off, cur->var_off);
	}
}

/* All eight bytes data or never written (is_stack_all_misc()). */
static bool slot_all_misc(const struct xv_stack_slot *s)
{
	for (int b = 0; b < XV_SLOT; b++)
		if (s->slot_type[b] != STACK_MISC && s->slot_type[b] != STACK_INVALID)
			return false;
	return true;
}

/*
 * Stack slots, after the kernel's stacksafe(): only slots live now (bit
 * per slot in `live`) count; a 64-bit scalar spill and a slot of plain data
 * compare as registers (plain data is an unbounded scalar).
 */
static bool stacksafe(const struct xv_func_state *old, const struct xv_func_state *cur,
		      uint64_t live, struct id_map *m, enum xv_cmp exact)
{
	static const struct xv_reg unbound = {
		.type = SCALAR_VALUE, .var_off = { 0, ~0ull }, .smin_value = INT64_MIN,
		.smax_value = INT64_MAX, .umax_value = UINT64_MAX, .s32_min_value = INT32_MIN,
		.s32_max_value = INT32_MAX, .u32_max_value = UINT32_MAX,
	};

	for (int s = 0; s < old->nslots; s++) {
		const struct xv_stack_slot *os = &old->stack[s];
		const struct xv_stack_slot *cs = s < cur->nslots ? &cur->stack[s] : NULL;
		const struct xv_reg *oreg = NULL, *creg = NULL;

		if (exact != XV_EXACT && s < 64 && !(live & (1ull << s)))
			continue;
		if (exact != XV_EXACT && cs) {
			if (os->slot_type[0] == STACK_SPILL && os->spilled.type == SCALAR_VALUE)
				oreg = &os->spilled;
			else if (slot_all_misc(os))
				oreg = &unbound;
			if (cs->slot_type[0] == STACK_SPILL && cs->spilled.type == SCALAR_VALUE)
				creg = &cs->spilled;
			else if (slot_all_misc(cs))
				creg = &unbound;
			if (oreg && creg && (oreg != &unbound || creg != &unbound)) {
				if (!regsafe(oreg, creg, m, exact))
					return false;
				continue;
			}
		}
		for (int b = 0; b < XV_SLOT; b++) {
			uint8_t ot = os->slot_type[b], ct = cs ? cs->slot_type[b] : STACK_INVALID;

			if (exact == XV_EXACT) {
				if (ot != ct)
					return false;
				continue;
			}
			if (ot == STACK_INVALID)
				continue;
			/* Privileged: uninitialized bytes read as unknown data, like MISC. */
			if (ot == STACK_MISC && (ct == STACK_MISC || ct == STACK_ZERO || ct == STACK_INVALID))
				continue;
			if (ot == STACK_MISC && ct == STACK_SPILL &&
			    cs->spilled.type == SCALAR_VALUE)
				continue;
			if (ot != ct)
				return false;
		}
		if (os->slot_type[XV_SLOT - 1] == STACK_SPILL && cs &&
		    cs->slot_type[XV_SLOT - 1] == STACK_SPILL &&
		    !regsafe(&os->spilled, &cs->spilled, m, exact))
			return false;
	}
	if (exact == XV_EXACT) {
		for (int s = old->nslots; s < cur->nslots; s++)
			for (int b = 0; b < XV_SLOT; b++)
				if (cur->stack[s].slot_type[b] != STACK_INVALID)
					return false;
	}
	return true;
}

static bool func_states_equal(struct xv_env *env, const struct xv_func_state *old,
			      const struct xv_func_state *cur, uint16_t live, uint64_t live_stack,
			      struct id_map *m, enum xv_cmp exact)
{
	/* Fewer bpf_loop iterations walked before: more may follow from cur than from old. */
	if (old->callback_depth > cur->callback_depth)
		return false;
	for (int r = 0; r < XBPF_REG_FP; r++) {
		if (!(live & (1u << r)))
			continue;
		if (!regsafe(&old->regs[r], &cur->regs[r], m, exact))
			return false;
	}
	return stacksafe(old, cur, live_stack, m, exact);
}

/* The same references, ids mapped as the registers' are (refsafe()). */
static bool refsafe(const struct xv_state *old, const struct xv_state *cur, struct id_map *m)
{
	if (old->acquired_refs != cur->acquired_refs)
		return false;
	for (uint32_t i = 0; i < old->acquired_refs; i++)
		if (old->refs[i].type != cur->refs[i].type || old->refs[i].ptr != cur->refs[i].ptr ||
		    !check_ids(m, old->refs[i].id, cur->refs[i].id))
			return false;
	return true;
}

bool xv_states_equal(struct xv_env *env, const struct xv_state *old, const struct xv_state *cur,
		     enum xv_cmp exact)
{
	struct id_map m = { .cnt = 0 };
	int pt[XBPF_MAX_CALL_FRAMES], k = old->curframe;

	if (old->curframe != cur->curframe)
		return false;
	/* Where each frame goes on: the current insn, and the return point of each callee. */
	for (int i = 0; i <= k; i++) {
		if (old->frame[i]->callsite != cur->frame[i]->callsite)
			return false;
		/* A callback returns to the helper call itself, which reads R1-R5 again. */
		pt[i] = i == k ? env->insn_idx :
			old->frame[i + 1]->in_callback_fn ? old->frame[i + 1]->callsite :
							    old->frame[i + 1]->callsite + 1;
	}
	for (int i = 0; i <= k; i++) {
		const struct xv_func_state *of = old->frame[i], *cf = cur->frame[i];
		uint64_t live_stack = 0;
		uint16_t live;

		if (i == k || old->frame[i + 1]->in_callback_fn)
			live = env->aux[pt[i]].live_before;
		else /* a caller: what it reads after the callee returns, R0 excepted */
			live = env->aux[pt[i]].live_before & ~0x3fu;
		/* Its slots read later by itself, or by the callees above it through pointers. */
		for (int j = i; j <= k; j++)
			live_stack |= xv_stack_live(env, pt[j], j - i);
		if (!func_states_equal(env, of, cf, live, live_stack, &m, exact))
			return false;
	}
	return refsafe(old, cur, &m);
}

/* ---- callbacks ---------------------------------------------------------- */

static void maybe_widen_reg(const struct xv_reg *old, struct xv_reg *cur, struct id_map *m)
{
	bool w = cur->written;

	if (old->type != SCALAR_VALUE || cur->type != SCALAR_VALUE || old->precise ||
	    cur->precise || regs_exact(old, cur, m))
		return;
	xv_mark_unknown(cur);
	cur->written = w;
}

/* The same frames, called from the same places. */
static bool same_callsites(const struct xv_state *a, const struct xv_state *b)
{
	if (a->curframe != b->curframe)
		return false;
	for (int i = a->curframe; i >= 0; i--)
		if (a->frame[i]->callsite != b->frame[i]->callsite)
			return false;
	return true;
}

void xv_widen_imprecise_scalars(struct xv_env *env, int insn_idx)
{
	struct xv_state *cur = env->cur;
	const struct xv_explored *e = cur->parent;
	struct id_map m = { .cnt = 0 };

	/* The last checkpoint of this path at the helper call (find_prev_entry()). */
	while (e && (e->insn_idx != insn_idx || !same_callsites(&e->st, cur)))
		e = e->parent;
	if (!e)
		return;
	for (int fr = cur->curframe; fr >= 0; fr--) {
		const struct xv_func_state *fo = e->st.frame[fr];
		struct xv_func_state *fc = cur->frame[fr];

		for (int r = 0; r < XV_MAX_REG; r++)
			maybe_widen_reg(&fo->regs[r], &fc->regs[r], &m);
		for (int i = 0; i < fo->nslots && i < fc->nslots; i++)
			if (fo->stack[i].slot_type[XV_SLOT - 1] == STACK_SPILL &&
			    fc->stack[i].slot_type[XV_SLOT - 1] == STACK_SPILL)
				maybe_widen_reg(&fo->stack[i].spilled, &fc->stack[i].spilled, &m);
	}
}

/* ---- printing ---------------------------------------------------------- */

const char *xv_reg_type_str(enum xv_reg_type t)
{
	switch (t) {
	case NOT_INIT: return "?";
	case SCALAR_VALUE: return "scalar";
	case PTR_TO_CTX: return "ctx";
	case CONST_PTR_TO_MAP: return "map_ptr";
	case PTR_TO_MAP_VALUE: return "map_value";
	case PTR_TO_MAP_VALUE_OR_NULL: return "map_value_or_null";
	case CONST_PTR_TO_MAP_OR_NULL: return "map_ptr_or_null";
	case PTR_TO_STACK: return "fp";
	case PTR_TO_PACKET_META: return "pkt_meta";
	case PTR_TO_PACKET: return "pkt";
	case PTR_TO_PACKET_END: return "pkt_end";
	case PTR_TO_FUNC: return "func";
	case PTR_TO_MAP_KEY: return "map_key";
	case PTR_TO_RINGBUF_MEM: return "ringbuf_mem";
	case PTR_TO_RINGBUF_MEM_OR_NULL: return "ringbuf_mem_or_null";
	case PTR_TO_MEM: return "mem";
	case PTR_TO_MEM_OR_NULL: return "mem_or_null";
	}
	return "?";
}

static void print_num(struct xv_env *env, uint64_t v, bool is_signed)
{
	if (is_signed ? ((int64_t)v >= -512 && (int64_t)v <= 512) : v <= 512)
		xv_log_printf(&env->log, is_signed ? "%" PRId64 : "%" PRIu64, v);
	else
		xv_log_printf(&env->log, "%#" PRIx64, v);
}

/* The kernel's grouping: "smin=smin32=0,smax=umax=smax32=umax32=255". */
static void print_scalar_ranges(struct xv_env *env, const struct xv_reg *r, const char **sep)
{
	struct {
		const char *name;
		uint64_t val;
		bool omit;
	} mm[] = {
		{ "smin", (uint64_t)r->smin_value, r->smin_value == INT64_MIN },
		{ "smax", (uint64_t)r->smax_value, r->smax_value == INT64_MAX },
		{ "umin", r->umin_value, r->umin_value == 0 },
		{ "umax", r->umax_value, r->umax_value == UINT64_MAX },
		{ "smin32", (uint64_t)(int64_t)r->s32_min_value, r->s32_min_value == INT32_MIN },
		{ "smax32", (uint64_t)(int64_t)r->s32_max_value, r->s32_max_value == INT32_MAX },
		{ "umin32", r->u32_min_value, r->u32_min_value == 0 },
		{ "umax32", r->u32_max_value, r->u32_max_value == UINT32_MAX },
	};
	size_t n = sizeof(mm) / sizeof(mm[0]);

	for (size_t i = 0; i < n; i++) {
		bool neg1;

		if (mm[i].omit)
			continue;
		neg1 = mm[i].name[0] == 's' && (int64_t)mm[i].val < 0;
		xv_log_printf(&env->log, "%s%s=", *sep, mm[i].name);
		*sep = ",";
		for (size_t j = i + 2; j < n; j += 2) {
			bool neg2 = mm[j].name[0] == 's' && (int64_t)mm[j].val < 0;

			if (mm[j].omit || mm[j].val != mm[i].val || neg1 != neg2)
				continue;
			mm[j].omit = true;
			xv_log_printf(&env->log, "%s=", mm[j].name);
		}
		print_num(env, mm[i].val, mm[i].name[0] == 's');
	}
}

static void print_var(struct xv_env *env, const struct xv_reg *r, const char **sep)
{
	char buf[64];

	print_scalar_ranges(env, r, sep);
	if (!tnum_is_unknown(r->var_off)) {
		tnum_strn(buf, sizeof(buf), r->var_off);
		xv_log_printf(&env->log, "%svar_off=%s", *sep, buf);
		*sep = ",";
	}
}

void xv_print_reg(struct xv_env *env, const struct xv_reg *r)
{
	struct xv_log *log = &env->log;
	const char *sep = "";
	bool var = !tnum_equals_const(r->var_off, 0);

	if (r->type == SCALAR_VALUE && tnum_is_const(r->var_off) && !r->id) {
		print_num(env, r->var_off.value, true);
		return;
	}
	if (r->type == PTR_TO_STACK && !var) {
		if (r->frameno != (uint32_t)env->cur->curframe)
			xv_log_printf(log, "fp[%u]%d", r->frameno, r->off);
		else
			xv_log_printf(log, "fp%d", r->off);
		return;
	}
	xv_log_printf(log, "%s(", xv_reg_type_str(r->type));
	if (r->type == SCALAR_VALUE) {
		if (r->id) {
			xv_log_printf(log, "id=%u", r->id);
			if (r->link_off)
				xv_log_printf(log, "%+d", r->link_off);
			sep = ",";
		}
		print_var(env, r, &sep);
	} else {
		if (r->map && (r->type == PTR_TO_MAP_VALUE || r->type == PTR_TO_MAP_VALUE_OR_NULL ||
			       r->type == PTR_TO_MAP_KEY ||
			       r->type == CONST_PTR_TO_MAP_OR_NULL ||
			       r->type == CONST_PTR_TO_MAP)) {
			if (r->map->name[0])
				xv_log_printf(log, "map=%s,", r->map->name);
			xv_log_printf(log, "ks=%u,vs=%u", r->map->key_size, r->map->value_size);
			sep = ",";
		}
		if (r->id) {
			xv_log_printf(log, "%sid=%u", sep, r->id);
			sep = ",";
		}
		if (r->ref_obj_id) {
			xv_log_printf(log, "%sref_obj_id=%u", sep, r->ref_obj_id);
			sep = ",";
		}
		if (r->type == PTR_TO_MEM || r->type == PTR_TO_MEM_OR_NULL) {
			xv_log_printf(log, "%ssz=%u", sep, r->mem_size);
			sep = ",";
		}
		if (r->off) {
			xv_log_printf(log, "%soff=%d", sep, r->off);
			sep = ",";
		}
		if (r->type == PTR_TO_RINGBUF_MEM || r->type == PTR_TO_RINGBUF_MEM_OR_NULL) {
			xv_log_printf(log, "%ssz=%u", sep, r->mem_size);
			sep = ",";
		}
		if (r->type == PTR_TO_PACKET || r->type == PTR_TO_PACKET_META) {
			xv_log_printf(log, "%sr=%d", sep, r->range);
			sep = ",";
		}
		if (var)
			print_var(env, r, &sep);
	}
	xv_log_printf(log, ")");
}

void xv_print_regs(struct xv_env *env, const struct xv_func_state *f, uint16_t mask)
{
	const char *sep = "";

	if (f->frameno)
		xv_log_printf(&env->log, "frame%u: ", f->frameno);
	for (int r = 0; r < XV_MAX_REG; r++) {
		if (!(mask & (1u << r)) || f->regs[r].type == NOT_INIT)
			continue;
		xv_log_printf(&env->log, "%sR%d=", sep, r);
		xv_print_reg(env, &f->regs[r]);
		sep = " ";
	}
}

void xv_print_state(struct xv_env *env, const struct xv_func_state *f, bool all_regs)
{
	struct xv_log *log = &env->log;

	if (f->frameno)
		xv_log_printf(log, " frame%u:", f->frameno);
	for (int r = 0; r < XV_MAX_REG; r++) {
		const struct xv_reg *reg = &f->regs[r];

		if (reg->type == NOT_INIT)
			continue;
		if (!all_regs && !reg->written)
			continue;
		xv_log_printf(log, " R%d=", r);
		xv_print_reg(env, reg);
	}
	for (int s = 0; s < f->nslots; s++) {
		const struct xv_stack_slot *slot = &f->stack[s];
		char types[XV_SLOT + 1];
		bool any = false;

		/* The kernel's order: slot_type[0] (the highest byte) first. */
		for (int b = 0; b < XV_SLOT; b++) {
			uint8_t t = slot->slot_type[b];

			types[b] = t == STACK_MISC ? 'm' : t == STACK_ZERO ? '0' : t == STACK_SPILL ? 'r' : '?';
			any |= t != STACK_INVALID;
		}
		types[XV_SLOT] = '\0';
		if (!any)
			continue;
		if (slot->slot_type[XV_SLOT - 1] == STACK_SPILL) {
			/* A narrow spill shows the bytes above it, then the register. */
			for (int b = 0; b < XV_SLOT; b++)
				if (slot->slot_type[b] == STACK_SPILL) {
					types[b] = '\0';
					break;
				}
			xv_log_printf(log, " fp%d=%s", -(s + 1) * XV_SLOT, types);
			xv_print_reg(env, &slot->spilled);
			continue;
		}
		xv_log_printf(log, " fp%d=%s", -(s + 1) * XV_SLOT, types);
	}
	/* The path's references, after any frame's stack (the kernel prints the state's). */
	if (env->cur && env->cur->acquired_refs) {
		const char *sep = " refs=";

		for (uint32_t i = 0; i < env->cur->acquired_refs; i++) {
			xv_log_printf(log, "%s%u", sep, env->cur->refs[i].id);
			sep = ",";
		}
	}
	if (f->in_callback_fn)
		xv_log_printf(log, " cb");
}

/* ---- checkpoint hygiene ------------------------------------------------ */

#define MAX_REGS_IN_STATE (XBPF_MAX_CALL_FRAMES * (XV_MAX_REG + XV_MAX_SLOTS))

static int collect_scalars(struct xv_state *st, struct xv_reg **out)
{
	int n = 0;

	for (int i = 0; i <= st->curframe; i++) {
		struct xv_func_state *f = st->frame[i];

		for (int r = 0; r < XV_MAX_REG; r++)
			if (f->regs[r].type == SCALAR_VALUE && f->regs[r].id)
				out[n++] = &f->regs[r];
		for (int s = 0; s < f->nslots; s++)
			if (f->stack[s].slot_type[XV_SLOT - 1] == STACK_SPILL &&
			    f->stack[s].spilled.type == SCALAR_VALUE && f->stack[s].spilled.id)
				out[n++] = &f->stack[s].spilled;
	}
	return n;
}

/*
 * A scalar id held by one register links nothing: drop it from a checkpoint
 * so that it does not make pruning needlessly strict.
 */
void xv_state_clear_singular_ids(struct xv_state *st)
{
	static __thread struct xv_reg *regs[MAX_REGS_IN_STATE];
	int n = collect_scalars(st, regs);

	for (int i = 0; i < n; i++) {
		int cnt = 0;

		for (int j = 0; j < n && cnt < 2; j++)
			cnt += regs[j]->id == regs[i]->id;
		if (cnt == 1) {
			regs[i]->id = 0;
			regs[i]->link_off = 0;
			regs[i]->link32 = false;
		}
	}
}
