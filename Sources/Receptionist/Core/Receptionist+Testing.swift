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

    /// Test hook: a receptionist whose statistics' timing reads `clock`, and that times every
    /// task block against ``MainThreadBudget`` if `watchingMainThreadBudget` (as on the main
    /// thread).
    convenience init(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        drainBudget: Int = ReceptionistCore<Event>.defaultDrainBudget,
        clock: ManualDeliveryClock,
        watchingMainThreadBudget: Bool = false,
        _ task: @escaping @Sendable (Event) -> Void
    ) {
        var delivery = Delivery(on: target, buffering: policy, task)
        delivery.drainBudget = drainBudget
        delivery.clock = DeliveryClock(manual: clock)
        delivery.watchesMainThreadBudget = watchingMainThreadBudget
        self.init(delivery: delivery)
    }
}

extension Receptionist {
    /// Test hook: the statistics of a staged pipeline's intake (the events waiting for its
    /// stages); `nil` without stages.
    package var intakeStatistics: ReceptionistStatistics? {
        stagedPipeline?.intake.statistics
    }

    /// Test hook: the delivery engine of a receptionist without stages; `nil` otherwise.
    var directCore: ReceptionistCore<Event>? {
        switch engine {
        case .direct(let core): core
        default: nil
        }
    }

    /// Test hook: the stages of a receptionist built with them; `nil` otherwise.
    var stagedPipeline: StagedPipeline<Event>? {
        switch engine {
        case .staged(let stages): stages
        default: nil
        }
    }
}

extension Receptionist {
    /// Test hook: how many one-shot writability blocks wait (``whenWritable(on:_:)``).
    package var writableCallbackCount: Int {
        if let stages = stagedPipeline { return stages.intake.state.withLock { $0.writableCallbacks.count } }
        return directCore?.state.withLock { $0.writableCallbacks.count } ?? 0
    }

    /// Test hook: how many persistent writability handlers listen (``onWritabilityChange(on:_:)``).
    package var listenerCount: Int {
        if let stages = stagedPipeline { return stages.intake.state.withLock { $0.listeners.count } }
        return directCore?.state.withLock { $0.listeners.count } ?? 0
    }
}
