/* SPDX-License-Identifier: MIT */
/*
 * progen.c - random program generator (see progen.h).
 *
 * A function is: register init, stack init, a body of "blocks", an epilogue.
 * Blocks are the only jump targets, so multi-instruction sequences (a call
 * and the re-initialization of R1-R5 after it, a pointer derived from R10 and
 * overwritten after use) are never entered in the middle.
 */
#include <stdlib.h>
#include <string.h>

#include "progen.h"

#define MAX_BLOCKS 512
#define MAX_FIXUPS 4096

struct fixup {
	uint32_t at;
	int target; /* block index (jumps) or function index (calls) */
	bool is_call;
	bool gotol;
};

struct gen {
	struct tprog *p;
	const struct progen_opts *o;
	int nfuncs, func;
	uint16_t depth[XBPF_MAX_CALL_FRAMES];
	uint32_t block_start[MAX_BLOCKS + 1];
	int nblocks;
	struct fixup jumps[MAX_FIXUPS];
	int njumps;
	struct fixup calls[MAX_FIXUPS];
	int ncalls;
	bool r1_ptr; /* callee: R1 still points at the caller's 16 bytes */
};

static const uint64_t pool[] = {
	0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256,
	0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x10000,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL, 0x1ffffffffULL,
	0x7fffffffffffffffULL, 0x8000000000000000ULL, 0xffffffffffffffffULL,
	0xfffffffffffffffeULL, 0xffffffff80000000ULL, 0xffffffff7fffffffULL,
	0x0123456789abcdefULL, 0xfedcba9876543210ULL,
};

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(t_rand() % n) : 0;
}

static uint64_t rnd_value(void)
{
	switch (rnd(4)) {
	case 0:
		return t_rand();
	case 1:
		return (uint64_t)(int64_t)(int32_t)t_rand();
	case 2:
		return pool[rnd(sizeof(pool) / sizeof(pool[0]))] + rnd(3) - 1;
	default:
		return pool[rnd(sizeof(pool) / sizeof(pool[0]))];
	}
}

static int32_t rnd_imm(void)
{
	return (int32_t)rnd_value();
}

static void add(struct gen *g, struct xbpf_insn insn)
{
	tprog_add(g->p, insn);
}

/*
 * Registers random ALU ops may use: never R10, and never R1 in a callee,
 * where it may still hold the caller's stack pointer on a path that jumped
 * over the call that replaced it.
 */
static uint8_t rnd_reg(struct gen *g)
{
	for (;;) {
		uint8_t r = (uint8_t)rnd(10);

		if (r == 1 && g->func > 0)
			continue;
		if (r == 6 && g->func == 0 && g->o->mode == PROGEN_XDP)
			continue; /* the context */
		return r;
	}
}

static uint8_t rnd_reg_except(struct gen *g, uint32_t mask)
{
	for (;;) {
		uint8_t r = rnd_reg(g);

		if (!(mask & 1u << r))
			return r;
	}
}

static void init_reg(struct gen *g, uint8_t r)
{
	if (rnd(2))
		tprog_ld_imm64(g->p, r, rnd_value());
	else
		add(g, I(INSN(XBPF_ALU64 | XBPF_MOV | XBPF_K, r, 0, 0, rnd_imm())));
}

static void gen_alu(struct gen *g)
{
	static const uint8_t ops[] = {
		XBPF_ADD, XBPF_SUB, XBPF_MUL, XBPF_DIV, XBPF_OR, XBPF_AND, XBPF_LSH, XBPF_RSH,
		XBPF_NEG, XBPF_MOD, XBPF_XOR, XBPF_MOV, XBPF_ARSH, XBPF_END,
	};
	uint8_t op = ops[rnd(sizeof(ops))];
	bool w = rnd(2), x = rnd(2);
	uint8_t cls = w ? XBPF_ALU64 : XBPF_ALU;
	uint8_t dst = rnd_reg(g), src = rnd_reg(g);
	int16_t off = 0;
	int32_t imm = rnd_imm();

	switch (op) {
	case XBPF_NEG:
		add(g, I(INSN(cls | op | XBPF_K, dst, 0, 0, 0)));
		return;
	case XBPF_END: {
		static const int32_t widths[] = { 16, 32, 64 };

		if (w) /* v4 bswap */
			add(g, I(INSN(XBPF_ALU64 | XBPF_END | XBPF_TO_LE, dst, 0, 0, widths[rnd(3)])));
		else
			add(g, I(INSN(XBPF_ALU | XBPF_END | (x ? XBPF_TO_BE : XBPF_TO_LE), dst, 0, 0, widths[rnd(3)])));
		return;
	}
	case XBPF_LSH:
	case XBPF_RSH:
	case XBPF_ARSH:
		if (!x)
			imm = (int32_t)rnd(w ? 64 : 32);
		break;
	case XBPF_DIV:
	case XBPF_MOD:
		off = (int16_t)rnd(2); /* sdiv / smod */
		if (!x && imm == 0)
			imm = rnd(2) ? -1 : 3;
		break;
	case XBPF_MOV:
		if (x && rnd(3) == 0) {
			static const int16_t sx[] = { 8, 16, 32 };

			off = sx[rnd(w ? 3 : 2)];
		}
		break;
	}
	if (x)
		add(g, I(INSN(cls | op | XBPF_X, dst, src, off, 0)));
	else
		add(g, I(INSN(cls | op | XBPF_K, dst, 0, off, imm)));
}

