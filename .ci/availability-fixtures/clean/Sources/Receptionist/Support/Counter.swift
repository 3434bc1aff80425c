#if !canImport(Darwin)
import Synchronization
#endif

struct Counter: ~Copyable {
    #if canImport(Glibc)
    let count = Atomic<Int>(0)
    #elseif os(Linux) || os(Windows)
    let count = Mutex<Int>(0)
    #else
    let count = Locked(0)
    #endif

    #if !canImport(Darwin) && DEBUG
    let spare = WordPair(first: 0, second: 0)
    #endif
}
