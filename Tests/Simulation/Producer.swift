import Foundation
import UploaderSupport
import UploaderSpool

/// The people and programs that put files into the outbox, as the schedule has them: dropped
/// by rename from elsewhere (like `uploader enqueue`), written in place, hard-linked in, under
/// a name used before, rewritten, appended to, truncated or deleted while queued or uploading,
/// and the odd symlink or FIFO. Every change is made durable (fsync of the file and the outbox),
/// so what it stands by is what must arrive — but for a `careless` producer's writes in place,
/// which it never fsyncs: a power cut may leave such a file empty, short, older or gone, and
/// what the disk did not keep is no longer owed (`afterCrash`).
struct Producer {
    let disk: SimDisk
    let outbox: String
    let choices: ChoiceSource
    /// Another user than the daemon's, in its group (`fs.protected_hardlinks = 1`): the daemon may
    /// read its files but not link them, and once the daemon has made a file its own, the
    /// producer can no longer write to it (only remove it or drop a new one).
    let foreign: Bool
    /// The outbox is watched with its subdirectories (`recursive = yes`): some files go into one.
    let recursive: Bool
    /// Writes in place (a new file, a rewrite, an append, a truncation) with no fsync at all,
    /// of the file or the outbox, and no write-then-rename: a power cut may undo them.
    /// Never another user's (`foreign`): a cut between the adoption's swap and the outbox's fsync
    /// can leave the name on the producer's original, emptied by the cut, and the daemon's fsynced
    /// copy under the hidden name; the start-up's `reconcileLeftover` takes the original for the
    /// newer file and removes the copy, the one place the bytes were kept (an open finding).
    let careless: Bool
    /// What each name in the outbox should deliver, by outbox name (the producer's intent).
    private(set) var standing: [String: [UInt8]] = [:]
    /// Contents the producer dropped and still stands by, wherever the daemon has moved them.
    private(set) var expected: Set<String> = []
    private var count = 0
    /// A careless producer's writes since the last power cut, by inode → the content written.
    private(set) var undurable: [UInt64: (name: String, hash: String)] = [:]
    /// Files whose complete content, never made durable by their careless producer, a power cut
    /// undid: by inode → that complete content. A daemon that read and sent the complete content
    /// before the cut delivered it, though the file beside its record now holds less.
    private(set) var torn: [UInt64: String] = [:]
    /// Contents a rewrite of the same size in the same instant replaced, by inode: size and mtime
    /// stay as they were, so with `digest = none` nothing can tell the new bytes from the old
    /// (the documented limit), and the server may hold an old one for the bytes now in the file.
    private(set) var sameInstantRewrites: [UInt64: Set<String>] = [:]
    /// Contents a power cut left in place of careless writes (an empty file, an older version):
    /// not unique as the producer's own contents are (several files may be left empty), and
    /// sent again under a new key when the daemon's record named the undone write.
    private(set) var remnants: Set<String> = []
    /// Contents another user's producer wrote in place between the daemon's copy of its file and
    /// the swap of that copy (`.upl-adopt.NAME` there), on a disk without a journal: a power cut
    /// after the swap may lose them (the README's named limit), so after one they are owed only
    /// while the spool still holds them.
    private(set) var betweenCopyAndSwap: Set<String> = []

    init(disk: SimDisk, outbox: String, choices: ChoiceSource, foreign: Bool, recursive: Bool = false, careless: Bool = false) {
        self.disk = disk
        self.outbox = outbox
        self.choices = choices
        self.foreign = foreign
        self.recursive = recursive
        self.careless = careless
    }

    /// Names of every kind: spaces, Unicode, a leading dash, percent signs, several dots, none.
    static let shapes = ["a.bin", "report 2026.pdf", "ünïcødé ✓.txt", "-rf", "%41%2F..", "x.tar.gz", "README",
                         String(repeating: "long", count: 50) + ".dat", "semi;colon#hash", "q?&=.json"]

