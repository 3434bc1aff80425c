import Dispatch
import Foundation
import Testing

@testable import Receptionist

final class Thermometer: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed or a Sendable let.
    @Observed var celsius = 20.0
    @Observed var label = "idle"
    let serial: Int
    let lifetime: LifetimeWitness?

    var fahrenheit: Double { celsius * 9 / 5 + 32 }

    init(serial: Int = 0, lifetime: LifetimeWitness? = nil) {
        self.serial = serial
        self.lifetime = lifetime
    }
}

@Suite struct ObservedPropertyTests {
    @Test func deliversOldAndNewValuesWithTheObjectAndKeyPath() {
        let thermometer = Thermometer()
        let target = ManualTarget()
        let seen = Recorder<ObservedChange<Thermometer, Double>>()
        let token = thermometer.receptionist(for: \.celsius).deliver(on: target) { seen.append($0) }
        thermometer.celsius = 21
        thermometer.celsius = 22.5
        target.runAll()
        let changes = seen.values
        #expect(changes.map(\.oldValue) == [20, 21])
        #expect(changes.map(\.newValue) == [21, 22.5])
        #expect(changes.allSatisfy { $0.object === thermometer && !$0.isInitial })
        #expect(changes.allSatisfy { $0.keyPath == \Thermometer.celsius })
        #expect(token.statistics.delivered == 2)
    }

    @Test func optionsChooseWhatAChangeCarries() {
        let thermometer = Thermometer()
        let target = ManualTarget()
        let initialOnly = Recorder<ObservedChange<Thermometer, Double>>()
        let newOnly = Recorder<ObservedChange<Thermometer, Double>>()
        let bare = Recorder<ObservedChange<Thermometer, Double>>()
        let tokens = [
            thermometer.receptionist(for: \.celsius, options: .initial)
                .deliver(on: target) { initialOnly.append($0) },
            thermometer.receptionist(for: \.celsius, options: []).deliver(on: target) { newOnly.append($0) },
            thermometer.receptionist(for: \.celsius).deliver(on: target) { bare.append($0) },
        ]
        thermometer.celsius = 30
        target.runAll()
        #expect(initialOnly.values.map(\.isInitial) == [true, false])
        #expect(initialOnly.values.map(\.newValue) == [20, 30])
        #expect(initialOnly.values.map(\.oldValue) == [nil, nil])
        #expect(newOnly.values.map(\.newValue) == [30])
        #expect(newOnly.values.map(\.oldValue) == [nil])
        // The default options are [.old].
        #expect(bare.values.map(\.oldValue) == [20])
        #expect(bare.values.map(\.newValue) == [30])
        #expect(tokens.count == 3)
    }

    @Test func theInitialValueStartsTheChain() {
        let thermometer = Thermometer()
        thermometer.celsius = 5
        let target = ManualTarget()
        let seen = Recorder<ObservedChange<Thermometer, Double>>()
        let token = thermometer.receptionist(for: \.celsius, options: [.initial, .old])
            .deliver(on: target) { seen.append($0) }
        thermometer.celsius = 6
        thermometer.$celsius.update { $0 *= 2 }
        target.runAll()
        let changes = seen.values
        #expect(changes.map(\.newValue) == [5, 6, 12])
        #expect(changes.dropFirst().map(\.oldValue) == [5, 6])
        #expect(token.statistics.received == 3)
    }

    @Test func propertiesAreObservedIndependently() {
        let thermometer = Thermometer()
        let target = ManualTarget()
        let labels = Recorder<String>()
        let token = thermometer.receptionist(for: \.label).deliver(on: target) { labels.append($0.newValue) }
        thermometer.celsius = 99
        thermometer.label = "hot"
        target.runAll()
        #expect(labels.values == ["hot"])
        _ = token
    }

