import Foundation
import UploaderSupport
import UploaderConfig

/// The one-instance-per-profile lock: `flock` on `<spool>/.lock`, holding the holder's pid, taken
/// through the spool's file system (so a simulated machine's processes contend for it too).
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

    /// What holds the lock: the lock goes with this object.
    let held: any HeldProcessLock
    package let path: String

    /// The spool's lock file, in its root.
    package static let name = RelativePath(".lock")

    /// Takes the lock on `spool`'s root without waiting on another process; throws `.heldBy` when
    /// one holds it.
    ///
    /// A lock this very process held and let go of (a reload: the old runner's lock, then the
    /// new runner's) can outlive its release for an instant: a child being spawned meanwhile (a
    /// hook) shares every open file of ours between its clone and its exec, and the lock with
    /// them. When the pid in the file is ours, the lock is tried again, on `clock`, until
    /// `patience` has passed.
    package init(_ fs: any SpoolFileSystem, root: String, clock: any Clock = SystemClock(), patience: TimeInterval = 2,
                 processID: Int32 = ProcessIdentity.processID) throws {
        path = Self.name.displayed(in: root)
        let deadline = clock.monotonic + patience
        while true {
            let taking: ProcessLockTaking
            do {
                taking = try fs.takeProcessLock(Self.name, in: root, stamp: Array("\(processID)\n".utf8))
            } catch let error as SystemError {
                throw WriteRefused(error, directory: root).map(Failure.refused) ?? Failure.system(error)
            }
            switch taking {
            case .taken(let lock):
                held = lock
                return
            case .heldElsewhere where PlantedBug.spoolLockIgnored.isActive:
                held = Unheld()
                return
            case .heldElsewhere(let stamp):
                let holder = stamp.flatMap(Self.processID(stamp:))
                if holder == processID && clock.monotonic < deadline {
                    clock.sleep(until: min(deadline, clock.monotonic + Self.retryEvery))
                    continue
                }
                throw Failure.heldBy(pid: holder, path: path)
            }
        }
    }

    /// The pid a holder wrote, read only from a whole line: a stamp cut short by a failed write
    /// ("10" of "1001\n") would name another process.
    static func processID(stamp: [UInt8]) -> Int32? {
        guard stamp.last == UInt8(ascii: "\n") else { return nil }
        return Int32(String(decoding: stamp.dropLast(), as: UTF8.self))
    }

    /// How often a lock of our own still held by a child being spawned is tried again (seconds).
    static let retryEvery = 0.01
}

/// What the planted `spoolLockIgnored` holds: nothing.
private final class Unheld: HeldProcessLock {}
