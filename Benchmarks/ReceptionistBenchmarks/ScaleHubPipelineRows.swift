// `--scale`, staged fan-out: one post reaching k subscribers that each have stages of their own
// (`Hub.pipeline(for:)`), beside k subscribers without stages and beside the plain alternative,
// one `send` to each of k staged receptionists. One thread, every delivery on `.immediate`: what
// differs between the rows is the library's own work per post. Each row checks that every consumer
// got every post, in order.

import Receptionist

extension Scale {
    /// How one value reaches k consumers.
    enum FanOutWay: CaseIterable {
        /// One `Hub.post`; each subscriber is `hub.pipeline(for:).filter { … }.batch(count: 64)`.
        case hubWithStages
        /// One `Hub.post`; each subscriber is `hub.subscribe(to:on:)`.
        case hubWithoutStages
        /// One `send` to each of k `Receptionist.pipeline(of:).filter { … }.batch(count: 64)`.
        case receptionistSends

        var axis: String {
            switch self {
            case .hubWithStages: "Hub.post, k subscribers with stages (filter, batch(count: 64))"
            case .hubWithoutStages: "Hub.post, k subscribers without stages"
            case .receptionistSends: "k Receptionist sends, each through filter, batch(count: 64)"
            }
        }
    }

    /// The subscriber counts of the staged fan-out rows.
    static let fanOutConsumers = [1, 4, 16]

    /// `posts` values handed to `consumers` consumers the way `way` says: nanoseconds per
    /// consumer reached (a post to k subscribers costs k times that).
    static func stagedFanOut(_ way: FanOutWay, consumers: Int, posts: Int) -> Row {
        let counters = (0..<consumers).map { _ in PingCounter() }
        let hub = Hub()
        let channel = Hub.Channel<Int>("scale.staged")
        let handles: [any DeliveryHandle]
        var reached = 0
        var elapsed: UInt64 = 0
        switch way {
        case .hubWithStages:
            let subscriptions = counters.map { counter in
                hub.pipeline(for: channel).filter { $0 > 0 }.batch(count: 64).deliver(on: .immediate) { batch in
                    for value in batch { counter.ping(value) }
                }
            }
            let start = now()
            for post in 1...posts { reached += hub.post(channel, post) }
            elapsed = now() - start
            for subscription in subscriptions { subscription.flush() }
            handles = subscriptions
        case .hubWithoutStages:
            let subscriptions = counters.map { counter in
                hub.subscribe(to: channel, on: .immediate) { counter.ping($0) }
            }
            let start = now()
            for post in 1...posts { reached += hub.post(channel, post) }
            elapsed = now() - start
            handles = subscriptions
        case .receptionistSends:
            let receptionists = counters.map { counter in
                Receptionist.pipeline(of: Int.self).filter { $0 > 0 }.batch(count: 64).deliver(on: .immediate) {
                    batch in
                    for value in batch { counter.ping(value) }
                }
            }
            let start = now()
            for post in 1...posts {
                for receptionist in receptionists where receptionist.send(post).isAccepted { reached += 1 }
            }
            elapsed = now() - start
            for receptionist in receptionists { receptionist.flush() }
            handles = receptionists
        }
        var row = Row(
            axis: way.axis, size: consumers, nanosPerUnit: Double(elapsed) / Double(posts * consumers),
            unit: "per consumer reached")
        if reached != posts * consumers { row.failures.append("reached \(reached) of \(posts * consumers)") }
        if counters.contains(where: { $0.count != posts || $0.outOfOrder > 0 }) {
            row.failures.append("a consumer missed a value or got one out of order")
        }
        for handle in handles { handle.cancel() }
        return row
    }
}
