import Foundation
import UploaderSupport
import UploaderConfig

/// The `body = json` encoding: one object with the form fields, `name`, `size`, `sha256`
/// and `content_base64`, built in memory and therefore limited to 16 MiB files.
package enum JSONBody {
    package static let maxFileSize: Int64 = 16 * 1024 * 1024

    /// The encoded object; `sha256` is the file's hex digest (computed here when nil).
    /// Form fields named like one of the fixed keys are dropped: the fixed keys win.
    package static func encode(fields: [(name: String, value: String)], name: String, fd: Int32, size: Int64,
                               sha256: String?, path: String?) throws -> [UInt8] {
        guard size <= maxFileSize else { throw RequestBuildError.tooLargeForJSON(size: size) }
        let content = try readAll(fd: fd, size: size, path: path)
        let digest = sha256 ?? SHA256.hash(content).hexString
        let fixed: Set<String> = ["name", "size", "sha256", "content_base64"]
        var members: [String] = []
        for field in fields where !fixed.contains(field.name) {
            members.append("\(JSONText.quote(field.name)):\(JSONText.quote(field.value))")
        }
        members.append("\"name\":\(JSONText.quote(name))")
        members.append("\"size\":\(size)")
        members.append("\"sha256\":\(JSONText.quote(digest))")
        members.append("\"content_base64\":\"\(Data(content).base64EncodedString())\"")
        return Array(("{" + members.joined(separator: ",") + "}").utf8)
    }

    private static func readAll(fd: Int32, size: Int64, path: String?) throws -> [UInt8] {
        var content = [UInt8](repeating: 0, count: Int(size))
        var done = 0
        try content.withUnsafeMutableBytes { raw in
            while done < raw.count {
                let n = try FileSystem.read(fd: fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]), at: Int64(done), path: path)
                if n == 0 { throw SystemError("read", path: path, code: .io) }
                done += n
            }
        }
        return content
    }
}
