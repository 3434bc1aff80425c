import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// The observer protocol of these tests: every call is recorded with the observer's name.
protocol TestObserver: AnyObject, Sendable {
    func changed(_ value: Int)
}

/// An observer that records calls in a shared log, and may act during the call.
final class LoggingObserver: TestObserver {
    let name: String
    let log: Recorder<String>
    let onChange: Locked<(@Sendable (LoggingObserver, Int) -> Void)?>
    let witness: LifetimeWitness?

    init(
        _ name: String,
        log: Recorder<String>,
        witness: LifetimeWitness? = nil,
        onChange: (@Sendable (LoggingObserver, Int) -> Void)? = nil
    ) {
        self.name = name
        self.log = log
        self.witness = witness
        self.onChange = Locked(uncounted: onChange)
    }

    func changed(_ value: Int) {
        log.append("\(name)\(value)")
        let action = onChange.withLock { $0 }
        action?(self, value)
    }
}

/// The semantics of the original Objective-C `Observable` class's unit tests, and more.
@Suite struct ObserverSetTests {
    typealias Observers = ObserverSet<any TestObserver>

    @Test func notifiesInRegistrationOrderAndCountsTheObserversReached() {
        let set = Observers()
        let log = Recorder<String>()
        let a = LoggingObserver("a", log: log)
        let b = LoggingObserver("b", log: log)
        let c = LoggingObserver("c", log: log)
        for observer in [b, a, c] { #expect(set.add(observer)) }
        #expect(set.notify { $0.changed(1) } == 3)
        #expect(log.values == ["b1", "a1", "c1"])
        #expect(set.count == 3)
    }

    @Test func addingTwiceKeepsTheFirstPlace() {
        let set = Observers()
        let log = Recorder<String>()
        let a = LoggingObserver("a", log: log)
        let b = LoggingObserver("b", log: log)
        set.add(a)
        set.add(b)
        #expect(!set.add(a))
        set.notify { $0.changed(1) }
        #expect(log.values == ["a1", "b1"])
    }

    @Test func removeAndContains() {
        let set = Observers()
        let log = Recorder<String>()
        let a = LoggingObserver("a", log: log)
        let b = LoggingObserver("b", log: log)
        set.add(a)
        set.add(b)
        #expect(set.contains(a))
        #expect(set.remove(a))
        #expect(!set.contains(a))
        #expect(!set.remove(a), "removing an observer that is not there says so")
        #expect(set.notify { $0.changed(1) } == 1)
        #expect(log.values == ["b1"])
        set.add(a)
        set.notify { $0.changed(2) }
        #expect(log.values == ["b1", "b2", "a2"], "an observer added again goes to the end")
    }

    @Test func anObserverAddedDuringARoundIsCalledFromTheNextRound() {
        let set = Observers()
        let log = Recorder<String>()
        let late = LoggingObserver("late", log: log)
        let adder = LoggingObserver("adder", log: log) { _, _ in set.add(late) }
        set.add(adder)
        set.notify { $0.changed(1) }
        #expect(log.values == ["adder1"])
        set.notify { $0.changed(2) }
        #expect(log.values == ["adder1", "adder2", "late2"])
    }

    @Test func anObserverRemovedDuringARoundIsNotCalledLaterInThatRound() {
        let set = Observers()
        let log = Recorder<String>()
        let victim = LoggingObserver("victim", log: log)
        let remover = LoggingObserver("remover", log: log) { _, _ in set.remove(victim) }
        set.add(remover)
        set.add(victim)
        set.notify { $0.changed(1) }
        #expect(log.values == ["remover1"])
        set.notify { $0.changed(2) }
        #expect(log.values == ["remover1", "remover2"])
    }

    @Test func anObserverRemovedAndAddedAgainDuringARoundWaitsForTheNextRound() {
        let set = Observers()
        let log = Recorder<String>()
        let victim = LoggingObserver("victim", log: log)
        let juggler = LoggingObserver("juggler", log: log) { _, value in
            if value == 1 {
                set.remove(victim)
                set.add(victim)
            }
        }
        set.add(juggler)
        set.add(victim)
        set.notify { $0.changed(1) }
        #expect(log.values == ["juggler1"], "a re-added observer is a new registration, as one added during the round")
        set.notify { $0.changed(2) }
        #expect(log.values == ["juggler1", "juggler2", "victim2"])
    }

    @Test func anObserverMayRemoveItself() {
        let set = Observers()
        let log = Recorder<String>()
        let once = LoggingObserver("once", log: log) { observer, _ in set.remove(observer) }
        let other = LoggingObserver("other", log: log)
        set.add(once)
        set.add(other)
        set.notify { $0.changed(1) }
        set.notify { $0.changed(2) }
        #expect(log.values == ["once1", "other1", "other2"])
        #expect(!set.contains(once))
    }

    @Test func anObserverRemovedDuringARoundOnAnotherThreadIsNotCalledAfterRemoveReturns() {
        let set = Observers()
        let log = Recorder<String>()
        let removed = DispatchSemaphore(value: 0)
        let victim = LoggingObserver("victim", log: log)
        let blocker = LoggingObserver("blocker", log: log) { _, _ in
            // Another thread removes the victim while this round is between two calls.
            DispatchQueue.global().async {
                set.remove(victim)
                removed.signal()
            }
            #expect(wait(removed))
        }
        set.add(blocker)
        set.add(victim)
        set.notify { $0.changed(1) }
        #expect(log.values == ["blocker1"])
    }

    @Test func observersAreHeldWeaklyAndPrunedWhenDeallocated() {
        let set = Observers()
        let log = Recorder<String>()
        let counter = LifetimeCounter()
        let keeper = LoggingObserver("keeper", log: log)
        set.add(keeper)
        do {
            let transient = LoggingObserver("transient", log: log, witness: LifetimeWitness(counter))
            set.add(transient)
            #expect(set.count == 2)
        }
        #expect(counter.deinitialized == 1, "the set does not keep an observer alive")
        #expect(set.count == 1)
        #expect(set.notify { $0.changed(1) } == 1)
        #expect(log.values == ["keeper1"])
        #expect(set.registrations.count == 1, "the dead registration was pruned")
    }

    @Test func anObserverMayRemoveItselfInItsDeinit() {
        let set = Observers()
        let log = Recorder<String>()
        final class SelfRemoving: TestObserver {
            let set: ObserverSet<any TestObserver>
            let removed: Recorder<Bool>
            init(set: ObserverSet<any TestObserver>, removed: Recorder<Bool>) {
                self.set = set
                self.removed = removed
            }
            deinit {
                removed.append(set.remove(self))
            }
            func changed(_ value: Int) {}
        }
        let removed = Recorder<Bool>()
        do {
            let observer = SelfRemoving(set: set, removed: removed)
            set.add(observer)
            set.add(LoggingObserver("never", log: log))  // dies at once; pruned later
        }
        #expect(removed.values == [true], "remove from deinit finds the registration by identity")
        #expect(set.registrations.isEmpty || set.registrations.allSatisfy { !$0.isAlive })
        #expect(set.notify { $0.changed(1) } == 0)
        #expect(log.values.isEmpty)
    }

    @Test func anObserverWithATargetGetsItsMessagesThereInOrder() {
        let set = Observers()
        let log = Recorder<String>()
        let target = ManualTarget()
        let queued = LoggingObserver("queued", log: log)
        let direct = LoggingObserver("direct", log: log)
        set.add(queued, on: target)
        set.add(direct)
        for value in 1...3 { #expect(set.notify { $0.changed(value) } == 2) }
        #expect(log.values == ["direct1", "direct2", "direct3"], "notify does not wait for the target")
        target.runAll()
        #expect(log.values == ["direct1", "direct2", "direct3", "queued1", "queued2", "queued3"])
    }

    @Test func addingAgainWithAnotherTargetKeepsTheFirstTargetAndSaysSo() {
        let set = Observers()
        let log = Recorder<String>()
        let first = ManualTarget()
        let second = ManualTarget()
        let observer = LoggingObserver("o", log: log)
        #expect(set.add(observer, on: first))
        #expect(!set.add(observer, on: second), "add returns false: the observer was in the set already")
        set.notify { $0.changed(1) }
        second.runAll()
        #expect(log.values.isEmpty, "nothing on the second target")
        first.runAll()
        #expect(log.values == ["o1"], "still on its first target")
        // Moving it: remove, then add with the new target.
        set.remove(observer)
        #expect(set.add(observer, on: second))
        set.notify { $0.changed(2) }
        first.runAll()
        second.runAll()
        #expect(log.values == ["o1", "o2"])
    }

    @Test(.exitTest) func aValueTypeObserverIsRejectedWithAMessageNamingTheRequirement() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct ValueObserver: Sendable {}
            ObserverSet<ValueObserver>().add(ValueObserver())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("ObserverSet.add(_:) observer must be a class instance, got a ValueObserver"))
    }

