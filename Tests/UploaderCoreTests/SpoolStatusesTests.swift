import Foundation
@preconcurrency import Glibc
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderCore

/// The start-up's many `lstat`s, split over the cores for a big backlog, answer exactly what one
/// `status` per file would, in the order asked, vanished files and subdirectories included.
@Suite struct SpoolStatusesTests {
    @Test func aBigBacklogLookedUpInPartsMatchesOneLookupPerFile() throws {
        let dir = try TemporaryDirectory()
        var paths: [RelativePath] = []
        for n in 0..<9_000 {
            let name = "f\(n)"
            let fd = open(dir.path + "/" + name, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            _ = write(fd, name, name.utf8.count)
            close(fd)
            paths.append(RelativePath(name))
        }
        try FileManager.default.createDirectory(atPath: dir.path + "/sub", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.path + "/sub/deep"))
        paths.insert(RelativePath("gone"), at: 4_500)
        paths.append(RelativePath("sub/deep"))
        let fs = LocalFileSystem()
        let all = fs.statuses(paths, in: dir.path)
        #expect(all.count == paths.count)
        for (path, status) in zip(paths, all) {
            let one = try? fs.status(path, in: dir.path)
            #expect(status?.size == one?.size && status?.inode == one?.inode, "\(path.display)")
        }
        #expect(all[4_500] == nil, "a file that is not there")
        #expect(all.last??.size == 1)
    }

    /// The backlog's files are looked up in stretches: across a stretch's edge, each keeps its
    /// own size and place, and one that vanished gets zeros.
    @Test func queuedFilesAcrossStretchesKeepEachFilesSizeAndPlace() throws {
        let dir = try TemporaryDirectory()
        let spool = Spool(paths: SpoolPaths(root: dir.path + "/spool"))
        try spool.prepare()
        let count = Spool.statusStretch + 600
        var paths: [RelativePath] = []
        for n in 0..<count {
            let name = "f\(n)"
            let fd = open(spool.paths.outbox + "/" + name, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            _ = write(fd, String(repeating: "x", count: n % 7), n % 7)
            close(fd)
            paths.append(RelativePath(name))
        }
        paths.insert(RelativePath("gone"), at: Spool.statusStretch)
        let files = spool.queuedFiles(paths)
        #expect(files.map(\.path) == paths)
        #expect(files[Spool.statusStretch] == QueuedFile(RelativePath("gone")))
        for file in files where file.path != RelativePath("gone") {
            let n = Int(file.path.display.dropFirst())!
            #expect(file.size == Int64(n % 7) && file.mtimeNanos > 0, "\(file.path.display)")
        }
    }
}
