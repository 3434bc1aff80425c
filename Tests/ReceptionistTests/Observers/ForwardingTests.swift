import Testing

@testable import Receptionist

/// An observer protocol with "optional" methods: default implementations that say so.
protocol GameObserver: AnyObject, Sendable {
    func enemyAdded(_ name: String)
    func enemyRemoved(_ name: String)
}

extension GameObserver {
    func enemyAdded(_ name: String) { Forwarding.notHandled() }
    func enemyRemoved(_ name: String) { Forwarding.notHandled() }
}

final class MiniMap: GameObserver {
    let log: Recorder<String>
    init(log: Recorder<String>) { self.log = log }
    func enemyAdded(_ name: String) { log.append("map+\(name)") }
}

final class TargetHints: GameObserver {
    let log: Recorder<String>
    init(log: Recorder<String>) { self.log = log }
    func enemyAdded(_ name: String) { log.append("hints+\(name)") }
    func enemyRemoved(_ name: String) { log.append("hints-\(name)") }
}

final class Silent: GameObserver {}

/// The subject of seed 000: forwards each message from the method of the same name.
final class GameState: Sendable {
    let observers = ObserverSet<any GameObserver>()

    @discardableResult
    func enemyAdded(_ name: String) -> Int { observers.forward { $0.enemyAdded(name) } }

    @discardableResult
    func enemyRemoved(_ name: String) -> Int { observers.forward { $0.enemyRemoved(name) } }
}

@Suite struct ForwardingTests {
    @Test func forwardsToEveryObserverThatImplementsTheMessage() {
        let game = GameState()
        let log = Recorder<String>()
        let map = MiniMap(log: log)
        let hints = TargetHints(log: log)
        game.observers.add(map)
        game.observers.add(hints)
        game.enemyAdded("orc")
        game.enemyRemoved("orc")
        #expect(log.values == ["map+orc", "hints+orc", "hints-orc"])
    }

    @Test func reportsAMessageNoObserverHandledByTheForwardingMethodsName() {
        let game = GameState()
        let log = Recorder<String>()
        let unhandled = Recorder<String>()
        let map = MiniMap(log: log)
        let silent = Silent()
        game.observers.add(map)
        game.observers.add(silent)
        game.observers.unhandledMessageHandler = { unhandled.append($0) }
        game.enemyAdded("orc")
        #expect(unhandled.values.isEmpty, "one observer handled it")
        #expect(game.enemyRemoved("orc") == 2, "both observers were reached")
        #expect(unhandled.values == ["enemyRemoved(_:)"])
    }

    @Test func aMessageWithNoObserverAtAllIsUnhandled() {
        let game = GameState()
        let unhandled = Recorder<String>()
        game.observers.unhandledMessageHandler = { unhandled.append($0) }
        #expect(game.enemyAdded("orc") == 0)
        #expect(unhandled.values == ["enemyAdded(_:)"])
    }

    @Test func theDiagnosticIsOffUnlessInstalled() {
        let game = GameState()
        let silent = Silent()
        game.observers.add(silent)
        #expect(game.enemyAdded("orc") == 1)
        game.observers.unhandledMessageHandler = nil
        #expect(game.observers.unhandledMessageHandler == nil)
    }

    @Test func observersWithATargetAreReportedOnceTheirDeliveriesRan() {
        let game = GameState()
        let log = Recorder<String>()
        let unhandled = Recorder<String>()
        let target = ManualTarget()
        let silent = Silent()
        let hints = TargetHints(log: log)
        game.observers.add(silent, on: target)
        game.observers.add(hints, on: target)
        game.observers.unhandledMessageHandler = { unhandled.append($0) }

        game.enemyRemoved("orc")
        game.enemyAdded("elf")
        #expect(unhandled.values.isEmpty, "nothing is known before the deliveries run")
        target.runAll()
        #expect(log.values == ["hints-orc", "hints+elf"])
        #expect(unhandled.values.isEmpty, "hints handled both")

        game.observers.remove(hints)
        game.enemyAdded("troll")
        #expect(unhandled.values.isEmpty)
        target.runAll()
        #expect(unhandled.values == ["enemyAdded(_:)"])
    }

    @Test func aMessageDiscardedWithItsObserverCountsAsUnhandled() {
        let game = GameState()
        let log = Recorder<String>()
        let unhandled = Recorder<String>()
        let target = ManualTarget()
        let hints = TargetHints(log: log)
        game.observers.add(hints, on: target)
        game.observers.unhandledMessageHandler = { unhandled.append($0) }
        game.enemyAdded("orc")
        game.observers.remove(hints)  // discards the waiting message
        #expect(unhandled.values == ["enemyAdded(_:)"])
        target.runAll()
        #expect(log.values.isEmpty)
    }

    @Test func anExplicitNameIsReported() {
        let observers = ObserverSet<any GameObserver>()
        let unhandled = Recorder<String>()
        observers.unhandledMessageHandler = { unhandled.append($0) }
        observers.forward("spawnWave") { $0.enemyAdded("wave") }
        #expect(unhandled.values == ["spawnWave"])
    }

    @Test func notHandledOutsideAForwardedCallDoesNothing() {
        let silent = Silent()
        silent.enemyAdded("orc")  // no probe installed: must not crash or leak state
        let observers = ObserverSet<any GameObserver>()
        let unhandled = Recorder<String>()
        let log = Recorder<String>()
        observers.add(MiniMap(log: log))  // deallocated at once
        let map = MiniMap(log: log)
        observers.add(map)
        observers.unhandledMessageHandler = { unhandled.append($0) }
        observers.forward { $0.enemyAdded("orc") }
        #expect(unhandled.values.isEmpty)
        #expect(log.values == ["map+orc"])
    }
}
