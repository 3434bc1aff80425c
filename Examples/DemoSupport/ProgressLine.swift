import Foundation

/// A live status line on standard output.
///
/// When standard output is a terminal, every ``update(_:)`` rewrites one line in place (carriage
/// return, then the text cut to the terminal's width, then erase to the end of the line).
/// Otherwise (a pipe, a file, a CI
/// log) it prints the text as a plain line at most once per `plainInterval`, so logs stay short.
///
/// Use it from one thread (typically the main thread, polling the demo's counters); it is not
/// `Sendable`. Nothing else should print between the first update and ``finish(_:)``.
public final class ProgressLine {
    /// Whether standard output is a terminal, so the line is rewritten in place.
    public let isTerminal: Bool
    private let plainInterval: Duration
    private let enabled: Bool
    private let clock = ContinuousClock()
    private var lastPlainLine: ContinuousClock.Instant?
    private var showing = false

    /// Creates a progress line; it prints nothing until the first ``update(_:)``.
    ///
    /// - Parameters:
    ///   - plainInterval: when standard output is not a terminal, the shortest time between two
    ///     printed lines.
    ///   - enabled: `false` to print nothing at all (for a `--quiet` option) except what
    ///     ``finish(_:)`` is given.
    public init(plainInterval: Duration = .seconds(1), enabled: Bool = true) {
        self.isTerminal = isatty(STDOUT_FILENO) != 0
        self.plainInterval = plainInterval
        self.enabled = enabled
    }

    /// Shows `text` as the current status. `text` is evaluated only when it is printed.
    public func update(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        if isTerminal {
            print("\r" + Self.fitted(text()) + "\u{1B}[K", terminator: "")
            fflush(nil)
            showing = true
        } else {
            let now = clock.now
            if let last = lastPlainLine, now - last < plainInterval { return }
            lastPlainLine = now
            print(text())
        }
    }

    /// Ends the progress line: on a terminal, replaces it with `text` (or leaves the last status)
    /// and moves to the next line; otherwise prints `text` as a plain line, if given.
    public func finish(_ text: String? = nil) {
        if isTerminal && showing {
            if let text {
                print("\r" + Self.fitted(text) + "\u{1B}[K")
            } else {
                print("")
            }
        } else if let text {
            print(text)
        }
        showing = false
        fflush(nil)
    }

    /// `text` cut to one character less than the terminal's width, so that it never wraps (a
    /// wrapped line cannot be rewritten in place).
    private static func fitted(_ text: String) -> String {
        var size = winsize()
        #if canImport(Glibc)
        let request = UInt(TIOCGWINSZ)
        #else
        let request = TIOCGWINSZ
        #endif
        guard ioctl(STDOUT_FILENO, request, &size) == 0, size.ws_col > 1, text.count >= Int(size.ws_col) else {
            return text
        }
        return String(text.prefix(Int(size.ws_col) - 1))
    }
}
