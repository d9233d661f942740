import Foundation
import UploaderConfig
import UploaderSpool
import UploaderValues

/// The faults of DESIGN §13 a schedule draws once, before it starts: which the disk makes.
extension Simulation {
    /// The wall clock is set forward or back by up to two hours; monotonic time goes on. The
    /// server's due times, set in the old wall time, are forgotten (the daemon keeps its own in wall time).
    func jumpWallClock() {
        let seconds = Double(1 + choices.below(7200)) * (choices.chance(50) ? 1 : -1)
        clock.jumpWall(by: seconds)
        if seconds < 0 { wallClockSetBack -= seconds }
        server.forgetDueTimes()
        note("wall clock \(seconds > 0 ? "+" : "")\(Int(seconds)) s (monotonic steady)")
        process.post(.tick)
    }

    /// After a crash: the keys whose due time the daemon can still know (`dueTimesHeld(on:paths:server:)`).
    func dueTimesKept() -> Set<String> { Self.dueTimesHeld(on: disk, paths: profile.spool, server: server) }

    /// The keys whose due time the daemon can still know: a record, in retry/ or (a move into it
    /// cut) in the outbox, holds the attempt the server answered with `Retry-After`. The due time
    /// it holds is the daemon's to get right: one before the server's is caught when the file
    /// comes back early.
    static func dueTimesHeld(on disk: SimDisk, paths: SpoolPaths, server: SimServer) -> Set<String> {
        var kept: Set<String> = []
        for entry in SpoolView(disk: disk, paths: paths).manifests where entry.area != .sent {
            guard let m = entry.manifest, m.state == .retry, let wait = server.notBefore[m.id],
                  m.attempts.contains(where: { attempt in
                      guard let status = attempt.httpStatus, status == 429 || status == 503,
                            let ended = attempt.endedAt.flatMap(Timestamp.parse) else { return false }
                      return ended >= wait.answeredAt.addingTimeInterval(-0.001)
                  }) else { continue }
            kept.insert(m.id)
        }
        return kept
    }

    /// In about a quarter of the schedules the disk fails now and then until the faults stop:
    /// ENOSPC or EIO on a create, link, mkdir or write, short writes, EIO on fsync.
    func drawDiskFaults() {
        guard choices.chance(25) else { return }
        let percent = 1 + choices.below(5)
        note("disk faults: about \(percent) % of the process's writes, creates, renames, unlinks, reads and fsyncs fail")
        disk.injectFaults { [choices, server, disk, profile] site in
            guard choices.chance(percent) else { return .none }
            // The refusal may hit the record that was to hold a due time; one a record already
            // holds is the daemon's to keep.
            server.forgetDueTimes(keeping: Self.dueTimesHeld(on: disk, paths: profile.spool, server: server))
            switch site {
            case .write: return [.noSpace, .ioError, .shortWrite, .shortWrite][choices.below(4)]
            case .fsync: return .ioError
            case .allocate, .rename: return choices.chance(70) ? .noSpace : .ioError
            case .unlink, .read, .directorySync: return .ioError
            }
        }
    }
}
