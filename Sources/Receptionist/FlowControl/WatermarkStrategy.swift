/// The back-pressure decisions of a buffer, as a plain value: the state a producer is told
/// (``Writability``) from the level of what the buffer holds, in the shape of swift-nio's
/// `NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark`.
///
/// Its owner (``ReceptionistStateMachine``) calls it under its lock with the level after every
/// change of it: ``didRise(to:)`` when elements entered, ``didFall(to:)`` when some left
/// (their task block returned), ``end(_:)`` when the receptionist stops accepting. Each
/// answers the new state when the state changed, `nil` otherwise, so the owner signals exactly
/// the changes, in order.
///
/// Transitions (`level` is the number of elements held and not yet delivered):
///
/// | from | event | to |
/// |---|---|---|
/// | `writable` | rise to `level ≥ high` | `paused` (counted in ``pauses``) |
/// | `paused` | fall to `level ≤ low` | `writable` |
/// | `writable` or `paused` | end | `ended` |
/// | `ended` | anything | stays `ended` |
///
/// Without watermarks (every other policy), `high` is `Int.max`: it never pauses, and only ends.
@usableFromInline
struct WatermarkStrategy: Sendable, Hashable {
    /// At or below this level, a paused producer is told to go on.
    @usableFromInline let low: Int
    /// At or above this level, a writable producer is told to pause.
    @usableFromInline let high: Int
    /// What the producer was last told.
    @usableFromInline private(set) var writability = Writability.writable
    /// How many times it paused.
    @usableFromInline private(set) var pauses = 0

    /// A strategy that pauses at `high` and resumes at `low` (`0 ≤ low < high`).
    @usableFromInline
    init(low: Int, high: Int) {
        precondition(
            low >= 0 && low < high, "Internal inconsistency: watermarks low \(low) and high \(high) were not validated")
        self.low = low
        self.high = high
    }

    /// A strategy that never pauses (it only ends).
    static var neverPausing: WatermarkStrategy { WatermarkStrategy(low: Int.max - 1, high: Int.max) }

    /// Elements entered: the level is now `level`.
    ///
    /// - Returns: ``Writability/paused`` if this rise paused the producer; `nil` if the state
    ///   did not change.
    @inlinable
    mutating func didRise(to level: Int) -> Writability? {
        guard level >= high, writability == .writable else { return nil }
        writability = .paused
        pauses += 1
        return .paused
    }

    /// Elements left: the level is now `level`.
    ///
    /// - Returns: ``Writability/writable`` if this fall resumed the producer; `nil` otherwise.
    @inlinable
    mutating func didFall(to level: Int) -> Writability? {
        guard level <= low, writability == .paused else { return nil }
        writability = .writable
        return .writable
    }

    /// The receptionist stopped accepting.
    ///
    /// - Returns: the ended state if this ended it; `nil` if it had already ended (the first
    ///   end's reason stays).
    mutating func end(_ reason: Writability.End) -> Writability? {
        guard !writability.isEnded else { return nil }
        writability = .ended(reason)
        return writability
    }

    /// Whether the producer was told to pause and not yet to go on.
    @inlinable
    var isPaused: Bool { writability == .paused }
}
