import Foundation
import UploaderSupport
import UploaderConfig

/// A `multipart/form-data` body (RFC 7578): text fields, then the file streamed as one part.
///
/// Only the part headers are built in memory; the file is a `.file` segment, so the exact
/// length is known up front without reading it.
package struct MultipartBody {
    package let boundary: String
    package let body: RequestBody

    package var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// - Parameter randomBoundary: returns a fresh candidate; retried until it occurs in no field text.
    package init(fields: [(name: String, value: String)], fileField: String, fileName: String, fileContentType: String,
                 fd: Int32, size: Int64, randomBoundary: () -> String = MultipartBody.randomBoundary) {
        let texts = fields.flatMap { [$0.name, $0.value] } + [fileField, fileName, fileContentType]
        var boundary = randomBoundary()
        while texts.contains(where: { $0.contains(boundary) }) { boundary = randomBoundary() }
        self.boundary = boundary

        var head = ""
        for field in fields {
            head += "--\(boundary)\r\n"
            head += "Content-Disposition: form-data; name=\"\(MultipartBody.escape(field.name))\"\r\n\r\n"
            head += field.value + "\r\n"
        }
        head += "--\(boundary)\r\n"
        head += "Content-Disposition: form-data; name=\"\(MultipartBody.escape(fileField))\"; "
        head += "filename=\"\(MultipartBody.escape(fileName))\"\r\n"
        head += "Content-Type: \(MultipartBody.headerSafe(fileContentType))\r\n\r\n"
        let tail = "\r\n--\(boundary)--\r\n"
        body = RequestBody([.bytes(Array(head.utf8)), .file(fd: fd, offset: 0, length: size), .bytes(Array(tail.utf8))])
    }

    /// `----uploader-` and 32 random hex digits (RFC 2046 allows up to 70 characters).
    package static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return "----uploader-" + bytes.hexString
    }

    /// Escapes a name or filename for a quoted-string as browsers do (WHATWG, RFC 7578 §4.2):
    /// `"` CR LF become `%22` `%0D` `%0A`; `\` becomes `%5C` so no server reads it as a
    /// quoted-pair escape. Other bytes, UTF-8 included, are kept as they are.
    package static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            case "\\": out += "%5C"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Drops CR and LF so a value cannot end its header line early.
    static func headerSafe(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
    }
}
