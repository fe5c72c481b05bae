/* SPDX-License-Identifier: MIT */
/*
 * disasm.c - one disassembler for verifier logs, `xbpf disasm`, `lbctl` and
 * the tests, printing the kernel's xlated syntax ("(61) r2 = *(u32 *)(r1 +0)")
 * so that our logs and bpftool's dumps read the same.  32-bit ALU and JMP32
 * name registers w0..w10, as the kernel does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "xbpf_isa.h"

static const char *const alu_str[16] = {
	[XBPF_ADD >> 4] = "+=",	 [XBPF_SUB >> 4] = "-=", [XBPF_MUL >> 4] = "*=",
	[XBPF_DIV >> 4] = "/=",	 [XBPF_OR >> 4] = "|=",	 [XBPF_AND >> 4] = "&=",
	[XBPF_LSH >> 4] = "<<=", [XBPF_RSH >> 4] = ">>=", [XBPF_NEG >> 4] = "neg",
	[XBPF_MOD >> 4] = "%=",	 [XBPF_XOR >> 4] = "^=", [XBPF_MOV >> 4] = "=",
	[XBPF_ARSH >> 4] = "s>>=", [XBPF_END >> 4] = "endian",
};

static const char *const atomic_str[16] = {
	[XBPF_ADD >> 4] = "add",
	[XBPF_AND >> 4] = "and",
	[XBPF_OR >> 4] = "or",
	[XBPF_XOR >> 4] = "xor",
};

static const char *const jmp_str[16] = {
	[XBPF_JA >> 4] = "jmp",	  [XBPF_JEQ >> 4] = "==", [XBPF_JGT >> 4] = ">",
	[XBPF_JLT >> 4] = "<",	  [XBPF_JGE >> 4] = ">=", [XBPF_JLE >> 4] = "<=",
	[XBPF_JSET >> 4] = "&",	  [XBPF_JNE >> 4] = "!=", [XBPF_JSGT >> 4] = "s>",
	[XBPF_JSLT >> 4] = "s<",  [XBPF_JSGE >> 4] = "s>=", [XBPF_JSLE >> 4] = "s<=",
	[XBPF_CALL >> 4] = "call", [XBPF_EXIT >> 4] = "exit",
};

static const char *const ldst_str[4] = { "u32", "u16", "u8", "u64" };
static const char *const ldsx_str[4] = { "s32", "s16", "s8", "s64" };
static const char *const movsx_str[4] = { "(s8)", "(s16)", "", "(s32)" };

/*
 * Kernel helper names by id (UAPI enum bpf_func_id), so that logs read
 * "call bpf_map_lookup_elem#1" without a callback.  A native unit test
 * compares this list with the system's <linux/bpf.h>.
 */
