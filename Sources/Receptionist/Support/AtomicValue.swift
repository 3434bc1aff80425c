// RECEPTIONIST_PORTABLE_SYNC: defined by Package.swift on Apple platforms and Windows, or by hand
// with `-Xswiftc -DRECEPTIONIST_PORTABLE_SYNC` (the implementations are described below).
#if RECEPTIONIST_PORTABLE_SYNC
import CReceptionistSync
#else
import Synchronization
#endif

/// The library's atomic: one `Int`, `Bool` or small enum that threads read and change without a
/// lock. Every atomic of the library (and of its tests) is an `AtomicValue`; no other file
/// touches an atomic primitive.
///
/// Like ``Locked`` it has two implementations with one behaviour:
/// - **Portable** (`RECEPTIONIST_PORTABLE_SYNC`: Apple platforms, Windows, and any build with
///   `-Xswiftc -DRECEPTIONIST_PORTABLE_SYNC`): a C11 `_Atomic(intptr_t)` (the `CReceptionistSync`
///   target) in a heap cell that this value owns. C11 atomics exist on every deployment target the
///   package supports; `Synchronization.Atomic` needs macOS 15 / iOS 18.
/// - **Native** (the other platforms, Linux and Android among them, by default):
///   `Synchronization.Atomic<Int>` stored inline.
///
/// The operations mirror `Synchronization.Atomic`'s names and results, with one ordering type.
@usableFromInline
// Unsafe: the portable cell is reached through a pointer, only with atomic operations (test: LockStressTests)
struct AtomicValue<Value: AtomicWord>: ~Copyable, @unchecked Sendable {

    #if RECEPTIONIST_PORTABLE_SYNC
    // Unsafe: a C11 atomic must stay at one address; owned by this noncopyable value (test: LockStressTests)
    @usableFromInline let cell: UnsafeMutablePointer<receptionist_atomic_word>

    @inlinable
    init(_ initialValue: Value) {
        cell = .allocate(capacity: 1)
        receptionist_atomic_word_init(cell, initialValue.atomicWord)
    }

    deinit {
        cell.deallocate()
    }

    @inlinable
    func load(ordering: AtomicOrdering) -> Value {
        Value(atomicWord: receptionist_atomic_word_load(cell, ordering.c))
    }

    @inlinable
    func store(_ desired: Value, ordering: AtomicOrdering) {
        receptionist_atomic_word_store(cell, desired.atomicWord, ordering.c)
    }

    @inlinable
    @discardableResult
    func exchange(_ desired: Value, ordering: AtomicOrdering) -> Value {
        Value(atomicWord: receptionist_atomic_word_exchange(cell, desired.atomicWord, ordering.c))
    }

    @inlinable
    func compareExchange(
        expected: Value,
        desired: Value,
        ordering: AtomicOrdering
    ) -> (exchanged: Bool, original: Value) {
        var original = expected.atomicWord
        let exchanged = receptionist_atomic_word_compare_exchange(cell, &original, desired.atomicWord, ordering.c)
        return (exchanged, Value(atomicWord: original))
    }

    /// Adds `operand` to the word, wrapping on overflow; the word's value before and after.
    @inlinable
    func wrappingAddWord(_ operand: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        let old = receptionist_atomic_word_fetch_add(cell, operand, ordering.c)
        return (old, old &+ operand)
    }
    #else
    @usableFromInline
    let atomic: Atomic<Int>

    @inlinable
    init(_ initialValue: Value) {
        atomic = Atomic(initialValue.atomicWord)
    }

    @inlinable
    func load(ordering: AtomicOrdering) -> Value {
        switch ordering {
        case .relaxed, .releasing: Value(atomicWord: atomic.load(ordering: .relaxed))
        case .acquiring, .acquiringAndReleasing: Value(atomicWord: atomic.load(ordering: .acquiring))
        case .sequentiallyConsistent: Value(atomicWord: atomic.load(ordering: .sequentiallyConsistent))
        }
    }

    @inlinable
    func store(_ desired: Value, ordering: AtomicOrdering) {
        switch ordering {
        case .relaxed, .acquiring: atomic.store(desired.atomicWord, ordering: .relaxed)
        case .releasing, .acquiringAndReleasing: atomic.store(desired.atomicWord, ordering: .releasing)
        case .sequentiallyConsistent: atomic.store(desired.atomicWord, ordering: .sequentiallyConsistent)
        }
    }

    @inlinable
    @discardableResult
    func exchange(_ desired: Value, ordering: AtomicOrdering) -> Value {
        let word =
            switch ordering {
            case .relaxed: atomic.exchange(desired.atomicWord, ordering: .relaxed)
            case .acquiring: atomic.exchange(desired.atomicWord, ordering: .acquiring)
            case .releasing: atomic.exchange(desired.atomicWord, ordering: .releasing)
            case .acquiringAndReleasing: atomic.exchange(desired.atomicWord, ordering: .acquiringAndReleasing)
            case .sequentiallyConsistent: atomic.exchange(desired.atomicWord, ordering: .sequentiallyConsistent)
            }
        return Value(atomicWord: word)
    }

