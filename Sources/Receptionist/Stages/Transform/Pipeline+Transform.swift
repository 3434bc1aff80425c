extension Pipeline {
    /// Passes on only the outputs for which `isIncluded` returns `true`.
    ///
    /// `isIncluded` runs as every stage does (see ``Pipeline``): one output at a time, in order,
    /// on the thread that made the change (or a time-based stage's scheduler), outside every
    /// lock.
    /// See <doc:Stages#filter-map-compactMap>.
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Output) -> Bool) -> Pipeline<Source, Output> {
        adding("filter(_:)") { downstream, _ in
            StageInlet(TransformStage(downstream: downstream) { isIncluded($0) ? $0 : nil })
        }
    }

    /// Passes on `transform` of each output.
    ///
    /// `transform` runs as every stage does (see ``Pipeline``): one output at a time, in order,
    /// outside every lock.
    @inlinable
    public func map<Next: Sendable>(_ transform: @escaping @Sendable (Output) -> Next) -> Pipeline<Source, Next> {
        adding("map(_:)") { downstream, _ in
            StageInlet(TransformStage(downstream: downstream) { transform($0) })
        }
    }

    /// Passes on the value at `keyPath` of each output: `map(\.newValue)`.
    ///
    /// Runs as `map` with a closure does. A key path made only of stored
    /// properties of structs (`\.newValue` of an ``ObservedChange``, `\.price` of a quote) is read
    /// at its fixed offset, as cheaply as the closure `{ $0.newValue }`; any other key path (a
    /// computed property, a class's property) is applied as `$0[keyPath: keyPath]`, through the
    /// runtime, for every output.
    @inlinable
    public func map<Next: Sendable>(_ keyPath: KeyPath<Output, Next> & Sendable) -> Pipeline<Source, Next> {
        let stored = (Output.self as? any StoredPropertyAliases.Type)?.storedAlias(of: keyPath) ?? keyPath
        guard let path = stored as? PartialKeyPath<Output>, let offset = MemoryLayout<Output>.offset(of: path) else {
            return map { $0[keyPath: keyPath] }
        }
        return map { output in
            // The memory at `offset` is the stored property of type `Next` that `offset(of:)` found.
            // Unsafe: a stored property read at its offset, as a closure reads it, not through the runtime's key path projection (row: "3 observations of @Observed var quote (throttle, batch, coalesce)")
            withUnsafeBytes(of: output) { $0.load(fromByteOffset: offset, as: Next.self) }
        }
    }

    /// Passes on the non-`nil` results of `transform`.
    ///
    /// `transform` runs as every stage does (see ``Pipeline``): one output at a time, in order,
    /// outside every lock.
    @inlinable
    public func compactMap<Next: Sendable>(_ transform: @escaping @Sendable (Output) -> Next?) -> Pipeline<Source, Next>
    {
        adding("compactMap(_:)") { downstream, _ in
            StageInlet(TransformStage(downstream: downstream, transform: transform))
        }
    }
}

/// A type whose public read-only properties read stored ones of another name, so that
/// the key-path `map(_:)` of ``Pipeline`` can read a key path to one at a fixed offset.
@usableFromInline
protocol StoredPropertyAliases {
    /// The key path of the stored property that `keyPath`'s property reads, or `nil`.
    static func storedAlias(of keyPath: AnyKeyPath) -> AnyKeyPath?
}
