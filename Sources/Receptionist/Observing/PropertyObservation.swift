/// A property of an object, ready to be observed: call ``deliver(on:buffering:_:)`` to start
/// bouncing its changes to a target.
///
/// Get one from ``ObservableModel/receptionist(for:options:)`` or
/// ``ObservableValue/receptionist(options:)``.
///
/// ```swift
/// let token = thermometer.receptionist(for: \.celsius)
///     .deliver(on: DispatchQueue.main) { change in
///         label.text = "\(change.newValue!) °C"
///     }
/// ```
public struct PropertyObservation<Object: AnyObject & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let object: Object
    @usableFromInline let keyPath: KeyPath<Object, Value> & Sendable
    @usableFromInline let storage: ObservableValue<Value>
    @usableFromInline let options: ObservationOptions

    @usableFromInline
    init(
        object: Object,
        keyPath: KeyPath<Object, Value> & Sendable,
        storage: ObservableValue<Value>,
        options: ObservationOptions
    ) {
        self.object = object
        self.keyPath = keyPath
        self.storage = storage
        self.options = options
    }

    /// Starts the observation: every change of the property, made on any thread, runs `task` on
    /// `target`.
    ///
    /// ## Threading contract
    /// - `task` runs on `target`, one change at a time, in the order the changes were applied to
    ///   the property, even on a concurrent queue.
    /// - With ``BufferPolicy/unbounded`` (the default) every change is delivered exactly once and
    ///   the changes form a chain (each `oldValue` is the previous `newValue`; the last `newValue`
    ///   is the final value). A bounded policy drops changes only as it says and counts them.
    /// - With ``ObservationOptions/initial``, the current value is delivered first, before any
    ///   change made after this call returns.
    /// - The token cancels on ``ObservationToken/cancel()`` or when released; see its contract.
    /// - The observation does not keep the object alive (only changes waiting for delivery do).
    ///   When the object is deallocated, the observation delivers what is pending and finishes.
    ///
    /// - Parameters:
    ///   - target: where `task` runs.
    ///   - policy: how many changes may wait for `task`, and which to drop beyond that.
    ///   - task: the task block.
    /// - Returns: the token that keeps the observation alive; keep it as long as you want changes.
    @inlinable
    public func deliver(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (ObservedChange<Object, Value>) -> Void
    ) -> ObservationToken {
        start(ReceptionistCore(target: target, policy: policy, handler: task))
    }

    /// Starts the observation with a task block isolated to the main actor.
    ///
    /// The contract is that of ``deliver(on:buffering:_:)``, with `task` running on the main actor.
    @inlinable
    public func deliver(
        on target: MainActorTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (ObservedChange<Object, Value>) -> Void
    ) -> ObservationToken {
        start(
            ReceptionistCore(target: MainActorTarget.queue, policy: policy) { change in
                MainActor.assumeIsolated { task(change) }
            }
        )
    }

    @inlinable
    func start(_ core: ReceptionistCore<ObservedChange<Object, Value>>) -> ObservationToken {
        let observer = KeyPathObserver(core: core, keyPath: keyPath, options: options, storage: storage)
        storage.attach(observer.valueObserver, object: object)
        return ObservationToken(observer)
    }
}

/// Adapts an ``ObservableValue``'s changes to a receptionist core of ``ObservedChange``s.
@usableFromInline
final class KeyPathObserver<Object: AnyObject & Sendable, Value: Sendable>: ObservationHandle {
    @usableFromInline let core: ReceptionistCore<ObservedChange<Object, Value>>
    @usableFromInline let keyPath: KeyPath<Object, Value> & Sendable
    @usableFromInline let options: ObservationOptions
    @usableFromInline weak let storage: ObservableValue<Value>?

    @usableFromInline
    init(
        core: ReceptionistCore<ObservedChange<Object, Value>>,
        keyPath: KeyPath<Object, Value> & Sendable,
        options: ObservationOptions,
        storage: ObservableValue<Value>
    ) {
        self.core = core
        self.keyPath = keyPath
        self.options = options
        self.storage = storage
    }

    /// This observer as the box sees it: closures formed here, in inlinable code, so that the
    /// per-change path is specialised for the client's `Object` and `Value`.
    @inlinable
    var valueObserver: ValueObserver<Value> {
        ValueObserver(
            identity: ObjectIdentifier(self),
            didAttach: { [self] current, object in didAttach(currentValue: current, object: object) },
            didChange: { [self] old, new, object in valueDidChange(from: old, to: new, object: object) },
            submitDrain: { [core] in core.submitDrain() },
            sourceDidEnd: { [core] in core.finish() }
        )
    }

    @inlinable
    func didAttach(currentValue: Value, object: AnyObject) -> ObserverOutcome {
        guard options.contains(.initial) else { return ObserverOutcome() }
        return enqueue(
            ObservedChange(
                object: unsafeDowncast(object, to: Object.self),
                keyPath: keyPath,
                oldValue: nil,
                newValue: options.contains(.new) ? currentValue : nil,
                isInitial: true
            )
        )
    }

    @inlinable
    func valueDidChange(from old: Value, to new: Value, object: AnyObject) -> ObserverOutcome {
        enqueue(
            ObservedChange(
                object: unsafeDowncast(object, to: Object.self),
                keyPath: keyPath,
                oldValue: options.contains(.old) ? old : nil,
                newValue: options.contains(.new) ? new : nil,
                isInitial: false
            )
        )
    }

    @inlinable
    func enqueue(_ change: ObservedChange<Object, Value>) -> ObserverOutcome {
        let outcome = core.enqueue(change)
        return ObserverOutcome(needsDrain: outcome.needsDrain, evicted: outcome.evicted)
    }

    @usableFromInline
    func cancel() {
        core.cancel()
        storage?.detach(ObjectIdentifier(self))
    }

    @usableFromInline var isCancelled: Bool { core.isCancelled }
    @usableFromInline var isFinished: Bool { core.lifecycle == .finished }
    @usableFromInline var statistics: ReceptionistStatistics { core.statistics }
}
