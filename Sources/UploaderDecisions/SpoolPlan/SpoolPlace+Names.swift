import UploaderValues

extension SpoolPlace {
    /// What a record's name adds to its file's (`a.bin` → `a.bin.manifest.json`).
    package static let recordSuffix = ".manifest.json"

    /// The `n`th numbered name for `path` (`report.2.pdf`, `a.tar.2.gz`, `README.2`): the number
    /// before the last extension, the name shortened from its start if its record's would no
    /// longer fit in NAME_MAX.
    package static func numbered(_ path: RelativePath, _ n: Int) -> RelativePath {
        let name = path.name.bytes
        let number = Array(".\(n)".utf8)
        var renamed: [UInt8]
        if let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 {
            renamed = Array(name[..<dot]) + number + Array(name[dot...])
        } else {
            renamed = name + number
        }
        if renamed.count > 255 - recordSuffix.utf8.count {
            // Keep the sidecar within NAME_MAX: shorten the stem, keep the suffix.
            renamed = Array(renamed.suffix(255 - recordSuffix.utf8.count))
        }
        let newName = RelativePath(bytes: renamed)
        return path.parent.map { $0.appending(newName) } ?? newName
    }
}
