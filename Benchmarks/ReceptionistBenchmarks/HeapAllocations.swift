// Counts the Swift heap objects this process allocates, for the "allocs/change" figure.
//
// What is counted: every object the Swift runtime allocates through `swift_allocObject`: class
// instances (Swift classes and swift-corelibs-foundation's `NSObject` subclasses), closure
// contexts, array/dictionary/set/string storage, boxes of captured `var`s and of existentials too
// large for their inline buffer, `ManagedBuffer`s. What is not counted: raw `malloc`s
// (`UnsafeMutablePointer.allocate`, C code, CoreFoundation, libdispatch's own continuations and
// blocks, the concurrency runtime's task allocations) and objects the optimiser promoted to the
// stack. Hooking `malloc` itself is not possible here without unsafe linker flags.
//
// How: the runtime's `swift_allocObject` calls through an exported function pointer,
// `_swift_allocObject` (a data symbol in libswiftCore), whenever it differs from the default.
// `install()` replaces it, once, before any other thread starts, by a function that increments
// an atomic counter and calls the original.
//
// A runtime bug has to be avoided first. The first allocation through a replaced hook sets the
// runtime's `_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly` flag
// to 1, which sends every `swift_retain`/`swift_release` through an adapter; in the Swift 6.3
// Linux runtime that adapter strips a bridge object's tag bits before checking that it is a
// pointer, so retaining a small or literal string then dereferences string bytes (a crash, or a
// refcount decrement in random memory). Fixed upstream in swiftlang/swift#88924 (not in 6.3.1).
// In this runtime the allocation entry points test the flag for non-zero (`test`), while the
// retain/release family compares it with 1 (`cmp $1`): with the flag at 2, allocations take the
// hook and retains and releases stay on their normal path. `install()` checks that machine code
// (x86-64) before it relies on it, and installs nothing if it differs.

import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The signature of the runtime's allocation entry point:
/// `HeapObject *(*)(HeapMetadata const *metadata, size_t requiredSize, size_t requiredAlignmentMask)`.
typealias AllocObjectFunction = @convention(c) (UnsafeRawPointer, Int, Int) -> UnsafeMutableRawPointer

#if canImport(Glibc) && arch(x86_64)
/// Swift heap objects allocated by the whole process since the counter was installed. Only
/// where the hook can be installed: `Synchronization.Atomic` needs macOS 15 / iOS 18, and this
/// counter is never installed on Apple platforms.
private let allocationCount = Atomic<Int>(0)

/// The runtime's own `_swift_allocObject`, which the counting hook calls.
///
/// `nonisolated(unsafe)`: written exactly once, by `HeapAllocations.install()`, before the hook
/// that reads it is stored and before any thread but the main one exists (main.swift installs
/// the counter first thing); after that it is only read.
private nonisolated(unsafe) var originalAllocObject: AllocObjectFunction?

/// The bytes `malloc` reserved for those objects (`malloc_usable_size`, so its rounding counts).
private let allocatedBytes = Atomic<Int>(0)

/// glibc's `malloc_usable_size` (declared in `<malloc.h>`, which the Glibc module does not export).
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int

/// While ``HeapAllocations/trace(_:)`` runs: the metadata and size of each object allocated, in
/// a buffer allocated up front (the hook must not allocate a Swift object). `nonisolated(unsafe)`:
/// set before tracing is switched on and read after it is switched off, by the tracing thread.
private nonisolated(unsafe) var traceBuffer: UnsafeMutablePointer<(UnsafeRawPointer, Int)>?
private let traceCapacity = 4_096
private let traceCount = Atomic<Int>(-1)

/// Increments the counters, then allocates as the runtime would. Must not allocate a Swift
/// object itself (it would call itself): atomic adds, a `malloc_usable_size` and an indirect call.
private let countingAllocObject: AllocObjectFunction = { metadata, size, alignmentMask in
    allocationCount.wrappingAdd(1, ordering: .relaxed)
    let object = originalAllocObject.unsafelyUnwrapped(metadata, size, alignmentMask)
    allocatedBytes.wrappingAdd(mallocUsableSize(object), ordering: .relaxed)
    if traceCount.load(ordering: .relaxed) >= 0 {
        let index = traceCount.wrappingAdd(1, ordering: .relaxed).oldValue
        if index >= 0, index < traceCapacity { traceBuffer.unsafelyUnwrapped[index] = (metadata, size) }
    }
    return object
}
#endif

