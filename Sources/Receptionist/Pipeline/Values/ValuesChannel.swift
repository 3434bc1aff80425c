/// The delivery target of a pipeline consumed with `for await`: it hands each output over inside
/// the consumer's `next()`.
///
/// The outputs wait in the delivery receptionist's own buffer, with its policy, merge and
/// statistics. This target only holds the receptionist's one submitted drain until the consumer
/// asks for an element, and the consumer runs it: with a drain budget of 1, a drain hands one
/// output to the handler, which puts it in ``State/element`` for `next()` to return, and submits
/// the next drain if more are waiting. So no thread hop is added, and nothing leaves the buffer
/// before the consumer asks for it: a bounded policy drops what the consumer did not take in time,
/// and a coalescing receptionist folds outputs while the consumer is busy.
final class ValuesChannel<Element: Sendable>: DeliveryTarget {
    struct State {
        /// The receptionist's drain, submitted and not yet run.
        var drain: (@Sendable () -> Void)?
        /// The output the running drain handed over.
        var element: Element?
        /// A consumer waiting for a drain or the end.
        var waiter: CheckedContinuation<Void, Never>?
        /// The receptionist let go of its handler (it finished or was cancelled), or the consumer
        /// went away.
        var isEnded = false
        /// A `next()` is running; they must not overlap.
        var isIterating = false
        /// The consumer went away (its iterator or the sequence was dropped): every later `next()`
        /// returns `nil`, whatever a drain still hands over.
        var isTerminated = false
    }

    enum Step {
        case run(@Sendable () -> Void)
        case end
        case wait
    }

    private let state = Locked(State())

    /// A delivery that hands its outputs to a new channel, one per drain.
    static func delivery(policy: BufferPolicy) -> (delivery: Delivery<Element>, channel: ValuesChannel<Element>) {
        let channel = ValuesChannel()
        let feed = Feed(channel)
        var delivery = Delivery(on: channel, buffering: policy) { element in feed.hand(element) }
        delivery.drainBudget = 1
        return (delivery, channel)
    }

    /// Held by the receptionist's handler: when the receptionist releases the handler (it
    /// finished and delivered everything, or was cancelled), the channel ends.
    private final class Feed: Sendable {
        let channel: ValuesChannel<Element>

        init(_ channel: ValuesChannel<Element>) {
            self.channel = channel
        }

        func hand(_ element: Element) {
            channel.state.withLock { $0.element = element }
        }

        deinit {
            channel.end()
        }
    }

    /// Keeps the drain for the consumer, and wakes it if it waits.
    func submit(_ work: @escaping @Sendable () -> Void) {
        let waiter = state.withLock { state in
            precondition(state.drain == nil, "Internal inconsistency: two drains submitted")
            state.drain = work
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    /// Marks the start of a `next()`.
    func beginIteration() {
        state.withLock { state in
            validate(
                !state.isIterating,
                "PipelineValues was iterated by two tasks at once; iterate it from one task at a time"
            )
            state.isIterating = true
        }
    }

    func endIteration() {
        state.withLock { $0.isIterating = false }
    }

    /// What the consumer does next: run the waiting drain, or end, or wait.
    func step() -> Step {
        state.withLock { state in
            if state.isTerminated { return .end }
            if let drain = state.drain {
                state.drain = nil
                return .run(drain)
            }
            return state.isEnded ? .end : .wait
        }
    }

    /// The output the drain just handed over, if any.
    func takeElement() -> Element? {
        state.withLockThenRelease { state in
            let element = state.element.take()
            // After the consumer went away, what a drain handed over is released, not returned.
            return state.isTerminated ? (nil, released: element) : (element, released: nil)
        }
    }

    /// Suspends until a drain is submitted or the channel ends.
    func waitForWork(isolation actor: isolated (any Actor)?) async {
        await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.drain != nil || state.isEnded { return true }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// The receptionist is done: the consumer gets what was handed over, then `nil`.
    func end() {
        let waiter = state.withLock { state in
            state.isEnded = true
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    /// The consumer is done (its receptionist was cancelled first): wakes it if it waits, and runs a
    /// drain it will never run, which stops at once and lets go of the receptionist.
    func terminate() {
        let (waiter, drain) = state.withLock { state in
            state.isEnded = true
            state.isTerminated = true
            defer { state.drain = nil }
            return (state.takeWaiter(), state.drain)
        }
        waiter?.resume()
        drain?()
    }
}

extension ValuesChannel.State {
    mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
        defer { waiter = nil }
        return waiter
    }
}