static const uint8_t sizes[] = { XBPF_B, XBPF_H, XBPF_W, XBPF_DW };
static const uint8_t size_bytes[] = { 1, 2, 4, 8 };

/* Aligned offset of a `bytes`-wide access inside [base - span, base). */
static int16_t rnd_off(int span, int bytes)
{
	int slots = span / bytes;

	return (int16_t)(-(int)(rnd(slots) + 1) * bytes);
}

static void gen_mem(struct gen *g, uint8_t base, int span, int16_t bias)
{
	int si = (int)rnd(4);
	uint8_t size = sizes[si];
	int16_t off = (int16_t)(rnd_off(span, size_bytes[si]) + bias);
	uint8_t reg = rnd_reg(g);

	while (reg == base) /* never store or exchange the pointer itself */
		reg = rnd_reg(g);
	switch (rnd(5)) {
	case 0:
		add(g, I(INSN(XBPF_ST | XBPF_MEM | size, base, 0, off, rnd_imm())));
		break;
	case 1:
		add(g, I(INSN(XBPF_STX | XBPF_MEM | size, base, reg, off, 0)));
		break;
	case 2:
		if (size != XBPF_DW && rnd(2)) {
			add(g, I(INSN(XBPF_LDX | XBPF_MEMSX | size, reg, base, off, 0)));
			break;
		}
		/* fallthrough */
	case 3:
		add(g, I(INSN(XBPF_LDX | XBPF_MEM | size, reg, base, off, 0)));
		break;
	default: {
		static const int32_t aops[] = {
			XBPF_ADD, XBPF_OR, XBPF_AND, XBPF_XOR,
			XBPF_ADD | XBPF_FETCH, XBPF_OR | XBPF_FETCH, XBPF_AND | XBPF_FETCH,
			XBPF_XOR | XBPF_FETCH, XBPF_XCHG, XBPF_CMPXCHG,
		};
		bool w = rnd(2);

		int32_t aop = aops[rnd(sizeof(aops) / sizeof(aops[0]))];

		if (aop == XBPF_CMPXCHG && base == 0 && g->o->mode == PROGEN_XDP)
			aop = XBPF_XCHG; /* the kernel refuses R0 as address and comparand */
		off = (int16_t)(rnd_off(span, w ? 8 : 4) + bias);
		add(g, I(INSN(XBPF_STX | XBPF_ATOMIC | (w ? XBPF_DW : XBPF_W), base, reg, off, aop)));
		break;
	}
	}
}

/* Memory op through a register other than R10, overwritten afterwards. */
static void gen_ptr_mem(struct gen *g)
{
	int span = g->depth[g->func];
	uint8_t x = rnd_reg(g);
	int16_t bias = (int16_t)(8 * rnd(span / 8 / 2 + 1));

	add(g, I(MOV64X(x, XBPF_REG_FP)));
	add(g, I(A64K(ADD, x, -bias)));
	gen_mem(g, x, span - bias, bias);
	/* rnd_reg() never picks R10, so x may also be the loaded register: fine */
	init_reg(g, x);
}

static void reinit_args(struct gen *g)
{
	for (uint8_t r = 1; r <= 5; r++)
		init_reg(g, r);
	g->r1_ptr = false;
}

static void gen_helper_call(struct gen *g)
{
	if (g->func > 0) /* R1 may hold the caller's pointer on some path */
		init_reg(g, 1);
	add(g, I(CALL_HELPER(TH_MIX)));
	reinit_args(g);
}

