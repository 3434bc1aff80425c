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

import Foundation
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
private nonisolated(unsafe) var traceBuffer: UnsafeMutablePointer<(UnsafeRawPointer, Int, UnsafeMutableRawPointer)>?
/// For each traced object, the return addresses of the calls that allocated it (`backtrace`).
private nonisolated(unsafe) var traceFrames: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
private let traceCapacity = 4_096
private let traceDepth = 24
private let traceCount = Atomic<Int>(-1)

/// glibc's `backtrace` (declared in `<execinfo.h>`, which the Glibc module does not export).
@_silgen_name("backtrace")
private func backtrace(_ buffer: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ size: Int32) -> Int32

/// glibc's `dladdr` (declared in `<dlfcn.h>` only with `_GNU_SOURCE`, which the Glibc module does
/// not define). `info` is a `Dl_info`: file name, file base, symbol name, symbol address.
@_silgen_name("dladdr")
private func dladdr(
    _ address: UnsafeRawPointer,
    _ info: UnsafeMutablePointer<(UnsafePointer<CChar>?, UnsafeRawPointer?, UnsafePointer<CChar>?, UnsafeRawPointer?)>
) -> Int32

/// The Swift runtime's demangler (`swift_demangle`, exported by libswiftCore): the demangled
/// name, allocated with `malloc`, or `nil`.
@_silgen_name("swift_demangle")
private func swiftDemangle(
    _ mangledName: UnsafePointer<CChar>, _ mangledNameLength: Int,
    _ outputBuffer: UnsafeMutablePointer<CChar>?, _ outputBufferSize: UnsafeMutablePointer<Int>?,
    _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Increments the counters, then allocates as the runtime would. Must not allocate a Swift
/// object itself (it would call itself): atomic adds, a `malloc_usable_size` and an indirect call.
private let countingAllocObject: AllocObjectFunction = { metadata, size, alignmentMask in
    allocationCount.wrappingAdd(1, ordering: .relaxed)
    let object = originalAllocObject.unsafelyUnwrapped(metadata, size, alignmentMask)
    allocatedBytes.wrappingAdd(mallocUsableSize(object), ordering: .relaxed)
    if traceCount.load(ordering: .relaxed) >= 0 {
        let index = traceCount.wrappingAdd(1, ordering: .relaxed).oldValue
        if index >= 0, index < traceCapacity {
            traceBuffer.unsafelyUnwrapped[index] = (metadata, size, object)
            let frames = traceFrames.unsafelyUnwrapped + index * traceDepth
            frames.initialize(repeating: nil, count: traceDepth)
            _ = backtrace(frames, Int32(traceDepth))
        }
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
        /// The innermost two functions of the library on the allocating call stack (or else the
        /// first function outside the runtime): where the object comes from.
        let site: String
        /// Whether the object still looked alive when the traced code returned: its first word
        /// was still its metadata. A heuristic: glibc overwrites the first word of a freed chunk
        /// with its free-list link, and a chunk freed and reused by an object of the same type
        /// within the traced code would read as alive.
        let stillAlive: Bool
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
            traceFrames = .allocate(capacity: traceCapacity * traceDepth)
            // `backtrace` loads libgcc's unwinder on its first call (a malloc, not a Swift
            // object): before tracing starts.
            _ = backtrace(traceFrames.unsafelyUnwrapped, Int32(traceDepth))
        }
        traceCount.store(0, ordering: .sequentiallyConsistent)
        body()
        let recorded = min(traceCount.exchange(-1, ordering: .sequentiallyConsistent), traceCapacity)
        // Read first: a chunk freed in `body` and reused by what this function allocates next
        // would no longer hold its object's metadata either, so it still reads as freed.
        let alive = (0..<recorded).map { index in
            let (metadata, _, object) = traceBuffer.unsafelyUnwrapped[index]
            return object.load(as: UnsafeRawPointer.self) == metadata
        }
        let sites = sites(
            (0..<recorded).map {
                UnsafeBufferPointer(start: traceFrames.unsafelyUnwrapped + $0 * traceDepth, count: traceDepth)
            })
        return (0..<recorded).map { index in
            let (metadata, size, _) = traceBuffer.unsafelyUnwrapped[index]
            return TracedAllocation(
                kind: describe(metadata: metadata), size: size, site: sites[index],
                stillAlive: alive[index])
        }
        #else
        body()
        return []
        #endif
    }

    /// Where each traced object was allocated: for each, the innermost function of the library
    /// on its allocating call stack (with inlined frames), or else the first function outside
    /// the runtime and this counter. The executable's functions are not in its dynamic symbol
    /// table, so the addresses are resolved by `llvm-symbolizer` (the toolchain's, found next to
    /// `swift` on `PATH`), in one run for all of them; "?" where it cannot be.
    private static func sites(_ traces: [UnsafeBufferPointer<UnsafeMutableRawPointer?>]) -> [String] {
        // Each frame as (module file, offset in it); a return address, so one byte back is the call.
        var located: [[(file: String, offset: Int)]] = []
        for frames in traces {
            located.append(
                frames.compactMap { frame in
                    var info: (UnsafePointer<CChar>?, UnsafeRawPointer?, UnsafePointer<CChar>?, UnsafeRawPointer?) =
                        (nil, nil, nil, nil)
                    guard let frame, dladdr(frame, &info) != 0, let file = info.0, let base = info.1 else { return nil }
                    // The name the loader used, maybe through a symbolic link: resolved.
                    guard let resolved = realpath(file, nil) else { return nil }
                    defer { free(resolved) }
                    return (String(cString: resolved), Int(bitPattern: frame) - Int(bitPattern: base) - 1)
                })
        }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        let offsets = Set(located.joined().filter { $0.file == executable }.map(\.offset)).sorted()
        let names = symbolize(offsets, in: executable)

        return located.map { frames in
            // Innermost first, inlined frames included.
            let chain: [String] = frames.flatMap { frame in
                frame.file == executable ? names[frame.offset] ?? [] : []
            }
            let outside = chain.filter { name in
                !name.hasPrefix("swift_") && !name.contains("countingAllocObject") && !name.contains("HeapAllocations")
                    && !name.hasPrefix("Swift.")
            }
            // The innermost two functions of the library: what allocated, and what called it.
            let library = outside.filter { $0.contains("Receptionist") }.map(shorten).filter { !$0.hasPrefix("Swift.") }
            var sites: [String] = []
            for name in library where sites.last != name && sites.count < 2 { sites.append(name) }
            if sites.isEmpty, let first = outside.first { sites = [shorten(first)] }
            return sites.isEmpty ? "?" : sites.joined(separator: " ← ")
        }
    }

    /// The demangled names of the functions at `offsets` of `executable`, innermost inlined
    /// frame first.
    private static func symbolize(_ offsets: [Int], in executable: String) -> [Int: [String]] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        guard !offsets.isEmpty,
            let symbolizer = path.split(separator: ":").map({ "\($0)/llvm-symbolizer" }).first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { return [:] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: symbolizer)
        process.arguments = ["--obj=\(executable)", "--no-demangle", "--inlining", "--output-style=LLVM"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return [:] }
        input.fileHandleForWriting.write(Data(offsets.map { String(format: "0x%lx\n", $0) }.joined().utf8))
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // One block per address, separated by an empty line: a function line and a file line per
        // (inlined) frame.
        let blocks = text.components(separatedBy: "\n\n")
        var names: [Int: [String]] = [:]
        for (offset, block) in zip(offsets, blocks) {
            let lines = block.split(separator: "\n")
            names[offset] = stride(from: 0, to: lines.count, by: 2).map { demangle(String(lines[$0])) }
        }
        return names
    }

    private static func demangle(_ symbol: String) -> String {
        symbol.withCString { mangled in
            guard let demangled = swiftDemangle(mangled, strlen(mangled), nil, nil, 0) else { return symbol }
            defer { free(demangled) }
            return String(cString: demangled)
        }
    }

    /// A demangled function name without specialisation prefixes, module, static or extension
    /// markers and parameters: `ObservationEngine.start`.
    private static func shorten(_ name: String) -> String {
        var name = name
        for prefix in ["generic specialization ", "function signature specialization ", "merged "] {
            while name.hasPrefix(prefix), let of = name.range(of: " of ") { name = String(name[of.upperBound...]) }
        }
        for marker in ["static ", "(extension in Receptionist):", "Receptionist."] {
            name = name.replacingOccurrences(of: marker, with: "")
        }
        if name.hasPrefix("closure #") || name.hasPrefix("implicit closure #"), let inName = name.range(of: " in ") {
            name = "closure in " + shorten(String(name[inName.upperBound...]))
            return name
        }
        var plain = ""  // without generic arguments
        var depth = 0
        for character in name {
            if character == "<" {
                depth += 1
            } else if character == ">" {
                depth = max(0, depth - 1)
            } else if depth == 0 {
                plain.append(character)
            }
        }
        if let end = plain.firstIndex(where: { $0 == "(" || $0 == " " }) { plain = String(plain[..<end]) }
        return plain
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
