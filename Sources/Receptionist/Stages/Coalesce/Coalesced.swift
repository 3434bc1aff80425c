/// The output of ``Pipeline/coalesce()->CoalescingPipeline<Source,Coalesced<Output>>`` for outputs other than ``ObservedChange``: the latest
/// output, and how many outputs it stands for.
public struct Coalesced<Element: Sendable>: Sendable {
    /// The most recent output.
    @inlinable
    public var latest: Element { latestStorage }
    /// How many outputs were folded into this one (1 if none was skipped).
    @inlinable
    public var count: Int { countStorage }

    @usableFromInline var latestStorage: Element
    @usableFromInline var countStorage: Int

    public init(latest: Element, count: Int) {
        self.latestStorage = latest
        self.countStorage = count
    }

    /// `later` as the latest, standing for both.
    @inlinable
    public func coalesced(with later: Self) -> Self {
        Coalesced(latest: later.latest, count: count + later.count)
    }

    /// Folds `later` into this value in place, as ``coalesced(with:)`` does; `later` is left
    /// holding the latest output this value had (what the fold let go of).
    @inlinable
    mutating func absorb(_ later: inout Self) {
        swap(&latestStorage, &later.latestStorage)
        countStorage += later.countStorage
    }
}

extension Coalesced: Equatable where Element: Equatable {}