static const char *const helper_names[] = {
	"bpf_unspec", "bpf_map_lookup_elem", "bpf_map_update_elem", "bpf_map_delete_elem",
	"bpf_probe_read", "bpf_ktime_get_ns", "bpf_trace_printk", "bpf_get_prandom_u32",
	"bpf_get_smp_processor_id", "bpf_skb_store_bytes", "bpf_l3_csum_replace",
	"bpf_l4_csum_replace", "bpf_tail_call", "bpf_clone_redirect",
	"bpf_get_current_pid_tgid", "bpf_get_current_uid_gid", "bpf_get_current_comm",
	"bpf_get_cgroup_classid", "bpf_skb_vlan_push", "bpf_skb_vlan_pop",
	"bpf_skb_get_tunnel_key", "bpf_skb_set_tunnel_key", "bpf_perf_event_read",
	"bpf_redirect", "bpf_get_route_realm", "bpf_perf_event_output", "bpf_skb_load_bytes",
	"bpf_get_stackid", "bpf_csum_diff", "bpf_skb_get_tunnel_opt", "bpf_skb_set_tunnel_opt",
	"bpf_skb_change_proto", "bpf_skb_change_type", "bpf_skb_under_cgroup",
	"bpf_get_hash_recalc", "bpf_get_current_task", "bpf_probe_write_user",
	"bpf_current_task_under_cgroup", "bpf_skb_change_tail", "bpf_skb_pull_data",
	"bpf_csum_update", "bpf_set_hash_invalid", "bpf_get_numa_node_id",
	"bpf_skb_change_head", "bpf_xdp_adjust_head", "bpf_probe_read_str",
	"bpf_get_socket_cookie", "bpf_get_socket_uid", "bpf_set_hash", "bpf_setsockopt",
	"bpf_skb_adjust_room", "bpf_redirect_map", "bpf_sk_redirect_map", "bpf_sock_map_update",
	"bpf_xdp_adjust_meta", "bpf_perf_event_read_value", "bpf_perf_prog_read_value",
	"bpf_getsockopt", "bpf_override_return", "bpf_sock_ops_cb_flags_set",
	"bpf_msg_redirect_map", "bpf_msg_apply_bytes", "bpf_msg_cork_bytes",
	"bpf_msg_pull_data", "bpf_bind", "bpf_xdp_adjust_tail", "bpf_skb_get_xfrm_state",
	"bpf_get_stack", "bpf_skb_load_bytes_relative", "bpf_fib_lookup",
	"bpf_sock_hash_update", "bpf_msg_redirect_hash", "bpf_sk_redirect_hash",
	"bpf_lwt_push_encap", "bpf_lwt_seg6_store_bytes", "bpf_lwt_seg6_adjust_srh",
	"bpf_lwt_seg6_action", "bpf_rc_repeat", "bpf_rc_keydown", "bpf_skb_cgroup_id",
	"bpf_get_current_cgroup_id", "bpf_get_local_storage", "bpf_sk_select_reuseport",
	"bpf_skb_ancestor_cgroup_id", "bpf_sk_lookup_tcp", "bpf_sk_lookup_udp",
	"bpf_sk_release", "bpf_map_push_elem", "bpf_map_pop_elem", "bpf_map_peek_elem",
	"bpf_msg_push_data", "bpf_msg_pop_data", "bpf_rc_pointer_rel", "bpf_spin_lock",
	"bpf_spin_unlock", "bpf_sk_fullsock", "bpf_tcp_sock", "bpf_skb_ecn_set_ce",
	"bpf_get_listener_sock", "bpf_skc_lookup_tcp", "bpf_tcp_check_syncookie",
	"bpf_sysctl_get_name", "bpf_sysctl_get_current_value", "bpf_sysctl_get_new_value",
	"bpf_sysctl_set_new_value", "bpf_strtol", "bpf_strtoul", "bpf_sk_storage_get",
	"bpf_sk_storage_delete", "bpf_send_signal", "bpf_tcp_gen_syncookie",
	"bpf_skb_output", "bpf_probe_read_user", "bpf_probe_read_kernel",
	"bpf_probe_read_user_str", "bpf_probe_read_kernel_str", "bpf_tcp_send_ack",
	"bpf_send_signal_thread", "bpf_jiffies64", "bpf_read_branch_records",
	"bpf_get_ns_current_pid_tgid", "bpf_xdp_output", "bpf_get_netns_cookie",
	"bpf_get_current_ancestor_cgroup_id", "bpf_sk_assign", "bpf_ktime_get_boot_ns",
	"bpf_seq_printf", "bpf_seq_write", "bpf_sk_cgroup_id", "bpf_sk_ancestor_cgroup_id",
	"bpf_ringbuf_output", "bpf_ringbuf_reserve", "bpf_ringbuf_submit",
	"bpf_ringbuf_discard", "bpf_ringbuf_query", "bpf_csum_level",
};

#define HELPER_NAME_CNT (sizeof(helper_names) / sizeof(helper_names[0]))

static const char *builtin_helper_name(int32_t id)
{
	return id >= 0 && (size_t)id < HELPER_NAME_CNT ? helper_names[id] : NULL;
}

struct out {
	char *buf;
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void out(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->len)
		return;
	va_start(ap, fmt);
	vsnprintf(o->buf, o->len, fmt, ap);
	va_end(ap);
}

static char wreg(const struct xbpf_insn *insn)
{
	uint8_t class = XBPF_CLASS(insn->code);

	return class == XBPF_ALU || class == XBPF_JMP32 ? 'w' : 'r';
}

