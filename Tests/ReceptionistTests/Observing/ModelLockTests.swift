import Testing

@testable import Receptionist

/// What the proof of a model's lock (``ModelLock``) guards at run time. That it cannot be kept,
/// returned, escaped, or made without the lock is checked by the compiler; that it is the lock of
/// the model whose fields it opens, debug builds check, and these tests show.
@Suite struct ModelLockTests {
    @Test func aModelsOwnProofOpensItsStorage() {
        let value = ObservableValue(1)
        value.value = 2
        #expect(value.registry.withLock { lock, _ in value.storage.value(lock) } == 2)
    }

    #if DEBUG
    /// A proof taken under model A's lock does not open model B's property (debug builds).
    @Test(.exitTest) func anotherModelsProofStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let mine = ObservableValue(1)
            let other = ObservableValue(2)
            _ = mine.value  // the storage learns its model's lock
            _ = other.registry.withLock { lock, _ in mine.storage.value(lock) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("reached under another model's lock"))
    }

    /// The same for a property of an `ObservableModel` that an observation watches.
    @Test(.exitTest) func anotherModelsProofStopsTheProgramAtAModelsProperty() async {
        await #expect(processExitsWith: .failure) {
            let mine = Thermometer()
            let other = Thermometer()
            let token = mine.receptionist(for: \.celsius).deliver(on: ManualTarget()) { _ in }
            mine.celsius = 21  // the property and the observation learn their model's lock
            let storage = mine.$celsius.storage
            _ = other.registry.withLock { lock, _ in storage.version(lock) }
            token.cancel()
        }
    }
    #endif
}
