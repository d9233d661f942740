import Foundation
import UploaderSpool
import UploaderConfig

/// What the world has seen in the spool's `.quarantine/`: every record the daemon moved there
/// (`quarantineKeepsRecords`). The daemon never removes one, so each must still be there after
/// any crash or power cut, but for one whose move the cut undid: that record is back under its
/// own name where it came from (the outbox or retry/), for the daemon to handle again.
final class QuarantineWatch {
    /// Records seen in `.quarantine/`, by name there → their bytes.
    private(set) var seen: [String: [UInt8]] = [:]
    let directory: String
    /// Where a record moved aside came from: the outbox and retry/ (with their subdirectories).
    let sources: [String]

    init(paths: SpoolPaths) {
        directory = paths.quarantine
        sources = [paths.outbox, paths.retry]
    }

    /// Takes in what `.quarantine/` holds now (the volatile view: what the daemon did).
    func look(_ disk: SimDisk) {
        for name in disk.names(in: directory) where seen[name] == nil {
            if let bytes = disk.contents(directory + "/" + name) { seen[name] = bytes }
        }
    }

    /// A record seen in `.quarantine/` that is gone: neither there nor back under its name where
    /// it came from. Records back at their source leave the watch (their move is undone).
    func lost(_ disk: SimDisk) -> String? {
        for name in seen.keys.sorted() {
            if disk.contents(directory + "/" + name) == seen[name] { continue }
            if let source = Self.sourceName(of: name), sources.contains(where: { holds(disk, $0, source) }) {
                seen[name] = nil
                continue
            }
            return ".quarantine/\(name)"
        }
        return nil
    }

    /// `a.bin.manifest.json.2026-…Z` → `a.bin.manifest.json`: the record's name before its move.
    static func sourceName(of name: String) -> String? {
        guard let end = name.range(of: Spool.manifestSuffix, options: .backwards) else { return nil }
        return String(name[..<end.upperBound])
    }

    /// Whether `root` or a directory below it (not a hidden one) holds a record named `name`.
    private func holds(_ disk: SimDisk, _ root: String, _ name: String) -> Bool {
        for entry in disk.names(in: root) {
            let path = root + "/" + entry
            if entry == name, disk.contents(path) != nil { return true }
            if !entry.hasPrefix("."), disk.isDirectory(path), holds(disk, path, name) { return true }
        }
        return false
    }
}
