import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch

/// Hooks after a file is filed away.
extension ProfileExecutor {
    /// Runs `on_sent` (state sent) or `on_failed` (state failed) for a file just moved to
    /// `target` in `area`, off the worker's thread.
    func afterFiling(_ target: RelativePath, in area: Spool.Area, manifest: Manifest) {
        let hook: (key: String, command: String)
        switch manifest.state {
        case .sent:
            guard let command = profile.onSent else { return }
            hook = ("on_sent", command)
        case .failed:
            guard let command = profile.onFailed else { return }
            hook = ("on_failed", command)
        case .queued, .uploading, .retry:
            return
        }
        let directory = Array(spool.directory(area).utf8) + [UInt8(ascii: "/")]
        let file = directory + target.bytes
        let manifestPath = directory + Spool.manifestName(for: target).bytes
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
        let process = HookProcess(command: hook.command, arguments: [file, manifestPath], environment: variables,
                                  workingDirectory: spool.paths.root, timeout: profile.hookTimeout)
        hooks.enqueue(process, logger: logger, profile: profile.name, hook: hook.key, file: target.displayed(in: spool.directory(area)))
    }
}
