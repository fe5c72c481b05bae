/* SPDX-License-Identifier: MIT */
/*
 * check.c - encoding checks of single instructions, in the order and the
 * wording of the Linux verifier (resolve_pseudo_ldimm64(), then the per-class
 * checks of do_check()).
 *
 * Only what one instruction says on its own is checked here.  Policy that
 * needs the program or the register state (jump ranges, division by a zero
 * immediate, shift ranges, helper ids) belongs to the verifier, so that the
 * interpreter can still run conformance programs that no verifier accepts.
 */
#include <errno.h>
#include <stdio.h>

#include "xbpf_isa.h"

/* Messages with a number live in a per-thread buffer, valid until the next call. */
static __thread char msg_buf[64];

static int fail(const char **ret_msg, const char *msg)
{
	if (ret_msg)
		*ret_msg = msg;
	return -EINVAL;
}

static int fail_num(const char **ret_msg, const char *fmt, int num)
{
	snprintf(msg_buf, sizeof(msg_buf), fmt, num);
	return fail(ret_msg, msg_buf);
}

/* The kernel's check_reg_arg(): a register number beyond R10. */
static int check_reg(int regno, const char **ret_msg)
{
	if (regno >= XBPF_MAX_REG)
		return fail_num(ret_msg, "R%d is invalid", regno);
	return 0;
}

/* Destination registers: in range and never the frame pointer. */
static int check_dst(int regno, const char **ret_msg)
{
	int err = check_reg(regno, ret_msg);

	if (err)
		return err;
	if (regno == XBPF_REG_FP)
		return fail(ret_msg, "frame pointer is read only");
	return 0;
}

static int check_ldimm64(const struct xbpf_insn *insns, size_t cnt, size_t idx,
			 const char **ret_msg)
{
	const struct xbpf_insn *insn = &insns[idx];

	if (idx + 1 >= cnt || insn[1].code != 0 || insn[1].dst_reg != 0 || insn[1].src_reg != 0 ||
	    insn[1].off != 0)
		return fail(ret_msg, "invalid bpf_ld_imm64 insn");
	switch (insn->src_reg) {
	case 0:
	case XBPF_PSEUDO_MAP_VALUE:
	case XBPF_PSEUDO_MAP_IDX_VALUE:
	case XBPF_PSEUDO_BTF_ID:
		break;
	case XBPF_PSEUDO_FUNC:
		if (insn[1].imm != 0)
			return fail(ret_msg, "unrecognized bpf_ld_imm64 insn");
		break;
	case XBPF_PSEUDO_MAP_FD:
	case XBPF_PSEUDO_MAP_IDX:
		if (insn[1].imm == 0)
			break;
		/* fallthrough */
	default:
		return fail(ret_msg, "unrecognized bpf_ld_imm64 insn");
	}
	if (insn->off != 0)
		return fail(ret_msg, "BPF_LD_IMM64 uses reserved fields");
	return check_dst(insn->dst_reg, ret_msg);
}

static int check_alu(const struct xbpf_insn *insn, const char **ret_msg)
{
	uint8_t op = XBPF_OP(insn->code);
	bool alu64 = XBPF_CLASS(insn->code) == XBPF_ALU64;
	bool x = XBPF_SRC(insn->code) == XBPF_X;
	int err;

	if (op == XBPF_NEG) {
		if (x || insn->src_reg != 0 || insn->off != 0 || insn->imm != 0)
			return fail(ret_msg, "BPF_NEG uses reserved fields");
		return check_dst(insn->dst_reg, ret_msg);
	}
	if (op == XBPF_END) {
		if (insn->src_reg != 0 || insn->off != 0 ||
		    (insn->imm != 16 && insn->imm != 32 && insn->imm != 64) ||
		    (alu64 && x))
			return fail(ret_msg, "BPF_END uses reserved fields");
		return check_dst(insn->dst_reg, ret_msg);
	}
	if (op == XBPF_MOV) {
		if (x) {
			bool sx_ok = insn->off == 0 || insn->off == 8 || insn->off == 16 ||
				     (alu64 && insn->off == 32);

			if (!sx_ok || insn->imm != 0)
				return fail(ret_msg, "BPF_MOV uses reserved fields");
		} else if (insn->src_reg != 0 || insn->off != 0) {
			return fail(ret_msg, "BPF_MOV uses reserved fields");
		}
	} else {
		bool off_ok = insn->off == 0 ||
			      (insn->off == 1 && (op == XBPF_DIV || op == XBPF_MOD));

		if (!off_ok || (x ? insn->imm != 0 : insn->src_reg != 0))
			return fail(ret_msg, "BPF_ALU uses reserved fields");
	}
	if (x && (err = check_reg(insn->src_reg, ret_msg)))
		return err;
	return check_dst(insn->dst_reg, ret_msg);
}

