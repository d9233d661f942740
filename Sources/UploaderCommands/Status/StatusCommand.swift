import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon

/// `uploader status`: a table for people or one JSON object for scripts, from the spools.
enum StatusCommand {
    /// `now`: the moment the spools are counted at (ages, `sent_24h`).
    static func run(_ config: Configuration, profiles: [String], json: Bool, options: StatusOptions, now: Date) -> Int32 {
        let selected = profiles.isEmpty ? config.profiles : config.profiles.filter { profiles.contains($0.name) }
        if let unknown = profiles.first(where: { name in !config.profiles.contains { $0.name == name } }) {
            let message = "no profile named \"\(unknown)\" in \(config.path)"
            Daemon.printError(message)
            if options.check { print(MonitoringCheck.unknownLine(message)) }
            return options.check ? MonitoringCheck.Verdict.unknown.exitCode : Daemon.ExitCode.usage
        }
        let reports = selected.map { StatusReport.take($0, now: now) }
        let problems = reports.flatMap { $0.problems(expectDaemon: options.expectDaemon) }
        if options.check {
            let result = MonitoringCheck.evaluate(reports, problems: problems, options: options, now: now)
            print(result.line)
            return result.verdict.exitCode
        }
        for problem in problems where problem.kind == .unreadable { Daemon.printError(problem.message) }
        print(json ? StatusJSON.text(reports, problems: problems, now: now) : StatusTable.text(reports, problems: problems, now: now))
        return problems.exitCode
    }
}

/// What `status` knows of one profile: its spool counted now, and the running daemon's state file.
struct StatusReport {
    var profile: Profile
    var census: SpoolCensus
    /// Whether a daemon holds the spool (with its state), none does, or one died.
    var presence: DaemonState.Presence
    /// Each directory or file of the spool that could not be read, as a sentence.
    var unreadable: [String]

    /// Counts `profile`'s spool and looks for its daemon.
    static func take(_ profile: Profile, now: Date) -> StatusReport {
        let spool = Spool(paths: profile.spool)
        var unreadable: [String] = []
        // A producer may list the outbox but not retry/ nor the sent ledger: the running daemon's
        // own counts stand in for those, and only what they cannot replace is unreadable.
        let producer = ProducerCounts(reporting: DirectoryWalker.printingOnce { unreadable.append($0) })
        let counted = SpoolCensus.take(spool, ignore: IgnoreRules(patterns: profile.ignore), recursive: profile.recursive, now: now,
                                       unlistable: producer.handler)
        let presence = DaemonState.observe(spool.paths)
        let running: DaemonState? = if case .running(let state) = presence { state } else { nil }
        let census = producer.complete(counted, daemon: running)
        return StatusReport(profile: profile, census: census, presence: presence, unreadable: unreadable)
    }

    /// The running daemon's state; nil when none runs (or its state cannot be read).
    var daemon: DaemonState? {
        if case .running(let state) = presence { return state }
        return nil
    }

    /// Refused names: those in the outbox now, or more if the daemon refused some the count cannot see.
    var refused: SpoolCensus.Tally {
        var tally = census.refused
        tally.files = max(tally.files, daemon?.refused ?? 0)
        return tally
    }

    var lastError: String? { daemon?.lastError ?? census.lastError }
}
