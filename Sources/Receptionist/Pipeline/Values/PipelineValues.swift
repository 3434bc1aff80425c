/// The outputs of a pipeline, as an asynchronous sequence: consume them with `for await`.
///
/// Get one from a pipeline's `values()` instead of `deliver(on:)`:
///
/// ```swift
/// // @unchecked: its only stored property is an @Observed, guarded by the model's lock.
/// final class Thermometer: ObservableModel, @unchecked Sendable { @Observed var celsius = 20.0 }
/// let thermometer = Thermometer()
/// for await batch in thermometer.receptionist(for: \.celsius)
///     .map(\.newValue)
///     .batch(count: 10, every: .seconds(1))
///     .values()
/// {
///     print(batch)
/// }
///
/// let (receptionist, readings) = Receptionist.pipeline(of: Double.self).values()
/// Thread { receptionist.send(21.5) }.start()      // any thread
/// for await reading in readings { print(reading) }
/// ```
///
/// ## Contract
/// - **Order:** outputs come in the order the pipeline produced them, each once.
/// - **No extra hop:** an output is handed over inside the consumer's `next()`, on the
///   consumer's executor. Stages run as ``Pipeline`` describes.
/// - **Buffering:** outputs wait for the consumer in the pipeline's delivery buffer, and
///   leave it only when the consumer asks for the next one. The ``BufferPolicy`` given to
///   `values(buffering:)` bounds it: ``BufferPolicy/unbounded`` keeps every output;
///   ``BufferPolicy/dropOldest(capacity:)`` keeps the latest `capacity` waiting outputs;
///   ``BufferPolicy/dropNewest(capacity:)`` keeps the first `capacity` and drops those that arrive
///   while it is full. Every dropped output is counted in ``ReceptionistStatistics/dropped``
///   (see ``statistics``). After `coalesce()`, at most one output waits, and those made while it
///   waits are folded into it.
/// - **End:** the sequence ends (`next()` returns `nil`) after the last output, when the pipeline
///   finishes: on ``Receptionist/finish()``, or when the observed object is deallocated.
///   When the pipeline is cancelled (its receptionist cancelled, or released without finishing),
///   it ends at once, and outputs still waiting are discarded.
/// - **Cancel:** cancelling the consuming task, or dropping the iterator (or the sequence, if it
///   was never iterated), cancels the pipeline: an observation stops, a receptionist is cancelled
///   (its `send` returns `false`), waiting outputs are discarded, and `next()` returns `nil`.
/// - **One pass, one task:** the sequence is consumed once: a second iterator made after the first
///   was dropped returns `nil`. Calling `next()` from two tasks at once stops the program.
public struct PipelineValues<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = Never

    let subscription: ValuesSubscription<Element>

    /// Finishes the pipeline: what its source takes after this is not delivered.
    private let finishSource: @Sendable () -> Void

    init(
        channel: ValuesChannel<Element>,
        statistics: @escaping @Sendable () -> ReceptionistStatistics,
        finish: @escaping @Sendable () -> Void,
        stop: @escaping @Sendable () -> Void
    ) {
        subscription = ValuesSubscription(channel: channel, statistics: statistics, stop: stop)
        finishSource = finish
    }

    /// Ends the sequence without losing anything: the source stops (an observation takes no more
    /// changes, the receptionist no more events), the stages hand on what they hold (a partial
    /// batch, a held throttle value), and the sequence ends after the last output.
    ///
    /// Callable from any thread, for example from the task that iterates the sequence, or from
    /// another one that decides the consumer is done. Without it, a `for await` over a pipeline
    /// whose source never ends waits for ever for what a stage holds — a count-only batch waits
    /// for its last, partial batch until the model is deallocated.
    public func finish() {
        finishSource()
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(Iteration(subscription))
    }

    /// Counts of the outputs that reached the buffer in front of the consumer: `delivered` counts
    /// those `next()` returned; `dropped` those the buffer policy dropped; `discarded` those
    /// waiting when the pipeline was cancelled; `coalesced` those folded by `coalesce()`.
    public var statistics: ReceptionistStatistics {
        subscription.statistics()
    }

    /// Hands over the pipeline's outputs, one per `next()`.
    public struct Iterator: AsyncIteratorProtocol {
        let iteration: Iteration

        init(_ iteration: Iteration) {
            self.iteration = iteration
        }

        /// The next output, or `nil` once the pipeline ended or the task was cancelled.
        public mutating func next() async -> Element? {
            await iteration.subscription.next(isolation: nil)  // check-apple-availability: ignore (our own)
        }

        /// The next output, handed over on `actor`; `nil` once the pipeline ended or the task was
        /// cancelled.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await iteration.subscription.next(isolation: actor)  // check-apple-availability: ignore (our own)
        }
    }

    /// Cancels the pipeline when the iterator that holds it is dropped.
    final class Iteration: Sendable {
        let subscription: ValuesSubscription<Element>

        init(_ subscription: ValuesSubscription<Element>) {
            self.subscription = subscription
        }

        deinit {
            subscription.cancel()
        }
    }
}

/// The consumer's side of a ``PipelineValues``: what to pull from, and how to stop the pipeline.
final class ValuesSubscription<Element: Sendable>: Sendable {
    let channel: ValuesChannel<Element>
    /// The statistics of the pipeline's delivery, the buffer in front of the consumer.
    let statistics: @Sendable () -> ReceptionistStatistics
    /// Cancels the pipeline: the observation's token, or the receptionist (held weakly).
    private let stop: @Sendable () -> Void

    init(
        channel: ValuesChannel<Element>,
        statistics: @escaping @Sendable () -> ReceptionistStatistics,
        stop: @escaping @Sendable () -> Void
    ) {
        self.channel = channel
        self.statistics = statistics
        self.stop = stop
    }

    deinit {
        cancel()
    }

    /// Cancels the pipeline and ends the channel. Idempotent.
    func cancel() {
        stop()
        channel.terminate()
    }

    func next(isolation actor: isolated (any Actor)?) async -> Element? {
        channel.beginIteration()
        defer { channel.endIteration() }
        while true {
            if Task.isCancelled {
                cancel()
                return nil
            }
            switch channel.step() {
            case .run(let drain):
                drain()
                if let element = channel.takeElement() { return element }
            case .end:
                return nil
            case .wait:
                await withTaskCancellationHandler {
                    await channel.waitForWork(isolation: actor)
                } onCancel: {
                    cancel()
                }
            }
        }
    }
}
