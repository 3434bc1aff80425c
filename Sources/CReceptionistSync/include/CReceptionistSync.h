// C11 atomics for Receptionist's portable synchronisation layer.
//
// Swift's own `Synchronization.Atomic` needs macOS 15 / iOS 18 / tvOS 18 / watchOS 11 /
// visionOS 2. Below that, the library's `AtomicValue` (Sources/Receptionist/Support) keeps its
// word here: one pointer-sized integer with the C11 memory orders, every function `static
// inline` so that the compiler inlines it into the Swift caller. Built on every platform;
// used on Apple platforms, and on Linux when the package is built with
// `-Xswiftc -DRECEPTIONIST_PORTABLE_SYNC` (as CI does, to run exactly the code Apple
// platforms run).
#ifndef C_RECEPTIONIST_SYNC_H
#define C_RECEPTIONIST_SYNC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/// One atomic pointer-sized integer. Swift cannot see its field: it only passes pointers.
typedef struct {
    _Atomic(intptr_t) value;
} receptionist_atomic_word;

/// The memory orders, numbered as Swift's `AtomicOrdering` cases are.
typedef enum {
    receptionist_relaxed = 0,
    receptionist_acquiring = 1,
    receptionist_releasing = 2,
    receptionist_acquiring_and_releasing = 3,
    receptionist_sequentially_consistent = 4,
} receptionist_ordering;

static inline memory_order receptionist_memory_order(receptionist_ordering ordering) {
    switch (ordering) {
    case receptionist_relaxed: return memory_order_relaxed;
    case receptionist_acquiring: return memory_order_acquire;
    case receptionist_releasing: return memory_order_release;
    case receptionist_acquiring_and_releasing: return memory_order_acq_rel;
    default: return memory_order_seq_cst;
    }
}

/// A load may not release: a releasing order loads with relaxed, acquire-release with acquire.
static inline memory_order receptionist_load_order(receptionist_ordering ordering) {
    switch (ordering) {
    case receptionist_acquiring:
    case receptionist_acquiring_and_releasing: return memory_order_acquire;
    case receptionist_sequentially_consistent: return memory_order_seq_cst;
    default: return memory_order_relaxed;
    }
}

/// A store may not acquire: an acquiring order stores with relaxed, acquire-release with release.
static inline memory_order receptionist_store_order(receptionist_ordering ordering) {
    switch (ordering) {
    case receptionist_releasing:
    case receptionist_acquiring_and_releasing: return memory_order_release;
    case receptionist_sequentially_consistent: return memory_order_seq_cst;
    default: return memory_order_relaxed;
    }
}

static inline void receptionist_atomic_word_init(receptionist_atomic_word *word, intptr_t value) {
    atomic_init(&word->value, value);
}

static inline intptr_t receptionist_atomic_word_load(receptionist_atomic_word *word, receptionist_ordering ordering) {
    return atomic_load_explicit(&word->value, receptionist_load_order(ordering));
}

static inline void receptionist_atomic_word_store(
    receptionist_atomic_word *word, intptr_t value, receptionist_ordering ordering) {
    atomic_store_explicit(&word->value, value, receptionist_store_order(ordering));
}

static inline intptr_t receptionist_atomic_word_exchange(
    receptionist_atomic_word *word, intptr_t value, receptionist_ordering ordering) {
    return atomic_exchange_explicit(&word->value, value, receptionist_memory_order(ordering));
}

/// Adds `operand` with wrapping arithmetic; returns the value before.
static inline intptr_t receptionist_atomic_word_fetch_add(
    receptionist_atomic_word *word, intptr_t operand, receptionist_ordering ordering) {
    return atomic_fetch_add_explicit(&word->value, operand, receptionist_memory_order(ordering));
}

/// Replaces `*expected` with `desired` if the word holds `*expected`; otherwise stores what the
/// word holds in `*expected`. Returns whether it exchanged.
static inline bool receptionist_atomic_word_compare_exchange(
    receptionist_atomic_word *word, intptr_t *expected, intptr_t desired, receptionist_ordering ordering) {
    return atomic_compare_exchange_strong_explicit(
        &word->value, expected, desired, receptionist_memory_order(ordering), receptionist_load_order(ordering));
}


