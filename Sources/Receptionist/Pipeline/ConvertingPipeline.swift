/// The running form of a pipeline whose only stages are the library's own conversions (the
/// wrapping that `coalesce()` adds, for example): each sending thread converts its element and
/// hands it straight to the delivery engine.
///
/// No intake sits in front of the conversions, since they have no state and run no user code:
/// so a coalescing pipeline without other stages stays in constant memory however many threads
/// send, where an intake would queue what the threads send faster than one of them converts.
/// Order is that of ``Receptionist/send(_:)`` without stages: each thread's sends keep their
/// order.
@usableFromInline
final class ConvertingPipeline<Input: Sendable>: Sendable {
    /// Converts an element and sends it to the delivery engine.
    @usableFromInline
    let send: @Sendable (Input) -> SendResult
    /// Converts elements and sends them in one step (``DeliveryEngine/send(contentsOf:)``).
    @usableFromInline
    let sendContents: @Sendable ([Input]) -> SendContentsResult
    /// Converts an element and sends it from async code (``DeliveryEngine/sendSuspending(_:)``).
    @usableFromInline
    let sendSuspending: @Sendable (Input) async -> SendResult
    /// The delivery engine.
    let delivery: any ReceptionistEngine

    // Inlinable although it runs once: `send`, formed here, runs for every element.
    @inlinable
    convenience init<Output>(delivery: Delivery<Output>, convert: @escaping @Sendable (Input) -> Output) {
        let core = delivery.makeCore()
        self.init(
            send: { core.send(convert($0)) }, sendContents: { core.send(contentsOf: $0.map(convert)) },
            sendSuspending: { await core.sendSuspending(convert($0)) }, delivery: core)
    }

    @usableFromInline
    init<Output>(
        send: @escaping @Sendable (Input) -> SendResult,
        sendContents: @escaping @Sendable ([Input]) -> SendContentsResult,
        sendSuspending: @escaping @Sendable (Input) async -> SendResult,
        delivery: ReceptionistCore<Output>
    ) {
        self.send = send
        self.sendContents = sendContents
        self.sendSuspending = sendSuspending
        self.delivery = delivery
    }
}

extension ConvertingPipeline {
    /// Nothing to hand on: conversions hold nothing.
    func flush() {}
    func finish() { delivery.finish() }
    func ownerReleased() { delivery.ownerReleased() }
    func cancel() { delivery.cancel() }
    func whenEnded(_ completion: @escaping @Sendable () -> Void) { delivery.whenEnded(completion) }
    var isActive: Bool { delivery.isActive }
    var isCancelled: Bool { delivery.isCancelled }
    var isFinished: Bool { delivery.isFinished }
    var statistics: ReceptionistStatistics { delivery.statistics }
    var deliveryControl: any DeliveryControl { delivery }
}
