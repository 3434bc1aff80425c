// `--scale`: how cost grows along the axes users grow along, as a ratio to the smallest size in
// the same run. Each row checks its result (every observation or observer got every message, in
// order) and fails the run otherwise. One thread, no target hops: what grows here is the library's
// own bookkeeping.

import Dispatch
import Foundation
import Receptionist

/// A model with one observed property, for the fan-out and memory rows.
final class FanOutModel: ObservableModel, @unchecked Sendable {
    @Observed var value = 0
}

/// An observer for the observer-set rows.
protocol Pinged: AnyObject, Sendable {
    func ping(_ value: Int)
}

/// Counts its pings and checks that they arrive in order (`@unchecked`: used by one thread).
final class PingCounter: Pinged, @unchecked Sendable {
    var count = 0
    var outOfOrder = 0
    private var last = 0

    func ping(_ value: Int) {
        if value != last + 1 { outOfOrder += 1 }
        last = value
        count += 1
    }
}

/// A weak reference, for the hand-written floor of a notification.
private struct WeakPinged {
    weak var object: PingCounter?
}

enum Scale {
    struct Row {
        let axis: String
        let size: Int
        /// What one unit costs: per observation, per observer, per operation.
        let nanosPerUnit: Double
        let unit: String
        var failures: [String] = []
    }

    /// The groups of rows, for `--filter` (a group runs if its name contains the filter).
    static let groups = ["fan-out", "observer-set", "hub", "hub-pipelines", "transactions", "memory"]

    /// Runs every axis (every group whose name contains `filter`); returns the exit status (1 if
    /// a row's check failed).
    static func run(quick: Bool, repetitions: Int, filter: String? = nil) -> Int32 {
        func wants(_ group: String) -> Bool { filter.map { group.contains($0) } ?? true }
        var rows: [Row] = []
        func best(_ make: () -> Row) -> Row {
            var runs = (0..<repetitions).map { _ in make() }
            runs.sort { $0.nanosPerUnit < $1.nanosPerUnit }
            var row = runs[runs.count / 2]
            row.failures = Array(Set(runs.flatMap(\.failures))).sorted()
            return row
        }
        let work = quick ? 20_000 : 400_000
        for k in [1, 10, 100, 1_000] where wants("fan-out") {
            rows.append(best { fanOut(observations: k, writes: max(10, work / k)) })
        }
        let sizes = quick ? [10, 1_000, 10_000] : [10, 1_000, 100_000]
        for n in sizes where wants("observer-set") {
            rows.append(best { notify(observers: n, rounds: max(3, work / n)) })
        }
        for n in sizes where wants("observer-set") {
            rows.append(best { notifyFloor(observers: n, rounds: max(3, work / n)) })
        }
        for n in sizes where wants("observer-set") {
            // The same count at every size: membership is O(1), so even 100 000 observers
            // leave room for enough operations to time.
            let operations = quick ? 200 : 5_000
            rows.append(best { addRemove(observers: n, operations: operations) })
        }
        for n in sizes where wants("hub") {
            rows.append(best { hubPost(subscribers: n, otherChannels: 0, posts: max(3, work / n)) })
        }
        for channels in sizes where wants("hub") {
            rows.append(best { hubPost(subscribers: 1, otherChannels: channels, posts: work) })
        }
        for n in sizes where wants("hub") {
            // The same count at every size: membership is O(1), so even 100 000 subscribers
            // leave room for enough operations to time.
            let operations = quick ? 200 : 5_000
            rows.append(best { hubSubscribeCancel(subscribers: n, operations: operations) })
        }
        for way in FanOutWay.allCases where wants("hub-pipelines") {
            for k in fanOutConsumers {
                rows.append(best { stagedFanOut(way, consumers: k, posts: max(3, work / k)) })
            }
        }
        let transactions =
            !wants("transactions")
            ? []
            : transactionRows(updates: work) { make in
                var runs = (0..<repetitions).map { _ in make() }
                runs.sort { $0.nanosPerUpdate < $1.nanosPerUpdate }
                var row = runs[runs.count / 2]
                row.failures = Array(Set(runs.flatMap(\.failures))).sorted()
                return row
            }
        // Once each: the heap figures do not vary, and 10⁵ observations take a while to make.
        let alive = !wants("memory") ? [] : quick ? [1_000, 10_000] : [1_000, 100_000]
        let memory =
            alive.map { idleModels(count: $0) } + alive.map { idleObservations(count: $0) }
            + alive.map { idleReceptionists(count: $0) }
        let churn = !wants("memory") ? [] : [modelChurn(count: quick ? 20_000 : 100_000)]
        if !rows.isEmpty { print(markdown(rows) + "\n") }
        if !transactions.isEmpty {
            print(transactionMarkdown(transactions) + "\n")
            print(inventoryMarkdown(transactionInventories()) + "\n")
        }
        if !memory.isEmpty { print(memoryMarkdown(memory) + "\n\n" + inventoryMarkdown(inventories())) }
        if !churn.isEmpty { print("\n" + churnMarkdown(churn)) }
        var failures = rows.flatMap { row in row.failures.map { "\(row.axis), \(row.size): \($0)" } }
        failures += transactions.flatMap { row in row.failures.map { "\(row.operation): \($0)" } }
        failures += memory.flatMap { row in row.failures.map { "\(row.what), \(row.count): \($0)" } }
        failures += churn.flatMap { row in row.failures.map { "models that come and go, \(row.count): \($0)" } }
        if !failures.isEmpty {
            FileHandle.standardError.write(
                Data(("receptionist-benchmarks --scale: FAILED:\n" + failures.map { "  - \($0)\n" }.joined()).utf8))
            return 1
        }
        return 0
    }

