import Dispatch
import Foundation
import Testing

@testable import Receptionist

#if canImport(Darwin)
import Darwin
#endif

/// The quality of service of drains and of a pipeline's own queues: taken from the target, never
/// from the sender that started a burst. See ThreadingGuarantees.md, "Quality of service".
@Suite struct QualityOfServiceTests {
    // MARK: - qos(of:)

    @Test(arguments: [DispatchQoS.QoSClass.userInteractive, .userInitiated, .default, .utility, .background])
    func aDispatchQueueWithAQoSGivesIt(_ qosClass: DispatchQoS.QoSClass) {
        let queue = DispatchQueue(label: "qos", qos: DispatchQoS(qosClass: qosClass, relativePriority: 0))
        #expect(qos(of: queue).qosClass == reported(qosClass))
        #expect(qos(of: DispatchQueue.global(qos: qosClass)).qosClass == reported(qosClass))
    }

    @Test func aDispatchQueueWithoutAQoSGivesDefault() {
        #expect(qos(of: DispatchQueue(label: "no-qos")).qosClass == .default)
        #expect(qos(of: DispatchQueue(label: "no-qos", attributes: .concurrent)).qosClass == .default)
    }

    @Test func theMainQueueGivesUserInteractive() {
        #expect(qos(of: DispatchQueue.main).qosClass == .userInteractive)
    }

    @Test func anOperationQueueGivesItsQualityOfService() {
        let queue = OperationQueue()
        #expect(qos(of: queue).qosClass == .default)
        let pairs: [(QualityOfService, DispatchQoS.QoSClass)] = [
            (.userInteractive, .userInteractive), (.userInitiated, .userInitiated), (.default, .default),
            (.utility, .utility), (.background, .default),  // `.background` may mean "never set"
        ]
        for (service, expected) in pairs {
            queue.qualityOfService = service
            #expect(qos(of: queue).qosClass == expected)
        }
        #expect(qos(of: OperationQueue.main).qosClass == .userInteractive)
    }

    @Test func anActorTheImmediateTargetAndOtherTargetsGiveDefault() {
        #expect(qos(of: ActorTarget(actor: PriorityProbe())).qosClass == .default)
        #expect(qos(of: ImmediateTarget()).qosClass == .default)
        #expect(qos(of: ManualTarget()).qosClass == .default)
    }

    // MARK: - A pipeline's own queues

