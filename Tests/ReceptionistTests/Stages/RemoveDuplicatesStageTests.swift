import Testing

@testable import Receptionist

/// `removeDuplicates()`, `removeDuplicates(by:)` and the `ObservedChange` form as timelines.
@Suite struct RemoveDuplicatesStageTests {
    private func deduplicated(
        _ input: String,
        by isDuplicate: (@Sendable (String, String) -> Bool)? = nil
    ) -> MarbleRun {
        Marbles().run(input) { _, out in
            let pipeline = Receptionist.pipeline(of: String.self)
            let receptionist =
                if let isDuplicate {
                    pipeline.removeDuplicates(by: isDuplicate).deliver(on: .immediate, out)
                } else {
                    pipeline.removeDuplicates().deliver(on: .immediate, out)
                }
            return .receptionist(receptionist)
        }
    }

    /// An observation of a model's `text` (initially "0") through `removeDuplicates()`.
    private func observed(
        _ input: String,
        options: ObservationOptions = [.old],
        render: @escaping @Sendable (ObservedChange<TimelineModel, String>) -> String = Marbles.chain
    ) -> MarbleRun {
        Marbles().run(input, render: render) { _, out in
            let model = TimelineModel()
            let token = model.receptionist(for: \.text, options: options)
                .removeDuplicates()
                .deliver(on: .immediate, out)
            return .observation(of: model, token: token) { $0.text = $1 }
        }
    }

    // MARK: Equatable

    /// The example of `removeDuplicates()`'s documentation.
    @Test func documentedTimeline() {
        #expect(deduplicated("11222133") == "1-2--13")
    }

    @Test func theFirstOutputAlwaysPasses() {
        #expect(deduplicated("-a") == "-a")
        #expect(deduplicated("aaaa") == "a")
    }

    @Test func aRepeatAfterSomethingElsePasses() {
        #expect(deduplicated("abab") == "abab")
    }

    @Test func duplicatesInOneTickAreDroppedToo() {
        #expect(deduplicated("(aab)(bba)") == "(ab)a")
    }

    @Test func flushAndFinishDoNotResetTheLastOutput() {
        #expect(deduplicated("a!a|a") == "a--|")
    }

    // MARK: by:

    @Test func byComparesWithTheLastOutputPassedOn() {
        // Within 1 of the last output passed on is a duplicate: 1 is dropped (after 0), 2 passes
        // (2 away from 0, not 1 away from the dropped 1), and so on.
        let run = deduplicated("0123456") { previous, current in abs(Int(previous)! - Int(current)!) < 2 }
        #expect(run == "0-2-4-6")
    }

    @Test func byGetsPreviousThenCurrent() {
        let calls = Recorder<String>()
        let run = deduplicated("aAbB") { previous, current in
            calls.append(previous + current)
            return previous.lowercased() == current.lowercased()
        }
        #expect(run == "a-b")
        #expect(calls.values == ["aA", "ab", "bB"])
    }

    @Test func byThatCallsEverythingADuplicateKeepsOnlyTheFirst() {
        #expect(deduplicated("abc-d") { _, _ in true } == "a")
    }

    // MARK: ObservedChange

    /// The example of the `ObservedChange` form's documentation: the value starts at 0.
    @Test func documentedChangeTimeline() {
        #expect(observed("1122213", render: { $0.marble }) == "1-2--13")
        #expect(observed("1122213") == "'0→1'-'1→2'--'2→1''1→3'")
    }

    @Test func aFirstChangeThatLeavesTheOldValueIsDropped() {
        #expect(observed("0012") == "--'0→1''1→2'")
    }

    @Test func deliveredChangesStillFormAChain() {
        let recorder = Recorder<ObservedChange<TimelineModel, String>>()
        let run = Marbles().run("0aab-bba-c") { _, out in
            let model = TimelineModel()
            let token = model.receptionist(for: \.text)
                .removeDuplicates()
                .deliver(on: .immediate) { change in
                    recorder.append(change)
                    out(change)
                }
            return .observation(of: model, token: token) { $0.text = $1 }
        }
        #expect(run == "-a-b---a-c")
        let changes = recorder.values
        #expect(changes.first?.oldValue == "0")
        for (previous, next) in zip(changes, changes.dropFirst()) {
            #expect(next.oldValue == previous.newValue)
        }
    }

    @Test func theInitialValuePassesAndAWriteOfTheSameValueIsDropped() {
        #expect(observed("-01", options: [.initial, .old]) == "'?→0'-'0→1'")
    }

    @Test func withoutOldValuesTheFirstChangeIsComparedWithNothing() {
        // The first change has no old value to equal (the property held "0" already), so it
        // passes; later ones are compared with the last new value passed on.
        #expect(observed("0011", options: []) == "'?→0'-'?→1'")
    }
}
