extension ObservableValue {
    /// The number of observations attached to the box (for tests).
    var observerCount: Int { registry.withLock { lock, _ in storage.withObservers(lock) { $0.count } } }
}

extension ObservedProjection {
    /// The number of observations attached to the property (for tests).
    var observerCount: Int { model.registry.withLock { lock, _ in storage.withObservers(lock) { $0.count } } }
}
