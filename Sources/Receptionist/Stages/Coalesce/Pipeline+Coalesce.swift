extension Pipeline {
    /// Delivers only the latest output, with how many it stands for: at most one output waits
    /// for the task block; one made while another waits is folded into it.
    ///
    /// The last stage: it folds outputs in the buffer in front of the task block, so a slow
    /// consumer sees the latest state in constant memory. See <doc:Stages#coalesce>.
    @inlinable
    @_disfavoredOverload  // observed changes have their own overload, which must win without a type annotation
    public func coalesce() -> Pipeline<Source, Coalesced<Output>> {
        // A conversion, not a map stage: without other stages, the sending threads wrap their
        // elements and fold them straight into the delivery buffer, in constant memory.
        converting { Coalesced(latest: $0, count: 1) }.coalescing { $0.absorb(&$1) }
    }

    /// Delivers only the latest state of the property: at most one change waits for the task
    /// block; a change made while one waits is folded into it (the `oldValue` of the first, the
    /// `newValue` of the last, their number in ``ObservedChange/coalescedCount``).
    ///
    /// The last stage; delivered changes still form a chain and the last one carries the final
    /// value. See <doc:Stages#coalesce>.
    @inlinable
    public func coalesce<Object, Value>() -> Pipeline<Source, Output>
    where Output == ObservedChange<Object, Value> {
        coalescing { $0.absorb(&$1) }
    }
}
