import Foundation

/// Content types by file extension, read from `/etc/mime.types` (Debian's media-types).
package struct MimeTypes: Sendable {
    package static let fallback = "application/octet-stream"
    private let byExtension: [String: String]

    package init(byExtension: [String: String]) { self.byExtension = byExtension }

    /// Loads the table; a missing file gives an empty table (everything is octet-stream).
    package static func load(path: String = "/etc/mime.types") -> MimeTypes {
        guard let data = FileManager.default.contents(atPath: path) else { return MimeTypes(byExtension: [:]) }
        return MimeTypes(parsing: [UInt8](data))
    }

    /// Parses mime.types lines: `type ext1 ext2 …`, `#` comments. The first type listed for an extension wins.
    package init(parsing text: String) { self.init(parsing: Array(text.utf8)) }

    /// The same on the file's bytes: split on bytes, not on `Character`s, since the table is read
    /// before the first upload of every start and has two thousand lines.
    package init(parsing bytes: [UInt8]) {
        var table: [String: String] = [:]
        for line in bytes.split(whereSeparator: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            let content = line.prefix { $0 != UInt8(ascii: "#") }
            let fields = content.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            guard fields.count >= 2 else { continue }
            let type = String(decoding: fields[0], as: UTF8.self)
            for field in fields.dropFirst() {
                let ext = String(decoding: field, as: UTF8.self).lowercased()
                if table[ext] == nil { table[ext] = type }
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
