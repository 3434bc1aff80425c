import Dispatch
import Testing

@testable import Receptionist

/// Eight properties, each starting at its own number.
final class Octet: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var p0 = 0
    @Observed var p1 = 1
    @Observed var p2 = 2
    @Observed var p3 = 3
    @Observed var p4 = 4
    @Observed var p5 = 5
    @Observed var p6 = 6
    @Observed var p7 = 7

    static let paths: [ReferenceWritableKeyPath<Octet, Int> & Sendable] = [
        \.p0, \.p1, \.p2, \.p3, \.p4, \.p5, \.p6, \.p7,
    ]
}

extension Stress {
    /// The lookup of a property's storage by key path, which reads the model's index of known
    /// storages without the lock (`KnownStorageIndex`) while other threads record into it.
    @Suite(.serialized, .tags(.stress))
    struct KnownStorageStressTests {
        /// On a new model per round, four threads look up every property in their own order,
        /// by the key path literal (the lock-free walk) and by an equal key path made anew (found
        /// by comparison under the lock, and recorded), while the others record: every lookup
        /// finds the storage of its property (it holds the property's value), and all threads
        /// find the same storage for it.
        @Test func concurrentLookupsFindTheStorageOfTheirProperty() {
            let rounds = eventsPerThread(2_000)
            for round in 0..<rounds {
                let model = Octet()
                let found = Locked<[[ObjectIdentifier]]>(Array(repeating: [], count: Octet.paths.count))
                let wrong = Locked(0)
                DispatchQueue.concurrentPerform(iterations: 4) { thread in
                    for step in 0..<Octet.paths.count {
                        let index = (step * (2 * thread + 1) + round) % Octet.paths.count
                        let literal = Octet.paths[index]
                        let path = thread.isMultiple(of: 2) ? literal : (\Octet.self).appending(path: literal)
                        let storage = model.observedStorage(for: path, in: "test", parameter: "keyPath")
                        if model.registry.read(storage) != index { wrong.withLock { $0 += 1 } }
                        found.withLock { $0[index].append(ObjectIdentifier(storage)) }
                    }
                }
                #expect(wrong.withLock { $0 } == 0)
                let identities = found.withLock { $0 }
                for (index, seen) in identities.enumerated() {
                    #expect(seen.count == 4 && Set(seen).count == 1, "property \(index)")
                }
                #expect(Set(identities.compactMap(\.first)).count == Octet.paths.count)
            }
        }
    }
}
