import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// The keys by which a waiting receptionist recognises its target queue (`WaitingContext.swift`,
/// rows 2 and 3; issue 27, item 6b): one per live queue, released with the queue.
@Suite struct WaitingContextTests {
    /// 10 000 short-lived queues, each the target of a waiting receptionist that delivers one
    /// event and is let go: once the queues are gone, so are their keys.
    @Test func theKeysOfDeallocatedQueuesDoNotAccumulate() {
        let queues = 10_000
        let before = DispatchQueue.queuesHoldingContextKeys
        let delivered = AtomicValue<Int>(0)
        for index in 0..<queues {
            let queue = DispatchQueue(label: "WaitingContextTests.shortLived")
            let receptionist = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 1)) { _ in
                delivered.add(1, ordering: .relaxed)
            }
            receptionist.send(index)
            receptionist.finish()
        }
        #expect(waitUntil { delivered.load(ordering: .relaxed) == queues })
        // Tests running meanwhile may hold queues of their own: a margin far below one key per
        // queue prepared here.
        let margin = 500
        let bounded = waitUntil(seconds: 60) { DispatchQueue.queuesHoldingContextKeys <= before + margin }
        #expect(
            bounded,
            "\(DispatchQueue.queuesHoldingContextKeys - before) more keys held after \(queues) queues came and went")
    }

    /// The same, per queue: a queue keeps one key however many waiting receptionists target it,
    /// keeps it while it lives, and lets go of it once deallocated.
    @Test func aQueueHoldsOneKeyForAsLongAsItLives() {
        var keys: [WeakObject] = []
        var kept: [DispatchQueue] = []
        for index in 0..<200 {
            let queue = DispatchQueue(label: "WaitingContextTests.queue.\(index)")
            #expect(queue.preparedContextKey == nil, "not prepared before a waiting receptionist targets it")
            let first = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 1)) { _ in }
            let key = queue.preparedContextKey
            let second = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 1)) { _ in }
            #expect(key != nil && queue.preparedContextKey === key, "one key per queue")
            keys.append(WeakObject(object: key))
            first.cancel()
            second.cancel()
            if index.isMultiple(of: 2) { kept.append(queue) }
        }
        let released = waitUntil(seconds: 60) {
            keys.enumerated().allSatisfy { index, key in (key.object == nil) == !index.isMultiple(of: 2) }
        }
        #expect(released, "the keys of the deallocated queues are released, those of the live ones kept")
        withExtendedLifetime(kept) {}
    }

    /// After many queues came and went, a new queue hierarchy is recognised exactly: a send from a
    /// queue that targets the target is refused, one from an unrelated prepared queue waits for
    /// room and is sent.
    @Test func queuesAreRecognisedExactlyAfterManyCameAndWent() {
        for _ in 0..<2_000 {
            let queue = DispatchQueue(label: "WaitingContextTests.churn")
            _ = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 1)) { _ in }
        }
        let outer = DispatchQueue(label: "WaitingContextTests.outer")
        let inner = DispatchQueue(label: "WaitingContextTests.inner", target: outer)
        let unrelated = DispatchQueue(label: "WaitingContextTests.unrelated")
        let onOuter = Receptionist<Int>(on: outer, buffering: .waiting(capacity: 1)) { _ in }
        let onUnrelated = Receptionist<Int>(on: unrelated, buffering: .waiting(capacity: 1)) { _ in }
        let fromInner = finishesWithoutDeadlock { inner.sync { [onOuter.send(0), onOuter.send(1)] } }
        #expect(
            fromInner == [.accepted, .refused(.waitingWouldDeadlock)],
            "inner runs on outer: the second send would wait for outer")
        let fromUnrelated = finishesWithoutDeadlock { unrelated.sync { (0..<3).map { onOuter.send(2 + $0) } } }
        #expect(fromUnrelated == [.accepted, .accepted, .accepted], "another queue waits for outer's drains")
        onOuter.finish()
        onUnrelated.finish()
        #expect(waitUntil { onOuter.isFinished && onUnrelated.isFinished })
        #expect(onOuter.statistics.delivered == 4)
    }
}

/// A weak reference, to see an object go.
private struct WeakObject {
    weak var object: AnyObject?
}
