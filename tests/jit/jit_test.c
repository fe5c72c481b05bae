/* SPDX-License-Identifier: MIT */
/*
 * jit_test.c - builder, runners and the test helpers of the hermetic JIT
 * tests.  These binaries link the JIT sources directly and provide
 * xbpf_helper_impl() here, so that helper calls hit functions whose
 * behaviour the tests control (argument passing, stack alignment, W^X).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit_test.h"
#include "xbpf.h"

uint8_t th_dump[DUMP_MAX];
size_t th_dump_len;
int th_misaligned;
int th_wx_bad;
int th_wx_checked;
uintptr_t th_image_lo, th_image_hi;
uint64_t th_count;
uint64_t th_log[4096];
size_t th_log_len;
int t_failures;

static void check_alignment(void)
{
	/* With a 16-byte aligned call site, the callee's frame pointer is too. */
	if ((uintptr_t)__builtin_frame_address(0) & 15)
		th_misaligned++;
}

static uint64_t th_dump_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	check_alignment();
	if (r2 > DUMP_MAX)
		r2 = DUMP_MAX;
	memcpy(th_dump, (const void *)(uintptr_t)r1, r2);
	th_dump_len = r2;
	return r2;
}

static uint64_t th_mix_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint64_t a[5] = { r1, r2, r3, r4, r5 };

	check_alignment();
	for (int i = 0; i < 5; i++) {
		h ^= a[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

static uint64_t th_wx_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	check_alignment();
	th_wx_checked++;
	if (!f) {
		th_wx_bad++;
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (perms[1] == 'w' && perms[2] == 'x')
			th_wx_bad++; /* nothing in the process is W+X */
		if (th_image_lo >= lo && th_image_lo < hi) {
			found = true;
			if (strncmp(perms, "r-x", 3) || th_image_hi > hi)
				th_wx_bad++;
		}
	}
	fclose(f);
	if (!found)
		th_wx_bad++;
	return 1;
}

static uint64_t th_count_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	check_alignment();
	return ++th_count;
}

static uint64_t th_log_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	if (th_log_len + 2 <= sizeof(th_log) / sizeof(th_log[0])) {
		th_log[th_log_len++] = r2;
		th_log[th_log_len++] = r1;
	}
	return 0;
}

static uint64_t th_callback_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	check_alignment();
	return ((xbpf_jit_entry_fn)(uintptr_t)r1)(r2, 0) + 1;
}

static uint64_t th_map_lookup_fn(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	struct fake_map *map = (struct fake_map *)(uintptr_t)r1;
	uint32_t key = *(const uint32_t *)(uintptr_t)r2;

	check_alignment();
	if (key >= map->max_entries)
		return 0;
	return (uint64_t)(uintptr_t)(map->data + (size_t)key * map->value_size);
}

static const struct {
	int32_t id;
	xbpf_helper_fn fn;
} th_impls[] = {
	{ TH_MAP_LOOKUP, th_map_lookup_fn }, { TH_CALLBACK, th_callback_fn }, { TH_LOG, th_log_fn },
	{ TH_DUMP, th_dump_fn },	     { TH_MIX, th_mix_fn },	      { TH_WX, th_wx_fn },
	{ TH_COUNT, th_count_fn },
};

xbpf_helper_fn xbpf_helper_impl(int32_t id)
{
	for (size_t i = 0; i < sizeof(th_impls) / sizeof(th_impls[0]); i++)
		if (th_impls[i].id == id)
			return th_impls[i].fn;
	return NULL;
}

int run_jit(const struct xbpf_exec_prog *prog, bool blind, uint64_t r1, uint64_t r2, uint64_t *ret)
{
	struct xbpf_jit_image img;
	int err;

	err = __xbpf_jit_compile(__xbpf_jit_host_arch, prog, blind, &img);
	if (err)
		return err;
	th_image_lo = (uintptr_t)img.code;
	th_image_hi = (uintptr_t)img.code + img.size;
	*ret = ((xbpf_jit_entry_fn)img.code)(r1, r2);
	__xbpf_jit_image_free(&img);
	return 0;
}

/* Linked from jit/interp.c when meson finds it; NULL otherwise. */
#pragma weak __xbpf_interp_run

bool have_interp(void)
{
	return __xbpf_interp_run != NULL;
}

int run_interp(const struct xbpf_exec_prog *prog, uint64_t r1, uint64_t r2, uint64_t *ret)
{
	if (!have_interp())
		return -ENOSYS;
	*ret = __xbpf_interp_run(prog, r1, r2);
	return 0;
}

void require_jit(void)
{
	if (!__xbpf_jit_host_arch) {
		printf("SKIP: no JIT back end for this host architecture\n");
		exit(77);
	}
}


/*
 * The interpreter runs bpf_loop / bpf_for_each_map_elem callbacks through
 * the runtime core's walks, which these binaries do not link: the programs
 * here call neither, so each says so if it is ever reached.
 */
uint64_t __xbpf_loop(uint64_t nr_loops, uint64_t fn, uint64_t ctx, uint64_t flags,
		     xbpf_callback_call_fn call, void *priv)
{
	return (uint64_t)-ENOTSUP;
}

uint64_t __xbpf_for_each_map_elem(uint64_t map, uint64_t fn, uint64_t ctx, uint64_t flags,
				  xbpf_callback_call_fn call, void *priv)
{
	return (uint64_t)-ENOTSUP;
}
