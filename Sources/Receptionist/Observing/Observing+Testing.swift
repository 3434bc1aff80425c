extension ObservableValue {
    /// The number of observations attached to the box (for tests).
    var observerCount: Int { registry.state.withLock { $0.observers.count } }
}
