import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// What the main-actor delivery relies on (issue 27, item 6c): `Delivery.mainActor` calls the
/// `@MainActor` task block as a plain function on the main queue, so every drain on the main queue
/// must run on the main actor. Here the runtime checks it (`MainActor.assumeIsolated` traps
/// otherwise, in every build configuration), for changes sent from threads of their own, on this
/// platform's main queue (on Linux, serviced by whichever thread runs it).
@Suite struct MainActorIsolationTests {
    enum Route: String, CaseIterable, CustomTestStringConvertible {
        case receptionist, waitingReceptionist, pipeline, waitingPipeline
        var testDescription: String { rawValue }
    }

    @Test(arguments: Route.allCases)
    func mainActorTaskBlocksRunOnTheMainActorWhicheverThreadSent(route: Route) async {
        let log = await MainActor.run { MainActorLog() }
        let task: @MainActor (Int) -> Void = { value in
            dispatchPrecondition(condition: .onQueue(.main))
            MainActor.assumeIsolated { log.append(value) }
        }
        let receptionist: Receptionist<Int> =
            switch route {
            case .receptionist: Receptionist(on: .mainActor, task)
            case .waitingReceptionist: Receptionist(on: .mainActor, buffering: .waiting(capacity: 8), task)
            case .pipeline: Receptionist.pipeline(of: Int.self).map { $0 }.deliver(on: .mainActor, task)
            case .waitingPipeline:
                Receptionist.pipeline(of: Int.self).map { $0 }
                    .deliver(on: .mainActor, buffering: .waiting(capacity: 8), task)
            }
        let senders = 4
        let perSender = 1_000
        let refused = AtomicValue<Int>(0)
        await onOwnThread {
            onThreads(senders) { sender in
                for sequence in 0..<perSender where !receptionist.send(stamp(sender, sequence)).isAccepted {
                    refused.add(1, ordering: .relaxed)
                }
            }
        }
        await receptionist.finishAndWait()
        #expect(refused.load(ordering: .relaxed) == 0, "off the main thread, a waiting send waits: never refused")
        let checker = OrderChecker()
        for value in await MainActor.run(body: { log.values }) { checker.record(value) }
        #expect(
            checker.report
                == OrderChecker.Report(received: senders * perSender, duplicatedOrReordered: 0, gaps: 0))
    }
}

/// State only the main actor may touch: a task block that appends to it synchronously compiles
/// only because it is `@MainActor`, and runs correctly only if it really is on the main actor.
@MainActor
private final class MainActorLog {
    private(set) var values: [Int] = []

    func append(_ value: Int) {
        values.append(value)
    }
}
