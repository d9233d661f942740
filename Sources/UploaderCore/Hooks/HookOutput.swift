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
    /// The child's end: its stdout and stderr (the number the spawn duplicates onto them).
    let writeEnd: Int32
    /// The parent's copy of the child's end, closed once the child has its own (or never will).
    private let childEnd: Mutex<FileDescriptor?>
    /// The end the reader reads, closed with this object: once the run that made it has let go
    /// of it, after `finish` has waited for the reader (or `abandon`, when there is none).
    private let readEnd: FileDescriptor
    private let output: HookOutput
    private let finishing = Atomic<Bool>(false)
    private let done = Latch()

    /// A new pipe; throws when none can be made (the hook then writes to the daemon's stderr as before).
    static func open(into output: HookOutput) throws(Errno) -> HookOutputPipe {
        // A spawned child closes every descriptor above 2 anyway; close-on-exec covers the rest.
        try PipeEnds().separated { readEnd, writeEnd in HookOutputPipe(readEnd: readEnd, writeEnd: writeEnd, into: output) }
    }

    private init(readEnd: consuming FileDescriptor, writeEnd: consuming FileDescriptor, into output: HookOutput) {
        self.writeEnd = writeEnd.rawValue
        childEnd = Mutex(writeEnd)
        self.readEnd = readEnd
        self.output = output
    }

    /// After the spawn: the parent's copy of the child's end is closed, and reading starts. With
    /// `exit` (a child with a pidfd, polled here until it is readable) the reader opens `exited`
    /// when the child has exited.
    func started(named name: String, exit: (child: ChildProcess, exited: Latch)?) {
        closeChildEnd()
        SystemScheduler.system.startThread(named: name) { [self] in
            readUntilEnd(exit: exit)
            done.open()
        }
    }

    /// The spawn failed: nothing will read or write.
    func abandon() {
        closeChildEnd()
    }

    /// The hook was reaped: waits for the reader (at most about a second more).
    func finish() {
        finishing.store(true, ordering: .releasing)
        done.wait()
    }

    private func closeChildEnd() {
        childEnd.withLock { $0 = nil }
    }

    /// Reads until end of file (or the quiet after the reap) and, while the child runs, watches its exit.
    private func readUntilEnd(exit: (child: ChildProcess, exited: Latch)?) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        var pollsAfterFinish = 0
        var reading = true
        var exitFD = exit?.child.exitPollDescriptor
        defer {
            // poll failed with the child still running: wait for its exit as a thread of its own would.
            if exitFD != nil, let exit {
                HookProcess.waitForExit(exit.child)
                exited()
            }
        }
        func exited() {
            exit?.exited.open()
            exitFD = nil
        }
        while reading || exitFD != nil {
            var entries = [PollEntry(reading ? readEnd.rawValue : nil, waitingFor: .readable),
                           PollEntry(exitFD, waitingFor: .readable)]
            do {
                _ = try Poll.wait(&entries, milliseconds: 100)
            } catch {
                return  // what is left to see of the exit, the defer waits for
            }
            let reaped = finishing.load(ordering: .acquiring)
            if reaped {
                pollsAfterFinish += 1
                if pollsAfterFinish > 10 { return }
            }
            if exitFD != nil, !entries[1].returned.isEmpty { exited() }
            guard reading else { continue }
            guard !entries[0].returned.isEmpty else {
                // Quiet after the reap: what a process left behind writes later is not the hook's.
                if reaped { reading = false }
                continue
            }
            do {
                let count = try readEnd.read(into: buffer)
                if count > 0 {
                    output.append(UnsafeRawBufferPointer(rebasing: buffer.prefix(count)))
                } else {
                    reading = false
                }
            } catch Errno.wouldBlock {
                // Nothing after all: the next poll says when there is.
            } catch {
                reading = false
            }
        }
    }
}
