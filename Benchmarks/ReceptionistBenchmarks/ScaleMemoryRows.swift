// `--scale`, memory: what an idle observation and an idle receptionist cost to keep, to create and
// to cancel, with 10³ to 10⁵ of them alive, and an inventory of the Swift heap objects one of each
// allocates. Each row checks that everything it made works: a write to every model (a send to
// every receptionist) is delivered once, then nothing after the cancel.

import Dispatch
import Foundation
import Receptionist

extension Scale {
    struct MemoryRow {
        let what: String
        let count: Int
        /// Swift heap bytes (`malloc_usable_size` of every object) allocated per item.
        let heapBytes: Double?
        let objects: Double?
        /// Resident memory gained per item (`VmRSS`, after `malloc_trim`).
        let residentBytes: Double?
        let createNanos: Double
        let cancelNanos: Double
        var failures: [String] = []
    }

    /// What creating `count` items with `make` costs, in time, heap and resident memory; then
    /// `check` (the items work), then what ending them with `end` costs.
    private static func measureMemory<Item>(
        _ what: String,
        count: Int,
        make: (Int) -> Item,
        check: ([Item]) -> [String],
        end: (Item) -> Void
    ) -> MemoryRow {
        var items: [Item] = []
        items.reserveCapacity(count)
        Memory.trim()
        let resident = Memory.status("VmRSS")
        let (objects, bytes) = (HeapAllocations.count, HeapAllocations.bytes)
        let start = now()
        for index in 0..<count { items.append(make(index)) }
        let created = now() - start
        let (objectsAfter, bytesAfter) = (HeapAllocations.count, HeapAllocations.bytes)
        let residentAfter = Memory.status("VmRSS")
        let failures = check(items)
        let cancelStart = now()
        for item in items { end(item) }
        let cancelled = now() - cancelStart
        let counting = HeapAllocations.status.isCounting
        let perItem = { (value: Int) in Double(value) / Double(count) }
        return MemoryRow(
            what: what, count: count,
            heapBytes: counting ? perItem(bytesAfter - bytes) : nil,
            objects: counting ? perItem(objectsAfter - objects) : nil,
            residentBytes: resident.flatMap { before in residentAfter.map { perItem($0 - before) } },
            createNanos: perItem(Int(created)), cancelNanos: perItem(Int(cancelled)), failures: failures)
    }

    /// `count` models, each with one `@Observed` property and nothing observing it.
    static func idleModels(count: Int) -> MemoryRow {
        measureMemory(
            "model (one @Observed property), no observation", count: count,
            make: { _ in FanOutModel() },
            check: { models in
                for model in models { model.value = 1 }
                let wrong = models.filter { $0.$value.value != 1 }.count
                return wrong == 0 ? [] : ["\(wrong) models did not keep their value"]
            },
            end: { _ in })
    }

    /// `count` observations, one per model, each delivering to a serial queue: the models are
    /// made first, so that the figures are the observation's alone.
    static func idleObservations(count: Int) -> MemoryRow {
        let queue = DispatchQueue(label: "scale.memory.observations")
        let models = (0..<count).map { _ in FanOutModel() }
        let delivered = Protected(0)
        var row = measureMemory(
            "observation: `receptionist(for: \\.value).deliver(on: serial queue)`", count: count,
            make: { index in
                models[index].receptionist(for: \.value).deliver(on: queue) { _ in delivered.withLock { $0 += 1 } }
            },
            check: { _ in
                for model in models { model.value = 1 }
                queue.sync {}
                return []
            },
            end: { $0.cancel() })
        for model in models { model.value = 2 }
        queue.sync {}
        let got = delivered.withLock { $0 }
        if got != count { row.failures.append("delivered \(got) changes, \(count) expected (one per model)") }
        return row
    }

