/// Support for forwarding messages to observers that implement them, the Swift form of
/// Objective-C optional protocol methods and `respondsToSelector:`.
///
/// Give each method of the observer protocol a default implementation that calls
/// ``notHandled()``; observers implement only the methods they care about; the subject forwards a
/// message with ``ObserverSet/forward(_:_:)``:
///
/// ```swift
/// protocol GameObserver: AnyObject, Sendable {
///     func addEnemy(_ enemy: Enemy)
///     func removeEnemy(_ enemy: Enemy)
/// }
/// extension GameObserver {
///     func addEnemy(_ enemy: Enemy) { Forwarding.notHandled() }
///     func removeEnemy(_ enemy: Enemy) { Forwarding.notHandled() }
/// }
///
/// final class GameState: Sendable {
///     let observers = ObserverSet<any GameObserver>()
///     func addEnemy(_ enemy: Enemy) {
///         // … update the state …
///         observers.forward { $0.addEnemy(enemy) }     // reported as "addEnemy(_:)" if unhandled
///     }
/// }
/// ```
public enum Forwarding {
    /// Says that the observer being called does not handle the current forwarded message.
    ///
    /// Call it from the default implementations of an observer protocol's methods. Outside a
    /// call made by ``ObserverSet/forward(_:_:)`` it does nothing.
    public static func notHandled() {
        probe?.markNotHandled()
    }

    /// The probe of the forwarded call running on this thread (or task).
    @TaskLocal static var probe: ForwardingProbe?
}

/// Records whether one observer handled one forwarded message.
final class ForwardingProbe: Sendable {
    private let notHandledFlag = AtomicValue<Bool>(false)

    func markNotHandled() { notHandledFlag.store(true, ordering: .relaxed) }

    var wasHandled: Bool { !notHandledFlag.load(ordering: .relaxed) }
}

/// One forwarded message on its way to every observer: reports the message as unhandled when
/// the last call has run (or was discarded) without any observer handling it.
///
/// The report is made from `deinit`, which runs when the last reference goes: after the
/// synchronous calls, and after the message was delivered to (or discarded by) every observer
/// with a target.
final class ForwardRound: Sendable {
    let name: String
    let report: @Sendable (String) -> Void
    private let handledFlag = AtomicValue<Bool>(false)

    init(name: String, report: @escaping @Sendable (String) -> Void) {
        self.name = name
        self.report = report
    }

    func markHandled() { handledFlag.store(true, ordering: .releasing) }

    deinit {
        if !handledFlag.load(ordering: .acquiring) { report(name) }
    }
}

extension ObserverSet {
    /// Forwards a message to every observer, as ``notify(_:)`` does, and reports it to
    /// ``unhandledMessageHandler`` if no observer handled it.
    ///
    /// An observer handles a message unless the method that `message` calls on it is a default
    /// implementation that calls ``Forwarding/notHandled()``. The report is made once every
    /// observer was called: before this returns when all are called synchronously (or all
    /// deliveries on targets already ran), otherwise from the thread that makes the last
    /// delivery. A message discarded because its observer was removed counts as not handled by
    /// it. With no handler installed (the default), nothing is tracked.
    ///
    /// - Parameters:
    ///   - name: the message's name in the report; by default the calling function's name, so
    ///     that forwarding from a subject's `addEnemy(_:)` reports `"addEnemy(_:)"`.
    ///   - message: calls the message's method on an observer.
    /// - Returns: how many observers were reached, as for ``notify(_:)``.
    @inlinable  // specialised for the observer type, as notify(_:) is
    @discardableResult
    public func forward(_ name: String = #function, _ message: @escaping @Sendable (Observer) -> Void) -> Int {
        guard let report = unhandledMessageHandler else { return notify(message) }
        return forward(name, message, reportingTo: report)
    }

    /// ``forward(_:_:)`` with the diagnostic on.
    @usableFromInline
    func forward(
        _ name: String,
        _ message: @escaping @Sendable (Observer) -> Void,
        reportingTo report: @escaping @Sendable (String) -> Void
    ) -> Int {
        let round = ForwardRound(name: name, report: report)
        return notify { observer in
            let probe = ForwardingProbe()
            Forwarding.$probe.withValue(probe) { message(observer) }
            if probe.wasHandled { round.markHandled() }
        }
    }

    /// Called with the name of each forwarded message that no observer handled; `nil` (the
    /// default) to turn the diagnostic off.
    ///
    /// Runs on the forwarding thread or on the thread of the message's last delivery (see
    /// ``forward(_:_:)``), with no lock held. Settable from any thread.
    public var unhandledMessageHandler: (@Sendable (String) -> Void)? {
        get { state.withLock { $0.unhandledMessageHandler } }
        set {
            // The replaced handler's captures may be user objects: released after the lock.
            state.withLockThenRelease { state in
                let replaced = state.unhandledMessageHandler
                state.unhandledMessageHandler = newValue
                return ((), released: replaced)
            }
        }
    }
}