static int check_jmp(const struct xbpf_insn *insn, const char **ret_msg)
{
	uint8_t op = XBPF_OP(insn->code);
	bool jmp32 = XBPF_CLASS(insn->code) == XBPF_JMP32;
	int err;

	switch (op) {
	case XBPF_CALL:
		if (XBPF_SRC(insn->code) != XBPF_K ||
		    (insn->src_reg != XBPF_PSEUDO_KFUNC_CALL && insn->off != 0) ||
		    (insn->src_reg != 0 && insn->src_reg != XBPF_PSEUDO_CALL &&
		     insn->src_reg != XBPF_PSEUDO_KFUNC_CALL) ||
		    insn->dst_reg != 0 || jmp32)
			return fail(ret_msg, "BPF_CALL uses reserved fields");
		return 0;
	case XBPF_JA:
		if (XBPF_SRC(insn->code) != XBPF_K || insn->src_reg != 0 || insn->dst_reg != 0 ||
		    (!jmp32 && insn->imm != 0) || (jmp32 && insn->off != 0))
			return fail(ret_msg, "BPF_JA uses reserved fields");
		return 0;
	case XBPF_EXIT:
		if (XBPF_SRC(insn->code) != XBPF_K || insn->imm != 0 || insn->src_reg != 0 ||
		    insn->dst_reg != 0 || jmp32)
			return fail(ret_msg, "BPF_EXIT uses reserved fields");
		return 0;
	}
	if (XBPF_SRC(insn->code) == XBPF_X) {
		if (insn->imm != 0)
			return fail(ret_msg, "BPF_JMP/JMP32 uses reserved fields");
		if ((err = check_reg(insn->src_reg, ret_msg)))
			return err;
	} else if (insn->src_reg != 0) {
		return fail(ret_msg, "BPF_JMP/JMP32 uses reserved fields");
	}
	return check_reg(insn->dst_reg, ret_msg);
}

/*
 * What the kernel checks on every instruction when the program is loaded
 * (resolve_pseudo_ldimm64()), before any path is walked; the rest of
 * xbpf_insn_check() it only checks on instructions a path reaches.
 */
static int check_at_load(const struct xbpf_insn *insns, size_t cnt, size_t idx, const char **ret_msg)
{
	const struct xbpf_insn *insn = &insns[idx];

	if (XBPF_CLASS(insn->code) == XBPF_LDX &&
	    ((XBPF_MODE(insn->code) != XBPF_MEM && XBPF_MODE(insn->code) != XBPF_MEMSX) ||
	     insn->imm != 0))
		return fail(ret_msg, "BPF_LDX uses reserved fields");
	if (insn->code == (XBPF_LD | XBPF_IMM | XBPF_DW)) {
		if (idx + 1 >= cnt || insn[1].code != 0 || insn[1].dst_reg != 0 ||
		    insn[1].src_reg != 0 || insn[1].off != 0)
			return fail(ret_msg, "invalid bpf_ld_imm64 insn");
		switch (insn->src_reg) {
		case 0:
		case XBPF_PSEUDO_BTF_ID:
		case XBPF_PSEUDO_FUNC:
		case XBPF_PSEUDO_MAP_VALUE:
		case XBPF_PSEUDO_MAP_IDX_VALUE:
			return 0;
		case XBPF_PSEUDO_MAP_FD:
		case XBPF_PSEUDO_MAP_IDX:
			if (insn[1].imm == 0)
				return 0;
			/* fallthrough */
		default:
			return fail(ret_msg, "unrecognized bpf_ld_imm64 insn");
		}
	}
	if (xbpf_opcode_desc(insn->code)->fmt == XBPF_FMT_INVALID)
		return fail_num(ret_msg, "unknown opcode %02x", insn->code);
	return 0;
}

