/// The output of ``Pipeline/coalesce()->CoalescingPipeline<Source,Coalesced<Output>>`` for outputs other than ``ObservedChange``: the latest
/// output, and how many outputs it stands for.
public struct Coalesced<Element: Sendable>: Sendable {
    /// The most recent output.
    public let latest: Element
    /// How many outputs were folded into this one (1 if none was skipped).
    public let count: Int

    public init(latest: Element, count: Int) {
        self.latest = latest
        self.count = count
    }

    /// `later` as the latest, standing for both.
    @inlinable
    public func coalesced(with later: Self) -> Self {
        Coalesced(latest: later.latest, count: count + later.count)
    }
}

extension Coalesced: Equatable where Element: Equatable {}
