/* SPDX-License-Identifier: MIT */
/* testutil.h - minimal checks for the core tests: count failures, exit 1. */
#ifndef XBPF_TESTUTIL_H
#define XBPF_TESTUTIL_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
			test_failures++;                                                           \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long _a = (long long)(a), _b = (long long)(b);                               \
		if (_a != _b) {                                                                    \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__,      \
				__LINE__, #a, _a, #b, _b);                                         \
			test_failures++;                                                           \
		}                                                                                  \
	} while (0)

#define TEST_DONE()                                                                                \
	do {                                                                                       \
		if (test_failures) {                                                               \
			fprintf(stderr, "%d check(s) failed\n", test_failures);                    \
			return 1;                                                                  \
		}                                                                                  \
		printf("ok\n");                                                                    \
		return 0;                                                                          \
	} while (0)

#endif
