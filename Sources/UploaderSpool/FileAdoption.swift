import Foundation
import UploaderSupport
import UploaderConfig
import UploaderDecisions

/// Makes a producer's file the daemon's own before its claim, when the kernel would refuse to
/// link it (`SpoolMoves.adopt`, which decides every step; this runs it for the claim's open
/// descriptor and keeps what the claim needs of the outcome). A producer still holding the
/// original open writes on into it under its hidden name, so it is kept there until our copy is
/// filed: a write seen then gives it its name back, and it is uploaded again (`KeptOriginal`), as
/// our own file changed during its upload would be. Producers whose files are group-writable
/// (umask 002) never need any of this: the service may link them.
package struct FileAdoption: Sendable {
    package let lifecycle: FileLifecycle
    private var spool: Spool { lifecycle.spool }
    private var fs: any SpoolFileSystem { spool.fs }

    package init(lifecycle: FileLifecycle) {
        self.lifecycle = lifecycle
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
        package let original: FileFacts

        /// Nil while the original is as it was copied (or gone, or another file: nothing of the
        /// producer's is then left to lose); else what changed.
        package func change(_ fs: any SpoolFileSystem) -> String? {
            // A hint: an original that cannot be looked at counts as unchanged, as a gone one does.
            guard let now = (try? fs.statusIfPresent(leftover, in: directory))??.facts, now.identity == original.identity else { return nil }
            guard now.sameVersion(as: original) else {
                return "another user's original was written to after it was copied (size \(original.size) → \(now.size))"
            }
            return nil
        }

        /// Once our copy is filed: the original goes, when it is still the one that was copied.
        package func remove(_ fs: any SpoolFileSystem) throws {
            guard let now = try fs.statusIfPresent(leftover, in: directory), now.facts.identity == original.identity else { return }
            try fs.unlink(leftover, in: directory)
        }
    }

    /// `fd` and `status`: the claim's descriptor of the file at `path` and its fstat. The caller
    /// keeps `fd` and closes it in every case. `writtenJustBefore`: the file was last written within
    /// one tick of the file clock (its bytes are compared with the copy's once the copy has its name).
    package func adoptIfNeeded(_ path: RelativePath, fd: Int32, status: FileSystem.Status,
                               writtenJustBefore: Bool = false) throws -> Outcome {
        let outbox = spool.paths.outbox, display = path.displayed(in: outbox), held = status.facts
        let leftover = SpoolPlace.adoptionLeftover(of: path)
        let adoption = try lifecycle.plan(heldFacts: { [fs] in try fs.status(fd: fd, path: display).facts }, heldFile: (fd, status)) {
            disk throws(PlanStop) in try SpoolMoves.adopt(path, held: held, writtenJustBefore: writtenJustBefore, on: &disk)
        }
        switch adoption {
        case .notNeeded:
            return .notNeeded
        case .changed:
            return .changed
        case .copiedBefore(let original):
            return .copiedBefore(original: KeptOriginal(directory: outbox, leftover: leftover, original: original))
        case .adopted(let copy, let original):
            let adopted = try fs.openForReading(path, in: outbox)
            // What the name holds now must be our copy; an fstat that fails counts as changed: the
            // claim that follows opens the name again and says why.
            guard let now = try? fs.status(fd: adopted, path: display), now.facts.identity == copy else {
                fs.close(adopted)
                return .changed
            }
            return .adopted(fd: adopted, status: now, original: KeptOriginal(directory: outbox, leftover: leftover, original: original))
        }
    }

    /// Our copy came back to the outbox because its original changed (`KeptOriginal.change`): the
    /// original, with the producer's newer bytes, takes its name back, to be claimed afresh.
    package func giveBack(_ original: KeptOriginal) throws {
        guard fs.exists(original.leftover, in: original.directory), let path = SpoolPlace.adopted(byLeftover: original.leftover) else { return }
        try lifecycle.plan { disk throws(PlanStop) in try SpoolMoves.reconcileAdoption(path, on: &disk) }
    }

    /// What an adoption cut by a crash left under `leftover` (a `.upl-adopt.NAME`), settled
    /// (`SpoolMoves.reconcileAdoption`).
    package func reconcileLeftover(_ leftover: RelativePath) throws {
        guard let path = SpoolPlace.adopted(byLeftover: leftover) else { return }
        try lifecycle.plan { disk throws(PlanStop) in try SpoolMoves.reconcileAdoption(path, on: &disk) }
    }

    /// Whether the two files hold the same bytes (a rewrite within one tick of the file clock keeps
    /// size and mtime: only the bytes tell).
    static func sameBytes(_ a: RelativePath, in aDirectory: String, _ b: RelativePath, in bDirectory: String,
                          fs: any SpoolFileSystem) throws -> Bool {
        let fa = try fs.openForReading(a, in: aDirectory)
        defer { fs.close(fa) }
        let fb = try fs.openForReading(b, in: bDirectory)
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
}