    /// One producer action; returns the outbox path the watcher reports, if any.
    mutating func act(note: (String) -> Void) -> RelativePath? {
        let names = standing.keys.sorted()
        switch choices.pick([50, 15, 10, names.isEmpty ? 0 : 8, names.isEmpty ? 0 : 5, 4]) {
        case 0:
            let name = newName()
            let data = newContent()
            disk.createFile("/incoming/\(Self.flat(name))", data: data, sync: true, foreign: foreign)
            try? disk.rename("/incoming/\(Self.flat(name))", "\(outbox)/\(name)")
            disk.syncParent("\(outbox)/\(name)")
            stand(name, data)
            note("drop \(name) (\(data.count) B) by rename")
            return RelativePath(name)
        case 1:
            let name = newName()
            let data = newContent()
            disk.createFile("\(outbox)/\(name)", data: data, sync: !careless, foreign: foreign)
            if careless { wroteCarelessly(name, data) } else { disk.syncParent("\(outbox)/\(name)") }
            stand(name, data)
            note("write \(name) (\(data.count) B) in place\(careless ? ", no fsync" : "")")
            return RelativePath(name)
        case 2:
            let name = newName()
            let data = newContent()
            disk.createFile("/incoming/\(Self.flat(name))", data: data, sync: true, foreign: foreign)
            try? disk.link("/incoming/\(Self.flat(name))", "\(outbox)/\(name)")
            disk.syncParent("\(outbox)/\(name)")
            stand(name, data)
            note("hard-link \(name) (\(data.count) B) in")
            return RelativePath(name)
        case 3:
            let name = names[choices.below(names.count)]
            guard disk.exists(path: "\(outbox)/\(name)") else { return nil }
            // Rewritten whole, appended to, or truncated (never below its unique first line).
            let old = disk.contents("\(outbox)/\(name)") ?? []
            let header = (old.firstIndex(of: UInt8(ascii: "\n")) ?? old.count) + 1
            let how = choices.pick([50, 25, old.count > header ? 25 : 0])
            let data = how == 1 ? old + newContent() : how == 2 ? Array(old.prefix(header + choices.below(old.count - header))) : newContent()
            let before = disk.inspect("\(outbox)/\(name)")
            guard disk.writeInPlace("\(outbox)/\(name)", data: data, foreign: foreign) else {
                note("rewrite \(name) refused (not the producer's file now)")
                return nil
            }
            if let before, data.count == old.count, disk.inspect("\(outbox)/\(name)")?.mtimeNanos == before.mtimeNanos,
               let inode = disk.inode("\(outbox)/\(name)") {
                sameInstantRewrites[inode, default: []].insert(Self.hash(old))
            }
            if careless { wroteCarelessly(name, data) } else { disk.syncFile("\(outbox)/\(name)") }
            if foreign, disk.model == .noJournal, disk.exists(path: Self.adoptionCopy(of: name, in: outbox)) {
                betweenCopyAndSwap.insert(Self.hash(data))
            }
            // What the rewrite destroyed is what was under the name, the producer's or not (the
            // daemon may have moved an older file back under a name the producer reused): that
            // content is gone by the producer's hand. Its own last version, if it was another
            // file, is wherever the daemon put it, and still counts.
            expected.remove(Self.hash(old))
            stand(name, data)
            note("\(["rewrite", "append to", "truncate"][how]) \(name) (\(data.count) B)")
            return RelativePath(name)
        case 4:
            let name = names[choices.below(names.count)]
            guard disk.exists(path: "\(outbox)/\(name)") else { return nil }
            // A careless write stays undecided while another name (the daemon's, in sent/) keeps its inode.
            if let inode = disk.inode("\(outbox)/\(name)"), (disk.inspect("\(outbox)/\(name)")?.links ?? 1) <= 1 { undurable[inode] = nil }
            // As for a rewrite: what goes is what is under the name now (the daemon may have moved
            // an older file back under it); the producer's own last version, moved elsewhere, still counts.
            let old = disk.contents("\(outbox)/\(name)") ?? []
            try? disk.remove("\(outbox)/\(name)")
            disk.syncParent("\(outbox)/\(name)")
            expected.remove(Self.hash(old))
            // Under the name was the daemon's copy of this file, its original (the producer's own
            // bytes) kept aside: deleting the file deletes that version too.
            if let mine = standing[name], disk.contents(Self.adoptionCopy(of: name, in: outbox)) == mine { expected.remove(Self.hash(mine)) }
            standing[name] = nil
            note("delete \(name)")
            return RelativePath(name)
        default:
            let name = newName()
            if choices.chance(50) {
                disk.makeSymlink("\(outbox)/\(name)", to: "/etc/passwd")
                note("symlink \(name)")
            } else {
                disk.makeFIFO("\(outbox)/\(name)")
                note("FIFO \(name)")
            }
            disk.syncParent("\(outbox)/\(name)")
            return RelativePath(name)
        }
    }

