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

/// Issue #6: a manifest in the outbox may be forged by whoever can write there. Its
/// `stored_as` never makes recovery move a file out of the spool, or fetch one into it.
final class ForgedManifestTests: XCTestCase {
    private func forged(_ fx: SpoolFixture, for name: String, state: Manifest.State, storedAs: String) throws {
        var manifest = Manifest(id: UUID().uuidString.lowercased(), profile: fx.profile, path: RelativePath(name), size: 6,
                                mtime: Timestamp.format(Date()), sha256: nil, contentType: "text/plain",
                                state: state, createdAt: Timestamp.format(Date()))
        manifest.storedAs = storedAs
        try Data(manifest.encodedLine()).write(to: URL(fileURLWithPath: fx.outbox + "/" + name + ".manifest.json"))
    }

    func testAStoredAsClimbingOutOfSentNeverMovesTheFileOutOfTheSpool() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"))
        try fx.drop("a.txt", Data("a file".utf8))
        try forged(fx, for: "a.txt", state: .sent, storedAs: "sent/../../escaped.txt")
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fx.tmp.path("escaped.txt")), "moved out of the spool")
        XCTAssertEqual(fx.names(in: fx.sent), ["a.txt", "a.txt.manifest.json"])
        XCTAssertEqual(try fx.manifest("a.txt", in: fx.sent).storedAs, "sent/a.txt")
    }

    func testAnOrphanManifestPointingOutsideNeverBringsThatFileIntoTheOutbox() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("{path}"))
        let secret = try fx.tmp.write("elsewhere/secret.txt", "SECRET")
        try forged(fx, for: "b.txt", state: .queued, storedAs: "sent/../../elsewhere/secret.txt")
        try forged(fx, for: "c.txt", state: .queued, storedAs: "retry/../../elsewhere/secret.txt")
        let result = try fx.runOnce()
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(try String(contentsOfFile: secret, encoding: .utf8), "SECRET", "left where it was")
        XCTAssertEqual(sink.accessLog().count, 0, "nothing uploaded")
        XCTAssertEqual(fx.names(in: fx.outbox), [])
        XCTAssertEqual(fx.names(in: fx.spool + "/.quarantine").count, 2, "the forged manifests are set aside")
    }
}
