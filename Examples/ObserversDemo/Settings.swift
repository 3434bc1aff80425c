import DemoSupport

/// The demo's command-line settings.
struct Settings: Sendable {
    var enemies: Int
    /// One enemy is destroyed after every `removeEvery` enemies added.
    var removeEvery: Int
    /// The game's pause between two steps, so the output can be read as it happens.
    var pace: Duration
    var quiet: Bool
    var quick: Bool

    /// TargetHints removes itself from the game's observers after hinting at this many enemies.
    var hintsLimit: Int { max(1, enemies / 3) }

    /// Parses the program's arguments; on `--help` prints the usage and exits with status 0, on
    /// anything unexpected prints an error and the usage to standard error and exits with status 2.
    static func parse() -> Settings {
        var options = CommandLineOptions(
            command: "observers-demo",
            abstract: """
                Seed 000's game: a GameState adds (and destroys) enemies on a background queue and forwards
                each change to its observers (an ObserverSet<any GameObserver>): a MiniMap on the main actor,
                TargetHints called synchronously (it removes itself mid-game), a GameView and a SoundEngine
                on queues of their own. Each observer implements only the messages it cares about; a
                message nobody implements is reported by name. Scores and cleared levels go through a Hub
                to subscribers on a serial queue, an OperationQueue and the main actor, one of them taking
                only the GameState's posts. Ends by itself and verifies who was told what, in order, where.
                """
        )
        let enemies = options.positiveInteger("--enemies", default: 12, help: "enemies added during the game")
        let removeEvery = options.positiveInteger(
            "--remove-every", default: 3, help: "destroy the oldest enemy after every N added"
        )
        let pace = options.milliseconds("--pace-ms", default: .milliseconds(40), help: "pause between game steps")
        let quiet = options.flag("--quiet", help: "print only the summary")
        let quick = options.flag("--quick", help: "a small, fast run for CI: at most 6 enemies, no pauses")
        let parsed = options.parse()
        if parsed[enemies] > 10_000 { options.fail("--enemies must be at most 10000, got \(parsed[enemies])") }
        let quickRun = parsed[quick]
        return Settings(
            enemies: quickRun ? min(parsed[enemies], 6) : parsed[enemies],
            removeEvery: parsed[removeEvery],
            pace: quickRun ? .zero : parsed[pace],
            quiet: parsed[quiet],
            quick: quickRun
        )
    }
}
