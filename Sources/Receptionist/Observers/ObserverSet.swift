/// A thread-safe set of weakly held observers, notified in registration order, which may be
/// changed from any thread, also while it notifies.
///
/// The Swift form of the observable subject with an `NSHashTable` of weak references and
/// pending additions and removals: observers are not retained, adding or removing one during a
/// notification is safe and well defined, and each observer may have its messages bounced to a
/// target of its own (the main actor, a queue) through a ``Receptionist``.
///
/// ```swift
/// protocol AnimationObserver: AnyObject, Sendable {
///     func animationDidStart()
///     func animationDidStop()
/// }
///
/// final class Animation: Sendable {
///     let observers = ObserverSet<any AnimationObserver>()
///     func start() { observers.notify { $0.animationDidStart() } }
/// }
///
/// animation.observers.add(progressView, on: .mainActor)    // called on the main actor
/// animation.observers.add(logger)                           // called on the notifying thread
/// ```
///
/// ## Contract
/// - **Weak:** the set never keeps an observer alive. An observer that is deallocated is skipped
///   and pruned; it may also remove itself in its `deinit`.
/// - **Order:** a notification calls (or enqueues for) the observers in registration order. An
///   observer added again after being removed goes to the end.
/// - **Rounds:** a notification works on the observers registered when it starts. An observer
///   added during a notification (by an observer, or on another thread) is not called in that
///   round, but is in the next. An observer removed during a round is not called later in that
///   round; once ``remove(_:)`` returns, the observer is not called again, by any round on any
///   thread, except in at most one call per notifying thread that had already committed to it
///   (it may start just after `remove` returns); the same holds once ``finish(completion:)``
///   returns. An observer on a target stops as <doc:ThreadingGuarantees#Cancel-and-finish> says.
///   An observer may remove itself.
/// - **Where observers run:** an observer added with ``add(_:)`` is called synchronously, on the
///   thread that calls ``notify(_:)``, with no lock held; two threads notifying at once may call
///   it concurrently. An observer added with ``add(_:on:)-(_,DeliveryTarget)`` gets its messages
///   on that target, one at a time, in the order they were sent, through its own receptionist;
///   notifying never waits for it.
/// - **End:** ``finish(completion:)`` (or `await` ``finishAndWait()``) ends the set once the
///   messages already handed to targets were delivered, for example before a program exits.
///
/// ## Main-actor observers
/// A view or controller isolated to the main actor observes through the main actor: add it with
/// `add(_:on: .mainActor)`, and declare its conformance `@preconcurrency`, because Swift cannot
/// form a main-actor-isolated conformance to a `Sendable` protocol (the compiler says the
/// conformance "crosses into main actor-isolated code"):
///
/// ```swift
/// @MainActor
/// final class ProgressView: @preconcurrency AnimationObserver {
///     func animationDidStart() { spinner.start() }   // main-actor state, no hop
///     func animationDidStop() { spinner.stop() }
/// }
///
/// animation.observers.add(progressView, on: .mainActor)
/// ```
///
/// `@preconcurrency` makes Swift check the isolation when a message arrives instead of at
/// compile time: every message of an observer added on `.mainActor` runs on the main actor, so
/// the check passes; the same observer added with ``add(_:)`` (called on the notifying thread)
/// would stop the program at its first message off the main actor.
///
/// `Observer` is a class or a class-bound protocol (`protocol P: AnyObject`): observers are held
/// weakly and compared by identity. Swift cannot state that requirement for an existential, so
/// it is checked when an observer is added: adding a value of a struct or enum stops the program
/// with a message naming the requirement.
public final class ObserverSet<Observer: Sendable>: Sendable {
    @usableFromInline
    typealias Entry = ObserverEntry<Observer>

    // The weak references to observers are loaded only outside the lock: loading one makes a
    // temporary strong reference, and if the observer dies meanwhile, releasing that reference
    // runs its deinit (which may call `remove(self)`) right there. So the lock guards a list of
    // entries, decisions that need liveness are made on a snapshot outside it, and the list is
    // then changed by entry identity.
    //
    // Membership costs O(1): entries are found through `byIdentity`, and a removed entry is only
    // flagged (notifications skip it) and left in `entries` until removed ones are more than half
    // of it, when the list is compacted in one pass (amortised O(1) per removal).
    @usableFromInline
    struct State {
        /// The registrations in order, including removed ones not yet compacted away.
        @usableFromInline var entries: [Entry] = []
        /// The listed registrations by observer identity (more than one only when a dead
        /// observer's address was reused by a new one).
        var byIdentity: [ObjectIdentifier: [Entry]] = [:]
        /// Removed entries still in `entries`.
        var removedCount = 0
        var unhandledMessageHandler: (@Sendable (String) -> Void)?
        /// Set by `finish`: the registrations it took, whose targets still deliver what they hold.
        var finished: [Entry]?

        /// The listed registrations of an observer identity.
        func entries(of identity: ObjectIdentifier) -> [Entry] {
            byIdentity[identity] ?? []
        }

