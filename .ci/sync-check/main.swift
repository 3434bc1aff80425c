// The library's lock and atomics alone (Sources/Receptionist/Support), compiled by .ci/check-sync
// with ThreadSanitizer once per implementation a build can select (futex, portable, adaptive
// pthread mutex, Synchronization.Mutex). Support/ is the only code those flags change, so this
// checks every selectable path on every CI run without building the library and its tests once
// per lock. The whole suite and the stress suites on each path run in `.ci/run --full`.
//
// Each check asserts what it counts and exits with status 1 on a wrong count; ThreadSanitizer
// reports a missing happens-before (a lock that does not publish, an atomic ordering mapped too
// weakly). With -DSYNC_CHECK_PLANTED_RACE a relaxed message-passing pair is added, which
// ThreadSanitizer must report (.ci/check-sync --self-test).

import Dispatch
import Foundation

nonisolated(unsafe) var failures = 0

/// Writes a line unbuffered, so that it precedes a ThreadSanitizer report in the log.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func check(_ condition: Bool, _ message: String) {
    if !condition {
        say("FAIL: \(message)")
        failures += 1
    }
}

/// Runs `body(index)` on `count` threads of their own (more threads than cores), started
/// together; stops the program if they have not all finished within `seconds` (a lost wake-up).
func onThreads(_ count: Int, _ name: String, seconds: Int = 120, _ body: @escaping @Sendable (Int) -> Void) {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            start.wait()
            body(index)
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    for finished in 0..<count where done.wait(timeout: .now() + .seconds(seconds)) == .timedOut {
        say("FAIL: \(name): \(count - finished) of \(count) threads did not finish within \(seconds) s")
        exit(1)
    }
}

/// Two fields that must always agree: a critical section that overlapped another sees them apart.
struct Pair {
    var first = 0
    var second = 0
    var log: [Int] = []
}

func criticalSectionsNeverOverlap(threads: Int, perThread: Int) {
    let locked = Locked(Pair())
    let torn = AtomicValue<Int>(0)
    onThreads(threads, "mutual exclusion, \(threads) threads") { index in
        var spin = index
        for sequence in 1...perThread {
            locked.withLock { pair in
                if pair.first != pair.second { torn.add(1, ordering: .relaxed) }
                pair.first += 1
                // Sometimes a longer critical section, so that waiters queue up and sleep.
                if sequence & 1023 == 0 { pair.log.append(index) }
                pair.second += 1
            }
            // Work between acquisitions, sometimes none (back-to-back relocking).
            if sequence % 3 == 0 { for _ in 0..<(sequence % 97) { spin &+= 1 } }
        }
        if spin == -1 { say("\(spin)") }
    }
    let (first, second, logged) = locked.withLock { ($0.first, $0.second, $0.log.count) }
    check(torn.load(ordering: .relaxed) == 0, "\(threads) threads: a critical section saw another half done")
    check(first == threads * perThread && second == threads * perThread,
          "\(threads) threads: \(first)/\(second) increments kept of \(threads * perThread)")
    check(logged == threads * (perThread / 1024), "\(threads) threads: \(logged) long sections")
}

/// A heap value written under the lock is seen whole by the next holder (the lock publishes it).
func theLockPublishesWhatItGuards(rounds: Int) {
    let locked = Locked<[Int]?>(nil)
    let wrong = AtomicValue<Int>(0)
    onThreads(8, "publication") { index in
        for round in 0..<rounds {
            locked.withLock { slot in
                if let array = slot, array.count != 16 || array.contains(where: { $0 != array[0] }) {
                    wrong.add(1, ordering: .relaxed)
                }
                slot = Array(repeating: index << 20 | round, count: 16)
            }
        }
    }
    check(wrong.load(ordering: .relaxed) == 0, "a holder saw a value the previous holder had not finished")
}

/// A plain (non-atomic) payload, published by an atomic operation with `publish`'s ordering and
/// read after an atomic load with `observe`'s ordering: ThreadSanitizer reports the payload's
/// accesses as a race unless the pair orders them.
final class Payload: @unchecked Sendable {
    var words = [Int](repeating: 0, count: 8)
}

