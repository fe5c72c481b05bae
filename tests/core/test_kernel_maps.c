// SPDX-License-Identifier: MIT
/*
 * test_kernel_maps.c - map semantics against the kernel's (suite 'kernel').
 *
 * The same random sequence of update (ANY/NOEXIST/EXIST), delete, lookup
 * and get_next_key runs on a kernel map (bpf(2)) and on ours; every return
 * code and every value read must agree.  Per-CPU maps compare the whole
 * syscall-layout value, so our CPU count follows the kernel's possible
 * CPUs.  Hash iteration order is the kernel's own business: there we
 * compare the set of keys a full walk returns.  LPM tries walk in the same
 * (post-)order, so there the walk is compared in order.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <unistd.h>

#include "xbpf.h"
#include "testutil.h"

#define KEY_MAX 16
#define VAL_MAX (64 * 8 * 16)

static uint32_t seed = 12345;

static uint32_t rnd(void)
{
	seed = seed * 1103515245 + 12345;
	return seed >> 8;
}

static int kerr(int ret)
{
	return ret < 0 ? -errno : ret;
}

static void rand_key(enum xbpf_map_type type, uint8_t *key, uint32_t ks, uint32_t space)
{
	memset(key, 0, KEY_MAX);
	if (type == XBPF_MAP_LPM_TRIE) {
		uint32_t plen = rnd() % 33, addr = 0x0a000000u | (rnd() % space) << 12;

		addr &= plen ? ~0u << (32 - plen) : 0;
		memcpy(key, &plen, 4);
		key[4] = addr >> 24;
		key[5] = addr >> 16;
		key[6] = addr >> 8;
		key[7] = addr;
		return;
	}
	{
		uint32_t k = rnd() % space;

		memcpy(key, &k, 4 < ks ? 4 : ks);
	}
}

/* All keys of a walk, in order; returns the count or -1 when the walk does not end. */
static int walk_kernel(int fd, uint32_t ks, uint8_t *out, int cap)
{
	uint8_t key[KEY_MAX], next[KEY_MAX];
	int n = 0;

	if (bpf_map_get_next_key(fd, NULL, next))
		return 0;
	do {
		if (n == cap)
			return -1;
		memcpy(out + (size_t)n++ * ks, next, ks);
		memcpy(key, next, ks);
	} while (!bpf_map_get_next_key(fd, key, next));
	return n;
}

static int walk_ours(struct xbpf_map *m, uint32_t ks, uint8_t *out, int cap)
{
	uint8_t key[KEY_MAX], next[KEY_MAX];
	int n = 0;

	if (xbpf_map__get_next_key(m, NULL, next))
		return 0;
	do {
		if (n == cap)
			return -1;
		memcpy(out + (size_t)n++ * ks, next, ks);
		memcpy(key, next, ks);
	} while (!xbpf_map__get_next_key(m, key, next));
	return n;
}

static int cmp_keys(const void *a, const void *b)
{
	return memcmp(a, b, 8);
}

