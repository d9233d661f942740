@preconcurrency import Glibc
import Foundation
import Synchronization
import UploaderSupport

/// What a hook wrote to stdout and stderr (one pipe, in order), kept for the log line about its
/// run: with `log_format = json` every line of the daemon is one JSON object, so a hook's output
/// is a field of that line, never raw lines of its own in the log.
package final class HookOutput: Sendable {
    /// Bytes kept; the rest is counted (journald cuts lines at 48 KiB, and a log is no place for more).
    package static let limit = 8192
    private struct State {
        var bytes: [UInt8] = []
        var dropped = 0
    }
    private let state = Mutex(State())

    package init() {}

    func append(_ chunk: UnsafeRawBufferPointer) {
        state.withLock { s in
            let room = max(0, Self.limit - s.bytes.count)
            s.bytes += chunk.prefix(room)
            s.dropped += max(0, chunk.count - room)
        }
    }

    /// The output as text (invalid UTF-8 shown as U+FFFD, a last line break dropped); nil when none.
    package var text: String? {
        state.withLock { s in
            var bytes = s.bytes[...]
            if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Bytes past `limit`, not kept.
    package var droppedBytes: Int { state.withLock { $0.dropped } }
}

/// The pipe a hook writes into, read on a thread of its own so the hook never blocks on a full
/// pipe. Reading ends at end of file, or shortly after the hook was reaped when a process it left
/// behind still holds the pipe open.
final class HookOutputPipe: Sendable {
    /// The child's end: its stdout and stderr.
    let writeEnd: Int32
    private let readEnd: Int32
    private let output: HookOutput
    private let finishing = Atomic<Bool>(false)
    private let done = Latch()

    /// Nil when no pipe can be made (the hook then writes to the daemon's stderr as before).
    init?(into output: HookOutput) {
        var ends: [Int32] = [-1, -1]
        // pipe2 is hidden behind _GNU_SOURCE; a spawned child closes every descriptor above 2 anyway.
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readEnd = ends[0]
        writeEnd = ends[1]
        self.output = output
    }

    /// After the spawn: the parent's copy of the child's end is closed, and reading starts.
    func started() {
        close(writeEnd)
        SystemScheduler.system.startThread(named: "hook-output") { [self] in
            readUntilEnd()
            done.open()
        }
    }

    /// The spawn failed: nothing will read or write.
    func abandon() {
        close(writeEnd)
        close(readEnd)
    }

    /// The hook was reaped: waits for the reader (at most about a second more) and closes the pipe.
    func finish() {
        finishing.store(true, ordering: .releasing)
        done.wait()
        close(readEnd)
    }

    private func readUntilEnd() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pollsAfterFinish = 0
        while pollsAfterFinish < 10 {
            var entry = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 100)
            if finishing.load(ordering: .acquiring) { pollsAfterFinish += 1 }
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                if ready < 0 || finishing.load(ordering: .acquiring) { return }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                return
            }
        }
    }
}
