/// Where a ``Pipeline`` gets its elements, and how it starts: the changes of an observed property
/// (``ObservedProperty``), the values of a tracked `@Observable` property (``TrackedProperty``),
/// or the events sent to a receptionist (``ReceptionistInput``).
///
/// A pipeline is a description until `deliver(on:)` (or `values()`) starts it: the pipeline turns
/// its target and task block into a ``PipelinePlan`` and asks its source to ``start(_:)`` that
/// plan. The source decides how its elements enter the plan's stages and returns what keeps the
/// pipeline running, its ``Handle``. That is why every pipeline has one `deliver` per kind of
/// target, whatever its source.
///
/// ## Conforming
/// A source of your own (a sensor driver, a callback API) can feed a pipeline through the
/// receptionist that ``PipelinePlan/start()`` returns:
///
/// ```swift
/// struct Readings: PipelineSource {
///     let sensor: Sensor
///     func start<Output>(_ plan: PipelinePlan<Reading, Output>) -> Receptionist<Reading> {
///         let receptionist = plan.start()
///         sensor.onReading = { [weak receptionist] in receptionist?.send($0) }   // any thread
///         return receptionist
///     }
/// }
/// let token = Pipeline(source: Readings(sensor: sensor)).batch(count: 10)…
/// ```
public protocol PipelineSource: Sendable {
    /// What the source emits: the input of the pipeline's first stage.
    associatedtype Element: Sendable
    /// What keeps a started pipeline running: releasing it cancels the pipeline, unless it was
    /// finished.
    associatedtype Handle: DeliveryHandle

    /// Starts the pipeline `plan` describes, fed with this source's elements.
    ///
    /// Called once per `deliver` (or `values()`), on the caller's thread.
    func start<Output>(_ plan: PipelinePlan<Element, Output>) -> Handle
}

/// A started-to-be pipeline: its stages and how its outputs are delivered (target, task block,
/// buffer policy, merge). Made by `deliver(on:)` and `values()`; a ``PipelineSource`` starts it.
public struct PipelinePlan<Input: Sendable, Output: Sendable>: Sendable {
    @usableFromInline
    let stages: StageChain<Input, Output>
    @usableFromInline
    let delivery: Delivery<Output>
    /// What each input weighs against a ``BufferPolicy/watermarks(low:high:)`` policy (`nil`: 1
    /// each): see ``Pipeline/deliver(on:buffering:weighing:_:)-(DeliveryTarget,_,_,_)``.
    @usableFromInline
    let weigh: (@Sendable (Input) -> Int)?

    @usableFromInline
    init(stages: StageChain<Input, Output>, delivery: Delivery<Output>, weigh: (@Sendable (Input) -> Int)? = nil) {
        self.stages = stages
        self.delivery = delivery
        self.weigh = weigh
    }

    /// Starts the stages and the delivery, and returns the receptionist that takes the source's
    /// elements: everything ``Receptionist/send(_:)`` gets goes through the stages to the task
    /// block, as ``Pipeline`` describes. Releasing the receptionist without finishing it cancels
    /// the pipeline.
    @inlinable
    public func start() -> Receptionist<Input> {
        if let direct = directDelivery {
            return Receptionist(delivery: direct)
        }
        if let convert = stages.converting {
            return Receptionist(converting: ConvertingPipeline(delivery: delivery, convert: convert))
        }
        return Receptionist(stages: StagedPipeline(self))
    }

    /// The delivery itself when there are no stages: the source's elements are the outputs.
    @usableFromInline
    var directDelivery: Delivery<Input>? {
        guard var direct = stages.direct?(delivery) else { return nil }
        direct.weighing = weigh.map { Weighing($0) }
        return direct
    }
}

extension Pipeline {
    /// Starts the pipeline with `delivery`.
    @inlinable
    func start(_ delivery: Delivery<Output>) -> Source.Handle {
        source.start(PipelinePlan(stages: stages, delivery: delivery.merging(with: merge)))
    }
}