    @Test func readModifyWriteThroughTheProjectionIsAtomic() {
        let thermometer = Thermometer()
        thermometer.celsius = 0
        let queue = DispatchQueue(label: "consumer")
        let chainBreaks = AtomicValue<Int>(0)
        let delivered = AtomicValue<Int>(0)
        let token = thermometer.receptionist(for: \.celsius).deliver(on: queue) { change in
            if change.newValue != change.oldValue! + 1 { chainBreaks.add(1, ordering: .relaxed) }
            delivered.add(1, ordering: .relaxed)
        }
        let perThread = 5_000
        onThreads(4) { _ in
            for _ in 0..<perThread { thermometer.$celsius.update { $0 += 1 } }
        }
        drainQueue(queue)
        // The drain may have been resubmitted after its budget: wait until it is idle.
        while token.statistics.pending > 0 || delivered.load(ordering: .relaxed) < 4 * perThread {
            drainQueue(queue)
        }
        #expect(thermometer.celsius == Double(4 * perThread), "no increment lost")
        #expect(delivered.load(ordering: .relaxed) == 4 * perThread)
        #expect(chainBreaks.load(ordering: .relaxed) == 0)
        #expect(thermometer.$celsius.value == thermometer.celsius)
    }

    @Test func updateRunsItsClosureOutsideTheLock() {
        let thermometer = Thermometer()
        // Reading and writing the same property from inside update would deadlock if the
        // closure ran under the property's lock.
        let result = thermometer.$celsius.update { value -> Double in
            let seen = thermometer.celsius
            thermometer.label = "updating"
            value = seen + 1
            return seen
        }
        #expect(result == 20)
        #expect(thermometer.celsius == 21)
    }

    @Test func aTaskBlockMayMutateTheModelItObserves() {
        let thermometer = Thermometer()
        let seen = Recorder<Double>()
        let token = thermometer.receptionist(for: \.celsius).deliver(on: .immediate) { change in
            seen.append(change.newValue)
            if change.newValue < 25 { change.object.celsius = change.newValue + 1 }
        }
        thermometer.celsius = 21
        #expect(seen.values == [21, 22, 23, 24, 25])
        #expect(thermometer.celsius == 25)
        token.cancel()
    }

    @Test func aTaskBlockMayStartAnotherObservation() {
        let thermometer = Thermometer()
        let target = ManualTarget()
        let labels = Recorder<String>()
        let inner = Locked<ObservationToken?>(uncounted: nil)
        let outer = thermometer.receptionist(for: \.celsius).deliver(on: target) { change in
            let token = change.object.receptionist(for: \.label).deliver(on: target) { labels.append($0.newValue) }
            inner.withLock { $0 = token }
            change.object.label = "seen \(change.newValue)"
        }
        thermometer.celsius = 1
        target.runAll()
        #expect(labels.values == ["seen 1.0"])
        outer.cancel()
        inner.withLock { $0 = nil }
    }

    @Test func cancellingDetachesFromTheProperty() {
        let thermometer = Thermometer()
        let target = ManualTarget()
        let seen = Recorder<Double>()
        let token = thermometer.receptionist(for: \.celsius).deliver(on: target) { seen.append($0.newValue) }
        let storage = thermometer.$celsius
        #expect(storage.observerCount == 1)
        thermometer.celsius = 1
        token.cancel()
        #expect(storage.observerCount == 0)
        thermometer.celsius = 2
        target.runAll()
        #expect(seen.values.isEmpty)
        #expect(token.isCancelled)
        #expect(token.statistics.discarded == 1)
    }

    @Test func releasingTheTokenCancels() {
        let thermometer = Thermometer()
        let target = ManualTarget()
        let seen = Recorder<Double>()
        var token: ObservationToken? = thermometer.receptionist(for: \.celsius)
            .deliver(on: target) { seen.append($0.newValue) }
        thermometer.celsius = 1
        _ = token
        token = nil
        thermometer.celsius = 2
        target.runAll()
        #expect(seen.values.isEmpty)
        #expect(thermometer.$celsius.observerCount == 0)
    }

    @Test func theObservationDoesNotKeepTheModelAlive() {
        let counter = LifetimeCounter()
        let target = ManualTarget()
        let seen = Recorder<Double>()
        var thermometer: Thermometer? = Thermometer(lifetime: LifetimeWitness(counter))
        let token = thermometer!.receptionist(for: \.celsius).deliver(on: target) { seen.append($0.newValue) }
        thermometer!.celsius = 1
        thermometer!.celsius = 2
        thermometer = nil
        #expect(counter.deinitialized == 0, "pending changes keep their object alive")
        #expect(!token.isFinished)
        target.runAll()
        #expect(seen.values == [1, 2], "what was pending is delivered")
        #expect(counter.deinitialized == 1, "then the model goes")
        #expect(token.isFinished, "and the observation ends by itself")
        token.cancel()
        #expect(!token.isCancelled, "cancel after the end is a no-op")
    }

