// SPDX-License-Identifier: MIT
/*
 * Weighted Maglev (Eisenbud et al., NSDI 2016, section 3.4).
 *
 * Every real owns a permutation of the ring's slots, defined by two hashes
 * of its identity: offset = h1 % M and skip = h2 % (M - 1) + 1.  Because M is
 * prime, offset + j * skip (mod M) visits every slot exactly once.  The fill
 * goes round by round; in each round a real earns credit equal to its
 * weight and claims one slot (the next still-free slot of its permutation)
 * for every `max_weight` of credit.  Equal weights reproduce the paper's
 * fill; unequal weights give each real a share of slots proportional to its
 * weight.  Since a real's preferences do not depend on the other reals,
 * adding, removing or re-weighting one real moves few slots of the others.
 *
 * The permutation is computed on the fly (no M x N table), so memory is
 * O(N) besides the ring itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_control.h"

bool xlb_is_prime(uint32_t n)
{
	if (n < 2)
		return false;
	if (n % 2 == 0)
		return n == 2;
	for (uint32_t d = 3; (uint64_t)d * d <= n; d += 2)
		if (n % d == 0)
			return false;
	return true;
}

/* FNV-1a over the identity, finished with a 64-bit avalanche mix (splitmix64). */
static uint64_t identity_hash(const void *id, size_t len, uint64_t seed)
{
	const uint8_t *p = id;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	h += 0x9e3779b97f4a7c15ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

struct perm {
	uint64_t offset;
	uint64_t skip;
	uint64_t next;
	uint64_t credit;
};

int xlb_maglev_build(const struct xlb_maglev_real *reals, size_t n, uint32_t *ring, uint32_t size)
{
	struct perm *perm;
	uint64_t max_weight = 0;
	size_t active = 0;
	uint32_t filled = 0;

	if (!ring || size < 3 || !xlb_is_prime(size) || (n && !reals))
		return -EINVAL;
	for (uint32_t s = 0; s < size; s++)
		ring[s] = XLB_RING_EMPTY;
	for (size_t i = 0; i < n; i++) {
		if (!reals[i].weight)
			continue;
		active++;
		if (reals[i].weight > max_weight)
			max_weight = reals[i].weight;
	}
	if (!active)
		return 0;
	if (active > size)
		return -EINVAL;

	perm = calloc(n, sizeof(*perm));
	if (!perm)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		perm[i].offset = identity_hash(reals[i].id, reals[i].id_len, 0x6d61676c65763031ULL) % size;
		perm[i].skip = identity_hash(reals[i].id, reals[i].id_len, 0x736b697070657232ULL) % (size - 1) + 1;
	}

	for (;;) {
		for (size_t i = 0; i < n; i++) {
			struct perm *p = &perm[i];

			if (!reals[i].weight)
				continue;
			p->credit += reals[i].weight;
			while (p->credit >= max_weight) {
				uint32_t slot;

				p->credit -= max_weight;
				do {
					slot = (p->offset + p->next * p->skip) % size;
					p->next++;
				} while (ring[slot] != XLB_RING_EMPTY);
				ring[slot] = (uint32_t)i;
				if (++filled == size)
					goto out;
			}
		}
	}
out:
	free(perm);
	return 0;
}
