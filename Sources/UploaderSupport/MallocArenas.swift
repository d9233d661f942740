import CSysShims

/// How many malloc arenas glibc may make: by default eight per core, one for each thread that
/// meets contention. The daemon's worker threads mostly wait on the network and the disk; with
/// an arena each they kept one another's freed memory apart (about 5 MiB more peak RSS with a
/// 100,000-file backlog, bench/RESULTS.md), for no speed the bench could see.
package enum MallocArenas {
    /// Caps the arenas at `count`, unless `MALLOC_ARENA_MAX` in `environment` already says.
    package static func limit(to count: Int32, environment: [String: String]) {
        guard environment["MALLOC_ARENA_MAX"] == nil else { return }
        _ = uploader_malloc_arena_max(count)
    }
}