#if defined(__linux__)
// A mutex on one futex word, for Linux (the library's default lock there; Support/Locked.swift).
//
// Why not `Synchronization.Mutex`: on Linux it is a priority-inheritance futex
// (`FUTEX_LOCK_PI`), whose kernel hands the lock to the next sleeper directly, so under
// contention every acquisition becomes a sleep and a wake (swiftlang/swift#88440).
//
// The design is Rust's standard library's futex mutex (`library/std/src/sys/sync/mutex/futex.rs`,
// from rust-lang/rust#95035), step for step: the same three states, the same bounded spin of 100
// relaxed loads while the word reads 1, the same exchange to 2 before sleeping, the same
// single-waiter wake; its spin hint is Rust's `core::hint::spin_loop` (`pause` on x86, `isb` on
// AArch64: CReceptionistSync.c). It is not the design of swiftlang/swift#88523, which replaced
// `Mutex`'s PI futex upstream after Swift 6.3 with a futex mutex of the same family plus three
// refinements this one does without: a cap on concurrent spinners (4), jitter on the spin (from
// the cycle counter), and no spin at all when the lock is contended and that many threads
// already wait. A cap on spinners was measured here at 64 threads and did not win
// (Benchmarks/README.md, "Contention").
//
// The word holds one of three states:
//   0: unlocked;
//   1: locked, and no thread sleeps on the word;
//   2: locked, and a thread may sleep on the word (so the unlock must wake one).
//
// Lock: one compare-exchange 0 -> 1 (acquiring), inline. If that fails, the contended path (in
// CReceptionistSync.c): spin a little while the word reads 1 (the owner holds the lock and
// nobody sleeps: it is probably running, and our critical sections are short), then, until the
// exchange to 2 finds the lock free, sleep in FUTEX_WAIT for as long as the word reads 2.
// Exchanging to 2, not compare-exchanging to 1, is what keeps a wake from getting lost: a
// thread that took the lock after having slept cannot know whether others still sleep, so it
// leaves the word at 2 and its unlock wakes one more (at worst a wake too many, never too few).
//
// Unlock: exchange the word to 0 (releasing), inline; if it held 2, FUTEX_WAKE one sleeper.
// The woken thread competes for the lock like any other (no hand-off): a running thread may
// take it first, which is what keeps throughput up when threads outnumber cores.
typedef struct {
    _Atomic(uint32_t) word;
} receptionist_futex_mutex;

void receptionist_futex_mutex_lock_contended(receptionist_futex_mutex *mutex);
void receptionist_futex_mutex_wake(receptionist_futex_mutex *mutex);

static inline void receptionist_futex_mutex_init(receptionist_futex_mutex *mutex) {
    atomic_init(&mutex->word, 0);
}

static inline bool receptionist_futex_mutex_trylock(receptionist_futex_mutex *mutex) {
    uint32_t expected = 0;
    return atomic_compare_exchange_strong_explicit(
        &mutex->word, &expected, 1, memory_order_acquire, memory_order_relaxed);
}

static inline void receptionist_futex_mutex_lock(receptionist_futex_mutex *mutex) {
    if (__builtin_expect(receptionist_futex_mutex_trylock(mutex), 1)) return;
    receptionist_futex_mutex_lock_contended(mutex);
}

static inline void receptionist_futex_mutex_unlock(receptionist_futex_mutex *mutex) {
    if (__builtin_expect(atomic_exchange_explicit(&mutex->word, 0, memory_order_release) == 2, 0)) {
        receptionist_futex_mutex_wake(mutex);
    }
}

/// Whether the mutex is locked (a debug check; racy by nature).
static inline bool receptionist_futex_mutex_is_locked(receptionist_futex_mutex *mutex) {
    return atomic_load_explicit(&mutex->word, memory_order_relaxed) != 0;
}
#endif

#endif
