import DemoSupport
import Receptionist

/// What a ``GameState`` tells its observers. Every method has a default implementation that
/// does nothing but say so (``Forwarding/notHandled()``): an observer implements only what it
/// cares about, and a message no observer implements is reported by name.
protocol GameObserver: AnyObject, Sendable {
    func addEnemy(_ enemy: Enemy)
    func removeEnemy(_ enemy: Enemy)
    func addBoss(_ boss: Enemy)
    func gameOver()
}

extension GameObserver {
    func addEnemy(_ enemy: Enemy) { Forwarding.notHandled() }
    func removeEnemy(_ enemy: Enemy) { Forwarding.notHandled() }
    func addBoss(_ boss: Enemy) { Forwarding.notHandled() }
    func gameOver() { Forwarding.notHandled() }
}

/// Which messages an observer implements, for the expectations.
enum MessageKind: Sendable {
    case addEnemy, removeEnemy, addBoss, gameOver

    init(_ message: GameMessage) {
        switch message {
        case .addEnemy: self = .addEnemy
        case .removeEnemy: self = .removeEnemy
        case .addBoss: self = .addBoss
        case .gameOver: self = .gameOver
        }
    }
}

/// Shows a blip per enemy. Added on the main actor.
final class MiniMap: GameObserver {
    static let implements: Set<MessageKind> = [.addEnemy, .removeEnemy, .gameOver]
    let transcript: Transcript
    private let blips = Protected(0)

    init(console: Console) {
        transcript = Transcript("MiniMap", console: console)
    }

    func addEnemy(_ enemy: Enemy) {
        let count = blips.withLock { blips in
            blips += 1
            return blips
        }
        let note = "→ blip at (\(enemy.x), \(enemy.y)), \(count) on the map"
        transcript.record(GameMessage.addEnemy(enemy).label, note: note)
    }

    func removeEnemy(_ enemy: Enemy) {
        let count = blips.withLock { blips in
            blips -= 1
            return blips
        }
        transcript.record(GameMessage.removeEnemy(enemy).label, note: "→ blip gone, \(count) on the map")
    }

    func gameOver() {
        transcript.record(GameMessage.gameOver.label, note: "→ map cleared")
    }
}

/// Points the player at the nearest enemies, then, after `limit` enemies, removes itself from the
/// game's observers (the player turned hints off). Called synchronously, on the game's queue.
final class TargetHints: GameObserver {
    static let implements: Set<MessageKind> = [.addEnemy, .removeEnemy, .gameOver]

    struct State {
        var hinted = 0
        var removed = false
        var callsAfterRemoval = 0
    }

    let transcript: Transcript
    let limit: Int
    private let observers: ObserverSet<any GameObserver>
    private let console: Console
    private let state = Protected(State())

    init(limit: Int, removingItselfFrom observers: ObserverSet<any GameObserver>, console: Console) {
        self.limit = limit
        self.observers = observers
        self.console = console
        transcript = Transcript("TargetHints", console: console)
    }

    var snapshot: State { state.withLock { $0 } }

    func addEnemy(_ enemy: Enemy) {
        let hinted = state.withLock { state in
            if state.removed { state.callsAfterRemoval += 1 }
            state.hinted += 1
            return state.hinted
        }
        transcript.record(GameMessage.addEnemy(enemy).label, note: "→ hint \(hinted) of \(limit)")
        guard hinted == limit else { return }
        // Removing itself during the forwarding round is allowed; the round calls it no more.
        let removed = observers.remove(self)
        state.withLock { $0.removed = true }
        console.event(Place.current, "TargetHints", "removes itself from the observers (removed: \(removed))")
    }

    func removeEnemy(_ enemy: Enemy) {
        state.withLock { state in if state.removed { state.callsAfterRemoval += 1 } }
        transcript.record(GameMessage.removeEnemy(enemy).label, note: "→ hint dropped")
    }

    func gameOver() {
        state.withLock { state in if state.removed { state.callsAfterRemoval += 1 } }
        transcript.record(GameMessage.gameOver.label)
    }
}

/// Draws the board. Added on a serial dispatch queue of its own.
final class GameView: GameObserver {
    static let implements: Set<MessageKind> = [.addEnemy, .removeEnemy, .gameOver]
    let transcript: Transcript

    init(console: Console) {
        transcript = Transcript("GameView", console: console)
    }

    func addEnemy(_ enemy: Enemy) {
        transcript.record(GameMessage.addEnemy(enemy).label, note: "→ sprite drawn")
    }

    func removeEnemy(_ enemy: Enemy) {
        transcript.record(GameMessage.removeEnemy(enemy).label, note: "→ explosion drawn")
    }

    func gameOver() {
        transcript.record(GameMessage.gameOver.label, note: "→ GAME OVER screen")
    }
}

/// Plays sounds; cares about nothing being added. Added on an operation queue.
final class SoundEngine: GameObserver {
    static let implements: Set<MessageKind> = [.removeEnemy, .gameOver]
    let transcript: Transcript

    init(console: Console) {
        transcript = Transcript("SoundEngine", console: console)
    }

    func removeEnemy(_ enemy: Enemy) {
        transcript.record(GameMessage.removeEnemy(enemy).label, note: "→ boom")
    }

    func gameOver() {
        transcript.record(GameMessage.gameOver.label, note: "→ fanfare")
    }
}
