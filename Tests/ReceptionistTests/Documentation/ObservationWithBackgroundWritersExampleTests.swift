import Dispatch
import Foundation
import Observation
import Receptionist
import Testing

// The recipe of the "Observation with background writers" article, compiled here with the public
// API only (this file does not import the module `@testable`), checked to do what the article
// says, and to be the article's text (ArticleSnippets).

// article: recipe
final class Transfer: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed, guarded by the model's lock.
    @Observed var received = 0  // written by any number of threads
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable final class TransferViewState {
    var received = 0  // what the view reads: written on the main actor only
    @ObservationIgnored var token: ObservationToken?  // releasing it stops the updates

    init(showing transfer: Transfer) {
        token = transfer.receptionist(for: \.received)
            .coalesce()
            .deliver(on: .mainActor) { [weak self] change in
                self?.received = change.newValue  // one write per delivery, however many writes
            }
    }
}
// article: end

/// A view that renders `state` as SwiftUI does: a render reads it inside
/// `withObservationTracking`, and a change schedules the next render on the main actor.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor final class TransferView {
    let state: TransferViewState
    private(set) var renders: [Int] = []
    /// How many times `onChange` ran off the main queue (on Linux, the main queue may be drained
    /// by another thread than the main thread, so that is not what is checked).
    let offMain = Recorder<Bool>()
    nonisolated private static let mainQueue = DispatchSpecificKey<Bool>()

    init(_ state: TransferViewState) {
        DispatchQueue.main.setSpecific(key: Self.mainQueue, value: true)
        self.state = state
        render()
    }

    private func render() {
        withObservationTracking {
            renders.append(state.received)
        } onChange: { [offMain] in
            if DispatchQueue.getSpecific(key: Self.mainQueue) != true { offMain.append(true) }
            DispatchQueue.main.async { MainActor.assumeIsolated { self.render() } }
        }
    }
}

/// Runs what the main queue holds now (and what it runs enqueues before this returns): the main
/// queue is serial and first in, first out.
@MainActor func mainQueueTurn() async {
    await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } }
}

@Suite struct ObservationWithBackgroundWritersExampleTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func aBurstOfWritesIsOneDeliveryAndOneRenderAndNothingAfterCancel() async {
        let transfer = Transfer()
        let state = TransferViewState(showing: transfer)
        let token = state.token!
        let view = TransferView(state)
        let writers = 4
        let perWriter = eventsPerThread(10_000, threads: writers)

        // This test holds the main actor while the writers write: no task block can run, so the
        // burst is one delivery, of the final value.
        onThreads(writers) { _ in
            for _ in 0..<perWriter { transfer.$received.update { $0 += 1 } }
        }
        let writes = writers * perWriter
        #expect(token.statistics.received == writes)
        #expect(token.statistics.delivered == 0)
        #expect(await waitUntilAsync { token.statistics.delivered == 1 })
        await mainQueueTurn()  // the render that the delivery scheduled
        #expect(state.received == writes)
        #expect(token.statistics.delivered == 1)
        #expect(token.statistics.coalesced == writes - 1)
        #expect(view.renders == [0, writes])

        // Another burst, cancelled on the main actor before it could be delivered: nothing more
        // is delivered or rendered.
        onThreads(writers) { _ in
            for _ in 0..<perWriter { transfer.$received.update { $0 += 1 } }
        }
        token.cancel()  // on the main actor
        await mainQueueTurn()  // a drain submitted during the burst has run by now
        await mainQueueTurn()
        #expect(transfer.$received.value == 2 * writes)
        #expect(state.received == writes)
        #expect(token.statistics.delivered == 1)
        #expect(view.renders == [0, writes])
        #expect(view.offMain.values == [])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func writesWhileTheMainActorIsFreeEndOnTheFinalValue() async {
        let transfer = Transfer()
        let state = TransferViewState(showing: transfer)
        let token = state.token!
        let view = TransferView(state)
        let writers = 4
        let perWriter = eventsPerThread(10_000, threads: writers)
        // The writers run while the main actor is free, so deliveries interleave with them.
        await onOwnThread {
            onThreads(writers) { _ in
                for _ in 0..<perWriter { transfer.$received.update { $0 += 1 } }
            }
        }
        await token.finishAndWait()
        await mainQueueTurn()
        let writes = writers * perWriter
        let statistics = token.statistics
        #expect(state.received == writes)
        #expect(statistics.received == writes)
        #expect(statistics.delivered + statistics.coalesced == writes)
        #expect(statistics.delivered >= 1 && statistics.delivered <= writes)
        // Each render shows a value the state had, in increasing order, the last one the final.
        #expect(view.renders.last == writes)
        #expect(view.renders == view.renders.sorted())
        #expect(view.renders.count <= statistics.delivered + 1)
        #expect(view.offMain.values == [])
    }

    @Test func theRecipeIsTheArticlesText() throws {
        #expect(try ArticleSnippets.marked(in: #filePath).map(\.name) == ["recipe"])
        let missing = try ArticleSnippets.missing(from: "ObservationWithBackgroundWriters.md", testFile: #filePath)
        #expect(missing == [], "not a code block of the article")
    }
}
