import Testing

@testable import Receptionist

/// `AnyDeliveryHandle` does what the handle it wraps does, as Combine's `AnyCancellable` does.
@Suite struct AnyDeliveryHandleTests {
    @Test func cancelThroughTheWrapperStopsDeliveryAndDiscardsWhatIsPending() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target) { seen.append($0) }
        let handle = AnyDeliveryHandle(receptionist)
        receptionist.send(1)
        receptionist.send(2)
        handle.cancel()
        target.runAll()
        #expect(seen.values.isEmpty)
        #expect(handle.isCancelled && !handle.isFinished)
        #expect(handle.statistics.discarded == 2)
    }

    @Test func finishThroughTheWrapperDeliversEverythingThenCompletes() async {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target) { seen.append($0) }
        let handle = AnyDeliveryHandle(receptionist)
        for value in 1...3 { receptionist.send(value) }
        let completed = AtomicValue<Bool>(false)
        handle.finish { completed.store(true, ordering: .releasing) }
        let completedEarly = completed.load(ordering: .acquiring)
        #expect(!completedEarly)
        target.runAll()
        let completedAfterDelivery = completed.load(ordering: .acquiring)
        #expect(completedAfterDelivery)
        #expect(seen.values == [1, 2, 3])
        #expect(handle.isFinished && !handle.isCancelled && handle.statistics.delivered == 3)
        await handle.finishAndWait()  // already ended: returns at once
    }
}
