// SPDX-License-Identifier: MIT
/*
 * ctx.c - which bytes of the program context a program type may read or
 * write, and with which sizes: the kernel's *_is_valid_access() rules for
 * struct xdp_md, struct __sk_buff (sched_cls/sched_act and socket_filter)
 * and tracepoints.  Offsets are offsetof() of the UAPI layouts
 * (<linux/bpf.h>, through libxbpf_internal.h).
 */
#include <errno.h>

#include "verifier_impl.h"

/* struct xdp_md */
#define XDP(field) (int)offsetof(struct xdp_md, field)
#define XDP_DATA XDP(data)
#define XDP_DATA_END XDP(data_end)
#define XDP_DATA_META XDP(data_meta)
#define XDP_EGRESS_IFINDEX XDP(egress_ifindex) /* devmap programs only */
#define XDP_MD_SIZE (int)sizeof(struct xdp_md)

/* struct __sk_buff */
#define SKB(field) (int)offsetof(struct __sk_buff, field)
#define SKB_MARK SKB(mark)
#define SKB_QUEUE_MAPPING SKB(queue_mapping)
#define SKB_PRIORITY SKB(priority)
#define SKB_TC_INDEX SKB(tc_index)
#define SKB_CB SKB(cb)
#define SKB_CB_END (int)offsetofend(struct __sk_buff, cb)
#define SKB_TC_CLASSID SKB(tc_classid)
#define SKB_DATA SKB(data)
#define SKB_DATA_END SKB(data_end)
#define SKB_FAMILY SKB(family)
#define SKB_REMOTE_IP4 SKB(remote_ip4)
#define SKB_LOCAL_IP6 SKB(local_ip6)
#define SKB_LOCAL_PORT SKB(local_port)
#define SKB_DATA_META SKB(data_meta)
#define SKB_FLOW_KEYS SKB(flow_keys)
#define SKB_TSTAMP SKB(tstamp)
#define SKB_WIRE_LEN SKB(wire_len)
#define SKB_SK SKB(sk)
#define SKB_TSTAMP_TYPE SKB(tstamp_type)
#define SKB_HWTSTAMP SKB(hwtstamp)
#define SKB_SIZE (int)sizeof(struct __sk_buff)

/* PERF_MAX_TRACE_SIZE; the first 8 bytes (common fields pointer) are hidden. */
#define TRACEPOINT_CTX_MAX 8192

static bool in(int off, int start, int end)
{
	return off >= start && off < end;
}

static bool xdp_access(int off, int size, bool write, enum xv_reg_type *t)
{
	if (write)
		return false;
	if (off < 0 || off >= XDP_MD_SIZE || off % size || size != 4 || off == XDP_EGRESS_IFINDEX)
		return false;
	if (off == XDP_DATA)
		*t = PTR_TO_PACKET;
	else if (off == XDP_DATA_END)
		*t = PTR_TO_PACKET_END;
	else if (off == XDP_DATA_META)
		*t = PTR_TO_PACKET_META;
	return true;
}

/* bpf_skb_is_valid_access(): the part common to every skb program type. */
static bool skb_access(int off, int size, bool write)
{
	if (off < 0 || off >= SKB_SIZE || off % size)
		return false;
	if (in(off, SKB_CB, SKB_CB_END))
		return off + size <= SKB_CB_END;
	if (in(off, SKB_REMOTE_IP4, SKB_LOCAL_IP6 + 16) || in(off, SKB_DATA, SKB_DATA_END + 4) ||
	    in(off, SKB_DATA_META, SKB_DATA_META + 4))
		return size == 4;
	if (in(off, SKB_FLOW_KEYS, SKB_FLOW_KEYS + 8))
		return false;
	if (in(off, SKB_HWTSTAMP, SKB_HWTSTAMP + 8))
		return !write && size == 8;
	if (in(off, SKB_TSTAMP, SKB_TSTAMP + 8))
		return size == 8;
	if (in(off, SKB_SK, SKB_SK + 8))
		return !write && size == 8; /* a socket pointer, loaded as a plain number */
	if (in(off, SKB_TSTAMP_TYPE, SKB_HWTSTAMP))
		return false;
	/* Plain u32 fields: full-width writes, narrow power-of-two reads. */
	if (write)
		return size == 4;
	return size <= 4 && !(size & (size - 1));
}

