import Foundation
import UploaderSupport

/// A value with `{placeholder}`s (`url`, `form.*`, `header.*`), parsed once at config load.
package struct Template: Sendable, Equatable, CustomStringConvertible {
    package enum Part: Sendable, Equatable {
        case literal(String)
        case placeholder(Placeholder)
    }

    package enum Placeholder: String, Sendable, CaseIterable {
        case name, path, id, sha256, size, date, profile, hostname
    }

    package struct UnknownPlaceholder: Error, CustomStringConvertible {
        package let name: String
        package var description: String {
            let known = Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: " ")
            return "unknown placeholder {\(name)}; known: \(known)"
        }
    }

    package let parts: [Part]
    package let source: String

    /// Parses `text`; `{` not followed by a known `name}` is an error, `{{`/`}}` are literal braces.
    package init(parsing text: String) throws {
        var parts: [Part] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let ch = text[index]
            let next = text.index(after: index)
            if ch == "{", next < text.endIndex, text[next] == "{" {
                literal.append("{"); index = text.index(after: next); continue
            }
            if ch == "}", next < text.endIndex, text[next] == "}" {
                literal.append("}"); index = text.index(after: next); continue
            }
            if ch == "{", let close = text[next...].firstIndex(of: "}") {
                let name = String(text[next..<close])
                guard let placeholder = Placeholder(rawValue: name) else { throw UnknownPlaceholder(name: name) }
                if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
                parts.append(.placeholder(placeholder))
                index = text.index(after: close)
                continue
            }
            literal.append(ch)
            index = next
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
        self.source = text
    }

    package var description: String { source }

    package var placeholders: [Placeholder] {
        parts.compactMap { if case .placeholder(let p) = $0 { return p } else { return nil } }
    }

    /// Renders with each inserted value passed through `encode` (literals are kept as written).
    package func render(_ values: TemplateValues, encode: (Placeholder, TemplateValues) -> String) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .literal(let text): out += text
            case .placeholder(let p): out += encode(p, values)
            }
        }
        return out
    }

    /// Renders for a header or form field: values as text (control characters removed).
    package func renderText(_ values: TemplateValues) -> String {
        render(values) { p, v in
            String(String.UnicodeScalarView(v.text(p).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
        }
    }
}

/// The per-file values placeholders expand to.
package struct TemplateValues: Sendable {
    package var path: RelativePath
    package var id: String
    package var sha256: String
    package var size: Int64
    package var date: Date
    package var profile: String
    package var hostname: String

    package init(path: RelativePath, id: String, sha256: String, size: Int64, date: Date, profile: String, hostname: String) {
        self.path = path
        self.id = id
        self.sha256 = sha256
        self.size = size
        self.date = date
        self.profile = profile
        self.hostname = hostname
    }

    /// The value as text (lossy for names that are not UTF-8).
    package func text(_ p: Template.Placeholder) -> String {
        switch p {
        case .name: return path.name.display
        case .path: return path.display
        case .id: return id
        case .sha256: return sha256
        case .size: return String(size)
        case .date: return Timestamp.day(date)
        case .profile: return profile
        case .hostname: return hostname
        }
    }
}

/// A URL template: `http(s)://host[:port]/prefix/{path}`, whose inserted values are percent-encoded.
///
/// Each inserted segment is encoded on its own, byte for byte (so `..`, `?`, `#`, `%2F`,
/// newlines and invalid UTF-8 all become inert), and `{path}` keeps only its own `/`
/// separators. No file name can change the host, add a query, or climb out of the prefix.
package struct URLTemplate: Sendable, Equatable, CustomStringConvertible {
    package let template: Template

    package init(_ template: Template) { self.template = template }

    package var description: String { template.source }

    package func render(_ values: TemplateValues) -> String {
        template.render(values) { p, v in
            switch p {
            case .path:
                return v.path.components.map { URLTemplate.encodeSegment($0) }.joined(separator: "/")
            case .name:
                return URLTemplate.encodeSegment(v.path.name.bytes)
            default:
                return URLTemplate.encodeSegment(Array(v.text(p).utf8))
            }
        }
    }

    /// Percent-encodes every byte outside RFC 3986 unreserved; `.` and `..` are encoded whole.
    package static func encodeSegment(_ bytes: [UInt8]) -> String {
        if bytes == [0x2E] { return "%2E" }
        if bytes == [0x2E, 0x2E] { return "%2E%2E" }
        var out = ""
        out.reserveCapacity(bytes.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for b in bytes {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(b >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(b & 0xF)]))
            }
        }
        return out
    }
}
