// SPDX-License-Identifier: MIT
/* The backends by name: "kernel" (XDP, when built) and "userspace" (the DPDK path). */
#include <stddef.h>
#include <string.h>

#include "backend.h"

const struct xlb_backend_ops *xlb_backend_find(const char *name)
{
	if (!name)
		return NULL;
#ifdef XLB_HAVE_KERNEL_BACKEND
	if (!strcmp(name, "kernel"))
		return &xlb_backend_kernel_ops;
#endif
	if (!strcmp(name, "userspace"))
		return &xlb_backend_userspace_ops;
	return NULL;
}
