// SPDX-License-Identifier: MIT
/*
 * fuzz_elf.c - libFuzzer target: xbpf_object__open_mem() on the input and,
 * when it opens, every accessor a tool would use on the result.
 * Built with meson -Dfuzz=true (CC=clang); run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "xbpf.h"

static int quiet(enum xbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xbpf_object *obj;
	struct xbpf_prog *p = NULL;
	size_t i;

	xbpf_set_print(quiet);
	obj = xbpf_object__open_mem(data, size, NULL);
	if (!obj)
		return 0;
	while ((p = xbpf_object__next_prog(obj, p))) {
		struct xbpf_line_desc line;
		struct xbpf_func_desc f;
		struct xbpf_insn *res;
		size_t cnt;

		if (!xbpf_prog__resolve_maps(p, &res, &cnt))
			free(res);
		for (i = 0; i < xbpf_prog__insn_cnt(p); i++)
			if (!xbpf_prog__line(p, (uint32_t)i, &line) && line.file)
				(void)strlen(line.file);
		for (i = 0; i < xbpf_prog__func_cnt(p); i++)
			if (!xbpf_prog__func(p, i, &f))
				(void)strlen(f.name);
	}
	for (i = 0; i < xbpf_object__map_cnt(obj); i++)
		(void)xbpf_map__name(xbpf_object__map(obj, i));
	xbpf_object__close(obj);
	return 0;
}
