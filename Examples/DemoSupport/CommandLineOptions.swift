import Foundation

/// A handle to one declared command-line option; read its value from ``ParsedOptions``.
public struct Option<Value: Sendable>: Sendable {
    /// The option's name, with its dashes (`--rate`).
    public let name: String
    let index: Int
}

/// The command-line options of a demo: declare each option with its name, value kind, default
/// and help text, then ``parse(_:)`` the arguments.
///
/// ```swift
/// var options = CommandLineOptions(command: "my-demo", abstract: "What the demo shows.")
/// let rate = options.positiveInteger("--rate", default: 6_000, help: "samples per second")
/// let quiet = options.flag("--quiet", help: "no progress line")
/// let parsed = options.parse()          // exits on --help or a bad argument
/// print(parsed[rate], parsed[quiet])
/// ```
///
/// Values follow their option as the next argument (`--rate 6000`) or after `=`
/// (`--rate=6000`); an option given twice takes its last value. `--help` and `-h` print the
/// usage to standard output and exit with status 0. An unknown option, a missing or invalid
/// value, or an unexpected argument prints one line naming the problem, then the usage, to
/// standard error and exits with status 2.
///
/// Declaring an option whose name does not start with `--`, is declared twice or is `--help`
/// is a programming error and stops the program.
public struct CommandLineOptions: Sendable {
    /// One declared option.
    struct Declaration: Sendable {
        let name: String
        /// `nil` for a switch, which takes no value.
        let valueName: String?
        let help: String
        let defaultValue: any Sendable
        /// How the default is shown in the usage; `nil` to show none.
        let defaultDescription: String?
        /// What the value must be, for error messages ("a positive integer").
        let expectation: String
        /// Converts an argument to the value, or `nil` when it is not valid.
        let convert: @Sendable (String) -> (any Sendable)?
    }

    /// What parsing arguments comes to, without printing or exiting.
    enum Outcome: Sendable {
        case options(ParsedOptions)
        case help
        /// One line naming the problem.
        case error(String)
    }

    /// The program name shown in messages and the usage.
    let command: String
    /// A few lines saying what the program does, shown in the usage.
    let abstract: String
    private(set) var declarations: [Declaration] = []

    /// Starts an empty set of options.
    ///
    /// - Parameters:
    ///   - command: the program's name, as typed (`sensor-batching-demo`).
    ///   - abstract: one or a few lines saying what the program does, shown under the usage line.
    public init(command: String, abstract: String) {
        self.command = command
        self.abstract = abstract
    }

    // MARK: - Declaring options

    /// Declares an option whose value is an integer greater than zero.
    ///
    /// - Parameters:
    ///   - name: the option, with its dashes (`--sensors`).
    ///   - defaultValue: the value when the option is not given.
    ///   - help: one short line for the usage; the default is appended to it.
    ///   - valueName: how the value is shown in the usage.
    public mutating func positiveInteger(
        _ name: String,
        default defaultValue: Int,
        help: String,
        valueName: String = "N"
    ) -> Option<Int> {
        declare(
            name, valueName: valueName, help: help, default: defaultValue, shownAs: "\(defaultValue)",
            expecting: "a positive integer"
        ) { text in Int(text).flatMap { $0 > 0 ? $0 : nil } }
    }

    /// Declares an option whose value is a finite number greater than zero.
    ///
    /// - Parameters:
    ///   - name: the option, with its dashes (`--display-hz`).
    ///   - defaultValue: the value when the option is not given.
    ///   - help: one short line for the usage; the default is appended to it.
    ///   - valueName: how the value is shown in the usage.
    public mutating func positiveNumber(
        _ name: String,
        default defaultValue: Double,
        help: String,
        valueName: String = "X"
    ) -> Option<Double> {
        declare(
            name, valueName: valueName, help: help, default: defaultValue, shownAs: Self.describe(defaultValue),
            expecting: "a number greater than zero"
        ) { text in Double(text).flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
    }

    /// Declares an option whose value is a finite number greater than or equal to zero.
    ///
    /// - Parameters:
    ///   - name: the option, with its dashes (`--noise`).
    ///   - defaultValue: the value when the option is not given.
    ///   - help: one short line for the usage; the default is appended to it.
    ///   - valueName: how the value is shown in the usage.
    public mutating func nonNegativeNumber(
        _ name: String,
        default defaultValue: Double,
        help: String,
        valueName: String = "X"
    ) -> Option<Double> {
        declare(
            name, valueName: valueName, help: help, default: defaultValue, shownAs: Self.describe(defaultValue),
            expecting: "a number greater than or equal to zero"
        ) { text in Double(text).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } }
    }

    /// Declares an option whose value is a duration given in milliseconds, greater than zero
    /// (`--duration-ms 500`, or `--duration-ms 0.5` for 500 µs).
    ///
    /// - Parameters:
    ///   - name: the option, with its dashes (`--duration-ms`).
    ///   - defaultValue: the value when the option is not given.
    ///   - help: one short line for the usage; the default is appended to it, in milliseconds.
    public mutating func milliseconds(
        _ name: String,
        default defaultValue: Duration,
        help: String
    ) -> Option<Duration> {
        declare(
            name, valueName: "MS", help: help, default: defaultValue,
            shownAs: Self.describe(defaultValue.inSeconds * 1_000),
            expecting: "a number of milliseconds greater than zero"
        ) { text in
            guard let milliseconds = Double(text), milliseconds.isFinite, milliseconds > 0,
                milliseconds <= Double(Int64.max / 1_000_000)
            else { return nil }
            let duration = Duration.nanoseconds(Int64((milliseconds * 1_000_000).rounded()))
            return duration > .zero ? duration : nil
        }
    }