static void ld_map(struct gen *g, uint8_t dst, int map)
{
	add(g, I(INSN(XBPF_LD | XBPF_DW | XBPF_IMM, dst, XBPF_PSEUDO_MAP_FD, 0, map)));
	add(g, I(INSN(0, 0, 0, 0, 0)));
}

/* Accesses of the value or packet at `base`, `span` bytes, value regs not in `mask`. */
static void gen_checked_accesses(struct gen *g, uint8_t base, int span, uint32_t mask, bool atomics)
{
	for (int n = 1 + (int)rnd(4); n > 0; n--) {
		int si = (int)rnd(4);
		uint8_t size = sizes[si], reg = rnd_reg_except(g, mask);
		int16_t off = (int16_t)(rnd((uint32_t)(span / size_bytes[si])) * size_bytes[si]);

		switch (rnd(atomics ? 4 : 3)) {
		case 0:
			add(g, I(INSN(XBPF_LDX | (size != XBPF_DW && rnd(2) ? XBPF_MEMSX : XBPF_MEM) | size, reg, base, off, 0)));
			break;
		case 1:
			add(g, I(INSN(XBPF_STX | XBPF_MEM | size, base, reg, off, 0)));
			break;
		case 2:
			add(g, I(INSN(XBPF_ST | XBPF_MEM | size, base, 0, off, rnd_imm())));
			break;
		default: {
			static const int32_t aops[] = {
				XBPF_ADD, XBPF_OR, XBPF_AND, XBPF_XOR, XBPF_ADD | XBPF_FETCH,
				XBPF_OR | XBPF_FETCH, XBPF_AND | XBPF_FETCH, XBPF_XOR | XBPF_FETCH,
				XBPF_XCHG, XBPF_CMPXCHG,
			};
			bool w = rnd(2);
			int32_t aop = aops[rnd(sizeof(aops) / sizeof(aops[0]))];

			if (aop == XBPF_CMPXCHG && (base == 0 || reg == 0))
				aop = XBPF_XCHG; /* R0 is the comparand */
			off = (int16_t)(rnd((uint32_t)(span / (w ? 8 : 4))) * (w ? 8 : 4));
			add(g, I(INSN(XBPF_STX | XBPF_ATOMIC | (w ? XBPF_DW : XBPF_W), base, reg, off, aop)));
			break;
		}
		}
	}
}

/* r0 = lookup(data map, key); if (r0) accesses; r0 = scalar; R1-R5 fresh. */
static void gen_map_block(struct gen *g)
{
	int16_t slot = (int16_t)(-8 * (int)(1 + rnd((uint32_t)(g->depth[g->func] / 8))));
	uint32_t at;

	add(g, I(ST(W, XBPF_REG_FP, slot, (int32_t)rnd(PROGEN_DATA_ENTRIES + 1))));
	ld_map(g, 1, PROGEN_MAP_DATA);
	add(g, I(MOV64X(2, XBPF_REG_FP)));
	add(g, I(A64K(ADD, 2, slot)));
	add(g, I(CALL_HELPER(1))); /* bpf_map_lookup_elem */
	at = g->p->cnt;
	add(g, I(JK(JEQ, 0, 0, 0)));
	/* R1-R5 are dead after the call */
	gen_checked_accesses(g, 0, PROGEN_DATA_VALUE, 0x7fu, true);
	g->p->insns[at].off = (int16_t)(g->p->cnt - at - 1);
	add(g, I(MOV64K(0, rnd_imm())));
	reinit_args(g);
}

/* r4 = data; if (data + N > data_end) skip; accesses of [data, data + N). */
static void gen_packet_block(struct gen *g)
{
	int n = 8 * (int)(1 + rnd(PROGEN_PKT_ACCESS / 8));
	uint32_t at;

	add(g, I(LDX(W, 4, 6, 0))); /* xdp_md.data */
	add(g, I(LDX(W, 5, 6, 4))); /* xdp_md.data_end */
	add(g, I(MOV64X(3, 4)));
	add(g, I(A64K(ADD, 3, n)));
	at = g->p->cnt;
	add(g, I(JX(JGT, 3, 5, 0)));
	gen_checked_accesses(g, 4, n, 1u << 3 | 1u << 4 | 1u << 5 | 1u << 6, false);
	g->p->insns[at].off = (int16_t)(g->p->cnt - at - 1);
	init_reg(g, 3);
	init_reg(g, 4);
	init_reg(g, 5);
}

