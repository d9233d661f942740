@preconcurrency import Glibc
import UploaderSupport
import UploaderConfig

/// Which names are never uploaded: dotfiles, sidecar manifests, and the `ignore` globs.
package struct IgnoreRules: Sendable {
    package let patterns: [String]
    /// The patterns as C strings, made once: `fnmatch` is asked for every file of every scan.
    private let cPatterns: [[CChar]]

    package init(patterns: [String]) {
        self.patterns = patterns
        cPatterns = patterns.map { Array($0.utf8CString) }
    }

    /// True when any component starts with `.`, the name is a manifest, or it matches a pattern.
    package func ignores(_ path: RelativePath) -> Bool {
        if path.hasHiddenComponent { return true }
        let name = path.name
        if Spool.isManifestName(name) { return true }
        guard !cPatterns.isEmpty else { return false }
        var cname = name.bytes.map { CChar(bitPattern: $0) }
        cname.append(0)
        for pattern in cPatterns where fnmatch(pattern, cname, 0) == 0 { return true }
        return false
    }
}
