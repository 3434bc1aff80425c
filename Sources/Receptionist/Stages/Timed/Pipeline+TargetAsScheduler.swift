// Source compatibility for code written when `DispatchQueue` and `OperationQueue` were
// schedulers: a time-based stage given a target as its scheduler gets `.on(target)`, with a
// deprecation warning that says so (see CHANGELOG.md, "Earlier source breaks").

extension Pipeline {
    @available(*, deprecated, message: "pass scheduler: .on(queue); a target is no longer a scheduler")
    @inlinable
    public func batch(count: Int, every interval: Duration, scheduler target: some DeliveryTarget)
        -> Pipeline<Source, [Output]>
    {
        batch(count: count, every: interval, scheduler: .on(target))
    }

    @available(*, deprecated, message: "pass scheduler: .on(queue); a target is no longer a scheduler")
    @inlinable
    public func batch(every interval: Duration, scheduler target: some DeliveryTarget) -> Pipeline<Source, [Output]> {
        batch(every: interval, scheduler: .on(target))
    }

    @available(*, deprecated, message: "pass scheduler: .on(queue); a target is no longer a scheduler")
    @inlinable
    public func debounce(for interval: Duration, scheduler target: some DeliveryTarget) -> Pipeline<Source, Output> {
        debounce(for: interval, scheduler: .on(target))
    }

    @available(*, deprecated, message: "pass scheduler: .on(queue); a target is no longer a scheduler")
    @inlinable
    public func debounce(for interval: Duration, maxWait: Duration, scheduler target: some DeliveryTarget)
        -> Pipeline<Source, Output>
    {
        debounce(for: interval, maxWait: maxWait, scheduler: .on(target))
    }

    @available(*, deprecated, message: "pass scheduler: .on(queue); a target is no longer a scheduler")
    @inlinable
    public func throttle(for interval: Duration, scheduler target: some DeliveryTarget, latest: Bool)
        -> Pipeline<Source, Output>
    {
        throttle(for: interval, scheduler: .on(target), latest: latest)
    }

    @available(*, deprecated, message: "pass scheduler: .on(queue); a target is no longer a scheduler")
    @inlinable
    public func throttle(
        for interval: Duration, scheduler target: some DeliveryTarget, leading: Bool, trailing: Bool
    ) -> Pipeline<Source, Output> {
        throttle(for: interval, scheduler: .on(target), leading: leading, trailing: trailing)
    }
}
