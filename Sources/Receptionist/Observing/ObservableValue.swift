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
    private let state: Locked<State>

    /// Creates a box holding `value`.
    public init(_ value: Value) {
        state = Locked(State(value: value))
    }

    deinit {
        let observers = state.withLock { $0.observers }
        for observer in observers {
            observer.sourceDidEnd()
        }
    }

    /// The current value. Setting it notifies every receptionist observing the box.
    public var value: Value {
        get { state.withLock { $0.value } }
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
    public func receptionist(
        options: ObservationOptions = [.old, .new]
    ) -> PropertyObservation<ObservableValue<Value>, Value> {
        PropertyObservation(object: self, keyPath: \.value, storage: self, options: options)
    }

    // MARK: - Internal: writes on behalf of an owner, observers

    /// Stores `newValue` and hands the change, attributed to `object`, to every observer.
    @usableFromInline
    func set(_ newValue: Value, object: AnyObject) {
        var followUp = FollowUp()
        let writer = currentThreadIdentity()
        let old = state.withLock { state in
            let old = state.value
            state.value = newValue
            state.version &+= 1
            state.lastWriter = writer
            state.emit(from: old, to: newValue, object: object, into: &followUp)
            return old
        }
        followUp.perform()
        _ = old  // released here, outside the lock: its deinit is user code.
    }

    @usableFromInline
    func update<Result>(_ body: (inout Value) throws -> Result, object: AnyObject) rethrows -> Result {
        let writer = currentThreadIdentity()
        while true {
            let (current, version) = state.withLock { ($0.value, $0.version) }
            var proposed = current
            let result = try body(&proposed)
            var followUp = FollowUp()
            let outcome = state.withLock { state -> (old: Value?, selfInflicted: Bool) in
                guard state.version == version else { return (nil, state.lastWriter == writer) }
                let old = state.value
                state.value = proposed
                state.version &+= 1
                state.lastWriter = writer
                state.emit(from: old, to: proposed, object: object, into: &followUp)
                return (old, false)
            }
            followUp.perform()
            if outcome.old != nil { return result }
            // A write by this very thread since the read can only come from `body` itself:
            // retrying would run it forever.
            precondition(
                !outcome.selfInflicted,
                "Receptionist: update(_:) body wrote the value it is updating; that update could "
                    + "never commit. Compute the new value in the closure; write it only through its argument."
            )
        }
    }

    /// Registers `observer`; with ``ObservationOptions/initial`` it receives the current value
    /// under the same lock, so the initial value and later changes form one chain.
    func attach(_ observer: any ValueObserver<Value>, object: AnyObject) {
        var followUp = FollowUp()
        state.withLock { state in
            state.observers.append(observer)
            followUp.record(observer.didAttach(currentValue: state.value, object: object), from: observer)
        }
        followUp.perform()
    }

    func detach(_ observer: any ValueObserver<Value>) {
        let removed = state.withLock { state in
            state.observers.firstIndex { $0 === observer }.map { state.observers.remove(at: $0) }
        }
        _ = removed  // released outside the lock.
    }

    var observerCount: Int { state.withLock { $0.observers.count } }

    struct State {
        var value: Value
        /// Incremented by every write; lets ``update(_:object:)`` detect a concurrent write.
        var version: UInt64 = 0
        /// The thread that made the last write; lets ``update(_:object:)`` tell a concurrent
        /// write from one its own closure made.
        var lastWriter: UInt = 0
        var observers: [any ValueObserver<Value>] = []

        func emit(from old: Value, to new: Value, object: AnyObject, into followUp: inout FollowUp) {
            for observer in observers {
                followUp.record(observer.valueDidChange(from: old, to: new, object: object), from: observer)
            }
        }
    }

    /// What must happen after the lock is released: drains to submit, evicted changes to release.
    struct FollowUp {
        private var drains: [any ValueObserver<Value>] = []
        private var garbage: [any Sendable] = []

        mutating func record(_ outcome: ObserverOutcome, from observer: any ValueObserver<Value>) {
            if outcome.needsDrain { drains.append(observer) }
            if let evicted = outcome.evicted { garbage.append(evicted) }
        }

        func perform() {
            for observer in drains {
                observer.submitDrain()
            }
        }
    }
}

/// What an observer asks of the box after it released its lock.
struct ObserverOutcome {
    var needsDrain = false
    /// A change the observer's buffer policy evicted; released after the lock.
    var evicted: (any Sendable)?
}

/// Something attached to an ``ObservableValue``: the adapter between the box and a receptionist.
///
/// The box calls ``valueDidChange(from:to:object:)`` and ``didAttach(currentValue:object:)``
/// while holding its lock; implementations must not call user code or take the box's lock.
protocol ValueObserver<Value>: AnyObject, Sendable {
    associatedtype Value: Sendable

    func didAttach(currentValue: Value, object: AnyObject) -> ObserverOutcome
    func valueDidChange(from old: Value, to new: Value, object: AnyObject) -> ObserverOutcome
    /// Called after the lock is released when an outcome asked for a drain.
    func submitDrain()
    /// The box is being deallocated.
    func sourceDidEnd()
}