    @Test func removingAnObserverWithATargetDiscardsItsWaitingMessages() {
        let set = Observers()
        let log = Recorder<String>()
        let target = ManualTarget()
        let queued = LoggingObserver("queued", log: log)
        set.add(queued, on: target)
        set.notify { $0.changed(1) }
        set.notify { $0.changed(2) }
        set.remove(queued)
        target.runAll()
        #expect(log.values.isEmpty)
        #expect(set.notify { $0.changed(3) } == 0)
    }

    @Test func aTargetDoesNotKeepItsObserverAlive() {
        let set = Observers()
        let log = Recorder<String>()
        let target = ManualTarget()
        let counter = LifetimeCounter()
        do {
            let queued = LoggingObserver("queued", log: log, witness: LifetimeWitness(counter))
            set.add(queued, on: target)
            set.notify { $0.changed(1) }  // waiting on the target
        }
        #expect(counter.deinitialized == 1)
        target.runAll()
        #expect(log.values.isEmpty, "a message for a deallocated observer is skipped")
        #expect(set.count == 0)
    }

    @Test func aDeallocatedObserverWithATargetIsLetGoOnceItsTargetFoundItGone() {
        let set = Observers()
        let log = Recorder<String>()
        let target = ManualTarget()
        do {
            let queued = LoggingObserver("queued", log: log)
            set.add(queued, on: target)
        }
        // Notifications do not load the observer's weak reference: the message is handed to the
        // target, whose task block finds the observer gone and skips it.
        #expect(set.notify { $0.changed(1) } == 1)
        target.runAll()
        #expect(log.values.isEmpty)
        #expect(set.notify { $0.changed(2) } == 0, "the next round knows, and lets the entry go")
        #expect(set.registrations.isEmpty)
        #expect(target.runAll() == 0, "nothing more was handed to the target")
    }

