extension ObservableValue {
    /// The number of observations attached to the box (for tests).
    var observerCount: Int { registry.state.withLock { _ in storage.observers.count } }
}

extension ObservedProjection {
    /// The number of observations attached to the property (for tests).
    var observerCount: Int { model.registry.state.withLock { _ in storage.observers.count } }
}
