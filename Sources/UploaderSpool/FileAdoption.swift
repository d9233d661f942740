import Foundation
import UploaderSupport
import UploaderConfig

/// Makes a producer's file the daemon's own before its claim, when the kernel would refuse to
/// link it: with `fs.protected_hardlinks = 1` (every Debian's default) a user may link only files
/// it owns or may write, and a producer's `0644` or `0640` file in a shared outbox is neither.
/// Every move of the spool is a link (`FileLifecycle`), so such a file could be uploaded but
/// never filed.
///
/// The file is copied beside itself under a hidden name, `.upl-adopt.NAME` (its bytes, permission
/// bits and mtime; fsynced), and the copy and the original swap names in one `RENAME_EXCHANGE`.
/// From then on the outbox name holds our copy, and every later step is the usual one. Safe at
/// every instant: before the swap the original alone has the outbox name; after it, either file
/// holds the same bytes durably under that name (whichever entry a power cut keeps). The outbox is
/// fsynced before the claim goes on, since the file's id derives from its inode (`ManifestID`).
///
/// A producer still writing meanwhile is seen: the original's descriptor is checked before and
/// after the swap, and a change swaps the names back (the original, with its new bytes, keeps
/// its name) and the claim starts again. A producer that still holds the file open writes on
/// into the original, so it is kept under the hidden name until our copy is filed: a write seen
/// then gives it its name back, and it is uploaded again (`KeptOriginal`), as our own file
/// changed during its upload would be. A crash leaves the original under the hidden name; the
/// start-up (`reconcileLeftover`) gives it its name back when it holds bytes our copy does not.
/// Producers whose files are group-writable (umask 002) never need any of this: the service may
/// link them.
package struct FileAdoption: Sendable {
    package let spool: Spool
    private var fs: any SpoolFileSystem { spool.fs }

    package init(spool: Spool) {
        self.spool = spool
    }

    package enum Outcome {
        /// Linkable as it is: nothing was done.
        case notNeeded
        /// The outbox name now holds our copy: its open descriptor and fstat, and the original kept beside it.
        case adopted(fd: Int32, status: FileSystem.Status, original: KeptOriginal)
        /// Our copy, made by an earlier claim, whose original is still beside it as it was copied.
        case copiedBefore(original: KeptOriginal)
        /// The file changed or was replaced meanwhile: claim it again.
        case changed
    }

    /// The producer's original of an adopted file, kept under `.upl-adopt.NAME` until our copy is
    /// filed: a producer still holding it open writes there, not into our copy.
    package struct KeptOriginal: Sendable {
        /// The outbox, and the original's hidden name in it.
        package let directory: String
        package let leftover: RelativePath
        /// What fstat said of the original when it was copied (the copy keeps its size and mtime).
        package let status: FileSystem.Status

        /// Nil while the original is as it was copied (or gone, or another file: nothing of the
        /// producer's is then left to lose); else what changed.
        package func change(_ fs: any SpoolFileSystem) -> String? {
            // A hint: an original that cannot be looked at counts as unchanged, as a gone one does.
            guard let now = try? fs.statusIfPresent(leftover, in: directory),
                  now.inode == status.inode, now.device == status.device else { return nil }
            guard now.size == status.size, now.mtimeNanos == status.mtimeNanos else {
                return "another user's original was written to after it was copied (size \(status.size) → \(now.size))"
            }
            return nil
        }

        /// Once our copy is filed: the original goes, when it is still the one that was copied.
        package func remove(_ fs: any SpoolFileSystem) throws {
            guard let now = try fs.statusIfPresent(leftover, in: directory),
                  now.inode == status.inode, now.device == status.device else { return }
            try fs.unlink(leftover, in: directory)
        }
    }

    /// `fd` and `status`: the claim's descriptor of the file at `path` and its fstat. The caller
    /// keeps `fd` and closes it in every case. `writtenJustBefore`: the file was last written within
    /// one tick of the file clock, so a rewrite of the same size could leave size and mtime as they
    /// were; its bytes are compared with the copy's once the copy has its name.
    package func adoptIfNeeded(_ path: RelativePath, fd: Int32, status: FileSystem.Status,
                               writtenJustBefore: Bool = false) throws -> Outcome {
        let outbox = spool.paths.outbox
        let temp = Self.leftoverName(of: path)
        let ours = fs.mayLink(path, in: outbox, status: status)
        if fs.exists(temp, in: outbox) {
            if ours, let original = try keptOriginal(temp, of: status) { return .copiedBefore(original: original) }
            // What an earlier try left, or an original written to since: settled first (the
            // original may take its name back: then the claim starts again).
            try reconcileLeftover(temp)
            // A name that cannot be looked at counts as changed: the claim that follows says why.
            if ours { return sameFile(try? fs.status(path, in: outbox), status) ? .notNeeded : .changed }
        } else if ours {
            return .notNeeded
        }
        try fs.copyFile(from: fd, status: status, to: temp, in: outbox)
        let copy = try fs.status(temp, in: outbox)
        // The outbox name gone (or unreadable) counts as changed: the claim that follows says which.
        guard unchanged(fd, since: status), sameFile(try? fs.status(path, in: outbox), status) else {
            try fs.unlink(temp, in: outbox)
            return .changed
        }
        try fs.exchange(temp, in: outbox, with: path, in: outbox)
        // What now has the temporary name is what the outbox name held just before the swap: the
        // original, unless the producer put another file there between the check and the swap.
        // Unreadable counts as another file: swapped back, as for one.
        guard sameFile(try? fs.status(temp, in: outbox), status), unchanged(fd, since: status),
              try !writtenJustBefore || sameBytes(temp, path, in: outbox) else {
            try fs.exchange(temp, in: outbox, with: path, in: outbox)
            try fs.unlink(temp, in: outbox)
            return .changed
        }
        try spool.syncDirectory(of: path, in: .outbox)
        let adopted = try fs.openForReading(path, in: outbox)
        // An fstat that fails counts as changed: the claim that follows opens the name again.
        guard let now = try? fs.status(fd: adopted, path: path.displayed(in: outbox)), sameFile(now, copy) else {
            fs.close(adopted)
            return .changed
        }
        return .adopted(fd: adopted, status: now, original: KeptOriginal(directory: outbox, leftover: temp, status: status))
    }

    /// The producer's original beside our copy (`copy`: its fstat), when it still holds what was
    /// copied: kept on while the copy is claimed again.
    private func keptOriginal(_ leftover: RelativePath, of copy: FileSystem.Status) throws -> KeptOriginal? {
        let outbox = spool.paths.outbox
        let original = try fs.status(leftover, in: outbox)
        guard !fs.mayLink(leftover, in: outbox, status: original), original.kind == .regular,
              original.size == copy.size, original.mtimeNanos == copy.mtimeNanos else { return nil }
        return KeptOriginal(directory: outbox, leftover: leftover, status: original)
    }

    /// Our copy came back to the outbox because its original changed (`KeptOriginal.change`): the
    /// original, with the producer's newer bytes, takes its name back, to be claimed afresh.
    package func giveBack(_ original: KeptOriginal) throws {
        guard fs.exists(original.leftover, in: original.directory) else { return }
        try reconcileLeftover(original.leftover)
    }

    static let leftoverPrefix = ".upl-adopt."

    /// The hidden name beside `path` that its copy is made under (and the original holds after the swap).
    static func leftoverName(of path: RelativePath) -> RelativePath {
        let name = RelativePath(bytes: Array(leftoverPrefix.utf8) + path.name.bytes)
        return path.parent.map { $0.appending(name) } ?? name
    }

    /// The file `.upl-adopt.NAME` stands beside, nil for any other name.
    static func adoptedName(ofLeftover path: RelativePath) -> RelativePath? {
        let prefix = Array(leftoverPrefix.utf8)
        guard path.name.bytes.count > prefix.count, path.name.bytes.starts(with: prefix) else { return nil }
        let name = RelativePath(bytes: Array(path.name.bytes.dropFirst(prefix.count)))
        return path.parent.map { $0.appending(name) } ?? name
    }

    /// What an adoption left: `leftover` is a `.upl-adopt.NAME`. Our own copy (cut before the swap,
    /// or swapped back) goes. The producer's original (kept after the swap, or cut there) goes too
    /// when the outbox name holds its bytes, is gone (filed, or the producer removed it) or holds
    /// what is not our copy (a FIFO, a file of the producer's put there since); when our copy there
    /// holds other bytes — the producer wrote to the original after it was copied — the original
    /// takes its name back, and is claimed (and copied) afresh.
    package func reconcileLeftover(_ leftover: RelativePath) throws {
        guard let path = Self.adoptedName(ofLeftover: leftover) else { return }
        let outbox = spool.paths.outbox
        let original = try fs.status(leftover, in: outbox)
        let named = try fs.statusIfPresent(path, in: outbox)  // nil: the producer removed the file
        let theirs = !fs.mayLink(leftover, in: outbox, status: original)
        if theirs, let named, named.kind == .regular, named.inode != original.inode, fs.mayLink(path, in: outbox, status: named),
           try named.size != original.size || named.mtimeNanos != original.mtimeNanos || !sameBytes(leftover, path, in: outbox) {
            try fs.rename(leftover, in: outbox, to: path, in: outbox, replace: true)
        } else {
            try fs.unlink(leftover, in: outbox)
        }
        try spool.syncDirectory(of: path, in: .outbox)
    }

    /// Whether the two files hold the same bytes (a rewrite within one tick of the file clock keeps
    /// size and mtime: only the bytes tell).
    private func sameBytes(_ a: RelativePath, _ b: RelativePath, in directory: String) throws -> Bool {
        let fa = try fs.openForReading(a, in: directory)
        defer { fs.close(fa) }
        let fb = try fs.openForReading(b, in: directory)
        defer { fs.close(fb) }
        let chunk = 1 << 16
        var left = [UInt8](repeating: 0, count: chunk), right = [UInt8](repeating: 0, count: chunk)
        var offset: Int64 = 0
        while true {
            let n = try left.withUnsafeMutableBytes { try fs.read(fd: fa, into: $0, at: offset, path: a.logSafe) }
            let m = try right.withUnsafeMutableBytes { try fs.read(fd: fb, into: $0, at: offset, path: b.logSafe) }
            guard n == m, left[0..<n] == right[0..<m] else { return false }
            if n == 0 { return true }
            offset += Int64(n)
        }
    }

    /// Size and mtime of the open file are still those of `status` (an fstat that fails counts as a change).
    private func unchanged(_ fd: Int32, since status: FileSystem.Status) -> Bool {
        guard let now = try? fs.status(fd: fd, path: "") else { return false }
        return now.size == status.size && now.mtimeNanos == status.mtimeNanos
    }

    private func sameFile(_ a: FileSystem.Status?, _ b: FileSystem.Status) -> Bool {
        guard let a else { return false }
        return a.inode == b.inode && a.device == b.device
    }
}
