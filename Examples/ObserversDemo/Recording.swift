import DemoSupport
import Dispatch
import Foundation

/// Names the queue or thread the caller runs on, for the output and the checks.
enum Place {
    private static let label = DispatchSpecificKey<String>()

    /// A serial dispatch queue that ``current`` names by its label.
    static func serialQueue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: name)
        queue.setSpecific(key: label, value: name)
        return queue
    }

    /// An operation queue that ``current`` names by its name.
    static func operationQueue(_ name: String) -> OperationQueue {
        let queue = OperationQueue()
        queue.name = name
        return queue
    }

    /// `main thread`, the label of a queue made by ``serialQueue(_:)`` or the name of one made by
    /// ``operationQueue(_:)``, else `another thread`.
    static var current: String {
        if Thread.isMainThread { return "main thread" }
        if let name = DispatchQueue.getSpecific(key: label) { return name }
        if let name = OperationQueue.current?.name { return name }
        return "another thread"
    }
}

/// Prints whole lines from any thread, one line at a time; prints nothing when disabled.
final class Console: Sendable {
    let enabled: Bool
    private let lock = Protected(())

    init(enabled: Bool) {
        self.enabled = enabled
    }

    /// Prints `text` as one line.
    func line(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        let text = text()
        lock.withLock { _ in print(text) }
    }

    /// Prints one event: where it happened, who did or got it, and what.
    func event(_ place: String, _ who: String, _ what: String) {
        line("  " + place.padded(to: 15) + who.padded(to: 12) + what)
    }
}

extension String {
    /// The string followed by spaces up to `width` characters (unchanged if it is longer).
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

/// What one recipient was told, in the order it was told, and where.
final class Transcript: Sendable {
    struct Entry: Sendable, Equatable {
        let message: String
        let place: String
    }

    let name: String
    private let console: Console
    private let entries = Protected<[Entry]>([])

    init(_ name: String, console: Console) {
        self.name = name
        self.console = console
    }

    /// Records `message` as told here, now, and prints it with `note`.
    func record(_ message: String, note: String = "") {
        let place = Place.current
        entries.withLock { $0.append(Entry(message: message, place: place)) }
        console.event(place, name, note.isEmpty ? message : "\(message)  \(note)")
    }

    var all: [Entry] { entries.withLock { $0 } }
    var count: Int { entries.withLock { $0.count } }

    /// Why what was recorded is not exactly `expected`, all told on `place`; empty if it is.
    ///
    /// - Parameter channel: if given, only the messages starting with it are compared, with the
    ///   expected ones starting with it (deliveries on two channels have no order between them).
    func problems(expected: [String], on place: String, channel: String? = nil) -> [String] {
        let name = channel.map { "\(self.name) (\($0))" } ?? self.name
        let compared = { (message: String) in channel.map { message.hasPrefix($0) } ?? true }
        let got = all.filter { compared($0.message) }
        let expected = expected.filter(compared)
        var problems: [String] = []
        if got.map(\.message) != expected {
            let common = min(got.count, expected.count)
            let index = (0..<common).first { got[$0].message != expected[$0] } ?? common
            problems.append(
                "\(name) got \(got.count) messages, expected \(expected.count); first difference at #\(index + 1): "
                    + "got \(got.indices.contains(index) ? got[index].message : "nothing"), "
                    + "expected \(expected.indices.contains(index) ? expected[index] : "nothing")"
            )
        }
        let elsewhere = got.filter { $0.place != place }
        if let first = elsewhere.first {
            problems.append("\(name) got \(elsewhere.count) messages off \(place), the first on \(first.place)")
        }
        return problems
    }
}