    /// After a crash nothing the producer made durable is gone; a name it still "stands by" in
    /// the outbox may have been moved by the daemon meanwhile, which the content set tracks.
    /// After a power cut, a careless write's content that the spool no longer holds anywhere
    /// (`files`: what the spool's files hold after the cut, by inode where they have one) is no
    /// longer owed: the daemon cannot deliver bytes the disk never kept. What the cut left in its
    /// place — the empty, short or older file under the same inode — is owed as any other file.
    mutating func afterCrash(powerCut: Bool, files: () -> [(inode: UInt64?, hash: String, bytes: [UInt8]?)]) {
        guard powerCut, !undurable.isEmpty || !betweenCopyAndSwap.isEmpty else { return }
        let files = files()
        let kept = Set(files.map(\.hash))
        for hash in betweenCopyAndSwap where !kept.contains(hash) { expected.remove(hash) }
        betweenCopyAndSwap = betweenCopyAndSwap.intersection(kept)
        for (inode, write) in undurable.sorted(by: { $0.key < $1.key }) where !kept.contains(write.hash) {
            expected.remove(write.hash)
            torn[inode] = write.hash
            guard let left = files.first(where: { $0.inode == inode }) else { continue }
            expected.insert(left.hash)
            remnants.insert(left.hash)
            // What the name now holds, as far as the producer's own later rewrite or removal goes.
            if let standing = standing[write.name], Self.hash(standing) == write.hash, let bytes = left.bytes { self.standing[write.name] = bytes }
        }
        undurable = [:]
    }

    /// Where the daemon keeps its copy of another user's file `name` until the swap (`FileAdoption`).
    static func adoptionCopy(of name: String, in outbox: String) -> String {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return ([outbox] + parts.dropLast().map(String.init) + [".upl-adopt." + String(parts.last ?? "")]).joined(separator: "/")
    }

    /// A careless write in place: remembered until a power cut decides what the disk kept.
    private mutating func wroteCarelessly(_ name: String, _ data: [UInt8]) {
        if let inode = disk.inode("\(outbox)/\(name)") { undurable[inode] = (name, Self.hash(data)) }
    }

    private mutating func stand(_ name: String, _ data: [UInt8]) {
        let hash = Self.hash(data)
        if origin[hash] != nil { repeated.insert(hash) }
        standing[name] = data
        expected.insert(hash)
        origin[hash] = name
    }

    /// Contents written a second time, as a later version of a file (appended to, then truncated
    /// back to the very bytes it held before): another version by its mtime, so the daemon
    /// rightly sends it under a new key, though the bytes are the same.
    private(set) var repeated: Set<String> = []

    /// The outbox name each content was written under (for a violation's report).
    private(set) var origin: [String: String] = [:]

    /// A new name; with `recursive`, some go into a subdirectory (or one below it), made first
    /// and durably (mkdir, fsync of its parent), as a producer's `mkdir -p` and `sync` would.
    private mutating func newName() -> String {
        // Now and then a name used before, whose file has left the outbox (sent, or waiting in retry/).
        if choices.chance(10), let reused = standing.keys.sorted().first(where: {
            !disk.exists(path: "\(outbox)/\($0)") && !disk.exists(path: "/incoming/\(Self.flat($0))")
        }) {
            return reused
        }
        count += 1
        let name = "f\(count)-" + Self.shapes[choices.below(Self.shapes.count)]
        guard recursive, choices.chance(40) else { return name }
        let directory = choices.chance(25) ? "d\(choices.below(3))/e\(choices.below(2))" : "d\(choices.below(3))"
        var path = outbox
        for part in directory.split(separator: "/") {
            path += "/\(part)"
            if disk.exists(path: path) { continue }
            try? disk.makeDirectories(path)
            disk.syncParent(path)
        }
        return directory + "/" + name
    }

    /// The name a file has in /incoming before it is moved in (no subdirectories there).
    private static func flat(_ name: String) -> String { name.replacingOccurrences(of: "/", with: "_") }

    /// Unique content: a header naming it, then up to 300 bytes (sometimes none at all).
    private mutating func newContent() -> [UInt8] {
        count += 1
        if choices.chance(5) { return Array("#\(count)".utf8) }
        let length = choices.below(300)
        return Array("content #\(count)\n".utf8) + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ count) }
    }

    static func hash(_ bytes: [UInt8]) -> String { SHA256.hash(bytes).hexString }
}
