@preconcurrency import Glibc
import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon
import UploaderCommands

/// A fresh directory under /tmp (mkdtemp), removed when the object goes away or on
/// `remove()`, unless the environment has `KEEP_TMP=1` (then its path is printed).
final class TempDir: @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var removed = false

    init(prefix: String = "upl-test") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        let created: String? = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let created else {
            throw HarnessError("mkdtemp(/tmp/\(prefix)-XXXXXX) failed: \(String(cString: strerror(errno)))")
        }
        path = created
    }

    deinit { remove() }

    var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// `path/relative`, nothing created.
    func path(_ relative: String) -> String {
        relative.isEmpty ? path : path + "/" + relative
    }

    /// Creates `relative` (and its parents) as a directory; returns its path.
    @discardableResult
    func mkdir(_ relative: String) throws -> String {
        let full = path(relative)
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }

    /// Writes `data` to `relative` (creating parent directories); returns its path.
    @discardableResult
    func write(_ relative: String, _ data: Data) throws -> String {
        let full = path(relative)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
        return full
    }

    @discardableResult
    func write(_ relative: String, _ text: String) throws -> String {
        try write(relative, Data(text.utf8))
    }

    /// Writes `count` pseudo-random bytes (not compressible); returns its path.
    @discardableResult
    func writeRandom(_ relative: String, count: Int) throws -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        var i = 0
        while i < count {
            var word = generator.next() as UInt64
            for _ in 0..<8 where i < count {
                bytes[i] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                i += 1
            }
        }
        return try write(relative, Data(bytes))
    }

    /// Writes `count` random bytes under a hidden staging name, then renames them into
    /// `spool/outbox/NAME` in one step, as a careful producer does; returns the file's path.
    func dropRandom(_ name: String, bytes count: Int) throws -> String {
        _ = try mkdir("spool/outbox")
        let staged = try writeRandom(".staging-\(name)", count: count)
        let target = path("spool/outbox/\(name)")
        guard rename(staged, target) == 0 else { throw HarnessError("rename \(staged) → \(target): \(String(cString: strerror(errno)))") }
        return target
    }

    func remove() {
        lock.lock()
        defer { lock.unlock() }
        guard !removed else { return }
        removed = true
        if ProcessInfo.processInfo.environment["KEEP_TMP"] == "1" {
            FileHandle.standardError.write(Data("KEEP_TMP=1: keeping \(path)\n".utf8))
            return
        }
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Hex SHA-256 of a file's content, through the project's libcrypto-backed `SHA256`.
func sha256(ofFile path: String) throws -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        throw HarnessError("sha256: cannot open \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else {
        throw HarnessError("sha256: cannot stat \(path): \(String(cString: strerror(errno)))")
    }
    return try SHA256.hash(fd: fd, offset: 0, length: Int64(st.st_size), path: path).hexString
}

/// Hex SHA-256 of bytes in memory.
func sha256(of data: Data) -> String {
    SHA256.hash([UInt8](data)).hexString
}

/// Polls `condition` until it returns true, or throws a descriptive error once
/// `timeout` seconds have passed. An error thrown by `condition` counts as "not yet"
/// and is reported if the wait times out. The only place where tests sleep.
func waitUntil(
    timeout: TimeInterval = 10,
    poll: TimeInterval = 0.02,
    _ what: @autoclosure () -> String = "condition",
    file: StaticString = #filePath,
    line: UInt = #line,
    _ condition: () throws -> Bool
) throws {
    _ = try waitFor(timeout: timeout, poll: poll, what(), file: file, line: line) {
        try condition() ? true : nil
    }
}

/// Polls `produce` until it returns a value, which it returns; throws after `timeout`.
func waitFor<T>(
    timeout: TimeInterval = 10,
    poll: TimeInterval = 0.02,
    _ what: @autoclosure () -> String = "condition",
    file: StaticString = #filePath,
    line: UInt = #line,
    _ produce: () throws -> T?
) throws -> T {
    let start = Date()
    let deadline = start.addingTimeInterval(timeout)
    var lastError: Error?
    while true {
        do {
            if let value = try produce() { return value }
            lastError = nil
        } catch {
            lastError = error
        }
        if Date() >= deadline { break }
        Thread.sleep(forTimeInterval: min(poll, max(0, deadline.timeIntervalSinceNow)))
    }
    var message = "timed out after \(String(format: "%.1f", Date().timeIntervalSince(start)))s "
        + "waiting for \(what()) (\(file):\(line))"
    if let lastError { message += "; last error: \(lastError)" }
    throw HarnessError(message)
}
