import Testing

@testable import Receptionist

/// `map(_:)` with a key path: a path of stored properties is read at its offset, any other path
/// through the runtime; both deliver what `$0[keyPath:]` reads, with reference-counted values
/// intact (each value is read out of the output, which is released after the stage).
@Suite struct KeyPathMapTests {
    struct Quote: Sendable, Equatable {
        var symbol: String
        var price: Int
        var venue: Venue
    }

    struct Venue: Sendable, Equatable {
        var flags: UInt8
        var name: String
    }

    final class Box: Sendable {
        let label: String
        init(_ label: String) { self.label = label }
    }

    private static func quotes(_ count: Int) -> [Quote] {
        (0..<count).map { index in
            Quote(
                symbol: "S\(index)-" + String(repeating: "x", count: index % 40), price: index,
                venue: Venue(flags: UInt8(index % 7), name: "venue \(index)"))
        }
    }

    /// Sends `inputs` into `pipeline` and returns what the task block got, in order.
    private static func run<Value: Sendable>(
        _ inputs: [Quote],
        _ makePipeline: (Pipeline<ReceptionistInput<Quote>, Quote>) -> Pipeline<ReceptionistInput<Quote>, Value>
    ) -> [Value] {
        let recorder = Recorder<Value>()
        let receptionist = makePipeline(Receptionist.pipeline(of: Quote.self)).deliver(on: .immediate) {
            recorder.append($0)
        }
        for input in inputs { #expect(receptionist.send(input) == .accepted) }
        receptionist.finish()
        return recorder.values
    }

    @Test func storedPathsAreReadAtTheirOffset() {
        // The paths the overload reads at an offset: the layout answers an offset for each.
        #expect(MemoryLayout<Quote>.offset(of: \Quote.symbol) != nil)
        #expect(MemoryLayout<Quote>.offset(of: \Quote.venue.name) != nil)
        let inputs = Self.quotes(500)
        #expect(Self.run(inputs) { $0.map(\.symbol) } == inputs.map(\.symbol))
        #expect(Self.run(inputs) { $0.map(\.price) } == inputs.map(\.price))
        #expect(Self.run(inputs) { $0.map(\.venue.flags) } == inputs.map(\.venue.flags))
        #expect(Self.run(inputs) { $0.map(\.venue.name) } == inputs.map(\.venue.name))
        #expect(Self.run(inputs) { $0.map(\.venue) } == inputs.map(\.venue))
        #expect(Self.run(inputs) { $0.map(\.self) } == inputs)
    }

    @Test func otherPathsAreApplied() {
        // A computed property, and a path through a class: no offset, applied as `[keyPath:]`.
        #expect(MemoryLayout<Quote>.offset(of: \Quote.symbol.count) == nil)
        let inputs = Self.quotes(300)
        #expect(Self.run(inputs) { $0.map(\.symbol.count) } == inputs.map(\.symbol.count))
        let boxed = Self.run(inputs) { $0.map { Box($0.symbol) }.map(\.label) }
        #expect(boxed == inputs.map(\.symbol))
    }

    @Test func valuesReadAtAnOffsetOutliveTheirOutputs() {
        // Each read value is a copy: released with its task block, not with the output.
        let counter = LifetimeCounter()
        struct Holder: Sendable {
            var id: Int
            var witness: LifetimeWitness
        }
        let recorder = Recorder<Int>()
        let receptionist = Receptionist.pipeline(of: Holder.self)
            .map(\.witness)
            .deliver(on: .immediate) { witness in
                witness.touch()
                recorder.append(witness.counter.deinitialized)
            }
        for id in 0..<100 { receptionist.send(Holder(id: id, witness: LifetimeWitness(counter))) }
        receptionist.finish()
        #expect(recorder.count == 100)
        // No witness was released before its task block ran (at most the earlier ones were), and
        // every one was released afterwards: one retain per value read, one release.
        #expect(recorder.values.enumerated().allSatisfy { $0.element <= $0.offset })
        #expect(counter.deinitialized == 100)
    }

    @Test func newValueOfAnObservedChangeIsReadAtItsStoredOffset() {
        typealias Change = ObservedChange<TimelineModel, String>
        let alias = Change.storedAlias(of: \Change.newValue)
        #expect(alias == (\Change.newValueStorage as AnyKeyPath))
        #expect((alias as? PartialKeyPath<Change>).flatMap { MemoryLayout<Change>.offset(of: $0) } != nil)
        #expect(Change.storedAlias(of: \Change.oldValue) == nil)

        let model = TimelineModel()
        let newValues = Recorder<String>()
        let oldValues = Recorder<String?>()
        let counts = Recorder<Int>()
        let tokens = [
            model.receptionist(for: \.text).map(\.newValue).deliver(on: .immediate) { newValues.append($0) },
            model.receptionist(for: \.text).map(\.oldValue).deliver(on: .immediate) { oldValues.append($0) },
            model.receptionist(for: \.text).map(\.coalescedCount).deliver(on: .immediate) { counts.append($0) },
        ]
        let written = (1...200).map { "value \($0) " + String(repeating: "y", count: $0 % 30) }
        for value in written { model.text = value }
        #expect(newValues.values == written)
        #expect(oldValues.values == ["0"] + written.dropLast())
        #expect(counts.values == Array(repeating: 1, count: written.count))
        for token in tokens { token.cancel() }
    }
}
