// SPDX-License-Identifier: MIT
/*
 * What the backends share when they read a dataplane: the stats object
 * from the program's reason and event counters, the names of the port and
 * lcore counters, and the verifier's verdict as `lbctl status` names it.  Each backend brings its own way to sum one
 * counter over the CPUs (per-CPU maps in the kernel or in shared memory).
 */
#include <errno.h>
#include <string.h>

#include "backend.h"
#include "xlb_shared.h"

int xlb_dp_stats_read(struct xlb_backend *be, xlb_dp_counter_fn read, struct xlb_dp_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (uint32_t r = 1; r < XLB_REASON_MAX && r < XLB_STATS_MAX_REASONS; r++) {
		read(be, false, r, &ret->reason[r]);
		ret->reason_name[r] = xlb_reason_name(r);
		ret->reason_cnt = r + 1;
	}
	for (uint32_t e = 0; e < XLB_EVENT_MAX && e < XLB_STATS_MAX_EVENTS; e++) {
		read(be, true, e, &ret->event[e]);
		ret->event_name[e] = xlb_event_name(e);
		ret->event_cnt = e + 1;
	}
	ret->lru_hits = ret->event[XLB_EV_LRU_HIT].packets;
	ret->lru_misses = ret->event[XLB_EV_LRU_MISS].packets;
	ret->new_flows = ret->event[XLB_EV_NEW_FLOW].packets;
	return 0;
}

#define NAME(f, doc) #f,
#define DOC(f, doc) doc,
const char *const xlb_port_counter_names[XLB_PORT_CTR_CNT] = { XLB_PORT_COUNTERS(NAME) };
const char *const xlb_port_counter_docs[XLB_PORT_CTR_CNT] = { XLB_PORT_COUNTERS(DOC) };
const char *const xlb_lcore_counter_names[XLB_LCORE_CTR_CNT] = { XLB_LCORE_COUNTERS(NAME) };
const char *const xlb_lcore_counter_docs[XLB_LCORE_CTR_CNT] = { XLB_LCORE_COUNTERS(DOC) };
#undef NAME
#undef DOC

const char *xlb_verify_result_name(int result)
{
	switch (result) {
	case 0:
		return "accepted";
	case -ENOTSUP:
		return "unavailable";
	case 1:
		return "not run";
	default:
		return "rejected";
	}
}
