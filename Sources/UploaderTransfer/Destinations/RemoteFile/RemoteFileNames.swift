import Foundation
import UploaderSupport
import UploaderConfig

/// The server paths of one file: its final name from the url's path, the temporary name beside
/// it, and the names `exists = rename` tries. Server paths, not percent-encoded: literal parts of
/// the url are decoded, placeholders inserted as text.
struct RemoteFileNames: Equatable {
    let final: String
    let temporary: String

    init(target: RemoteFileTarget, values: TemplateValues) {
        var path = ""
        for part in target.path.parts {
            switch part {
            case .literal(let text): path += text.removingPercentEncoding ?? text
            case .placeholder(let p): path += values.text(p)
            }
        }
        // ftp(s): the url's first `/` only separates the path; `%2F` (now `/`) starts an absolute one.
        if target.scheme != .sftp { path.removeFirst() }
        final = path
        temporary = Self.directory(of: path) + target.tempName.renderText(values)
    }

    /// `a/b/` of `a/b/c` (empty for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    /// The `n`-th other name for `exists = rename`: `photo.1.jpg`, or `notes.1` without an extension.
    func alternative(_ n: Int) -> String {
        let directory = Self.directory(of: final)
        let name = final.dropFirst(directory.count)
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return directory + name[..<dot] + ".\(n)" + name[dot...]
        }
        return directory + name + ".\(n)"
    }

    /// A control character in a name cannot be said safely in a quote command (FTP ends commands at a line break).
    var problem: String? {
        let bad = (final + temporary).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        return bad ? "the remote name contains a control character (a line break?), which cannot be sent to the server" : nil
    }
}
