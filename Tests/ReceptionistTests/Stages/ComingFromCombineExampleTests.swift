import Foundation
import Receptionist
import Testing

/// The port example of the "Coming from Combine" article, compiled here with the public API only
/// (this file does not import the module `@testable`), and checked to be the article's text.
@Suite struct ComingFromCombineExampleTests {
    @MainActor @Test func theArticlesExampleCompilesDeliversAndIsTheArticlesText() async throws {
        // article: begin
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

        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let snippet = source.components(separatedBy: "// article: begin\n")[1]
            .components(separatedBy: "        // article: end")[0]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.dropFirst(8) }
            .joined(separator: "\n")
        let article = try String(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
                .appendingPathComponent("Sources/Receptionist/Receptionist.docc/ComingFromCombine.md"),
            encoding: .utf8
        )
        #expect(article.contains("```swift\nimport Receptionist\n\n" + snippet + "```\n"))
    }
}