int xbpf_insn_check_load(const struct xbpf_insn *insns, size_t cnt, size_t idx, const char **ret_msg)
{
	if (!insns || idx >= cnt)
		return fail(ret_msg, "invalid insn idx");
	return check_at_load(insns, cnt, idx, ret_msg);
}

int xbpf_insn_check(const struct xbpf_insn *insns, size_t cnt, size_t idx, const char **ret_msg)
{
	const struct xbpf_insn *insn;
	const struct xbpf_opdesc *desc;
	int err;

	if (!insns || idx >= cnt)
		return fail(ret_msg, "invalid insn idx");
	insn = &insns[idx];

	/* resolve_pseudo_ldimm64() looks at LDX and ld_imm64 before the opcode table. */
	if (XBPF_CLASS(insn->code) == XBPF_LDX &&
	    ((XBPF_MODE(insn->code) != XBPF_MEM && XBPF_MODE(insn->code) != XBPF_MEMSX) ||
	     insn->imm != 0))
		return fail(ret_msg, "BPF_LDX uses reserved fields");
	if (insn->code == (XBPF_LD | XBPF_IMM | XBPF_DW))
		return check_ldimm64(insns, cnt, idx, ret_msg);

	desc = xbpf_opcode_desc(insn->code);
	if (desc->fmt == XBPF_FMT_INVALID)
		return fail_num(ret_msg, "unknown opcode %02x", insn->code);

	switch (desc->fmt) {
	case XBPF_FMT_ALU:
	case XBPF_FMT_ALU_UN:
		return check_alu(insn, ret_msg);
	case XBPF_FMT_LDX:
		if ((err = check_reg(insn->src_reg, ret_msg)))
			return err;
		return check_dst(insn->dst_reg, ret_msg);
	case XBPF_FMT_ST:
		if (insn->src_reg != 0)
			return fail(ret_msg, "BPF_ST uses reserved fields");
		return check_reg(insn->dst_reg, ret_msg);
	case XBPF_FMT_STX:
		if (insn->imm != 0)
			return fail(ret_msg, "BPF_STX uses reserved fields");
		if ((err = check_reg(insn->src_reg, ret_msg)))
			return err;
		return check_reg(insn->dst_reg, ret_msg);
	case XBPF_FMT_ATOMIC:
		switch (insn->imm) {
		case XBPF_ADD:
		case XBPF_ADD | XBPF_FETCH:
		case XBPF_AND:
		case XBPF_AND | XBPF_FETCH:
		case XBPF_OR:
		case XBPF_OR | XBPF_FETCH:
		case XBPF_XOR:
		case XBPF_XOR | XBPF_FETCH:
		case XBPF_XCHG:
		case XBPF_CMPXCHG:
			break;
		default:
			return fail_num(ret_msg, "BPF_ATOMIC uses invalid atomic opcode %02x", insn->imm);
		}
		if ((err = check_reg(insn->src_reg, ret_msg)))
			return err;
		return check_reg(insn->dst_reg, ret_msg);
	case XBPF_FMT_LDABS:
		if (insn->dst_reg != 0 || insn->off != 0 ||
		    (XBPF_MODE(insn->code) == XBPF_ABS && insn->src_reg != 0))
			return fail(ret_msg, "BPF_LD_[ABS|IND] uses reserved fields");
		return check_reg(insn->src_reg, ret_msg);
	case XBPF_FMT_JA:
	case XBPF_FMT_JCOND:
	case XBPF_FMT_CALL:
	case XBPF_FMT_EXIT:
		return check_jmp(insn, ret_msg);
	default:
		return fail_num(ret_msg, "unknown opcode %02x", insn->code);
	}
}
