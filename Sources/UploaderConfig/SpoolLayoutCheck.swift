import UploaderSupport

/// Checks the profiles' directories against each other and the filesystem: moves are renames,
/// so each profile's `sent/` and `retry/` must share the outbox's filesystem, and no two
/// profiles may share a spool or an outbox. Looks only; never creates a directory.
enum SpoolLayoutCheck {
    /// - Parameter sections: the profiles' sections, to report at the `sent =`/`retry =` line when there is one.
    static func check(_ profiles: [Profile], sections: [IniSection], diagnostics: inout ConfigDiagnostics) {
        var roots: [String: Profile] = [:]
        var outboxes: [String: Profile] = [:]
        var sectionsByLine: [Int: IniSection] = [:]
        for section in sections { sectionsByLine[section.line] = section }
        for profile in profiles {
            let paths = profile.spool
            if let other = roots[paths.root] {
                diagnostics.error(profile.line, "[outbox \(profile.name)] uses the same spool as [outbox \(other.name)] (line \(other.line)): \(paths.root)")
            }
            roots[paths.root] = roots[paths.root] ?? profile
            if let other = outboxes[paths.outbox], other.spool.root != paths.root {
                diagnostics.error(profile.line, "[outbox \(profile.name)] uses the same outbox as [outbox \(other.name)] (line \(other.line)): \(paths.outbox)")
            }
            outboxes[paths.outbox] = outboxes[paths.outbox] ?? profile
            let section = sectionsByLine[profile.line]
            for (role, dir) in [("sent", paths.sent), ("retry", paths.retry)] {
                let line = section?.entries.first { $0.key == role }?.line ?? profile.line
                if dir == paths.outbox || dir.hasPrefix(paths.outbox + "/") {
                    diagnostics.error(line, "\(role) directory \(dir) of [outbox \(profile.name)] must not be the outbox or inside it")
                    continue
                }
                guard let outboxDevice = ConfigFiles.filesystem(of: paths.outbox),
                      let device = ConfigFiles.filesystem(of: dir), device != outboxDevice else { continue }
                diagnostics.error(line, "\(role) directory \(dir) of [outbox \(profile.name)] is on a different filesystem than its outbox \(paths.outbox); files are moved by rename, so they must share one")
            }
            if paths.sent == paths.retry {
                diagnostics.error(profile.line, "sent and retry of [outbox \(profile.name)] are the same directory \(paths.sent)")
            }
        }
    }
}
