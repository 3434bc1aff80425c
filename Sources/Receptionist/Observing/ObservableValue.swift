import Synchronization

/// A thread-safe, observable value: the standalone box behind every observed property.
///
/// Use it directly when there is no model class, or as a `let` property of a model, which keeps
/// the model compiler-checked `Sendable` (see ``ObservableModel``); `@Observed` properties store
/// one too.
///
/// ```swift
/// let progress = ObservableValue(0.0)
/// let token = progress.receptionist().deliver(on: DispatchQueue.main) { change in
///     bar.value = change.newValue!
/// }
/// progress.value = 0.5                 // any thread
/// progress.update { $0 += 0.1 }        // atomic read-modify-write
/// ```
///
/// ## Threading contract
/// - Reads and writes are atomic and may come from any thread.
/// - Each write is applied and handed to every observing receptionist under one lock, so every
///   receptionist sees the writes in the order they were applied, and the old value of each
///   change is exactly the value the previous write left.
/// - No user code runs under that lock: task blocks run later on their targets, and the
///   closure given to ``update(_:)`` runs outside it.
/// - When the box is deallocated, its receptionists deliver what is pending and finish.
public final class ObservableValue<Value: Sendable>: Sendable {
    /// The value and the observers, under one lock.
    @usableFromInline
    let registry: Registry

    /// Creates a box holding `value`.
    public init(_ value: Value) {
        registry = Registry(State(value: value))
    }

    deinit {
        let observers = registry.state.withLock { $0.observers }
        for observer in observers {
            observer.sourceDidEnd()
        }
    }

    /// The current value. Setting it notifies every receptionist observing the box.
    @inlinable
    public var value: Value {
        get { registry.state.withLock { $0.value } }
        set { set(newValue, object: self) }
    }

    /// Atomically replaces the value with the result of `body` applied to it, as one change.
    ///
    /// `body` runs outside the box's lock, on a copy of the current value. If another thread
    /// changed the value meanwhile, `body` runs again on the newer value, so it should only
    /// compute the new value (no side effects). Two threads that each run `update { $0 += 1 }`
    /// never lose an increment, unlike `box.value += 1`, which is a read and then a write.
    ///
    /// `body` may read the box (and anything else); if it writes the box itself, the update can
    /// never commit and the program stops with a message saying so.
    ///
    /// - Returns: what `body` returned on the run whose result was stored.
    @discardableResult
    public func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try update(body, object: self)
    }

    /// Describes an observation of this box; call `deliver(on:buffering:_:)` on the result to
    /// start it.
    ///
    /// Changes carry the box as ``ObservedChange/object`` and `\ObservableValue.value` as
    /// ``ObservedChange/keyPath``.
    @inlinable
    public func receptionist(
        options: ObservationOptions = [.old, .new]
    ) -> PropertyObservation<ObservableValue<Value>, Value> {
        Pipeline(source: ObservedProperty(object: self, keyPath: \.value, storage: self, options: options))
    }

    // MARK: - Internal: writes on behalf of an owner, observers

    /// Stores `newValue` and hands the change, attributed to `object`, to every observer.
    @inlinable
    func set(_ newValue: Value, object: AnyObject) {
        var followUp = ObserverFollowUp()
        let writer = currentThreadIdentity()
        registry.state.withLockThenRelease { state in
            let old = state.value
            state.value = newValue
            state.version &+= 1
            state.lastWriter = writer
            state.emit(from: old, to: newValue, object: object, into: &followUp)
            // The old value and what observers evicted die after the lock: their deinits are
            // user code.
            return ((), released: (old, followUp.takeGarbage()))
        }
        followUp.perform()
    }

    func update<Result>(_ body: (inout Value) throws -> Result, object: AnyObject) rethrows -> Result {
        let writer = currentThreadIdentity()
        while true {
            let (current, version) = registry.state.withLock { ($0.value, $0.version) }
            var proposed = current
            assertNoLockHeld("running an update closure")
            let result = try body(&proposed)
            var followUp = ObserverFollowUp()
            typealias Released = (Value, [any AnyObject & Sendable]?)?
            let outcome = registry.state.withLockThenRelease {
                state -> ((committed: Bool, selfInflicted: Bool), released: Released) in
                guard state.version == version else {
                    return ((committed: false, selfInflicted: state.lastWriter == writer), released: nil)
                }
                let old = state.value
                state.value = proposed
                state.version &+= 1
                state.lastWriter = writer
                state.emit(from: old, to: proposed, object: object, into: &followUp)
                return ((committed: true, selfInflicted: false), released: (old, followUp.takeGarbage()))
            }
            followUp.perform()
            if outcome.committed { return result }
            // A write by this very thread since the read can only come from `body` itself:
            // retrying would run it forever.
            precondition(
                !outcome.selfInflicted,
                "Receptionist: update(_:) body wrote the value it is updating; that update could "
                    + "never commit. Compute the new value in the closure; write it only through its argument."
            )
        }
    }

    /// Registers `observer`; it receives the current value under the same lock (for
    /// ``ObservationOptions/initial``), so the initial value and later changes form one chain.
    @usableFromInline
    func attach(_ observer: ValueObserver<Value>, object: AnyObject) {
        var followUp = ObserverFollowUp()
        registry.state.withLockThenRelease { state in
            state.observers.append(observer)
            followUp.record(observer.didAttach(state.value, object), submitDrain: observer.submitDrain)
            return ((), released: followUp.takeGarbage())
        }
        followUp.perform()
    }

    /// The part of the box that observations reference, weakly, to detach themselves.
    ///
    /// A separate object so that the box itself is never weakly referenced: the runtime gives a
    /// weakly referenced object a side table, and every retain and release of it then takes a
    /// slower path, while writers retain the box on every write (callgrind: ~125 instructions
    /// per write).
    @usableFromInline
    final class Registry: Sendable {
        @usableFromInline
        let state: Locked<State>

        init(_ state: consuming sending State) {
            self.state = Locked(state)
        }

        func detach(_ identity: ObjectIdentifier) {
            state.withLockThenRelease { state in
                let removed = state.observers.firstIndex { $0.identity == identity }.map {
                    state.observers.remove(at: $0)
                }
                return ((), released: removed)
            }
        }
    }

    @usableFromInline
    struct State: Sendable {
        @usableFromInline var value: Value
        /// Incremented by every write; lets ``update(_:object:)`` detect a concurrent write.
        @usableFromInline var version: UInt64 = 0
        /// The thread that made the last write; lets ``update(_:object:)`` tell a concurrent
        /// write from one its own closure made.
        @usableFromInline var lastWriter: UInt = 0
        @usableFromInline var observers: [ValueObserver<Value>] = []

        @usableFromInline
        init(value: Value) {
            self.value = value
        }

        @inlinable
        func emit(from old: Value, to new: Value, object: AnyObject, into followUp: inout ObserverFollowUp) {
            observers.withUnsafeBufferPointer { observers in
                for index in observers.indices {
                    // Guaranteed, not retained: the array holds the observer for the whole call,
                    // and retaining it here would make every writer thread write its reference
                    // count, a cache line they would all contend for.
                    Unmanaged.passUnretained(observers[index])._withUnsafeGuaranteedRef { observer in
                        followUp.record(observer.didChange(old, new, object), submitDrain: observer.submitDrain)
                    }
                }
            }
        }
    }
}

