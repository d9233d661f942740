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

@Suite("Upload ids are derived from the file, so a lost claim gives the same Idempotency-Key")
struct ManifestIDTests {
    private func status(inode: UInt64 = 7, size: Int64 = 10, mtime: Int64 = 1, ctime: Int64 = 2) throws -> FileSystem.Status {
        let dir = FileManager.default.temporaryDirectory.path
        var s = try FileSystem.status(path: dir)
        s.inode = inode
        s.size = size
        s.mtimeNanos = mtime
        s.ctimeNanos = ctime
        return s
    }

    @Test func theSameFileGetsTheSameId() throws {
        let a = ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(), sha256: "ab")
        let b = ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(), sha256: "ab")
        #expect(a == b)
        #expect(a.count == 36)
        #expect(UUID(uuidString: a) != nil, "shaped as a UUID")
    }

    /// Our own links into retry/ and back change the ctime, and a power cut can bring an older
    /// one back: the same hashed bytes keep their key (simulator seed 3335).
    @Test func aHashedFileKeepsItsIdWhenOnlyItsCtimeChanges() throws {
        let a = ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(ctime: 2), sha256: "ab")
        #expect(a == ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(ctime: 9), sha256: "ab"))
    }

    @Test func anythingThatMakesItAnotherFileChangesTheId() throws {
        let base = ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(), sha256: "ab")
        #expect(base != ManifestID.derive(profile: "q", path: RelativePath("a.txt"), status: try status(), sha256: "ab"))
        #expect(base != ManifestID.derive(profile: "p", path: RelativePath("b.txt"), status: try status(), sha256: "ab"))
        #expect(base != ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(inode: 8), sha256: "ab"))
        #expect(base != ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(mtime: 3), sha256: "ab"))
        let unhashed = ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(), sha256: nil)
        #expect(unhashed != ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(ctime: 3), sha256: nil),
                "unhashed, a rewrite that kept size and mtime is told by its ctime")
        #expect(base != ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(), sha256: "cd"))
        #expect(base != ManifestID.derive(profile: "p", path: RelativePath("a.txt"), status: try status(), sha256: nil))
    }
}
