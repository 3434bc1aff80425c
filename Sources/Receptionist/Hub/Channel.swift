extension Hub {
    /// A named, typed channel of a ``Hub``: what a subscriber subscribes to and a poster posts on.
    ///
    /// A channel is its name *and* its payload type: `Channel<Int>("level")` and
    /// `Channel<String>("level")` are two different channels, so a subscriber is only ever handed
    /// payloads of the type it declared. Two channels with the same name and payload type are the
    /// same channel, wherever they were created.
    ///
    /// Declare channels once, as static members, so call sites can write `.enemyAdded`:
    ///
    /// ```swift
    /// extension Hub.Channel where Payload == Enemy {
    ///     static let enemyAdded = Hub.Channel<Enemy>("enemyAdded")
    /// }
    /// extension Hub.Channel where Payload == Void {
    ///     static let levelReset = Hub.Channel<Void>("levelReset")
    /// }
    /// ```
    public struct Channel<Payload: Sendable>: Sendable, Hashable {
        /// The channel's name; with the payload type, it identifies the channel.
        public let name: String

        /// Creates the channel named `name` carrying payloads of type `Payload`.
        ///
        /// - Parameter name: the channel's name; must not be empty.
        public init(_ name: String) {
            validate(!name.isEmpty, "Hub.Channel(_:): name must not be empty")
            self.name = name
        }

        /// The key the hub files this channel's subscribers under.
        @usableFromInline
        var key: ChannelKey { ChannelKey(name: name, payload: ObjectIdentifier(Payload.self)) }
    }
}

/// A channel's identity without its payload type parameter: its name and its payload type.
@usableFromInline
struct ChannelKey: Hashable, Sendable {
    let name: String
    let payload: ObjectIdentifier
}
