/// The node of `batch(while:)` and `batch(by:)`: a ``ContentBatchStateMachine`` in a lock, the
/// user's closures, the stage's timer (without an interval, none) and the next stage.
///
/// For each element the node runs the user's closures outside the lock (`key`, then `belongs`
/// with the open batch's last key), then lets the machine decide under the lock, then moves the
/// timer, hands the outputs on and releases the key the machine let go of, as ``TimedStage``
/// does. The pipeline's intake calls the node one event at a time (elements, timer fires,
/// flush, finish: ``StagedPipeline``), so nothing changes the open batch between the read of
/// its key and the step that follows; the lock is uncontended and lets the compiler check that
/// the node is `Sendable`.
///
/// Its own node, not a ``TimedStage`` behind the closures: in that composition (the machine
/// taking an element with its key and answer, releasing a key) the step's action is no longer
/// specialised, which every element pays at the stage's inlet (the `batch-by` row); so
/// `timerFired`, `flush`, `finish` and `step` repeat ``TimedStage``'s.
@usableFromInline
final class ContentBatchStage<Element: Sendable, Key: Sendable>: StageNode, TimedStageNode {
    @usableFromInline typealias Machine = ContentBatchStateMachine<Element, Key>

    @usableFromInline let machine: Locked<Machine>
    @usableFromInline let timer: StageTimer?
    /// What the stage keeps of an element to compare the next one with: the element itself for
    /// `batch(while:)`, the user's key for `batch(by:)`.
    @usableFromInline let key: @Sendable (Element) -> Key
    /// Whether an element whose key is `next` belongs with a batch whose last key is `previous`.
    @usableFromInline let belongs: @Sendable (_ previous: Key, _ next: Key) -> Bool
    @usableFromInline let downstream: StageInlet<[Element]>

    @usableFromInline
    init(
        machine: Machine,
        timer: StageTimer?,
        downstream: StageInlet<[Element]>,
        key: @escaping @Sendable (Element) -> Key,
        belongs: @escaping @Sendable (_ previous: Key, _ next: Key) -> Bool
    ) {
        self.machine = Locked(machine)
        self.timer = timer
        self.downstream = downstream
        self.key = key
        self.belongs = belongs
    }

    @inlinable
    func receive(_ input: Element) {
        assertNoLockHeld("running a batch(while:) or batch(by:) closure")
        let next = key(input)
        let open = machine.withLock { $0.openKey }
        let belongsToOpen = open.map { belongs($0, next) } ?? false
        let now = timer?.now ?? .zero
        step { $0.received(input, key: next, belongs: belongsToOpen, at: now) }
    }

    @usableFromInline
    func timerFired(_ id: Int) {
        // As in ``TimedStage``: the timer may only have been moved.
        guard let timer, let generation = timer.fired(id, for: self) else { return }
        let now = timer.now
        step { $0.timerFired(generation: generation, at: now) }
    }

    @usableFromInline
    func flush() {
        let now = timer?.now ?? .zero
        step { $0.flush(at: now) }
        downstream.flush()
    }

    @usableFromInline
    func finish() {
        let now = timer?.now ?? .zero
        step { $0.finish(at: now) }
        downstream.finish()
    }

    @inlinable
    func step(_ event: (inout Machine) -> Machine.Action) {
        let action = machine.withLockThenRelease { machine in
            var action = event(&machine)
            let released = action.released.take()
            return (action, released: released)
        }
        if action.timer != .none { timer?.perform(action.timer, for: self) }
        for output in action.outputs { downstream.receive(output) }
    }
}