enum Publish: CaseIterable {
    case store, exchange, add, compareExchange
}

func messagePassing(
    _ publish: Publish, _ publishOrdering: AtomicOrdering, _ observeOrdering: AtomicOrdering, rounds: Int
) {
    let flag = AtomicValue<Int>(0)
    let payload = Payload()
    let wrong = AtomicValue<Int>(0)
    onThreads(2, "message passing \(publish) \(publishOrdering)/\(observeOrdering)") { index in
        for round in 1...rounds {
            if index == 0 {
                // Wait until the reader took the previous round (flag back at 0).
                while flag.load(ordering: observeOrdering) != 0 {}
                for slot in 0..<8 { payload.words[slot] = round }
                switch publish {
                case .store: flag.store(round, ordering: publishOrdering)
                case .exchange: flag.exchange(round, ordering: publishOrdering)
                case .add: flag.add(round, ordering: publishOrdering)
                case .compareExchange:
                    _ = flag.compareExchange(expected: 0, desired: round, ordering: publishOrdering)
                }
            } else {
                var seen = 0
                while seen == 0 { seen = flag.load(ordering: observeOrdering) }
                if seen != round || payload.words.contains(where: { $0 != round }) { wrong.add(1, ordering: .relaxed) }
                flag.store(0, ordering: publishOrdering)
            }
        }
    }
    check(wrong.load(ordering: .relaxed) == 0, "message passing \(publish) \(publishOrdering): a stale payload")
}

/// Read-modify-write operations from many threads: none is lost.
func readModifyWritesAreAtomic(threads: Int, perThread: Int) {
    let counter = AtomicValue<Int>(0)
    let swapped = AtomicValue<Int>(0)
    onThreads(threads, "read-modify-write, \(threads) threads") { index in
        for step in 0..<perThread {
            switch step % 4 {
            case 0: counter.add(3, ordering: .relaxed)
            case 1: counter.subtract(1, ordering: .acquiringAndReleasing)
            case 2: counter.wrappingAdd(1, ordering: .sequentiallyConsistent)
            default:
                var current = counter.load(ordering: .relaxed)
                while true {
                    let (exchanged, original) = counter.compareExchange(
                        expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
                    if exchanged { break }
                    current = original
                }
            }
            if step % 16 == 0 { swapped.exchange(index, ordering: .acquiringAndReleasing) }
        }
    }
    let perFour = 3 - 1 + 1 + 1
    let expected = threads * (perThread / 4) * perFour
    check(counter.load(ordering: .sequentiallyConsistent) == expected,
          "\(threads) threads: counter \(counter.load(ordering: .relaxed)), expected \(expected)")
    check((0..<threads).contains(swapped.load(ordering: .acquiring)), "exchange left a value no thread wrote")
}

let scale = ProcessInfo.processInfo.environment["SYNC_CHECK_SCALE"].flatMap(Double.init) ?? 1
func scaled(_ base: Int) -> Int { max(4, Int(Double(base) * scale)) }

for threads in [2, 16, 64] {
    criticalSectionsNeverOverlap(threads: threads, perThread: scaled(120_000 / threads))
}
theLockPublishesWhatItGuards(rounds: scaled(5_000))
let synchronizing: [(AtomicOrdering, AtomicOrdering)] = [
    (.releasing, .acquiring), (.acquiringAndReleasing, .acquiringAndReleasing),
    (.sequentiallyConsistent, .sequentiallyConsistent),
]
for publish in Publish.allCases {
    for (publishOrdering, observeOrdering) in synchronizing {
        messagePassing(publish, publishOrdering, observeOrdering, rounds: scaled(2_000))
    }
}
#if SYNC_CHECK_PLANTED_RACE
say("sync-check: the planted race follows")
messagePassing(.store, .relaxed, .relaxed, rounds: scaled(2_000))
#endif
for threads in [2, 16] {
    readModifyWritesAreAtomic(threads: threads, perThread: scaled(40_000 / threads) & ~3)
}

if failures > 0 {
    say("sync-check: \(failures) failure(s)")
    exit(1)
}
say("sync-check: every check passed")
