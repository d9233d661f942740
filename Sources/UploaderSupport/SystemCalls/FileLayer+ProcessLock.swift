/// The lock a process holds on a spool for as long as it runs, taken through the system calls
/// (so a simulated machine's processes contend for it as the kernel's do).
extension FileLayer {
    /// Opens (creating, mode 0640) the lock file `name` in `directory`, takes its lock without
    /// waiting, and writes `stamp` in it; when another open file holds the lock, reads what that
    /// holder wrote instead. The lock lasts as long as the returned object.
    package func takeLockFile(_ name: RelativePath, in directory: String, stamp: [UInt8]) throws -> ProcessLockTaking {
        let path = name.displayed(in: directory)
        let number = try call("open", path) { () throws(Errno) in
            try calls.open(path, at: .workingDirectory, [.readWrite, .create, .noFollow], mode: 0o640)
        }
        // Owns the descriptor from here: closed with it on every path but the lock's.
        let file = HeldLockFile(number, on: calls)
        guard try call("flock", path, { () throws(Errno) in try calls.tryLock(number) }) else {
            let held: [UInt8]?
            do {
                held = try readStamp(of: number, path: path)
            } catch {
                held = nil  // unknown: the message then names no holder
            }
            return .heldElsewhere(stamp: held)
        }
        do {
            try call("truncate", path) { () throws(Errno) in try calls.truncate(number, to: 0) }
            try stamp.withUnsafeBytes { try writeAll($0, to: number, path: path) }
        } catch {
            // Harmless: the stamp only names the holder in another's message; the lock is what counts.
        }
        return .taken(file)
    }

    /// Up to 32 bytes at the start of the lock file: a pid and its newline.
    private func readStamp(of number: SystemDescriptor, path: String) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = try buffer.withUnsafeMutableBytes { raw in
            try call("read", path) { () throws(Errno) in try calls.read(number, into: raw, at: 0) }
        }
        return Array(buffer[..<count])
    }
}

/// The open lock file whose lock a process holds: the lock goes when this object closes it.
/// A class of its own rather than an `OpenFile` kept in one: this toolchain does not end a
/// non-copyable value stored in a generic class when the class goes.
final class HeldLockFile<Calls: SystemCalls>: HeldProcessLock {
    let number: SystemDescriptor
    private let calls: Calls

    init(_ number: SystemDescriptor, on calls: Calls) {
        self.number = number
        self.calls = calls
    }

    deinit { calls.close(number) }
}
