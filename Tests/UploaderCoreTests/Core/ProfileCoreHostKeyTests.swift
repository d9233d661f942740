import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderCore

/// An SFTP server's host key that does not match (DESIGN §14): one file is enough to pause the
/// profile as `host_key`, none fails, the trials go as for refused credentials, and a delivery
/// resumes everything.
@Suite("A host key that does not match pauses the profile at once, never fails a file")
struct ProfileCoreHostKeyTests {
    static let mismatch = AttemptOutcome.hostKeyMismatch(reason: "host key of [h]:2222 does not match: the server offers SHA256:a, host_key_sha256 is SHA256:b")
    typealias Credentials = ProfileCoreCredentialsTests

    @Test func oneMismatchPausesAsHostKeyWithOneErrorLineAndFailsNothing() {
        var (p, inFlight) = Credentials.running(6)
        let effects = Credentials.answer(&p, inFlight[0], Self.mismatch)
        #expect(p.state.pausedReason == .hostKey)
        #expect(effects.logged("server's host key does not match; profile paused, files stay queued").count == 1)
        #expect(Credentials.started(effects).isEmpty, "nothing new starts")
        #expect(p.state.totals.failed == 0 && p.state.totals.retried == 0)
        #expect(p.state.credentials.lastRefusal?.contains("the server offers SHA256:a") == true)
    }

    @Test func aChangedKnownHostsTriesAFileAndItsDeliveryResumes() {
        var (p, inFlight) = Credentials.running(4)
        Credentials.answer(&p, inFlight[0], Self.mismatch)
        for path in p.state.files.slots.sorted() { Credentials.answer(&p, path, Self.mismatch) }
        #expect(p.state.pausedReason == .hostKey)
        let trial = Credentials.started(p.send(.credentialsChanged))
        #expect(trial.count == 1)
        let resumed = Credentials.answer(&p, trial[0], .delivered(status: 0))
        #expect(p.state.pausedReason == nil)
        #expect(resumed.logged("destination accepts our credentials again; resuming").count == 1)
        #expect(Credentials.started(resumed).count == 2, "every slot busy again")
    }
}
