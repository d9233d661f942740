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
                                        syncFile: Bool = true, mode: UInt32? = nil, temporaryDirectory: String? = nil) throws {
        try writeAtomically(to: name, in: directory, syncDirectory: syncDirectory, syncFile: syncFile, mode: mode,
                            temporaryDirectory: temporaryDirectory) { fd, display in
            try data.withUnsafeBytes { try writeAll($0, to: fd, path: display) }
        }
    }

    /// `writeAtomically` for a plain path (no spool around it): the metrics file, `.state.json`.
    package static func writeAtomically(_ data: [UInt8], toPath path: String, syncFile: Bool = true, mode: UInt32? = nil) throws {
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
                                        syncFile: Bool = true, replace: Bool = true, mode: UInt32? = nil,
                                        temporaryDirectory: String? = nil, temporaryPrefix: String = ".upl-tmp-",
                                        contents: (_ fd: Int32, _ display: String) throws -> Void) throws {
        try kernel.writeAtomically(to: name, in: directory, syncDirectory: syncDirectory, syncFile: syncFile, replace: replace,
                                   mode: mode, temporaryDirectory: temporaryDirectory, temporaryPrefix: temporaryPrefix,
                                   contents: contents)
    }

    /// Creates `name` exclusively (O_EXCL), writes `data`, fsyncs it when `sync`; removes it again on failure.
    package static func createFile(_ data: [UInt8], named name: RelativePath, in directory: String, sync: Bool) throws {
        try kernel.createFile(data, named: name, in: directory, sync: sync)
    }

    /// write(2) until every byte of `bytes` went out.
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws {
        try kernel.writeAll(bytes, to: SystemDescriptor(rawValue: fd), path: path)
    }
}
