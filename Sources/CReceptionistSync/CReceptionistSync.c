// Everything else is `static inline` in include/CReceptionistSync.h.
#include "CReceptionistSync.h"

#if defined(__linux__)
#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

// How many times a thread that finds the lock held re-reads it before it sleeps, while the owner
// holds it with nobody asleep. About 100 pause instructions: a few hundred nanoseconds to a few
// microseconds, longer than the library's critical sections, shorter than a sleep and a wake.
// Rust's standard library spins as long on the same three-state word.
enum { receptionist_futex_spins = 100 };

// The spin hint, as Rust's `core::hint::spin_loop`: `pause` on x86; on AArch64 `isb sy`, since
// `yield` is a no-op on most cores (it only helps hardware threads share a core), so the spin
// would end after a few nanoseconds, while `isb` stalls the core for about as long as `pause`
// (rust-lang/rust#84725). 32-bit ARM keeps `yield`, as Rust does.
static inline void receptionist_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("isb sy" ::: "memory");
#elif defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/// Spins while the word reads 1 (held, nobody asleep), at most `receptionist_futex_spins` times;
/// returns the last value read. Stops at once on 2: with a sleeper queued, the lock will be
/// handed around through the kernel anyway, and spinning would only take the owner's core.
static uint32_t receptionist_futex_spin(receptionist_futex_mutex *mutex) {
    uint32_t state = atomic_load_explicit(&mutex->word, memory_order_relaxed);
    for (int spins = 0; state == 1 && spins < receptionist_futex_spins; spins++) {
        receptionist_cpu_relax();
        state = atomic_load_explicit(&mutex->word, memory_order_relaxed);
    }
    return state;
}

void receptionist_futex_mutex_lock_contended(receptionist_futex_mutex *mutex) {
    uint32_t state = receptionist_futex_spin(mutex);
    if (state == 0) {
        // Free after the spin: take it as an uncontended lock would, leaving nobody to wake.
        uint32_t expected = 0;
        if (atomic_compare_exchange_strong_explicit(
                &mutex->word, &expected, 1, memory_order_acquire, memory_order_relaxed)) {
            return;
        }
        state = expected;
    }
    for (;;) {
        // Mark the lock contended; if it was free, it is now ours (held at 2: see the header).
        if (state != 2 && atomic_exchange_explicit(&mutex->word, 2, memory_order_acquire) == 0) return;
        // Sleep while the word still reads 2. EAGAIN (it changed first) and EINTR just retry.
        syscall(SYS_futex, &mutex->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        state = receptionist_futex_spin(mutex);
    }
}

void receptionist_futex_mutex_wake(receptionist_futex_mutex *mutex) {
    syscall(SYS_futex, &mutex->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif
