import Dispatch
import Foundation
import Receptionist
import Testing

/// The hub example of Stages.md ("One source, several consumers"), compiled here with the public
/// API only (this file does not import the module `@testable`), and checked to be the article's
/// text.
@Suite struct HubPipelineExampleTests {
    @MainActor final class Gauge {
        var value = 0.0
    }

    final class Uploader: Sendable {
        let sent = Recorder<[Double]>()
        func send(_ values: [Double]) { sent.append(values) }
    }

    @MainActor @Test func theArticlesExampleCompilesDeliversAndIsTheArticlesText() async throws {
        let gauge = Gauge()
        let uploader = Uploader()
        let uploadQueue = DispatchQueue(label: "upload")
        // article: hub-fan-out
        let hub = Hub()
        let readings = Hub.Channel<Double>("readings")
        let display = hub.pipeline(for: readings)
            .throttle(for: .milliseconds(100), latest: true)
            .deliver(on: .mainActor) { value in gauge.value = value }
        let upload = hub.pipeline(for: readings)
            .batch(count: 100, every: .seconds(1))
            .deliver(on: uploadQueue) { values in uploader.send(values) }
        hub.post(readings, 21.5)  // any thread; never waits for a subscriber
        // article: end
        await display.finishAndWait()
        await upload.finishAndWait()
        #expect(gauge.value == 21.5)
        #expect(uploader.sent.values == [[21.5]])

        #expect(try ArticleSnippets.missing(from: "Stages.md", testFile: #filePath) == [])
    }
}
