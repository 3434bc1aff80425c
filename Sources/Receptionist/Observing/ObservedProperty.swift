/// A property of an object, as the source of a ``Pipeline``: its changes are the pipeline's
/// elements.
///
/// Get the pipeline from ``ObservableModel/receptionist(for:options:)`` or
/// ``ObservableValue/receptionist(options:)``, add stages if you like, and call `deliver` to
/// start the observation:
///
/// ```swift
/// let token = thermometer.receptionist(for: \.celsius)
///     .deliver(on: DispatchQueue.main) { change in
///         label.text = "\(change.newValue!) °C"
///     }
/// ```
public struct ObservedProperty<Object: AnyObject & Sendable, Value: Sendable>: PipelineSource {
    public typealias Element = ObservedChange<Object, Value>

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

    /// Attaches `sink` to the property's storage: from now on every change is put into it.
    @inlinable
    func attach<Sink: ChangeSink>(_ sink: Sink) -> ObservationToken where Sink.Change == ObservedChange<Object, Value> {
        let observer = KeyPathObserver(sink: sink, keyPath: keyPath, options: options, storage: storage)
        storage.attach(observer.valueObserver, object: object)
        return ObservationToken(observer)
    }
}

/// An observation of a property, before it starts: its pipeline has no stages yet.
public typealias PropertyObservation<Object: AnyObject & Sendable, Value: Sendable> =
    Pipeline<ObservedProperty<Object, Value>, ObservedChange<Object, Value>>

extension Pipeline {
    /// Starts the observation: every change of the property, made on any thread, goes through the
    /// pipeline's stages, and each of their outputs runs `task` on `target`.
    ///
    /// ## Threading contract
    /// - `task` runs on `target`, one output at a time, in order, even on a concurrent queue.
    ///   Without stages, the outputs are the changes, in the order they were applied to the
    ///   property.
    /// - Without stages and with ``BufferPolicy/unbounded`` (the default), every change is
    ///   delivered exactly once and the changes form a chain (each `oldValue` is the previous
    ///   `newValue`; the last `newValue` is the final value). A bounded policy drops changes only
    ///   as it says and counts them.
    /// - With ``ObservationOptions/initial``, the current value enters the pipeline first, before
    ///   any change made after this call returns.
    /// - Stages run as ``Pipeline`` describes: in order, outside every lock, on the thread that
    ///   made the change or on a time-based stage's scheduler.
    /// - The token cancels on ``ObservationToken/cancel()`` or when released, and finishes on
    ///   ``ObservationToken/finish()``; see its contract.
    /// - The observation does not keep the object alive; only changes waiting in the pipeline
    ///   do, including changes a stage holds (see ``Pipeline``). When the object is
    ///   deallocated, the observation finishes: stages hand on what they hold, everything is
    ///   delivered, and the task block is released.
    ///
    /// - Parameters:
    ///   - target: where `task` runs.
    ///   - policy: how many outputs may wait for `task`, and which to drop beyond that.
    ///   - task: the task block.
    /// - Returns: the token that keeps the observation alive; keep it as long as you want changes.
    @inlinable
    public func deliver<Object, Value>(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (Output) -> Void
    ) -> ObservationToken where Source == ObservedProperty<Object, Value> {
        start(ReceptionistCore(target: target, policy: policy, handler: task))
    }

    /// Starts the observation with a task block isolated to the main actor.
    ///
    /// The contract is that of ``deliver(on:buffering:_:)-(DeliveryTarget,_,_)->ObservationToken``, with `task`
    /// running on the main actor.
    @inlinable
    public func deliver<Object, Value>(
        on target: MainActorTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (Output) -> Void
    ) -> ObservationToken where Source == ObservedProperty<Object, Value> {
        start(
            ReceptionistCore(target: MainActorTarget.queue, policy: policy) { output in
                MainActor.assumeIsolated { task(output) }
            }
        )
    }

    @inlinable
    func start<Object, Value>(_ delivery: ReceptionistCore<Output>) -> ObservationToken
    where Source == ObservedProperty<Object, Value> {
        if let direct = stages.direct {
            return source.attach(direct(delivery))
        }
        return source.attach(StagedPipeline(stages: stages, delivery: delivery))
    }
}
