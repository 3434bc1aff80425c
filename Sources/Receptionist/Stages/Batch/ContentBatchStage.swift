/// The node of `batch(while:)` and `batch(by:)`: the user's closures in front of a
/// ``TimedStage`` that a ``ContentBatchStateMachine`` decides.
///
/// For each element the node runs the user's closures outside every lock (`key`, then `belongs`
/// with the open batch's last key, read under the stage's lock), then hands the element, its key
/// and the answer to the timed stage, which steps the machine, moves the timer, hands the outputs
/// on and releases the key the machine let go of. The pipeline's intake calls the node one event
/// at a time (elements, timer fires, flush, finish: ``StagedPipeline``), so nothing changes the
/// open batch between the read of its key and the step that follows. Timer fires go to the timed
/// stage directly.
@usableFromInline
final class ContentBatchStage<Element: Sendable, Key: Sendable>: StageNode {
    @usableFromInline typealias Machine = ContentBatchStateMachine<Element, Key>

    @usableFromInline let batching: TimedStage<Machine>
    /// What the stage keeps of an element to compare the next one with: the element itself for
    /// `batch(while:)`, the user's key for `batch(by:)`.
    @usableFromInline let key: @Sendable (Element) -> Key
    /// Whether an element whose key is `next` belongs with a batch whose last key is `previous`.
    @usableFromInline let belongs: @Sendable (_ previous: Key, _ next: Key) -> Bool

    @usableFromInline
    init(
        batching: TimedStage<Machine>,
        key: @escaping @Sendable (Element) -> Key,
        belongs: @escaping @Sendable (_ previous: Key, _ next: Key) -> Bool
    ) {
        self.batching = batching
        self.key = key
        self.belongs = belongs
    }

    @inlinable
    func receive(_ input: Element) {
        assertNoLockHeld("running a batch(while:) or batch(by:) closure")
        let next = key(input)
        let open = batching.machine.withLock { $0.openKey }
        let belongsToOpen = open.map { belongs($0, next) } ?? false
        batching.receive(Machine.Arrival(input, key: next, belongs: belongsToOpen))
    }

    @usableFromInline
    func flush() { batching.flush() }

    @usableFromInline
    func finish() { batching.finish() }
}