        mutating func append(_ entry: Entry) {
            entries.append(entry)
            byIdentity[entry.identity, default: []].append(entry)
        }

        /// Removes those of `stale` still listed (compared by entry identity): each is flagged
        /// removed at once, so that no notification starting later calls it.
        ///
        /// - Returns: the entries removed, for the caller to mark (cancel their deliveries) and
        ///   release outside the lock.
        mutating func remove(_ stale: [Entry]) -> [Entry] {
            var removed: [Entry] = []
            for entry in stale {
                guard var same = byIdentity[entry.identity], let index = same.firstIndex(where: { $0 === entry })
                else { continue }
                same.remove(at: index)
                byIdentity[entry.identity] = same.isEmpty ? nil : same
                entry.flagRemoved()
                removed.append(entry)
            }
            removedCount += removed.count
            if removedCount > 16 && removedCount * 2 > entries.count {
                entries.removeAll { $0.isRemoved }
                removedCount = 0
            }
            return removed
        }

        /// Takes every listed registration, in order (for `finish`).
        mutating func takeAll() -> [Entry] {
            defer {
                entries = []
                byIdentity = [:]
                removedCount = 0
            }
            return entries.filter { !$0.isRemoved }
        }
    }

    @usableFromInline
    let state = Locked(State())

    /// Creates an empty set.
    public init() {}

    /// Adds `observer`, to be called synchronously on the notifying thread.
    ///
    /// Callable from any thread, also during a notification (the observer is then called from
    /// the next round on). The set holds `observer` weakly.
    ///
    /// - Returns: `false` if `observer` was already in the set (it keeps its place and target).
    @discardableResult
    public func add(_ observer: Observer) -> Bool {
        insert(observer, delivery: nil)
    }

    /// Adds `observer`, whose messages are bounced to `target`.
    ///
    /// Each message runs on `target`, one at a time, in the order notifications sent them; a
    /// slow observer never slows the notifying thread or other observers. Removing the observer
    /// (or its deallocation) discards the messages still waiting for it.
    ///
    /// - Returns: `false` if `observer` was already in the set: it keeps its place and its
    ///   first target. To move an observer to another target, remove it and add it again.
    @discardableResult
    public func add(_ observer: Observer, on target: some DeliveryTarget) -> Bool {
        insert(observer) { Delivery(on: target, buffering: .unbounded, $0) }
    }

    /// Removes `observer`. Once this returns, `observer` is not called again, except as the
    /// "Rounds" rule of ``ObserverSet`` allows, and the messages still waiting for it on its
    /// target are discarded.
    ///
    /// Callable from any thread, during a notification, from the observer itself, and from the
    /// observer's `deinit`.
    ///
    /// - Returns: `false` if `observer` was not in the set.
    @discardableResult
    public func remove(_ observer: Observer) -> Bool {
        let object = observer as AnyObject
        let identity = ObjectIdentifier(object)
        var found = false
        // Decided outside the lock, on the entries of this identity: this observer's, or (from the
        // observer's own deinit, when its weak reference already reads nil) a dead one; dead ones
        // go too, since a new object may reuse a dead one's address.
        let stale = state.withLock { $0.entries(of: identity) }.filter { entry in
            if let current = entry.object {
                guard current === object else { return false }
                found = true
                return true
            }
            found = true
            return true
        }
        let removed = state.withLock { $0.remove(stale) }
        for entry in removed { entry.markRemoved() }  // released here, outside the lock
        return found
    }

    /// Whether `observer` is in the set.
    public func contains(_ observer: Observer) -> Bool {
        let object = observer as AnyObject
        return state.withLock { $0.entries(of: ObjectIdentifier(object)) }.contains {
            $0.object === object && !$0.isRemoved
        }
    }

    /// The number of observers in the set that are still alive.
    public var count: Int {
        snapshot().count { $0.isAlive && !$0.isRemoved }
    }

    /// Calls `message` with each observer, in registration order: synchronously for observers
    /// added without a target, on their target for the others.
    ///
    /// See ``ObserverSet`` for what happens to observers added or removed meanwhile.
    ///
    /// - Returns: how many observers were reached: called, or handed the message on their target.
    ///   An observer with a target counts as reached until its target has found it deallocated
    ///   (the first of its messages that arrives after its deallocation is skipped there, and the
    ///   set lets go of it at the next notification).
    @inlinable  // specialised for the observer type: generic, each call looked up type metadata
    @discardableResult
    public func notify(_ message: @escaping @Sendable (Observer) -> Void) -> Int {
        var reached = 0
        var sawDeadObserver = false
        for entry in snapshot() {
            if let delivery = entry.delivery {
                // The task block checks that the observer is alive, and flags it gone when it
                // is not; removal cancels it. The weak reference is not loaded here: that would
                // retain and release the observer through the side table the task block uses.
                guard !entry.isRemoved else { continue }
                if entry.reference.foundGone.load(ordering: .relaxed) {
                    sawDeadObserver = true
                } else if delivery.send(Entry.Envelope(message)).isAccepted {
                    reached += 1
                }
            } else {
                let (called, dead) = entry.withObserver(message)
                if called { reached += 1 }
                if dead { sawDeadObserver = true }
            }
        }
        if sawDeadObserver { prune() }
        return reached
    }

