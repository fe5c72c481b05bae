/* SPDX-License-Identifier: MIT */
/*
 * tnum.h - tracked numbers: 64-bit values of which some bits are known.
 * A tnum is (value, mask): bits set in mask are unknown, the others equal
 * value.  Pure functions, no state; the verifier's known-bits algebra.
 */
#ifndef XBPF_TNUM_H
#define XBPF_TNUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tnum {
	uint64_t value;
	uint64_t mask;
};

#define TNUM(v, m) ((struct tnum){ .value = (v), .mask = (m) })

extern const struct tnum tnum_unknown;

struct tnum tnum_const(uint64_t value);
/* Smallest tnum covering [min, max]. */
struct tnum tnum_range(uint64_t min, uint64_t max);
struct tnum tnum_lshift(struct tnum a, uint8_t shift);
struct tnum tnum_rshift(struct tnum a, uint8_t shift);
/* Arithmetic shift of the low insn_bitness (32 or 64) bits. */
struct tnum tnum_arshift(struct tnum a, uint8_t min_shift, uint8_t insn_bitness);
struct tnum tnum_add(struct tnum a, struct tnum b);
struct tnum tnum_sub(struct tnum a, struct tnum b);
struct tnum tnum_neg(struct tnum a);
struct tnum tnum_and(struct tnum a, struct tnum b);
struct tnum tnum_or(struct tnum a, struct tnum b);
struct tnum tnum_xor(struct tnum a, struct tnum b);
struct tnum tnum_mul(struct tnum a, struct tnum b);
/* Values that are in both a and b (a and b must agree on their known bits). */
uint64_t tnum_step(struct tnum t, uint64_t z);
struct tnum tnum_union(struct tnum a, struct tnum b);
struct tnum tnum_intersect(struct tnum a, struct tnum b);
/* Keep the low size bytes. */
struct tnum tnum_cast(struct tnum a, uint8_t size);
bool tnum_is_const(struct tnum a);
bool tnum_is_unknown(struct tnum a);
bool tnum_equals_const(struct tnum a, uint64_t b);
bool tnum_is_aligned(struct tnum a, uint64_t size);
/* Is every value of b also a value of a? */
bool tnum_in(struct tnum a, struct tnum b);
/* Low 32 bits, with the high half cleared. */
struct tnum tnum_subreg(struct tnum a);
struct tnum tnum_clear_subreg(struct tnum a);
/* a's high 32 bits with the low half replaced by b's low 32 bits. */
struct tnum tnum_with_subreg(struct tnum reg, struct tnum subreg);
struct tnum tnum_const_subreg(struct tnum a, uint32_t value);
bool tnum_subreg_is_const(struct tnum a);
/* "(0x0; 0xff)" style; returns what snprintf returns. */
int tnum_strn(char *str, size_t size, struct tnum a);

#endif /* XBPF_TNUM_H */
