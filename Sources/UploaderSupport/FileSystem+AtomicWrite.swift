@preconcurrency import Glibc
import Foundation

/// The one way we write a file that readers must never see half-written: a temporary file,
/// (fsync), rename. Manifests, `enqueue` copies, `.state.json` and the metrics file all go here.
extension FileSystem {
    /// Writes `data` to `directory/name` atomically: temporary file, fsync, rename.
    ///
    /// The temporary name starts with `.upl-tmp-` so watchers ignore it and start-up removes
    /// leftovers. The directory itself is fsynced only when `syncDirectory` is set; callers
    /// that rename again right after batch that fsync themselves.
    ///
    /// With `temporaryDirectory` (same filesystem), the temporary file is made there instead:
    /// a watched directory then sees one rename instead of a create, a close and a rename.
    ///
    /// - Parameters:
    ///   - syncFile: false skips the file's fsync, for hints rewritten every few seconds
    ///     (`.state.json`, the metrics file): after a crash they may be old or empty, never mixed.
    ///   - mode: exact permissions (set with fchmod, whatever the umask) for a file other users
    ///     read; nil gives 0640 less the umask.
    package static func writeAtomically(_ data: [UInt8], to name: RelativePath, in directory: String, syncDirectory: Bool,
                                        syncFile: Bool = true, mode: mode_t? = nil, temporaryDirectory: String? = nil) throws {
        try writeAtomically(to: name, in: directory, syncDirectory: syncDirectory, syncFile: syncFile, mode: mode,
                            temporaryDirectory: temporaryDirectory) { fd, display in
            try data.withUnsafeBytes { try writeAll($0, to: fd, path: display) }
        }
    }

    /// `writeAtomically` for a plain path (no spool around it): the metrics file, `.state.json`.
    package static func writeAtomically(_ data: [UInt8], toPath path: String, syncFile: Bool = true, mode: mode_t? = nil) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try writeAtomically(data, to: RelativePath((path as NSString).lastPathComponent), in: directory.isEmpty ? "." : directory,
                            syncDirectory: false, syncFile: syncFile, mode: mode)
    }

    /// The same with the content streamed in by `contents(fd, displayPath)` (a copy of another file).
    ///
    /// - Parameters:
    ///   - replace: false fails with EEXIST rather than overwrite an existing `name`.
    ///   - temporaryPrefix: start-up and rescans delete `.upl-tmp-` leftovers in the outbox, so
    ///     a writer that must outlive a daemon's rescan (`enqueue`) brings its own hidden prefix.
    package static func writeAtomically(to name: RelativePath, in directory: String, syncDirectory: Bool,
                                        syncFile: Bool = true, replace: Bool = true, mode: mode_t? = nil,
                                        temporaryDirectory: String? = nil, temporaryPrefix: String = ".upl-tmp-",
                                        contents: (_ fd: Int32, _ display: String) throws -> Void) throws {
        // A random suffix from getrandom(2) (one syscall; Foundation's UUID() opened, read
        // and closed /dev/urandom each time); O_EXCL below still refuses any clash.
        let temp = RelativePath(temporaryPrefix + String(UInt64.random(in: 0...UInt64.max), radix: 16))
        let tempFull = temporaryDirectory == nil ? (name.parent.map { $0.appending(temp) } ?? temp) : temp
        let tempDirectory = temporaryDirectory ?? directory
        let display = name.displayed(in: directory)
        func create() throws -> FileDescriptor {
            let fd = try tempFull.withCString(in: tempDirectory) { cpath in
                try retryingEINTR("create", path: display) { open(cpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode ?? 0o640) }
            }
            return FileDescriptor(adopting: fd)
        }
        func createMakingDirectory() throws -> FileDescriptor {
            do {
                return try create()
            } catch let error as SystemError where error.isNotFound && temporaryDirectory != nil {
                // The temporary directory went with its outbox (removed and recreated): make it again.
                try makeDirectories(tempDirectory)
                return try create()
            }
        }
        let fd = try createMakingDirectory()
        var ok = false
        defer {
            if !ok { _ = tempFull.withCString(in: tempDirectory) { Glibc.unlink($0) } }
        }
        do {
            if let mode { try retryingEINTR("chmod", path: display) { fchmod(fd.rawValue, mode) } }
            try contents(fd.rawValue, display)
            if syncFile { try fd.sync(display: display) }
        } catch {
            fd.close()
            throw error
        }
        fd.close()
        try rename(tempFull, in: tempDirectory, to: name, in: directory, replace: replace)
        ok = true
        if syncDirectory { try syncDirectoryOf(name, in: directory) }
    }

    /// Creates `name` exclusively (O_EXCL), writes `data`, fsyncs it when `sync`; removes it again on failure.
    package static func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        let display = name.displayed(in: directory)
        let fd = try FileDescriptor.open(name, in: directory, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o640, operation: "create")
        do {
            try data.withUnsafeBytes { try writeAll($0, to: fd.rawValue, path: display) }
            if sync { try fd.sync(display: display) }
            fd.close()
        } catch {
            fd.close()
            _ = name.withCString(in: directory) { Glibc.unlink($0) }
            throw error
        }
    }

    /// write(2) until every byte of `bytes` went out.
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try retryingEINTR("write", path: path) { write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
        }
    }
}
