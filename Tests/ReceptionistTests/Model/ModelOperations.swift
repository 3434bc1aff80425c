@testable import Receptionist

// MARK: - Operations, and their seeded generator
//
// A randomized model test plays one list of `ModelOperation`s against a real pipeline on a
// `ManualScheduler` and against the stage's reference model (`StageModel.swift`), and compares
// the two timelines. Time is whole milliseconds, so that inputs land exactly on deadlines often.

/// One value sent by the generator: the producer that sent it, its number among that producer's
/// sends (several producers are simulated by interleaving their sends at random), and a small
/// value, so that repeats are common.
struct Sample: Equatable, Sendable, CustomStringConvertible {
    let producer: Int
    let sequence: Int
    let value: Int

    var description: String { "p\(producer)#\(sequence)=\(value)" }
}

/// The configuration of the stage under test, drawn for each sequence.
struct StageParameters: Sendable, CustomStringConvertible {
    /// A throttle or debounce interval, or a batch's time limit, in milliseconds (≥ 1).
    var interval: Int
    /// A debounce's `maxWait`, in milliseconds (≥ `interval`).
    var maxWait: Int
    /// A batch's size limit (≥ 1).
    var count: Int
    /// How late the stage's timers fire, in milliseconds (below `interval`): elements that
    /// arrive at or after a deadline but before its timer take the stages' "late timer" paths.
    var lateness: Int
    /// Whether the stages keep one timer submitted and move it lazily, as on a `QueueScheduler`
    /// (`ManualScheduler(rearmingStageTimersLazily:)`), rather than arming and cancelling as
    /// their machines ask.
    var timersRearmLazily = false

    var intervalDuration: Duration { .milliseconds(interval) }
    var maxWaitDuration: Duration { .milliseconds(maxWait) }

    var description: String {
        "interval \(interval) ms, maxWait \(maxWait) ms, count \(count), timers late by \(lateness) ms"
            + (timersRearmLazily ? ", re-armed lazily" : "")
    }
}

/// One step of a sequence, performed on the test thread.
enum ModelOperation: Equatable, Sendable, CustomStringConvertible {
    /// `send(_:)` to a receptionist, or a write of the sample's value to an observed box.
    case send(Sample)
    /// `ManualScheduler.advance(by:)`, in milliseconds (0 runs what is due now).
    case advance(Int)
    case flush
    case finish
    case cancel
    /// Runs the work a `ManualTarget` holds (a slow consumer taking what waits).
    case runTarget
    /// Lets go of the observed box: the test's only reference to it.
    case releaseSource

    var description: String {
        switch self {
        case .send(let sample): "\(sample)"
        case .advance(let milliseconds): "+\(milliseconds)ms"
        case .flush: "flush"
        case .finish: "finish"
        case .cancel: "cancel"
        case .runTarget: "run"
        case .releaseSource: "release"
        }
    }
}

/// Draws parameters and operation sequences from a seeded generator.
struct OperationGenerator: Sendable {
    /// Whether the pipeline delivers on a `ManualTarget` that `runTarget` runs.
    var runsTarget = false
    /// Whether the source is an observed box that `releaseSource` can let go of.
    var releasesSource = false
    /// Sends carry values in `0..<valueRange`.
    var valueRange = 4
    /// How long a sequence is.
    var length: ClosedRange<Int> = 5...24

    func parameters(using random: inout SplitMix64) -> StageParameters {
        let interval = random.pick(1...6)
        return StageParameters(
            interval: interval,
            maxWait: random.pick(interval...(3 * interval)),
            count: random.pick(1...5),
            lateness: random.pick(0..<2) == 0 ? 0 : random.pick(0..<interval)
        )
    }