static void gen_bpf_call_to(struct gen *g, int callee)
{

	add(g, I(MOV64X(1, XBPF_REG_FP)));
	add(g, I(A64K(ADD, 1, -16)));
	g->calls[g->ncalls++] = (struct fixup){ .at = g->p->cnt, .target = callee, .is_call = true };
	add(g, I(CALL_PC(0)));
	reinit_args(g);
}

static void gen_bpf_call(struct gen *g)
{
	gen_bpf_call_to(g, g->func + 1 + (int)rnd((uint32_t)(g->nfuncs - g->func - 1)));
}

static void gen_jump(struct gen *g, int block)
{
	static const uint8_t conds[] = {
		XBPF_JEQ, XBPF_JGT, XBPF_JGE, XBPF_JSET, XBPF_JNE, XBPF_JSGT,
		XBPF_JSGE, XBPF_JLT, XBPF_JLE, XBPF_JSLT, XBPF_JSLE,
	};
	int target = block + 1 + (int)rnd(rnd(4) ? 4 : 16);
	uint8_t cls = rnd(2) ? XBPF_JMP : XBPF_JMP32;

	if (target > g->o->body_blocks)
		target = g->o->body_blocks;
	if (g->njumps >= MAX_FIXUPS)
		return;
	g->jumps[g->njumps++] = (struct fixup){ .at = g->p->cnt, .target = target };
	if (rnd(8) == 0 && g->o->mode == PROGEN_RAW) {
		bool gotol = rnd(2);

		g->jumps[g->njumps - 1].gotol = gotol;
		add(g, I(INSN((gotol ? XBPF_JMP32 : XBPF_JMP) | XBPF_JA, 0, 0, 0, 0)));
	} else if (rnd(2)) {
		add(g, I(INSN(cls | conds[rnd(sizeof(conds))] | XBPF_X, rnd_reg(g), rnd_reg(g), 0, 0)));
	} else {
		add(g, I(INSN(cls | conds[rnd(sizeof(conds))] | XBPF_K, rnd_reg(g), 0, 0, rnd_imm())));
	}
}

static void gen_block(struct gen *g, int block)
{
	uint32_t kind = rnd(100);

	if (kind < 40) {
		gen_alu(g);
	} else if (kind < 45) {
		init_reg(g, rnd_reg(g));
	} else if (kind < 57) {
		gen_mem(g, XBPF_REG_FP, g->depth[g->func], 0);
	} else if (kind < 64) {
		gen_ptr_mem(g);
	} else if (kind < 68 && g->r1_ptr) {
		gen_mem(g, 1, 16, 16);
	} else if (kind < 82) {
		gen_jump(g, block);
	} else if (kind < 87 && g->o->mode == PROGEN_XDP) {
		if (g->func == 0 && rnd(2))
			gen_packet_block(g);
		else
			gen_map_block(g);
	} else if (kind < 87 && g->o->helpers) {
		gen_helper_call(g);
	} else if (kind < 92 && g->func + 1 < g->nfuncs) {
		gen_bpf_call(g);
	} else if (kind < 94 && g->o->long_padding) {
		/* ~120-400 bytes: jumps over this sit near the rel8 limit */
		for (int n = 20 + (int)rnd(60); n > 0; n--)
			gen_alu(g);
	} else {
		gen_alu(g);
	}
}

