/* SPDX-License-Identifier: MIT */
/*
 * demo_dataplane.h - xlb-demo's part for dataplane/balancer.bpf.o: a small
 * embedded default configuration (one TCP VIP, two IPv4 reals) and sample
 * packets, run under the kernel and a userspace engine side by side.
 * demo_dataplane_none.c stands in while the dataplane is not in the tree.
 */
#ifndef XBPF_TOOLS_DEMO_DATAPLANE_H
#define XBPF_TOOLS_DEMO_DATAPLANE_H

#include "testbed.h"

/*
 * Print the table for the balancer object at obj_path.  Returns 0,
 * -ENOENT when this build has no dataplane (or the object is missing), or
 * another -errno; *ret_mismatches counts rows where the engines disagree.
 */
int demo_dataplane(const char *obj_path, enum testbed_engine_kind kind, int *ret_mismatches);

#endif /* XBPF_TOOLS_DEMO_DATAPLANE_H */
