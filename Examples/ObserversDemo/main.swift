// observers-demo: seed 000's game. A GameState adds and destroys enemies on a background queue and
// forwards each change to the observers in an ObserverSet<any GameObserver>, each on its own
// target; every observer implements only the messages it cares about, and a message nobody
// implements is reported by name. Scores and cleared levels go through a pub/sub Hub. The demo
// ends by itself and verifies who was told what, in which order, and where.
//
//     swift run observers-demo [--enemies N] [--remove-every N] [--pace-ms MS] [--quiet] [--quick]

import DemoSupport
import Foundation
import Receptionist

let settings = Settings.parse()
let console = Console(enabled: !settings.quiet)
let clock = ContinuousClock()
let started = clock.now

// MARK: - The game and its observers

let hub = Hub()  // independent of Hub.default: nothing else in the process posts on it
let game = GameState(hub: hub)
let achievements = Achievements(game: game)
let gameQueue = Place.serialQueue("game.loop")

let miniMap = MiniMap(console: console)
let hints = TargetHints(limit: settings.hintsLimit, removingItselfFrom: game.observers, console: console)
let gameView = GameView(console: console)
let sound = SoundEngine(console: console)

// The set holds observers weakly: the globals above keep them alive.
game.observers.add(miniMap, on: .mainActor)
game.observers.add(hints)  // synchronous: called on the game's queue, inside forward
game.observers.add(gameView, on: Place.serialQueue("game.view"))
game.observers.add(sound, on: Place.operationQueue("game.sound"))

let unhandled = Transcript("unhandled", console: console)
game.observers.unhandledMessageHandler = { name in
    unhandled.record(name, note: "← forwarded, but no observer implements it")
}

// MARK: - The hub's subscribers

let scoreboard = Transcript("Scoreboard", console: console)
let hud = Transcript("HUD", console: console)
let analytics = Transcript("Analytics", console: console)
let killFeed = Transcript("KillFeed", console: console)
let analyticsQueue = Place.operationQueue("hub.analytics")

let subscriptions: [Hub.Subscription] = [
    hub.subscribe(to: .scoreChanged, on: Place.serialQueue("hub.scoreboard")) { score in
        scoreboard.record("scoreChanged \(score.label)")
    },
    hub.subscribe(to: .scoreChanged, on: .mainActor) { score in
        hud.record("scoreChanged \(score.label)")
    },
    hub.subscribe(to: .levelCleared, on: .mainActor) {
        hud.record("levelCleared")
    },
    hub.subscribe(to: .scoreChanged, on: analyticsQueue) { score in
        analytics.record("scoreChanged \(score.label)")
    },
    hub.subscribe(to: .levelCleared, on: analyticsQueue) {
        analytics.record("levelCleared")
    },
    // Only the GameState's posts: not the bonuses Achievements posts on the same channel.
    hub.subscribe(to: .scoreChanged, from: game, on: Place.serialQueue("hub.killfeed")) { score in
        killFeed.record("scoreChanged \(score.label)")
    },
]

print(
    "observers-demo: \(settings.enemies) enemies, the oldest destroyed after every \(settings.removeEvery) added, "
        + "a boss at level 2" + (settings.quick ? " (quick)" : "")
)
if !settings.quiet {
    print(
        """
          observers, ObserverSet<any GameObserver> in registration order:
            MiniMap      on .mainActor (RunLoop.main on the main thread)   addEnemy, removeEnemy, gameOver
            TargetHints  synchronous (the game's queue)                    addEnemy, removeEnemy, gameOver; \
        leaves after \(settings.hintsLimit)
            GameView     on serial DispatchQueue game.view                 addEnemy, removeEnemy, gameOver
            SoundEngine  on OperationQueue game.sound                      removeEnemy, gameOver
            nobody implements addBoss(_:): unhandledMessageHandler reports it
          hub subscribers, an independent Hub():
            Scoreboard   scoreChanged                 on serial DispatchQueue hub.scoreboard
            HUD          scoreChanged, levelCleared   on .mainActor
            Analytics    scoreChanged, levelCleared   on OperationQueue hub.analytics
            KillFeed     scoreChanged from the GameState only, on serial DispatchQueue hub.killfeed

          where          who         what
        """
    )
}

