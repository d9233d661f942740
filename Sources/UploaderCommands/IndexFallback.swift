import UploaderSupport
import UploaderConfig
import UploaderDaemon

/// `status` and `enqueue` for a producer, who may not read the config (it names the secrets): when
/// reading it is refused (EACCES), the profile index `run` publishes stands in for it —
/// `$UPLOADER_INDEX`, else /var/lib/uploader/profiles.json — and one line on stderr says so.
enum IndexFallback {
    static func load(_ config: String?, _ environment: [String: String], errors logger: Logger) -> LoadedConfiguration? {
        let path = ConfigLocation.resolve(config, environment: environment)
        guard let refusal = refusal(path) else { return UploaderCLI.load(config, environment, secrets: .skip, errors: logger) }
        let indexPath = environment["UPLOADER_INDEX"].flatMap { $0.isEmpty ? nil : $0 } ?? ProfileIndex.defaultPath
        switch ProfileIndex.read(indexPath) {
        case .success(let index):
            Daemon.printError("cannot read config \(path) (\(refusal)); using the profile index \(indexPath)")
            return LoadedConfiguration(configuration: index.configuration, warnings: [])
        case .failure(let failure):
            Daemon.printError("cannot read config \(path) (\(refusal)) nor the profile index \(indexPath) (\(failure.reason)); "
                + "run as a user who may read the config, or let the daemon publish the index ([uploader] index = \(ProfileIndex.defaultPath))")
            return nil
        }
    }

    /// The reason reading `path` is refused for lack of permission; nil when it is not (readable, or another failure).
    private static func refusal(_ path: String) -> String? {
        guard !path.utf8.contains(0) else { return nil }
        do {
            try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .noControllingTerminal]).close()
            return nil
        } catch let error as SystemError where error.code == .permissionDenied {
            return error.reason
        } catch {
            return nil  // another failure: the config's own load says what it is
        }
    }
}
