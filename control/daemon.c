// SPDX-License-Identifier: MIT
/*
 * The bottom of xlbd: logging to stderr in journald's "<N>" form, the
 * monotonic clock, and names.  Calls nothing else of xlbd, so every other
 * file may use it.
 */
#include <signal.h>
#include <stdlib.h>
#include <systemd/sd-journal.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "xlbd.h"

static int log_max_level = LOG_INFO;

void xlbd_log_set_level(int max_level)
{
	log_max_level = max_level;
}

void xlbd_log(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* "<N>" prefixes are read by journald as the syslog level of the line. */
	fprintf(stderr, "<%d>xlbd: %s\n", level, buf);
}

uint64_t xlbd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *xlbd_health_name(enum health_state s)
{
	return s == HEALTH_UP ? "up" : s == HEALTH_DOWN ? "down" : "unknown";
}

void xlbd_signals_block(sigset_t *ret_mask)
{
	sigemptyset(ret_mask);
	sigaddset(ret_mask, SIGTERM);
	sigaddset(ret_mask, SIGINT);
	sigaddset(ret_mask, SIGHUP);
	/* Before any thread starts: they inherit the mask, so only the signalfd sees these. */
	pthread_sigmask(SIG_BLOCK, ret_mask, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void xlbd_audit(const struct xlbd_peer *p, const char *what, const char *error, double ms)
{
	/*
	 * Under systemd (stderr is a journal stream), the change goes to the
	 * journal with fields to query it by (journalctl XLB_UID=1000); else
	 * it is a log line like the others.
	 */
	if (getenv("JOURNAL_STREAM")) {
		sd_journal_send("MESSAGE=uid %u pid %d: %s%s%s", (unsigned)p->uid, (int)p->pid, what,
				error ? " failed: " : "", error ? error : "", "PRIORITY=%d",
				error ? LOG_WARNING : LOG_NOTICE, "SYSLOG_IDENTIFIER=xlbd",
				"XLB_AUDIT=1", "XLB_UID=%u", (unsigned)p->uid, "XLB_PID=%d", (int)p->pid,
				"XLB_CHANGE=%s", what, "XLB_RESULT=%s", error ? error : "applied",
				"XLB_DURATION_MS=%.1f", ms, NULL);
		return;
	}
	if (error)
		xlbd_log(LOG_WARNING, "uid %u pid %d: %s failed: %s; rolled back", (unsigned)p->uid,
			 (int)p->pid, what, error);
	else
		xlbd_log(LOG_NOTICE, "uid %u pid %d: %s (%.1f ms)", (unsigned)p->uid, (int)p->pid, what,
			 ms);
}
