@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer

/// The rename that publishes a file on an SFTP or FTP server (DESIGN §14), against a scripted
/// session: only a refusal of the name is looked into; any other failure ends the attempt there.
@Suite struct RemoteFilePublishTests {
    /// A session whose renames answer as scripted, that holds the temporary file whole and
    /// records every operation.
    final class ScriptedSession: RemoteFileSession, @unchecked Sendable {
        var renames: [Result<Void, RemoteFileFailure>]
        var finalHeld: Int64?
        let size: Int64
        private(set) var calls: [String] = []

        init(size: Int64, renames: [Result<Void, RemoteFileFailure>], finalHeld: Int64?) {
            self.size = size
            self.renames = renames
            self.finalHeld = finalHeld
        }

        func size(of path: String, _ controls: RemoteFileControls) -> Result<Int64?, RemoteFileFailure> {
            calls.append("size \(path)")
            return .success(path.hasSuffix(".part") ? size : finalHeld)
        }

        func upload(_ source: UploadSource, to path: String, append: Bool, _ controls: RemoteFileControls) -> Result<Int64, RemoteFileFailure> {
            calls.append("upload \(path)")
            return .success(size)
        }

        func rename(_ from: String, to: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
            calls.append("rename \(from) \(to)")
            return renames.isEmpty ? .success(()) : renames.removeFirst()
        }

        func delete(_ path: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
            calls.append("delete \(path)")
            if path == "/in/a.bin" { finalHeld = nil }
            return .success(())
        }
    }

    private func publish(_ session: ScriptedSession) throws -> UploadOutcome {
        let config = try #require(ConfigFixture.config("""
            [outbox p]
            spool = /s
            url = sftp://u@127.0.0.1/in/{path}
            password = pw
            host_key_sha256 = SHA256:\(String(repeating: "A", count: 43))
            """))
        guard case .remoteFile(let target) = config.profiles[0].destination else {
            Issue.record("not a remote file")
            return (.failure(.other("no target")), .permanent(reason: "no target"))
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("publish-\(UUID().uuidString)").path
        try Data(repeating: 7, count: Int(session.size)).write(to: URL(fileURLWithPath: file))
        defer { unlink(file) }
        let fd = open(file, O_RDONLY)
        defer { close(fd) }
        let source = UploadSource(fd: fd, status: try FileSystem.status(fd: fd, path: file), path: RelativePath("a.bin"), id: "id",
                                  sha256: nil, contentType: "application/octet-stream")
        let values = TemplateValues(path: RelativePath("a.bin"), id: "id", sha256: "", size: session.size, date: Date(), profile: "p",
                                    hostname: "h")
        let request = UploadRequest(url: "sftp://u@127.0.0.1/in/a.bin", method: .put, headers: [], body: RequestBody([]),
                                    connectTimeout: 1, stallTimeout: 1, timeout: 1, tls: TLSOptions(), proxy: nil, rateLimiter: nil,
                                    cancellation: CancellationFlag(), progress: nil, sourcePath: nil)
        var run = RemoteFilePublish(target: target, session: session, source: source, names: RemoteFileNames(target: target, values: values),
                                    controls: RemoteFileControls(request), saved: nil, logger: Logger(level: .error, sink: { _ in }),
                                    profile: "p", record: { _ in })
        return run.run()
    }

    /// The rename's connection broke (the server may have renamed): the attempt ends, to be
    /// tried again, and the final name, which may be ours now, is not deleted.
    @Test func aRenameCutShortEndsTheAttemptWithoutTouchingTheFinalName() throws {
        let session = ScriptedSession(size: 10, renames: [.failure(RemoteFileFailure(.broken, "Connection reset by peer"))], finalHeld: 10)
        let outcome = try publish(session)
        #expect(outcome.disposition == .retryLater(reason: "Connection reset by peer", retryAfter: nil))
        #expect(!session.calls.contains("delete /in/a.bin"), "\(session.calls)")
        #expect(session.calls.last == "rename /in/.a.bin.part /in/a.bin", "\(session.calls)")
    }

    /// OpenSSH refuses to rename onto an existing name: with `exists = overwrite` the old file
    /// goes, then the rename is made again and the file is delivered.
    @Test func aRefusedNameIsReplacedWhenOverwriting() throws {
        let session = ScriptedSession(size: 10, renames: [.failure(RemoteFileFailure(.pathRefused, "SFTP: failure"))], finalHeld: 3)
        let outcome = try publish(session)
        guard case .sent = outcome.disposition else { Issue.record("not sent: \(outcome.disposition)"); return }
        #expect(session.calls.suffix(3) == ["size /in/a.bin", "delete /in/a.bin", "rename /in/.a.bin.part /in/a.bin"], "\(session.calls)")
    }
}
