/* SPDX-License-Identifier: MIT */
/*
 * libxbpf_internal.h - the internals that the runtime core, the verifier and
 * the engines share (libbpf's libbpf_internal.h): the log macros, the
 * errno helpers, the versioned-options checks and the contexts' layouts
 * (context field offsets are offsetof() of the kernel's UAPI structs, since
 * program images run unchanged; no part spells an offset as a number).  Not installed, not part
 * of any public contract.
 */
#ifndef XBPF_LIBXBPF_INTERNAL_H
#define XBPF_LIBXBPF_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h> /* struct xdp_md, struct __sk_buff: the contexts' UAPI layouts */

#include "xbpf.h"

/* ---- logging ----------------------------------------------------------- */

void __xbpf_pr(enum xbpf_print_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_warn(fmt, ...) __xbpf_pr(XBPF_WARN, "libxbpf: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) __xbpf_pr(XBPF_INFO, "libxbpf: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) __xbpf_pr(XBPF_DEBUG, "libxbpf: " fmt, ##__VA_ARGS__)

/* Set errno from a negative code and return it (libbpf's libbpf_err()). */
static inline int xbpf_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static inline void *xbpf_err_ptr(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

#define XBPF_ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

/* Options struct checks, after libbpf's OPTS_VALID/OPTS_GET. */
bool __xbpf_opts_valid(const void *opts, size_t opts_sz, size_t user_sz, const char *type_name);
#define OPTS_VALID(opts, type)                                                                     \
	(!(opts) || __xbpf_opts_valid((opts), offsetofend(struct type, type##__last_field),       \
				      (opts)->sz, #type))
#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#define OPTS_HAS(opts, field) ((opts) && (opts)->sz >= offsetofend(typeof(*(opts)), field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))

#endif /* XBPF_LIBXBPF_INTERNAL_H */