static bool tc_access(int off, int size, bool write, enum xv_reg_type *t)
{
	if (write) {
		if (!(in(off, SKB_MARK, SKB_MARK + 4) || in(off, SKB_TC_INDEX, SKB_TC_INDEX + 4) ||
		      in(off, SKB_PRIORITY, SKB_PRIORITY + 4) ||
		      in(off, SKB_TC_CLASSID, SKB_TC_CLASSID + 4) || in(off, SKB_CB, SKB_CB_END) ||
		      off == SKB_TSTAMP || off == SKB_QUEUE_MAPPING))
			return false;
	}
	if (in(off, SKB_FAMILY, SKB_LOCAL_PORT + 4))
		return false;
	if (off == SKB_TSTAMP_TYPE)
		return size == 1;
	if (!skb_access(off, size, write))
		return false;
	if (in(off, SKB_DATA, SKB_DATA + 4))
		*t = PTR_TO_PACKET;
	else if (in(off, SKB_DATA_END, SKB_DATA_END + 4))
		*t = PTR_TO_PACKET_END;
	else if (in(off, SKB_DATA_META, SKB_DATA_META + 4))
		*t = PTR_TO_PACKET_META;
	return true;
}

static bool socket_filter_access(int off, int size, bool write)
{
	if (in(off, SKB_TC_CLASSID, SKB_TC_CLASSID + 4) || in(off, SKB_DATA, SKB_DATA_END + 4) ||
	    in(off, SKB_DATA_META, SKB_DATA_META + 4) || in(off, SKB_FAMILY, SKB_LOCAL_PORT + 4) ||
	    in(off, SKB_TSTAMP, SKB_TSTAMP + 8) || in(off, SKB_WIRE_LEN, SKB_WIRE_LEN + 4) ||
	    in(off, SKB_HWTSTAMP, SKB_HWTSTAMP + 8))
		return false;
	if (write && !in(off, SKB_CB, SKB_CB_END))
		return false;
	return skb_access(off, size, write);
}

bool xv_prog_may_access_pkt(enum xbpf_prog_type type, bool write)
{
	switch (type) {
	case XBPF_PROG_XDP:
	case XBPF_PROG_SCHED_CLS:
	case XBPF_PROG_SCHED_ACT:
		return true;
	default:
		return false;
	}
}

int xv_check_ctx_access(struct xv_env *env, int off, int size, bool write, enum xv_reg_type *ret_type)
{
	bool ok = false;

	*ret_type = SCALAR_VALUE;
	switch (env->type) {
	case XBPF_PROG_XDP:
		ok = xdp_access(off, size, write, ret_type);
		break;
	case XBPF_PROG_SCHED_CLS:
	case XBPF_PROG_SCHED_ACT:
		ok = tc_access(off, size, write, ret_type);
		break;
	case XBPF_PROG_SOCKET_FILTER:
		ok = socket_filter_access(off, size, write);
		break;
	case XBPF_PROG_TRACEPOINT:
		/*
		 * The kernel compares off with sizeof(void *) as unsigned, so
		 * small negative offsets pass that test; do as it does.
		 */
		ok = !write && (unsigned int)off >= 8 && off < TRACEPOINT_CTX_MAX && !(off % size);
		break;
	default:
		ok = false;
		break;
	}
	if (!ok) {
		xv_err(env, "invalid bpf_context access off=%d size=%d\n", off, size);
		return -EACCES;
	}
	return 0;
}
