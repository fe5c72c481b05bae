// SPDX-License-Identifier: MIT
/*
 * lock.c - the contended path of bpf_spin_lock and of the maps' own locks
 * (the fast path is inline in core_impl.h).
 */
#include <sched.h>

#include "core_impl.h"

void __xbpf_spin_lock_slow(xbpf_spinlock_t *lock)
{
	unsigned int spins = 0;

	while (atomic_flag_test_and_set_explicit(&lock->flag, memory_order_acquire)) {
		if (++spins > 64) {
			sched_yield();
			spins = 0;
		}
	}
}

