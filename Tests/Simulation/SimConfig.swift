import UploaderSupport
import UploaderConfig
import UploaderValues

/// A schedule's `uploader.conf`: the options that change the daemon's path, drawn from the seed
/// and written as INI text, then read by production's loader (`ConfigLoader.parse`), so the
/// simulated daemon runs with production's defaults for everything not drawn and with exactly
/// the profile a real `uploader.conf` with these lines would give.
struct SimConfig {
    /// The config file's text, as the schedule wrote it.
    let text: String
    /// The profile production's loader built from `text` (sizes scaled, see `SimDestination`).
    let profile: Profile
    let destination: SimDestination

    static let path = "/etc/uploader/uploader.conf"

    /// Draws the options and loads the text; `forced` replaces the destination drawn.
    init(spoolRoot: String, choices: ChoiceSource, forced: SimDestination? = nil) {
        let drawn = SimDestination.allCases[choices.pick(SimDestination.weights)]
        destination = forced ?? drawn
        var lines = [
            "[outbox sim]",
            "spool = \(spoolRoot)",
        ] + destination.lines(choices) + [
            "concurrency = \(1 + choices.below(8))",
            "order = \(UploadOrder.allCases[choices.below(UploadOrder.allCases.count)].rawValue)",
            "digest = \(choices.chance(30) ? DigestMode.none.rawValue : DigestMode.sha256.rawValue)",
            "recursive = \(choices.chance(30) ? "yes" : "no")",
        ]
        // Short timings, so a schedule of a few hundred steps sees files reach max_attempts,
        // backoffs end and stops outlast or keep within their grace.
        lines += [
            "max_attempts = \(1 + choices.below(5))",
            "backoff = 1s",
            "max_backoff = 60s",
            "shutdown_grace = \(choices.below(4))s",
        ]
        lines += Self.optionLines(choices)
        text = lines.joined(separator: "\n") + "\n"
        profile = Self.load(text, destination)
    }

    /// The lines an operator's edit before a SIGHUP may change, each drawn again as at the start.
    /// The others stay: the invariants judge those by one setting for the whole schedule.
    static let reloadable: [(key: String, draw: @Sendable (ChoiceSource) -> String)] = [
        ("concurrency", { "\(1 + $0.below(8))" }),
        ("order", { UploadOrder.allCases[$0.below(UploadOrder.allCases.count)].rawValue }),
        ("max_attempts", { "\(1 + $0.below(5))" }),
        ("shutdown_grace", { "\($0.below(4))s" }),
    ]

    /// `old` after an operator's edit: each reloadable line drawn again in some schedules (the
    /// value drawn may be the one it had), read by production's loader.
    init(editing old: SimConfig, choices: ChoiceSource) {
        destination = old.destination
        text = old.text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard let (key, draw) = Self.reloadable.first(where: { line.hasPrefix($0.key + " = ") }), choices.chance(40) else { return String(line) }
            return "\(key) = \(draw(choices))"
        }.joined(separator: "\n")
        profile = Self.load(text, destination)
    }

    /// The reloadable lines that differ from `old`'s, for a trace.
    func edits(from old: SimConfig) -> String {
        let before = Set(old.text.split(separator: "\n"))
        return text.split(separator: "\n").filter { line in !before.contains(line) && Self.reloadable.contains { line.hasPrefix($0.key + " = ") } }
            .joined(separator: "; ")
    }

    /// Production's loader on `text`; a text it refuses is the simulator's own mistake, so it stops
    /// the run with the loader's messages.
    private static func load(_ text: String, _ destination: SimDestination) -> Profile {
        switch ConfigLoader.parse(text: text, path: Self.path, environment: [:]) {
        case .success(let loaded):
            guard let profile = loaded.configuration.profiles.first else { fatalError("simulator config has no profile:\n\(text)") }
            return destination.scaled(profile)
        case .failure(let errors):
            fatalError("simulator config refused by the loader: \(errors)\n\(text)")
        }
    }

    /// The drawn lines, one string, for a trace.
    var summary: String {
        text.split(separator: "\n").dropFirst(2).filter { !$0.hasPrefix("access_key_id") && !$0.hasPrefix("secret_access_key") }
            .joined(separator: "; ")
    }
}
