import Dispatch
import Foundation
import Receptionist
import Testing

/// The hub example of Stages.md ("One source, several consumers"), compiled here with the public
/// API only (this file does not import the module `@testable`), and checked to be the article's
/// text.
@Suite struct HubPipelineExampleTests {
    @MainActor @Test func theArticlesExampleCompilesDeliversAndIsTheArticlesText() async throws {
        // article: hub-fan-out
        let hub = Hub()
        let readings = Hub.Channel<Double>("readings")
        let uploadQueue = DispatchQueue(label: "upload")
        let display = hub.pipeline(for: readings)
            .throttle(for: .milliseconds(100), latest: true)
            .deliver(on: .mainActor) { value in print("gauge:", value) }
        let upload = hub.pipeline(for: readings)
            .batch(count: 100, every: .seconds(1))
            .deliver(on: uploadQueue) { values in print("upload:", values) }
        hub.post(readings, 21.5)  // any thread; never waits for a subscriber
        // article: end
        await display.finishAndWait()
        await upload.finishAndWait()
        // One post: the throttle hands it on at once, the batch on finish; one task block each.
        #expect(display.statistics.delivered == 1)
        #expect(upload.statistics.delivered == 1)

        #expect(try ArticleSnippets.missing(from: "Stages.md", testFile: #filePath) == [])
    }
}
