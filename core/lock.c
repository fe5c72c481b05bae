// SPDX-License-Identifier: MIT
/*
 * lock.c - the contended path of bpf_spin_lock and of the maps' own locks
 * (the fast path is inline in core_impl.h).  Lock words hold the owner's pid:
 * maps may live in storage several processes share (map_shm.c), and a
 * process killed inside a writer section must not wedge the others.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "core_impl.h"

uint32_t __xbpf_lock_pid;

static void refresh_lock_pid(void)
{
	__xbpf_lock_pid = (uint32_t)getpid();
}

__attribute__((constructor)) static void lock_pid_init(void)
{
	refresh_lock_pid();
	pthread_atfork(NULL, NULL, refresh_lock_pid);
}

static bool owner_is_dead(uint32_t owner)
{
	return owner && owner != __xbpf_lock_pid && kill((pid_t)owner, 0) < 0 && errno == ESRCH;
}

void __xbpf_spin_lock_slow(xbpf_spinlock_t *lock)
{
	unsigned int spins = 0, yields = 0;
	uint32_t seen = 0;

	for (;;) {
		uint32_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);

		if (!owner && atomic_compare_exchange_weak_explicit(&lock->owner, &owner, __xbpf_lock_pid,
								     memory_order_acquire,
								     memory_order_relaxed))
			return;
		if (++spins <= 64)
			continue;
		spins = 0;
		sched_yield();
		if (owner != seen) {
			seen = owner;
			yields = 0;
		}
		/* the same owner for ~a thousand yields: is it still alive? */
		if (++yields >= 1024) {
			yields = 0;
			if (owner_is_dead(owner) &&
			    atomic_compare_exchange_strong_explicit(&lock->owner, &owner, __xbpf_lock_pid,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				pr_warn("maps: took over a lock held by pid %u, which died holding it\n",
					owner);
				return;
			}
		}
	}
}