    /// `count` receptionists, each delivering to a serial queue.
    static func idleReceptionists(count: Int) -> MemoryRow {
        let queue = DispatchQueue(label: "scale.memory.receptionists")
        let delivered = Protected(0)
        var row = measureMemory(
            "receptionist: `Receptionist<Int>(on: serial queue)`", count: count,
            make: { _ in Receptionist<Int>(on: queue) { _ in delivered.withLock { $0 += 1 } } },
            check: { receptionists in
                for receptionist in receptionists { receptionist.send(1) }
                queue.sync {}
                return []
            },
            end: { $0.cancel() })
        let got = delivered.withLock { $0 }
        if got != count { row.failures.append("delivered \(got) events, \(count) expected (one per receptionist)") }
        return row
    }

    /// What is left after `count` observed models came and went: models made 1 000 at a time,
    /// each holding a 4 KiB payload, observed once (delivering to a serial queue), written
    /// twice, then let go, their observations ending each of the four ways in turn (cancelled,
    /// finished, token released, model released first). Resident memory is measured before and
    /// after (`malloc_trim` first); every payload must have been released.
    struct ChurnRow {
        let count: Int
        let residentBefore: Int?
        let residentAfter: Int?
        let peakAlive: Int
        let nanosPerModel: Double
        var failures: [String] = []

        var growth: Int? { residentAfter.flatMap { after in residentBefore.map { after - $0 } } }
    }

    /// The most resident memory a churn may leave behind.
    static let churnAllowance = 8 << 20

    static func modelChurn(count: Int) -> ChurnRow {
        let queue = DispatchQueue(label: "scale.memory.churn")
        let payloads = PayloadLedger()
        let delivered = Protected(0)
        Memory.trim()
        let before = Memory.status("VmRSS")
        let start = now()
        let wave = 1_000
        var made = 0
        while made < count {
            let size = min(wave, count - made)
            var models: [ChurnModel?] = (0..<size).map { _ in ChurnModel(payloads.make()) }
            var tokens: [ObservationToken?] = models.map { model in
                model!.receptionist(for: \.payload).deliver(on: queue) { _ in delivered.withLock { $0 += 1 } }
            }
            for model in models { model!.payload = payloads.make() }
            for index in 0..<size {
                switch (made + index) % 4 {
                case 0: tokens[index]!.cancel()
                case 1: tokens[index]!.finish()
                case 2: tokens[index] = nil
                default: models[index] = nil  // the model first; its token goes with the wave
                }
            }
            models = []
            tokens = []
            made += size
        }
        queue.sync {}
        let elapsed = now() - start
        Memory.trim()
        var row = ChurnRow(
            count: count, residentBefore: before, residentAfter: Memory.status("VmRSS"), peakAlive: wave,
            nanosPerModel: Double(elapsed) / Double(count))
        let (madeCount, released) = payloads.counts
        if released != madeCount {
            row.failures.append("\(madeCount - released) of \(madeCount) payloads were never released")
        }
        if let growth = row.growth, growth > churnAllowance {
            row.failures.append("resident memory grew by \(bytes(Double(growth))) after every model went")
        }
        if delivered.withLock({ $0 }) == 0 { row.failures.append("no change was delivered") }
        return row
    }

    static func churnMarkdown(_ rows: [ChurnRow]) -> String {
        var out = [
            "### Models that come and go (issue 26): resident memory after every model and its values went",
            "",
            "| observed models made and released | alive at once | resident before | resident after | growth | ns per model |",
            "|--:|--:|--:|--:|--:|--:|",
        ]
        for row in rows {
            let dash = { (value: Int?) in value.map { bytes(Double($0)) } ?? "—" }
            out.append(
                "| \(count(Double(row.count))) | \(count(Double(row.peakAlive))) | \(dash(row.residentBefore)) | "
                    + "\(dash(row.residentAfter)) | \(dash(row.growth))\(row.failures.isEmpty ? "" : " FAILED") | "
                    + "\(format(row.nanosPerModel)) |")
        }
        return out.joined(separator: "\n")
    }

