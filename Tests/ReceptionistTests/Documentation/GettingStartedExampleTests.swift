import Dispatch
import Foundation
import Receptionist
import Testing

// The examples of the Getting Started article from "Where your state lives" on, compiled here with
// the public API only (this file does not import the module `@testable`), and checked to be the
// article's text (ArticleSnippets).

// article: model
final class Scale: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed, guarded by the model's lock.
    @Observed var weight = 0
}
// article: end

// article: actor
actor WeightLog {
    var total = 0
}
// article: end

// article: main actor
@MainActor final class TotalView {
    var total = 0
}
// article: end

// article: serial queue
// @unchecked Sendable: `total` is read and written only on `queue`, a serial queue, which is
// where the receptionist delivers.
final class TotalBox: @unchecked Sendable {
    let queue = DispatchQueue(label: "totals")
    var total = 0
}
// article: end

@Suite struct GettingStartedExampleTests {
    /// Writes 1…100 to `scale` from a thread of its own, then finishes the observation.
    private func weigh(on scale: Scale, then token: ObservationToken) async {
        await onOwnThread {
            for weight in 1...100 { scale.weight = weight }
        }
        await token.finishAndWait()
        #expect(token.statistics.delivered == 100)
    }

    @Test func stateInTheActorThatIsTheTarget() async {
        let scale = Scale()
        // article: actor
        let log = WeightLog()
        let token = scale.receptionist(for: \.weight)
            .deliver(on: log) { log, change in
                log.total += change.newValue  // isolated to `log`: no await
            }
        // article: end
        await weigh(on: scale, then: token)
        #expect(await log.total == 5050)
    }

    @MainActor @Test func stateInAMainActorObject() async {
        // article: model
        let scale = Scale()  // written on any thread
        // article: end
        // article: main actor
        let view = TotalView()  // on the main actor
        let token = scale.receptionist(for: \.weight)
            .deliver(on: .mainActor) { change in
                view.total += change.newValue  // the task block is @MainActor
            }
        // article: end
        await weigh(on: scale, then: token)
        #expect(view.total == 5050)
    }

    @Test func stateInABoxConfinedToASerialQueue() async {
        let scale = Scale()
        // article: serial queue
        let box = TotalBox()
        let token = scale.receptionist(for: \.weight)
            .deliver(on: box.queue) { change in
                box.total += change.newValue  // on box.queue
            }
        let total = box.queue.sync { box.total }  // read it on the queue too
        // article: end
        #expect(total == 0)
        await weigh(on: scale, then: token)
        #expect(box.queue.sync { box.total } == 5050)
    }

    @MainActor @Test func shapeTheStream() async {
        let scale = Scale()
        let delivered = Recorder<[Int]>()
        // article: shape
        let token = scale.receptionist(for: \.weight)
            .map(\.newValue)
            .removeDuplicates()
            .batch(count: 100, every: .milliseconds(50))
            .deliver(on: DispatchQueue.main) { weights in print(weights) }
        // article: end
        let counted = scale.receptionist(for: \.weight)
            .map(\.newValue)
            .removeDuplicates()
            .batch(count: 100, every: .milliseconds(50))
            .deliver(on: DispatchQueue.main) { weights in delivered.append(weights) }
        for weight in [1, 1, 2, 2, 3] { scale.weight = weight }
        await token.finishAndWait()
        await counted.finishAndWait()
        // The batch's 50 ms timer runs on real time, so a slow machine may split [1, 2, 3]
        // between batches: check what is guaranteed, every distinct weight once, in order.
        #expect(delivered.values.flatMap { $0 } == [1, 2, 3])
        #expect(delivered.values.allSatisfy { !$0.isEmpty }, "no empty batch")
    }

    @Test func withoutAModel() async {
        // article: without a model
        let receptionist = Receptionist<Int>(on: DispatchQueue.main) { weight in print(weight) }
        Thread { receptionist.send(42) }.start()  // a callback on any thread
        // article: end
        #expect(await waitUntilAsync { receptionist.statistics.received == 1 })
        await receptionist.finishAndWait()
        #expect(receptionist.statistics.delivered == 1)
    }

    @Test func theExamplesAreTheArticlesText() throws {
        #expect(
            try ArticleSnippets.marked(in: #filePath).map(\.name) == [
                "model", "actor", "main actor", "serial queue", "shape", "without a model",
            ])
        let missing = try ArticleSnippets.missing(from: "GettingStarted.md", testFile: #filePath)
        #expect(missing == [], "not a code block of the article")
    }
}
