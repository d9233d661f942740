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

    /// What the hidden name of an adoption starts with (`.upl-adopt.NAME`).
    package static let adoptionPrefix = ".upl-adopt."

    /// The hidden name beside `path` its copy is made under (and the original holds after the swap).
    package static func adoptionLeftover(of path: RelativePath) -> RelativePath {
        let name = RelativePath(bytes: Array(adoptionPrefix.utf8) + path.name.bytes)
        return path.parent.map { $0.appending(name) } ?? name
    }

    /// The file `.upl-adopt.NAME` stands beside, nil for any other name.
    package static func adopted(byLeftover path: RelativePath) -> RelativePath? {
        let prefix = Array(adoptionPrefix.utf8)
        guard path.name.bytes.count > prefix.count, path.name.bytes.starts(with: prefix) else { return nil }
        let name = RelativePath(bytes: Array(path.name.bytes.dropFirst(prefix.count)))
        return path.parent.map { $0.appending(name) } ?? name
    }
}
