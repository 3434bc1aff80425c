import Testing

@testable import Receptionist

/// `map(_:)` with a key path: a path of stored properties is read at its offset, any other path
/// through the runtime; both deliver what `$0[keyPath:]` reads, with reference-counted values
/// intact (each value is read out of the output, which is released after the stage). Which of
/// the two a `map` does is read from its test hook, `Pipeline.storedOffset(of:)`.
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

    /// One field of each shape that has no fixed offset a generic reader could load a `Next` at.
    struct Shapes: Sendable {
        var id: Int
        var box: Box
        var venue: Venue?
        weak var owner: Box?
        /// Stored at its concrete abstraction (`Int` passed directly); a key path hands it out at
        /// the most general one, so reading it needs a reabstraction thunk.
        var transform: @Sendable (Int) -> Int
        var doubled: Int { id * 2 }
    }

    /// A type with stored aliases, one of them wrong: `\.celsiusReading` (an `Int`) names
    /// `\.celsius` (a `Double`), as a future alias could by mistake.
    struct Aliased: Sendable, StoredPropertyAliases {
        var celsius: Double
        var readingStorage: Int
        var reading: Int { readingStorage }
        var celsiusReading: Int { Int(celsius) }

        static func storedAlias(of keyPath: AnyKeyPath) -> AnyKeyPath? {
            if keyPath == \Self.reading { return \Self.readingStorage }
            if keyPath == \Self.celsiusReading { return \Self.celsius }
            return nil
        }
    }

    private static func quotes(_ count: Int) -> [Quote] {
        (0..<count).map { index in
            Quote(
                symbol: "S\(index)-" + String(repeating: "x", count: index % 40), price: index,
                venue: Venue(flags: UInt8(index % 7), name: "venue \(index)"))
        }
    }

    /// `count` shapes; every other one has an owner from `owners` (none if it is empty).
    private static func shapes(_ count: Int, owners: [Box] = []) -> [Shapes] {
        (0..<count).map { index in
            Shapes(
                id: index, box: Box("box \(index)"),
                venue: index % 3 == 0 ? nil : Venue(flags: UInt8(index % 5), name: "venue \(index)"),
                owner: owners.isEmpty || index % 2 == 1 ? nil : owners[index % owners.count],
                transform: { $0 * 1_000 + index })
        }
    }

    /// Sends `inputs` into `pipeline` and returns what the task block got, in order.
    private static func run<Input: Sendable, Value: Sendable>(
        _ inputs: [Input],
        _ makePipeline: (Pipeline<ReceptionistInput<Input>, Input>) -> Pipeline<ReceptionistInput<Input>, Value>
    ) -> [Value] {
        let recorder = Recorder<Value>()
        let receptionist = makePipeline(Receptionist.pipeline(of: Input.self)).deliver(on: .immediate) {
            recorder.append($0)
        }
        for input in inputs { #expect(receptionist.send(input) == .accepted) }
        receptionist.finish()
        return recorder.values
    }

    /// Whether `map(keyPath)` on a pipeline of `Root` reads at an offset (the transform's test
    /// hook), rather than applying the key path through the runtime.
    private static func readsAtOffset<Root: Sendable, Value>(_ keyPath: KeyPath<Root, Value>) -> Bool {
        Pipeline<ReceptionistInput<Root>, Root>.storedOffset(of: keyPath) != nil
    }

    @Test func storedPathsAreReadAtTheirOffset() {
        // Stored properties of structs, nested ones, and the identity: read at an offset.
        #expect(Self.readsAtOffset(\Quote.symbol))
        #expect(Self.readsAtOffset(\Quote.price))
        #expect(Self.readsAtOffset(\Quote.venue.flags))
        #expect(Self.readsAtOffset(\Quote.venue.name))
        #expect(Self.readsAtOffset(\Quote.venue))
        #expect(Self.readsAtOffset(\Quote.self))
        // The stored fields of the other shapes are too: the class reference, the optional.
        #expect(Self.readsAtOffset(\Shapes.box))
        #expect(Self.readsAtOffset(\Shapes.venue))
        let inputs = Self.quotes(500)
        #expect(Self.run(inputs) { $0.map(\.symbol) } == inputs.map(\.symbol))
        #expect(Self.run(inputs) { $0.map(\.price) } == inputs.map(\.price))
        #expect(Self.run(inputs) { $0.map(\.venue.flags) } == inputs.map(\.venue.flags))
        #expect(Self.run(inputs) { $0.map(\.venue.name) } == inputs.map(\.venue.name))
        #expect(Self.run(inputs) { $0.map(\.venue) } == inputs.map(\.venue))
        #expect(Self.run(inputs) { $0.map(\.self) } == inputs)
    }

    @Test func otherShapesAreNotReadAtAnOffset() {
        // Only the hook: if it claimed an offset for one of these, the runs below could read
        // memory as the wrong type (and crash rather than fail).
        #expect(!Self.readsAtOffset(\Shapes.doubled), "a computed property")
        #expect(!Self.readsAtOffset(\Quote.symbol.count), "a computed property of a stored one")
        #expect(!Self.readsAtOffset(\Shapes.box.label), "a property of a class, in a struct")
        #expect(!Self.readsAtOffset(\Box.label), "a property of a class")
        #expect(!Self.readsAtOffset(\Shapes.venue?.flags), "optional chaining")
        #expect(!Self.readsAtOffset(\Shapes.owner), "a weak field")
        #expect(!Self.readsAtOffset(\Shapes.transform), "a closure field that needs reabstraction")
    }

    @Test func computedPropertiesAreApplied() {
        let inputs = Self.shapes(300)
        #expect(Self.run(inputs) { $0.map(\.doubled) } == inputs.map(\.doubled))
        let quotes = Self.quotes(300)
        #expect(Self.run(quotes) { $0.map(\.symbol.count) } == quotes.map(\.symbol.count))
    }

    @Test func pathsThroughAClassAreApplied() {
        let inputs = Self.shapes(300)
        #expect(Self.run(inputs) { $0.map(\.box.label) } == inputs.map(\.box.label))
        let boxes = Self.quotes(300).map { Box($0.symbol) }
        #expect(Self.run(boxes) { $0.map(\.label) } == boxes.map(\.label))
    }

    @Test func optionalChainingIsApplied() {
        let inputs = Self.shapes(300)
        #expect(Self.run(inputs) { $0.map(\.venue?.flags) } == inputs.map(\.venue?.flags))
        #expect(Self.run(inputs) { $0.map(\.venue?.name) } == inputs.map(\.venue?.name))
    }

    @Test func weakFieldsAreApplied() {
        let owners = (0..<7).map { Box("owner \($0)") }
        let inputs = Self.shapes(300, owners: owners)
        let read = Self.run(inputs) { $0.map(\.owner) }
        #expect(read.map { $0?.label } == inputs.map { $0.owner?.label })
        #expect(read.map { $0?.label }.compactMap { $0 }.count == 150)
        withExtendedLifetime(owners) {}
    }

    @Test func closureFieldsThatNeedReabstractionAreApplied() {
        let inputs = Self.shapes(300)
        let read = Self.run(inputs) { $0.map(\.transform) }
        #expect(read.map { $0(7) } == inputs.map { $0.transform(7) })
    }

    @Test func anAliasOfAnotherTypeIsApplied() {
        // The right alias, an `Int` for an `Int`: read at its offset.
        #expect(Self.readsAtOffset(\Aliased.reading))
        // The wrong one, a `Double` for an `Int`: not read (as an `Int`), applied.
        #expect(!Self.readsAtOffset(\Aliased.celsiusReading))
        let inputs = (0..<300).map { Aliased(celsius: Double($0) + 0.5, readingStorage: -$0) }
        #expect(Self.run(inputs) { $0.map(\.reading) } == inputs.map(\.reading))
        #expect(Self.run(inputs) { $0.map(\.celsiusReading) } == inputs.map(\.celsiusReading))
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
        #expect(Self.readsAtOffset(\Change.newValue))
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
