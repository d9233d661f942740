import Foundation

/// Walks the tree below a root directory, depth first in listing order, and reports every
/// directory it cannot list instead of skipping it in silence (recovery, retention, `status`
/// and `retry` walk the spool with it).
///
/// Symlinks are never followed: an entry's kind comes from readdir's `d_type`, or from lstat
/// when the filesystem does not fill it in. Names starting with `.` are skipped unless asked for.
package struct DirectoryWalker {
    /// One entry met on the walk.
    package struct Entry: Sendable {
        /// Path relative to the walker's root.
        package var path: RelativePath
        /// The last component of `path`.
        package var name: RelativePath
        /// What it is; nil when it vanished before lstat could tell.
        package var kind: FileSystem.Kind?
    }

    /// Told about each directory that could not be listed (opendir or readdir failed; the
    /// error's path names the directory).
    package typealias ErrorHandler = (SystemError) -> Void

    package let root: String
    package let includeHidden: Bool
    private let onError: ErrorHandler
    private let fs: any SpoolFileSystem

    package init(root: String, includeHidden: Bool = false, fs: any SpoolFileSystem = LocalFileSystem(),
                 onError: @escaping ErrorHandler) {
        self.root = root
        self.includeHidden = includeHidden
        self.fs = fs
        self.onError = onError
    }

    /// A walker that reports what it cannot list as one warning line naming the directory.
    package init(root: String, includeHidden: Bool = false, fs: any SpoolFileSystem = LocalFileSystem(), logger: Logger) {
        self.init(root: root, includeHidden: includeHidden, fs: fs, onError: DirectoryWalker.warning(logger))
    }

    /// Calls `visit` with every entry below `start` (relative to the root). A directory is
    /// walked into right after its own visit when `visit` returns true; the answer is ignored
    /// for anything else. `leave` is called with each directory listed (`start` included)
    /// once all its entries have been visited.
    package func walk(from start: RelativePath = RelativePath(bytes: []), visit: (Entry) -> Bool,
                      leave: (RelativePath) -> Void = { _ in }) {
        guard let listing = listing(of: start) else { return }
        // Each entry is made as it is visited: a directory of 100,000 files is held once (its
        // listing), not twice.
        for listed in listing where includeHidden || listed.name.bytes.first != UInt8(ascii: ".") {
            let path = start.appending(listed.name)
            // A hint: gone since the listing (or unreadable) leaves the kind nil, as documented on `Entry`.
            let entry = Entry(path: path, name: listed.name, kind: listed.kind ?? (try? fs.status(path, in: root))?.kind)
            if visit(entry) && entry.kind == .directory { walk(from: entry.path, visit: visit, leave: leave) }
        }
        leave(start)
    }

    /// The listing of one directory (no recursion), or nil after reporting why it cannot be listed.
    private func listing(of directory: RelativePath) -> [FileSystem.Entry]? {
        do {
            return try fs.list(directory, in: root)
        } catch let error as SystemError {
            onError(error)
            return nil
        } catch {
            onError(SystemError("opendir", path: directory.displayed(in: root), code: .io))
            return nil
        }
    }

    /// The daemon's handler: `WARN cannot list directory dir=… error="Permission denied (errno 13)"`,
    /// once per directory and process, however many walks (recovery, census, retention) meet it.
    package static func warning(_ logger: Logger) -> ErrorHandler {
        { error in
            let dir = error.path ?? ""
            logger.warnOnce(key: "cannot list " + dir, "cannot list directory", ["dir": dir, "error": error.reasonWithCode])
        }
    }

    /// The command line's handler: `cannot list DIR: Permission denied (errno 13)` through
    /// `print`, once per directory however often the command meets it (`cannot read FILE: …` for
    /// a file `status` reads, the sent ledger).
    package static func printingOnce(_ print: @escaping (String) -> Void) -> ErrorHandler {
        var printed = Set<String>()
        return { error in
            guard printed.insert(error.path ?? "").inserted else { return }
            let verb = ["opendir", "readdir"].contains(error.operation) ? "list" : "read"
            print("cannot \(verb) \(error.path ?? ""): \(error.reasonWithCode)")
        }
    }
}
