// SPDX-License-Identifier: MIT
/*
 * map_poke - malformed updates of a running xlb-dpdk's shared maps, the
 * way a buggy or hostile control plane would make them, while traffic
 * flows (tests/dpdk/it_dpdk.sh runs it during long-lived connections).
 *
 *   map_poke MAPS_DIR
 *   map_poke --mislay MAPS_DIR   replace xlb_vips by a map of another value
 *                                size (what xlbd must refuse to program)
 *
 * Each must be refused with an error and change nothing the dataplane
 * reads: indexes past an array's end, unknown update flags, a re-open of
 * a map with another layout (value size, type, entry count: it must not
 * be re-created or reinterpreted), files that are not maps (truncated,
 * garbage, empty) under a map's name.  The maps' bytes are compared before
 * and after.  Exit 0 when every poke was refused and nothing changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xbpf.h"
#include "xlb_shared.h"

static int failures;
static const char *dir;

#define EXPECT(cond, ...)                                  \
	do {                                               \
		if (cond) {                                \
			printf("refused: ");               \
		} else {                                   \
			printf("ACCEPTED (bad): ");        \
			failures++;                        \
		}                                          \
		printf(__VA_ARGS__);                       \
		putchar('\n');                             \
	} while (0)

static const char *path_of(const char *name)
{
	static char p[4][4096];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

/* FNV-1a over a file's bytes: what the dataplane reads of it. */
static uint64_t file_sum(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	for (off_t i = 0; i < st.st_size; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	munmap(p, (size_t)st.st_size);
	return h;
}

static void out_of_range(void)
{
	struct xbpf_map *rings = xbpf_map__open_shared(path_of("xlb_rings"), NULL, 0);
	struct xbpf_map *reals = xbpf_map__open_shared(path_of("xlb_reals"), NULL, 0);
	struct xbpf_map *vips = xbpf_map__open_shared(path_of("xlb_vips"), NULL, 0);
	struct xlb_real r = { .family = XLB_FAMILY_V4, .addr = { .bytes = { 10, 9, 9, 9 } } };
	struct xlb_vip_key k = { .family = XLB_FAMILY_V4, .proto = 6 };
	struct xlb_vip_meta m = { .vip_num = 1 };
	uint32_t idx, val = 1;
	int ret;

	if (!rings || !reals || !vips) {
		printf("FAIL: cannot attach to the maps in %s: %s\n", dir, strerror(errno));
		failures++;
		goto out;
	}
	idx = XLB_RING_MAP_SIZE;
	ret = xbpf_map__update(rings, &idx, &val, XBPF_ANY);
	EXPECT(ret == -E2BIG, "xlb_rings[%u] (one past the end): %s", idx, strerror(-ret));
	idx = UINT32_MAX;
	ret = xbpf_map__update(rings, &idx, &val, XBPF_ANY);
	EXPECT(ret == -E2BIG, "xlb_rings[%u]: %s", idx, strerror(-ret));
	idx = XLB_MAX_REALS;
	ret = xbpf_map__update(reals, &idx, &r, XBPF_ANY);
	EXPECT(ret == -E2BIG, "xlb_reals[%u]: %s", idx, strerror(-ret));
	idx = 1;
	ret = xbpf_map__update(reals, &idx, &r, 42);
	EXPECT(ret == -EINVAL, "xlb_reals[1] with update flags 42: %s", strerror(-ret));
	ret = xbpf_map__update(reals, &idx, &r, XBPF_NOEXIST);
	EXPECT(ret == -EEXIST, "xlb_reals[1] with NOEXIST (arrays always hold it): %s",
	       strerror(-ret));
	ret = xbpf_map__update(vips, &k, &m, XBPF_EXIST);
	EXPECT(ret == -ENOENT, "xlb_vips: EXIST on a VIP that is not there: %s", strerror(-ret));
	ret = xbpf_map__delete(rings, &idx);
	EXPECT(ret == -EINVAL, "delete from an array: %s", strerror(-ret));
out:
	xbpf_map__free(rings);
	xbpf_map__free(reals);
	xbpf_map__free(vips);
}

/* Re-open a live map with another layout: refused, the file untouched. */
static void other_layouts(void)
{
	struct xbpf_map_spec spec = { .type = XBPF_MAP_HASH, .key_size = sizeof(struct xlb_vip_key),
				      .value_size = sizeof(struct xlb_vip_meta) + 4,
				      .max_entries = XLB_MAX_VIPS, .map_flags = 1 /* NO_PREALLOC */ };
	struct xbpf_map *m;

	snprintf(spec.name, sizeof(spec.name), "xlb_vips");
	m = xbpf_map__open_shared(path_of("xlb_vips"), &spec, 0);
	EXPECT(!m && errno == EEXIST, "xlb_vips re-opened with %u-byte values: %s", spec.value_size, strerror(errno));
	xbpf_map__free(m);
	spec.value_size = sizeof(struct xlb_vip_meta);
	spec.type = XBPF_MAP_LRU_HASH;
	m = xbpf_map__open_shared(path_of("xlb_vips"), &spec, 0);
	EXPECT(!m && errno == EEXIST, "xlb_vips re-opened as an lru_hash: %s", strerror(errno));
	xbpf_map__free(m);
	spec.type = XBPF_MAP_HASH;
	spec.max_entries = 2 * XLB_MAX_VIPS;
	m = xbpf_map__open_shared(path_of("xlb_vips"), &spec, 0);
	EXPECT(!m && errno == EEXIST, "xlb_vips re-opened with twice the entries: %s",
	       strerror(errno));
	xbpf_map__free(m);
}

/* Files under a map's name that are no map: refused, no crash. */
static void not_maps(void)
{
	static const struct {
		const char *what;
		size_t len;
		int byte;
	} junk[] = {
		{ "an empty file", 0, 0 },
		{ "100 bytes of 0xff", 100, 0xff },
		{ "64 KiB of zeros", 65536, 0 },
		{ "64 KiB of 'x'", 65536, 'x' },
	};
	char tmp[4096];

	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		struct xbpf_map *m;
		char *buf = malloc(junk[i].len + 1);
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s/../poke-junk-%zu", dir, i);
		f = fopen(tmp, "w");
		if (!f || !buf) {
			printf("FAIL: cannot write %s\n", tmp);
			failures++;
			free(buf);
			if (f)
				fclose(f);
			continue;
		}
		memset(buf, junk[i].byte, junk[i].len);
		fwrite(buf, 1, junk[i].len, f);
		fclose(f);
		free(buf);
		m = xbpf_map__open_shared(tmp, NULL, 0);
		EXPECT(!m, "%s as a map: %s", junk[i].what, strerror(errno));
		xbpf_map__free(m);
		unlink(tmp);
	}
	/* the live rings file, cut short in a copy */
	{
		struct stat st;
		char cmd[9000];

		snprintf(tmp, sizeof(tmp), "%s/../poke-cut", dir);
		if (!stat(path_of("xlb_rings"), &st)) {
			snprintf(cmd, sizeof(cmd), "head -c %lld '%s' > '%s'",
				 (long long)st.st_size / 2, path_of("xlb_rings"), tmp);
			if (!system(cmd)) {
				struct xbpf_map *m = xbpf_map__open_shared(tmp, NULL, 0);

				EXPECT(!m, "xlb_rings cut to half its size: %s", strerror(errno));
				xbpf_map__free(m);
			}
			unlink(tmp);
		}
	}
}

