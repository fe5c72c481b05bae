// SPDX-License-Identifier: MIT
/*
 * log.c - the bounded verifier log.  Writes stop at the buffer's end (the
 * buffer always stays NUL-terminated) and the log remembers it was cut, as
 * the kernel's log does before returning -ENOSPC.
 */
#include <stdio.h>
#include <string.h>

#include "verifier_impl.h"

void xv_log_init(struct xv_log *log, char *buf, size_t size, int level)
{
	log->buf = buf;
	log->size = size;
	log->pos = 0;
	log->level = level;
	log->truncated = false;
	if (buf && size)
		buf[0] = '\0';
}

void xv_log_vprintf(struct xv_log *log, const char *fmt, va_list ap)
{
	size_t room;
	int n;

	if (!xv_log_on(log))
		return;
	room = log->size - log->pos;
	n = vsnprintf(log->buf + log->pos, room, fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= room) {
		log->truncated = true;
		log->pos = log->size - 1;
		return;
	}
	log->pos += n;
}

void xv_log_printf(struct xv_log *log, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xv_log_vprintf(log, fmt, ap);
	va_end(ap);
}

void xv_log_reset(struct xv_log *log, size_t pos)
{
	if (!xv_log_on(log) || pos >= log->pos)
		return;
	log->pos = pos;
	log->buf[pos] = '\0';
}

/* ---- the verifier's messages -------------------------------------------------- */

/* The first error is the verdict's message: keep it with its instruction. */
static void xv_vrecord(struct xv_env *env, const char *fmt, va_list ap)
{
	struct xbpf_verify_info *info = env->info;
	size_t n;

	if (env->err_set)
		return;
	env->err_set = true;
	env->err_insn = env->insn_idx;
	if (!info)
		return;
	vsnprintf(info->err_msg, sizeof(info->err_msg), fmt, ap);
	n = strlen(info->err_msg);
	if (n && info->err_msg[n - 1] == '\n')
		info->err_msg[n - 1] = '\0';
}

void xv_err(struct xv_env *env, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xv_log_vprintf(&env->log, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	xv_vrecord(env, fmt, ap);
	va_end(ap);
}

void xv_verbose(struct xv_env *env, const char *fmt, ...)
{
	va_list ap;

	if (!env->log.level)
		return;
	va_start(ap, fmt);
	xv_log_vprintf(&env->log, fmt, ap);
	va_end(ap);
}
