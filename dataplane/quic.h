/* SPDX-License-Identifier: MIT */
/*
 * quic.h - the real a QUIC packet names in its destination connection ID.
 * Layouts (Katran's CID versions 1 and 2) are in xlb_shared.h, "QUIC".
 *
 *   short header:  flags(1) DCID...                       flags & 0x80 == 0
 *   long header:   flags(1) version(4) dcid_len(1) DCID... flags & 0x80
 *                  type = (flags >> 4) & 3: 0 Initial, 1 0-RTT (client-
 *                  chosen DCID: not ours), 2 Handshake, 3 Retry
 */
#ifndef XLB_QUIC_H
#define XLB_QUIC_H

#include "conn.h"

/* The server id of a CID of at least XLB_QUIC_CID_MIN_LEN bytes, or -1. */
static __always_inline long xlb_quic_server_id(const __u8 *cid)
{
	switch (cid[0] >> 6) {
	case XLB_QUIC_CID_V1:
		return ((__u32)(cid[0] & 0x3f) << 10) | ((__u32)cid[1] << 2) | (cid[2] >> 6);
	case XLB_QUIC_CID_V2:
		return ((__u32)cid[1] << 16) | ((__u32)cid[2] << 8) | cid[3];
	}
	return -1;
}

/* QUIC: real from the server id in the destination connection ID, or 0. */
static __noinline __u32 xlb_quic_real(void *data, void *data_end, struct xlb_pkt *pkt)
{
	__u32 off = pkt->l4_off + UDP_HLEN, sid, *real;
	__u8 *quic, *cid;
	long id;

	if (off > XLB_MAX_L4_OFF + UDP_HLEN)
		return 0;
	quic = data + off;
	if ((void *)(quic + 7) > data_end)
		return 0;
	if (quic[0] & 0x80) {
		if (((quic[0] >> 4) & 3) < 2 || quic[5] < XLB_QUIC_CID_MIN_LEN)
			return 0;
		cid = quic + 6;
	} else {
		cid = quic + 1;
	}
	if ((void *)(cid + XLB_QUIC_CID_MIN_LEN) > data_end)
		return 0;
	id = xlb_quic_server_id(cid);
	if (id < 0)
		return 0;
	sid = id;
	real = bpf_map_lookup_elem(&xlb_server_ids, &sid);
	if (!real || !xlb_real_present(*real)) {
		xlb_count_event(XLB_EV_QUIC_CID_MISS);
		return 0;
	}
	xlb_count_event(XLB_EV_QUIC_CID_HIT);
	return *real;
}

#endif /* XLB_QUIC_H */