static void disasm_alu(struct out *o, const struct xbpf_insn *insn)
{
	uint8_t op = XBPF_OP(insn->code);
	bool alu64 = XBPF_CLASS(insn->code) == XBPF_ALU64;
	char r = wreg(insn);
	const char *opstr = alu_str[op >> 4];

	if (op == XBPF_END) {
		if (alu64)
			out(o, "(%02x) r%d = bswap%d r%d", insn->code, insn->dst_reg, insn->imm,
			    insn->dst_reg);
		else
			out(o, "(%02x) r%d = %s%d r%d", insn->code, insn->dst_reg,
			    XBPF_SRC(insn->code) == XBPF_TO_BE ? "be" : "le", insn->imm, insn->dst_reg);
		return;
	}
	if (op == XBPF_NEG) {
		out(o, "(%02x) %c%d = -%c%d", insn->code, r, insn->dst_reg, r, insn->dst_reg);
		return;
	}
	if ((op == XBPF_DIV || op == XBPF_MOD) && insn->off == 1)
		opstr = op == XBPF_DIV ? "s/=" : "s%=";
	if (XBPF_SRC(insn->code) == XBPF_X) {
		bool sx = op == XBPF_MOV && (insn->off == 8 || insn->off == 16 || insn->off == 32);

		out(o, "(%02x) %c%d %s %s%c%d", insn->code, r, insn->dst_reg, opstr,
		    sx ? movsx_str[(insn->off >> 3) - 1] : "", r, insn->src_reg);
	} else {
		out(o, "(%02x) %c%d %s %d", insn->code, r, insn->dst_reg, opstr, insn->imm);
	}
}

static void disasm_stx(struct out *o, const struct xbpf_insn *insn)
{
	const char *sz = ldst_str[XBPF_SIZE(insn->code) >> 3];
	const char *bits = XBPF_SIZE(insn->code) == XBPF_DW ? "64" : "";
	int imm = insn->imm;

	if (XBPF_MODE(insn->code) == XBPF_MEM) {
		out(o, "(%02x) *(%s *)(r%d %+d) = r%d", insn->code, sz, insn->dst_reg, insn->off,
		    insn->src_reg);
	} else if (imm == XBPF_ADD || imm == XBPF_AND || imm == XBPF_OR || imm == XBPF_XOR) {
		out(o, "(%02x) lock *(%s *)(r%d %+d) %s r%d", insn->code, sz, insn->dst_reg,
		    insn->off, alu_str[imm >> 4], insn->src_reg);
	} else if (imm == (XBPF_ADD | XBPF_FETCH) || imm == (XBPF_AND | XBPF_FETCH) ||
		   imm == (XBPF_OR | XBPF_FETCH) || imm == (XBPF_XOR | XBPF_FETCH)) {
		out(o, "(%02x) r%d = atomic%s_fetch_%s((%s *)(r%d %+d), r%d)", insn->code,
		    insn->src_reg, bits, atomic_str[(imm & 0xf0) >> 4], sz, insn->dst_reg,
		    insn->off, insn->src_reg);
	} else if (imm == XBPF_CMPXCHG) {
		out(o, "(%02x) r0 = atomic%s_cmpxchg((%s *)(r%d %+d), r0, r%d)", insn->code, bits,
		    sz, insn->dst_reg, insn->off, insn->src_reg);
	} else {
		/* xchg; xbpf_insn_check() ruled out everything else. */
		out(o, "(%02x) r%d = atomic%s_xchg((%s *)(r%d %+d), r%d)", insn->code,
		    insn->src_reg, bits, sz, insn->dst_reg, insn->off, insn->src_reg);
	}
}

static void disasm_call(struct out *o, const struct xbpf_insn *insn,
			const struct xbpf_disasm_cbs *cbs)
{
	const char *name = NULL;

	if (insn->src_reg == XBPF_PSEUDO_CALL) {
		out(o, "(%02x) call pc%+d", insn->code, insn->imm);
		return;
	}
	if (insn->src_reg == XBPF_PSEUDO_KFUNC_CALL) {
		out(o, "(%02x) call kernel-function#%d", insn->code, insn->imm);
		return;
	}
	if (cbs && cbs->helper_name)
		name = cbs->helper_name(cbs->priv, insn->imm);
	if (!name)
		name = builtin_helper_name(insn->imm);
	if (!name)
		name = "unknown";
	out(o, "(%02x) call %s#%d", insn->code, name, insn->imm);
}