int main(int argc, char **argv)
{
	static const char *watched[] = { "xlb_vips", "xlb_reals", "xlb_rings", "xlb_config",
					 "xlb_vip_addrs", "xlb_vip_filter" };
	uint64_t before[6], after[6];

	if (argc == 3 && !strcmp(argv[1], "--mislay")) {
		struct xbpf_map_spec spec = { .type = XBPF_MAP_HASH,
					      .key_size = sizeof(struct xlb_vip_key),
					      .value_size = sizeof(struct xlb_vip_meta) + 4,
					      .max_entries = XLB_MAX_VIPS };
		struct xbpf_map *m;

		dir = argv[2];
		snprintf(spec.name, sizeof(spec.name), "xlb_vips");
		unlink(path_of("xlb_vips"));
		m = xbpf_map__open_shared(path_of("xlb_vips"), &spec, 0);
		xbpf_map__free(m);
		return m ? 0 : 1;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: map_poke [--mislay] MAPS_DIR\n");
		return 2;
	}
	dir = argv[1];
	for (int i = 0; i < 6; i++)
		before[i] = file_sum(path_of(watched[i]));
	out_of_range();
	other_layouts();
	not_maps();
	for (int i = 0; i < 6; i++) {
		after[i] = file_sum(path_of(watched[i]));
		if (!before[i] || before[i] != after[i]) {
			printf("FAIL: %s changed (or unreadable) under the pokes\n", watched[i]);
			failures++;
		}
	}
	printf(failures ? "FAIL: %d\n" : "every malformed update refused, the maps unchanged\n",
	       failures);
	return failures ? 1 : 0;
}