static void gen_func(struct gen *g, int f)
{
	struct tprog *p = g->p;
	int depth = g->depth[f];
	bool xdp = g->o->mode == PROGEN_XDP;

	g->func = f;
	g->nblocks = 0;
	g->njumps = 0;
	g->r1_ptr = f > 0;
	tprog_func(p, (uint16_t)depth);

	if (xdp && f == 0)
		add(g, I(MOV64X(6, 1))); /* keep the context */
	/* Registers the verifier would call uninitialized get values first. */
	for (uint8_t r = 0; r <= 9; r++)
		if ((f == 0 || r == 0 || r >= 6) && !(xdp && f == 0 && r == 6))
			init_reg(g, r);
	for (int off = 8; off <= depth; off += 8) {
		if (rnd(2))
			add(g, I(ST(DW, XBPF_REG_FP, -off, rnd_imm())));
		else
			add(g, I(STX(DW, XBPF_REG_FP, (uint8_t)(7 + rnd(3)), -off)));
	}

	for (int b = 0; b < g->o->body_blocks; b++) {
		g->block_start[b] = p->cnt;
		if (b == 0 && xdp && f + 1 < g->nfuncs)
			gen_bpf_call_to(g, f + 1); /* every function is reachable */
		else
			gen_block(g, b);
	}
	g->block_start[g->o->body_blocks] = p->cnt;

	if (f == 0 && xdp) {
		uint32_t at;

		/* R0-R9 (not the context) over the top of the stack, then stack -> result map */
		for (uint8_t r = 0; r <= 9; r++)
			if (r != 6)
				add(g, I(STX(DW, XBPF_REG_FP, r, -8 * (r + 1))));
		add(g, I(ST(W, XBPF_REG_FP, -88, 0)));
		ld_map(g, 1, PROGEN_MAP_RESULT);
		add(g, I(MOV64X(2, XBPF_REG_FP)));
		add(g, I(A64K(ADD, 2, -88)));
		add(g, I(CALL_HELPER(1)));
		at = p->cnt;
		add(g, I(JK(JEQ, 0, 0, 0)));
		for (int off = 8; off <= depth; off += 8) {
			add(g, I(LDX(DW, 3, XBPF_REG_FP, -off)));
			add(g, I(STX(DW, 0, 3, depth - off)));
		}
		p->insns[at].off = (int16_t)(p->cnt - at - 1);
		add(g, I(MOV64K(0, 2))); /* XDP_PASS */
	} else if (f == 0) {
		/* Dump R0-R9 over the top of the stack, then the whole stack. */
		for (uint8_t r = 0; r <= 9; r++)
			add(g, I(STX(DW, XBPF_REG_FP, r, -8 * (r + 1))));
		add(g, I(MOV64X(1, XBPF_REG_FP)));
		add(g, I(A64K(ADD, 1, -depth)));
		add(g, I(MOV64K(2, depth)));
		add(g, I(CALL_HELPER(TH_DUMP)));
	} else {
		/* Fold the callee's state into what the caller can observe. */
		for (uint8_t r = 2; r <= 9; r++)
			add(g, I(A64X(XOR, 0, r)));
		add(g, I(LDX(DW, 2, XBPF_REG_FP, -8)));
		add(g, I(A64X(ADD, 0, 2)));
		if (g->o->log_returns) {
			add(g, I(MOV64X(6, 0)));
			add(g, I(MOV64X(1, 0)));
			add(g, I(MOV64K(2, f)));
			add(g, I(CALL_HELPER(TH_LOG)));
			add(g, I(MOV64X(0, 6)));
		}
	}
	add(g, I(EXIT()));

	for (int i = 0; i < g->njumps; i++) {
		struct xbpf_insn *insn = &p->insns[g->jumps[i].at];
		int32_t rel = (int32_t)g->block_start[g->jumps[i].target] - (int32_t)g->jumps[i].at - 1;

		if (g->jumps[i].gotol)
			insn->imm = rel;
		else
			insn->off = (int16_t)rel;
	}
}

void progen_raw(struct tprog *p, const struct progen_opts *opts)
{
	struct progen_opts o = *opts;

	o.mode = PROGEN_RAW;
	progen_generate(p, &o);
}

void progen_generate(struct tprog *p, const struct progen_opts *opts)
{
	struct gen *g = calloc(1, sizeof(*g));
	int budget;

	if (!g)
		abort();
	t_srand(opts->seed);
	g->p = p;
	g->o = opts;
	g->nfuncs = 1 + (int)rnd((uint32_t)(opts->max_funcs > 0 ? opts->max_funcs : 1));
	if (g->nfuncs > XBPF_MAX_CALL_FRAMES)
		g->nfuncs = XBPF_MAX_CALL_FRAMES;
	g->depth[0] = (uint16_t)(128 + 8 * rnd(9));
	budget = XBPF_STACK_SIZE - g->depth[0];
	for (int f = 1; f < g->nfuncs; f++) {
		int max = budget / (g->nfuncs - 1);

		if (opts->mode == PROGEN_XDP) /* the kernel rounds frames up to 32 */
			g->depth[f] = (uint16_t)(rnd(2) ? 16 : 32);
		else
			g->depth[f] = (uint16_t)(16 + 8 * rnd((uint32_t)((max - 16) / 8 + 1)));
	}
	tprog_init(p);
	for (int f = 0; f < g->nfuncs; f++)
		gen_func(g, f);
	for (int i = 0; i < g->ncalls; i++) {
		struct xbpf_insn *insn = &p->insns[g->calls[i].at];

		insn->imm = (int32_t)p->func_start[g->calls[i].target] - (int32_t)g->calls[i].at - 1;
	}
	free(g);
}
