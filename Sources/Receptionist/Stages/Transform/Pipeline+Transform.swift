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
        guard let offset = Self.storedOffset(of: keyPath) else {
            return map { $0[keyPath: keyPath] }
        }
        return map { output in
            // The memory at `offset` is the stored property of type `Next` that `offset(of:)` found.
            // Unsafe: a stored property read at its offset, as a closure reads it, not through the runtime's key path projection (row: "3 observations of @Observed var quote (throttle, batch, coalesce)")
            withUnsafeBytes(of: output) { $0.load(fromByteOffset: offset, as: Next.self) }
        }
    }

    /// The offset at which the key-path `map(_:)` reads `keyPath` of each output, or `nil` if it
    /// applies `keyPath` through the runtime. Also the test hook that tells which of the two a
    /// `map(_:)` does (`KeyPathMapTests`).
    ///
    /// The offset is that of the stored property `keyPath` names, or of the one its stored alias
    /// names (``StoredPropertyAliases``). An alias that is not a key path to a `Next` (one that
    /// does not name a property of the same type) is not read: the cast fails, and `keyPath` is
    /// applied as it is.
    @usableFromInline
    package static func storedOffset<Next>(of keyPath: KeyPath<Output, Next>) -> Int? {
        let stored = (Output.self as? any StoredPropertyAliases.Type)?.storedAlias(of: keyPath) ?? keyPath
        guard let path = stored as? KeyPath<Output, Next> else { return nil }
        return MemoryLayout<Output>.offset(of: path)
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
