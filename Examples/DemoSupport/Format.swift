import Foundation

/// Short, human-readable renderings of rates and durations for the demos' output.
public enum Format {
    /// A rate with an SI prefix and three significant digits: `950/s`, `6.00 k/s`, `1.25 M/s`.
    ///
    /// - Parameters:
    ///   - perSecond: events per second.
    ///   - unit: what is counted, placed before `/s` (`6.00 k samples/s`); `nil` for `6.00 k/s`.
    public static func rate(_ perSecond: Double, of unit: String? = nil) -> String {
        let suffix = unit.map { " \($0)/s" } ?? "/s"
        guard perSecond.isFinite else { return "–" + suffix }
        let (scaled, prefix): (Double, String) =
            switch abs(perSecond) {
            case 1e9...: (perSecond / 1e9, " G")
            case 1e6...: (perSecond / 1e6, " M")
            case 1e3...: (perSecond / 1e3, " k")
            default: (perSecond, "")
            }
        return threeSignificantDigits(scaled) + prefix + suffix
    }

    /// `count` events over `duration` as a rate; see ``rate(_:of:)``.
    public static func rate(_ count: Int, over duration: Duration, of unit: String? = nil) -> String {
        let seconds = duration.inSeconds
        return rate(seconds > 0 ? Double(count) / seconds : .infinity, of: unit)
    }

    /// A duration in the largest unit that keeps it at least 1: `850 µs`, `12.3 ms`, `3.01 s`.
    public static func duration(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        let magnitude = abs(seconds)
        let (scaled, unit): (Double, String) =
            switch magnitude {
            case 1...: (seconds, "s")
            case 1e-3...: (seconds * 1e3, "ms")
            case 1e-6...: (seconds * 1e6, "µs")
            default: (seconds * 1e9, "ns")
            }
        return threeSignificantDigits(scaled) + " " + unit
    }

    /// `value` with three significant digits for values from 1 to 999 (`6.00`, `12.3`, `950`).
    private static func threeSignificantDigits(_ value: Double) -> String {
        let digits = abs(value) >= 99.95 ? 0 : (abs(value) >= 9.995 ? 1 : 2)
        return String(format: "%.\(digits)f", value)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double` (for rates and `Thread.sleep(forTimeInterval:)`).
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
