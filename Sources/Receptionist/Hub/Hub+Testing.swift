extension Hub {
    /// How many subscriptions `channel` has (a test hook).
    package func subscriberCount<Payload>(of channel: Channel<Payload>) -> Int {
        registry.withLock { $0.count(of: channel.key) }
    }

    /// How many channels have subscriptions (a test hook).
    package var channelCount: Int {
        registry.withLock { $0.channelCount }
    }
}
