// SPDX-License-Identifier: MIT
/*
 * The userspace backend: the DPDK path will run balancer.bpf.o on xlb's own
 * engines and keep the maps in userspace (xbpf_map).  Its interface is the
 * kernel backend's; until the DPDK path lands, opening it fails with
 * -EOPNOTSUPP and a message saying so, and nothing else is reachable.
 */
#include <errno.h>
#include <stddef.h>

#include "backend.h"

static int userspace_open(struct xlb_backend *be, const struct xlb_backend_opts *opts,
			  struct xlb_err *err)
{
	return xlb_err_set(err, -EOPNOTSUPP,
			   "the userspace (DPDK) backend is not available in this build yet; "
			   "use backend \"kernel\"");
}

static void userspace_close(struct xlb_backend *be, bool keep)
{
}

const struct xlb_backend_ops xlb_backend_userspace_ops = {
	.name = "userspace",
	.open = userspace_open,
	.close = userspace_close,
};