    @Test func aBatchStagesDefaultTimerQueueTakesTheTargetsQoS() throws {
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 10, every: .seconds(60))
            .deliver(on: DispatchQueue(label: "utility-target", qos: .utility)) { _ in }
        let stages = try #require(stagedPipeline(of: receptionist))
        let queues = stages.defaultTimerQueues
        #expect(queues.count == 1)
        #expect(queues.first?.qos.qosClass == .utility)
        #expect(queues.first?.label == "Receptionist.stageTimers")
        #expect(stages.stageQueue.qos.qosClass == .utility)
        #expect(stages.stageQueue.label == "Receptionist.stages")
    }

    @Test func everyTimeBasedStageGetsAQueueOfItsOwnAtTheTargetsQoS() throws {
        let receptionist = Receptionist.pipeline(of: Int.self)
            .throttle(for: .seconds(60), latest: true)
            .debounce(for: .seconds(60))
            .batch(every: .seconds(60))
            .deliver(on: OperationQueue.main) { _ in }
        let queues = try #require(stagedPipeline(of: receptionist)).defaultTimerQueues
        #expect(queues.count == 3)
        #expect(queues.allSatisfy { $0.qos.qosClass == reported(.userInteractive) })
        #expect(Set(queues.map(ObjectIdentifier.init)).count == 3)
    }

    @Test func eachStartOfOnePipelineGetsNewTimerQueues() throws {
        let pipeline = Receptionist.pipeline(of: Int.self).batch(every: .seconds(60))
        let first = pipeline.deliver(on: .immediate) { _ in }
        let second = pipeline.deliver(on: DispatchQueue(label: "background", qos: .background)) { _ in }
        let firstQueue = try #require(stagedPipeline(of: first)?.defaultTimerQueues.first)
        let secondQueue = try #require(stagedPipeline(of: second)?.defaultTimerQueues.first)
        #expect(firstQueue !== secondQueue)
        #expect(firstQueue.qos.qosClass == .default)
        #expect(secondQueue.qos.qosClass == .background)
    }

    @Test func anExplicitSchedulerIsLeftAlone() throws {
        let manual = ManualScheduler()
        let recorder = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 10, every: .milliseconds(5), scheduler: manual)
            .deliver(on: .immediate) { recorder.append($0) }
        receptionist.send(1)
        receptionist.send(2)
        manual.advance(by: .milliseconds(5))
        #expect(recorder.values == [[1, 2]])
        #expect(try #require(stagedPipeline(of: receptionist)).defaultTimerQueues.isEmpty)

        let timers = StageTimers(deliveringTo: DispatchQueue(label: "utility-target", qos: .utility))
        #expect(timers.scheduler(for: manual) as? ManualScheduler === manual)
        let queue = DispatchQueue(label: "explicit")
        let explicit = timers.scheduler(for: QueueScheduler.on(queue)) as? QueueScheduler
        #expect(explicit?.target as? DispatchQueue === queue)
        #expect(explicit?.isStageDefault == false)
        #expect(timers.defaultTimerQueues.isEmpty)
    }

    @Test func theDefaultTimerQueueFires() {
        let delivered = DispatchSemaphore(value: 0)
        let recorder = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(every: .milliseconds(1))
            .deliver(on: DispatchQueue(label: "utility-target", qos: .utility)) { batch in
                recorder.append(batch)
                delivered.signal()
            }
        receptionist.send(7)
        #expect(wait(delivered))
        #expect(recorder.values == [[7]])
        withExtendedLifetime(receptionist) {}
    }

    // MARK: - Drains

    /// Linux's libdispatch has no `qos_class_self()` and runs every queue's work without a thread
    /// QoS, so what a drain runs at cannot be observed there: this checks the flags it is
    /// submitted with (`.noQoS`: the block is not given the submitting thread's QoS).
    @Test func aDispatchQueueDrainIsSubmittedWithoutTheSendersQoS() {
        #expect(DispatchQueue.drainFlags == .noQoS)
    }

    #if canImport(Darwin)
    @Test func aDrainOnAQueueWithoutQoSDoesNotRunAtTheSendersQoS() {
        let delivered = DispatchSemaphore(value: 0)
        let seen = Locked<UInt32?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: DispatchQueue(label: "no-qos")) { _ in
            seen.withLock { $0 = qos_class_self().rawValue }
            delivered.signal()
        }
        DispatchQueue.global(qos: .userInteractive).async { receptionist.send(1) }
        #expect(wait(delivered))
        #expect(seen.withLock { $0 } != QOS_CLASS_USER_INTERACTIVE.rawValue)
    }
    #endif

    @Test func anOperationQueueDrainCarriesTheQueuesQualityOfService() {
        let queue = RecordingOperationQueue()
        let delivered = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: queue) { _ in delivered.signal() }
        receptionist.send(1)
        #expect(wait(delivered))
        queue.waitUntilAllOperationsAreFinished()  // idle again: the next send submits a drain
        queue.qualityOfService = .utility
        receptionist.send(2)
        #expect(wait(delivered))
        queue.waitUntilAllOperationsAreFinished()
        queue.qualityOfService = .background  // may mean "never set": the operation keeps .default
        receptionist.send(3)
        #expect(wait(delivered))
        #expect(queue.submitted == [.default, .utility, .default])
    }

    @Test(.timeLimit(.minutes(1)))
    func anActorDrainRunsAtMediumPriorityOutsideTheSendersDrain() async {
        let (stream, continuation) = AsyncStream.makeStream(of: DrainContext.self)
        let sendersDrain = DrainMark()
        let receptionist = Receptionist<Int>(on: PriorityProbe()) { _, _ in
            continuation.yield(DrainContext(priority: Task.currentPriority, inSendersDrain: sendersDrain.isCurrent))
        }
        await Task(priority: .high) {
            sendersDrain.run { _ = receptionist.send(1) }
        }.value
        var iterator = stream.makeAsyncIterator()
        let context = await iterator.next()
        #expect(context?.priority == .medium)
        #expect(context?.inSendersDrain == false, "the drain is not marked as running in the sender's drain")
        withExtendedLifetime(receptionist) {}
    }
}

/// The class a queue created at `qosClass` reports: the same, except on Linux, whose libdispatch
/// has no user-interactive class and reports `.userInitiated` for it.
private func reported(_ qosClass: DispatchQoS.QoSClass) -> DispatchQoS.QoSClass {
    #if canImport(Darwin)
    qosClass
    #else
    qosClass == .userInteractive ? .userInitiated : qosClass
    #endif
}

/// The staged pipeline behind `receptionist`, if it has stages.
private func stagedPipeline<Event>(of receptionist: Receptionist<Event>) -> StagedPipeline<Event>? {
    receptionist.stagedPipeline
}

private actor PriorityProbe {}

private struct DrainContext: Sendable {
    let priority: TaskPriority
    let inSendersDrain: Bool
}

/// Records the quality of service of every operation added to it.
private final class RecordingOperationQueue: OperationQueue, @unchecked Sendable {
    private let services = Locked<[QualityOfService]>(uncounted: [])

    override func addOperation(_ operation: Operation) {
        services.withLock { $0.append(operation.qualityOfService) }
        super.addOperation(operation)
    }

    var submitted: [QualityOfService] { services.withLock { $0 } }
}
