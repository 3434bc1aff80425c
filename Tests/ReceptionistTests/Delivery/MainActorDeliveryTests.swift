import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// An observer protocol of the kind apps write: class-bound, `Sendable`, nonisolated.
protocol ProgressObserver: AnyObject, Sendable {
    func progressDidChange(_ progress: Int)
}

/// A main-actor view that observes progress. Swift cannot form a main-actor-isolated conformance
/// to a `Sendable` protocol; `@preconcurrency` makes the conformance checked at run time instead
/// (a call off the main actor stops the program), which `add(_:on: .mainActor)` never makes.
@MainActor
final class ProgressLabel: @preconcurrency ProgressObserver {
    private(set) var shown: [Int] = []

    func progressDidChange(_ progress: Int) {
        dispatchPrecondition(condition: .onQueue(.main))
        shown.append(progress)
    }
}

/// The main actor as a target, whichever way it is named.
@Suite struct MainActorDeliveryTests {
    private actor Store {}

    @Test func mainActorSharedTakesTheMainQueuePathAndOtherActorsTheirOwn() {
        let onMainActor = Delivery<Int>.actor(MainActor.shared) { _, _ in }
        #expect((onMainActor.target as? DispatchQueue)?.label == DispatchQueue.main.label)
        #expect(!(onMainActor.target is ActorTarget<MainActor>))
        let onStore = Delivery<Int>.actor(Store()) { _, _ in }
        #expect(onStore.target is ActorTarget<Store>)
    }

    @Test func aReceptionistOnMainActorSharedDeliversInOrderOnTheMainQueue() async {
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: MainActor.shared) { _, value in
            MainActor.preconditionIsolated("a task block on MainActor.shared runs on the main actor")
            dispatchPrecondition(condition: .onQueue(.main))
            seen.append(value)
        }
        // Two threads of their own send, each its own increasing sequence.
        let done = DispatchGroup()
        for sender in 0..<2 {
            done.enter()
            Thread {
                for value in 0..<2_000 { receptionist.send(sender * 10_000 + value) }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 120) == .success)
        await receptionist.finishAndWait()
        let values = seen.values
        #expect(values.count == 4_000)
        for sender in 0..<2 {
            let own = values.filter { $0 / 10_000 == sender }
            #expect(own == (0..<2_000).map { sender * 10_000 + $0 }, "sender \(sender)'s order")
        }
        #expect(receptionist.statistics.delivered == 4_000)
    }

    @Test func aMainActorObserverInAnObserverSetIsCalledOnTheMainActorInOrder() async {
        let label = await MainActor.run { ProgressLabel() }
        let observers = ObserverSet<any ProgressObserver>()
        observers.add(label, on: .mainActor)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                for progress in 1...100 { observers.notify { $0.progressDidChange(progress) } }
                continuation.resume()
            }.start()
        }
        await observers.finishAndWait()
        #expect(await label.shown == Array(1...100))
        withExtendedLifetime(label) {}
    }
}
