import UploaderSupport
import UploaderConfig

/// Which names are never uploaded: dotfiles, sidecar manifests, and the `ignore` globs.
package struct IgnoreRules: Sendable {
    package let patterns: [String]
    /// The patterns made once: every file of every scan is matched against them.
    private let compiled: [FileNamePattern]

    package init(patterns: [String]) {
        self.patterns = patterns
        compiled = patterns.map(FileNamePattern.init)
    }

    /// True when any component starts with `.`, the name is a manifest, or it matches a pattern.
    package func ignores(_ path: RelativePath) -> Bool {
        if path.hasHiddenComponent { return true }
        let name = path.name
        if Spool.isManifestName(name) { return true }
        guard !compiled.isEmpty else { return false }
        return FileNamePattern.any(compiled, matches: name.bytes)
    }
}
