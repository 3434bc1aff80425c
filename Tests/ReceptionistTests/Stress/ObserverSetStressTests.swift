import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// An observer for the stress tests: checks, on every call, that it was not removed before the
/// round that calls it started, and checks per-notifier order of its queued messages.
final class StressObserver: TestObserver {
    /// The tick of the shared clock taken right after `remove` returned; 0 while registered.
    let removedAt = AtomicValue<Int>(0)
    let callsAfterRemoval = AtomicValue<Int>(0)
    let calls = AtomicValue<Int>(0)
    let order = OrderChecker()

    func changed(_ value: Int) {}

    /// A call made by the round that started at `round` (a tick of the shared clock).
    func called(round: Int, stamped: Int) {
        calls.add(1, ordering: .relaxed)
        let removedAt = removedAt.load(ordering: .sequentiallyConsistent)
        if removedAt != 0 && round > removedAt { callsAfterRemoval.add(1, ordering: .relaxed) }
        order.record(stamped)
    }
}

extension Stress {
    /// The observer set under ≥ 4 threads that notify, add, remove and drop observers at once.
    @Suite(.serialized, .tags(.stress))
    struct ObserverSetStressTests {
        @Test(arguments: [UInt64(1), 2, 3])
        func concurrentAddRemoveNotifyKeepsTheContract(seed: UInt64) {
            let set = ObserverSet<any TestObserver>()
            let clock = AtomicValue<Int>(1)
            let rounds = scaled(4_000)
            let notifiers = 3
            let queue = DispatchQueue(label: "stress.observers")
            // Observers that stay for the whole run: every round must reach them.
            let stayers = (0..<4).map { _ in StressObserver() }
            for (index, stayer) in stayers.enumerated() {
                if index.isMultiple(of: 2) { set.add(stayer) } else { set.add(stayer, on: queue) }
            }
            let churned = Locked<[StressObserver]>(uncounted: [])
            let reached = AtomicValue<Int>(0)

            onThreads(notifiers + 2) { thread in
                var random = SplitMix64(seed: seed &* 1000 &+ UInt64(thread))
                if thread < notifiers {
                    for sequence in 0..<rounds {
                        let round = clock.add(1, ordering: .sequentiallyConsistent).newValue
                        let stamped = stamp(thread, sequence)
                        let count = set.notify { observer in
                            (observer as? StressObserver)?.called(round: round, stamped: stamped)
                        }
                        reached.add(count, ordering: .relaxed)
                    }
                } else {
                    // Churn: add an observer (directly or on the queue), then remove it or drop it.
                    for _ in 0..<(rounds / 4) {
                        let observer = StressObserver()
                        if Bool.random(using: &random) { set.add(observer) } else { set.add(observer, on: queue) }
                        if Int.random(in: 0..<3, using: &random) == 0 {
                            continue  // dropped: the set must prune it
                        }
                        #expect(set.remove(observer))
                        observer.removedAt.store(
                            clock.add(1, ordering: .sequentiallyConsistent).newValue, ordering: .sequentiallyConsistent)
                        churned.withLock { $0.append(observer) }
                    }
                }
            }
            for stayer in stayers {
                #expect(
                    waitUntil(seconds: 60) { stayer.calls.load(ordering: .relaxed) == rounds * notifiers },
                    "every round reaches a stayer"
                )
                let report = stayer.order.report
                #expect(report.duplicatedOrReordered == 0)
                #expect(report.gaps == 0)
            }
            let violations = churned.withLock { $0.reduce(0) { $0 + $1.callsAfterRemoval.load(ordering: .relaxed) } }
            #expect(violations == 0, "no round started after remove returned may call the observer")
            #expect(churned.withLock { $0.allSatisfy { $0.order.report.duplicatedOrReordered == 0 } })
            #expect(set.count == stayers.count, "removed and dropped observers are gone")
            #expect(reached.load(ordering: .relaxed) >= rounds * notifiers * stayers.count)
        }

        @Test func observersReleasedOnOtherThreadsDuringNotificationsArePruned() {
            let set = ObserverSet<any TestObserver>()
            let counter = LifetimeCounter()
            let log = Recorder<String>()
            let total = scaled(2_000)
            onThreads(4) { thread in
                for index in 0..<total {
                    if thread == 0 {
                        set.notify { $0.changed(index) }
                    } else {
                        let observer = LoggingObserver("t\(thread)", log: log, witness: LifetimeWitness(counter))
                        set.add(observer)
                        if index.isMultiple(of: 2) { set.remove(observer) }
                    }
                }
            }
            #expect(counter.deinitialized == total * 3, "the set keeps no observer alive")
            set.notify { $0.changed(-1) }
            #expect(set.count == 0)
            #expect(set.registrations.isEmpty)
        }

        /// After `finish()` returns, a synchronous observer is called at most once more per
        /// notifying thread (the call that thread had already committed to), and never again
        /// after that: the allowance ``ObserverSet/finish(completion:)`` states.
        @Test(arguments: [2, 4])
        func finishLetsAtMostOneCommittedCallPerNotifyingThreadThrough(notifiers: Int) {
            for trial in 0..<scaled(100) {
                let set = ObserverSet<any TestObserver>()
                let observers = (0..<3).map { _ in FinishProbe() }
                for observer in observers { set.add(observer) }
                let finished = AtomicValue<Bool>(false)
                let notifiedAfterFinish = AtomicValue<Int>(0)
                onThreads(notifiers + 1) { thread in
                    if thread == notifiers {
                        for _ in 0..<(trial % 50) { sched_yield() }
                        set.finish()
                        finished.store(true, ordering: .sequentiallyConsistent)
                        return
                    }
                    // Notify until two rounds ran wholly after finish returned.
                    var roundsAfter = 0
                    while roundsAfter < 2 {
                        let startedAfterFinish = finished.load(ordering: .sequentiallyConsistent)
                        let reached = set.notify { observer in
                            (observer as? FinishProbe)?.called(afterFinish: finished)
                        }
                        if startedAfterFinish {
                            roundsAfter += 1
                            if reached > 0 { notifiedAfterFinish.add(1, ordering: .relaxed) }
                        }
                    }
                }
                let late = observers.reduce(0) { $0 + $1.callsAfterFinish.load(ordering: .relaxed) }
                #expect(late <= notifiers, "trial \(trial): \(late) calls began after finish returned")
                #expect(
                    notifiedAfterFinish.load(ordering: .relaxed) == 0, "a round that began after finish reached no one")
            }
        }
    }
}

/// Counts the calls that began after `finish()` returned.
final class FinishProbe: TestObserver {
    let callsAfterFinish = AtomicValue<Int>(0)

    func changed(_ value: Int) {}

    func called(afterFinish finished: borrowing AtomicValue<Bool>) {
        if finished.load(ordering: .sequentiallyConsistent) { callsAfterFinish.add(1, ordering: .relaxed) }
    }
}
