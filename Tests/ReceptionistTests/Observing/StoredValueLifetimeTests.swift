import Dispatch
import Testing

@testable import Receptionist

/// Every value a model stores is released exactly once, whatever observed it, however it was
/// written and however the observation ended: a value is made by a ``ValueLedger`` that counts
/// what it made and what was released, and once everything settled the two counts are equal and
/// the model is gone.
///
/// The matrix: the source (an `@Observed` property, an `ObservableValue`) × what observes it
/// (nothing, a lossless observation, `coalesce()`, stages, a snapshot of two properties, an
/// observation of the *other* property only) × how it ends (cancelled, finished, token released,
/// model released first) × how it is written (`set`, `update { }`, `$x.update { }`) × the target
/// (`.immediate`, a serial queue).
@Suite struct StoredValueLifetimeTests {
    @Test(arguments: StoredObserving.allCases, StoredEnding.allCases)
    func everyStoredValueIsReleasedOnceTheModelGoes(observing: StoredObserving, ending: StoredEnding) async {
        for source in StoredSource.allCases {
            for writing in StoredWriting.allCases {
                for target in StoredTarget.allCases {
                    await check(source, observing, ending, writing, target)
                }
            }
        }
    }

    private func check(
        _ source: StoredSource, _ observing: StoredObserving, _ ending: StoredEnding, _ writing: StoredWriting,
        _ target: StoredTarget
    ) async {
        let context = "\(source), \(observing), \(ending), \(writing), \(target)"
        // A box has one property: "the other property" and snapshots are model shapes.
        if source == .box, observing == .otherProperty || observing == .snapshot { return }
        let ledger = ValueLedger()
        let queue = DispatchQueue(label: "stored-value-lifetime")
        let deliveryTarget: any DeliveryTarget = target == .immediate ? ImmediateTarget() : queue
        weak var weakModel: AnyObject?
        var token: ObservationToken?
        do {
            var model: ValueModel?
            var box: ObservableValue<StoredValue>?
            switch source {
            case .model:
                model = ValueModel(ledger)
                weakModel = model
                token = observing.observe(model!, on: deliveryTarget)
            case .box:
                box = ObservableValue(ledger.make())
                weakModel = box
                token = observing.observe(box!, on: deliveryTarget)
            }
            for _ in 0..<3 {
                if let model { writing.write(ledger.make(), to: model) }
                if let box { writing.write(ledger.make(), to: box) }
            }
            switch ending {
            case .cancelled: token?.cancel()
            case .finished: token?.finish()
            case .tokenReleased: token = nil
            case .modelReleasedFirst: break
            }
        }
        // The test holds no reference to the model any more; with a queue, delivery may go on.
        // The model holds two values, so all are released only once it is gone. The default
        // bound: 2 s was a timing assumption that a loaded machine can miss.
        let settled = await waitUntilAsync { ledger.released == ledger.made }
        #expect(settled, "\(context): \(ledger.made) values made, \(ledger.released) released")
        #expect(weakModel == nil, "\(context): the model is deallocated")
        token = nil
        drainQueue(queue)
        #expect(ledger.released == ledger.made, "\(context): released exactly once, no more")
    }
}

/// Counts the values it made and how many of them were released.
final class ValueLedger: Sendable {
    private let madeCount = AtomicValue<Int>(0)
    private let releasedCount = AtomicValue<Int>(0)

    var made: Int { madeCount.load(ordering: .acquiring) }
    var released: Int { releasedCount.load(ordering: .acquiring) }

    func make() -> StoredValue {
        madeCount.add(1, ordering: .releasing)
        return StoredValue(self)
    }

    fileprivate func noteReleased() {
        releasedCount.add(1, ordering: .releasing)
    }
}

/// A stored value whose release its ledger counts.
final class StoredValue: Sendable {
    let ledger: ValueLedger

    fileprivate init(_ ledger: ValueLedger) {
        self.ledger = ledger
    }

    deinit { ledger.noteReleased() }
}

/// A model with two properties holding counted values.
final class ValueModel: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var first: StoredValue
    @Observed var second: StoredValue

    init(_ ledger: ValueLedger) {
        _first = Observed(wrappedValue: ledger.make())
        _second = Observed(wrappedValue: ledger.make())
    }
}

enum StoredSource: CaseIterable, Sendable {
    case model
    case box
}

enum StoredObserving: CaseIterable, Sendable {
    case nothing
    case lossless
    case coalesced
    case staged
    case snapshot
    /// An observation of `second` only, while the test writes `first`.
    case otherProperty

    func observe(_ model: ValueModel, on target: any DeliveryTarget) -> ObservationToken? {
        switch self {
        case .nothing: return nil
        case .lossless: return model.receptionist(for: \.first).deliver(on: target) { _ in }
        case .coalesced: return model.receptionist(for: \.first).coalesce().deliver(on: target) { _ in }
        case .staged:
            return model.receptionist(for: \.first).map { $0.newValue }.batch(count: 2).deliver(on: target) { _ in }
        case .snapshot: return model.receptionist(for: \.first, \.second).deliver(on: target) { _ in }
        case .otherProperty: return model.receptionist(for: \.second).deliver(on: target) { _ in }
        }
    }

    func observe(_ box: ObservableValue<StoredValue>, on target: any DeliveryTarget) -> ObservationToken? {
        switch self {
        case .nothing, .snapshot, .otherProperty: return nil
        case .lossless: return box.receptionist().deliver(on: target) { _ in }
        case .coalesced: return box.receptionist().coalesce().deliver(on: target) { _ in }
        case .staged: return box.receptionist().map { $0.newValue }.batch(count: 2).deliver(on: target) { _ in }
        }
    }
}

enum StoredEnding: CaseIterable, Sendable {
    case cancelled
    case finished
    case tokenReleased
    /// The token is kept until after the model is gone.
    case modelReleasedFirst
}

enum StoredWriting: CaseIterable, Sendable {
    case set
    case update
    case projectedUpdate

    func write(_ value: StoredValue, to model: ValueModel) {
        switch self {
        case .set: model.first = value
        case .update: model.update { $0.first = value }
        case .projectedUpdate: model.$first.update { $0 = value }
        }
    }

    func write(_ value: StoredValue, to box: ObservableValue<StoredValue>) {
        switch self {
        case .set: box.value = value
        case .update, .projectedUpdate: box.update { $0 = value }
        }
    }
}

enum StoredTarget: CaseIterable, Sendable {
    case immediate
    case serialQueue
}
