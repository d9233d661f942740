@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport

/// The simulated disk answers the spool's calls as the kernel does: the same results, the same
/// errnos; and its crash control stops a process exactly where the simulator asks.
@Suite struct SimDiskTests {
    private func bytes(_ text: String) -> [UInt8] { SimDiskTesting.bytes(text) }

    private func errno(_ body: () throws -> Void) -> Int32? {
        do {
            try body()
            return nil
        } catch let error as SystemError {
            return error.code.rawValue
        } catch {
            return -1
        }
    }

    private func outbox(_ model: SimDisk.Model = .journalled) throws -> SimDisk {
        let disk = SimDiskTesting.disk(model)
        try disk.makeDirectories("/spool/outbox")
        return disk
    }

    @Test func renameWithoutReplaceRefusesAnExistingNameAndChangesNothing() throws {
        let disk = try outbox()
        disk.createFile("/spool/outbox/a", data: bytes("A"), sync: false)
        disk.createFile("/spool/outbox/b", data: bytes("B"), sync: false)
        let code = errno { try disk.rename(RelativePath("a"), in: "/spool/outbox", to: RelativePath("b"), in: "/spool/outbox", replace: false) }
        #expect(code == EEXIST)
        #expect(disk.contents("/spool/outbox/a") == bytes("A"))
        #expect(disk.contents("/spool/outbox/b") == bytes("B"))
        try disk.rename(RelativePath("a"), in: "/spool/outbox", to: RelativePath("b"), in: "/spool/outbox", replace: true)
        #expect(disk.names(in: "/spool/outbox") == ["b"])
        #expect(disk.contents("/spool/outbox/b") == bytes("A"))
    }

    @Test func renameAndUnlinkOfWhatIsNotThereAreENOENT() throws {
        let disk = try outbox()
        #expect(errno { try disk.rename(RelativePath("gone"), in: "/spool/outbox", to: RelativePath("x"), in: "/spool/outbox", replace: true) } == ENOENT)
        #expect(errno { try disk.unlink(RelativePath("gone"), in: "/spool/outbox") } == ENOENT)
        #expect(errno { try disk.unlink(RelativePath("outbox"), in: "/spool") } == EISDIR)
        #expect(errno { _ = try disk.list(RelativePath("nowhere"), in: "/spool") } == ENOENT)
    }

    @Test func statusIsLstatAndOpeningASymlinkIsELOOP() throws {
        let disk = try outbox()
        disk.createFile("/spool/outbox/real", data: bytes("real"), sync: false)
        disk.makeSymlink("/spool/outbox/link", to: "/spool/outbox/real")
        let status = try disk.status(RelativePath("link"), in: "/spool/outbox")
        #expect(status.kind == .symlink)
        #expect(status.size == Int64("/spool/outbox/real".utf8.count))
        #expect(status.inode != disk.inode("/spool/outbox/real"))
        #expect(errno { _ = try disk.openForReading(RelativePath("link"), in: "/spool/outbox") } == ELOOP)
        #expect(errno { _ = try disk.readAll(RelativePath("link"), in: "/spool/outbox") } == ELOOP)
    }

    @Test func aSymlinkedDirectoryOnTheWayIsRefusedWhereTheRealCodeUsesONoFollow() throws {
        let disk = try outbox()
        try disk.makeDirectories("/elsewhere")
        disk.createFile("/elsewhere/secret", data: bytes("secret"), sync: false)
        disk.makeSymlink("/spool/outbox/sub", to: "/elsewhere")
        // openParent walks the relative path with O_DIRECTORY | O_NOFOLLOW: ENOTDIR, as Linux answers.
        #expect(errno { _ = try disk.status(RelativePath("sub/secret"), in: "/spool/outbox") } == ENOTDIR)
        #expect(errno { _ = try disk.openForReading(RelativePath("sub/secret"), in: "/spool/outbox") } == ENOTDIR)
        // Plain path calls (lstat of the joined path, opendir) follow it, as the kernel does.
        #expect(disk.exists(RelativePath("sub/secret"), in: "/spool/outbox"))
        #expect(try disk.list(RelativePath("sub"), in: "/spool/outbox").map(\.name) == [RelativePath("secret")])
    }

