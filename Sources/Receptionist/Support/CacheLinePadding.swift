/// 64 bytes of nothing, stored between fields that different threads write, so that they never
/// share a cache line (Swift lays out a class's stored properties in declaration order).
@usableFromInline
struct CacheLinePadding: Sendable {
    @usableFromInline
    let bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    @inlinable
    init() {}
}
