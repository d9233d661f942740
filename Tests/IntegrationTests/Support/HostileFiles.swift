@preconcurrency import Glibc
import Foundation
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Helpers for the hostile-input tests: entries that are not plain files, names as raw
/// bytes, and counting log lines.
enum HostileFiles {
    static func symlink(_ target: String, at path: String) throws {
        guard Glibc.symlink(target, path) == 0 else { throw HarnessError("symlink \(path): \(String(cString: strerror(errno)))") }
    }

    static func fifo(at path: String) throws {
        guard mkfifo(path, 0o644) == 0 else { throw HarnessError("mkfifo \(path): \(String(cString: strerror(errno)))") }
    }

    /// A character device node like /dev/null (1, 3); needs root.
    static func nullDevice(at path: String) throws {
        guard mknod(path, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0 else {
            throw HarnessError("mknod \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// A UNIX socket bound at `path` (the socket file stays after the descriptor is closed).
    static func socket(at path: String) throws {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw HarnessError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw HarnessError("bind \(path): \(String(cString: strerror(errno)))") }
    }

    /// Writes `data` to `directory/name` where `name` is raw bytes (maybe not UTF-8).
    static func write(_ data: Data, name: [UInt8], in directory: String) throws {
        let fd = RelativePath(bytes: name).withCString(in: directory) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw HarnessError("create \(RelativePath(bytes: name).logSafe): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == data.count else { throw HarnessError("short write") }
    }

    /// SHA-256 of `directory/name`, `name` as raw bytes.
    static func sha256(name: [UInt8], in directory: String) throws -> String {
        let path = RelativePath(bytes: name)
        let fd = try FileSystem.openForReading(path, in: directory)
        defer { close(fd) }
        let status = try FileSystem.status(fd: fd, path: path.logSafe)
        return try SHA256.hash(fd: fd, length: status.size, path: path.logSafe).hexString
    }

    /// Raw names in `directory` (no `.`/`..`).
    /// Names in `directory` as raw bytes, but the outbox's own `.upl-tmp/`.
    static func names(in directory: String) -> Set<[UInt8]> {
        Set(((try? FileSystem.list(directory)) ?? []).map(\.name.bytes)).subtracting([Array(".upl-tmp".utf8)])
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Log lines (text format) that contain every one of `needles`.
    static func lines(_ log: String, _ needles: String...) -> [String] {
        log.split(separator: "\n").map(String.init).filter { line in needles.allSatisfy { line.contains($0) } }
    }
}
