import Testing

@testable import Receptionist

/// `coalesce()` for observed changes and for any output (`Coalesced`). A `ManualTarget` holds
/// deliveries back, as a slow consumer would.
@Suite struct CoalesceStageTests {
    typealias Change = ObservedChange<ObservableValue<String>, String>

    // MARK: ObservedChange

    @Test func changesMadeWhileOneWaitsAreFoldedIntoIt() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<String>()
        let token = box.receptionist().coalesce().deliver(on: target) { recorder.append(Marbles.chain($0)) }
        for value in ["b", "c", "d"] { box.value = value }
        #expect(target.pendingCount == 1)
        #expect(token.statistics.pending == 1)
        target.runAll()
        #expect(recorder.values == ["a→d×3"])
        let statistics = token.statistics
        #expect(statistics.received == 3)
        #expect(statistics.coalesced == 2)
        #expect(statistics.delivered == 1)
        #expect(statistics.pending == 0)
    }

    @Test func foldingRespectsTheOptions() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let newOnly = Recorder<String>()
        let withOld = Recorder<String>()
        let first = box.receptionist(options: []).coalesce().deliver(on: target) { change in
            newOnly.append("\(change.oldValue ?? "nil")→\(change.newValue)×\(change.coalescedCount)")
        }
        let second = box.receptionist(options: .old).coalesce().deliver(on: target) { change in
            withOld.append("\(change.oldValue ?? "nil")→\(change.newValue)×\(change.coalescedCount)")
        }
        for value in ["b", "c", "d"] { box.value = value }
        target.runAll()
        #expect(newOnly.values == ["nil→d×3"])
        #expect(withOld.values == ["a→d×3"])
        _ = (first, second)
    }

    @Test func valuesFoldedAwayAreReleasedAndTheDeliveredOnesOnceRun() {
        let counter = LifetimeCounter()
        let box = ObservableValue(LifetimeWitness(counter))
        let target = ManualTarget()
        let token = box.receptionist().coalesce().deliver(on: target) { _ in }
        for _ in 0..<10 { box.value = LifetimeWitness(counter) }
        // The box holds the 10th, the waiting change the 0th (old) and the 10th (new): the 1st to
        // the 9th were folded away and must be gone.
        #expect(counter.deinitialized == 9)
        target.runAll()
        #expect(counter.deinitialized == 10, "the delivered change let go of the initial value")
        #expect(token.statistics.coalesced == 9)
    }

    @Test func deliveredChangesFormAChainEndingAtTheFinalValue() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<Change>()
        let token = box.receptionist().coalesce().deliver(on: target) { recorder.append($0) }
        for burst in [["b", "c"], ["d"], ["e", "f", "g"]] {
            for value in burst { box.value = value }
            target.runAll()
        }
        let changes = recorder.values
        #expect(changes.map(Marbles.chain) == ["a→c×2", "c→d", "d→g×3"])
        for (previous, next) in zip(changes, changes.dropFirst()) {
            #expect(next.oldValue == previous.newValue)
        }
        #expect(changes.last?.newValue == box.value)
        #expect(changes.map(\.coalescedCount).reduce(0, +) == token.statistics.received)
    }

    @Test func changesMadeWhileTheTaskBlockRunsAreFoldedIntoTheNextDelivery() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<String>()
        let token = box.receptionist().coalesce().deliver(on: target) { change in
            recorder.append(Marbles.chain(change))
            if change.newValue == "b" {
                // The consumer is busy: these wait as one change.
                box.value = "x"
                box.value = "y"
                box.value = "z"
            }
        }
        box.value = "b"
        // Two work items: a coalescing drain delivers one change per turn on its target and
        // submits the next turn for what came meanwhile, as a hand-written coalescer hops.
        #expect(target.runAll() == 2)
        #expect(recorder.values == ["a→b", "b→z×3"])
        #expect(token.statistics.coalesced == 2)
    }

    @Test func aFirstChangeEqualToTheOldValueIsKeptAndFolded() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<String>()
        let token = box.receptionist().coalesce().deliver(on: target) { recorder.append(Marbles.chain($0)) }
        box.value = "a"
        box.value = "b"
        box.value = "a"
        target.runAll()
        // Coalescing does not compare values: a→a stands for three changes.
        #expect(recorder.values == ["a→a×3"])
        withExtendedLifetime(token) {}
    }

    @Test func removeDuplicatesBeforeCoalesceDropsWhatLeavesTheValue() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<String>()
        let token = box.receptionist().removeDuplicates().coalesce().deliver(on: target) {
            recorder.append(Marbles.chain($0))
        }
        for value in ["a", "a", "b", "b", "c"] { box.value = value }
        target.runAll()
        #expect(recorder.values == ["a→c×2"])
        #expect(token.statistics.received == 2)
    }

    @Test func theInitialChangeKeepsItsFlagWhenFolded() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<Change>()
        let token = box.receptionist(options: [.initial, .old]).coalesce().deliver(on: target) {
            recorder.append($0)
        }
        box.value = "b"
        target.runAll()
        #expect(recorder.values.map(Marbles.chain) == ["?→b×2"])
        #expect(recorder.values.map(\.isInitial) == [true])
        withExtendedLifetime(token) {}
    }

    @Test func finishDeliversTheWaitingChangeThenFinishes() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<String>()
        let token = box.receptionist().coalesce().deliver(on: target) { recorder.append(Marbles.chain($0)) }
        box.value = "b"
        box.value = "c"
        token.finish()
        box.value = "d"
        #expect(!token.isFinished)
        target.runAll()
        #expect(recorder.values == ["a→c×2"])
        #expect(token.isFinished)
    }

    @Test func cancelDiscardsTheWaitingChange() {
        let box = ObservableValue("a")
        let target = ManualTarget()
        let recorder = Recorder<String>()
        let token = box.receptionist().coalesce().deliver(on: target) { recorder.append(Marbles.chain($0)) }
        box.value = "b"
        box.value = "c"
        token.cancel()
        target.runAll()
        #expect(recorder.values.isEmpty)
        let statistics = token.statistics
        #expect(statistics.received == 2)
        #expect(statistics.coalesced == 1)
        #expect(statistics.discarded == 1)
        #expect(
            statistics.received
                == statistics.delivered + statistics.inFlight + statistics.dropped + statistics.discarded
                + statistics.coalesced + statistics.pending
        )
    }

    // MARK: Coalesced

    @Test func anyOutputIsCoalescedIntoTheLatestWithItsCount() {
        let target = ManualTarget()
        let recorder = Recorder<Coalesced<String>>()
        let receptionist = Receptionist.pipeline(of: String.self).coalesce().deliver(on: target) { recorder.append($0) }
        for value in ["a", "b", "c"] { receptionist.send(value) }
        target.runAll()
        receptionist.send("d")
        target.runAll()
        #expect(recorder.values == [Coalesced(latest: "c", count: 3), Coalesced(latest: "d", count: 1)])
        #expect(receptionist.statistics.coalesced == 2)
        #expect(receptionist.statistics.delivered == 2)
    }

    @Test func coalescedFinishDeliversTheLatest() {
        let target = ManualTarget()
        let recorder = Recorder<Coalesced<String>>()
        let receptionist = Receptionist.pipeline(of: String.self).coalesce().deliver(on: target) { recorder.append($0) }
        receptionist.send("a")
        receptionist.send("b")
        receptionist.finish()
        #expect(!receptionist.send("c").isAccepted)
        target.runAll()
        #expect(recorder.values == [Coalesced(latest: "b", count: 2)])
        #expect(receptionist.isFinished)
    }

    @Test func coalescedCancelDiscardsTheLatest() {
        let target = ManualTarget()
        let recorder = Recorder<Coalesced<String>>()
        let receptionist = Receptionist.pipeline(of: String.self).coalesce().deliver(on: target) { recorder.append($0) }
        receptionist.send("a")
        receptionist.send("b")
        receptionist.cancel()
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(receptionist.statistics.discarded == 1)
    }

    @Test func batchesAreCoalescedLikeAnyOutput() {
        let target = ManualTarget()
        let recorder = Recorder<Coalesced<[String]>>()
        let receptionist = Receptionist.pipeline(of: String.self)
            .batch(count: 2)
            .coalesce()
            .deliver(on: target) { recorder.append($0) }
        for value in ["a", "b", "c", "d", "e", "f", "g"] { receptionist.send(value) }
        target.runAll()
        #expect(recorder.values == [Coalesced(latest: ["e", "f"], count: 3)])
        receptionist.finish()
        target.runAll()
        #expect(recorder.values.last == Coalesced(latest: ["g"], count: 1))
        #expect(receptionist.isFinished)
    }

    // MARK: timelines

    /// A consumer that takes the waiting output every `period` ticks (from tick 0, before the
    /// tick's inputs): deliveries wait on a `ManualTarget` that the run's clock drains.
    private func slowConsumer(
        every period: Int,
        on clock: ManualScheduler,
        tick: Duration = .milliseconds(1)
    ) -> ManualTarget {
        let target = ManualTarget()
        @Sendable func take(at instant: SchedulerInstant) {
            clock.submit(at: instant) {
                target.runAll()
                take(at: instant + tick * period)
            }
        }
        take(at: .zero)
        return target
    }

    @Test func aSlowConsumerGetsTheLatestWithItsCount() {
        let run = Marbles().run("abcdefg---") { clock, out in
            .receptionist(
                Receptionist.pipeline(of: String.self)
                    .coalesce()
                    .deliver(on: slowConsumer(every: 3, on: clock), out)
            )
        }
        #expect(run == "---'c×3'--'f×3'--g")
        #expect(run.statistics.coalesced == 4)
        #expect(run.statistics.delivered == 3)
    }

    @Test func aSlowConsumerOfChangesGetsOldOfFirstAndNewOfLatest() {
        let run = Marbles().run("bcd-e-fg-", render: Marbles.chain) { clock, out in
            let model = TimelineModel()
            let token = model.receptionist(for: \.text).coalesce().deliver(on: slowConsumer(every: 4, on: clock), out)
            return .observation(of: model, token: token) { $0.text = $1 }
        }
        // The consumer takes at 4 and 8, before the writes of those ticks.
        #expect(run == "----'0→d×3'---'d→g×3'")
    }

    @Test func aConsumerThatKeepsUpCoalescesNothing() {
        let run = Marbles().run("abc-d") { _, out in
            .receptionist(Receptionist.pipeline(of: String.self).coalesce().deliver(on: .immediate, out))
        }
        #expect(run == "abc-d")
        #expect(run.statistics.coalesced == 0)
    }

    @Test func throttleThenCoalesceKeepsTheLatestThrottledOutput() {
        let run = Marbles().run("abcdefghijklm-----") { clock, out in
            .receptionist(
                Receptionist.pipeline(of: String.self)
                    .throttle(for: .milliseconds(2), scheduler: clock, latest: true)
                    .coalesce()
                    .deliver(on: slowConsumer(every: 5, on: clock), out)
            )
        }
        // Throttled: a 0, b 2, d 4, f 6, h 8, j 10, l 12, m 14. The consumer takes at 0 (before
        // a), 5, 10 (before j, at the same instant: the consumer's work was submitted first),
        // 15.
        #expect(run == "-----'d×3'----'h×2'----'m×3'")
    }

    /// With no other stage, `coalesce()` on sent events keeps constant memory however many
    /// threads send: no intake in front of the coalescing buffer (found in review: one queued
    /// what four threads sent faster than one of them wrapped it, hundreds of MB). Counted by the
    /// payloads alive at any time, which stays at a few per thread.
    @Test func sentEventsCoalesceInConstantMemoryAcrossThreads() {
        final class Census: Sendable {
            let live = AtomicValue<Int>(0)
            let peak = AtomicValue<Int>(0)
        }
        final class Payload: Sendable {
            let census: Census
            init(_ census: Census) {
                self.census = census
                census.peak.max(census.live.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
            }
            deinit { census.live.subtract(1, ordering: .relaxed) }
        }
        let census = Census()
        let target = ManualTarget()  // never runs until the producers are done: a stalled consumer
        let delivered = Recorder<Int>()
        let receptionist = Receptionist.pipeline(of: Payload.self).coalesce()
            .deliver(on: target) { coalesced in delivered.append(coalesced.count) }
        let producers = 4
        let perProducer = scaled(50_000)
        onThreads(producers) { _ in
            for _ in 0..<perProducer { receptionist.send(Payload(census)) }
        }
        target.runAll()
        #expect(delivered.values == [producers * perProducer], "one delivery standing for every send")
        // Each thread holds at most the payload it is sending and the one its fold let go of;
        // one more waits in the buffer.
        #expect(census.peak.load(ordering: .relaxed) <= 2 * producers + 1, "payloads alive at once")
        #expect(receptionist.statistics.maxPending == 1)
    }
}
