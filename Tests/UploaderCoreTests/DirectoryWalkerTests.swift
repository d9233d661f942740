@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite("DirectoryWalker walks a tree and reports what it cannot list")
struct DirectoryWalkerTests {
    /// root/{a.txt, .hidden, sub/{b.txt, deeper/c.txt}, link → sub}
    private final class Tree {
        let root: String
        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("walker-\(UUID().uuidString)").path
            let fm = FileManager.default
            try fm.createDirectory(atPath: root + "/sub/deeper", withIntermediateDirectories: true)
            for file in ["a.txt", ".hidden", "sub/b.txt", "sub/deeper/c.txt"] {
                guard fm.createFile(atPath: root + "/" + file, contents: Data(file.utf8)) else { throw SystemError("create", path: file) }
            }
            try fm.createSymbolicLink(atPath: root + "/link", withDestinationPath: "sub")
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    /// Walks everything it may; returns what was visited (path and kind), what was left, and the errors.
    private func walk(_ root: String, includeHidden: Bool = false, descend: (DirectoryWalker.Entry) -> Bool = { _ in true })
        -> (visited: [String: FileSystem.Kind?], left: [String], errors: [SystemError]) {
        let errors = ErrorsBox()
        var visited: [String: FileSystem.Kind?] = [:]
        var left: [String] = []
        DirectoryWalker(root: root, includeHidden: includeHidden, onError: { errors.append($0) }).walk(visit: { entry in
            visited[entry.path.display] = entry.kind
            return descend(entry)
        }, leave: { left.append($0.display) })
        return (visited, left, errors.all)
    }

    @Test func visitsEveryEntryDepthFirstSkipsDotNamesAndNeverFollowsASymlink() throws {
        let tree = try Tree()
        let (visited, left, errors) = walk(tree.root)
        #expect(errors.isEmpty)
        #expect(visited == ["a.txt": FileSystem.Kind.regular, "sub": .directory, "sub/b.txt": .regular, "sub/deeper": .directory,
                            "sub/deeper/c.txt": .regular, "link": .symlink])
        #expect(left == ["sub/deeper", "sub", ""], "each directory is left after everything below it")
    }

    @Test func dotNamesWhenAskedAndOnlyTheDirectoriesTheVisitorChooses() throws {
        let tree = try Tree()
        let (visited, _, _) = walk(tree.root, includeHidden: true, descend: { $0.path != RelativePath("sub/deeper") })
        #expect(Set(visited.keys) == ["a.txt", ".hidden", "sub", "sub/b.txt", "sub/deeper", "link"])
    }

    @Test func aRootThatIsNoDirectoryOrIsMissingIsReportedWithItsErrno() throws {
        let tree = try Tree()
        for (root, code) in [(tree.root + "/a.txt", Errno.notDirectory), (tree.root + "/missing", Errno.noEntry)] {
            let (visited, left, errors) = walk(root)
            #expect(visited.isEmpty && left.isEmpty)
            #expect(errors.map { $0.code } == [code])
            #expect(errors.first?.path == root)
        }
    }

    @Test func aDirectoryThatVanishesBeforeItIsListedIsReportedAndTheWalkGoesOn() throws {
        let tree = try Tree()
        let (visited, left, errors) = walk(tree.root, descend: { entry in
            // Gone between the parent's listing and its own: what a concurrent rmdir does.
            if entry.path == RelativePath("sub/deeper") { try? FileManager.default.removeItem(atPath: tree.root + "/sub/deeper") }
            return true
        })
        #expect(errors.count == 1)
        #expect(errors.first?.code == .noEntry && errors.first?.path == tree.root + "/sub/deeper")
        #expect(visited["sub/deeper/c.txt"] == nil && visited["sub/b.txt"] == FileSystem.Kind.regular && visited["a.txt"] == FileSystem.Kind.regular)
        #expect(left == ["sub", ""], "a directory that could not be listed is not left")
    }

    @Test func theCommandLineHandlerPrintsEachDirectoryOnce() {
        var lines: [String] = []
        let handler = DirectoryWalker.printingOnce { lines.append($0) }
        handler(SystemError("opendir", path: "/s/retry/x", code: .permissionDenied))
        handler(SystemError("opendir", path: "/s/retry/x", code: .permissionDenied))
        handler(SystemError("opendir", path: "/s/retry/y", code: .permissionDenied))
        #expect(lines == ["cannot list /s/retry/x: Permission denied (errno 13)", "cannot list /s/retry/y: Permission denied (errno 13)"])
    }

    @Test func theDaemonHandlerLogsOneWarningPerDirectoryNamingItAndTheErrno() {
        let lines = LinesBox()
        let logger = Logger(level: .info, sink: { lines.append($0) })
        // Every walk that meets it (recovery, the census every 10 s, retention) reports it; one line says it.
        for _ in 0..<3 { DirectoryWalker.warning(logger)(SystemError("opendir", path: "/s/outbox/x", code: .permissionDenied)) }
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("WARN cannot list directory dir=/s/outbox/x error=\"Permission denied (errno 13)\"") == true,
                "\(lines.all)")
    }
}

/// Errors a walker reported.
final class ErrorsBox {
    private(set) var all: [SystemError] = []
    func append(_ error: SystemError) { all.append(error) }
}

/// Log lines caught by a test's logger sink.
final class LinesBox: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}