    @Test func aFIFOOpensWithoutBlockingAndFstatSaysWhatItIs() throws {
        let disk = try outbox()
        disk.makeFIFO("/spool/outbox/pipe")
        #expect(try disk.status(RelativePath("pipe"), in: "/spool/outbox").formatName == "FIFO")
        let fd = try disk.openForReading(RelativePath("pipe"), in: "/spool/outbox")
        #expect(try disk.status(fd: fd, path: "pipe").kind == .other)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try buffer.withUnsafeMutableBytes { try disk.read(fd: fd, into: $0, at: 0, path: nil) } == 0)
        #expect(errno { _ = try disk.readAll(RelativePath("pipe"), in: "/spool/outbox") } == EINVAL)
    }

    @Test func listSkipsNothingAndKeepsNamesAsBytes() throws {
        let disk = try outbox()
        let invalid: [UInt8] = [0x66, 0xFF, 0xFE]  // not UTF-8
        disk.createFile("/spool/outbox/.hidden", data: [], sync: false)
        disk.createFile("/spool/outbox/a.txt", data: [], sync: false)
        disk.createFile("/spool/outbox/a.txt.manifest.json", data: [], sync: false)
        try disk.makeParents(of: RelativePath("sub/x"), in: "/spool/outbox")
        disk.makeSymlink("/spool/outbox/link", to: "nowhere")
        disk.makeFIFO("/spool/outbox/pipe")
        try disk.createFile(bytes("odd"), named: RelativePath(bytes: invalid), in: "/spool/outbox", sync: false)
        let entries = try disk.list(RelativePath(bytes: []), in: "/spool/outbox")
        #expect(entries.map(\.name.bytes) == [bytes(".hidden"), bytes("a.txt"), bytes("a.txt.manifest.json"), invalid,
                                              bytes("link"), bytes("pipe"), bytes("sub")])
        #expect(entries.map(\.kind) == [.regular, .regular, .regular, .regular, .symlink, .other, .directory])
        #expect(try disk.readAll(RelativePath(bytes: invalid), in: "/spool/outbox") == bytes("odd"))
    }

    @Test func descriptorsAreFakeNumbersThatReadTheirOwnFileEvenAfterItMoves() throws {
        let disk = try outbox()
        disk.createFile("/spool/outbox/a", data: bytes("0123456789"), sync: false)
        disk.createFile("/spool/outbox/b", data: bytes("bbb"), sync: false)
        let a = try disk.openForReading(RelativePath("a"), in: "/spool/outbox")
        let b = try disk.openForReading(RelativePath("b"), in: "/spool/outbox")
        #expect(a >= 1000 && b >= 1000 && a != b)
        try disk.unlink(RelativePath("a"), in: "/spool/outbox")
        disk.createFile("/spool/outbox/a", data: bytes("other"), sync: false)
        var buffer = [UInt8](repeating: 0, count: 4)
        let n = try buffer.withUnsafeMutableBytes { try disk.read(fd: a, into: $0, at: 3, path: nil) }
        #expect(n == 4 && buffer == bytes("3456"))
        #expect(try buffer.withUnsafeMutableBytes { try disk.read(fd: a, into: $0, at: 8, path: nil) } == 2)
        #expect(try buffer.withUnsafeMutableBytes { try disk.read(fd: a, into: $0, at: 10, path: nil) } == 0)
        #expect(try disk.status(fd: a, path: "a").links == 0)
        #expect(try buffer.withUnsafeMutableBytes { try disk.read(fd: b, into: $0, at: 0, path: nil) } == 3)
    }

    @Test func anUnknownOrClosedDescriptorIsEBADF() throws {
        let disk = try outbox()
        disk.createFile("/spool/outbox/a", data: bytes("a"), sync: false)
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(errno { _ = try buffer.withUnsafeMutableBytes { try disk.read(fd: 3, into: $0, at: 0, path: nil) } } == EBADF)
        let fd = try disk.openForReading(RelativePath("a"), in: "/spool/outbox")
        disk.close(fd)
        #expect(errno { _ = try disk.status(fd: fd, path: "a") } == EBADF)
        #expect(errno { _ = try buffer.withUnsafeMutableBytes { try disk.read(fd: fd, into: $0, at: 0, path: nil) } } == EBADF)
    }

    @Test func hardLinksShareAnInodeAndCountTheirNames() throws {
        let disk = try outbox()
        disk.createFile("/spool/outbox/a", data: bytes("a"), sync: false)
        try disk.link("/spool/outbox/a", "/spool/outbox/b")
        #expect(disk.inode("/spool/outbox/a") == disk.inode("/spool/outbox/b"))
        #expect(try disk.status(RelativePath("b"), in: "/spool/outbox").links == 2)
        #expect(errno { try disk.link("/spool/outbox/a", "/spool/outbox/b") } == EEXIST)
        // rename between two names of one file does nothing, as POSIX says.
        try disk.rename("/spool/outbox/a", "/spool/outbox/b")
        #expect(disk.names(in: "/spool/outbox") == ["a", "b"])
    }

    @Test func makeDirectoriesCountsOneOperationPerDirectoryItMakes() throws {
        let disk = SimDiskTesting.disk(.journalled)
        try disk.makeDirectories("/spool/outbox/.upl-tmp")
        #expect(disk.operations == 3)
        try disk.makeDirectories("/spool/outbox")
        #expect(disk.operations == 3)
        disk.createFile("/spool/file", data: [], sync: false)
        #expect(errno { try disk.makeDirectories("/spool/file/x") } == ENOTDIR)
    }

    @Test func createFileIsCreateWriteAndFsyncAsThreeOperationsAndNeverReplaces() throws {
        let disk = try outbox()
        var before = disk.operations
        try disk.createFile(bytes("m1"), named: RelativePath("a"), in: "/spool/outbox", sync: true)
        #expect(disk.operations - before == 3)
        before = disk.operations
        try disk.createFile(bytes("m2"), named: RelativePath("b"), in: "/spool/outbox", sync: false)
        #expect(disk.operations - before == 2)
        #expect(errno { try disk.createFile([], named: RelativePath("a"), in: "/spool/outbox", sync: true) } == EEXIST)
        #expect(errno { try disk.createFile([], named: RelativePath("a"), in: "/spool/nowhere", sync: true) } == ENOENT)
        #expect(disk.contents("/spool/outbox/a") == bytes("m1"))
    }

    @Test func aCrashInsideCreateFileLeavesTheEmptyFileAKillKeeps() throws {
        let disk = try outbox()
        disk.crash(atOperation: disk.operations + 1)
        #expect(errno { try disk.createFile(bytes("m"), named: RelativePath("a"), in: "/spool/outbox", sync: true) } == EIO)
        disk.killProcess()
        #expect(disk.contents("/spool/outbox/a") == [], "the create happened; the write and the clean-up did not")
    }

    @Test func killProcessKeepsEverythingTheKernelHadAndClosesDescriptors() throws {
        for model in SimDisk.Model.allCases {
            let disk = try outbox(model)
            disk.createFile("/spool/outbox/a", data: bytes("unsynced"), sync: false)
            try disk.rename("/spool/outbox/a", "/spool/b")
            let fd = try disk.openForReading(RelativePath("b"), in: "/spool")
            disk.killProcess()
            #expect(SimDiskTesting.files(on: disk, below: "/") == ["/spool/b": bytes("unsynced")], "\(model)")
            #expect(errno { _ = try disk.status(fd: fd, path: "b") } == EBADF)
        }
    }

    @Test func anArmedCrashFailsThatOperationAndEveryLaterOneWithEIOAndChangesNothing() throws {
        let disk = try outbox()
        disk.createFile("/spool/outbox/a", data: bytes("a"), sync: false)
        let armedAt = disk.operations + 1
        disk.crash(atOperation: armedAt)
        try disk.rename("/spool/outbox/a", "/spool/outbox/b")  // operation armedAt - 1: still alive
        #expect(!disk.crashed)
        let before = SimDiskTesting.files(on: disk, below: "/")
        #expect(errno { try disk.rename("/spool/outbox/b", "/spool/outbox/c") } == EIO)
        #expect(disk.crashed)
        #expect(errno { try disk.unlink(RelativePath("b"), in: "/spool/outbox") } == EIO)
        #expect(errno { try disk.createFile(bytes("x"), named: RelativePath("m"), in: "/spool/outbox", sync: true) } == EIO)
        #expect(errno { _ = try disk.status(RelativePath("b"), in: "/spool/outbox") } == EIO, "a dead process reads nothing either")
        #expect(!disk.createFile("/spool/outbox/new", data: [], sync: true))
        #expect(!disk.exists(RelativePath("b"), in: "/spool/outbox"))
        #expect(disk.operations == armedAt)
        #expect(SimDiskTesting.files(on: disk, below: "/") == before)
        disk.killProcess()
        #expect(!disk.crashed)
        try disk.rename("/spool/outbox/b", "/spool/outbox/c")
        #expect(disk.names(in: "/spool/outbox") == ["c"])
    }
}
