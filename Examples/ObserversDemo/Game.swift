import DemoSupport
import Foundation
import Receptionist

/// One enemy on the board.
struct Enemy: Sendable, Hashable {
    enum Kind: String, Sendable {
        case grunt, drone, sniper, boss

        /// What destroying one is worth.
        var points: Int {
            switch self {
            case .grunt: 100
            case .drone: 150
            case .sniper: 250
            case .boss: 1_000
            }
        }
    }

    let id: Int
    let kind: Kind
    let x: Int
    let y: Int

    /// Enemy `id`, of a kind and at a position that depend on `id` only.
    init(id: Int, kind: Kind? = nil) {
        self.id = id
        self.kind = kind ?? [Kind.grunt, .drone, .grunt, .sniper][id % 4]
        x = (id * 7) % 20
        y = (id * 13) % 11
    }

    var label: String { "#\(id) \(kind.rawValue)" }
}

/// The score after a change, posted on ``Hub/Channel/scoreChanged``.
struct Score: Sendable, Equatable {
    let points: Int
    let total: Int
    let reason: String

    var label: String { "+\(points) \(reason) = \(total)" }
}

extension Hub.Channel where Payload == Score {
    /// The score changed: an enemy was destroyed, or a bonus was awarded.
    static let scoreChanged = Hub.Channel<Score>("scoreChanged")
}

extension Hub.Channel where Payload == Void {
    /// A level was cleared.
    static let levelCleared = Hub.Channel<Void>("levelCleared")
}

/// What a ``GameObserver`` may be told, as the demo writes it down.
enum GameMessage: Sendable, Equatable {
    case addEnemy(Enemy)
    case removeEnemy(Enemy)
    case addBoss(Enemy)
    case gameOver

    var label: String {
        switch self {
        case .addEnemy(let enemy): "addEnemy \(enemy.label)"
        case .removeEnemy(let enemy): "removeEnemy \(enemy.label)"
        case .addBoss(let boss): "addBoss \(boss.label)"
        case .gameOver: "gameOver"
        }
    }
}

/// The model: the enemies on the board and the score. It forwards every change to its observers
/// and posts scores and cleared levels on a hub; it knows neither its observers nor the hub's
/// subscribers.
final class GameState: Sendable {
    struct Board {
        var enemies: [Enemy] = []
        var boss: Enemy?
        var score = 0
    }

    let observers = ObserverSet<any GameObserver>()
    let hub: Hub
    private let board = Protected(Board())

    init(hub: Hub) {
        self.hub = hub
    }

    func addEnemy(_ enemy: Enemy) {
        board.withLock { $0.enemies.append(enemy) }
        observers.forward { $0.addEnemy(enemy) }  // reported as "addEnemy(_:)" if nobody handles it
    }

    /// Destroys `enemy` and posts the new score.
    @discardableResult
    func removeEnemy(_ enemy: Enemy) -> Score {
        board.withLock { $0.enemies.removeAll { $0 == enemy } }
        observers.forward { $0.removeEnemy(enemy) }
        let score = addPoints(enemy.kind.points, for: "\(enemy.label) destroyed")
        hub.post(.scoreChanged, score, from: self)
        return score
    }

    func addBoss(_ boss: Enemy) {
        board.withLock { $0.boss = boss }
        observers.forward { $0.addBoss(boss) }
    }

    func clearLevel() {
        hub.post(.levelCleared, from: self)
    }

    func gameOver() {
        observers.forward { $0.gameOver() }
    }

    /// Adds `points` to the score.
    func addPoints(_ points: Int, for reason: String) -> Score {
        board.withLock { board in
            board.score += points
            return Score(points: points, total: board.score, reason: reason)
        }
    }

    var enemiesLeft: Int { board.withLock { $0.enemies.count } }
}

/// Awards bonuses: another poster on the hub's `scoreChanged` channel.
final class Achievements: Sendable {
    let game: GameState

    init(game: GameState) {
        self.game = game
    }

    @discardableResult
    func levelCleared(_ level: Int) -> Score {
        let score = game.addPoints(500, for: "level \(level) bonus")
        game.hub.post(.scoreChanged, score, from: self)
        return score
    }
}

/// What the game did, in order: what it forwarded to its observers and posted on the hub. The
/// demo's expectations are derived from it.
struct GameLog: Sendable {
    struct Post: Sendable {
        enum Channel: String, Sendable {
            case scoreChanged, levelCleared
        }

        let channel: Channel
        let label: String
        let fromGame: Bool
    }

    var forwarded: [GameMessage] = []
    var posts: [Post] = []
    var removed = 0
    var bosses = 0
}

/// Plays the game on a background queue: adds enemies, destroys the oldest after every
/// `removeEvery` added, a boss at the start of level 2, clears two levels, ends the game.
final class Director: Sendable {
    let game: GameState
    let achievements: Achievements
    let settings: Settings
    let console: Console
    private let log = Protected(GameLog())

    init(game: GameState, achievements: Achievements, settings: Settings, console: Console) {
        self.game = game
        self.achievements = achievements
        self.settings = settings
        self.console = console
    }

    var gameLog: GameLog { log.withLock { $0 } }

    func play() {
        let firstLevel = (settings.enemies + 1) / 2
        var alive: [Enemy] = []
        for id in 1...settings.enemies {
            if id == firstLevel + 1 { addBoss() }
            let enemy = Enemy(id: id)
            say("addEnemy(_:) \(enemy.label) at (\(enemy.x), \(enemy.y))")
            log.withLock { $0.forwarded.append(.addEnemy(enemy)) }
            game.addEnemy(enemy)
            alive.append(enemy)
            pause()
            if id % settings.removeEvery == 0 {
                let oldest = alive.removeFirst()
                say("removeEnemy(_:) \(oldest.label)")
                log.withLock { $0.forwarded.append(.removeEnemy(oldest)) }
                let score = game.removeEnemy(oldest)
                log.withLock { log in
                    log.removed += 1
                    log.posts.append(.init(channel: .scoreChanged, label: score.label, fromGame: true))
                }
                pause()
            }
            if id == firstLevel { clearLevel(1) }
        }
        if settings.enemies == firstLevel { addBoss() }
        clearLevel(2)
        say("gameOver() with \(game.enemiesLeft) enemies left")
        log.withLock { $0.forwarded.append(.gameOver) }
        game.gameOver()
    }

    private func addBoss() {
        let boss = Enemy(id: 0, kind: .boss)
        say("addBoss(_:) \(boss.label)  (no observer implements it)")
        log.withLock { log in
            log.forwarded.append(.addBoss(boss))
            log.bosses += 1
        }
        game.addBoss(boss)
        pause()
    }

    private func clearLevel(_ level: Int) {
        say("level \(level) cleared: hub posts levelCleared, then Achievements a bonus")
        game.clearLevel()
        let score = achievements.levelCleared(level)
        log.withLock { log in
            log.posts.append(.init(channel: .levelCleared, label: "levelCleared", fromGame: true))
            log.posts.append(.init(channel: .scoreChanged, label: score.label, fromGame: false))
        }
        pause()
    }

    private func say(_ what: String) {
        console.event(Place.current, "GameState", what)
    }

    private func pause() {
        if settings.pace > .zero { Thread.sleep(forTimeInterval: settings.pace.inSeconds) }
    }
}
