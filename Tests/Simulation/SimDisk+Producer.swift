@preconcurrency import Glibc
import UploaderSupport

/// The simulated user's side: files dropped, rewritten, moved and removed in the outbox.
/// Each call is one operation (one crash point) on absolute paths. Those that cannot fail on a
/// sane path return false instead of throwing when they do (missing directory, crashed
/// process), so a generated schedule can go on.
extension SimDisk {
    private static func parts(_ path: String) -> [[UInt8]] { SimDiskState.components(absolute: Array(path.utf8)) }

    /// open(O_WRONLY | O_CREAT | O_TRUNC), write, close; then fsync if `sync`. An existing file keeps its inode.
    /// `foreign`: the producer is another user than the daemon's, and owns what it creates.
    @discardableResult
    func createFile(_ path: String, data: [UInt8], sync: Bool, foreign: Bool = false) -> Bool {
        let parts = Self.parts(path)
        return succeeded("create", path) { state in
            let existed = try state.locate(parts, followLast: true).inode != nil
            let inode = try state.createFile(parts, exclusive: false)
            if !existed { state.nodes[inode]!.foreign = foreign }
            if existed && state.nodes[inode]!.foreign != foreign { throw SimErrno(EACCES) }
            state.setData(data, of: inode)
            if sync { state.syncFile(inode) }
        }
    }

    /// fsync of the directory holding `path`.
    @discardableResult
    func syncParent(_ path: String) -> Bool {
        let parts = Array(Self.parts(path).dropLast())
        return succeeded("fsync", path) { state in state.syncDirectory(try state.directory(at: parts)) }
    }

    /// Rewrites the content of the regular file at `path` in place (same inode); mtime moves.
    /// A `foreign` producer may write only its own files (mode 0644: the daemon's copy is not).
    @discardableResult
    func writeInPlace(_ path: String, data: [UInt8], foreign: Bool = false) -> Bool {
        rewrite(path, foreign: foreign) { _ in data }
    }

    /// fsync of the regular file at `path`.
    @discardableResult
    func syncFile(_ path: String) -> Bool {
        let parts = Self.parts(path)
        return succeeded("fsync", path) { state in
            guard let inode = try state.locate(parts, followLast: true).inode else { throw SimErrno(ENOENT) }
            state.syncFile(inode)
        }
    }

    @discardableResult
    func append(_ path: String, data: [UInt8], foreign: Bool = false) -> Bool {
        rewrite(path, foreign: foreign) { $0 + data }
    }

    private func rewrite(_ path: String, foreign: Bool, _ newData: ([UInt8]) -> [UInt8]) -> Bool {
        let parts = Self.parts(path)
        return succeeded("write", path) { state in
            guard let inode = try state.locate(parts, followLast: true).inode else { throw SimErrno(ENOENT) }
            guard state.nodes[inode]!.kind == .regular else { throw SimErrno(EINVAL) }
            if state.nodes[inode]!.foreign != foreign { throw SimErrno(EACCES) }
            state.setData(newData(state.nodes[inode]!.content.data), of: inode)
        }
    }

    /// A hard link `new` to `existing`, by the producer (who owns its foreign files).
    func link(_ existing: String, _ new: String) throws {
        let (from, to) = (Self.parts(existing), Self.parts(new))
        try operation("link", "\(existing) to \(new)") { state in
            let inode = try state.locate(from, followLast: false).inode
            try state.link(from, to, byProducer: inode.map { state.nodes[$0]!.foreign } ?? false)
        }
    }

    /// rename(2): replaces `to` if it exists.
    func rename(_ from: String, _ to: String) throws {
        let (source, target) = (Self.parts(from), Self.parts(to))
        try operation("rename", "\(from) to \(to)") { state in try state.rename(source, to: target, replace: true) }
    }

    /// unlink(2).
    func remove(_ path: String) throws {
        let parts = Self.parts(path)
        try operation("unlink", path) { state in try state.unlink(parts) }
    }

    @discardableResult
    func makeSymlink(_ path: String, to target: String) -> Bool {
        makeNode(.symlink(target: Array(target.utf8)), at: path)
    }

    @discardableResult
    func makeFIFO(_ path: String) -> Bool {
        makeNode(.fifo, at: path)
    }

    private func makeNode(_ kind: SimNode.Kind, at path: String) -> Bool {
        let parts = Self.parts(path)
        return succeeded("mknod", path) { state in try state.makeNode(kind, at: parts) }
    }

    /// One operation whose failure is reported as false.
    private func succeeded(_ call: String, _ path: String, _ body: (inout SimDiskState) throws -> Void) -> Bool {
        do {
            try operation(call, path, body)
            return true
        } catch {
            return false
        }
    }
}
