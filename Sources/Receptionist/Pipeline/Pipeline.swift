/// A description of how changes travel from a source to a task block: the stages they pass
/// (filter, remove duplicates, batch, throttle, debounce, coalesce) and, with `deliver`, the
/// target they are bounced to.
///
/// A pipeline is a value: building it starts nothing. `deliver` starts it and returns its
/// source's ``PipelineSource/Handle``, what keeps it running: an ``ObservationToken`` for an
/// observed or tracked property, a ``Receptionist`` to send to for a ``ReceptionistInput``.
/// Each stage is described, with a timeline, in <doc:Stages>.
///
/// ```swift
/// // @unchecked: its only stored property is an @Observed, guarded by the model's lock.
/// final class Sensor: ObservableModel, @unchecked Sendable { @Observed var reading = 0.0 }
/// let sensor = Sensor()
/// let token = sensor.receptionist(for: \.reading)
///     .removeDuplicates()
///     .batch(count: 100, every: .milliseconds(50))
///     .deliver(on: DispatchQueue.main) { batch in print(batch.map(\.newValue)) }
/// ```
///
/// ## Threading contract
/// - **Stages** run one event at a time, in the order the changes were made (for a property, the
///   order its writes were applied; for a receptionist, the order its `send` calls took effect),
///   never while a lock of the library is held. They run on the thread that made the change,
///   or on a time-based stage's scheduler when its timer fires; when several threads make
///   changes at once, whichever thread is already running the stages runs them for the others'
///   changes too, and the others return at once; after 256 events in a row with more waiting,
///   the stages continue on a queue of the library's own (at the target's quality of service) and
///   the thread returns. `flush()` and
///   `finish()` run the stages the same way: the calling thread may run what they hand on. Changes wait
///   for the stages in a buffer of their own: with a dropping ``BufferPolicy`` it holds at most
///   the policy's capacity (an element that finds it full is dropped and counted in
///   ``ReceptionistStatistics/dropped``, so memory is bounded end to end); otherwise it is
///   unbounded, and grows if the senders together outpace the stages. Keep stage closures short and free of blocking. Time-based stages read their clock
///   when they process a change, not when it was made.
/// - **The task block** runs on the delivery target, one output at a time, in order: an output
///   produced before another is delivered before it.
/// - **Nothing is left behind** by a stage: ``ObservationToken/flush()`` (or
///   ``Receptionist/flush()``) makes every stage hand on what it holds now (a partial batch, a
///   held throttle value, a pending debounce value); `finish()` does the same and then ends the
///   pipeline once everything was delivered; when an observed model is deallocated, the
///   pipeline finishes the same way. An ``ObservedChange`` keeps its object alive, so a model
///   whose changes a stage holds is deallocated only once the stage hands them on (a batch
///   fills or its timer fires, a window ends, on `flush()`); to let a model go while a stage
///   waits, map the changes to values before the stage (`.map(\.newValue)`).
/// - **Cancel** (`cancel()`, or releasing the token or receptionist) stops everything at once:
///   what the stages hold, the changes waiting to enter them, and the outputs waiting for the
///   target are discarded (``ReceptionistStatistics`` count the last stage's outputs, so what a
///   stage held is in no counter); timers are cancelled; task blocks stop as
///   <doc:ThreadingGuarantees#Cancel-and-finish> says. To stop without losing anything, call `finish()`.
public struct Pipeline<Source: PipelineSource, Output: Sendable>: Sendable {
    @usableFromInline
    let source: Source
    @usableFromInline
    let stages: StageChain<Source.Element, Output>
    /// Set by `coalesce()`: how the buffer in front of the task block folds a new output into the
    /// one still waiting.
    @usableFromInline
    let merge: ReceptionistStateMachine<Output>.Merge?

    @usableFromInline
    init(source: Source, stages: StageChain<Source.Element, Output>, merge: ReceptionistStateMachine<Output>.Merge?) {
        self.source = source
        self.stages = stages
        self.merge = merge
    }

    /// This pipeline followed by the stage that `makeStage` builds.
    ///
    /// - Parameter operatorName: the operator adding the stage, for the message if it comes
    ///   after `coalesce()`.
    @usableFromInline
    func adding<Next: Sendable>(
        _ operatorName: @autoclosure () -> String,
        _ makeStage: @escaping @Sendable (_ downstream: StageInlet<Next>, _ timers: StageTimers) -> StageInlet<Output>
    ) -> Pipeline<Source, Next> {
        validate(
            merge == nil,
            "\(operatorName()) after coalesce(): coalesce() must be the last stage, since it folds outputs "
                + "in the buffer in front of the task block; add the stage before coalesce()"
        )
        return Pipeline<Source, Next>(source: source, stages: stages.appending(makeStage), merge: nil)
    }

    /// This pipeline followed by `convert`, a conversion of the library's own (stateless, no user
    /// code): a pipeline with only such conversions needs no intake in front of its stages; see
    /// ``StageChain/converting``.
    @usableFromInline
    func converting<Next: Sendable>(_ convert: @escaping @Sendable (Output) -> Next) -> Pipeline<Source, Next> {
        validate(merge == nil, "coalesce() after coalesce(): coalesce a pipeline once")
        return Pipeline<Source, Next>(source: source, stages: stages.appendingConversion(convert), merge: nil)
    }

    /// This pipeline with `merge` folding its outputs in the buffer in front of the task block.
    @usableFromInline
    func coalescing(with merge: @escaping ReceptionistStateMachine<Output>.Merge) -> Pipeline {
        validate(self.merge == nil, "coalesce() after coalesce(): coalesce a pipeline once")
        return Pipeline(source: source, stages: stages, merge: merge)
    }
}

extension Pipeline where Output == Source.Element {
    /// A pipeline without stages, fed by `source`: add stages, then start it with `deliver`.
    ///
    /// The library's sources make their pipelines for you (``ObservableModelProtocol/receptionist(for:options:)``,
    /// ``Receptionist/pipeline(of:)``, ``Receptionist/tracking(_:of:options:)->Pipeline<TrackedProperty<Model,Event>,Event>``);
    /// use this initialiser for a ``PipelineSource`` of your own.
    @inlinable
    public init(source: Source) {
        self.init(source: source, stages: .empty, merge: nil)
    }
}
