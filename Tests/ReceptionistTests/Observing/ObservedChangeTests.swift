import Testing

@testable import Receptionist

/// `ObservedChange` stores its old value without an optional and its flags and count in one word
/// (see the comment on its stored properties): what it answers must not show that, for every
/// combination of old value, initial flag and count, and a fold (`absorb`) must keep the first
/// change's old value and flags.
@Suite struct ObservedChangeTests {
    final class Model: Sendable {
        let value = 0
    }

    typealias Change = ObservedChange<Model, Int>

    @Test(arguments: [nil, 7] as [Int?], [false, true])
    func whatAChangeAnswersIsWhatItWasMadeWith(oldValue: Int?, isInitial: Bool) {
        for count in [1, 2, 1 << 40] { check(oldValue: oldValue, isInitial: isInitial, count: count) }
    }

    func check(oldValue: Int?, isInitial: Bool, count: Int) {
        let model = Model()
        let change = Change(
            object: model, keyPath: \Model.value, oldValue: oldValue, newValue: 9, isInitial: isInitial,
            coalescedCount: count)
        #expect(change.object === model)
        #expect(change.keyPath == \Model.value)
        #expect(change.oldValue == oldValue)
        #expect(change.newValue == 9)
        #expect(change.isInitial == isInitial)
        #expect(change.coalescedCount == count)
    }

    @Test func theDefaultCountIsOne() {
        let change = Change(object: Model(), keyPath: \Model.value, oldValue: 1, newValue: 2, isInitial: false)
        #expect(change.coalescedCount == 1)
    }

    @Test(arguments: [nil, 1] as [Int?], [false, true])
    func aFoldKeepsTheFirstOldValueAndFlagsAndAddsTheCounts(firstOld: Int?, firstIsInitial: Bool) {
        let model = Model()
        var first = Change(
            object: model, keyPath: \Model.value, oldValue: firstOld, newValue: 2, isInitial: firstIsInitial,
            coalescedCount: 3)
        var later = Change(
            object: model, keyPath: \Model.value, oldValue: 2, newValue: 5, isInitial: false, coalescedCount: 4)
        first.absorb(&later)
        #expect(first.oldValue == firstOld)
        #expect(first.newValue == 5)
        #expect(first.isInitial == firstIsInitial)
        #expect(first.coalescedCount == 7)
        // `later` is left holding what the fold let go of: the first change's new value.
        #expect(later.newValue == 2)
    }

    /// A value without an old one is held twice (as the new value and in the old one's place):
    /// both copies go when the change goes.
    @Test func aChangeWithoutAnOldValueReleasesItsValueOnce() {
        let counter = LifetimeCounter()
        do {
            let change = ObservedChange<Model, LifetimeWitness>(
                object: Model(), keyPath: \Model.witnessOrPlaceholder, oldValue: nil,
                newValue: LifetimeWitness(counter), isInitial: true)
            #expect(change.oldValue == nil)
            #expect(counter.deinitialized == 0)
        }
        #expect(counter.deinitialized == 1)
        do {
            var first = ObservedChange<Model, LifetimeWitness>(
                object: Model(), keyPath: \Model.witnessOrPlaceholder, oldValue: nil,
                newValue: LifetimeWitness(counter), isInitial: true)
            var later = ObservedChange<Model, LifetimeWitness>(
                object: Model(), keyPath: \Model.witnessOrPlaceholder, oldValue: LifetimeWitness(counter),
                newValue: LifetimeWitness(counter), isInitial: false)
            first.absorb(&later)
            #expect(first.oldValue == nil)
        }
        #expect(counter.deinitialized == 4)
    }

    /// A fold lets go of the first change's new value: only `later` keeps it, also when the
    /// first change has no old value (whose place holds its new value), so that a coalescing
    /// buffer does not keep a replaced value alive until delivery.
    @Test(arguments: [false, true])
    func aFoldLetsGoOfTheFirstNewValue(firstHasOldValue: Bool) {
        let counter = LifetimeCounter()
        let keyPath = \Model.witnessOrPlaceholder
        var first = ObservedChange<Model, LifetimeWitness>(
            object: Model(), keyPath: keyPath, oldValue: firstHasOldValue ? LifetimeWitness(counter) : nil,
            newValue: LifetimeWitness(counter), isInitial: !firstHasOldValue)
        do {
            var later = ObservedChange<Model, LifetimeWitness>(
                object: Model(), keyPath: keyPath, oldValue: nil, newValue: LifetimeWitness(counter),
                isInitial: false)
            first.absorb(&later)
            #expect(counter.deinitialized == 0)
        }
        #expect(counter.deinitialized == 1, "the first change's new value went with `later`")
        #expect(first.oldValue == nil || firstHasOldValue)
        withExtendedLifetime(first) {}
    }

    /// A count the change cannot hold (it shares a word with two flags) is refused with a message
    /// naming it.
    @Test(.exitTest) func aCountTooLargeToHoldStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ObservedChange<Model, Int>(
                object: Model(), keyPath: \Model.value, oldValue: nil, newValue: 1, isInitial: false,
                coalescedCount: Int.max)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("coalescedCount must lie within"))
    }

    /// The layout the comment on the stored properties asks for: a change of a two-word value is
    /// seven words (object, key path, two values, flags and count), so that the compiler destroys
    /// it with two releases rather than through its type's value witness.
    @Test func aChangeOfATwoWordValueIsSevenWords() {
        struct TwoWords: Sendable {
            var value: Int
            var stamp: UInt64
        }
        #expect(MemoryLayout<ObservedChange<Model, TwoWords>>.size == 7 * MemoryLayout<Int>.size)
    }
}

extension ObservedChangeTests.Model {
    /// A key path to a `LifetimeWitness` (a change only stores it; this is never read).
    var witnessOrPlaceholder: LifetimeWitness { LifetimeWitness(LifetimeCounter()) }
}
