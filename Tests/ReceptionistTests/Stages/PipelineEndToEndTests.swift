import Testing

@testable import Receptionist

@Suite struct PipelineEndToEndTests {
    @Test func batchesSentEventsOnAManualClock() {
        let clock = ManualScheduler()
        let recorder = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .filter { $0 != 0 }
            .batch(count: 3, every: .milliseconds(10), scheduler: clock)
            .deliver(on: .immediate) { recorder.append($0) }
        for value in [1, 2, 0, 3, 4] { receptionist.send(value) }
        #expect(recorder.values == [[1, 2, 3]])
        clock.advance(by: .milliseconds(9))
        #expect(recorder.values == [[1, 2, 3]])
        clock.advance(by: .milliseconds(1))
        #expect(recorder.values == [[1, 2, 3], [4]])
        receptionist.send(5)
        receptionist.finish()
        #expect(recorder.values == [[1, 2, 3], [4], [5]])
        #expect(receptionist.isFinished)
    }

    @Test func coalescesObservedChangesKeepingTheChain() {
        let box = ObservableValue(0)
        let target = ManualTarget()
        let recorder = Recorder<ObservedChange<ObservableValue<Int>, Int>>()
        let token = box.receptionist().coalesce().deliver(on: target) { recorder.append($0) }
        for value in 1...5 { box.value = value }
        _ = target.runAll()
        #expect(recorder.values.map(\.oldValue) == [0])
        #expect(recorder.values.map(\.newValue) == [5])
        #expect(recorder.values.map(\.coalescedCount) == [5])
        #expect(token.statistics.coalesced == 4)
    }

    @Test func removesDuplicateChanges() {
        let box = ObservableValue(0)
        let recorder = Recorder<Int>()
        let token = box.receptionist().removeDuplicates().deliver(on: .immediate) { recorder.append($0.newValue) }
        for value in [0, 1, 1, 2, 2, 2, 1, 3] { box.value = value }
        #expect(recorder.values == [1, 2, 1, 3])
        token.cancel()
    }
}

extension PipelineEndToEndTests {
    @Test func coalesceOnChangesInfersTheChangeOverload() {
        let box = ObservableValue("a")
        let recorder = Recorder<String>()
        let token = box.receptionist().coalesce().deliver(on: .immediate) { change in
            recorder.append("\(change.oldValue!)→\(change.newValue)×\(change.coalescedCount)")
        }
        box.value = "b"
        #expect(recorder.values == ["a→b×1"])
        token.cancel()
    }
}

/// `finish()` promises delivery of everything pending; releasing the token or the receptionist
/// right after must not turn it into a cancel.
extension PipelineEndToEndTests {
    @Test func releasingAFinishingTokenStillDeliversThePartialBatch() {
        let box = ObservableValue(0)
        let target = ManualTarget()
        let recorder = Recorder<[Int]>()
        var token: ObservationToken? = box.receptionist().map { $0.newValue }.batch(count: 10)
            .deliver(on: target) { recorder.append($0) }
        box.value = 1
        box.value = 2
        token?.finish()
        token = nil
        target.runAll()
        #expect(recorder.values == [[1, 2]])
        box.value = 3
        target.runAll()
        #expect(recorder.values == [[1, 2]], "nothing after finish")
    }

    @Test func releasingAFinishingReceptionistStillDeliversWhatItAccepted() {
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        var plain: Receptionist<Int>? = Receptionist(on: target) { recorder.append($0) }
        var staged: Receptionist<Int>? = Receptionist.pipeline(of: Int.self).filter { $0 > 0 }
            .deliver(on: target) { recorder.append($0 * 10) }
        plain?.send(1)
        staged?.send(2)
        plain?.finish()
        staged?.finish()
        plain = nil
        staged = nil
        target.runAll()
        #expect(recorder.values == [1, 20])
    }

    @Test func releasingAnActiveTokenStillCancels() {
        let box = ObservableValue(0)
        let target = ManualTarget()
        let recorder = Recorder<[Int]>()
        var token: ObservationToken? = box.receptionist().map { $0.newValue }.batch(count: 1)
            .deliver(on: target) { recorder.append($0) }
        box.value = 1
        token = nil
        target.runAll()
        #expect(recorder.values.isEmpty)
        _ = token
    }
}

extension PipelineEndToEndTests {
    /// Without a type annotation, coalescing observed changes picks the change overload (old of
    /// the first, new of the last), not the generic `Coalesced` one.
    @Test func coalesceOfObservedChangesNeedsNoTypeAnnotation() {
        let box = ObservableValue(0)
        let pipeline = box.receptionist().coalesce()
        typealias Change = ObservedChange<ObservableValue<Int>, Int>
        #expect(type(of: pipeline) == Pipeline<ObservedProperty<ObservableValue<Int>, Int>, Change>.self)
    }
}
