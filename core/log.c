// SPDX-License-Identifier: MIT
/*
 * log.c - the library's print callback (libbpf's libbpf_set_print()) and the
 * check of versioned options structs, which warns through it.  Every file
 * of the core, the verifier and the engines logs through here, so nothing
 * here calls back into them.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "libxbpf_internal.h"

/* ---- logging ------------------------------------------------------------------ */

static int default_print(enum xbpf_print_level level, const char *fmt, va_list args)
{
	if (level == XBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static _Atomic(xbpf_print_fn) print_fn = default_print;

xbpf_print_fn xbpf_set_print(xbpf_print_fn fn)
{
	return atomic_exchange(&print_fn, fn);
}

void __xbpf_pr(enum xbpf_print_level level, const char *fmt, ...)
{
	xbpf_print_fn fn = atomic_load(&print_fn);
	int saved = errno;
	va_list args;

	if (!fn)
		return;
	va_start(args, fmt);
	fn(level, fmt, args);
	va_end(args);
	errno = saved;
}

bool __xbpf_opts_valid(const void *opts, size_t opts_sz, size_t user_sz, const char *type_name)
{
	size_t i;

	if (user_sz < sizeof(size_t)) {
		pr_warn("%s size (%zu) is too small\n", type_name, user_sz);
		return false;
	}
	for (i = opts_sz; i < user_sz; i++) {
		if (((const uint8_t *)opts)[i]) {
			pr_warn("%s has non-zero extra bytes\n", type_name);
			return false;
		}
	}
	return true;
}