/// A class for the self-test: each instance is one `swift_allocObject`.
private final class AllocationProbe {
    let value: Int
    init(_ value: Int) { self.value = value }
}

@inline(never)
private func makeProbes(_ count: Int) -> [AllocationProbe] {
    (0..<count).map(AllocationProbe.init)
}

/// How a libswiftCore entry point tests the swizzling flag.
private enum FlagTest: Equatable {
    /// `cmp $1, …; je`: takes the swizzled path only when the flag is exactly 1.
    case equalsOne
    /// `test …; je`: takes the hook when the flag is non-zero.
    case nonZero
}

#if canImport(Glibc) && arch(x86_64)
/// How `function` tests `flag`: the first `movzbl flag(%rip), %eax|%ecx` in its first 128 bytes
/// and the instruction after it; `nil` if there is none or it is something else.
private func flagTest(in function: String, flag: UnsafeRawPointer) -> FlagTest? {
    guard let start = dlsym(nil, function) else { return nil }
    let code = UnsafeRawPointer(start)
    func byte(_ offset: Int) -> UInt8 { code.load(fromByteOffset: offset, as: UInt8.self) }
    for offset in 0..<128 {
        // movzbl rel32(%rip), %eax (0f b6 05) or %ecx (0f b6 0d)
        guard byte(offset) == 0x0f, byte(offset + 1) == 0xb6, byte(offset + 2) == 0x05 || byte(offset + 2) == 0x0d
        else { continue }
        let displacement = code.loadUnaligned(fromByteOffset: offset + 3, as: Int32.self)
        guard code + offset + 7 + Int(displacement) == flag else { continue }
        let next = (byte(offset + 7), byte(offset + 8), byte(offset + 9))
        switch (byte(offset + 2), next) {
        case (0x05, (0x3c, 0x01, _)), (0x0d, (0x80, 0xf9, 0x01)): return .equalsOne  // cmp $1, %al / %cl
        case (0x05, (0x84, 0xc0, _)), (0x0d, (0x84, 0xc9, _)): return .nonZero  // test %al, %al / %cl, %cl
        default: return nil
        }
    }
    return nil
}
#endif

enum HeapAllocations {
    /// Whether the hook is installed and passed its self-test.
    struct Status: Sendable {
        var isCounting: Bool
        /// Why it is not counting, or how the self-test went.
        var description: String
    }

    /// The status; `install()` sets it before any other thread starts.
    nonisolated(unsafe) private(set) static var status = Status(isCounting: false, description: "not installed")

    /// The counter's value (relaxed: an approximate instant is all a per-change average needs);
    /// 0 where the counter does not exist.
    @inline(__always)
    static var count: Int {
        #if canImport(Glibc) && arch(x86_64)
        allocationCount.load(ordering: .relaxed)
        #else
        0
        #endif
    }

    /// The bytes `malloc` reserved for the Swift heap objects counted by ``count`` (freed ones
    /// are not subtracted); 0 where the counter does not exist.
    static var bytes: Int {
        #if canImport(Glibc) && arch(x86_64)
        allocatedBytes.load(ordering: .relaxed)
        #else
        0
        #endif
    }

    /// One Swift heap object allocated while ``trace(_:)`` ran: its type (for a closure context
    /// or a box, what kind of object it is) and the size the runtime asked for.
    struct TracedAllocation: Hashable {
        let kind: String
        let size: Int
    }

    /// Runs `body` on this thread while recording every Swift heap object the process allocates
    /// (the first 4 096); empty where the counter is not installed. For the memory rows'
    /// inventory of what one observation or receptionist allocates.
    static func trace(_ body: () -> Void) -> [TracedAllocation] {
        #if canImport(Glibc) && arch(x86_64)
        guard status.isCounting else {
            body()
            return []
        }
        if traceBuffer == nil {
            traceBuffer = .allocate(capacity: traceCapacity)
        }
        traceCount.store(0, ordering: .sequentiallyConsistent)
        body()
        let recorded = min(traceCount.exchange(-1, ordering: .sequentiallyConsistent), traceCapacity)
        return (0..<recorded).map { index in
            let (metadata, size) = traceBuffer.unsafelyUnwrapped[index]
            return TracedAllocation(kind: describe(metadata: metadata), size: size)
        }
        #else
        body()
        return []
        #endif
    }

