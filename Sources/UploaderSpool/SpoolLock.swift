@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig

/// The one-instance-per-profile lock: `flock` on `<spool>/.lock`, holding the holder's pid.
package final class SpoolLock: Sendable {
    package enum Failure: Error, CustomStringConvertible {
        case heldBy(pid: Int32?, path: String)
        /// The lock file cannot be created where the spool is (read-only, no permission).
        case refused(WriteRefused)
        case system(SystemError)

        package var description: String {
            switch self {
            case .heldBy(let pid, let path):
                return "\(path) is held by another uploader" + (pid.map { " (pid \($0))" } ?? "")
            case .refused(let refused): return refused.description
            case .system(let error): return error.description
            }
        }
    }

    /// The descriptor holding the lock (tests dup it, as a child being spawned does).
    let fd: Int32
    package let path: String

    /// Takes the lock without waiting on another process; throws `.heldBy` when one holds it.
    ///
    /// A lock this very process held and let go of (a reload: the old runner's lock, then the
    /// new runner's) can outlive its release for an instant: a child being spawned meanwhile (a
    /// hook) shares every open file of ours between its clone and its exec, and the lock with
    /// them. When the pid in the file is ours, the lock is tried again, on `clock`, until
    /// `patience` has passed.
    package init(path: String, clock: any Clock = SystemClock(), patience: TimeInterval = 2) throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            let error = SystemError("open", path: path)
            throw WriteRefused(error, directory: (path as NSString).deletingLastPathComponent).map(Failure.refused) ?? Failure.system(error)
        }
        let deadline = clock.monotonic + patience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = Errno.current
            let holder = code == .wouldBlock ? Self.holder(fd) : nil
            if holder == getpid() && clock.monotonic < deadline {
                clock.sleep(until: min(deadline, clock.monotonic + Self.retryEvery))
                continue
            }
            close(fd)
            if code == .wouldBlock { throw Failure.heldBy(pid: holder, path: path) }
            throw Failure.system(SystemError("flock", path: path, code: code))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    /// How often a lock of our own still held by a child being spawned is tried again (seconds).
    static let retryEvery = 0.01

    /// The pid the holder wrote in the lock file, if it reads as one.
    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    deinit { close(fd) }
}