// MARK: - Play

/// Runs the main run loop (so main-actor deliveries happen on the main thread) until `done`
/// returns `true` or `limit` has passed. Returns whether `done` returned `true`.
func runMainLoop(for limit: Duration, until done: () -> Bool) -> Bool {
    let deadline = clock.now + limit
    while !done() {
        if clock.now >= deadline { return false }
        _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
    }
    return true
}

let director = Director(game: game, achievements: achievements, settings: settings, console: console)
let played = DispatchGroup()
played.enter()
gameQueue.async {
    director.play()
    played.leave()
}
let gameLimit = settings.pace * (3 * settings.enemies + 8) + .seconds(30)
let gameEnded = runMainLoop(for: gameLimit) { played.wait(timeout: .now()) == .success }

// MARK: - Expectations

let log = director.gameLog

/// The messages of the game an observer implementing `kinds` is told, in order.
func told(_ kinds: Set<MessageKind>) -> [String] {
    log.forwarded.filter { kinds.contains(MessageKind($0)) }.map(\.label)
}

/// The posts on `channels` (from the GameState only, if `gameOnly`), in order.
func posted(on channels: Set<GameLog.Post.Channel>, gameOnly: Bool = false) -> [String] {
    log.posts.filter { channels.contains($0.channel) && (!gameOnly || $0.fromGame) }
        .map { $0.channel == .scoreChanged ? "scoreChanged \($0.label)" : "levelCleared" }
}

let everythingForHints = told(TargetHints.implements)
// TargetHints is told what it implements up to its last hint, when it removes itself; nothing after.
var expectedForHints: [String] = []
var hintsExpected = 0
for message in everythingForHints where hintsExpected < settings.hintsLimit {
    expectedForHints.append(message)
    if message.hasPrefix("addEnemy") { hintsExpected += 1 }
}
let expectedUnhandled = Array(repeating: "addBoss(_:)", count: log.bosses)

/// Each recipient, where it is told, and what it should have been told.
struct Recipient {
    let transcript: Transcript
    let target: String
    let place: String
    let expected: [String]
    /// The channels of a hub subscriber with several subscriptions, checked one by one: there is
    /// no order between two subscriptions' deliveries. `[nil]` to check all messages as one.
    var channels: [String?] = [nil]
}

let bothChannels = ["scoreChanged", "levelCleared"]
let recipients = [
    Recipient(
        transcript: miniMap.transcript, target: ".mainActor", place: "main thread",
        expected: told(MiniMap.implements)
    ),
    Recipient(
        transcript: hints.transcript, target: "synchronous", place: "game.loop",
        expected: expectedForHints
    ),
    Recipient(
        transcript: gameView.transcript, target: "DispatchQueue", place: "game.view",
        expected: told(GameView.implements)
    ),
    Recipient(
        transcript: sound.transcript, target: "OperationQueue", place: "game.sound",
        expected: told(SoundEngine.implements)
    ),
    Recipient(
        transcript: scoreboard, target: "DispatchQueue", place: "hub.scoreboard",
        expected: posted(on: [.scoreChanged])
    ),
    Recipient(
        transcript: hud, target: ".mainActor", place: "main thread",
        expected: posted(on: [.scoreChanged, .levelCleared]), channels: bothChannels
    ),
    Recipient(
        transcript: analytics, target: "OperationQueue", place: "hub.analytics",
        expected: posted(on: [.scoreChanged, .levelCleared]), channels: bothChannels
    ),
    Recipient(
        transcript: killFeed, target: "DispatchQueue", place: "hub.killfeed",
        expected: posted(on: [.scoreChanged], gameOnly: true)
    ),
]

