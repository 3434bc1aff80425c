import Dispatch
import Observation

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension Receptionist {
    /// Describes a tracking of a property of an `@Observable` model whose value is delivered to
    /// a task block each time it changes; add stages if you like, and call `deliver(on:)` on the
    /// result to start it.
    ///
    /// ```swift
    /// let token = Receptionist.tracking(\.progress, of: download, options: .initial)
    ///     .deliver(on: DispatchQueue.main) { progress in bar.value = progress }
    /// ```
    ///
    /// This overload takes a model that is `Sendable`, so that it can be read on any target.
    /// For a model isolated to the main actor (`@MainActor @Observable final class`), call
    /// ``tracking(_:of:options:)->MainActorTrackedProperty<Model,Event>`` from the main actor instead.
    /// See ``TrackedProperty`` for what is delivered, when, and on which thread.
    ///
    /// - Parameters:
    ///   - keyPath: the property to read, such as `\.progress`: a stored property of an
    ///     `@Observable` class, or a computed property that reads some (any change of one of
    ///     them is reported). A property that Observation does not track (a `let`, an
    ///     `@ObservationIgnored` property) can never be reported as changed: the tracking then
    ///     delivers the initial value (with `.initial`) and finishes.
    ///   - model: the model. The tracking does not keep it alive.
    ///   - options: ``ObservationOptions/initial`` to deliver the current value first. The other
    ///     options do not apply: each delivery is the value read at delivery time.
    public static func tracking<Model: Observable & AnyObject & Sendable>(
        _ keyPath: KeyPath<Model, Event> & Sendable,
        of model: Model,
        options: ObservationOptions = []
    ) -> Pipeline<TrackedProperty<Model, Event>, Event> {
        Pipeline(source: TrackedProperty(model: model, keyPath: keyPath, options: options))
    }
}

/// A property of a `Sendable` `@Observable` model, tracked with `withObservationTracking`, as
/// the source of a ``Pipeline``: `deliver(on:)` starts the tracking.
///
/// Get its pipeline from ``Receptionist/tracking(_:of:options:)->Pipeline<TrackedProperty<Model,Event>,Event>``.
///
/// ## What is delivered
/// Observation reports *that* a tracked property is about to change, not its values. The
/// tracking therefore bounces each report to the target, reads the property there, and runs the
/// task block with what it read:
/// - **The latest value, coalesced.** At most one read waits for the target at a time; the
///   reports of the writes made meanwhile are folded into it. So values set in quick succession
///   may be skipped, and the task block sees the value at the time it runs. The last value
///   written is always delivered eventually (see *Writes on other threads*).
/// - **Possibly the same value twice.** A report can arrive for a write that the previous read
///   already saw, or for a write that stored the value the property already had
///   (`.removeDuplicates()` drops those).
/// - To get every change, in order, with old and new values, observe an `@Observed` property
///   of an ``ObservableModel`` or an ``ObservableValue`` instead: those are lossless. To consume
///   an `@Observable` model's values with `for await`, use Observation's `Observations`.
///
/// ## Threading contract
/// - The task block runs on the target, one value at a time. Without stages, the read runs on
///   the target too, right before it; the target must then run work asynchronously:
///   ``DeliveryTarget/immediate`` stops the program, since the read would run inside the write,
///   before it is made. With stages (or `coalesce()`), the read runs on a queue of the
///   library's own and the value goes through the stages as ``Pipeline`` describes.
/// - **Writes on other threads.** Observation reports a write before it is made (at `willSet`),
///   on the writing thread, so the read on the target could run before the write it was told
///   about completes. The tracking arms the next report first and reads afterwards: a write is
///   then either seen by the read or reported again. That holds when each write reports itself
///   and stores the value under the lock that the getter reads under, so that no read slips in
///   between:
///
///   ```swift
///   @Observable final class Download: Sendable {
///       @ObservationIgnored private let state = Mutex(0.0)
///       var progress: Double {
///           get {
///               access(keyPath: \.progress)
///               return state.withLock { $0 }
///           }
///           set {
///               state.withLock { value in withMutation(keyPath: \.progress) { value = newValue } }
///           }
///       }
///   }
///   ```
///
///   A model that reports a write outside that lock (for example `withMutation` around a
///   locked store) can be read in between: the read sees the old value, and the new one is
///   delivered only with the next change. A model whose writes are all made on the target's own
///   serial context (for example a model written only on the main actor, tracked with
///   `.mainActor`) has no such window.
/// - **Cancel:** ``ObservationToken/cancel()`` (or releasing the token) stops the tracking: no
///   read starts after it returns, and task blocks stop as
///   <doc:ThreadingGuarantees#Cancel-and-finish> says. Nothing is registered with the model again; the
///   registration already made stays with the model until its next change (or its
///   deallocation), and then does nothing.
/// - **Finish:** ``ObservationToken/finish()`` delivers a read already requested, then ends the
///   tracking (the token may be released right after); with stages, they then hand on what they
///   hold. ``ObservationToken/flush()`` makes the stages hand on what they hold now (without
///   stages it does nothing).
/// - **Lifetime:** the tracking does not keep the model alive. When the model is deallocated,
///   the tracking finishes (``ObservationToken/isFinished`` becomes `true`) and releases the
///   task block. (For a key path through another object, such as `\.owner.name`, the end is
///   noticed at the next change if that object outlives the model.)
/// - **Statistics** (``ObservationToken/statistics``) count reads: `received` the reads
///   requested, `delivered` the reads that ran (a read that finds the model gone runs no task
///   block and finishes the tracking).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public struct TrackedProperty<Model: Observable & AnyObject & Sendable, Value: Sendable>: PipelineSource {
    let model: Model
    let keyPath: KeyPath<Model, Value> & Sendable
    let options: ObservationOptions

    /// Starts the tracking: each time the property changes, its value, read after the change,
    /// enters the pipeline. See ``TrackedProperty`` for the contract.
    ///
    /// Without ``ObservationOptions/initial``, the tracking is armed before this returns (by a
    /// read on the calling thread): every write made after it returns is reported.
    public func start<Output>(_ plan: PipelinePlan<Value, Output>) -> ObservationToken {
        validate(
            plan.delivery.policy.kind != .waiting,
            "deliver(on:buffering:) policy .waiting(capacity:) applies to receptionists you send to: a tracked "
                + "property's change cannot wait for room (it is reported during the write)"
        )
        let reader = TrackingReader(model: model, keyPath: keyPath, link: TrackingLink())
        if let direct = plan.directDelivery, direct.merge == nil {
            validate(
                !(direct.target is ImmediateTarget),
                "tracking(_:of:options:).deliver(on:_:) target must run work asynchronously, got .immediate: "
                    + "the value would be read inside the write that reports it, before it is made"
            )
            let core = ReceptionistCore(direct.handing(to: reader.handler(direct.handler)))
            return start(TrackingHandle(core), reader)
        }
        // Stages (or a merge): read on the library's stage queue, and feed the stages there.
        let stages = StagedPipeline(plan)
        let feed = StagesFeed(stages)
        let core = ReceptionistCore(
            Delivery(on: stages.stageQueue, buffering: .unbounded, reader.handler { feed.send($0) })
        )
        return start(TrackingHandle(core, stages: stages), reader)
    }

    private func start(_ handle: TrackingHandle, _ reader: TrackingReader<Model, Value>) -> ObservationToken {
        reader.link.connect(handle.core)
        if options.contains(.initial) {
            handle.core.send(TrackingRead())
        } else if !reader.arm() {
            handle.core.finish()  // nothing can ever be reported
        }
        return ObservationToken(handle)
    }
}
