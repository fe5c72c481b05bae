// SPDX-License-Identifier: MIT
/*
 * test_tnum.c - the known-bits algebra against brute force: for small
 * random tnums, every concrete result of an operation on members must be a
 * member of the tnum result (soundness), and simple cases must be exact.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tnum.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static bool member(struct tnum t, uint64_t v)
{
	return (v & ~t.mask) == t.value;
}

static struct tnum rand_tnum(unsigned bits)
{
	uint64_t lim = (1ULL << bits) - 1;
	uint64_t mask = (uint64_t)rand() & lim, value = (uint64_t)rand() & lim & ~mask;

	return TNUM(value, mask);
}

/* Enumerate the members of a tnum with at most 6 unknown bits. */
static int members(struct tnum t, uint64_t *out)
{
	uint64_t bits[64];
	int nb = 0, n = 0;

	for (int i = 0; i < 64; i++)
		if (t.mask & (1ULL << i))
			bits[nb++] = 1ULL << i;
	for (uint64_t k = 0; k < (1ULL << nb); k++) {
		uint64_t v = t.value;

		for (int i = 0; i < nb; i++)
			if (k & (1ULL << i))
				v |= bits[i];
		out[n++] = v;
	}
	return n;
}

int main(void)
{
	static uint64_t ma[1 << 8], mb[1 << 8];

	srand(42);
	CHECK(tnum_is_const(tnum_const(5)), "const");
	CHECK(tnum_equals_const(tnum_add(tnum_const(3), tnum_const(4)), 7), "3+4");
	CHECK(tnum_range(0, 255).mask == 255 && tnum_range(0, 255).value == 0, "range 0..255");
	CHECK(tnum_range(16, 16).mask == 0, "range const");
	CHECK(tnum_is_unknown(tnum_range(0, UINT64_MAX)), "range all");
	CHECK(tnum_in(tnum_range(0, 255), tnum_const(7)), "in");
	CHECK(!tnum_in(tnum_const(7), tnum_range(0, 255)), "not in");
	CHECK(tnum_is_aligned(tnum_lshift(tnum_range(0, 15), 2), 4), "aligned");
	CHECK(tnum_subreg(TNUM(0x100000000ULL, 0xff)).value == 0, "subreg");
	CHECK(tnum_arshift(tnum_const((uint64_t)-16), 2, 64).value == (uint64_t)-4, "arshift");
	CHECK(tnum_arshift(tnum_const(0x80000000u), 4, 32).value == 0xf8000000u, "arshift32");

	for (int iter = 0; iter < 3000; iter++) {
		struct tnum a = rand_tnum(8), b = rand_tnum(8);
		int na, nb;

		while (__builtin_popcountll(a.mask) > 5)
			a.mask &= a.mask - 1;
		while (__builtin_popcountll(b.mask) > 5)
			b.mask &= b.mask - 1;
		na = members(a, ma);
		nb = members(b, mb);
		for (int i = 0; i < na; i++) {
			uint64_t x = ma[i];

			CHECK(member(tnum_neg(a), -x), "neg");
			CHECK(member(tnum_lshift(a, 3), x << 3), "lsh");
			CHECK(member(tnum_rshift(a, 2), x >> 2), "rsh");
			CHECK(member(tnum_cast(a, 1), x & 0xff), "cast");
			for (int j = 0; j < nb; j++) {
				uint64_t y = mb[j];

				CHECK(member(tnum_add(a, b), x + y), "add %llx+%llx", (unsigned long long)x,
				      (unsigned long long)y);
				CHECK(member(tnum_sub(a, b), x - y), "sub");
				CHECK(member(tnum_and(a, b), x & y), "and");
				CHECK(member(tnum_or(a, b), x | y), "or");
				CHECK(member(tnum_xor(a, b), x ^ y), "xor");
				CHECK(member(tnum_mul(a, b), x * y), "mul %llx*%llx", (unsigned long long)x,
				      (unsigned long long)y);
			}
		}
		/* step: the smallest member above z, every z around a's members */
		for (uint64_t z = 0; z < 300; z++) {
			uint64_t want = a.value | a.mask; /* none above: the largest */

			if (z < a.value)
				want = a.value;
			for (int i = 0; i < na && z >= a.value; i++)
				if (ma[i] > z && ma[i] < want)
					want = ma[i];
			CHECK(tnum_step(a, z) == want, "step (%llx; %llx) above %llu: %llu, want %llu",
			      (unsigned long long)a.value, (unsigned long long)a.mask,
			      (unsigned long long)z, (unsigned long long)tnum_step(a, z),
			      (unsigned long long)want);
		}
		/* union: members of either are members */
		for (int i = 0; i < na; i++)
			CHECK(member(tnum_union(a, b), ma[i]), "union");
		for (int j = 0; j < nb; j++)
			CHECK(member(tnum_union(a, b), mb[j]), "union");
		/* intersect: members of both stay members */
		for (int i = 0; i < na; i++)
			if (member(b, ma[i]))
				CHECK(member(tnum_intersect(a, b), ma[i]), "intersect");
		/* range covers its interval */
		{
			uint64_t lo = rand() & 0xfff, hi = lo + (rand() & 0xfff);
			struct tnum r = tnum_range(lo, hi);

			CHECK(member(r, lo) && member(r, hi) && member(r, (lo + hi) / 2), "range");
		}
	}
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("tnum: all checks passed\n");
	return 0;
}