// Wait for every delivery (bounded): the main actor's need the run loop.
let delivered =
    gameEnded
    && runMainLoop(for: .seconds(10)) {
        recipients.allSatisfy { $0.transcript.count >= $0.expected.count }
            && unhandled.count >= expectedUnhandled.count
    }
let elapsed = clock.now - started

// MARK: - Summary and verification

/// `told 17: addEnemy ×12, removeEnemy ×4, gameOver ×1`, counting messages by their first word.
func tally(_ messages: [String]) -> String {
    var order: [String] = []
    var counts: [String: Int] = [:]
    for message in messages {
        let head = String(message.prefix { $0 != " " })
        if counts[head] == nil { order.append(head) }
        counts[head, default: 0] += 1
    }
    return "told \(messages.count)" + (order.isEmpty ? "" : ": ")
        + order.map { "\($0) ×\(counts[$0]!)" }.joined(separator: ", ")
}

func places(_ transcript: Transcript) -> String {
    let places = transcript.all.map(\.place).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    return places.isEmpty ? "nowhere" : places.joined(separator: ", ")
}

let hintsState = hints.snapshot
let scoresByAchievements = log.posts.count { $0.channel == .scoreChanged && !$0.fromGame }
print(
    "summary: \(settings.enemies) enemies added, \(log.removed) destroyed, \(log.bosses) boss; "
        + "\(log.forwarded.count) messages forwarded, \(unhandled.count) unhandled; \(log.posts.count) hub posts; "
        + Format.duration(elapsed)
)
for recipient in recipients {
    let transcript = recipient.transcript
    var line =
        "  " + transcript.name.padded(to: 12) + recipient.target.padded(to: 16)
        + tally(transcript.all.map(\.message)) + "; on \(places(transcript))"
    if transcript === hints.transcript {
        line +=
            "; then removed itself: of the \(everythingForHints.count - expectedForHints.count) later messages it "
            + "implements, \(hintsState.callsAfterRemoval) reached it"
    }
    if transcript === killFeed {
        line += " (\(scoresByAchievements) bonus scores from Achievements filtered out)"
    }
    print(line)
}
print(
    "  " + "unhandled".padded(to: 28)
        + (unhandled.all.isEmpty
            ? "nothing" : unhandled.all.map { "\($0.message) reported on \($0.place)" }.joined(separator: ", "))
)

var failures: [String] = []
if !gameEnded { failures.append("the game did not end within \(Format.duration(gameLimit))") }
if gameEnded && !delivered { failures.append("not every delivery arrived within 10 s") }
for recipient in recipients {
    for channel in recipient.channels {
        failures += recipient.transcript.problems(expected: recipient.expected, on: recipient.place, channel: channel)
    }
}
if !hintsState.removed || hintsState.callsAfterRemoval != 0 || game.observers.contains(hints) {
    failures.append(
        "TargetHints removed: \(hintsState.removed), called \(hintsState.callsAfterRemoval) times afterwards, "
            + "still in the set: \(game.observers.contains(hints))"
    )
}
if unhandled.all.map(\.message) != expectedUnhandled {
    failures.append("unhandled messages reported: \(unhandled.all.map(\.message)), expected \(expectedUnhandled)")
}
for subscription in subscriptions {
    let statistics = subscription.statistics
    if statistics.discarded != 0 || statistics.delivered != statistics.received {
        failures.append("a hub subscription's statistics do not add up: \(statistics)")
    }
}
for subscription in subscriptions { subscription.cancel() }

if failures.isEmpty {
    print(
        "verified: each observer was told exactly the messages it implements, in order, on its target; "
            + "TargetHints was told nothing after removing itself; \(expectedUnhandled.count) unhandled message "
            + "reported by name (addBoss(_:)); every hub subscriber got every post in order on its queue, "
            + "KillFeed only the GameState's"
    )
    exit(0)
} else {
    print("NOT verified: " + failures.joined(separator: "; "))
    exit(1)
}
