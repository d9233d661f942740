import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderSpool

/// A kernel that does not tell the boot id (a container masking `/proc`, say) leaves the daemon
/// unable to tell a record hashed in an earlier boot from one of this boot: it says so at start,
/// once, and still delivers what is queued.
///
/// The run is in a mount namespace of its own (`unshare --mount`) where `/dev/null` covers the
/// kernel's boot id file; nothing outside that namespace changes.
@Suite struct UnreadableBootIDTests {
    private let warning = "cannot read the boot id (\(BootID.path)): a file's hash is not checked again after a reboot"

    @Test func aRunWithoutABootIDWarnsOnceAndStillDeliversTheQueue() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("in/{path}"))
        let path = try fx.drop("a.bin", Data(repeating: 3, count: 4096))
        let hash = try sha256(ofFile: path)

        let result = try runWithoutBootID(fx, ["run", "--once", "--config", fx.config])

        #expect(result.exitCode == 0, "\(result)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains(warning) }
        #expect(warnings.count == 1, "\(result.stderr)")
        #expect(try sha256(ofFile: sink.file("in/a.bin")) == hash, "bytes on the server")
        #expect(try fx.manifest("a.bin", in: fx.sent).state == .sent)
    }

    @Test func aRunThatReadsTheBootIDSaysNothingOfIt() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("in/{path}"))
        _ = try fx.drop("a.bin", Data(repeating: 3, count: 4096))

        let result = try fx.runOnce()

        #expect(result.exitCode == 0, "\(result)")
        #expect(!result.stderr.contains("boot id"), "\(result.stderr)")
        #expect(try fx.manifest("a.bin", in: fx.sent).state == .sent)
    }

    /// Runs `uploader ARGS` with the boot id file covered by `/dev/null` (read: empty).
    private func runWithoutBootID(_ fx: SpoolFixture, _ arguments: [String]) throws -> ProcessResult {
        guard let unshare = ProcessRunner.which("unshare") else {
            throw HarnessError("unshare (util-linux) is not installed: run scripts/install-deps.sh")
        }
        let script = #"mount --bind /dev/null "$0" && exec "$@""#
        return try ProcessRunner.run(
            [unshare, "--mount", "--propagation", "private", "sh", "-c", script, BootID.path, fx.binary.path] + arguments,
            environment: fx.environment, timeout: 60)
    }
}
