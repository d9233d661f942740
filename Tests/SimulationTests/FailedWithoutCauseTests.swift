import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport

/// `everyFileSettles` accepts `failed` only with a cause DESIGN §5 gives: attempts spent, a
/// permanent answer, or a local error — a file its claim could not read fails with no attempt
/// at all (journalled seed 606088: a read refused with EIO).
@Suite struct FailedWithoutCauseTests {
    static func failed(lastError: String) -> Manifest {
        var m = Manifest(id: "i", profile: "p", path: RelativePath("a"), size: 5, mtime: "2026-01-01T00:00:00.000Z",
                         sha256: nil, contentType: "text/plain", state: .failed, createdAt: "2026-01-01T00:00:00.000Z")
        m.lastError = lastError
        return m
    }

    @Test func aFileThatCouldNotBeReadMayFailWithoutAnAttempt() {
        #expect(Simulation.failedWithoutCause(Self.failed(lastError: "cannot read file: read /spool/outbox/a: Input/output error (errno 5)"),
                                              maxAttempts: 5) == nil)
    }

    @Test func anyOtherFailureWithoutAnAttemptIsNotAccepted() {
        #expect(Simulation.failedWithoutCause(Self.failed(lastError: "HTTP 503"), maxAttempts: 5) != nil)
    }
}
