/// A model's index from key path objects to the storages of its `@Observed` properties: the one
/// place where the observing layer reads shared state without the model's lock.
///
/// Storages are looked up by the identity of the key path object, which costs a pointer
/// comparison instead of hashing the key path's components (a key path literal is one object per
/// call site, made once), and without the lock: a transaction looks up each property it touches.
/// A key path that is equal to a known one but another object is found by comparison, under the
/// lock, and recorded too, up to ``KnownStorage/limit`` key path objects (so that key paths made
/// anew for every lookup do not grow the list).
///
/// ## Publication protocol
/// The index is a singly linked list of immutable nodes (``KnownStorage``, every field a `let`),
/// newest first.
/// - **Writers** hold the model's lock: ``record(_:for:in:)`` makes a complete node whose `next`
///   is the current newest, keeps it in ``Nodes`` (the model's locked state, which owns the list:
///   the newest node retains the next, and so on), then stores its address in `head` with a
///   *release* store. ``clear(_:)`` stores 0 (release) and hands the list back to be released
///   after the lock.
/// - **Readers** (``find(_:)``) take no lock: an *acquire* load of `head` makes every field of the
///   node it names, and of every node it reaches, visible (each was written before the release
///   store that published a node at least as new), and nodes never change once published.
/// - **Lifetime.** Readers walk the nodes unretained. A node lives as long as ``Nodes`` holds the
///   list, and the list only grows until ``clear(_:)``, which runs only in the model's `deinit`;
///   a reader needs the model (it looks up one of its properties), so no reader walks the list
///   then. Each node retains its key path, so that the identity compared is never reused by
///   another object while the model lives.
@usableFromInline
struct KnownStorageIndex: ~Copyable, Sendable {
    /// The list, kept alive: part of the model's locked state.
    struct Nodes {
        /// The newest node: holds the list.
        var newest: KnownStorage?
        /// How many nodes the list holds.
        var count = 0
    }

    /// The address of the newest node (0 while there is none), published with a release store.
    private let head = AtomicValue<Int>(0)

    @usableFromInline
    init() {}

    /// The storage a lookup through this very key path object found, if any; without the lock.
    func find(_ keyPath: AnyKeyPath) -> (any AnyObject & Sendable)? {
        // Unsafe: the published address of the newest node, read without the lock (test: KnownStorageStressTests)
        var address = UnsafeRawPointer(bitPattern: head.load(ordering: .acquiring))
        while let current = address {
            // Unsafe: walked unretained (see "Lifetime"): retaining each node makes every lookup write the nodes' reference counts (row: "update { 2 properties }")
            let (found, next) = Unmanaged<KnownStorage>.fromOpaque(current)._withUnsafeGuaranteedRef { node in
                node.keyPath === keyPath
                    ? (node.storage as (any AnyObject & Sendable)?, nil)
                    : (nil, node.nextAddress)
            }
            if let found { return found }
            address = next
        }
        return nil
    }

    /// Under the lock: the storage a key path equal to `keyPath` (another object) found, if any;
    /// records it for `keyPath` too, up to ``KnownStorage/limit`` key path objects.
    func findEqual(_ keyPath: SendableKeyPath, in nodes: inout Nodes) -> (any AnyObject & Sendable)? {
        var node = nodes.newest
        while let current = node {
            if current.keyPath == keyPath.keyPath {
                if nodes.count < KnownStorage.limit {
                    record(current.storage, for: keyPath, in: &nodes)
                }
                return current.storage
            }
            node = current.next
        }
        return nil
    }

    /// Under the lock: records that `keyPath` names `storage`, unless this key path object is
    /// known already (another thread found it meanwhile); publishes the node.
    func record(_ storage: any AnyObject & Sendable, for keyPath: SendableKeyPath, in nodes: inout Nodes) {
        var node = nodes.newest
        while let current = node {
            if current.keyPath === keyPath.keyPath { return }
            node = current.next
        }
        let newest = KnownStorage(keyPath: keyPath.keyPath, storage: storage, next: nodes.newest)
        nodes.newest = newest
        nodes.count += 1
        // Unsafe: the address readers load (see "Publication protocol") (row: "update { 2 properties }")
        head.store(Int(bitPattern: Unmanaged.passUnretained(newest).toOpaque()), ordering: .releasing)
    }

    /// Under the lock, in the model's `deinit`: unpublishes the list and returns it, for the
    /// caller to release after the lock.
    func clear(_ nodes: inout Nodes) -> KnownStorage? {
        head.store(0, ordering: .releasing)
        nodes.count = 0
        return nodes.newest.take()
    }
}

/// A key path handed to the model's lock. `@unchecked Sendable`: see ``KnownStorage``.
// Unsafe: a key path is immutable; these capture no argument (test: KnownStorageStressTests)
struct SendableKeyPath: @unchecked Sendable {
    let keyPath: AnyKeyPath
}

/// The storage of an `@Observed` property, and a key path object that names it: one node of a
/// model's ``KnownStorageIndex``.
///
/// `@unchecked Sendable`: every field is a `let`. A key path is immutable, so comparing it from
/// several threads is safe; key paths are not `Sendable` only because one may capture a
/// non-`Sendable` subscript argument, which these (`@Observed` properties) never do, and which
/// is never used here but to compare.
// Unsafe: every field a let; see the doc comment (test: KnownStorageStressTests)
final class KnownStorage: @unchecked Sendable {
    let keyPath: AnyKeyPath
    let storage: any AnyObject & Sendable
    let next: KnownStorage?
    /// The address of `next`, for the lookup's unretained walk.
    // Unsafe: read by the unretained walk without touching `next`'s reference count (row: "update { 2 properties }")
    let nextAddress: UnsafeRawPointer?

    init(keyPath: AnyKeyPath, storage: any AnyObject & Sendable, next: KnownStorage?) {
        self.keyPath = keyPath
        self.storage = storage
        self.next = next
        // Unsafe: see nextAddress (row: "update { 2 properties }")
        nextAddress = next.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
    }

    /// How many key path objects a model records (beyond that, equal ones are compared).
    static let limit = 64
}
