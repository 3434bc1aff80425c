import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// `model.update { }`: several properties written as one atomic change.
@Suite struct ModelTransactionTests {
    struct Failure: Error {}

    @Test func anUpdateThatThrowsWritesNothing() {
        let download = Download()
        let seen = Recorder<Double>()
        let token = download.receptionist(for: \.progress).deliver(on: .immediate) { seen.append($0.newValue) }
        #expect(throws: Failure.self) {
            try download.update { download in
                download.progress = 1
                throw Failure()
            }
        }
        #expect(download.progress == 0)
        #expect(seen.values.isEmpty)
        token.cancel()
    }

    @Test func anUpdateThatOnlyReadsWritesNothing() {
        let download = Download()
        let target = ManualTarget()
        let token = download.receptionist(for: \.progress).deliver(on: target) { _ in }
        let read = download.update { $0.progress + 1 }
        #expect(read == 1)
        #expect(target.submissionCount == 0)
        token.cancel()
    }

    @Test func aConcurrentWriteToAPropertyItReadMakesItRunAgain() {
        let download = Download()
        let runs = AtomicValue<Int>(0)
        download.update { transaction in
            let progress = transaction.progress
            if runs.add(1, ordering: .relaxed).newValue == 1 {
                // Another thread writes what this run read: this run cannot commit.
                onThreads(1) { _ in download.progress = 10 }  // on another thread, waited for
            }
            transaction.progress = progress + 1
        }
        #expect(runs.load(ordering: .relaxed) == 2)
        #expect(download.progress == 11, "the second run saw the other thread's write")
    }

    @Test func aConcurrentWriteToAPropertyItDidNotReadDoesNotMakeItRunAgain() {
        let download = Download()
        let runs = AtomicValue<Int>(0)
        download.update { transaction in
            runs.add(1, ordering: .relaxed)
            onThreads(1) { _ in download.received = 5 }  // on another thread, waited for
            transaction.progress = 1
        }
        #expect(runs.load(ordering: .relaxed) == 1)
        #expect(download.progress == 1 && download.received == 5)
    }

    @Test func readModifyWriteFromFourThreadsLosesNothing() {
        let download = Download()
        let perThread = scaled(2_000)
        onThreads(4) { _ in
            for _ in 0..<perThread {
                download.update { $0.received += 1 }
            }
        }
        #expect(download.received == 4 * perThread)
    }

    /// More properties than the transaction keeps inline: every write applies, once, as one
    /// change of each; reads see the transaction's own writes.
    @Test func anUpdateOfMoreThanThreePropertiesAppliesEveryWriteOnce() {
        let wide = Wide()
        let seen = Recorder<String>()
        let paths: [(String, ReferenceWritableKeyPath<Wide, Int> & Sendable)] = [
            ("a", \.a), ("b", \.b), ("c", \.c), ("d", \.d), ("e", \.e),
        ]
        let tokens = paths.map { name, path in
            wide.receptionist(for: path).deliver(on: .immediate) {
                seen.append("\(name)\($0.oldValue ?? -1)→\($0.newValue)")
            }
        }
        let sum = wide.update { wide in
            wide.a = 1
            wide.b = 2
            wide.c = 3
            wide.d = 4
            wide.e = wide.a + wide.d  // reads its own writes, inline and spilled
            wide.a = 10  // a second write of a property: still one change
            return wide.a + wide.b + wide.c + wide.d + wide.e
        }
        #expect(sum == 10 + 2 + 3 + 4 + 5)
        #expect(seen.values == ["a0→10", "b0→2", "c0→3", "d0→4", "e0→5"])
        #expect((wide.a, wide.b, wide.c, wide.d, wide.e) == (10, 2, 3, 4, 5))
        for token in tokens { token.cancel() }
    }

    /// Every value a transaction wrote and every value its writes replaced is released exactly
    /// once, whether the update commits, throws or runs again; for a value kept inline (a class
    /// reference, a string), one too large for that (a struct of five words), and more
    /// properties than the transaction keeps inline.
    @Test func writtenAndReplacedValuesAreReleasedExactlyOnce() throws {
        let counter = LifetimeCounter()
        let held = Holder()
        var made = 0
        func witness() -> LifetimeWitness {
            made += 1
            return LifetimeWitness(counter)
        }
        held.update { held in
            held.small = witness()
            held.large = Large(witness())
            held.small = witness()  // the first one written is released now or with the transaction
        }
        #expect(counter.deinitialized == 1)
        held.update { held in
            held.label = "spilled"
            held.count = 1
            held.small = witness()  // the fourth property: every entry is in the spill array
            held.large = Large(witness())
        }
        #expect(counter.deinitialized == 3, "the two values the second update replaced")
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try held.update { held in
                held.small = witness()
                throw Failure()
            }
        }
        #expect(counter.deinitialized == 4, "the value of an update that threw")
        let runs = AtomicValue<Int>(0)
        held.update { transaction in
            _ = transaction.count
            transaction.small = witness()
            if runs.add(1, ordering: .relaxed).newValue == 1 {
                onThreads(1) { _ in held.count = 10 }  // on another thread, waited for
            }
        }
        #expect(runs.load(ordering: .relaxed) == 2)
        #expect(counter.deinitialized == 6, "the run that could not commit, and the value replaced")
        #expect(held.label == "spilled" && held.count == 10)
        held.small = nil
        held.large = Large(nil)
        #expect(counter.deinitialized == made, "nothing leaked, nothing released twice")
    }

    /// A model generic over its values: its properties' storages, and the operations a
    /// transaction applies their written values with, are made by unspecialised code (they are
    /// formed where the property is declared, specialised only for a concrete type). Values in an
    /// entry's bytes, boxed, and references: written, read back, chained and released once.
    @Test func aModelGenericOverItsValuesUpdatesLikeAnyOther() {
        let counter = LifetimeCounter()
        let model = GenericPair(
            small: 1, large: Large(LifetimeWitness(counter)), reference: LifetimeWitness(counter))
        let seen = Recorder<String>()
        let tokens = [
            model.receptionist(for: \.small).deliver(on: .immediate) {
                seen.append("small \($0.oldValue!) → \($0.newValue)")
            },
            model.receptionist(for: \.large).deliver(on: .immediate) { _ in seen.append("large") },
            model.receptionist(for: \.reference).deliver(on: .immediate) { _ in seen.append("reference") },
        ]
        var runs = 0
        model.update { model in
            runs += 1
            model.small += 1  // read, then written: validated at commit
            model.large = Large(LifetimeWitness(counter))
            model.reference = LifetimeWitness(counter)
            model.small *= 10
        }
        #expect(runs == 1)
        #expect(model.small == 20)
        #expect(seen.values == ["small 1 → 20", "large", "reference"])
        #expect(counter.deinitialized == 2, "the large value and the reference the update replaced")
        model.update { model in
            model.large = Large(nil)
            model.reference = LifetimeWitness(counter)
            model.reference = LifetimeWitness(counter)  // replaced inside the update
        }
        #expect(counter.deinitialized == 5)
        for token in tokens { token.cancel() }
    }

    /// The writes are applied in the order they were first made, also when the update read a
    /// property before it wrote another one: observations on one target hear them in that order.
    @Test func writesApplyInTheOrderTheyWereFirstMadeWhateverWasReadFirst() {
        let wide = Wide()
        let seen = Recorder<String>()
        let tokens = [
            wide.receptionist(for: \.a).deliver(on: .immediate) { _ in seen.append("a") },
            wide.receptionist(for: \.b).deliver(on: .immediate) { _ in seen.append("b") },
            wide.receptionist(for: \.c).deliver(on: .immediate) { _ in seen.append("c") },
        ]
        wide.update { wide in
            let c = wide.c  // read first, written last
            let b = wide.b
            wide.a = 1
            wide.b = b + 1
            wide.c = c + 1
        }
        wide.update { wide in
            wide.c = 2
            wide.a = 2
            wide.b = 2
        }
        #expect(seen.values == ["a", "b", "c", "c", "a", "b"])
        for token in tokens { token.cancel() }
    }

    /// A key path that equals a known one but is another object (one made in a generic
    /// context) names the same property, in a transaction and in an observation.
    @Test func anEqualKeyPathThatIsAnotherObjectNamesTheSameProperty() {
        func generic<Model: Wide>(_: Model.Type) -> ReferenceWritableKeyPath<Model, Int> & Sendable { \Model.a }
        let wide = Wide()
        let first: ReferenceWritableKeyPath<Wide, Int> & Sendable = \Wide.a
        let second = generic(Wide.self)
        #expect(first == second && first !== second, "two equal key path objects")
        let seen = Recorder<Int>()
        let token = wide.receptionist(for: first).deliver(on: .immediate) { seen.append($0.newValue) }
        let other = wide.receptionist(for: second).deliver(on: .immediate) { seen.append(-$0.newValue) }
        wide.update { $0[dynamicMember: second] = 1 }
        wide.update { wide in
            wide[dynamicMember: first] = 2
            wide[dynamicMember: second] += 1  // the same property: one entry, one change
        }
        #expect(seen.values == [1, -1, 3, -3])
        #expect(wide.a == 3)
        token.cancel()
        other.cancel()
    }

    /// The issue 27 reproduction: inside `update { tx in … }`, a value whose deinitialiser
    /// writes `tx` (reached through a box) is replaced while the transaction already holds two
    /// or three entries. That deinitialiser used to run while the entries were lent out, and its
    /// write (a new entry, which can move them all into the spill array) read and wrote memory
    /// that was moving: garbage values or a crash. Now the replaced value dies once the entries
    /// are no longer in use, and its write is one more write of the transaction. For an inline
    /// value and a boxed one (too large for an entry's bytes), with two and three entries held.
    @Test(arguments: [2, 3], [false, true])
    func aReplacedValueWhoseDeinitWritesTheTransactionIsAnOrdinaryWrite(held: Int, large: Bool) {
        let wide = Wide()
        let slot = TransactionSlot()
        let counter = LifetimeCounter()
        let seen = Recorder<Int>()
        let token = wide.receptionist(for: \.e).deliver(on: .immediate) { seen.append($0.newValue) }
        let reentrant = ReentrantHolder()
        reentrant.update { transaction in
            slot.transaction = transaction
            transaction.count = 1
            if held == 3 { transaction.label = "three" }
            // Made in place, so that only the transaction holds it.
            if large {
                transaction.large = LargeDeinitWrites(DeinitWrites(counter) { slot.write(e: 7, d: 9, to: wide) })
            } else {
                transaction.small = DeinitWrites(counter) { slot.write(e: 7, d: 9, to: wide) }
            }
            // Replaces it: its deinit writes `wide` (another model), and this transaction through
            // the box (one more entry: the third, or the fourth, which moves them all).
            if large { transaction.large = LargeDeinitWrites(nil) } else { transaction.small = nil }
            slot.transaction = nil
        }
        #expect(counter.deinitialized == 1)
        #expect(seen.values == [7], "the other model was written from the deinitialiser")
        #expect(reentrant.count == 2 && reentrant.extra == 9, "the deinitialiser's write applied with the update")
        #expect(reentrant.label == (held == 3 ? "three" : ""))
        token.cancel()
    }

    @Test(.exitTest) func writingTheModelDirectlyInsideTheUpdateIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let download = Download()
            download.update { transaction in
                _ = transaction.progress
                download.progress = 1
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("update(_:) body wrote the model directly"))
    }

    @Test(.exitTest) func aTransactionUsedAfterItsClosureReturnedIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let wide = Wide()
            nonisolated(unsafe) var escaped: ModelTransaction<Wide>?
            wide.update { transaction in
                transaction.a = 1
                escaped = transaction
            }
            _ = escaped?.a
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("used after its update(_:) closure returned"))
    }

    @Test(.exitTest) func aKeyPathThatIsNotObservedIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thermometer = Thermometer()
            _ = Download()
            thermometer.update { $0.label = $0.label + "!" }  // fine
            final class Plain: ObservableModel, @unchecked Sendable { var count = 0 }
            Plain().update { $0.count = 1 }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("update(_:) a transaction's key path"))
        #expect(message.contains("is not an @Observed stored property"))
    }
}

