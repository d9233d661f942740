import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// One due hook carried out, in the order `HookLedger` explains: the manifest read again (a hook
/// whose run is recorded as finished never runs again; nor does one whose move into sent/ or
/// retry/ is not finished, until the claim that finishes it), the run's start recorded, the command
/// run, its end and exit status recorded durably, then (with `after_send = delete`) the file and
/// its manifest removed from sent/, and only then the marker dropped. A crash anywhere before
/// that leaves the marker, and start-up runs what is left: the hook again, or only the deletion.
struct DueHookRun: Sendable {
    let profile: Profile
    let spool: Spool
    let hooks: HookRunner
    /// The daemon's environment, passed on to hooks.
    let environment: [String: String]
    let logger: Logger
    var clock: any Clock { hooks.clock }
    var ledger: HookLedger { HookLedger(spool: spool) }

    func run(_ marker: HookLedger.Marker) {
        let file = marker.path.displayed(in: spool.directory(marker.area))
        let context = [("profile", profile.name), ("hook", marker.hook), ("file", file)]
        var manifest: Manifest
        switch spool.readManifest(for: marker.path, in: marker.area) {
        case .success(let read):
            manifest = read
        case .failure(.missing):
            // A move between its marker and its manifest's link, or a marker left behind: start-up sorts it out.
            logger.log(.debug, "hook due, but its manifest is not in place (yet); not run now", pairs: context)
            return
        case .failure(let problem):
            logger.log(.warn, "hook due, but its manifest cannot be read; not run now", pairs: context + [("error", "\(problem)")])
            return
        }
        if moveUnfinished(manifest, marker) {
            // Its run would rewrite the manifest the move is still to link (another file under that
            // name: the move could never finish). The claim that finishes the move queues the hook.
            logger.log(.debug, "hook due, but the move that filed the file is not finished; not run now", pairs: context)
            return
        }
        if HookLedger.isDue(marker.hook, in: manifest) {
            if let command = command(marker.hook) {
                guard runRecorded(command, marker, &manifest, context) else { return }
            } else {
                logger.log(.info, "hook due, but no longer configured; not run", pairs: context)
            }
        }
        if profile.afterSend == .delete && marker.area == .sent && manifest.state == .sent {
            do {
                try FileLifecycle(spool: spool, logger: logger, afterSend: profile.afterSend).removeDelivered(marker.path, sent: manifest)
            } catch {
                // The marker stays: the next start tries again.
                return logger.log(.warn, "cannot remove a delivered file (after_send = delete); it stays in sent/",
                                  pairs: context + [("error", "\(error)")])
            }
        }
        do {
            try ledger.remove(marker)
        } catch {
            // The run is recorded: a marker left points to a finished run, and the next start drops it.
            logger.log(.warn, "cannot remove the hook's marker; the next start drops it", pairs: context + [("error", "\(error)")])
        }
    }

    /// Runs the hook and records its run; true once its end is recorded (or the file has left),
    /// false when it stays due (its end could not be written, or the daemon killed it at exit).
    private func runRecorded(_ command: String, _ marker: HookLedger.Marker, _ manifest: inout Manifest,
                             _ context: [(String, String)]) -> Bool {
        manifest.recordHookStart(marker.hook, at: clock.now)
        // Run even if this cannot be written: at least once is the promise.
        _ = record(manifest, marker, durable: false, context)
        let started = clock.monotonic
        var hook = process(command, marker, manifest)
        let output = HookOutput()
        hook.output = output
        let outcome = hooks.run(hook)
        if case .signaled = outcome, hooks.isExiting { return false }
        manifest.recordHookEnd(marker.hook, at: clock.now, exitStatus: outcome.exitStatus)
        let recorded = record(manifest, marker, durable: true, context)
        var fields = context + [("exit_status", String(outcome.exitStatus)),
                                ("duration_s", LogNumbers.fixed(clock.monotonic - started, places: 3))]
        // What the hook printed is a field of this line (one JSON object under log_format = json).
        if let text = output.text { fields.append(("output", text)) }
        if output.droppedBytes > 0 { fields.append(("output_dropped_bytes", String(output.droppedBytes))) }
        if outcome == .exited(0) {
            // Shown at info when the hook said something: its output used to reach the log whatever the level.
            logger.log(output.text == nil ? .debug : .info, "hook finished", pairs: fields)
        } else {
            logger.log(.warn, "hook failed; the file's state is unchanged", pairs: fields + [("outcome", outcome.description)])
        }
        return recorded
    }

    /// The move that filed this file is not finished (`SpoolMoves.moveUnfinished`).
    private func moveUnfinished(_ manifest: Manifest, _ marker: HookLedger.Marker) -> Bool {
        FileLifecycle(spool: spool, logger: logger).moveUnfinished(filedAt: marker.path, in: marker.area, manifest: manifest)
    }

    private func command(_ hook: String) -> String? {
        switch hook {
        case "on_sent": return profile.onSent
        case "on_failed": return profile.onFailed
        default: return nil
        }
    }

    /// Writes the manifest with its run recorded; `durable` for the end (the marker goes next).
    /// Not once the file has left (`uploader retry` took a failed file back to the outbox while its
    /// hook ran): a record written then would be a manifest with no file.
    /// In retry/ the look and the write hold the retry-move lock (shared), so `uploader retry`
    /// cannot take the file away between them.
    private func record(_ manifest: Manifest, _ marker: HookLedger.Marker, durable: Bool, _ context: [(String, String)]) -> Bool {
        do {
            let written = try RetryMoveLock(spool: spool).around(.shared, when: marker.area == .retry) { () throws -> Bool in
                guard spool.fs.exists(marker.path, in: spool.directory(marker.area)) else { return false }
                try spool.writeManifest(manifest, for: marker.path, in: marker.area, syncDirectory: durable)
                return true
            }
            if !written { logger.log(.info, "the file left while its hook ran; the run is not recorded", pairs: context) }
            return true
        } catch {
            logger.log(.warn, "cannot record the hook's run in the manifest; it stays due", pairs: context + [("error", "\(error)")])
            return false
        }
    }

    /// `CMD FILE_PATH MANIFEST_PATH`, in the spool, with the daemon's environment and UPLOADER_*.
    private func process(_ command: String, _ marker: HookLedger.Marker, _ manifest: Manifest) -> HookProcess {
        let directory = Array(spool.directory(marker.area).utf8) + [UInt8(ascii: "/")]
        let file = directory + marker.path.bytes
        let manifestPath = directory + Spool.manifestName(for: marker.path).bytes
        var inherited = environment
        let own = ["UPLOADER_PROFILE", "UPLOADER_ID", "UPLOADER_FILE", "UPLOADER_MANIFEST", "UPLOADER_STATE", "UPLOADER_HTTP_STATUS"]
        for name in own + ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { inherited[name] = nil }
        var variables = inherited.map { Array("\($0.key)=\($0.value)".utf8) }
        variables.append(Array("UPLOADER_PROFILE=\(profile.name)".utf8))
        variables.append(Array("UPLOADER_ID=\(manifest.id)".utf8))
        variables.append(Array("UPLOADER_FILE=".utf8) + file)
        variables.append(Array("UPLOADER_MANIFEST=".utf8) + manifestPath)
        variables.append(Array("UPLOADER_STATE=\(manifest.state.rawValue)".utf8))
        variables.append(Array("UPLOADER_HTTP_STATUS=\(manifest.remote?.httpStatus.map(String.init) ?? "")".utf8))
        return HookProcess(command: command, arguments: [file, manifestPath], environment: variables,
                           workingDirectory: spool.paths.root, timeout: profile.hookTimeout)
    }
}
