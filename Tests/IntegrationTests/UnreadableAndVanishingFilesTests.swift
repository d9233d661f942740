@preconcurrency import Glibc
import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Issue #6: a file the daemon may not read fails cleanly into retry/, and a file that
/// disappears between detection and upload is dropped with one line; the daemon goes on.
final class UnreadableAndVanishingFilesTests: XCTestCase {
    /// The daemon runs as `nobody` (root reads every file, so the test would prove nothing as root).
    func testAnUnreadableFileFailsIntoRetryWithPermissionDeniedAndItsPathWhileOthersAreSent() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"))
        XCTAssertEqual(chmod(fx.tmp.path, 0o755), 0)
        let binary = fx.tmp.path("uploader")
        XCTAssertEqual(try ProcessRunner.run(["cp", fx.binary.path, binary]).exitCode, 0)
        try fx.drop("locked.bin", Data("nobody may read this".utf8))
        XCTAssertEqual(chmod(fx.outbox + "/locked.bin", 0), 0)
        let readable = Data("anyone may read this".utf8)
        try fx.drop("readable.bin", readable)
        XCTAssertEqual(try ProcessRunner.run(["chown", "-R", "nobody:nogroup", fx.spool]).exitCode, 0)

        let result = try ProcessRunner.run(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", binary, "run", "--once", "--config", fx.config],
            timeout: 60)
        XCTAssertEqual(result.exitCode, 1, "a file failed in this run: \(result)")
        XCTAssertEqual(fx.names(in: fx.retry), ["locked.bin", "locked.bin.manifest.json"])
        let manifest = try fx.manifest("locked.bin", in: fx.retry)
        XCTAssertEqual(manifest.state, .failed)
        let lastError = manifest.lastError ?? ""
        XCTAssertTrue(lastError.lowercased().contains("permission denied"), lastError)
        XCTAssertTrue(lastError.contains(fx.outbox + "/locked.bin"), "names the file: \(lastError)")
        XCTAssertEqual(manifest.storedAs, "retry/locked.bin")
        XCTAssertEqual(HostileFiles.lines(result.stderr, "WARN failed; moved to retry/", "file=locked.bin").count, 1, result.stderr)
        // It really ran unprivileged: what it wrote belongs to nobody.
        var st = stat()
        XCTAssertEqual(stat(fx.retry + "/locked.bin.manifest.json", &st), 0)
        XCTAssertEqual(st.st_uid, getpwnam("nobody").pointee.pw_uid)
        // And the other file went through.
        XCTAssertEqual(fx.files(in: fx.sent), ["readable.bin"])
        XCTAssertEqual(try sha256(ofFile: sink.file("readable.bin")), sha256(of: readable))
        XCTAssertEqual(sink.accessLog().compactMap { $0["uri"] as? String }, ["/readable.bin"])
    }

    /// A queued manifest for `name`, as if the daemon had claimed it.
    private func claimed(_ fx: SpoolFixture, _ name: String, _ data: Data) throws -> Manifest {
        let path = try fx.drop(name, data)
        let status = try FileSystem.status(path: path)
        let manifest = Manifest(id: UUID().uuidString.lowercased(), profile: fx.profile, path: RelativePath(name), size: Int64(data.count),
                                mtime: status.mtimeText, sha256: sha256(of: data), contentType: "application/octet-stream",
                                state: .queued, createdAt: Timestamp.format(Date()))
        try Data(manifest.encodedLine()).write(to: URL(fileURLWithPath: path + ".manifest.json"))
        return manifest
    }

    /// The destination is down, so claimed files wait; meanwhile they are deleted or renamed away.
    func testFilesDeletedOrRenamedAwayBeforeTheirUploadAreDroppedWithOneLineAndTheirManifests() throws {
        let port = try FreePort.next()
        let fx = try SpoolFixture(url: "http://127.0.0.1:\(port)/{path}", extra: "concurrency = 1")
        _ = try claimed(fx, "gone.bin", Data("deleted".utf8))
        _ = try claimed(fx, "moved.bin", Data("moved out".utf8))
        let renamed = try claimed(fx, "renamed.bin", Data("renamed within".utf8))
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try waitUntil(timeout: 15, "the profile to go offline") {
            daemon.stderrText().contains("destination unreachable; profile paused")
        }
        XCTAssertEqual(unlink(fx.outbox + "/gone.bin"), 0)
        _ = try fx.tmp.mkdir("elsewhere")
        XCTAssertEqual(rename(fx.outbox + "/moved.bin", fx.tmp.path("elsewhere/moved.bin")), 0)
        XCTAssertEqual(rename(fx.outbox + "/renamed.bin", fx.outbox + "/renamed-later.bin"), 0)

        let sink = try NginxSink(port: port)
        try waitUntil(timeout: 40, "the renamed file in sent/") { fx.files(in: fx.sent) == ["renamed-later.bin"] }
        try fx.drop("zz-marker.txt", Data("marker".utf8))
        // The move's last step takes the manifest's outbox name: wait for the move's end, not its link.
        try waitUntil(timeout: 15, "the marker in sent/, its move finished") {
            fx.files(in: fx.sent) == ["renamed-later.bin", "zz-marker.txt"] && fx.names(in: fx.outbox) == []
        }

        let log = daemon.stderrText()
        for name in ["gone.bin", "moved.bin", "renamed.bin"] {
            let lines = HostileFiles.lines(log, "file vanished before upload; dropped from the queue").filter { $0.hasSuffix("file=\(name)") }
            XCTAssertEqual(lines.count, 1, "one line for \(name):\n\(log)")
        }
        XCTAssertEqual(fx.names(in: fx.outbox), [], "no manifest left behind")
        XCTAssertEqual(fx.names(in: fx.retry), [])
        XCTAssertEqual(fx.names(in: fx.spool + "/.quarantine"), [])
        XCTAssertEqual(sink.accessLog().compactMap { $0["uri"] as? String }.sorted(), ["/renamed-later.bin", "/zz-marker.txt"])
        XCTAssertNotEqual(try fx.manifest("renamed-later.bin", in: fx.sent).id, renamed.id, "a new name is a new claim")
        XCTAssertTrue(daemon.isRunning, "nothing crashed")
    }
}
