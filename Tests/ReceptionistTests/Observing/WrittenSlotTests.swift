import Testing

@testable import Receptionist

/// `WrittenSlot`, the one type that keeps a transaction's written values as raw bytes: values
/// that fit stay inline, others in an existential, each released exactly once, and (debug
/// builds) a slot used as the wrong type, or initialised twice, stops the program.
@Suite struct WrittenSlotTests {
    /// Four words, bitwise takable: kept in the slot's bytes.
    struct Inline: Equatable {
        let witness: LifetimeWitness
        let numbers: (Int, Int, Int)

        static func == (lhs: Inline, rhs: Inline) -> Bool {
            lhs.witness === rhs.witness && lhs.numbers == rhs.numbers
        }
    }

    /// Five words: kept in the existential.
    struct Boxed {
        let witness: LifetimeWitness
        let numbers: (Int, Int, Int, Int)
    }

    @Test func fitsExactlyTheValuesOfUpToFourWords() {
        #expect(WrittenSlot.fits(Inline.self))
        #expect(WrittenSlot.fits(String.self))
        #expect(!WrittenSlot.fits(Boxed.self))
    }

    @Test func everyValueIsReleasedOnceThroughLoadExchangeTakeAndDestroy() {
        let counter = LifetimeCounter()
        do {
            var slot = WrittenSlot()
            let first = Inline(witness: LifetimeWitness(counter), numbers: (1, 2, 3))
            slot.initialize(to: first)
            #expect(slot.load(as: Inline.self) == first)
            let replaced = slot.exchange(Inline(witness: LifetimeWitness(counter), numbers: (4, 5, 6)))
            #expect(replaced == first)
            #expect(slot.load(as: Inline.self).numbers == (4, 5, 6))
            _ = slot.take(as: Inline.self)
            slot.initialize(to: Boxed(witness: LifetimeWitness(counter), numbers: (7, 8, 9, 10)))
            #expect(slot.load(as: Boxed.self).numbers == (7, 8, 9, 10))
            slot.destroy(as: Boxed.self)
        }
        #expect(counter.deinitialized == 3)
    }

    #if DEBUG
    @Test(.exitTest) func aSlotReadAsAnotherTypeStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var slot = WrittenSlot()
            slot.initialize(to: 1)
            _ = slot.load(as: Double.self)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Internal inconsistency: a written slot that holds a value used as holding a Double"))
    }

    @Test(.exitTest) func aSlotInitialisedTwiceStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var slot = WrittenSlot()
            slot.initialize(to: "a")
            slot.initialize(to: "b")
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Internal inconsistency: a written slot that holds a value used as vacant"))
    }
    #endif
}