    /// What a heap object's metadata says it is. The runtime's metadata kinds (MetadataKind in
    /// the Swift ABI): 0 is a class (on platforms without Objective-C), 0x400 a closure context
    /// or a box of a captured `var`, 0x500 a generic box, 0x501 an error box.
    private static func describe(metadata: UnsafeRawPointer) -> String {
        switch metadata.load(as: Int.self) {
        case 0: String(reflecting: unsafeBitCast(metadata, to: AnyClass.self))
        case 0x400: "closure context or captured-var box"
        case 0x500: "generic box (an existential's or a captured generic var's)"
        case 0x501: "error box"
        case let kind: "heap object of metadata kind \(kind)"
        }
    }

    /// Installs the counting hook and checks that it counts: 1 000 class instances must count as
    /// at least 1 000 allocations. Call once, first thing in main.swift, before any thread starts.
    static func install() {
        #if canImport(Glibc) && arch(x86_64)
        // RTLD_DEFAULT is a null handle (`((void *) 0)` in <dlfcn.h>, which Swift cannot import).
        guard let symbol = dlsym(nil, "_swift_allocObject"),
            let flagSymbol = dlsym(nil, "_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly")
        else {
            status = Status(isCounting: false, description: "unavailable: libswiftCore exports no _swift_allocObject")
            return
        }
        let slot = symbol.assumingMemoryBound(to: AllocObjectFunction?.self)
        let flag = flagSymbol.assumingMemoryBound(to: UInt8.self)
        guard let original = slot.pointee, flag.pointee == 0 else {
            status = Status(isCounting: false, description: "unavailable: the allocation hook is already in use")
            return
        }
        // See the top of this file: the flag at 2 must route allocations to the hook and leave
        // retains and releases alone. Check that this runtime's code does exactly that.
        let allocation = ["swift_allocObject", "swift_bufferAllocate"]
        let referenceCounting = [
            "swift_retain", "swift_release", "swift_retain_n", "swift_release_n", "swift_tryRetain",
        ]
        let unexpected =
            allocation.filter { flagTest(in: $0, flag: flag) != .nonZero }
            + referenceCounting.filter { flagTest(in: $0, flag: flag) != .equalsOne }
        guard unexpected.isEmpty else {
            status = Status(
                isCounting: false,
                description:
                    "not installed: \(unexpected.joined(separator: ", ")) test the runtime's swizzling flag "
                    + "differently than this counter relies on (see HeapAllocations.swift)")
            return
        }
        _ = allocationCount.load(ordering: .relaxed)  // initialise the global before the hook can run
        originalAllocObject = original
        flag.pointee = 2
        slot.pointee = countingAllocObject
        let before = count
        let probes = makeProbes(1_000)
        let counted = count - before
        precondition(probes.count == 1_000 && probes.last?.value == 999)
        // Retains and releases of tagged bridge objects (small and literal strings), which the
        // runtime bug would turn into a crash here and now rather than at random later.
        let words = (0..<100).map { "w\($0)" } + ["a literal that is not small"]
        precondition(words.joined(separator: " ").utf8.count > 100)
        status =
            counted >= 1_000
            ? Status(isCounting: true, description: "self-test: 1000 class instances counted as \(counted) allocations")
            : Status(
                isCounting: false,
                description: "self-test FAILED: 1000 class instances counted as \(counted) allocations")
        #else
        status = Status(isCounting: false, description: "unavailable on this platform (needs Linux on x86-64)")
        #endif
    }

    /// Describes what the figure counts, for the report.
    static let legend =
        "allocs/change: Swift heap objects allocated by the whole process (swift_allocObject: class "
        + "instances, closure contexts, array/dictionary/string storage, boxes) from the producers' release "
        + "to the consumer's last change, divided by the changes, after a warm-up of the same row; raw "
        + "mallocs (UnsafeMutablePointer.allocate, C code, libdispatch's continuations, task allocations) "
        + "are not counted"
}
