import Dispatch
import Foundation

@testable import Receptionist

/// A `SerialExecutor` as an event loop is one (swift-nio's `executor` of `channel.eventLoop`,
/// without the dependency): one thread of its own running a first-in, first-out list of jobs and
/// plain closures, in the order they were given.
///
/// It counts the jobs it ran, can tell whether code runs on its thread (``inEventLoop``, also
/// answered as SE-0471's `isIsolatingCurrentContext()`), and stops its thread with
/// ``shutdown()``, after running everything given before.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ToyEventLoop: SerialExecutor {
    private enum Item: Sendable {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
        case stop
    }

    private let items = Locked<[Item]>(uncounted: [])
    private let available = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// The loop's thread, set by the thread itself before it runs anything.
    private let thread = Locked<ObjectIdentifier?>(uncounted: nil)
    private let jobs = AtomicValue<Int>(0)

    init(name: String = "ToyEventLoop") {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The loop: runs each item in turn until ``shutdown()``'s marker.
    private func run() {
        let current = ObjectIdentifier(Thread.current)
        thread.withLock { $0 = current }
        while true {
            available.wait()
            let item = items.withLock { $0.removeFirst() }
            switch item {
            case .job(let job):
                jobs.add(1, ordering: .relaxed)
                job.runSynchronously(on: asUnownedSerialExecutor())
            case .closure(let body):
                body()
            case .stop:
                stopped.signal()
                return
            }
        }
    }

    private func append(_ item: Item) {
        items.withLock { $0.append(item) }
        available.signal()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        append(.job(UnownedJob(job)))
    }

    /// Runs `body` on the loop, after everything given before (as `EventLoop.execute`).
    func execute(_ body: @escaping @Sendable () -> Void) {
        append(.closure(body))
    }

    /// Whether the calling code runs on the loop's thread.
    var inEventLoop: Bool {
        let loopThread = thread.withLock { $0 }
        return loopThread == ObjectIdentifier(Thread.current)
    }

    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    func isIsolatingCurrentContext() -> Bool? { inEventLoop }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func checkIsolated() {
        precondition(inEventLoop, "ToyEventLoop: not on the loop's thread")
    }

    /// How many jobs (not closures) the loop ran.
    var jobsRun: Int { jobs.load(ordering: .relaxed) }

    /// Runs everything given so far, then stops the thread; returns once it stopped (`false` if
    /// it did not within `seconds`, a failure guard). Anything given later never runs.
    @discardableResult
    func shutdown(seconds: Double = 120) -> Bool {
        append(.stop)
        return stopped.wait(timeout: .now() + seconds) == .success
    }

    /// Waits until everything given to the loop so far has run (`false` after `seconds`, a
    /// failure guard).
    func drain(seconds: Double = 120) -> Bool {
        let done = DispatchSemaphore(value: 0)
        execute { done.signal() }
        return done.wait(timeout: .now() + seconds) == .success
    }
}