/// What must happen after a box's lock is released: drains to submit, evicted changes to
/// release. Nothing is allocated unless there is more than one drain or something to release.
@usableFromInline
struct ObserverFollowUp {
    @usableFromInline var firstDrain: (@Sendable () -> Void)?
    @usableFromInline var moreDrains: [@Sendable () -> Void]?
    @usableFromInline var garbage: [any AnyObject & Sendable]?

    @inlinable
    init() {}

    /// Takes what must be released after the lock.
    @inlinable
    mutating func takeGarbage() -> [any AnyObject & Sendable]? {
        garbage.take()
    }

    @inlinable
    mutating func record(_ outcome: ObserverOutcome, submitDrain: @autoclosure () -> @Sendable () -> Void) {
        if outcome.needsDrain {
            if firstDrain == nil {
                firstDrain = submitDrain()
            } else {
                moreDrains = (moreDrains ?? []) + [submitDrain()]
            }
        }
        if let evicted = outcome.evicted {
            garbage = (garbage ?? []) + [evicted]
        }
    }

    @inlinable
    func perform() {
        firstDrain?()
        if let moreDrains {
            for drain in moreDrains { drain() }
        }
    }
}

/// What an observer asks of the box after it released its lock.
@usableFromInline
struct ObserverOutcome: Sendable {
    @usableFromInline var needsDrain = false
    /// A change the observer's buffer policy evicted, boxed; released after the lock. (A class
    /// reference rather than `any Sendable`: checking and moving it is a pointer operation, and
    /// evictions, the only case that allocates the box, are rare.)
    @usableFromInline var evicted: (any AnyObject & Sendable)?

    @inlinable
    init(needsDrain: Bool = false) {
        self.needsDrain = needsDrain
    }

    @inlinable
    init<Element: Sendable>(needsDrain: Bool, evicted: Element?) {
        self.needsDrain = needsDrain
        self.evicted = evicted.map(EvictedElement.init)
    }
}

/// An evicted element on its way out of a lock.
@usableFromInline
final class EvictedElement<Element: Sendable>: Sendable {
    @usableFromInline let element: Element

    @inlinable
    init(_ element: Element) {
        self.element = element
    }
}

/// Something attached to an ``ObservableValue``: the adapter between the box and a receptionist,
/// as closures, so that the code they run is specialised for the observer's concrete types.
///
/// The box calls ``didChange`` and ``didAttach`` while holding its lock; they must not call user
/// code or take the box's lock.
@usableFromInline
final class ValueObserver<Value>: Sendable {
    /// Identifies the observer for ``ObservableValue/Registry/detach(_:)``.
    @usableFromInline let identity: ObjectIdentifier
    @usableFromInline let didAttach: @Sendable (_ current: Value, _ object: AnyObject) -> ObserverOutcome
    @usableFromInline let didChange: @Sendable (_ old: Value, _ new: Value, _ object: AnyObject) -> ObserverOutcome
    /// Called after the lock is released when an outcome asked for a drain.
    @usableFromInline let submitDrain: @Sendable () -> Void
    /// The box is being deallocated.
    @usableFromInline let sourceDidEnd: @Sendable () -> Void

    @inlinable
    init(
        identity: ObjectIdentifier,
        didAttach: @escaping @Sendable (Value, AnyObject) -> ObserverOutcome,
        didChange: @escaping @Sendable (Value, Value, AnyObject) -> ObserverOutcome,
        submitDrain: @escaping @Sendable () -> Void,
        sourceDidEnd: @escaping @Sendable () -> Void
    ) {
        self.identity = identity
        self.didAttach = didAttach
        self.didChange = didChange
        self.submitDrain = submitDrain
        self.sourceDidEnd = sourceDidEnd
    }
}