    /// The Swift heap objects one more observation (one more receptionist) allocates, after a
    /// warm-up of the same kind, so that one-time caches are not counted.
    static func inventories() -> [(what: String, allocations: [HeapAllocations.TracedAllocation])] {
        let queue = DispatchQueue(label: "scale.memory.inventory")
        let models = (0..<3).map { _ in FanOutModel() }
        var tokens = [models[0].receptionist(for: \.value).deliver(on: queue) { _ in }]
        var receptionists = [Receptionist<Int>(on: queue) { _ in }]
        var kept: [FanOutModel] = []
        // So that the appends below allocate nothing of their own.
        tokens.reserveCapacity(4)
        receptionists.reserveCapacity(4)
        kept.reserveCapacity(4)
        let observation = HeapAllocations.trace {
            tokens.append(models[1].receptionist(for: \.value).deliver(on: queue) { _ in })
        }
        let receptionist = HeapAllocations.trace {
            receptionists.append(Receptionist<Int>(on: queue) { _ in })
        }
        let model = HeapAllocations.trace { kept.append(FanOutModel()) }
        withExtendedLifetime((tokens, receptionists, kept)) {}
        return [
            ("model (one @Observed property)", model),
            ("observation: `receptionist(for: \\.value).deliver(on: serial queue)`", observation),
            ("receptionist: `Receptionist<Int>(on: serial queue)`", receptionist),
        ]
    }

    static func memoryMarkdown(_ rows: [MemoryRow]) -> String {
        var out = [
            "### Memory (issue 19): idle models, observations and receptionists",
            "",
            "| what | alive | heap bytes each | Swift objects each | resident bytes each | create ns | cancel ns "
                + "| create growth vs smallest |",
            "|---|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for row in rows {
            let smallest = rows.filter { $0.what == row.what }.min { $0.count < $1.count }!
            let dash = { (value: Double?) in value.map { format($0, digits: 0) } ?? "—" }
            out.append(
                "| \(row.what) | \(count(Double(row.count))) | \(dash(row.heapBytes)) | "
                    + "\(row.objects.map { format($0, digits: 1) } ?? "—") | \(dash(row.residentBytes)) | "
                    + "\(format(row.createNanos)) | \(format(row.cancelNanos)) | "
                    + "\(format(row.createNanos / smallest.createNanos, digits: 2))×"
                    + "\(row.failures.isEmpty ? "" : " FAILED") |")
        }
        return out.joined(separator: "\n")
    }

    /// Each inventory as a list: type (or kind of object) and the bytes the runtime asked for.
    static func inventoryMarkdown(_ inventories: [(what: String, allocations: [HeapAllocations.TracedAllocation])])
        -> String
    {
        var out: [String] = []
        for inventory in inventories where !inventory.allocations.isEmpty {
            if !out.isEmpty { out.append("") }
            out += ["Swift heap objects of one \(inventory.what) (type, bytes asked for, where):", ""]
            for allocation in inventory.allocations {
                out.append(
                    "- `\(allocation.kind)`, \(allocation.size) bytes, from `\(allocation.site)`"
                        + (allocation.stillAlive ? "" : " (freed before the call returned)"))
            }
            let bytes = inventory.allocations.map(\.size).reduce(0, +)
            let kept = inventory.allocations.filter(\.stillAlive)
            out.append(
                "- total: \(inventory.allocations.count) objects, \(bytes) bytes; still alive: \(kept.count) objects, "
                    + "\(kept.map(\.size).reduce(0, +)) bytes")
        }
        return out.joined(separator: "\n")
    }
}

/// A model of the churn row: one observed property holding a payload.
final class ChurnModel: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored property is an @Observed.
    @Observed var payload: ChurnPayload

    init(_ payload: ChurnPayload) {
        _payload = Observed(wrappedValue: payload)
    }
}

/// 4 KiB that counts its own release in its ledger.
final class ChurnPayload: Sendable {
    let bytes: [UInt8]
    let ledger: PayloadLedger

    init(_ ledger: PayloadLedger) {
        self.ledger = ledger
        bytes = [UInt8](repeating: 1, count: 4_096)
    }

    deinit { ledger.released() }
}

/// Counts the payloads made and released.
final class PayloadLedger: Sendable {
    private let state = Protected((made: 0, released: 0))

    func make() -> ChurnPayload {
        state.withLock { $0.made += 1 }
        return ChurnPayload(self)
    }

    func released() { state.withLock { $0.released += 1 } }

    var counts: (made: Int, released: Int) { state.withLock { $0 } }
}