    /// Ends the set: the messages already handed to observers' targets are still delivered, and
    /// then `completion` runs (on the thread that delivered the last of them, or on this one if
    /// none was waiting).
    ///
    /// Once this returns, notifications reach no one (``notify(_:)`` returns 0) and ``add(_:)``
    /// returns `false`. Observers added without a target are not called again, except as the
    /// "Rounds" rule of ``ObserverSet`` allows after ``remove(_:)`` (waiting for such a call
    /// could deadlock a `finish` called from an observer). Use it when the
    /// subject goes away, for example before a command-line tool exits. Calling it again runs the
    /// new `completion` once the same deliveries are done. Callable from any thread, also from an
    /// observer; `completion` runs with no lock held.
    public func finish(completion: @escaping @Sendable () -> Void = {}) {
        let entries: [Entry] = state.withLock { state in
            if let finished = state.finished { return finished }
            let taken = state.takeAll()
            state.finished = taken
            return taken
        }
        // Observers called on the notifying thread: a round that took its snapshot before this
        // skips them from now on.
        for entry in entries where entry.delivery == nil { entry.markRemoved() }
        let deliveries = entries.compactMap(\.delivery)
        let countdown = Countdown(deliveries.count + 1, completion)
        for delivery in deliveries { delivery.finish(completion: countdown.arrive) }
        countdown.arrive()
    }

    /// Ends the set and returns once the messages already handed to observers' targets were
    /// delivered; see ``finish(completion:)``.
    public func finishAndWait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finish { continuation.resume() }
        }
    }

    /// The registrations at the start of a round, in order; removed ones among them are flagged
    /// (``ObserverEntry/isRemoved``).
    @inlinable
    func snapshot() -> [Entry] {
        state.withLock { $0.entries }
    }

    /// The registrations still listed, in order (tests).
    var registrations: [Entry] {
        state.withLock { state in state.entries.filter { !$0.isRemoved } }
    }

    /// Adds `observer`, with its messages bounced through the delivery that `delivery` makes of
    /// a handler, or called synchronously (`nil`).
    func insert(
        _ observer: Observer,
        delivery: ((@escaping @Sendable (Entry.Envelope) -> Void) -> Delivery<Entry.Envelope>)?
    ) -> Bool {
        validate(
            Swift.type(of: observer as Any) is AnyClass,
            "ObserverSet.add(_:) observer must be a class instance, got a \(Swift.type(of: observer as Any))"
        )
        let identity = ObjectIdentifier(observer as AnyObject)
        if isRegistered(identity) { return false }
        // Created outside the lock: a receptionist is user-visible machinery.
        let reference = WeakReference(observer)
        let unowned = UnownedObserver(observer)
        let receptionist = delivery.map { makeDelivery in
            Receptionist(
                delivery: makeDelivery { (envelope: Entry.Envelope) in
                    guard let object = reference.objectMarkingGone else { return }
                    withExtendedLifetime(object) {
                        if let observer = unowned.observer(object) { envelope.message(observer) }
                    }
                }
            )
        }
        let entry = Entry(reference: reference, unowned: unowned, identity: identity, delivery: receptionist)
        while true {
            // Appended only if no entry of the same identity is listed; otherwise their
            // liveness is checked outside the lock, and dead ones are pruned before retrying.
            let (sameIdentity, isFinished): ([Entry], Bool) = state.withLock { state in
                guard state.finished == nil else { return ([], true) }
                let sameIdentity = state.entries(of: identity)
                if sameIdentity.isEmpty { state.append(entry) }
                return (sameIdentity, false)
            }
            if isFinished {
                entry.markRemoved()
                return false
            }
            if sameIdentity.isEmpty { return true }
            if sameIdentity.contains(where: \.isAlive) {
                entry.markRemoved()
                return false
            }
            let removed = state.withLock { $0.remove(sameIdentity) }
            for dead in removed { dead.markRemoved() }
        }
    }

    /// Whether a live observer of `identity` is registered.
    private func isRegistered(_ identity: ObjectIdentifier) -> Bool {
        state.withLock { $0.entries(of: identity) }.contains { $0.isAlive }
    }

    /// Drops the registrations of deallocated observers.
    @usableFromInline
    func prune() {
        let dead = snapshot().filter { !$0.isAlive && !$0.isRemoved }
        let removed = state.withLock { $0.remove(dead) }
        for entry in removed { entry.markRemoved() }  // released here, outside the lock
    }
}

/// Runs `completion` once `arrive()` was called `count` times.
private final class Countdown: Sendable {
    private let remaining: AtomicValue<Int>
    private let completion: @Sendable () -> Void

    init(_ count: Int, _ completion: @escaping @Sendable () -> Void) {
        remaining = AtomicValue(count)
        self.completion = completion
    }

    @Sendable func arrive() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { completion() }
    }
}
