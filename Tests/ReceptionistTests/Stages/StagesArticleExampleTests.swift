import Foundation
import Receptionist
import Testing

/// The batching-by-content example of the Stages article, compiled here with the public API only
/// (this file does not import the module `@testable`), and checked to be the article's text.
@Suite struct StagesArticleExampleTests {
    @MainActor @Test func theBatchingByContentExampleCompilesDeliversAndIsTheArticlesText() async throws {
        // article: batching-by-content
        struct Reading: Sendable {
            var sensorID: String
            var time: ContinuousClock.Instant
            var value: Double
        }

        // One batch per run of readings from one sensor: at most 100, and none older than a second.
        let perSensor = Receptionist.pipeline(of: Reading.self)
            .batch(by: { $0.sensorID }, count: 100, every: .seconds(1))
            .deliver(on: .mainActor) { run in print(run[0].sensorID, run.count) }

        // A new batch when two readings are more than 5 seconds apart.
        let bursts = Receptionist.pipeline(of: Reading.self)
            .batch(while: { previous, next in next.time - previous.time <= .seconds(5) })
            .deliver(on: .mainActor) { burst in print(burst.count) }
        // article: end
        let now = ContinuousClock.now
        for (sensor, offset) in [("a", 0), ("a", 1), ("b", 2), ("b", 9)] {
            let reading = Reading(sensorID: sensor, time: now + .seconds(offset), value: 1)
            perSensor.send(reading)
            bursts.send(reading)
        }
        await perSensor.finishAndWait()
        await bursts.finishAndWait()
        #expect(perSensor.statistics.delivered == 2, "a a | b b")
        #expect(bursts.statistics.delivered == 2, "0 1 2 | 9")

        #expect(try ArticleSnippets.missing(from: "Stages.md", testFile: #filePath) == [])
    }
}
