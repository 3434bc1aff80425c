// Package.swift defines APPLE_SYNC on every Apple platform: the Mutex branches are never built
// there, so nothing here is reported.
#if APPLE_SYNC
import Darwin

struct Lock {
    var mutex = pthread_mutex_t()
}
#else
import Synchronization

struct Lock: ~Copyable {
    let mutex = Mutex(0)
}
#endif

#if !EVERYWHERE
let never = Atomic<Int>(0)
#endif

#if LINUX_SYNC && !APPLE_SYNC
let linuxOnly = Mutex(0)
#endif

#if !(APPLE_SYNC || (LINUX_SYNC && !EVERYWHERE))
let otherPlatforms = Mutex(0)
#endif