    @Test func theOwnerMayBeDeallocatedWithNothingPending() {
        let counter = LifetimeCounter()
        var thermometer: Thermometer? = Thermometer(lifetime: LifetimeWitness(counter))
        let token = thermometer!.receptionist(for: \.celsius).deliver(on: DispatchQueue.main) { _ in }
        thermometer = nil
        #expect(counter.deinitialized == 1)
        #expect(token.isFinished)
    }

    @Test func mainActorDelivery() async {
        let thermometer = Thermometer()
        let done = DispatchSemaphore(value: 0)
        let seen = Recorder<Double>()
        let token = thermometer.receptionist(for: \.celsius).deliver(on: .mainActor) { change in
            MainActor.preconditionIsolated()
            seen.append(change.newValue)
            if change.newValue == 3 { done.signal() }
        }
        DispatchQueue.global().async {
            for value in 1...3 { thermometer.celsius = Double(value) }
        }
        #expect(wait(done))
        #expect(seen.values == [1, 2, 3])
        token.cancel()
    }

    @Test(.exitTest) func aComputedPropertyIsRejectedWithAMessageNamingTheKeyPath() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Thermometer().receptionist(for: \.fahrenheit)
        }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Thermometer().receptionist(for: \.serial)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("keyPath"))
        #expect(message.contains("serial"))
        #expect(message.contains("not an @Observed stored property declared in Thermometer"))
    }
}

@Suite struct ObservableValueTests {
    @Test func aBoxIsObservedWithItselfAsTheObject() {
        let box = ObservableValue(1)
        let target = ManualTarget()
        let seen = Recorder<ObservedChange<ObservableValue<Int>, Int>>()
        let token = box.receptionist(options: [.initial, .old]).deliver(on: target) { seen.append($0) }
        box.value = 2
        box.update { $0 += 40 }
        target.runAll()
        #expect(seen.values.map(\.newValue) == [1, 2, 42])
        #expect(seen.values.map(\.oldValue) == [nil, 1, 2])
        #expect(seen.values.allSatisfy { $0.object === box && $0.keyPath == \ObservableValue<Int>.value })
        #expect(token.statistics.delivered == 3)
    }

    @Test func updateReturnsItsResultAndRetriesOnAConcurrentWrite() {
        let box = ObservableValue(0)
        let runs = AtomicValue<Int>(0)
        let result = box.update { value -> String in
            if runs.add(1, ordering: .relaxed).newValue == 1 {
                // Another thread writes between the read and the commit.
                onThreads(1) { _ in box.value = 100 }  // on another thread, waited for
            }
            value += 1
            return "ran"
        }
        #expect(result == "ran")
        #expect(runs.load(ordering: .relaxed) == 2)
        #expect(box.value == 101, "the update applied to the newer value")
    }

    @Test(.exitTest) func anUpdateThatWritesItsOwnBoxIsStoppedWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = ObservableValue(0)
            box.update { value in
                box.value = 5
                value += 1
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("update(_:) body wrote the value it is updating"))
    }

    @Test func deallocatingTheBoxFinishesItsObservations() {
        var box: ObservableValue<Int>? = ObservableValue(0)
        let token = box!.receptionist().deliver(on: ManualTarget()) { _ in }
        box = nil
        #expect(token.isFinished)
    }
}

@Suite struct ConfigurationTests {
    @Test(.exitTest) func boundedCapacityMustBePositive() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = BufferPolicy.dropOldest(capacity: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("capacity must be at least 1, got 0"))
        #expect(message.contains("dropOldest(capacity:)"))
        await #expect(processExitsWith: .failure) {
            _ = BufferPolicy.dropNewest(capacity: -5)
        }
    }

    @Test func validPoliciesDescribeThemselves() {
        #expect(BufferPolicy.unbounded.description == "unbounded")
        #expect(BufferPolicy.dropOldest(capacity: 8).description == "dropOldest(capacity: 8)")
        #expect(BufferPolicy.dropNewest(capacity: 1).capacity == 1)
        #expect(BufferPolicy.unbounded.capacity == nil)
    }
}
