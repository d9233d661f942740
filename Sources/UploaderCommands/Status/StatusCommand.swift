@preconcurrency import Glibc
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
    static func run(_ config: Configuration, profiles: [String], json: Bool, now: Date) -> Int32 {
        let selected = profiles.isEmpty ? config.profiles : config.profiles.filter { profiles.contains($0.name) }
        if let unknown = profiles.first(where: { name in !config.profiles.contains { $0.name == name } }) {
            Daemon.printError("no profile named \"\(unknown)\" in \(config.path)")
            return Daemon.ExitCode.usage
        }
        let unlistable = DirectoryWalker.printingOnce(Daemon.printError)
        var reports: [StatusReport] = []
        let producer = ProducerCounts(reporting: unlistable)
        for profile in selected {
            let spool = Spool(paths: profile.spool)
            let census = SpoolCensus.take(spool, ignore: IgnoreRules(patterns: profile.ignore), recursive: profile.recursive, now: now,
                                          unlistable: producer.handler)
            let daemon = DaemonState.readIfRunning(spool.paths)
            reports.append(StatusReport(profile: profile, census: producer.complete(census, daemon: daemon), daemon: daemon))
        }
        print(json ? StatusJSON.text(reports, now: now) : StatusTable.text(reports, now: now))
        return 0
    }
}

/// What `status` knows of one profile: its spool counted now, and the running daemon's state file.
struct StatusReport {
    var profile: Profile
    var census: SpoolCensus
    /// Nil when no daemon holds the spool's lock.
    var daemon: DaemonState?

    /// Refused names: those in the outbox now, or more if the daemon refused some the count cannot see.
    var refused: SpoolCensus.Tally {
        var tally = census.refused
        tally.files = max(tally.files, daemon?.refused ?? 0)
        return tally
    }

    var lastError: String? { daemon?.lastError ?? census.lastError }
}
