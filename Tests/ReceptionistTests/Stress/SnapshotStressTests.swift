import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Two accounts whose total is always 100: money only moves in transactions.
final class Accounts: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var checking = 100
    @Observed var savings = 0
}

/// Two gauges written by different threads, observed together.
final class Gauges: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed or a Sendable let.
    @Observed var left = -1
    @Observed var right = -1
    let lifetime: LifetimeWitness?

    init(lifetime: LifetimeWitness? = nil) {
        self.lifetime = lifetime
    }
}

extension Stress {
    /// Snapshots and transactions under load: 4 writer threads × 100 000 writes each (scaled by
    /// `RECEPTIONIST_STRESS_SCALE`), on every kind of target, lossless and coalesced.
    @Suite(.serialized, .tags(.stress))
    struct SnapshotStressTests {
        static let writers = 4
        typealias TargetKind = StressTests.TargetKind

        /// What a snapshot observation saw: the chain, and anything wrong with it.
        struct Seen {
            var last: (Int, Int)?
            var chainBreaks = 0
            var invariantBreaks = 0
            var deliveries = 0
            var changes = 0
        }

        @Test(arguments: TargetKind.allCases, [false, true])
        func transactionsKeepTheInvariantInEverySnapshot(kind: TargetKind, coalesced: Bool) {
            let perWriter = eventsPerThread(10_000)
            let accounts = Accounts()
            let seen = Locked(uncounted: Seen())
            let record: @Sendable (ObservedChange<Accounts, (Int, Int)>) -> Void = { change in
                seen.withLock { seen in
                    let new = change.newValue
                    if let old = change.oldValue, let last = seen.last, old != last { seen.chainBreaks += 1 }
                    if new.0 + new.1 != 100 { seen.invariantBreaks += 1 }
                    seen.last = new
                    seen.deliveries += 1
                    seen.changes += change.coalescedCount
                }
            }
            let snapshot = accounts.receptionist(for: \.checking, \.savings, options: [.initial, .old])
            let token =
                coalesced
                ? snapshot.coalesce().deliver(on: kind.make(), record) : snapshot.deliver(on: kind.make(), record)
            onThreads(Self.writers) { writer in
                var random = SplitMix64(seed: UInt64(writer))
                for _ in 0..<perWriter {
                    let amount = Int.random(in: -10...10, using: &random)
                    accounts.update { accounts in
                        let moved = max(-accounts.savings, min(accounts.checking, amount))
                        accounts.checking -= moved
                        accounts.savings += moved
                    }
                }
            }
            token.finish()
            #expect(waitUntil { token.isFinished })
            let result = seen.withLock { $0 }
            #expect(result.invariantBreaks == 0, "every snapshot is a state the model had")
            #expect(result.chainBreaks == 0, "each old snapshot is the previous new one")
            #expect(result.last.map { $0 == (accounts.checking, accounts.savings) } == true, "ends on the final state")
            #expect(result.changes == Self.writers * perWriter + 1, "every transaction, plus the initial snapshot")
            if !coalesced { #expect(result.deliveries == result.changes) }
            #expect(accounts.checking + accounts.savings == 100)
        }

        @Test(arguments: TargetKind.allCases)
        func everyWriteOfEitherPropertyIsOneSnapshotInOrder(kind: TargetKind) {
            let perWriter = eventsPerThread(100_000)
            let total = Self.writers * perWriter
            let lifetimes = LifetimeCounter()
            var model: Gauges? = Gauges(lifetime: LifetimeWitness(lifetimes))
            struct Chain {
                var last: (Int, Int)?
                var breaks = 0
                var count = 0
            }
            let chain = Locked(uncounted: Chain())
            let checker = OrderChecker()
            let done = DispatchSemaphore(value: 0)
            let observation = model!.receptionist(for: \.left, \.right).deliver(on: kind.make()) { change in
                let (left, right) = change.newValue
                let old = change.oldValue!
                // Writers 0 and 1 write `left`, 2 and 3 write `right`, each a unique stamp: exactly
                // one of the two changed.
                checker.record(old.0 != left ? left : right)
                let count = chain.withLock { chain in
                    if let last = chain.last, last != old { chain.breaks += 1 }
                    chain.last = (left, right)
                    chain.count += 1
                    return chain.count
                }
                if count == total { done.signal() }
            }
            let writer = model!
            onThreads(Self.writers) { producer in
                for sequence in 0..<perWriter {
                    if producer < 2 {
                        writer.left = stamp(producer, sequence)
                    } else {
                        writer.right = stamp(producer, sequence)
                    }
                }
            }
            #expect(wait(done))
            let final = chain.withLock { $0 }
            #expect(final.count == total)
            #expect(final.breaks == 0, "each old snapshot is the previous new one")
            #expect(final.last.map { $0 == (writer.left, writer.right) } == true)
            #expect(checker.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            model = nil
            _ = consume writer
            // The observation finishes from `ObservableModel`'s deinit, a moment before the subclass's
            // stored properties (the witness) are destroyed: wait for both.
            #expect(
                waitUntil { observation.isFinished && lifetimes.deinitialized == 1 },
                "the model was deallocated and the observation ended")
        }
    }
}
