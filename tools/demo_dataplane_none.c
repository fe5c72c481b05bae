/* SPDX-License-Identifier: MIT */
/* demo_dataplane_none.c - builds without dataplane/: nothing to show. */
#include <errno.h>

#include "demo_dataplane.h"

int demo_dataplane(const char *obj_path, enum testbed_engine_kind kind, int *ret_mismatches)
{
	return -ENOENT;
}