    func operations(for parameters: StageParameters, using random: inout SplitMix64) -> [ModelOperation] {
        let producers = random.pick(1...3)
        var sent = Array(repeating: 0, count: producers)
        var released = false
        var operations: [ModelOperation] = []
        let length = random.pick(length)
        while operations.count < length {
            let roll = random.pick(0..<100)
            switch roll {
            case 0..<2:
                operations.append(.finish)
            case 2..<3:
                operations.append(.cancel)
            case 3..<9:
                operations.append(.flush)
            case 9..<18 where runsTarget:
                operations.append(.runTarget)
            case 18..<21 where releasesSource && !released:
                released = true
                operations.append(.releaseSource)
            case 21..<55:
                operations.append(.advance(advance(for: parameters, using: &random)))
            default:
                // A released box cannot be written to any more: time passes instead.
                guard !released else {
                    operations.append(.advance(advance(for: parameters, using: &random)))
                    continue
                }
                let producer = random.pick(0..<producers)
                let value = random.pick(0..<valueRange)
                operations.append(.send(Sample(producer: producer, sequence: sent[producer], value: value)))
                sent[producer] += 1
            }
        }
        // Often end by letting every timer fire, or by finishing, so that what stages hold shows.
        switch random.pick(0..<4) {
        case 0: operations.append(.advance(3 * parameters.maxWait + 1))
        case 1: operations.append(.finish)
        default: break
        }
        if runsTarget { operations.append(.runTarget) }
        return operations
    }

    /// An advance that often lands on, just before or just after a deadline: 0, 1, the interval
    /// and its neighbours, `maxWait`, or anything up to twice `maxWait`.
    private func advance(for parameters: StageParameters, using random: inout SplitMix64) -> Int {
        switch random.pick(0..<7) {
        case 0: 0
        case 1: 1
        case 2: max(0, parameters.interval - 1)
        case 3: parameters.interval
        case 4: parameters.interval + 1
        case 5: parameters.maxWait
        default: random.pick(1...(2 * parameters.maxWait + 1))
        }
    }
}

/// What a timeline records: outputs with the clock time (ms) they were delivered at, when and
/// how the pipeline ended, and, last, the delivery's statistics.
enum TimelineEntry<Output: Equatable>: Equatable, CustomStringConvertible {
    case output(Output, at: Int)
    case finished(at: Int)
    case cancelled(at: Int)
    case statistics(DeliveryCounts)

    var description: String {
        switch self {
        case .output(let output, let time): "\(output)@\(time)"
        case .finished(let time): "finished@\(time)"
        case .cancelled(let time): "cancelled@\(time)"
        case .statistics(let counts): "\(counts)"
        }
    }
}

/// The documented counters of `ReceptionistStatistics`: they count what the last stage hands to
/// the delivery buffer.
struct DeliveryCounts: Equatable, Sendable, CustomStringConvertible {
    var received = 0
    var delivered = 0
    var discarded = 0
    var coalesced = 0
    var pending = 0
    var maxPending = 0

    init() {}

    init(_ statistics: ReceptionistStatistics) {
        received = statistics.received
        delivered = statistics.delivered
        discarded = statistics.discarded
        coalesced = statistics.coalesced
        pending = statistics.pending
        maxPending = statistics.maxPending
    }

    var description: String {
        "{received \(received), delivered \(delivered), discarded \(discarded), coalesced \(coalesced), "
            + "pending \(pending), max pending \(maxPending)}"
    }
}

extension SplitMix64 {
    /// A number in `range`, cheaply (the generic `Int.random(in:using:)` is slow in debug builds;
    /// the modulo bias of a 64-bit draw over these small ranges does not matter here).
    mutating func pick(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    mutating func pick(_ range: Range<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

extension TimelineEntry: Sendable where Output: Sendable {}

/// A deterministic seed for each case and sequence: a stable hash (FNV-1a) of the case name, mixed
/// with the sequence number. `String.hashValue` is seeded per process, so it would not do.
func modelSeed(for name: String, sequence: Int) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in name.utf8 {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
    }
    return hash &+ UInt64(sequence) &* 0x9E37_79B9_7F4A_7C15
}
