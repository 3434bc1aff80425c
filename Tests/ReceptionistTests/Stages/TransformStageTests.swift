import Testing

@testable import Receptionist

private func isOdd(_ digit: String) -> Bool { Int(digit)! % 2 == 1 }

/// `filter`, `map` and `compactMap` as timelines (tick = 1 ms): stateless stages that act at the
/// tick of their input and pass flush and finish on.
@Suite struct TransformStageTests {
    @Test func filterPassesOnlyIncludedOutputsAtTheirTick() {
        let run = Marbles().run("1234567") { _, out in
            .receptionist(Receptionist.pipeline(of: String.self).filter(isOdd).deliver(on: .immediate, out))
        }
        #expect(run == "1-3-5-7")
        #expect(run.statistics.received == 4)
    }

    /// The example of `filter`'s documentation.
    @Test func documentedFilterTimeline() {
        let run = Marbles().run("12345") { _, out in
            .receptionist(Receptionist.pipeline(of: String.self).filter(isOdd).deliver(on: .immediate, out))
        }
        #expect(run == "1-3-5")
    }

    @Test func mapTransformsEachOutput() {
        let run = Marbles().run("ab-c") { _, out in
            .receptionist(Receptionist.pipeline(of: String.self).map { $0.uppercased() }.deliver(on: .immediate, out))
        }
        #expect(run == "AB-C")
    }

    @Test func mapMayChangeTheType() {
        let run = Marbles().run("a'bcd'-'ef'") { _, out in
            .receptionist(Receptionist.pipeline(of: String.self).map(\.count).deliver(on: .immediate, out))
        }
        #expect(run == "13-2")
    }

    @Test func compactMapDropsNilResults() {
        let run = Marbles().run("1a2b'42'") { _, out in
            .receptionist(Receptionist.pipeline(of: String.self).compactMap { Int($0) }.deliver(on: .immediate, out))
        }
        #expect(run == "1-2-'42'")
    }

    @Test func transformsPassFlushAndFinishOn() {
        let run = Marbles().run("1!2|3") { _, out in
            .receptionist(
                Receptionist.pipeline(of: String.self)
                    .filter { $0 != "2" }
                    .map { $0 + $0 }
                    .compactMap { $0 }
                    .deliver(on: .immediate, out)
            )
        }
        #expect(run == "'11'--|")
        #expect(run.isFinished)
    }

    @Test func cancelStopsATransformPipeline() {
        let run = Marbles().run("ab^c") { _, out in
            .receptionist(Receptionist.pipeline(of: String.self).map { $0.uppercased() }.deliver(on: .immediate, out))
        }
        #expect(run == "AB^")
        #expect(run.statistics.received == 2)
    }

    @Test func transformsOfObservedChangesRunAtTheWrite() {
        let run = Marbles().run("axb-x-c") { _, out in
            let model = TimelineModel()
            let token = model.receptionist(for: \.text)
                .filter { $0.newValue != "x" }
                .map { $0.newValue }
                .deliver(on: .immediate, out)
            return .observation(of: model, token: token) { $0.text = $1 }
        }
        #expect(run == "a-b---c")
    }

    @Test func closuresSeeEveryInputOnceInOrder() {
        let seen = Recorder<String>()
        let run = Marbles().run("ab(cd)-e|f") { _, out in
            .receptionist(
                Receptionist.pipeline(of: String.self)
                    .map { value -> String in
                        seen.append(value)
                        return value
                    }
                    .filter { $0 != "c" }
                    .deliver(on: .immediate, out)
            )
        }
        #expect(run == "abd-e|")
        #expect(seen.values == ["a", "b", "c", "d", "e"])
    }
}
