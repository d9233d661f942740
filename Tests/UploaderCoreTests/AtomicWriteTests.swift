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

@Suite("FileSystem.writeAtomically: the one way to put a whole file in place")
struct AtomicWriteTests {
    private func scratch() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    private func names(_ dir: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir).sorted() }

    @Test func replacesTheFileWholeAndLeavesNoTemporaryBehind() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileSystem.writeAtomically(Array("old".utf8), toPath: dir + "/state.json", syncFile: false)
        try FileSystem.writeAtomically(Array("new".utf8), toPath: dir + "/state.json", syncFile: false)
        #expect(FileManager.default.contents(atPath: dir + "/state.json") == Data("new".utf8))
        #expect(try names(dir) == ["state.json"])
    }

    @Test func anExactModeIsSetWhateverTheUmask() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 0666 is more than any usual umask lets open(2) create: only fchmod gives it.
        try FileSystem.writeAtomically(Array("m".utf8), toPath: dir + "/a.prom", mode: 0o666)
        try FileSystem.writeAtomically(Array("m".utf8), toPath: dir + "/b.json")
        var st = stat()
        #expect(stat(dir + "/a.prom", &st) == 0 && st.st_mode & 0o777 == 0o666)
        #expect(stat(dir + "/b.json", &st) == 0 && st.st_mode & 0o137 == 0, "no more than 0640 by default")
    }

    @Test func withoutReplaceAnExistingNameIsRefusedAndTheTemporaryRemoved() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileSystem.writeAtomically(Array("first".utf8), to: RelativePath("a.bin"), in: dir, syncDirectory: false)
        #expect {
            try FileSystem.writeAtomically(to: RelativePath("a.bin"), in: dir, syncDirectory: true, replace: false,
                                           temporaryPrefix: ".upl-enqueue-") { fd, display in
                try Array("second".utf8).withUnsafeBytes { try FileSystem.writeAll($0, to: fd, path: display) }
            }
        } throws: { ($0 as? SystemError)?.code == .exists }
        #expect(FileManager.default.contents(atPath: dir + "/a.bin") == Data("first".utf8))
        #expect(try names(dir) == ["a.bin"])
    }

    @Test func aFailureWhileWritingLeavesNothing() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: SystemError.self) {
            try FileSystem.writeAtomically(to: RelativePath("a.bin"), in: dir, syncDirectory: false) { _, display in
                throw SystemError("read", path: display, code: .io)
            }
        }
        #expect(try names(dir).isEmpty)
    }
}
