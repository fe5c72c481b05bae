/* SPDX-License-Identifier: MIT */
/*
 * insn.h - compact builders for hand-written test programs.
 * Each macro expands to one struct xbpf_insn initializer (XI_LD64 and
 * XI_LD_MAP to two).
 */
#ifndef XLB_TEST_INSN_H
#define XLB_TEST_INSN_H

#include "xbpf_isa.h"

#define XI(c, d, s, o, i) ((struct xbpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* dst op= imm / src, 64 and 32 bit */
#define XI_ALU64_K(op, d, i) XI(XBPF_ALU64 | (op) | XBPF_K, d, 0, 0, i)
#define XI_ALU64_X(op, d, s) XI(XBPF_ALU64 | (op) | XBPF_X, d, s, 0, 0)
#define XI_ALU32_K(op, d, i) XI(XBPF_ALU | (op) | XBPF_K, d, 0, 0, i)
#define XI_ALU32_X(op, d, s) XI(XBPF_ALU | (op) | XBPF_X, d, s, 0, 0)
#define XI_MOV64_K(d, i) XI_ALU64_K(XBPF_MOV, d, i)
#define XI_MOV64_X(d, s) XI_ALU64_X(XBPF_MOV, d, s)
#define XI_MOV32_K(d, i) XI_ALU32_K(XBPF_MOV, d, i)
#define XI_MOV32_X(d, s) XI_ALU32_X(XBPF_MOV, d, s)

/* memory: size is XBPF_B/H/W/DW */
#define XI_LDX(sz, d, s, o) XI(XBPF_LDX | (sz) | XBPF_MEM, d, s, o, 0)
#define XI_STX(sz, d, s, o) XI(XBPF_STX | (sz) | XBPF_MEM, d, s, o, 0)
#define XI_ST(sz, d, o, i) XI(XBPF_ST | (sz) | XBPF_MEM, d, 0, o, i)
#define XI_ATOMIC(sz, op, d, s, o) XI(XBPF_STX | (sz) | XBPF_ATOMIC, d, s, o, op)

/* 64-bit immediate and map references (two slots) */
#define XI_LD64(d, v) XI(XBPF_LD | XBPF_DW | XBPF_IMM, d, 0, 0, (int32_t)(uint32_t)(uint64_t)(v)), \
		      XI(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))
#define XI_LD_MAP(d, idx) XI(XBPF_LD | XBPF_DW | XBPF_IMM, d, XBPF_PSEUDO_MAP_FD, 0, idx), XI(0, 0, 0, 0, 0)
#define XI_LD_MAP_VALUE(d, idx, o) XI(XBPF_LD | XBPF_DW | XBPF_IMM, d, XBPF_PSEUDO_MAP_VALUE, 0, idx), \
				   XI(0, 0, 0, 0, o)
#define XI_LD_ABS(sz, i) XI(XBPF_LD | (sz) | XBPF_ABS, 0, 0, 0, i)

/* control flow */
#define XI_JMP_K(op, d, i, o) XI(XBPF_JMP | (op) | XBPF_K, d, 0, o, i)
#define XI_JMP_X(op, d, s, o) XI(XBPF_JMP | (op) | XBPF_X, d, s, o, 0)
#define XI_JMP32_K(op, d, i, o) XI(XBPF_JMP32 | (op) | XBPF_K, d, 0, o, i)
#define XI_JA(o) XI(XBPF_JMP | XBPF_JA, 0, 0, o, 0)
#define XI_CALL(id) XI(XBPF_JMP | XBPF_CALL, 0, 0, 0, id)
#define XI_CALL_REL(o) XI(XBPF_JMP | XBPF_CALL, 0, XBPF_PSEUDO_CALL, 0, o)
#define XI_EXIT() XI(XBPF_JMP | XBPF_EXIT, 0, 0, 0, 0)

/* helper ids (the kernel's BPF_FUNC_* numbers) */
#define XH_MAP_LOOKUP 1
#define XH_MAP_UPDATE 2
#define XH_MAP_DELETE 3
#define XH_KTIME 5
#define XH_TAIL_CALL 12
#define XH_CSUM_DIFF 28
#define XH_XDP_ADJUST_HEAD 44
#define XH_REDIRECT_MAP 51

/* ctx offsets used by the cases (UAPI layouts) */
#define XDP_MD_DATA 0
#define XDP_MD_DATA_END 4
#define XDP_MD_DATA_META 8
#define SKB_LEN 0
#define SKB_MARK 8
#define SKB_CB0 48
#define SKB_DATA 76
#define SKB_DATA_END 80

#endif /* XLB_TEST_INSN_H */
