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
/// pipe; the same thread sees the hook exit (its pidfd), so a hook running takes one thread besides
/// the one that runs it. Reading ends at end of file, or shortly after the hook was reaped when a
/// process it left behind still holds the pipe open.
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

    /// After the spawn: the parent's copy of the child's end is closed, and reading starts. With
    /// `exit` (the child and its pidfd, closed here once it polls readable) the reader opens
    /// `exited` when the child has exited.
    func started(named name: String, exit: (pid: pid_t, pidfd: Int32, exited: Latch)?) {
        close(writeEnd)
        SystemScheduler.system.startThread(named: name) { [self] in
            readUntilEnd(exit: exit)
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

    /// Reads until end of file (or the quiet after the reap) and, while the child runs, watches its exit.
    private func readUntilEnd(exit: (pid: pid_t, pidfd: Int32, exited: Latch)?) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pollsAfterFinish = 0
        var reading = true
        var exitFD = exit?.pidfd
        defer {
            // poll failed with the child still running: wait for its exit as a thread of its own would.
            if let fd = exitFD, let exit {
                HookProcess.waitForExit(exit.pid)
                exited(fd)
            }
        }
        func exited(_ fd: Int32) {
            close(fd)
            exit?.exited.open()
            exitFD = nil
        }
        while reading || exitFD != nil {
            var entries = [pollfd(fd: reading ? readEnd : -1, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: exitFD ?? -1, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, 100)
            let reaped = finishing.load(ordering: .acquiring)
            if reaped {
                pollsAfterFinish += 1
                if pollsAfterFinish > 10 { return }
            }
            if ready < 0 && Errno.current == .interrupted { continue }
            if ready < 0 { return }
            if let fd = exitFD, entries[1].revents != 0 { exited(fd) }
            guard reading else { continue }
            guard entries[0].revents != 0 else {
                // Quiet after the reap: what a process left behind writes later is not the hook's.
                if reaped { reading = false }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            } else if count == 0 || (Errno.current != .interrupted && Errno.current != .wouldBlock) {
                reading = false
            }
        }
    }
}
