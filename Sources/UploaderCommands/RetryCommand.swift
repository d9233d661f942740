import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon

/// `uploader retry`: moves files from retry/ back to the outbox for an immediate attempt.
///
/// Safe while a daemon runs: each file's move back holds `<spool>/.retry.lock` exclusive
/// (`RetryMoveLock`), so it waits for the daemon's own moves into and out of retry/ (which hold
/// it shared) and they wait for it; the daemon sees the file arrive in its outbox like any other.
enum RetryCommand {
    static func run(_ config: Configuration, profiles: [String], all: Bool, files: [String]) -> Int32 {
        let selected = profiles.isEmpty ? config.profiles : config.profiles.filter { profiles.contains($0.name) }
        if let unknown = profiles.first(where: { name in !config.profiles.contains { $0.name == name } }) {
            Daemon.printError("no profile named \"\(unknown)\" in \(config.path)")
            return Daemon.ExitCode.usage
        }
        let logger = Logger(level: .error)
        var failures = 0
        var moved = 0
        /// Profiles whose lock file cannot be taken: said once, their other files left alone.
        var unlockable: Set<String> = []
        func moveBack(_ path: RelativePath, _ profile: Profile) {
            guard !unlockable.contains(profile.name) else { return }
            let lifecycle = FileLifecycle(spool: Spool(paths: profile.spool), logger: logger)
            do {
                let back = try lifecycle.moveBack(fromRetry: path, resetBackoff: true, locked: .exclusive)
                print("\(profile.name): \(path.logSafe) → outbox/\(back.logSafe)")
                moved += 1
            } catch let refused as RetryMoveLock.Unavailable {
                Daemon.printError("\(profile.name): \(refused); nothing moved back")
                unlockable.insert(profile.name)
                failures += 1
            } catch {
                Daemon.printError("\(profile.name): cannot move \(path.logSafe) back to the outbox: \(error)")
                failures += 1
            }
        }
        if all {
            for profile in selected {
                for path in retryFiles(Spool(paths: profile.spool)) { moveBack(path, profile) }
            }
        } else {
            for file in files {
                guard let (profile, path) = locate(file, in: selected) else {
                    Daemon.printError("\(file): not found in the retry/ of \(selected.map(\.name).joined(separator: ", "))")
                    failures += 1
                    continue
                }
                moveBack(path, profile)
            }
        }
        if moved == 0 && failures == 0 { print("nothing in retry/") }
        return failures == 0 ? 0 : 1
    }

    /// Every file in a retry/ that has its manifest; a directory that cannot be listed is reported on stderr.
    static func retryFiles(_ spool: Spool) -> [RelativePath] {
        var out: [RelativePath] = []
        DirectoryWalker(root: spool.directory(.retry), onError: DirectoryWalker.printingOnce(Daemon.printError)).walk { entry in
            if entry.kind == .directory { return true }
            if Spool.isManifestName(entry.name) { out.append(Spool.fileName(forManifest: entry.path)) }
            return false
        }
        return out.sorted()
    }

    /// A FILE argument: a path inside some profile's retry/, or a name relative to it.
    static func locate(_ file: String, in profiles: [Profile]) -> (Profile, RelativePath)? {
        let absolute = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
        let standardized = (absolute as NSString).standardizingPath
        for profile in profiles {
            let retryDir = (profile.spool.retry as NSString).standardizingPath
            if standardized.hasPrefix(retryDir + "/") {
                let rel = RelativePath(String(standardized.dropFirst(retryDir.count + 1)))
                return (profile, rel)
            }
        }
        for profile in profiles {
            let rel = RelativePath(file)
            if FileSystem.exists(Spool.manifestName(for: rel), in: profile.spool.retry) { return (profile, rel) }
        }
        return nil
    }
}