    @inlinable
    func compareExchange(
        expected: Value,
        desired: Value,
        ordering: AtomicOrdering
    ) -> (exchanged: Bool, original: Value) {
        let (exchanged, original) =
            switch ordering {
            case .relaxed:
                atomic.compareExchange(expected: expected.atomicWord, desired: desired.atomicWord, ordering: .relaxed)
            case .acquiring:
                atomic.compareExchange(expected: expected.atomicWord, desired: desired.atomicWord, ordering: .acquiring)
            case .releasing:
                atomic.compareExchange(expected: expected.atomicWord, desired: desired.atomicWord, ordering: .releasing)
            case .acquiringAndReleasing:
                atomic.compareExchange(
                    expected: expected.atomicWord, desired: desired.atomicWord, ordering: .acquiringAndReleasing)
            case .sequentiallyConsistent:
                atomic.compareExchange(
                    expected: expected.atomicWord, desired: desired.atomicWord, ordering: .sequentiallyConsistent)
            }
        return (exchanged, Value(atomicWord: original))
    }

    /// Adds `operand` to the word, wrapping on overflow; the word's value before and after.
    @inlinable
    func wrappingAddWord(_ operand: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        switch ordering {
        case .relaxed: atomic.wrappingAdd(operand, ordering: .relaxed)
        case .acquiring: atomic.wrappingAdd(operand, ordering: .acquiring)
        case .releasing: atomic.wrappingAdd(operand, ordering: .releasing)
        case .acquiringAndReleasing: atomic.wrappingAdd(operand, ordering: .acquiringAndReleasing)
        case .sequentiallyConsistent: atomic.wrappingAdd(operand, ordering: .sequentiallyConsistent)
        }
    }
    #endif
}

extension AtomicValue where Value == Int {
    /// Adds `operand`, trapping on overflow as `Atomic.add` does; the value before and after.
    @inlinable
    @discardableResult
    func add(_ operand: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        let result = wrappingAddWord(operand, ordering: ordering)
        precondition(
            result.oldValue.addingReportingOverflow(operand).overflow == false, "Receptionist: atomic overflow")
        return result
    }

    /// Subtracts `operand`, trapping on overflow; the value before and after.
    @inlinable
    @discardableResult
    func subtract(_ operand: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        let result = wrappingAddWord(0 &- operand, ordering: ordering)
        precondition(
            result.oldValue.subtractingReportingOverflow(operand).overflow == false, "Receptionist: atomic overflow")
        return result
    }

    /// Adds `operand`, wrapping on overflow; the value before and after.
    @inlinable
    @discardableResult
    func wrappingAdd(_ operand: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        wrappingAddWord(operand, ordering: ordering)
    }
}

/// The memory ordering of an ``AtomicValue`` operation, with `Synchronization`'s names. A load
/// given a releasing order loads relaxed (acquire-release: acquiring); a store given an acquiring
/// order stores relaxed (acquire-release: releasing).
@usableFromInline
enum AtomicOrdering: Int32, Sendable {
    case relaxed = 0
    case acquiring = 1
    case releasing = 2
    case acquiringAndReleasing = 3
    case sequentiallyConsistent = 4

    #if RECEPTIONIST_PORTABLE_SYNC
    @inlinable
    var c: receptionist_ordering {
        receptionist_ordering(rawValue: .init(rawValue))
    }
    #endif
}

/// A value an ``AtomicValue`` can hold: one that round-trips through a machine word.
@usableFromInline
protocol AtomicWord {
    init(atomicWord: Int)
    var atomicWord: Int { get }
}

extension Int: AtomicWord {
    @inlinable
    init(atomicWord: Int) { self = atomicWord }
    @inlinable
    var atomicWord: Int { self }
}

extension Bool: AtomicWord {
    @inlinable
    init(atomicWord: Int) { self = atomicWord != 0 }
    @inlinable
    var atomicWord: Int { self ? 1 : 0 }
}

/// Small enums with integer raw values: declare the conformance, nothing else.
extension AtomicWord where Self: RawRepresentable, RawValue: BinaryInteger {
    @inlinable
    init(atomicWord: Int) {
        guard let value = Self(rawValue: RawValue(truncatingIfNeeded: atomicWord)) else {
            preconditionFailure("Receptionist internal error: \(atomicWord) is no \(Self.self)")
        }
        self = value
    }
    @inlinable
    var atomicWord: Int { Int(truncatingIfNeeded: rawValue) }
}
