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

    private let fd: Int32
    package let path: String

    /// Takes the lock without waiting; throws `.heldBy` when another process holds it.
    package init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            let error = SystemError("open", path: path)
            throw WriteRefused(error, directory: (path as NSString).deletingLastPathComponent).map(Failure.refused) ?? Failure.system(error)
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &buffer, buffer.count, 0)
            close(fd)
            if code == EWOULDBLOCK {
                let text = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
                throw Failure.heldBy(pid: Int32(text), path: path)
            }
            throw Failure.system(SystemError("flock", path: path, code: code))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    deinit { close(fd) }
}
