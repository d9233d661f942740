import Testing
@testable import UploaderSimulation
import UploaderTransfer

/// Seeds replayed whole — those at which the simulator itself was wrong, and one that takes a
/// path worth keeping: each must end without a violation (and without the process stopping). What a seed generates follows the code, so each
/// is a guard for the path it took when it was written, not a proof for all time.
@Suite struct SimulatorSeedTests {
    @Test(arguments: [
        // The world waited for a dead process's workers, both asleep in the rate limiter.
        (500_547 as UInt64, "journalled"),
        // A producer deleted a name the daemon had moved an older file back under.
        (800_318, "noJournal"),
        // A retention pass weighed sent/ with a changed file that a claim then took back to the
        // outbox, and deleted by that weight.
        (603_971, "noJournal"),
        // A tus upload abandoned for changed content was ended (DELETE) under the old key before
        // the Retry-After its last PATCH was answered with: no attempt, not held to it.
        (6_005_483, "journalled"),
        // `uploader retry` rewrote a failed record, and a power cut before its fsync undid it: the
        // file stayed failed with its `on_failed` run recorded, and is not due it again.
        (6_009_617, "journalled"),
        // A file written to during its move into sent/ was on its way back to the outbox when its
        // producer removed the outbox name: the daemon's unlink of it in sent/ removed no delivery.
        (8_000_724, "noJournal"),
        // An S3 upload abandoned for changed content was aborted (a DELETE that reached the
        // server), then its new upload's first request never connected: no attempt was made.
        (50_015_160, "noJournal"),
        // A producer appended to a file, then truncated it back to the very bytes it had held:
        // another version by its mtime, sent under a new key with the same bytes.
        (50_018_979, "journalled"),
        // Start-up could not remove a leftover temporary manifest (EIO on its unlink), and the
        // running daemon's scans never looked in the temporary directory again.
        (20_261_284, "noJournal"),
        // Reading an S3, tus or SFTP body failed (EIO): the request had reached the server, as
        // libcurl's read callback fails once it is out, but the model did not count it.
        (110_000_384, "noJournal"),
        // With `digest = none`, a producer rewrote a file with as many bytes in the very instant of
        // its last write, after its upload and before its move: nothing could tell (the documented
        // limit), and sent/ holds bytes the server never had.
        (15_599, "journalled"),
        // A power cut took the record of a delivered upload; the next claim could not read the
        // file (EIO) and filed it as failed, unhashed; `uploader retry` brought it back beside a
        // new file under its name, and it was sent again under another key.
        (5_214, "noJournal"),
    ])
    func replaysWithoutViolation(seed: UInt64, model: String) {
        let result = SimulationRunner.replay(seed: seed, model: model)
        #expect(!result.violated, "\(result.text.prefix(400))")
    }

    /// SFTP has no `Retry-After`: the model once answered an SFTP request with a wait, which
    /// production cannot hear, and held the file to it: a first rename answered 503 with a wait,
    /// the attempt ended on a later failure, and the file came back on its own backoff.
    @Test(arguments: [(90_005_352 as UInt64, "journalled"), (90_005_451, "journalled"), (90_006_043, "noJournal")])
    func anSFTPRefusalSetsNoDueTime(seed: UInt64, model: String) {
        let result = SimulationRunner.replay(seed: seed, model: model, destination: "sftp")
        #expect(!result.violated, "\(result.text.prefix(400))")
    }

    /// A redirect to another host reaches the daemon as the transport leaves it (it follows only
    /// one to the same scheme and host): the file fails at once, with the redirect in its error.
    @Test func aRedirectNotFollowedFailsTheFile() {
        let result = SimulationRunner.replay(seed: 31_000_362, model: "journalled")
        #expect(!result.violated, "\(result.text.prefix(400))")
        let failedOnRedirect = result.text.split(separator: "\n").contains { line in
            line.contains("permanent(reason: \"HTTP 30") && line.contains("(redirect to http://127.0.0.2:8080/moved not followed)\")")
        }
        #expect(failedOnRedirect)
    }

    /// SIGHUP after an edit of the settings: the runner stops, draining for its grace, and one
    /// with the new settings starts in the same process, taking over its hook runner (as
    /// `ConfigReloader` does); the hooks go on running after each restart, and nothing breaks.
    @Test func aReloadWithEditedSettingsStartsANewRunnerInTheSameProcess() {
        let sim = Simulation(options: Simulation.Options(model: .noJournal), choices: ChoiceSource(seed: 32_000_028))
        let first = sim.config.text
        let firstConcurrency = sim.profile.concurrency
        #expect(sim.run() == nil)
        let restarts = sim.trace.indices.filter { sim.trace[$0] == "runner restarted with the edited config" }
        #expect(restarts.count >= 2)
        #expect(sim.config.text != first)
        #expect(sim.process.configured.concurrency == sim.profile.concurrency)
        // The runner started after the last edit has the edited concurrency's threads: one per
        // slot and four more.
        #expect(sim.profile.concurrency != firstConcurrency)
        #expect(sim.process.scheduler.workerCount == sim.profile.concurrency + 4)
        let hooksAfter = sim.trace[(restarts.last ?? 0)...].filter { $0.hasPrefix("hook on_") }
        #expect(!hooksAfter.isEmpty)
    }
}
