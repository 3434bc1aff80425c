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
        // article: begin
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

        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let snippet = source.components(separatedBy: "// article: begin\n")[1]
            .components(separatedBy: "        // article: end")[0]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : "  " + $0.dropFirst(8) }
            .joined(separator: "\n")
        let article = try String(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
                .appendingPathComponent("Sources/Receptionist/Receptionist.docc/Stages.md"),
            encoding: .utf8
        )
        #expect(article.contains("  ```swift\n" + snippet + "  ```\n"))
    }
}
