// `--scale`, transactions: an atomic read-modify-write of one property and an update of two
// properties into a snapshot, against a single lossless write of one property, in the same run.
// One thread, every observation on `.immediate`: what differs between the rows is the library's
// own work per update. Each row checks what its observation got.

import Foundation
import Receptionist

/// A model with two observed properties, for the transaction rows.
final class PairModel: ObservableModel, @unchecked Sendable {
    @Observed var a = 0
    @Observed var b = 0
}

extension Scale {
    struct TransactionRow {
        let operation: String
        let nanosPerUpdate: Double
        /// Swift heap objects per update (see HeapAllocations); `nil` where they are not counted.
        let allocationsPerUpdate: Double?
        var failures: [String] = []
    }

    /// The rows, the lossless write first (the others' ratios are to it).
    static func transactionRows(updates: Int, best: (() -> TransactionRow) -> TransactionRow) -> [TransactionRow] {
        [
            best { singleWrite(updates: updates) },
            best { readModifyWrite(updates: updates) },
            best { twoPropertyUpdate(updates: updates) },
        ]
    }

    /// Times `updates` runs of `body` (given 1, 2, …) and counts the heap objects they allocate.
    private static func measure(
        _ operation: String,
        updates: Int,
        _ body: (Int) -> Void
    ) -> TransactionRow {
        let allocationsBefore = HeapAllocations.count
        let start = now()
        for value in 1...updates { body(value) }
        let elapsed = now() - start
        let allocations = HeapAllocations.count - allocationsBefore
        return TransactionRow(
            operation: operation,
            nanosPerUpdate: Double(elapsed) / Double(updates),
            allocationsPerUpdate: HeapAllocations.status.isCounting ? Double(allocations) / Double(updates) : nil)
    }

    /// `model.a = value`, observed by one lossless observation.
    static func singleWrite(updates: Int) -> TransactionRow {
        let model = PairModel()
        let check = ChainCheck()
        let token = model.receptionist(for: \.a).deliver(on: .immediate) { check.see($0.oldValue, $0.newValue) }
        var row = measure("`model.a = value` (a single lossless write)", updates: updates) { model.a = $0 }
        row.failures = check.failures(expected: updates)
        withExtendedLifetime(token) {}
        return row
    }

    /// `model.$a.update { $0 += 1 }`, observed by one lossless observation.
    static func readModifyWrite(updates: Int) -> TransactionRow {
        let model = PairModel()
        let check = ChainCheck()
        let token = model.receptionist(for: \.a).deliver(on: .immediate) { check.see($0.oldValue, $0.newValue) }
        var row = measure("`model.$a.update { $0 += 1 }`", updates: updates) { _ in model.$a.update { $0 += 1 } }
        row.failures = check.failures(expected: updates)
        if model.$a.value != updates { row.failures.append("final value \(model.$a.value), not \(updates)") }
        withExtendedLifetime(token) {}
        return row
    }

    /// `model.update { $0.a = value; $0.b = value }`, observed by a snapshot of both.
    static func twoPropertyUpdate(updates: Int) -> TransactionRow {
        let model = PairModel()
        let check = ChainCheck()
        let token = model.receptionist(for: \.a, \.b).deliver(on: .immediate) { change in
            if change.newValue.0 != change.newValue.1 { check.tear() }
            check.see(change.oldValue?.0, change.newValue.0)
        }
        var row = measure("`model.update { $0.a = value; $0.b = value }` → snapshot of a, b", updates: updates) {
            value in
            model.update { model in
                model.a = value
                model.b = value
            }
        }
        row.failures = check.failures(expected: updates)
        withExtendedLifetime(token) {}
        return row
    }

    /// The Swift heap objects one more write, read-modify-write and two-property update
    /// allocate, observed as in the rows, after a warm-up.
    static func transactionInventories() -> [(what: String, allocations: [HeapAllocations.TracedAllocation])] {
        let model = PairModel()
        let tokens = [
            model.receptionist(for: \.a).deliver(on: .immediate) { _ in },
            model.receptionist(for: \.a, \.b).deliver(on: .immediate) { _ in },
        ]
        func update(_ value: Int) {
            model.update { model in
                model.a = value
                model.b = value
            }
        }
        model.a = 1
        model.$a.update { $0 += 1 }
        update(3)
        let inventories = [
            ("write (`model.a = value`)", HeapAllocations.trace { model.a = 4 }),
            (
                "read-modify-write (`model.$a.update { $0 += 1 }`)",
                HeapAllocations.trace { model.$a.update { $0 += 1 } }
            ),
            ("two-property update (`model.update { … }`)", HeapAllocations.trace { update(6) }),
        ]
        withExtendedLifetime(tokens) {}
        return inventories
    }

    static func transactionMarkdown(_ rows: [TransactionRow]) -> String {
        var out = [
            "### Transactions (issue 19): one update against a single lossless write",
            "",
            "| operation | ns per update | allocations per update | × a lossless write |",
            "|---|--:|--:|--:|",
        ]
        let write = rows[0].nanosPerUpdate
        for row in rows {
            let allocations = row.allocationsPerUpdate.map { format($0, digits: 2) } ?? "—"
            out.append(
                "| \(row.operation) | \(format(row.nanosPerUpdate)) | \(allocations) | "
                    + "\(format(row.nanosPerUpdate / write, digits: 2))×\(row.failures.isEmpty ? "" : " FAILED") |")
        }
        return out.joined(separator: "\n")
    }
}

/// Checks one observation's changes on the writing thread: consecutive values from 1, each old
/// value the previous new one (`@unchecked`: used by one thread).
final class ChainCheck: @unchecked Sendable {
    private var count = 0
    private var last = 0
    private var broken = 0
    private var torn = 0

    /// A snapshot whose halves differ.
    func tear() { torn += 1 }

    func see(_ old: Int?, _ new: Int) {
        if new != last + 1 || old != last { broken += 1 }
        last = new
        count += 1
    }

    func failures(expected: Int) -> [String] {
        var failures: [String] = []
        if count != expected { failures.append("delivered \(count) of \(expected) changes") }
        if broken > 0 { failures.append("\(broken) changes out of order or with a wrong old value") }
        if torn > 0 { failures.append("\(torn) torn snapshots") }
        return failures
    }
}