static void compare_map(const char *name, enum xbpf_map_type type, uint32_t ks, uint32_t vs,
			uint32_t max, uint32_t flags, uint32_t space, int ops)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	struct xbpf_map_spec spec = { .type = type, .key_size = ks, .value_size = vs,
				      .max_entries = max, .map_flags = flags };
	int ncpu = libbpf_num_possible_cpus();
	bool percpu = type == XBPF_MAP_PERCPU_HASH || type == XBPF_MAP_PERCPU_ARRAY;
	size_t vlen = percpu ? (size_t)ncpu * ((vs + 7) / 8 * 8) : vs;
	static uint8_t kv[VAL_MAX], uv[VAL_MAX], val[VAL_MAX];
	static uint8_t kwalk[4096 * 8], uwalk[4096 * 8];
	uint8_t key[KEY_MAX];
	struct xbpf_map *m;
	int fd, i, bad = 0;

	if (vlen > VAL_MAX || ncpu <= 0) {
		printf("%s: skipped (%d CPUs)\n", name, ncpu);
		return;
	}
	snprintf(spec.name, sizeof(spec.name), "%s", name);
	fd = bpf_map_create((enum bpf_map_type)type, "xbpf_c2_map", ks, vs, max, &o);
	if (fd < 0) {
		fprintf(stderr, "%s: kernel refused the map: %s\n", name, strerror(errno));
		test_failures++;
		return;
	}
	m = xbpf_map__create(&spec, ncpu);
	CHECK(m);
	if (!m) {
		close(fd);
		return;
	}
	for (i = 0; i < ops && bad < 5; i++) {
		uint32_t op = rnd() % 10;
		int kr, ur;

		rand_key(type, key, ks, space);
		if (op < 5) {
			uint64_t fl = rnd() % 4; /* 3: invalid flags */
			size_t j;

			for (j = 0; j < vlen; j++)
				val[j] = (uint8_t)rnd();
			kr = kerr(bpf_map_update_elem(fd, key, val, fl));
			ur = xbpf_map__update(m, key, val, fl);
			if (kr != ur) {
				fprintf(stderr, "%s op %d: update(flags %llu): kernel %d, ours %d\n", name, i,
					(unsigned long long)fl, kr, ur);
				bad++;
			}
		} else if (op < 7) {
			kr = kerr(bpf_map_delete_elem(fd, key));
			ur = xbpf_map__delete(m, key);
			if (kr != ur) {
				fprintf(stderr, "%s op %d: delete: kernel %d, ours %d\n", name, i, kr, ur);
				bad++;
			}
		} else {
			memset(kv, 0xaa, vlen);
			memset(uv, 0xaa, vlen);
			kr = kerr(bpf_map_lookup_elem(fd, key, kv));
			ur = xbpf_map__lookup(m, key, uv);
			if (kr != ur || (!kr && memcmp(kv, uv, vlen))) {
				fprintf(stderr, "%s op %d: lookup: kernel %d, ours %d%s\n", name, i, kr, ur,
					kr == ur ? " (values differ)" : "");
				bad++;
			}
			/* get_next_key of a (possibly absent) key: same error, and for arrays the same key */
			if (type != XBPF_MAP_HASH && type != XBPF_MAP_PERCPU_HASH &&
			    type != XBPF_MAP_LPM_TRIE) {
				uint8_t kn[KEY_MAX] = { 0 }, un[KEY_MAX] = { 0 };

				kr = kerr(bpf_map_get_next_key(fd, key, kn));
				ur = xbpf_map__get_next_key(m, key, un);
				if (kr != ur || memcmp(kn, un, ks)) {
					fprintf(stderr, "%s op %d: get_next_key: kernel %d, ours %d\n", name,
						i, kr, ur);
					bad++;
				}
			}
		}
	}
	/* full walks */
	{
		int kn = walk_kernel(fd, ks, kwalk, 4096), un = walk_ours(m, ks, uwalk, 4096);

		if (kn != un) {
			fprintf(stderr, "%s: walk: kernel %d keys, ours %d\n", name, kn, un);
			bad++;
		} else if (kn > 0) {
			if (type == XBPF_MAP_HASH || type == XBPF_MAP_PERCPU_HASH) {
				qsort(kwalk, (size_t)kn, ks, cmp_keys);
				qsort(uwalk, (size_t)un, ks, cmp_keys);
			}
			if (memcmp(kwalk, uwalk, (size_t)kn * ks)) {
				fprintf(stderr, "%s: walks differ\n", name);
				bad++;
			}
		}
	}
	printf("%s: %d operations compared\n", name, i);
	test_failures += bad;
	xbpf_map__free(m);
	close(fd);
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(void)
{
	int fd;

	libbpf_set_print(silent);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xbpf_c2_probe", 4, 4, 1, NULL);
	if (fd < 0) {
		printf("SKIP: cannot create BPF maps here (%s)\n", strerror(errno));
		return 77;
	}
	close(fd);
	compare_map("hash", XBPF_MAP_HASH, 4, 12, 64, 0, 100, 4000);
	compare_map("hash_k8", XBPF_MAP_HASH, 8, 8, 16, 0, 40, 2000);
	compare_map("percpu_hash", XBPF_MAP_PERCPU_HASH, 4, 4, 32, 0, 60, 3000);
	compare_map("array", XBPF_MAP_ARRAY, 4, 12, 50, 0, 64, 3000);
	compare_map("percpu_array", XBPF_MAP_PERCPU_ARRAY, 4, 12, 20, 0, 24, 2000);
	compare_map("lpm_trie", XBPF_MAP_LPM_TRIE, 8, 4, 48, BPF_F_NO_PREALLOC, 64, 6000);
	TEST_DONE();
}
