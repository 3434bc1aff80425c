/// Which subscribers a ``Hub`` has, by channel, in registration order: a plain value the hub
/// keeps in its lock.
///
/// Every operation is cheap enough for a lock: a snapshot of a channel's subscribers shares the
/// array's storage (copy on write), so the hub takes it in O(1) and sends outside the lock.
@usableFromInline
struct HubRegistry: Sendable {
    /// A subscriber and the identifier its ``Hub/Subscription`` removes it by.
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline let id: UInt64
        @usableFromInline let subscriber: any HubSubscriber
    }

    /// Each channel's subscribers, by ascending `id`, which is registration order. A channel
    /// without subscribers has no key.
    private var channels: [ChannelKey: [Entry]] = [:]
    private var nextID: UInt64 = 0

    /// Adds `subscriber` to `key`'s channel, after the subscribers it already has.
    ///
    /// - Returns: the identifier to remove it by.
    mutating func add(_ subscriber: any HubSubscriber, to key: ChannelKey) -> UInt64 {
        let id = nextID
        nextID += 1
        channels[key, default: []].append(Entry(id: id, subscriber: subscriber))
        return id
    }

    /// Removes the subscriber `id` from `key`'s channel.
    ///
    /// - Returns: the removed subscriber, for the caller to release after unlocking (its last
    ///   release may run user deinitialisers), or `nil` if it was not there (already removed).
    mutating func remove(_ id: UInt64, from key: ChannelKey) -> (any HubSubscriber)? {
        // Find the index in a separate call, so no second reference to the array is alive while
        // it is mutated (which would copy it).
        guard let index = index(of: id, in: key) else { return nil }
        if channels[key]!.count == 1 {
            return channels.removeValue(forKey: key)![index].subscriber
        }
        return channels[key]!.remove(at: index).subscriber
    }

    /// `key`'s subscribers now, in registration order. Later changes to the registry do not
    /// change the returned array.
    @usableFromInline
    func subscribers(of key: ChannelKey) -> [Entry] {
        channels[key] ?? []
    }

    /// How many subscribers `key`'s channel has.
    func count(of key: ChannelKey) -> Int {
        channels[key]?.count ?? 0
    }

    /// How many channels have at least one subscriber.
    var channelCount: Int { channels.count }

    /// Where the subscriber `id` is in `key`'s channel (a binary search: entries are sorted by
    /// `id`), or `nil` if it is not there.
    private func index(of id: UInt64, in key: ChannelKey) -> Int? {
        guard let entries = channels[key] else { return nil }
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].id == id ? low : nil
    }
}
