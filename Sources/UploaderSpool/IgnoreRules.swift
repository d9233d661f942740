@preconcurrency import Glibc
import UploaderSupport
import UploaderConfig

/// Which names are never uploaded: dotfiles, sidecar manifests, and the `ignore` globs.
package struct IgnoreRules: Sendable {
    package let patterns: [String]

    package init(patterns: [String]) { self.patterns = patterns }

    /// True when any component starts with `.`, the name is a manifest, or it matches a pattern.
    package func ignores(_ path: RelativePath) -> Bool {
        for component in path.components where component.first == UInt8(ascii: ".") { return true }
        let name = path.name
        if Spool.isManifestName(name) { return true }
        guard !patterns.isEmpty else { return false }
        var cname = name.bytes.map { CChar(bitPattern: $0) }
        cname.append(0)
        for pattern in patterns where fnmatch(pattern, cname, 0) == 0 { return true }
        return false
    }
}
