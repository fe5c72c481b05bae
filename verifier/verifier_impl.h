/* SPDX-License-Identifier: MIT */
/*
 * verifier_impl.h - private contract between the verifier's passes.
 *
 * xbpf_verify() builds one struct xv_env and runs the passes of verifier.c
 * over it: encoding checks, subprogram discovery (cfg.c), the depth-first
 * CFG walk (cfg.c), the combined stack depth over the call graph (cfg.c) and
 * the path walk with state pruning (check.c, state.c, bounds.c, ctx.c).
 */
#ifndef XBPF_VERIFIER_IMPL_H
#define XBPF_VERIFIER_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "libxbpf_internal.h"
#include "tnum.h"
#include "xbpf_verifier.h"

#define XV_MAX_REG 11
#define XV_SLOT 8
#define XV_MAX_SLOTS (XBPF_STACK_SIZE / XV_SLOT)
/* The kernel's cap on states kept per instruction before it stops adding. */
#define XV_MAX_STATES_PER_INSN 64
#define XV_MAX_PENDING 8192

/* ---- log (log.c) ------------------------------------------------------- */

struct xv_log {
	char *buf;
	size_t size;
	size_t pos;	/* bytes written, excluding the NUL */
	int level;
	bool truncated;
};

void xv_log_init(struct xv_log *log, char *buf, size_t size, int level);
void xv_log_vprintf(struct xv_log *log, const char *fmt, va_list ap);
void xv_log_printf(struct xv_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Rewind to pos (the kernel's bpf_vlog_reset, used when a path is done). */
void xv_log_reset(struct xv_log *log, size_t pos);
static inline bool xv_log_on(const struct xv_log *log)
{
	return log->buf && log->size;
}

/* ---- abstract values --------------------------------------------------- */

enum xv_reg_type {
	NOT_INIT = 0,
	SCALAR_VALUE,
	PTR_TO_CTX,
	CONST_PTR_TO_MAP,
	PTR_TO_MAP_VALUE,
	PTR_TO_MAP_VALUE_OR_NULL,
	PTR_TO_STACK,
	PTR_TO_PACKET_META,
	PTR_TO_PACKET,
	PTR_TO_PACKET_END,
	CONST_PTR_TO_MAP_OR_NULL, /* lookup in a map of maps */
	PTR_TO_RINGBUF_MEM,	  /* a reserved ring buffer record: mem_size bytes */
	PTR_TO_RINGBUF_MEM_OR_NULL,
	PTR_TO_MEM,		  /* mem_size bytes: a global function's memory argument */
	PTR_TO_MEM_OR_NULL,
	PTR_TO_FUNC,		  /* a subprogram's address (ld_imm64 BPF_PSEUDO_FUNC): subprogno */
	PTR_TO_MAP_KEY,		  /* a for_each_map_elem callback's key: key_size bytes of map */
};

struct xv_reg {
	enum xv_reg_type type;
	/* Fixed part of a pointer's offset; the variable part is in the bounds. */
	int32_t off;
	/* Packet pointers: bytes proven readable past off (find_good_pkt_pointers). */
	int32_t range;
	/* Map pointers and map values: the map, by object index. */
	const struct xbpf_map_spec *map;
	int32_t map_idx;
	/* Same id, same value: null checks and packet range proofs spread by it. */
	uint32_t id;
	/*
	 * Scalars with the same id are linked: this one equals the id's base
	 * value plus link_off (link32: computed in 32 bits, zero-extended), so a
	 * bound proven on one carries to the others (the kernel's linked regs).
	 */
	int32_t link_off;
	bool link32;
	/* PTR_TO_STACK: whose frame. */
	uint32_t frameno;
	/* PTR_TO_RINGBUF_MEM*, PTR_TO_MEM*: bytes reachable from off 0. */
	uint32_t mem_size;
	/* PTR_TO_FUNC: which subprogram. */
	uint32_t subprogno;
	/* The reference (xv_state.refs) this pointer came from; released with it. */
	uint32_t ref_obj_id;
	struct tnum var_off;
	int64_t smin_value, smax_value;
	uint64_t umin_value, umax_value;
	int32_t s32_min_value, s32_max_value;
	uint32_t u32_min_value, u32_max_value;
	/* Written since the last checkpoint (log shows R1_w). */
	bool written;
	/*
	 * A scalar whose exact value a safety decision relied on (the kernel's
	 * precision marks, set by backtracking in precision.c): only precise
	 * scalars of a checkpoint are compared when pruning.
	 */
	bool precise;
};

enum xv_slot_type {
	STACK_INVALID = 0,
	STACK_SPILL,
	STACK_MISC,
	STACK_ZERO,
};

struct xv_stack_slot {
	struct xv_reg spilled;	/* valid when slot_type[7] == STACK_SPILL */
	uint8_t slot_type[XV_SLOT];
};

struct xv_func_state {
	struct xv_reg regs[XV_MAX_REG];
	int callsite;		/* insn of the call in the caller, -1 in main */
	uint32_t frameno;
	uint32_t subprogno;
	int nslots;		/* stack[0] is fp-8 .. fp-1 */
	int cap;		/* slots allocated in stack */
	struct xv_stack_slot *stack;
	/*
	 * A callback (bpf_loop, for_each_map_elem): its exit returns to the
	 * helper call itself, which may call it again; R0 must be 0 or 1.
	 */
	bool in_callback_fn;
	/* Callback iterations walked from this frame's current helper call (bpf_loop's limit). */
	uint64_t callback_depth;
};

struct xv_explored;

/* Linked scalars recorded at a conditional jump: frame, stack or register, number. */
#define XV_LINKED_MAX 6
#define XV_LINK(frame, is_stack, num) ((uint16_t)((frame) << 8 | (is_stack) << 7 | (num)))

/*
 * One step of a path's history (the kernel's bpf_jmp_history_entry): an
 * arrival at idx from prev_idx (at jump points), a spill or fill of stack
 * slot spi of frame `frame` (XV_HIST_STACK), and the scalars linked by a
 * conditional jump.  Backtracking walks it to find the previous insn.
 */
#define XV_HIST_STACK (1u << 0)
struct xv_hist {
	int32_t idx, prev_idx;
	uint8_t flags, frame, spi, linked_cnt;
	uint16_t linked[XV_LINKED_MAX];
};

/*
 * A resource the path holds (the kernel's bpf_reference_state): a pointer
 * acquired by a helper (a ringbuf record), to be released before the
 * program exits.  Per path, not per frame: callees see and release them.
 */
enum xv_ref_type {
	XV_REF_PTR = 1,
	XV_REF_LOCK, /* a bpf_spin_lock held: id of the map value, ptr its map */
};

struct xv_ref {
	uint32_t id;
	int32_t insn_idx;	/* the acquiring call */
	enum xv_ref_type type;
	const void *ptr;	/* XV_REF_LOCK: the map whose value holds the lock */
};

struct xv_state {
	struct xv_func_state *frame[XBPF_MAX_CALL_FRAMES];
	int curframe;
	struct xv_ref *refs;
	uint32_t acquired_refs, refs_cap;
	/* Callback bodies entered on this path: tells iterations apart in the infinite-loop check. */
	uint32_t callback_unroll_depth;
	/* Last checkpoint on this path (for branch counting), or NULL. */
	struct xv_explored *parent;
	/* The segment since the parent checkpoint: first and last insn, history. */
	int first_insn_idx, last_insn_idx;
	struct xv_hist *hist;
	uint32_t hist_cnt, hist_cap;
};

/* A checkpoint kept at a prune point. */
struct xv_explored {
	struct xv_explored *next;	/* other checkpoints at the same insn */
	struct xv_explored *parent;	/* previous checkpoint of the path */
	int branches;			/* paths still being walked below it */
	int insn_idx;
	uint32_t hit_cnt, miss_cnt;
	struct xv_state st;
};

/* ---- per-insn aux data and subprograms --------------------------------- */

struct xv_insn_aux {
	bool seen;
	bool prune_point;
	bool is_ldimm64_hi;	/* second slot of ld_imm64 */
	bool jmp_point;		/* arrivals here are recorded in the path's history */
	bool calls_callback;	/* a helper call that calls a callback (checkpoint forced) */
	/* bpf_loop: the same callback and zero flags on every path so far (the kernel inlines it). */
	bool loop_inline_seen, loop_inline;
	int loop_callback;
	/* Pointer type a load/store first went through (save_aux_ptr_type). */
	enum xv_reg_type ptr_type;
	uint16_t live_before;	/* registers possibly read before written (bit per reg) */
	int subprog;
	struct xv_explored *explored;
	uint32_t nr_states;
};

struct xv_subprog {
	int start;
	int end;		/* one past the last insn */
	int stack_depth;	/* bytes used, as seen by the path walk */
	bool has_tail_call;
	bool has_ld_abs;
	/* A helper that moves packet data is called here or in a callee (global calls). */
	bool changes_pkt_data;
	/* func_info: its BTF signature, NULL without BTF. */
	const struct xbpf_func_sig *sig;
	/* Global functions: called on some path, verified on their own. */
	bool called, verified;
};

struct xv_pending {
	struct xv_state st;
	int insn_idx;
	int prev_insn_idx;
	size_t log_pos;
};

/* The kernel's map_flags BPF_F_RDONLY_PROG / BPF_F_WRONLY_PROG. */
#define XBPF_F_RDONLY_PROG (1u << 7)
#define XBPF_F_WRONLY_PROG (1u << 8)

struct xv_env {
	const struct xbpf_prog *prog;	/* may be NULL (xv_verify_raw) */
	const struct xbpf_insn *insns;
	int insn_cnt;
	enum xbpf_prog_type type;
	const struct xbpf_map_spec *(*map_spec)(void *priv, int idx);
	/* A frozen read-only map's single value (bpf_map_is_rdonly()); else NULL. */
	const void *(*map_rdonly_value)(void *priv, int idx);
	void *map_priv;

	struct xv_insn_aux *aux;
	struct xv_subprog subprog[XBPF_MAX_SUBPROGS + 1];
	int subprog_cnt;

	struct xv_log log;
	struct xbpf_verify_info *info;
	int insn_idx;
	int prev_insn_idx;
	int err_insn;
	bool err_set;

	struct xv_state *cur;
	struct xv_pending *pending;
	int pending_cnt, pending_cap;
	uint32_t id_gen;

	uint32_t insn_processed;
	uint32_t total_states, peak_states, cur_states, max_states_per_insn;
	uint32_t jmps_processed, prev_jmps_processed, prev_insn_processed;
	/* Checkpoints dropped from aux[].explored while paths still point at them. */
	struct xv_explored *evicted;
	bool has_pseudo_call, has_tail_call, has_ld_abs;
	/* The program's func_info (BTF): global functions are verified on their own. */
	const struct xbpf_func_sig *sigs;
	size_t sig_cnt;
	/* BPF_F_STRICT_ALIGNMENT: every access aligned, packets as if NET_IP_ALIGN 2. */
	bool strict_alignment;
	/* BPF_F_TEST_STATE_FREQ: a checkpoint at every prune point. */
	bool test_state_freq;
	struct xv_liveness *liveness; /* stack slot liveness (liveness.c) */
};

/* Report a rejection: logs the message and keeps it for xbpf_verify_info. */
void xv_err(struct xv_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xv_verbose(struct xv_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Run the whole pipeline on a filled-in env (frees what it allocated). */
int xv_verify_env(struct xv_env *env);

/* Pass entry points, each 0 or -errno. */
int xv_check_encoding(struct xv_env *env);
int xv_find_subprogs(struct xv_env *env);
int xv_check_cfg(struct xv_env *env);
int xv_compute_liveness(struct xv_env *env);
int xv_check_max_stack_depth(struct xv_env *env);
/* func_info against the subprograms (the kernel's check_btf_func()). */
int xv_check_btf_func(struct xv_env *env);
int xv_do_check(struct xv_env *env);
int xv_find_subprog(const struct xv_env *env, int insn_idx);
/* Registers insns[idx] reads or writes (bit per register), for the level-2 log. */
uint16_t xv_insn_regs(const struct xv_env *env, int idx);

/* bounds.c: scalar bounds algebra. */
void xv_mark_unknown(struct xv_reg *reg);
void xv_mark_known(struct xv_reg *reg, uint64_t imm);
void xv_reg_bounds_sync(struct xv_reg *reg);
void xv_reg_bounds_from_var_off(struct xv_reg *reg);
bool xv_reg_is_const(const struct xv_reg *reg);
/* Scalar ALU op (BPF_OP) of src into dst; alu32 for 32-bit class. */
int xv_scalar_alu(struct xv_env *env, struct xv_reg *dst, const struct xv_reg *src, uint8_t op,
		  bool alu32);
/*
 * Can branch `op` (JMP32 when is32) between reg and val be decided?  1: always
 * taken, 0: never, -1: unknown.
 */
int xv_is_branch_taken(const struct xv_reg *reg, const struct xv_reg *val, uint8_t op, bool is32);
/* Refine scalar bounds for the taken (t) and not-taken (f) branches. */
void xv_reg_set_min_max(struct xv_reg *t_dst, struct xv_reg *t_src, struct xv_reg *f_dst,
			struct xv_reg *f_src, uint8_t op, bool is32);
void xv_zext_32_to_64(struct xv_reg *reg);
void xv_coerce_reg_to_size(struct xv_reg *reg, int size);
void xv_coerce_subreg_to_size_sx(struct xv_reg *reg, int size);
void xv_coerce_reg_to_size_sx(struct xv_reg *reg, int size);

/* ctx.c: context access rules per program type. */
/*
 * Check a ctx access at off of size bytes; *ret_type is the loaded register's
 * type (SCALAR_VALUE or a packet pointer).  0 or -EACCES.
 */
int xv_check_ctx_access(struct xv_env *env, int off, int size, bool write,
			enum xv_reg_type *ret_type);
bool xv_prog_may_access_pkt(enum xbpf_prog_type type, bool write);

/* state.c: copying, comparing and printing states. */
struct xv_state *xv_state_new(void);
struct xv_func_state *xv_frame_new(void);
void xv_frame_free(struct xv_func_state *f);
/* Make room for slots down to fp+off (off < 0); -ENOMEM or -EACCES past 512 bytes. */
int xv_frame_grow(struct xv_func_state *f, int off);
void xv_state_free(struct xv_state *st);
int xv_state_copy(struct xv_state *dst, const struct xv_state *src);
void xv_state_clear(struct xv_state *st);
/* Is cur safe given that old was proven safe (old subsumes cur)? */
/*
 * How states compare: XV_NOT_EXACT, scalars only where precise; XV_RANGE_WITHIN,
 * every scalar's range (a callback's iterations converging); XV_EXACT.
 */
enum xv_cmp { XV_NOT_EXACT = 0, XV_EXACT = 1, XV_RANGE_WITHIN = 2 };
bool xv_states_equal(struct xv_env *env, const struct xv_state *old, const struct xv_state *cur,
		     enum xv_cmp exact);
void xv_state_clear_singular_ids(struct xv_state *st);
/*
 * After a callback returned to the helper call at insn_idx: scalars that
 * no decision relied on and that differ from the path's last checkpoint
 * there become unknown (widen_imprecise_scalars()), so that the walks of
 * the callback reach a state already seen.
 */
void xv_widen_imprecise_scalars(struct xv_env *env, int insn_idx);
typedef void (*reg_visit_fn)(struct xv_env *env, struct xv_reg *reg, void *priv);
/* Every register and spilled register of every frame of st. */
void xv_for_each_reg(struct xv_env *env, struct xv_state *st, reg_visit_fn fn, void *priv);
/* "R1=ctx() R10=fp0 fp-8=mmmmmmmm" for the current frame. */
void xv_print_state(struct xv_env *env, const struct xv_func_state *f, bool all_regs);
void xv_print_reg(struct xv_env *env, const struct xv_reg *reg);
/* "frame1: R0=2 R1=ctx()": the registers in mask of frame f. */
void xv_print_regs(struct xv_env *env, const struct xv_func_state *f, uint16_t mask);
const char *xv_reg_type_str(enum xv_reg_type t);

/* liveness.c: stack slots live at an insn (bit per slot of the frame delta frames up). */
int xv_liveness_init(struct xv_env *env);
void xv_liveness_free(struct xv_env *env);
int xv_stack_mark_read(struct xv_env *env, uint32_t frameno, uint64_t slots);
void xv_stack_mark_write(struct xv_env *env, uint32_t frameno, int spi);
void xv_stack_write_begin(struct xv_env *env);
int xv_stack_write_commit(struct xv_env *env, int insn);
uint64_t xv_stack_live(const struct xv_env *env, int insn, int delta);
int xv_insn_successors(const struct xv_env *env, int t, int succ[2], bool branch[2]);

/* precision.c: the kernel's precision backtracking (mark_chain_precision). */
/* regno of the current frame needs a precise value before the current insn. */
int xv_mark_precise(struct xv_env *env, int regno);
/* Stack slot spi of frame `frame` holds a spilled scalar that needs a precise value. */
int xv_mark_precise_slot(struct xv_env *env, int frame, int spi);
/* After pruning against old: what old needed precise, the current path needs too. */
int xv_propagate_precision(struct xv_env *env, const struct xv_state *old);
/* Record one history step for the current insn (merged with one already there). */
int xv_push_hist(struct xv_env *env, uint8_t flags, uint8_t frame, uint8_t spi,
		 const uint16_t *linked, int linked_cnt);
void xv_mark_all_scalars_imprecise(struct xv_state *st);

/* ---- the path walk's shared pieces (check.c and the files it drives) ---- */

#define MAX_PACKET_OFF 0xffff
#define MAX_VAR_OFF (1 << 29)
#define HELPER_TAIL_CALL 12
#define HELPER_SPIN_UNLOCK 94

enum { SRC_OP, DST_OP, DST_OP_NO_MARK };

static inline struct xv_func_state *cur_frame(struct xv_env *env)
{
	return env->cur->frame[env->cur->curframe];
}

static inline struct xv_reg *cur_regs(struct xv_env *env)
{
	return cur_frame(env)->regs;
}

static inline bool is_pointer(const struct xv_reg *reg)
{
	return reg->type != SCALAR_VALUE && reg->type != NOT_INIT;
}

#define HELPER_FOR_EACH_MAP_ELEM 164
#define HELPER_LOOP 181

static inline bool xv_is_callback_helper(const struct xbpf_insn *insn)
{
	return insn->code == (XBPF_JMP | XBPF_CALL) && insn->src_reg == 0 &&
	       (insn->imm == HELPER_LOOP || insn->imm == HELPER_FOR_EACH_MAP_ELEM);
}

static inline bool is_pkt(const struct xv_reg *reg)
{
	return reg->type == PTR_TO_PACKET || reg->type == PTR_TO_PACKET_META;
}

static inline bool xv_type_may_be_null(enum xv_reg_type t)
{
	return t == PTR_TO_MAP_VALUE_OR_NULL || t == CONST_PTR_TO_MAP_OR_NULL ||
	       t == PTR_TO_RINGBUF_MEM_OR_NULL || t == PTR_TO_MEM_OR_NULL;
}

static inline void mark_not_init(struct xv_reg *reg)
{
	memset(reg, 0, sizeof(*reg));
	reg->type = NOT_INIT;
}

static inline void mark_ptr(struct xv_reg *reg, enum xv_reg_type type)
{
	xv_mark_known(reg, 0);
	reg->type = type;
}


int xv_check_reg_arg(struct xv_env *env, int regno, int t);

/* stack.c */
/* In-frame check of an access at regs[regno]+off; grows the frame and its depth. */
int xv_stack_bounds(struct xv_env *env, int regno, int off, int size, bool write);
int xv_stack_write(struct xv_env *env, int ptr_regno, int off, int size, int value_regno);
int xv_stack_read(struct xv_env *env, int ptr_regno, int off, int size, int dst_regno);
/* Stack memory a helper reads (or writes, or fills when raw_mode). */
int xv_check_stack_range(struct xv_env *env, int regno, int off, int size, bool zero_ok, bool write,
			 bool raw_mode);
/* A constant map key on the stack (array lookups that cannot miss); -EOPNOTSUPP if not. */
int xv_stack_const_key(struct xv_env *env, int regno, int key_size, int64_t *value);

/* mem.c */
int xv_check_map_access(struct xv_env *env, int regno, int off, int size, bool zero_ok);
/* check_mem_region_access(): every offset regs[regno]'s bounds allow inside mem_size bytes. */
int xv_check_mem_region(struct xv_env *env, int regno, int off, int size, uint32_t mem_size,
			bool zero_ok);
int xv_check_map_access_type(struct xv_env *env, int regno, int off, int size, bool write);
int xv_check_packet_access(struct xv_env *env, int regno, int off, int size, bool zero_ok);
int xv_check_ptr_off_reg(struct xv_env *env, const struct xv_reg *reg, int regno, bool fixed_off_ok);
int xv_check_ptr_alignment(struct xv_env *env, const struct xv_reg *reg, int off, int size,
			   bool strict_once);
int xv_check_mem_access(struct xv_env *env, int regno, int off, int size, bool write, int value_regno,
			bool strict_once, bool is_ldsx);
int xv_check_ldx(struct xv_env *env, const struct xbpf_insn *insn);
int xv_check_st_stx(struct xv_env *env, const struct xbpf_insn *insn);
int xv_check_atomic(struct xv_env *env, const struct xbpf_insn *insn);
int xv_check_ld_imm(struct xv_env *env, const struct xbpf_insn *insn);
int xv_check_ld_abs(struct xv_env *env, const struct xbpf_insn *insn);
void xv_clobber_caller_saved(struct xv_env *env);

/* alu.c */
int xv_check_alu(struct xv_env *env, const struct xbpf_insn *insn);

/* prune.c */
int xv_push_stack(struct xv_env *env, int insn_idx, int prev_idx, struct xv_state **ret);
int xv_pop_stack(struct xv_env *env);
void xv_update_branch_counts(struct xv_explored *e);
int xv_is_state_visited(struct xv_env *env, int idx);
void xv_drop_states(struct xv_env *env);

/* branch.c */
int xv_check_cond_jmp(struct xv_env *env, const struct xbpf_insn *insn, int *insn_idx);

/* calls.c */
int xv_check_helper_call(struct xv_env *env, const struct xbpf_insn *insn);
int xv_check_func_call(struct xv_env *env, const struct xbpf_insn *insn, int *insn_idx);

/* refs.c */
/* The bpf_spin_lock the path holds, or NULL (at most one: the kernel's rule). */
const struct xv_ref *xv_held_lock(const struct xv_state *st);
/* bpf_spin_lock()/unlock() on the lock at regs[regno] (process_spin_lock()). */
int xv_process_spin_lock(struct xv_env *env, int regno, bool lock);
/* A new reference of the path, acquired by the call at insn_idx: its id in *ret_id. */
int xv_acquire_reference(struct xv_env *env, int insn_idx, uint32_t *ret_id);
/* Release reference id: every pointer carrying it becomes a scalar; -EINVAL if not held. */
int xv_release_reference(struct xv_env *env, uint32_t id);
/*
 * A path that ends here (prefix names how: "BPF_EXIT instruction in main
 * prog", "BPF_LD_[ABS|IND]") must not hold a reference (only checked in the
 * main frame, as the kernel does: check_resource_leak()), nor a
 * bpf_spin_lock when check_lock.
 */
int xv_check_resource_leak(struct xv_env *env, const char *prefix, bool check_lock);
/* Drop reference id from st (registers untouched); -EINVAL if st does not hold it. */
int xv_release_ref_state(struct xv_state *st, uint32_t id);
int xv_prepare_func_exit(struct xv_env *env, int *insn_idx);
static inline bool xv_subprog_is_global(const struct xv_env *env, int subprog)
{
	return env->subprog[subprog].sig && env->subprog[subprog].sig->global;
}
void xv_clear_all_pkt_pointers(struct xv_env *env);

#endif /* XBPF_VERIFIER_IMPL_H */
