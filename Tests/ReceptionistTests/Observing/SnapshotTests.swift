import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// A model with state that changes together.
final class Download: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed or a Sendable let.
    @Observed var progress = 0.0
    @Observed var status = "waiting"
    @Observed var received = 0
    let other: Thermometer
    let lifetime: LifetimeWitness?

    init(lifetime: LifetimeWitness? = nil) {
        self.other = Thermometer()
        self.lifetime = lifetime
    }
}

/// Observations of several properties together: every change is a state the model had.
@Suite struct SnapshotTests {
    typealias Change = ObservedChange<Download, (Double, String)>

    func values(_ changes: [Change]) -> [String] {
        changes.map { change in
            let old = change.oldValue.map { "\($0.0),\($0.1)" } ?? "-"
            let new = "\(change.newValue.0),\(change.newValue.1)"
            return "\(old)→\(new)"
        }
    }

    @Test func eachWriteIsOneSnapshotAndTheSnapshotsFormAChain() {
        let download = Download()
        let target = ManualTarget()
        let seen = Recorder<Change>()
        let token = download.receptionist(for: \.progress, \.status).deliver(on: target) { seen.append($0) }
        download.progress = 0.5
        download.status = "running"
        download.received = 10  // not in the snapshot
        download.progress = 1
        #expect(target.pendingCount == 1, "one hop for the burst")
        target.runAll()
        #expect(
            values(seen.values) == ["0.0,waiting→0.5,waiting", "0.5,waiting→0.5,running", "0.5,running→1.0,running"])
        #expect(seen.values.allSatisfy { $0.object === download && !$0.isInitial && $0.coalescedCount == 1 })
        #expect(token.statistics.delivered == 3)
    }

    @Test func anUpdateOfSeveralPropertiesIsOneChangeForTheSnapshotAndOnePerProperty() {
        let download = Download()
        let target = ManualTarget()
        let snapshots = Recorder<Change>()
        let progress = Recorder<ObservedChange<Download, Double>>()
        let statuses = Recorder<ObservedChange<Download, String>>()
        let tokens = [
            download.receptionist(for: \.progress, \.status).deliver(on: target) { snapshots.append($0) },
            download.receptionist(for: \.progress).deliver(on: target) { progress.append($0) },
            download.receptionist(for: \.status).deliver(on: target) { statuses.append($0) },
        ]
        let result = download.update { download in
            download.progress = 1
            download.status = "done"
            download.progress = 1.5  // written twice: the last write wins, one change
            return download.progress
        }
        #expect(result == 1.5, "the transaction reads its own writes")
        target.runAll()
        #expect(values(snapshots.values) == ["0.0,waiting→1.5,done"])
        #expect(progress.values.map { "\($0.oldValue!)→\($0.newValue)" } == ["0.0→1.5"])
        #expect(statuses.values.map { "\($0.oldValue!)→\($0.newValue)" } == ["waiting→done"])
        #expect(download.progress == 1.5 && download.status == "done")
        for token in tokens { token.cancel() }
    }

    @Test func theInitialSnapshotStartsTheChain() {
        let download = Download()
        download.status = "running"
        let target = ManualTarget()
        let seen = Recorder<Change>()
        let token = download.receptionist(for: \.progress, \.status, options: [.initial, .old])
            .deliver(on: target) { seen.append($0) }
        download.progress = 0.25
        target.runAll()
        #expect(values(seen.values) == ["-→0.0,running", "0.0,running→0.25,running"])
        #expect(seen.values.first?.isInitial == true)
        token.cancel()
    }

    @Test func theChangesKeyPathReadsTheSnapshotFromTheModel() {
        let download = Download()
        let seen = Recorder<Change>()
        let token = download.receptionist(for: \.progress, \.status).deliver(on: .immediate) { seen.append($0) }
        download.progress = 0.75
        let keyPath = seen.values[0].keyPath
        download.status = "paused"
        #expect(download[keyPath: keyPath] == (0.75, "paused"))
        #expect(keyPath == download.receptionist(for: \.progress, \.status).source.key.keyPath)
        token.cancel()
    }

    @Test func threePropertiesAndCoalescing() {
        let download = Download()
        let target = ManualTarget()
        let seen = Recorder<ObservedChange<Download, (Double, String, Int)>>()
        let token = download.receptionist(for: \.progress, \.status, \.received).coalesce()
            .deliver(on: target) { seen.append($0) }
        download.received = 1
        download.progress = 0.5
        download.update {
            $0.status = "done"
            $0.received = 2
        }
        target.runAll()
        #expect(seen.count == 1)
        let change = seen.values[0]
        #expect(change.coalescedCount == 3)
        #expect(change.oldValue.map { "\($0)" } == "(0.0, \"waiting\", 0)")
        #expect("\(change.newValue)" == "(0.5, \"done\", 2)")
        token.cancel()
    }

    @Test func stagesRunOnSnapshots() {
        let download = Download()
        let seen = Recorder<String>()
        let token = download.receptionist(for: \.progress, \.status)
            .map { "\($0.newValue.0) \($0.newValue.1)" }
            .filter { !$0.hasPrefix("0.0") }
            .deliver(on: .immediate) { seen.append($0) }
        download.status = "running"
        download.progress = 0.5
        #expect(seen.values == ["0.5 running"])
        token.cancel()
    }

    @Test func theModelIsNotKeptAliveAndItsDeallocationFinishesTheSnapshot() {
        let lifetimes = LifetimeCounter()
        var download: Download? = Download(lifetime: LifetimeWitness(lifetimes))
        let target = ManualTarget()
        let seen = Recorder<Double>()  // values only: a recorded change would keep its model
        let token = download!.receptionist(for: \.progress, \.status).deliver(on: target) {
            seen.append($0.newValue.0)
        }
        download!.progress = 0.5
        download = nil
        #expect(lifetimes.deinitialized == 0, "a change waiting for delivery keeps its model")
        target.runAll()
        #expect(seen.count == 1)
        #expect(lifetimes.deinitialized == 1, "delivered: the model goes")
        #expect(token.isFinished, "and the observation finishes with it")
    }

    @Test(.exitTest) func aPathThroughAnotherObjectIsRejectedNamingTheParameter() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Download().receptionist(for: \.progress, \.other.celsius)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("receptionist(for:_:options:) second \\Download.other."))
        #expect(message.contains("is not an @Observed stored property declared in Download"))
    }

    @Test(.exitTest) func aPropertyThatIsNotObservedIsRejectedNamingTheParameter() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Download().receptionist(for: \.progress, \.status, \.lifetime)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("receptionist(for:_:_:options:) third"))
        #expect(message.contains("is not an @Observed stored property"))
    }

    @Test(.exitTest) func theSamePropertyTwiceIsRejectedNamingTheParameter() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Download().receptionist(for: \.progress, \.status, \.progress)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("receptionist(for:_:_:options:) third names the same property as first"))
    }
}
