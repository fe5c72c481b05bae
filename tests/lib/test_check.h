/* SPDX-License-Identifier: MIT */
/*
 * CHECK(cond, fmt, ...): count and report a failed check (file:line on
 * stderr) and go on; TEST_DONE(name) ends main() with the verdict.  Shared by
 * the unit tests of several folders.
 */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#define TEST_DONE(name)                                                                            \
	do {                                                                                       \
		if (failures) {                                                                    \
			fprintf(stderr, "%s: %d failure(s)\n", name, failures);                    \
			return 1;                                                                  \
		}                                                                                  \
		printf("%s: all checks passed\n", name);                                           \
		return 0;                                                                          \
	} while (0)
#endif
