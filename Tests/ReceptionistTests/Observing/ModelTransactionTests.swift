import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// `model.update { }`: several properties written as one atomic change.
@Suite struct ModelTransactionTests {
    struct Failure: Error {}

    @Test func anUpdateThatThrowsWritesNothing() {
        let download = Download()
        let seen = Recorder<Double>()
        let token = download.receptionist(for: \.progress).deliver(on: .immediate) { seen.append($0.newValue) }
        #expect(throws: Failure.self) {
            try download.update { download in
                download.progress = 1
                throw Failure()
            }
        }
        #expect(download.progress == 0)
        #expect(seen.values.isEmpty)
        token.cancel()
    }

    @Test func anUpdateThatOnlyReadsWritesNothing() {
        let download = Download()
        let target = ManualTarget()
        let token = download.receptionist(for: \.progress).deliver(on: target) { _ in }
        let read = download.update { $0.progress + 1 }
        #expect(read == 1)
        #expect(target.submissionCount == 0)
        token.cancel()
    }

    @Test func aConcurrentWriteToAPropertyItReadMakesItRunAgain() {
        let download = Download()
        let runs = AtomicValue<Int>(0)
        download.update { transaction in
            let progress = transaction.progress
            if runs.add(1, ordering: .relaxed).newValue == 1 {
                // Another thread writes what this run read: this run cannot commit.
                let written = DispatchSemaphore(value: 0)
                Thread {
                    download.progress = 10
                    written.signal()
                }.start()
                written.wait()
            }
            transaction.progress = progress + 1
        }
        #expect(runs.load(ordering: .relaxed) == 2)
        #expect(download.progress == 11, "the second run saw the other thread's write")
    }

    @Test func aConcurrentWriteToAPropertyItDidNotReadDoesNotMakeItRunAgain() {
        let download = Download()
        let runs = AtomicValue<Int>(0)
        download.update { transaction in
            runs.add(1, ordering: .relaxed)
            let written = DispatchSemaphore(value: 0)
            Thread {
                download.received = 5
                written.signal()
            }.start()
            written.wait()
            transaction.progress = 1
        }
        #expect(runs.load(ordering: .relaxed) == 1)
        #expect(download.progress == 1 && download.received == 5)
    }

    @Test func readModifyWriteFromFourThreadsLosesNothing() {
        let download = Download()
        let perThread = scaled(2_000)
        onThreads(4) { _ in
            for _ in 0..<perThread {
                download.update { $0.received += 1 }
            }
        }
        #expect(download.received == 4 * perThread)
    }

    @Test func writingTheModelDirectlyInsideTheUpdateIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let download = Download()
            download.update { transaction in
                _ = transaction.progress
                download.progress = 1
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("update(_:) body wrote the model directly"))
    }

    @Test func aKeyPathThatIsNotObservedIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thermometer = Thermometer()
            _ = Download()
            thermometer.update { $0.label = $0.label + "!" }  // fine
            final class Plain: ObservableModel, @unchecked Sendable { var count = 0 }
            Plain().update { $0.count = 1 }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("update(_:) a transaction's key path"))
        #expect(message.contains("is not an @Observed stored property"))
    }
}
