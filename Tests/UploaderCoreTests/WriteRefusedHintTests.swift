@preconcurrency import Glibc
import Testing
@testable import UploaderSupport

/// The hint of a refused spool names what fixes it under the packaged unit: `ReadWritePaths=`
/// where `ProtectSystem=strict` made it read-only, `BindPaths=` under /home, which
/// `ProtectHome=tmpfs` hides.
@Suite struct WriteRefusedHintTests {
    @Test func aSpoolUnderHomeIsShownByBindPathsNotReadWritePaths() throws {
        let refused = try #require(WriteRefused(SystemError("mkdir", path: "/home/alice", code: .readOnlyFileSystem), directory: "/home/alice/drop/spool"))
        #expect(refused.description == "mkdir /home/alice: Read-only file system (errno 30); under systemd create /home/alice/drop/spool "
            + "and add \"BindPaths=/home/alice/drop/spool\" to the unit in a drop-in (its ProtectHome=tmpfs shows nothing under /home, "
            + "/root and /run/user but what BindPaths= names)")
    }

    @Test func aSpoolElsewhereIsMadeWritableByReadWritePaths() throws {
        let refused = try #require(WriteRefused(SystemError("mkdir", path: "/srv/photos", code: .readOnlyFileSystem), directory: "/srv/photos"))
        #expect(refused.description.hasSuffix("under systemd create /srv/photos and add \"ReadWritePaths=/srv/photos\" to the unit"))
    }
}