    /// `writes` writes to a property with `observations` observations, each delivering on
    /// `.immediate` (on the writing thread): nanoseconds per observation per write.
    static func fanOut(observations: Int, writes: Int) -> Row {
        let model = FanOutModel()
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: observations)
        counts.initialize(repeating: 0, count: observations)
        defer { counts.deallocate() }
        let lastSeen = UnsafeMutablePointer<Int>.allocate(capacity: observations)
        lastSeen.initialize(repeating: 0, count: observations)
        defer { lastSeen.deallocate() }
        nonisolated(unsafe) let countsPointer = counts
        nonisolated(unsafe) let lastPointer = lastSeen
        let outOfOrder = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        outOfOrder.initialize(to: 0)
        defer { outOfOrder.deallocate() }
        nonisolated(unsafe) let outOfOrderPointer = outOfOrder
        let tokens = (0..<observations).map { index in
            model.receptionist(for: \.value).deliver(on: .immediate) { change in
                if change.newValue != lastPointer[index] + 1 { outOfOrderPointer.pointee += 1 }
                lastPointer[index] = change.newValue
                countsPointer[index] += 1
            }
        }
        let start = now()
        for value in 1...writes { model.value = value }
        let elapsed = now() - start
        var row = Row(
            axis: "fan-out: one write, k observations (.immediate)", size: observations,
            nanosPerUnit: Double(elapsed) / Double(writes * observations), unit: "per observation")
        let missing = (0..<observations).filter { counts[$0] != writes }.count
        if missing > 0 { row.failures.append("\(missing) observations did not get every write") }
        if outOfOrder.pointee > 0 { row.failures.append("\(outOfOrder.pointee) changes out of order") }
        withExtendedLifetime(tokens) {}
        return row
    }

    /// `rounds` notifications of a set of `observers` synchronous observers: nanoseconds per
    /// observer called.
    static func notify(observers: Int, rounds: Int) -> Row {
        let set = ObserverSet<any Pinged>()
        let counters = (0..<observers).map { _ in PingCounter() }
        for counter in counters { set.add(counter) }
        var reached = 0
        let start = now()
        for round in 1...rounds { reached += set.notify { $0.ping(round) } }
        let elapsed = now() - start
        var row = Row(
            axis: "ObserverSet.notify, n synchronous observers", size: observers,
            nanosPerUnit: Double(elapsed) / Double(rounds * observers), unit: "per observer")
        if reached != rounds * observers { row.failures.append("reached \(reached) of \(rounds * observers)") }
        if counters.contains(where: { $0.count != rounds || $0.outOfOrder > 0 }) {
            row.failures.append("an observer missed a notification or got one out of order")
        }
        return row
    }

    /// The hand-written floor of ``notify(observers:rounds:)``: a closure called on each live
    /// object of an array of weak references.
    static func notifyFloor(observers: Int, rounds: Int) -> Row {
        let counters = (0..<observers).map { _ in PingCounter() }
        let references = counters.map { WeakPinged(object: $0) }
        let message: (PingCounter, Int) -> Void = { $0.ping($1) }
        var reached = 0
        let start = now()
        for round in 1...rounds {
            for reference in references {
                if let object = reference.object {
                    message(object, round)
                    reached += 1
                }
            }
        }
        let elapsed = now() - start
        var row = Row(
            axis: "floor: closure over an array of weak references", size: observers,
            nanosPerUnit: Double(elapsed) / Double(rounds * observers), unit: "per observer")
        if reached != rounds * observers { row.failures.append("reached \(reached) of \(rounds * observers)") }
        withExtendedLifetime(counters) {}
        return row
    }

    /// `operations` pairs of `add` and `remove` of a new observer in a set of `observers`:
    /// nanoseconds per pair.
    static func addRemove(observers: Int, operations: Int) -> Row {
        let set = ObserverSet<any Pinged>()
        let counters = (0..<observers).map { _ in PingCounter() }
        for counter in counters { set.add(counter) }
        let visitors = (0..<operations).map { _ in PingCounter() }
        var added = 0
        var removed = 0
        let start = now()
        for visitor in visitors {
            if set.add(visitor) { added += 1 }
            if set.remove(visitor) { removed += 1 }
        }
        let elapsed = now() - start
        var row = Row(
            axis: "ObserverSet add + remove, set of n", size: observers,
            nanosPerUnit: Double(elapsed) / Double(operations), unit: "per add + remove")
        let left = withExtendedLifetime(counters) { set.count }
        if added != operations || removed != operations || left != observers {
            row.failures.append("added \(added), removed \(removed) of \(operations); \(left) left of \(observers)")
        }
        return row
    }

    /// `posts` posts to a channel with `subscribers` subscribers on `.immediate`, while
    /// `otherChannels` other channels have a subscriber each: nanoseconds per subscriber reached.
    static func hubPost(subscribers: Int, otherChannels: Int, posts: Int) -> Row {
        let hub = Hub()
        let channel = Hub.Channel<Int>("scale.posted")
        let counters = (0..<subscribers).map { _ in PingCounter() }
        var subscriptions = counters.map { counter in
            hub.subscribe(to: channel, on: .immediate) { counter.ping($0) }
        }
        for index in 0..<otherChannels {
            subscriptions.append(hub.subscribe(to: Hub.Channel<Int>("scale.other.\(index)"), on: .immediate) { _ in })
        }
        var reached = 0
        let start = now()
        for post in 1...posts { reached += hub.post(channel, post) }
        let elapsed = now() - start
        let axis =
            otherChannels == 0
            ? "Hub.post, n subscribers of the channel (.immediate)" : "Hub.post, 1 subscriber, n other channels"
        var row = Row(
            axis: axis, size: otherChannels == 0 ? subscribers : otherChannels,
            nanosPerUnit: Double(elapsed) / Double(posts * subscribers), unit: "per subscriber reached")
        if reached != posts * subscribers { row.failures.append("reached \(reached) of \(posts * subscribers)") }
        if counters.contains(where: { $0.count != posts || $0.outOfOrder > 0 }) {
            row.failures.append("a subscriber missed a post or got one out of order")
        }
        withExtendedLifetime(subscriptions) {}
        return row
    }

    /// `operations` pairs of subscribe and cancel on a channel with `subscribers` subscribers:
    /// nanoseconds per pair.
    static func hubSubscribeCancel(subscribers: Int, operations: Int) -> Row {
        let hub = Hub()
        let channel = Hub.Channel<Int>("scale.membership")
        let subscriptions = (0..<subscribers).map { _ in hub.subscribe(to: channel, on: .immediate) { _ in } }
        let start = now()
        for _ in 0..<operations {
            hub.subscribe(to: channel, on: .immediate) { _ in }.cancel()
        }
        let elapsed = now() - start
        var row = Row(
            axis: "Hub subscribe + cancel, channel of n", size: subscribers,
            nanosPerUnit: Double(elapsed) / Double(operations), unit: "per subscribe + cancel")
        let reached = hub.post(channel, 0)
        if reached != subscribers { row.failures.append("a post reached \(reached) of \(subscribers) subscribers") }
        withExtendedLifetime(subscriptions) {}
        return row
    }

    static func markdown(_ rows: [Row]) -> String {
        var out = [
            "### Scale (issue 19): cost per unit as the size grows",
            "",
            "| axis | size | ns | unit | growth vs smallest size |",
            "|---|--:|--:|---|--:|",
        ]
        for row in rows {
            let smallest = rows.filter { $0.axis == row.axis }.min { $0.size < $1.size }!
            let growth = row.nanosPerUnit / smallest.nanosPerUnit
            out.append(
                "| \(row.axis) | \(count(Double(row.size))) | \(format(row.nanosPerUnit)) | \(row.unit) | "
                    + "\(format(growth, digits: 2))×\(row.failures.isEmpty ? "" : " FAILED") |")
        }
        return out.joined(separator: "\n")
    }
}
