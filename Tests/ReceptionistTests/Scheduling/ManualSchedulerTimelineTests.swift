import Testing

@testable import Receptionist

/// The timeline as a value: events in, steps out, no threads.
@Suite struct ManualSchedulerTimelineTests {
    private func drain(_ timeline: inout ManualSchedulerTimeline<String>) -> [String] {
        var ran: [String] = []
        while case .run(let work) = timeline.nextDue() {
            ran.append("\(work)@\(timeline.now.offset)")
        }
        return ran
    }

    @Test func handsOutWorkByDeadlineThenSubmission() {
        var timeline = ManualSchedulerTimeline<String>()
        // Enough entries, in a scrambled order, to exercise the heap's sift-down paths.
        var expected: [(deadline: Int, name: String)] = []
        var generator = SplitMix64(seed: 7)
        for index in 0..<200 {
            let deadline = Int(generator.next() % 20)
            let name = "w\(index)"
            timeline.schedule(name, at: .zero + .seconds(deadline))
            expected.append((deadline, name))
        }
        // A stable sort: equal deadlines keep submission order.
        let order = expected.enumerated()
            .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
            .map { "\($0.element.name)@\($0.element.deadline).0 seconds" }

        #expect(timeline.startAdvancing(to: .zero + .seconds(100)) == nil)
        #expect(drain(&timeline) == order)
        #expect(timeline.now == .zero + .seconds(100))
        #expect(!timeline.isAdvancing)
    }

    @Test func stopsAtTheTargetAndKeepsLaterWork() {
        var timeline = ManualSchedulerTimeline<String>()
        timeline.schedule("late", at: .zero + .seconds(5))
        timeline.schedule("early", at: .zero + .seconds(1))
        timeline.schedule("edge", at: .zero + .seconds(2))

        #expect(timeline.startAdvancing(by: .seconds(2)) == nil)
        #expect(drain(&timeline) == ["early@1.0 seconds", "edge@2.0 seconds"])
        #expect(timeline.now == .zero + .seconds(2))
        #expect(timeline.scheduled.map(\.work) == ["late"])
    }

    @Test func acceptsWorkScheduledWhileAdvancing() {
        var timeline = ManualSchedulerTimeline<String>()
        timeline.schedule("a", at: .zero + .seconds(1))
        #expect(timeline.startAdvancing(to: .zero + .seconds(3)) == nil)
        guard case .run("a") = timeline.nextDue() else {
            Issue.record("expected a")
            return
        }
        timeline.schedule("b", at: timeline.now)
        timeline.schedule("c", at: .zero + .seconds(3))
        timeline.schedule("d", at: .zero + .seconds(4))
        #expect(drain(&timeline) == ["b@1.0 seconds", "c@3.0 seconds"])
        #expect(timeline.scheduled.map(\.work) == ["d"])
    }

    @Test func neverMovesTheClockBack() {
        var timeline = ManualSchedulerTimeline<String>()
        #expect(timeline.startAdvancing(to: .zero + .seconds(10)) == nil)
        #expect(drain(&timeline).isEmpty)
        timeline.schedule("past", at: .zero + .seconds(3))
        #expect(timeline.startAdvancing(by: .zero) == nil)
        #expect(drain(&timeline) == ["past@10.0 seconds"])
    }

    @Test func rejectsBadAdvances() {
        var timeline = ManualSchedulerTimeline<String>()
        #expect(timeline.startAdvancing(by: .nanoseconds(-1)) == .negativeDuration)
        #expect(timeline.startAdvancing(to: .zero + .seconds(2)) == nil)
        #expect(timeline.startAdvancing(by: .seconds(1)) == .alreadyAdvancing)
        #expect(timeline.startAdvancing(to: .zero + .seconds(5)) == .alreadyAdvancing)
        #expect(drain(&timeline).isEmpty)
        #expect(timeline.startAdvancing(to: .zero + .seconds(1)) == .targetBeforeNow(now: .zero + .seconds(2)))
        #expect(!timeline.isAdvancing)
        #expect(timeline.now == .zero + .seconds(2))
    }
}
