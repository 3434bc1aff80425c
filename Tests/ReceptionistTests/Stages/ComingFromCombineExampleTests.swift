import Foundation
import Receptionist
import Testing

/// The port example of the "Coming from Combine" article, compiled here with the public API only
/// (this file does not import the module `@testable`), and checked to be the article's text.
@Suite struct ComingFromCombineExampleTests {
    @MainActor @Test func theArticlesExampleCompilesDeliversAndIsTheArticlesText() async throws {
        // article: port
        let readings = Receptionist.pipeline(of: Double.self)
            .filter { $0.isFinite }
            .removeDuplicates()
            .batch(count: 50, every: .seconds(1))
            .deliver(on: .mainActor) { batch in print(batch) }
        readings.send(21.5)  // from any thread
        readings.finish()  // the partial batch is still delivered
        // article: end
        await readings.finishAndWait()
        #expect(readings.statistics.delivered == 1)

        #expect(try ArticleSnippets.missing(from: "ComingFromCombine.md", testFile: #filePath) == [])
    }
}
