// SPDX-License-Identifier: MIT
/*
 * fuzz_replay.c - the main() of every fuzz target's replay test: run its
 * LLVMFuzzerTestOneInput over every file of the given corpus directories
 * (a missing directory is fine), so the committed seeds and regressions
 * replay in every normal build, under the test suite.  Link it with the
 * target's source (built without libFuzzer).  A target that wants setup
 * first (e.g. silencing the runtime's print callback) defines
 * fuzz_replay_setup().
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_replay_setup(void) __attribute__((weak));

int main(int argc, char **argv)
{
	size_t runs = 0;

	if (fuzz_replay_setup)
		fuzz_replay_setup();
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			char path[4096];
			FILE *f;
			uint8_t *buf;
			long len;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			f = fopen(path, "rb");
			if (!f)
				continue;
			fseek(f, 0, SEEK_END);
			len = ftell(f);
			fseek(f, 0, SEEK_SET);
			buf = malloc(len > 0 ? (size_t)len : 1);
			if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
				LLVMFuzzerTestOneInput(buf, (size_t)len);
				runs++;
			}
			free(buf);
			fclose(f);
		}
		closedir(d);
	}
	/* The corpus is committed: replaying nothing means a broken path. */
	printf("replayed %zu inputs without a crash\n", runs);
	return runs ? 0 : 1;
}
