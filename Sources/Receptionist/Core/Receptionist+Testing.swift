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

extension Receptionist {
    /// Test hook: the statistics of a staged pipeline's intake (the events waiting for its
    /// stages); `nil` without stages.
    package var intakeStatistics: ReceptionistStatistics? {
        guard case .staged(let stages) = engine else { return nil }
        return stages.takeUnretainedValue().intake.statistics
    }
}
