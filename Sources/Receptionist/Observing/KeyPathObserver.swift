/// Adapts an ``ObservableValue``'s changes to ``ObservedChange``s put into a sink: the delivery
/// receptionist itself, or the intake of a pipeline with stages.
@usableFromInline
final class KeyPathObserver<Object: AnyObject & Sendable, Value: Sendable, Sink: ChangeSink>: ObservationHandle
where Sink.Change == ObservedChange<Object, Value> {
    @usableFromInline let sink: Sink
    @usableFromInline let keyPath: KeyPath<Object, Value> & Sendable
    @usableFromInline let options: ObservationOptions
    @usableFromInline weak let registry: ObservableValue<Value>.Registry?

    @usableFromInline
    init(
        sink: Sink, keyPath: KeyPath<Object, Value> & Sendable, options: ObservationOptions,
        storage: ObservableValue<Value>
    ) {
        self.sink = sink
        self.keyPath = keyPath
        self.options = options
        self.registry = storage.registry
    }

    /// This observer as the box sees it: closures formed here, in inlinable code, so that the
    /// per-change path is specialised for the client's `Object` and `Value`.
    @inlinable
    var valueObserver: ValueObserver<Value> {
        ValueObserver(
            identity: ObjectIdentifier(self),
            didAttach: { [self] current, object in didAttach(currentValue: current, object: object) },
            didChange: { [self] old, new, object in valueDidChange(from: old, to: new, object: object) },
            submitDrain: { [sink] in sink.submitDrain() },
            sourceDidEnd: { [sink] in sink.finish() }
        )
    }

    @inlinable
    func didAttach(currentValue: Value, object: AnyObject) -> ObserverOutcome {
        guard options.contains(.initial) else { return ObserverOutcome() }
        return sink.accept(
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
        let newValue = options.contains(.new) ? new : nil
        let object = unsafeDowncast(object, to: Object.self)
        let oldValue = options.contains(.old) ? old : nil
        // The change is built only if it is not folded into a waiting one; `self.keyPath` is
        // read inside, so that a folded write does not retain it.
        return sink.accept(
            {
                ObservedChange(
                    object: object,
                    keyPath: self.keyPath,
                    oldValue: oldValue,
                    newValue: newValue,
                    isInitial: false
                )
            },
            foldingWith: { $0.absorbWrite(newValue: newValue) }
        )
    }

    @usableFromInline
    func cancel() {
        sink.cancel()
        registry?.detach(ObjectIdentifier(self))
    }

    @usableFromInline
    func ownerReleased() {
        if sink.isActive { cancel() }
    }

    @usableFromInline
    func finish() {
        // Detached first, under the box's lock: no change can enter after the finish.
        registry?.detach(ObjectIdentifier(self))
        sink.finish()
    }

    @usableFromInline
    func flush() { sink.flush() }

    @usableFromInline var isCancelled: Bool { sink.isCancelled }
    @usableFromInline var isFinished: Bool { sink.isFinished }
    @usableFromInline var statistics: ReceptionistStatistics { sink.statistics }
}