/// A model with more properties than a transaction keeps inline.
final class Wide: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var a = 0
    @Observed var b = 0
    @Observed var c = 0
    @Observed var d = 0
    @Observed var e = 0
}

/// A model whose values the transaction must release: a class reference and a string (kept
/// inline) and a struct too large to be (five words).
final class Holder: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var small: LifetimeWitness?
    @Observed var large = Large(nil)
    @Observed var label = ""
    @Observed var count = 0
}

struct Large: Sendable {
    let witness: LifetimeWitness?
    let padding: (Int, Int, Int, Int) = (1, 2, 3, 4)

    init(_ witness: LifetimeWitness?) {
        self.witness = witness
    }
}

/// A model generic over the types of its properties (see
/// `aModelGenericOverItsValuesUpdatesLikeAnyOther`).
final class GenericPair<Small: Sendable & Numeric, Big: Sendable, Reference: AnyObject & Sendable>:
    ObservableModel, @unchecked Sendable
{
    // @unchecked: every stored property is an @Observed.
    @Observed var small: Small
    @Observed var large: Big
    @Observed var reference: Reference

    init(small: Small, large: Big, reference: Reference) {
        self.small = small
        self.large = large
        self.reference = reference
    }
}

/// A model whose values' deinitialisers write the transaction that replaced them.
final class ReentrantHolder: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var small: DeinitWrites?
    @Observed var large = LargeDeinitWrites(nil)
    @Observed var label = ""
    @Observed var count = 0
    @Observed var extra = 0
}

