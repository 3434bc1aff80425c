import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// A callback source of the kind a user would write: it hands its readings to whoever listens.
private final class Sensor: Sendable {
    private let listener = Locked<(@Sendable (Int) -> Void)?>(uncounted: nil)

    func listen(_ body: @escaping @Sendable (Int) -> Void) { listener.withLock { $0 = body } }

    func emit(_ reading: Int) {
        let body = listener.withLock { $0 }
        body?(reading)
    }
}

/// The user's source, as `PipelineSource`'s documentation shows it.
private struct Readings: PipelineSource {
    let sensor: Sensor

    func start<Output>(_ plan: PipelinePlan<Int, Output>) -> Receptionist<Int> {
        let receptionist = plan.start()
        sensor.listen { [weak receptionist] in receptionist?.send($0) }
        return receptionist
    }
}

/// Every source starts its pipeline through `PipelineSource.start(_:)`, so every pipeline has the
/// same `deliver` and the same stages, whatever its source.
@Suite struct PipelineSourceTests {
    @Test func aSourceOfYourOwnFeedsStagesAndDelivery() {
        let sensor = Sensor()
        let batches = Recorder<[Int]>()
        let receptionist = Pipeline(source: Readings(sensor: sensor))
            .filter { $0 % 2 == 0 }
            .batch(count: 3)
            .deliver(on: .immediate) { batches.append($0) }
        for reading in 0..<14 { sensor.emit(reading) }
        receptionist.finish()
        #expect(batches.values == [[0, 2, 4], [6, 8, 10], [12]])
        #expect(receptionist.isFinished)
    }

    @Test func aSourceOfYourOwnWithoutStagesDeliversDirectly() {
        let sensor = Sensor()
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Pipeline(source: Readings(sensor: sensor)).deliver(on: target) { seen.append($0) }
        for reading in 0..<5 { sensor.emit(reading) }
        #expect(target.pendingCount == 1, "one hop for the burst")
        target.runAll()
        #expect(seen.values == [0, 1, 2, 3, 4])
        #expect(receptionist.statistics.delivered == 5)
    }

    @Test func everySourceHasTheSameDeliverForEachKindOfTarget() {
        let box = ObservableValue(0)
        let observed: ObservationToken = box.receptionist().deliver(on: .immediate) { _ in }
        let sent: Receptionist<Int> = Receptionist.pipeline(of: Int.self).deliver(on: .immediate) { _ in }
        let coalesced: ObservationToken = box.receptionist().coalesce().deliver(on: DispatchQueue.main) { _ in }
        let batched: Receptionist<Int> = Receptionist.pipeline(of: Int.self).batch(count: 2)
            .deliver(on: .mainActor) { (batch: [Int]) in _ = batch }
        let handles: [any DeliveryHandle] = [observed, sent, coalesced, batched]
        for handle in handles { handle.cancel() }
        #expect(handles.allSatisfy { $0.isCancelled })
    }
}
