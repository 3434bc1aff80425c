/// The output of ``Pipeline/coalesce()->Pipeline<Source,Coalesced<Output>>`` for outputs other
/// than ``ObservedChange``: the latest output, and how many outputs it stands for.
public struct Coalesced<Element: Sendable>: Sendable {
    /// The most recent output.
    public internal(set) var latest: Element
    /// How many outputs were folded into this one (1 if none was skipped).
    public internal(set) var count: Int

    @usableFromInline
    init(latest: Element, count: Int) {
        self.latest = latest
        self.count = count
    }

    /// Folds `later` into this value in place: `later`'s output becomes the latest, and the
    /// counts add up; `later` is left holding the output this value had (what the fold let go
    /// of).
    @usableFromInline
    mutating func absorb(_ later: inout Self) {
        swap(&latest, &later.latest)
        count += later.count
    }
}

extension Coalesced: Equatable where Element: Equatable {}