/// Runs `onDeinit` when released, and counts it.
final class DeinitWrites: Sendable {
    let counter: LifetimeCounter
    let onDeinit: @Sendable () -> Void

    init(_ counter: LifetimeCounter, _ onDeinit: @escaping @Sendable () -> Void) {
        self.counter = counter
        self.onDeinit = onDeinit
    }

    deinit {
        onDeinit()
        counter.increment()
    }
}

/// Five words: kept boxed by a transaction, not in an entry's bytes.
struct LargeDeinitWrites: Sendable {
    let value: DeinitWrites?
    let padding: (Int, Int, Int, Int) = (1, 2, 3, 4)

    init(_ value: DeinitWrites?) {
        self.value = value
    }
}

/// Where the test keeps the transaction for a deinitialiser to reach (the box of the issue's
/// reproduction). `@unchecked Sendable`: used by the one thread running the update.
final class TransactionSlot: @unchecked Sendable {
    var transaction: ModelTransaction<ReentrantHolder>?

    /// Writes `e` to `wide`, and, through the transaction, `count + 1` to `count` and `d` to
    /// `extra`.
    func write(e: Int, d: Int, to wide: Wide) {
        wide.e = e
        guard let transaction else { return }
        transaction.count += 1
        transaction.extra = d
    }
}