    @Test func mainActorObserversAreCalledOnTheMainActor() async {
        let set = Observers()
        let log = Recorder<String>()
        let observer = LoggingObserver("main", log: log) { _, _ in
            MainActor.preconditionIsolated("an observer added on .mainActor runs on the main actor")
        }
        set.add(observer, on: .mainActor)
        for value in 1...3 { set.notify { $0.changed(value) } }
        // The main queue runs the drains in order; this hop runs after them.
        await MainActor.run {}
        #expect(log.values == ["main1", "main2", "main3"])
    }
}

extension ObserverSetTests {
    @Test func finishDeliversWhatTargetsHoldThenCompletesAndEndsTheSet() {
        let set = Observers()
        let log = Recorder<String>()
        let target = ManualTarget()
        let queued = LoggingObserver("q", log: log)
        let direct = LoggingObserver("d", log: log)
        set.add(queued, on: target)
        set.add(direct)
        set.notify { $0.changed(1) }
        set.notify { $0.changed(2) }
        let completed = Recorder<Bool>()
        set.finish { completed.append(true) }
        #expect(completed.values.isEmpty, "two messages still wait on the target")
        #expect(set.notify { $0.changed(3) } == 0, "a finished set reaches no one")
        #expect(!set.add(LoggingObserver("late", log: log)), "nor takes new observers")
        #expect(set.count == 0)
        target.runAll()
        #expect(log.values == ["d1", "d2", "q1", "q2"], "what was handed to the target is delivered")
        #expect(completed.values == [true])
        let again = Recorder<Bool>()
        set.finish { again.append(true) }
        #expect(again.values == [true], "finishing again completes once the same deliveries are done")
    }

    @Test func finishWithNothingWaitingCompletesAtOnce() {
        let set = Observers()
        let log = Recorder<String>()
        let direct = LoggingObserver("d", log: log)
        set.add(direct)
        let completed = Recorder<Bool>()
        set.finish { completed.append(true) }
        #expect(completed.values == [true])
        #expect(set.notify { $0.changed(1) } == 0)
        #expect(log.values.isEmpty)
    }

    @Test func finishAndWaitReturnsOnceQueuedMessagesRan() async {
        let set = Observers()
        let log = Recorder<String>()
        let queue = DispatchQueue(label: "observers.finish")
        let observer = LoggingObserver("q", log: log)
        set.add(observer, on: queue)
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // holds the queue while the messages are sent
        for value in 1...100 { set.notify { $0.changed(value) } }
        gate.signal()
        await set.finishAndWait()
        #expect(log.values == (1...100).map { "q\($0)" })
        withExtendedLifetime(observer) {}
    }
}
