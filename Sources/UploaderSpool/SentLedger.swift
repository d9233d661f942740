import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// The deliveries of the last 24 hours, as `status` counts them (`sent_24h`): `<spool>/.sent-ledger`,
/// one line per file that reached sent/ — so `status` never reads sent/, which may keep millions of
/// files, or none at all with `after_send = delete`.
///
/// A line is `<sent_at, ms since the epoch> <bytes>` for one file, or `<ms> <bytes> <files>` for
/// the files of one minute (`ms` the newest of them) that a compaction folded together. Lines are
/// appended in one write(2) per batch of moves, with no fsync: the ledger is a statistic, and a
/// power cut may take its last lines (never a file, a manifest or a hook). A line counts only
/// when its newline is there, so a line cut by a power cut is ignored, as is any line that does
/// not parse. Only the process holding the spool's lock appends (the daemon or `run --once`).
///
/// Compaction (at start-up, and after every `compactEvery` lines appended) drops what is older
/// than 24 h and folds the rest into one line per minute, written aside, fsynced and renamed into
/// place: the ledger stays under about 1,440 + `compactEvery` lines however many files go
/// through, and `status` reads only that. `sent_24h` is exact but at its 24 h edge, where it
/// is exact to the minute.
package final class SentLedger: Sendable {
    package static let name = RelativePath(".sent-ledger")
    private static let compacting = RelativePath(".sent-ledger.compacting")
    /// What `sent_24h` covers.
    package static let window: TimeInterval = 86_400

    /// One line: one file, or the files of one minute.
    package struct Line: Sendable, Equatable {
        package var millis: Int64
        package var bytes: Int64
        package var files: Int64

        package init(millis: Int64, bytes: Int64, files: Int64 = 1) {
            self.millis = millis
            self.bytes = bytes
            self.files = files
        }

        var text: String { files == 1 ? "\(millis) \(bytes)\n" : "\(millis) \(bytes) \(files)\n" }
    }

    private struct State: Sendable {
        /// Lines appended since the last compaction.
        var appended = 0
        /// Bytes of the deliveries recorded by this process (what paces `keep_sent_bytes`).
        var bytes: Int64 = 0
        /// A compaction succeeded in this process, so the file ends with a whole line.
        var clean = false
    }

    private let fs: any SpoolFileSystem
    private let directory: String
    private let compactEvery: Int
    /// The state, and whether a thread has it out (appending or compacting): one at a time, and
    /// the others wait their turn on the monitor (its waits, not a lock held over file I/O).
    private let turns: Monitor<(state: State, out: Bool)>

    /// `directory`: the spool's root; `scheduler` runs the waits for a turn.
    package init(fs: any SpoolFileSystem, directory: String, compactEvery: Int = 4096, scheduler: any Scheduler = .system) {
        self.fs = fs
        self.directory = directory
        self.compactEvery = compactEvery
        turns = Monitor((State(), false), scheduler: scheduler)
    }

    /// Runs `body` with the state, once no other thread has it.
    private func withTurn<R>(_ body: (inout State) throws -> R) rethrows -> R {
        var state = turns.wait { turns -> State? in
            guard !turns.out else { return nil }
            turns.out = true
            return turns.state
        }
        defer { turns.update { $0 = (state, false) } }
        return try body(&state)
    }

    /// Appends one line per delivery (its manifest's `sent_at` and `size`); compacts now and then.
    /// A failure is logged (once per process) and changes nothing else: a move never fails for it.
    package func record(_ deliveries: [Manifest], logger: Logger) {
        let lines = deliveries.compactMap { manifest in
            manifest.sentAt.flatMap(Timestamp.parse).map { Line(millis: Self.millis($0), bytes: manifest.size) }
        }
        guard let newest = lines.map(\.millis).max() else { return }
        let problem = { [directory] (error: any Error) in
            logger.warnOnce(key: "sent ledger " + directory, "cannot record deliveries in the sent ledger; status may count fewer",
                            ["file": Self.name.displayed(in: directory), "error": "\(error)"])
        }
        withTurn { state in
            var text = Array(lines.map(\.text).joined().utf8)
            if !state.clean || state.appended >= compactEvery {
                // Before the first append of a process (when start-up did not compact): a line a
                // power cut cut short must not be completed by the next one.
                do {
                    try compactLocked(now: Date(timeIntervalSince1970: Double(newest) / 1000), &state)
                } catch {
                    problem(error)
                    // Ends a cut line, if any, on its own (it may then count, wrongly: better than
                    // gluing it to the next); tried again after another `compactEvery` lines.
                    if !state.clean { text.insert(0x0A, at: 0) }
                    state.appended = 0
                }
            }
            do {
                try fs.append(text, to: Self.name, in: directory)
                state.clean = true
                state.appended += lines.count
                state.bytes += lines.reduce(0) { $0 + $1.bytes }
            } catch {
                problem(error)
            }
        }
    }

    /// The bytes of every delivery this process recorded.
    package var bytesRecorded: Int64 { turns.read { $0.state.bytes } }

    /// Drops what is older than the window at `now` and folds the rest by minute (start-up).
    package func compact(now: Date) throws {
        try withTurn { try compactLocked(now: now, &$0) }
    }

    private func compactLocked(now: Date, _ state: inout State) throws {
        let old = try read()
        var minutes: [Int64: Line] = [:]
        for line in Self.parse(old) where Self.counts(line, now: now) {
            let minute = line.millis / 60_000
            var folded = minutes[minute] ?? Line(millis: line.millis, bytes: 0, files: 0)
            folded.millis = max(folded.millis, line.millis)
            folded.bytes += line.bytes
            folded.files += line.files
            minutes[minute] = folded
        }
        let new = Array(minutes.keys.sorted().map { minutes[$0]!.text }.joined().utf8)
        if new != old {
            if fs.exists(Self.compacting, in: directory) { try fs.unlink(Self.compacting, in: directory) }
            try fs.createFile(new, named: Self.compacting, in: directory, sync: true)
            try fs.rename(Self.compacting, in: directory, to: Self.name, in: directory, replace: true)
        }
        state.appended = 0
        state.clean = true
    }

    /// The files and bytes delivered in the window before `now` (`status`). No ledger: none.
    package func recent(now: Date) throws -> (files: Int, bytes: Int64) {
        var files: Int64 = 0, bytes: Int64 = 0
        for line in Self.parse(try read()) where Self.counts(line, now: now) {
            files += line.files
            bytes += line.bytes
        }
        return (Int(files), bytes)
    }

    private func read() throws -> [UInt8] {
        do {
            return try fs.readAll(Self.name, in: directory)
        } catch let error as SystemError where error.isNotFound {
            return []
        }
    }

    /// Within the window before `now`, or after it (a clock set back; a compaction dated by an old
    /// delivery finished by recovery) — but not a year ahead: two lines glued together (a torn
    /// line completed by the next) read as a date centuries away.
    static func counts(_ line: Line, now: Date) -> Bool {
        let nowMillis = millis(now)
        return line.millis >= nowMillis - Int64(window * 1000) && line.millis <= nowMillis + 366 * 86_400_000
    }

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Every whole line that parses; the rest (and a last line with no newline) is skipped.
    package static func parse(_ bytes: [UInt8]) -> [Line] {
        var lines: [Line] = []
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            if let line = parseLine(bytes[start..<end]) { lines.append(line) }
            start = end + 1
        }
        return lines
    }

    private static func parseLine(_ text: ArraySlice<UInt8>) -> Line? {
        let fields = text.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3 else { return nil }
        var numbers: [Int64] = []
        for field in fields {
            guard !field.isEmpty, field.count <= 18, field.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            numbers.append(field.reduce(0) { $0 * 10 + Int64($1 - 0x30) })
        }
        let files = numbers.count == 3 ? numbers[2] : 1
        guard files >= 1 else { return nil }
        return Line(millis: numbers[0], bytes: numbers[1], files: files)
    }
}