static void disasm_jmp(struct out *o, const struct xbpf_insn *insn,
		       const struct xbpf_disasm_cbs *cbs)
{
	uint8_t op = XBPF_OP(insn->code);
	char r = wreg(insn);

	if (op == XBPF_CALL)
		disasm_call(o, insn, cbs);
	else if (insn->code == (XBPF_JMP | XBPF_JA))
		out(o, "(%02x) goto pc%+d", insn->code, insn->off);
	else if (insn->code == (XBPF_JMP32 | XBPF_JA))
		out(o, "(%02x) gotol pc%+d", insn->code, insn->imm);
	else if (op == XBPF_EXIT)
		out(o, "(%02x) exit", insn->code);
	else if (XBPF_SRC(insn->code) == XBPF_X)
		out(o, "(%02x) if %c%d %s %c%d goto pc%+d", insn->code, r, insn->dst_reg,
		    jmp_str[op >> 4], r, insn->src_reg, insn->off);
	else
		out(o, "(%02x) if %c%d %s 0x%x goto pc%+d", insn->code, r, insn->dst_reg,
		    jmp_str[op >> 4], (unsigned int)insn->imm, insn->off);
}

int xbpf_disasm_insn(const struct xbpf_insn *insns, size_t cnt, size_t idx,
		     const struct xbpf_disasm_cbs *cbs, char *buf, size_t len)
{
	struct out o = { buf, len };
	const struct xbpf_insn *insn;
	const char *msg = NULL;
	uint64_t imm64;

	if (buf && len)
		buf[0] = '\0';
	else
		o.len = 0;
	if (xbpf_insn_check(insns, cnt, idx, &msg)) {
		if (insns && idx < cnt)
			out(&o, "(%02x) invalid: %s", insns[idx].code, msg);
		else
			out(&o, "invalid: %s", msg);
		return -EINVAL;
	}
	insn = &insns[idx];

	switch (XBPF_CLASS(insn->code)) {
	case XBPF_ALU:
	case XBPF_ALU64:
		disasm_alu(&o, insn);
		break;
	case XBPF_STX:
		disasm_stx(&o, insn);
		break;
	case XBPF_ST:
		out(&o, "(%02x) *(%s *)(r%d %+d) = %d", insn->code,
		    ldst_str[XBPF_SIZE(insn->code) >> 3], insn->dst_reg, insn->off, insn->imm);
		break;
	case XBPF_LDX:
		out(&o, "(%02x) r%d = *(%s *)(r%d %+d)", insn->code, insn->dst_reg,
		    XBPF_MODE(insn->code) == XBPF_MEM ? ldst_str[XBPF_SIZE(insn->code) >> 3]
						      : ldsx_str[XBPF_SIZE(insn->code) >> 3],
		    insn->src_reg, insn->off);
		break;
	case XBPF_LD:
		if (XBPF_MODE(insn->code) == XBPF_ABS) {
			out(&o, "(%02x) r0 = *(%s *)skb[%d]", insn->code,
			    ldst_str[XBPF_SIZE(insn->code) >> 3], insn->imm);
			break;
		}
		if (XBPF_MODE(insn->code) == XBPF_IND) {
			out(&o, "(%02x) r0 = *(%s *)skb[r%d + %d]", insn->code,
			    ldst_str[XBPF_SIZE(insn->code) >> 3], insn->src_reg, insn->imm);
			break;
		}
		imm64 = ((uint64_t)(uint32_t)insn[1].imm << 32) | (uint32_t)insn->imm;
		if (insn->src_reg && cbs && cbs->ldimm64_text) {
			char text[128];
			const char *t = cbs->ldimm64_text(cbs->priv, insn, text, sizeof(text));

			if (t) {
				out(&o, "(%02x) r%d = %s", insn->code, insn->dst_reg, t);
				return 2;
			}
		}
		out(&o, "(%02x) r%d = 0x%llx", insn->code, insn->dst_reg,
		    (unsigned long long)imm64);
		return 2;
	default:
		disasm_jmp(&o, insn, cbs);
		break;
	}
	return 1;
}
