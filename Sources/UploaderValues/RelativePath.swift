import Foundation

/// A path relative to a spool directory (`report.pdf`, `sub/dir/a.txt`), kept as raw bytes.
///
/// File names on Linux are bytes, not text: a name that is not valid UTF-8 must still be
/// found, opened, moved and uploaded exactly. Only `display` is lossy (U+FFFD).
package struct RelativePath: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let bytes: [UInt8]

    package init(bytes: [UInt8]) { self.bytes = bytes }
    package init(_ text: String) { self.bytes = Array(text.utf8) }

    /// The bytes hashed as one block: the synthesized hash fed them to the hasher one at a
    /// time, and paths are the keys of every set and map the owner touches for each event.
    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// Path components (split on `/`).
    package var components: [[UInt8]] {
        bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(Array.init)
    }

    /// The last component: the file's name.
    package var name: RelativePath {
        let end = lastNonSlash
        guard end > 0 else { return RelativePath(bytes: []) }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        if start == 0 && end == bytes.count { return self }
        return RelativePath(bytes: Array(bytes[start..<end]))
    }

    /// The directory part (`sub/dir`), or nil at the top level.
    package var parent: RelativePath? {
        guard let slash = bytes[..<lastNonSlash].lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let directory = bytes[..<slash]
        var clean = !directory.isEmpty && directory.first != UInt8(ascii: "/") && directory.last != UInt8(ascii: "/")
        if clean { clean = !zip(directory, directory.dropFirst()).contains { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: "/") } }
        if clean { return RelativePath(bytes: Array(directory)) }
        // Empty components (`a//b`, `/a`) do not count, as in `components`.
        let parts = components
        guard parts.count > 1 else { return nil }
        return RelativePath(bytes: Array(parts.dropLast().joined(separator: [UInt8(ascii: "/")])))
    }

    /// Where the path ends once trailing slashes are left out.
    private var lastNonSlash: Int {
        var end = bytes.count
        while end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end
    }

    /// True when any component starts with `.` (a dotfile or a file inside a dot-directory).
    package var hasHiddenComponent: Bool {
        var atStart = true
        for byte in bytes {
            if atStart && byte == UInt8(ascii: ".") { return true }
            atStart = byte == UInt8(ascii: "/")
        }
        return false
    }

    package func appending(_ child: RelativePath) -> RelativePath {
        if bytes.isEmpty { return child }
        return RelativePath(bytes: bytes + [UInt8(ascii: "/")] + child.bytes)
    }

    package func appendingSuffix(_ suffix: String) -> RelativePath {
        RelativePath(bytes: bytes + Array(suffix.utf8))
    }

    package var isValidUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// Lossy text form (invalid bytes become U+FFFD), for manifests and status.
    package var display: String { String(decoding: bytes, as: UTF8.self) }

    /// Display form with control characters escaped, safe inside a one-line log.
    package var logSafe: String { LogEscaping.escape(display) }

    package var base64: String { Data(bytes).base64EncodedString() }

    package var description: String { logSafe }

    /// Byte order (as `memcmp`, then the shorter first): what a start-up scan sorts 100,000 names by.
    package static func < (a: RelativePath, b: RelativePath) -> Bool {
        a.bytes.withUnsafeBytes { x in
            b.bytes.withUnsafeBytes { y in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }

    /// Calls `body` with this path joined to `directory` as a C string.
    package func withCString<R>(in directory: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var full = Array(directory.utf8)
        if !full.isEmpty && full.last != UInt8(ascii: "/") { full.append(UInt8(ascii: "/")) }
        full.append(contentsOf: bytes)
        full.append(0)
        return try full.withUnsafeBufferPointer { buffer in
            try buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { try body($0) }
        }
    }

    /// The path joined to `directory`, lossy, for messages (the directory itself when empty).
    package func displayed(in directory: String) -> String {
        if bytes.isEmpty { return directory }
        return directory.hasSuffix("/") ? directory + logSafe : directory + "/" + logSafe
    }
}

/// Escapes control characters so one log entry always stays on one line.
package enum LogEscaping {
    /// `backslashes: false` leaves `\` as is: for text already escaped once (`RelativePath.logSafe`),
    /// which the logger must keep on one line without doubling its escapes.
    package static func escape(_ text: String, backslashes: Bool = true) -> String {
        var needs = false
        for scalar in text.unicodeScalars where isControl(scalar) || (backslashes && scalar == "\\") {
            needs = true
            break
        }
        guard needs else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\\": out += backslashes ? "\\\\" : "\\"
            default:
                if isControl(scalar) {
                    out += String(format: scalar.value < 0x80 ? "\\x%02X" : "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// C0 and C1 controls and DEL: what a terminal may act on (ESC, CSI) or break a line at.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
