@preconcurrency import Glibc

/// A shell glob (`*.tmp`, `~*`) matched against one name as fnmatch(3) does with no flags:
/// the `ignore` setting's patterns, compiled to a C string once since every scanned file asks.
package struct FileNamePattern: Sendable {
    package let text: String
    private let cText: [CChar]

    package init(_ text: String) {
        self.text = text
        cText = Array(text.utf8CString)
    }

    /// Whether `name` (a single component, bytes as on disk) matches.
    package func matches(_ name: [UInt8]) -> Bool { Self.any([self], matches: name) }

    /// Whether any of `patterns` matches `name`; the name is made a C string once for all of them.
    package static func any(_ patterns: [FileNamePattern], matches name: [UInt8]) -> Bool {
        var cname = name.map { CChar(bitPattern: $0) }
        cname.append(0)
        for pattern in patterns where fnmatch(pattern.cText, cname, 0) == 0 { return true }
        return false
    }
}
