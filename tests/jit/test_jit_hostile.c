/* SPDX-License-Identifier: MIT */
/*
 * test_jit_hostile.c - hostile bytecode into the JIT pass driver and the
 * back end (compile only: running unverified code may fault in any engine):
 * random instruction words, random function layouts and bit-flipped progen
 * programs must give an image or an error, never a crash, and every
 * mapping must be released again.  `test-jit-hostile [N] [seed]`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "progen.h"

static int compiled, refused;

static void try_compile(const struct xbpf_exec_prog *e)
{
	for (int blind = 0; blind < 2; blind++) {
		struct xbpf_jit_image img;
		int err = __xbpf_jit_compile(__xbpf_jit_host_arch, e, blind, &img);

		if (err) {
			refused++;
			CHECK(err < 0 && img.code == NULL, "error %d with an image", err);
			continue;
		}
		compiled++;
		CHECK(img.size > 0 && img.func_cnt == e->func_cnt && img.func_off[img.func_cnt] == img.size,
		      "inconsistent image: size %zu funcs %u", img.size, img.func_cnt);
		__xbpf_jit_image_free(&img);
	}
}

/* Words of plausible classes and registers, plus pure noise. */
static struct xbpf_insn random_insn(void)
{
	static const uint8_t codes[] = {
		0x07, 0x0f, 0x04, 0x0c, 0xb7, 0xbf, 0xb4, 0xbc, 0x37, 0x3f, 0x97, 0x9f, 0x67, 0x6f, 0x77,
		0xc7, 0x87, 0xd4, 0xdc, 0xd7, 0x18, 0x61, 0x69, 0x71, 0x79, 0x81, 0x89, 0x91, 0x62, 0x6a,
		0x72, 0x7a, 0x63, 0x6b, 0x73, 0x7b, 0xc3, 0xdb, 0x05, 0x06, 0x15, 0x1d, 0x25, 0x2d, 0x55,
		0x5d, 0x65, 0x6d, 0xa5, 0xad, 0x16, 0x1e, 0x85, 0x95, 0x20, 0x28, 0x30, 0x40, 0x50,
	};
	struct xbpf_insn in;
	uint64_t r = t_rand();

	memcpy(&in, &r, sizeof(in));
	if (t_rand() % 4) {
		in.code = codes[t_rand() % sizeof(codes)];
		in.dst_reg = (uint8_t)(t_rand() % 12);
		in.src_reg = (uint8_t)(t_rand() % (t_rand() % 3 ? 11 : 16));
		in.off = (int16_t)((int)(t_rand() % 17) - 8);
		if (t_rand() % 2)
			in.imm = (int32_t)((int)(t_rand() % 17) - 8);
	}
	return in;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 3000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 99;
	uint16_t depth[XBPF_MAX_SUBPROGS];
	uint32_t starts[XBPF_MAX_SUBPROGS];

	require_jit();
	for (int i = 0; i < XBPF_MAX_SUBPROGS; i++)
		depth[i] = (uint16_t)(8 * (i % 70));
	for (long k = 0; k < n; k++) {
		struct xbpf_insn insns[64];
		uint32_t cnt = 1 + (uint32_t)(t_rand() % 64), fcnt = 1;
		struct xbpf_exec_prog e;

		t_srand(seed * 1000003 + (uint64_t)k);
		for (uint32_t i = 0; i < cnt; i++)
			insns[i] = random_insn();
		if (t_rand() % 2)
			insns[cnt - 1] = I(EXIT());
		starts[0] = t_rand() % 16 ? 0 : (uint32_t)(t_rand() % 3);
		while (fcnt < 6 && t_rand() % 3 == 0) {
			starts[fcnt] = starts[fcnt - 1] + 1 + (uint32_t)(t_rand() % 8);
			fcnt++;
		}
		e = (struct xbpf_exec_prog){ .insns = insns, .insn_cnt = cnt, .func_cnt = fcnt,
					     .func_start = starts, .stack_depth = depth,
					     .verified = t_rand() % 2 };
		try_compile(&e);
	}
	/* Valid programs with a few flipped bits. */
	for (long k = 0; k < n / 10; k++) {
		struct progen_opts o = { .seed = seed + (uint64_t)k, .max_funcs = 4, .body_blocks = 20,
					 .helpers = true };
		struct tprog p;
		struct xbpf_exec_prog e;

		progen_raw(&p, &o);
		t_srand(seed ^ (uint64_t)k * 7);
		for (int f = 0; f < 4; f++) {
			uint32_t i = (uint32_t)(t_rand() % p.cnt);
			uint8_t *b = (uint8_t *)&p.insns[i];

			b[t_rand() % 8] ^= (uint8_t)(1u << (t_rand() % 8));
		}
		e = tprog_exec(&p);
		try_compile(&e);
		tprog_free(&p);
	}
	printf("hostile: %d compiled, %d refused, %d failures\n", compiled, refused, t_failures);
	CHECK(refused > 0 && compiled > 0, "the mix should give both outcomes");
	return t_failures ? 1 : 0;
}
