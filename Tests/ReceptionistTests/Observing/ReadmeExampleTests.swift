// swift-format-ignore-file
// (The snippets below are README's text, aligned comments and all.)
import Foundation
import Receptionist
import Testing

// README's "Ten lines", compiled here with the public API only (this file does not import the
// module `@testable`), run, and checked to be README's text: the model between the markers at file
// scope, the statements in the test.

/// README's names, apart from the test suite's own `Download`.
enum ReadmeTenLines {
    // readme: model begin
    final class Download: ObservableModel, @unchecked Sendable {
        @Observed var progress = 0.0          // @unchecked: see "Declaring a model" below
        @Observed var status = "waiting"
    }
    // readme: model end

    /// Runs the statements; returns the model's final status and how many changes were delivered.
    @MainActor static func run() async throws -> (status: String, delivered: Int) {
        // readme: statements begin
        let download = Download()
        let token = download.receptionist(for: \.progress, \.status)    // observed together
            .deliver(on: .mainActor) { change in  // a @MainActor task block
                let (progress, status) = change.newValue    // a state the model really had
                print("\(status): \(Int(progress * 100)) %")   // or update a view
            }
        DispatchQueue.global().async {                                  // any thread
            download.progress = 0.5
            download.update { $0.progress = 1; $0.status = "done" }     // one atomic change
        }
        // readme: statements end

        // The writer's last write, then everything written before finish() is delivered: the
        // default delivery is lossless, one task block per change.
        let deadline = ContinuousClock.now + .seconds(30)
        while download.status != "done" && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        await token.finishAndWait()
        return (download.status, token.statistics.delivered)
    }
}

@Suite struct ReadmeExampleTests {
    @MainActor @Test func theTenLinesCompileDeliverBothChangesAndAreReadmesText() async throws {
        let (status, delivered) = try await ReadmeTenLines.run()
        #expect(status == "done")
        #expect(delivered == 2)

        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        func between(_ begin: String, _ end: String, indent: Int) -> String {
            source.components(separatedBy: begin + "\n")[1]
                .components(separatedBy: end)[0]
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.dropFirst(indent) }
                .joined(separator: "\n")
        }
        let model = between("    // readme: model begin", "    // readme: model end", indent: 4)
        let statements = between(
            "        // readme: statements begin", "        // readme: statements end", indent: 8)
        let readme = try String(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
                .appendingPathComponent("README.md"),
            encoding: .utf8
        )
        #expect(readme.contains("```swift\nimport Foundation\nimport Receptionist\n\n" + model + "\n" + statements + "```\n"))
    }
}
