// swift-format-ignore-file
// (The snippets below are README's text, aligned comments and all.)
import Foundation
import Receptionist
import Testing

// README's "Ten lines", compiled here with the public API only (this file does not import the
// module `@testable`), run, and checked to be README's text (ArticleSnippets): the model at file
// scope and the statements in a function, two pieces of one block.

/// README's names, apart from the test suite's own `Download`.
enum ReadmeTenLines {
    // article: ten-lines
    final class Download: ObservableModel, @unchecked Sendable {
        @Observed var progress = 0.0          // @unchecked: see "Declaring a model" below
        @Observed var status = "waiting"
    }
    // article: end

    /// Runs the statements; returns the model's final status and how many changes were delivered.
    @MainActor static func run() async throws -> (status: String, delivered: Int) {
        // article: ten-lines
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
        // article: end

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

        #expect(try ArticleSnippets.missing(fromFile: "README.md", testFile: #filePath) == [])
    }
}
