import Foundation
import UploaderSupport
import UploaderConfig

/// Makes a producer's file the daemon's own before its claim, when the kernel would refuse to
/// link it: with `fs.protected_hardlinks = 1` (every Debian's default) a user may link only files
/// it owns or may write, and a producer's `0644` or `0640` file in a shared outbox is neither.
/// Every move of the spool is a link (`FileLifecycle`), so such a file could be uploaded but
/// never filed.
///
/// The file is copied into the outbox's hidden temporary directory (its bytes, permission bits
/// and mtime; fsynced), and the copy and the original swap names in one `RENAME_EXCHANGE`. From
/// then on the outbox name holds our copy, and every later step is the usual one. Safe at every
/// instant: before the swap the original alone has the outbox name; after it, either file holds
/// the same bytes durably under that name (whichever entry a power cut keeps); the temporary
/// name, whatever it holds, is swept at start-up. The outbox is fsynced before the claim goes on,
/// since the file's id derives from its inode (`ManifestID`).
///
/// A producer still writing meanwhile is seen: the original's descriptor is checked before and
/// after the swap, and a change swaps the names back (the original, with its new bytes, keeps
/// its name) and the claim starts again. Producers whose files are group-writable (umask 002)
/// never need this: the service may link them.
package struct FileAdoption: Sendable {
    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }

    package init(spool: Spool) {
        self.spool = spool
    }

    package enum Outcome {
        /// Linkable as it is: nothing was done.
        case notNeeded
        /// The outbox name now holds our copy: its open descriptor and fstat.
        case adopted(fd: Int32, status: FileSystem.Status)
        /// The file changed or was replaced meanwhile: claim it again.
        case changed
    }

    /// `fd` and `status`: the claim's descriptor of the file at `path` and its fstat. The caller
    /// keeps `fd` and closes it in every case.
    package func adoptIfNeeded(_ path: RelativePath, fd: Int32, status: FileSystem.Status) throws -> Outcome {
        let outbox = spool.paths.outbox
        guard !fs.mayLink(path, in: outbox, status: status) else { return .notNeeded }
        let tempDir = spool.paths.outboxTemporary
        let temp = RelativePath(TemporaryNames.prefix + spool.temporaries.next())
        do {
            try fs.copyFile(from: fd, status: status, to: temp, in: tempDir)
        } catch let error as SystemError where error.isNotFound {
            try fs.makeDirectories(tempDir)  // the hidden directory went with its outbox: made again
            try fs.copyFile(from: fd, status: status, to: temp, in: tempDir)
        }
        let copy = try fs.status(temp, in: tempDir)
        guard unchanged(fd, since: status), sameFile(try? fs.status(path, in: outbox), status) else {
            try fs.unlink(temp, in: tempDir)
            return .changed
        }
        try fs.exchange(temp, in: tempDir, with: path, in: outbox)
        // What now has the temporary name is what the outbox name held just before the swap: the
        // original, unless the producer put another file there between the check and the swap.
        guard sameFile(try? fs.status(temp, in: tempDir), status), unchanged(fd, since: status) else {
            try fs.exchange(temp, in: tempDir, with: path, in: outbox)
            try fs.unlink(temp, in: tempDir)
            return .changed
        }
        try fs.unlink(temp, in: tempDir)
        try spool.syncDirectory(of: path, in: .outbox)
        let adopted = try fs.openForReading(path, in: outbox)
        guard let now = try? fs.status(fd: adopted, path: path.displayed(in: outbox)), sameFile(now, copy) else {
            fs.close(adopted)
            return .changed
        }
        return .adopted(fd: adopted, status: now)
    }

    /// Size and mtime of the open file are still those of `status`.
    private func unchanged(_ fd: Int32, since status: FileSystem.Status) -> Bool {
        guard let now = try? fs.status(fd: fd, path: "") else { return false }
        return now.size == status.size && now.mtimeNanos == status.mtimeNanos
    }

    private func sameFile(_ a: FileSystem.Status?, _ b: FileSystem.Status) -> Bool {
        guard let a else { return false }
        return a.inode == b.inode && a.device == b.device
    }
}
