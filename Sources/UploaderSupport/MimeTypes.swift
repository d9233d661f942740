import Foundation

/// Content types by file extension, read from `/etc/mime.types` (Debian's media-types).
package struct MimeTypes: Sendable {
    package static let fallback = "application/octet-stream"
    private let byExtension: [String: String]

    package init(byExtension: [String: String]) { self.byExtension = byExtension }

    /// Loads the table; a missing file gives an empty table (everything is octet-stream).
    package static func load(path: String = "/etc/mime.types") -> MimeTypes {
        guard let data = FileManager.default.contents(atPath: path) else { return MimeTypes(byExtension: [:]) }
        return MimeTypes(parsing: String(decoding: data, as: UTF8.self))
    }

    /// Parses mime.types lines: `type ext1 ext2 …`, `#` comments. The first type listed for an extension wins.
    package init(parsing text: String) {
        var table: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2 else { continue }
            let type = String(fields[0])
            for ext in fields.dropFirst() where table[ext.lowercased()] == nil {
                table[ext.lowercased()] = type
            }
        }
        byExtension = table
    }

    /// The type for a file name by its last extension, case-insensitive.
    package func contentType(forName name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return MimeTypes.fallback }
        let ext = name[name.index(after: dot)...].lowercased()
        return byExtension[ext] ?? MimeTypes.fallback
    }
}
