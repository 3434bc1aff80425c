// The branch Package.swift selects on every Apple platform uses Mutex: reported.
#if APPLE_SYNC
let lock = Mutex(0)
#endif

// Defined on macOS only: the other platforms build the Mutex.
#if MAC_ONLY
let counter = 0
#else
let counter = Mutex(0)
#endif

// Defined in release builds only: debug builds build the Atomic.
#if !RELEASE_ONLY
let flag = Atomic<Bool>(false)
#endif

// A define whose condition this check does not know (traits:) counts as absent.
#if !TRAIT_ONLY
let traced = Mutex(0)
#endif
