import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig
import UploaderWatch

/// Watches the files credentials are read from (`token_file`, `password_file`,
/// `secret_access_key_file`, `session_token_file`), so a rotated secret takes effect at once
/// (DESIGN §12 "Rejected"): the daemon then reloads as on SIGHUP, which reads the secrets again.
///
/// It watches each file's directory, not the file: secrets are usually replaced by a rename (an
/// editor, `install`, a Kubernetes secret's `..data` symlink swap), which a watch on the old
/// file's inode would miss. Any event in such a directory compares each secret file's identity
/// (what `stat` finds behind any symlink: device, inode, size, times) with the one seen before;
/// only a difference counts, so other files coming and going there cost a `stat` and no reload.
package final class CredentialsWatch: Sendable {
    /// What a credentials file looked like when last looked at.
    private enum Identity: Equatable {
        case file(FileSystem.Status)
        /// Missing or unreadable; the reload that follows a change says so in its own words.
        case unusable(String)

        init(_ path: String) {
            do { self = .file(try FileSystem.statusFollowingLinks(path: path)) } catch { self = .unusable("\(error)") }
        }
    }

    private struct Watched {
        var registrations: [Int] = []
        var seen: [String: Identity] = [:]
    }

    private let watcher: InotifyWatcher
    private let logger: Logger
    private let changed: @Sendable (String) -> Void
    private let watched = Mutex(Watched())

    /// `changed` is called (on the watcher's thread) with the path of a credentials file that changed.
    package init(watcher: InotifyWatcher, logger: Logger, changed: @escaping @Sendable (String) -> Void) {
        self.watcher = watcher
        self.logger = logger
        self.changed = changed
    }

    /// Watches the credentials files of `profiles`, instead of those watched before (after a reload).
    package func watch(_ profiles: [Profile]) {
        let files = Set(profiles.flatMap(\.credentialFiles))
        let outboxes = profiles.map(\.spool.outbox)
        let byDirectory = Dictionary(grouping: files.sorted()) { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        let old = watched.withLock { w in
            defer { w = Watched(seen: Dictionary(uniqueKeysWithValues: files.map { ($0, Identity($0)) })) }
            return w.registrations
        }
        for id in old { watcher.remove(id) }
        var registrations: [Int] = []
        for (directory, names) in byDirectory.sorted(by: { $0.key < $1.key }) {
            // One watch per directory; the watcher keys watches by path, so an outbox's own is never shared.
            if outboxes.contains(where: { directory == $0 || directory.hasPrefix($0 + "/") }) {
                logger.warn("credentials file inside an outbox; a change to it is seen on SIGHUP only", ["dir": directory])
                continue
            }
            registrations.append(watcher.add(root: directory, recursive: false, recreate: false) { [weak self] _ in
                self?.look(at: names)
            })
            logger.debug("watching credentials files", ["dir": directory, "files": String(names.count)])
        }
        watched.withLock { $0.registrations = registrations }
    }

    /// Stops watching (the daemon is stopping).
    package func stop() {
        for id in watched.withLock({ w in defer { w = Watched() }; return w.registrations }) { watcher.remove(id) }
    }

    /// Something happened in a watched directory: these files are looked at again.
    private func look(at files: [String]) {
        let now = files.map { ($0, Identity($0)) }
        let different = watched.withLock { w in
            now.filter { path, identity in
                defer { w.seen[path] = identity }
                return w.seen[path] != identity
            }.map(\.0)
        }
        for path in different {
            logger.info("credentials file changed", ["file": path])
            changed(path)
        }
    }
}
