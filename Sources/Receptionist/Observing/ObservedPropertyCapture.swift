/// Finds the storage behind an `@Observed` property from a key path.
///
/// Foundation on Linux has no KVO and Swift has no reflection from a key path to a property
/// wrapper's storage. So, when an observation starts, the receptionist reads the property through
/// the key path with a capture slot bound to the current thread; the wrapper's getter, which
/// receives the key path of the property being read, offers its storage to the slot when that
/// key path is the requested one. Outside of that moment the getter pays one relaxed atomic load.
@usableFromInline
enum ObservedPropertyCapture {
    /// How many captures are running on any thread; zero almost always.
    @usableFromInline
    static let activeCaptures = AtomicValue<Int>(0)

    @TaskLocal
    static var slot: Slot?

    final class Slot: Sendable {
        /// Read only on the thread that made the slot, while it reads the property: the slot is
        /// bound to that thread (a task local) for exactly that read.
        // Unsafe: AnyKeyPath is not Sendable; immutable, read on the one thread the slot is bound to (test: ObservedPropertyTests)
        nonisolated(unsafe) let requested: AnyKeyPath
        let found = Locked<(any AnyObject & Sendable)?>(nil)

        init(requested: AnyKeyPath) {
            self.requested = requested
        }
    }

    @inlinable
    static var isActive: Bool {
        activeCaptures.load(ordering: .relaxed) > 0
    }

    /// Called by `@Observed`'s getter while a capture is active on some thread.
    @usableFromInline
    static func offer(_ storage: any AnyObject & Sendable, for keyPath: AnyKeyPath) {
        guard let slot, keyPath == slot.requested else { return }
        slot.found.withLock { $0 = storage }
    }

    /// The storage behind `keyPath` on `object`, or `nil` if it is not an `@Observed` property.
    static func storage<Root, Value: Sendable>(
        for keyPath: KeyPath<Root, Value>,
        of object: Root
    ) -> PropertyStorage<Value>? {
        activeCaptures.add(1, ordering: .relaxed)
        defer { activeCaptures.subtract(1, ordering: .relaxed) }
        let slot = Slot(requested: keyPath)
        $slot.withValue(slot) {
            _ = object[keyPath: keyPath]
        }
        return slot.found.withLock { $0 } as? PropertyStorage<Value>
    }
}
