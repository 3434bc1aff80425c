extension Receptionist {
    /// Test hook: a receptionist with a custom drain budget.
    package convenience init(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        drainBudget: Int,
        _ task: @escaping @Sendable (Event) -> Void
    ) {
        var delivery = Delivery(on: target, buffering: policy, task)
        delivery.drainBudget = drainBudget
        self.init(delivery: delivery)
    }
}