    /// Declares a switch: `false` unless the option is given. It takes no value.
    ///
    /// - Parameters:
    ///   - name: the option, with its dashes (`--quiet`).
    ///   - help: one short line for the usage.
    public mutating func flag(_ name: String, help: String) -> Option<Bool> {
        declare(name, valueName: nil, help: help, default: false, shownAs: nil, expecting: "no value") { _ in true }
    }

    private mutating func declare<Value: Sendable>(
        _ name: String,
        valueName: String?,
        help: String,
        default defaultValue: Value,
        shownAs defaultDescription: String?,
        expecting expectation: String,
        convert: @escaping @Sendable (String) -> Value?
    ) -> Option<Value> {
        precondition(
            name.hasPrefix("--") && name.count > 2 && !name.contains("="),
            "CommandLineOptions: option names start with -- and contain no '=', got '\(name)'"
        )
        precondition(name != "--help", "CommandLineOptions: --help is declared by CommandLineOptions itself")
        precondition(
            !declarations.contains { $0.name == name },
            "CommandLineOptions: option '\(name)' is declared twice"
        )
        declarations.append(
            Declaration(
                name: name, valueName: valueName, help: help, defaultValue: defaultValue,
                defaultDescription: defaultDescription, expectation: expectation, convert: { convert($0) }
            )
        )
        return Option(name: name, index: declarations.count - 1)
    }

    // MARK: - Parsing

    /// Parses `arguments` (by default the program's arguments, without its name).
    ///
    /// Returns only when the arguments are valid. On `--help` or `-h`, prints the usage to
    /// standard output and exits with status 0; on a bad argument, prints a one-line error and
    /// the usage to standard error and exits with status 2.
    public func parse(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> ParsedOptions {
        switch outcome(for: arguments) {
        case .options(let parsed):
            return parsed
        case .help:
            print(usage)
            exit(0)
        case .error(let message):
            fail(message)
        }
    }

    /// Reports a bad argument the parser cannot check by itself (a limit, a combination of
    /// options) the way ``parse(_:)`` does: prints `message` as one line, then the usage, to
    /// standard error and exits with status 2.
    ///
    /// - Parameter message: the problem, naming the option (`--sensors must be at most 64, got 100`).
    public func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(command): error: \(message)\n\n\(usage)\n".utf8))
        exit(2)
    }

    /// What `arguments` come to: parsed options, a request for help, or the first error.
    func outcome(for arguments: [String]) -> Outcome {
        var values = declarations.map(\.defaultValue)
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--help" || argument == "-h" { return .help }
            guard argument.hasPrefix("-"), argument != "-", argument != "--" else {
                return .error("unexpected argument '\(argument)'")
            }
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let attached = parts.count == 2 ? String(parts[1]) : nil
            guard let index = declarations.firstIndex(where: { $0.name == name }) else {
                return .error("unknown option '\(name)'")
            }
            let declaration = declarations[index]
            guard declaration.valueName != nil else {
                if attached != nil { return .error("\(name) takes no value, got '\(argument)'") }
                values[index] = true
                continue
            }
            let text: String
            if let attached {
                text = attached
            } else if let next = remaining.first, !next.hasPrefix("--") {
                text = next
                remaining.removeFirst()
            } else {
                return .error("\(name) needs a value (\(declaration.expectation))")
            }
            guard let value = declaration.convert(text) else {
                return .error("\(name) must be \(declaration.expectation), got '\(text)'")
            }
            values[index] = value
        }
        return .options(ParsedOptions(names: declarations.map(\.name), values: values))
    }

    // MARK: - Usage

    /// The usage text: the synopsis, the abstract and one line per option.
    public var usage: String {
        let labels = declarations.map { declaration in
            declaration.valueName.map { "\(declaration.name) \($0)" } ?? declaration.name
        }
        let helpLabel = "-h, --help"
        let width = (labels + [helpLabel]).map(\.count).max() ?? 0
        func line(_ label: String, _ help: String) -> String {
            "  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + "   " + help
        }
        var lines = ["usage: \(command) [options]", ""]
        if !abstract.isEmpty {
            lines += abstract.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
            lines.append("")
        }
        lines.append("options:")
        for (label, declaration) in zip(labels, declarations) {
            let help = declaration.defaultDescription.map { "\(declaration.help) (default \($0))" } ?? declaration.help
            lines.append(line(label, help))
        }
        lines.append(line(helpLabel, "show this help"))
        return lines.joined(separator: "\n")
    }

    /// `30` rather than `30.0`; other values as Swift prints them.
    private static func describe(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// The values of parsed command-line options; read one with its ``Option`` handle.
public struct ParsedOptions: Sendable {
    let names: [String]
    let values: [any Sendable]

    /// The value given for `option`, or its default.
    ///
    /// `option` must come from the ``CommandLineOptions`` that produced these values.
    public subscript<Value>(option: Option<Value>) -> Value {
        precondition(
            names.indices.contains(option.index) && names[option.index] == option.name,
            "ParsedOptions: option '\(option.name)' was declared on other CommandLineOptions"
        )
        guard let value = values[option.index] as? Value else {
            preconditionFailure("ParsedOptions: option '\(option.name)' holds \(type(of: values[option.index]))")
        }
        return value
    }
}
