import Dispatch
import Testing

@testable import Receptionist

extension DeliverySchedulerTests {
    @Suite struct ScheduledWorkTests {
        @Test func runsOnceWhenNotCancelled() {
            let recorder = Recorder<Int>()
            let work = ScheduledWork { recorder.append(1) }
            #expect(!work.isCancelled)
            work.run()
            work.run()
            #expect(recorder.values == [1])
        }

        @Test func cancelBeforeStartPreventsTheWorkAndReleasesIt() {
            let counter = LifetimeCounter()
            let recorder = Recorder<Int>()
            let work: ScheduledWork
            do {
                let witness = LifetimeWitness(counter)
                work = ScheduledWork {
                    witness.touch()
                    recorder.append(1)
                }
            }
            work.cancel()
            work.cancel()
            #expect(work.isCancelled)
            #expect(counter.deinitialized == 1)
            #expect(work.claim() == nil)
            work.run()
            #expect(recorder.values.isEmpty)
        }

        @Test func cancelAfterStartIsRecordedButChangesNothing() {
            let recorder = Recorder<Bool>()
            let handle = Locked<ScheduledWork?>(uncounted: nil)
            let work = ScheduledWork {
                let own = handle.withLock { $0 }
                own?.cancel()
                recorder.append(own?.isCancelled == true)
            }
            handle.withLock { $0 = work }
            work.run()
            #expect(recorder.values == [true])
            #expect(work.isCancelled)
            #expect(work.claim() == nil)
            handle.withLock { $0 = nil }
        }

        @Test func neverStartsAfterCancelReturnedWhenRacing() {
            final class Race: Sendable {
                let runs = AtomicValue<Int>(0)
                let cancelReturned = AtomicValue<Bool>(false)
                let startedAfterCancel = AtomicValue<Bool>(false)
            }
            for round in 0..<scaled(200) {
                let race = Race()
                let work = ScheduledWork { race.runs.add(1, ordering: .relaxed) }
                onThreads(4) { index in
                    if index == 0 {
                        work.cancel()
                        race.cancelReturned.store(true, ordering: .sequentiallyConsistent)
                    } else {
                        let wasCancelled = race.cancelReturned.load(ordering: .sequentiallyConsistent)
                        if let body = work.claim() {
                            if wasCancelled { race.startedAfterCancel.store(true, ordering: .relaxed) }
                            body()
                        }
                    }
                }
                let runs = race.runs.load(ordering: .relaxed)
                let startedAfterCancel = race.startedAfterCancel.load(ordering: .relaxed)
                #expect(runs <= 1, "round \(round)")
                #expect(!startedAfterCancel, "round \(round)")
                #expect(work.isCancelled)
            }
        }
    }
}
