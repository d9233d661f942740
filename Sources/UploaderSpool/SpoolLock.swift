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

    /// The open file holding the lock, closed (and the lock let go) with this object.
    private let descriptor: FileDescriptor
    /// Its number (tests dup it, as a child being spawned does).
    var fd: Int32 { descriptor.rawValue }
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
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path, .readWrite, create: 0o640)
        } catch let error as SystemError {
            throw WriteRefused(error, directory: (path as NSString).deletingLastPathComponent).map(Failure.refused) ?? Failure.system(error)
        }
        let deadline = clock.monotonic + patience
        while true {
            do {
                if try fd.tryLock(exclusive: true, path: path) { break }
            } catch let error as SystemError {
                throw Failure.system(error)
            }
            let holder = Self.holder(fd)
            if holder == ProcessIdentity.processID && clock.monotonic < deadline {
                clock.sleep(until: min(deadline, clock.monotonic + Self.retryEvery))
                continue
            }
            throw Failure.heldBy(pid: holder, path: path)
        }
        // Harmless when it fails: the pid is what messages name the holder by; the lock is the flock.
        try? fd.replaceContent(with: Array("\(ProcessIdentity.processID)\n".utf8), path: path)
        descriptor = fd
    }

    /// How often a lock of our own still held by a child being spawned is tried again (seconds).
    static let retryEvery = 0.01

    /// The pid the holder wrote in the lock file, if it reads as one.
    private static func holder(_ fd: borrowing FileDescriptor) -> Int32? {
        // Unreadable reads as unknown: the message then names no pid.
        guard let bytes = try? fd.read(upTo: 32, at: 0, path: ""), !bytes.isEmpty else { return nil }
        return Int32(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
